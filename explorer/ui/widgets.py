"""Widgets shared by the pages: the deep link's values (``from_url``, the notes on what a link got wrong), the
text boxes, every chart (``show_figure``), links, downloads, and the start of every page (``use_app_navigation``).

A teacher can paste the URL into slides; opening it restores the same view. A value in the URL that is out
of range or garbage is clamped or replaced by the default, with a visible note (never a traceback).
Every picker (model, layer, head, token, word, choice) is in ``pickers.py``; the quiz in ``quiz.py``; shared models
and results in ``cached.py``.
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import streamlit as st

from explorer.attention.result import AttentionResult
from explorer.examples import EXAMPLES
from explorer.model import families
from explorer.model.registry import ModelUnavailable, resolve_spec
from explorer.plots.alt import clickable_heads, text_alternative
from explorer.plots.base import LightFigure, at_shown_precision
from explorer.plots.classroom import scale_fonts
from explorer.plots.remember import figure_for_view
from explorer.ui import cached, chart_text, language, params
from explorer.ui.drawn_once import drawn_once, view_key
from explorer.ui.live import class_banner, membership, replayed, streamlit_internals
from explorer.ui.text import literal
from explorer.ui.words import on_this_page
from explorer.words import i18n, numbers
from explorer.words.i18n import _

MAX_TEXT = 20_000


def link_note(message: str) -> None:
    st.session_state.setdefault("_link_notes", []).append(message)


def show_link_notes(notes: tuple[str, ...] | list[str] = ()) -> None:
    """Show (once) what was corrected in the URL, then the view's own ``notes`` (plain text, shown as typed)."""
    for message in st.session_state.pop("_link_notes", []):
        st.info(literal(message), icon=":material/link:")
    for note in notes:
        st.caption(f":material/info: {literal(note)}")


def from_url(key: str, default):
    """The widget's value: from the URL on a session's first run, else as the user left it on any page.

    Streamlit forgets a widget's value once a page without that widget has run, so the value is also kept
    under a plain key that survives page changes: model and text follow the student from page to page.
    """
    if key not in st.session_state:
        st.session_state[key] = st.query_params.get(key, st.session_state.get(params.kept(key), default))
    # set through the Session State API, so a same-keyed widget on another page (other label) takes the value
    st.session_state[key] = st.session_state[params.kept(key)] = st.session_state[key]
    return st.session_state[key]


def set_values(values: dict, forget: tuple[str, ...] = ()) -> None:
    """Callback: give widgets new values, and let the ``forget`` ones fall back to their page's default (their
    value and their deep link are dropped)."""
    st.session_state.update(values)
    for key in forget:
        st.session_state.pop(key, None)
        st.session_state.pop(params.kept(key), None)
        params.drop(key)


def text_box(key: str = "text", default: str = next(iter(EXAMPLES.values())), label: str | None = None,
             with_examples: bool = True) -> str:
    """A text area (from the URL when linked) with curated examples to pick from; ``label``: already in the
    session's language (default "Text")."""
    value = str(from_url(key, default))
    if len(value) > MAX_TEXT:
        link_note(_("The linked text was {n} characters; it was cut to {most}.").format(n=numbers.integer(len(value)),
                                                                                 most=numbers.integer(MAX_TEXT)))
        st.session_state[key] = value = value[:MAX_TEXT]
    if with_examples:
        def use_example():
            st.session_state[key] = EXAMPLES[st.session_state[f"{key}_example"]]
        st.selectbox(_("Examples"), list(EXAMPLES), index=None, placeholder=_("Pick an example sentence…"),
                     key=f"{key}_example", on_change=use_example, disabled=membership.text_locked(), format_func=_)
    locked = membership.text_locked()
    text = st.text_area(label or _("Text"), key=key, max_chars=MAX_TEXT, height=90, disabled=locked,
                        help=_("Locked by the teacher: follow along, or explore on your own.") if locked else None)
    params.put(key, text)
    return text


def sentence_pair(defaults: tuple[str, str]) -> tuple[str, str]:
    """Two deep-linked sentence boxes side by side (keys ``text`` and ``text_b``), for the minimal-pair pages."""
    left, right = st.columns(2)
    with left:
        a = text_box("text", defaults[0], _("Sentence A"), with_examples=False)
    with right:
        b = text_box("text_b", defaults[1], _("Sentence B"), with_examples=False)
    return a, b


def attention_or_stop(model: str, text: str, target: str | None = None) -> AttentionResult:
    """The attention result, or a clear message in the page and ``st.stop()`` when it cannot be computed."""
    try:
        resolve_spec(model)
        result = cached.get_attention(model, text, target)
    except (ValueError, ModelUnavailable) as err:
        st.warning(literal(err))
        st.stop()
    loaded = cached.get_model(model)
    for message in loaded.notes:
        st.info(_(message))
    if result.truncated:
        st.info(_("The text needs {n} tokens; this model reads at most {most}, so only the first part is "
                  "shown.").format(n=result.n_text_tokens, most=len(result.tokens)), icon=":material/content_cut:")
    return result


def fidelity_badge(result: AttentionResult, layer: int, head: int) -> None:
    """How exactly our own from-scratch recompute matches the weights the model returned for this head."""
    if result.fidelity is None:
        why = families.family_refusal(result.facts.family, "scores")
        st.caption(why or _("Fidelity check unavailable: this model's queries and keys could not be captured."))
        return
    diff = result.fidelity[layer, head]
    icon = ":material/check_circle:" if diff < 1e-5 else ":material/warning:"
    st.caption(icon + " " + _("Recomputed from the model's own queries and keys with our from-scratch "
                              "softmax(QKᵀ/√d_k): max difference {diff}").format(diff=numbers.scientific(diff, 1)))


# ---------------------------------------------------------------------------------------------- figures and heads

def show_figure(fig, key: str, filename: str, on_select="ignore", where=None, frame: int | None = None,
                view: tuple | None = None):
    """A plotly chart whose camera button saves ``filename``.png, drawn in the browser (works offline), with its
    text alternative under it (a summary, "Show as table", and a keyboard head box when a click picks a head).
    Every chart of the app goes through here (a test checks); ``where``: a column or container to draw in;
    ``frame``: the tile to frame in a figure built with ``frames=True`` (chart_text.show_frame).

    ``view``: the validated values the figure is made of (every one: a page's parameters, the model, the text).
    With it, a chart nobody clicks is drawn once per server for that view and replayed to every other session
    that shows it (``drawn_once``: a class following its teacher pays for it once); ``fig`` may then be a
    function that builds the figure, called only when the view is drawn first or its table is opened. A chart a
    click acts on is drawn that way too for a student following a class: the teacher picks, as with the folded
    controls (``teacher_controls.teacher_driven``)."""
    if where is not None:
        with where:
            return show_figure(fig, key, filename, on_select, frame=frame, view=view)
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2}}
    chart_text.keyboard_scrolling()   # once a session: with it, the rule that hides plotly's toolbar on a phone
    scale = class_banner.figure_scale()   # larger type in the teacher's projector view
    if view is not None and on_select != "ignore" and membership.is_following():
        on_select = "ignore"   # a click would pick what the teacher drives: a follower's chart is the class's one
    if view is not None and on_select == "ignore":
        built = functools.cache(lambda: fig() if callable(fig) else fig)
        text = functools.cache(lambda: text_alternative(built()))   # from the full-precision numbers
        drawn_once(("figure", key, filename, scale, view),
                   lambda: _chart(text(), scale_fonts(at_shown_precision(built()), scale), key, config))
        if frame is not None:
            chart_text.show_frame(key, frame)
        chart_text.table_under(key, text)
        return None
    if view is not None:   # a chart a click acts on: each session draws it, but builds it once per view
        fig = figure_for_view(view_key(streamlit_internals.running_page().get("script_path", ""), i18n.current(),
                                       key, filename, view), fig if callable(fig) else lambda: fig)
    text = text_alternative(fig)   # from the full-precision numbers
    fig = scale_fonts(at_shown_precision(fig), scale)
    name = chart_text.accessible_name(text)   # the chart's own name for screen readers; the details follow it
    if on_select == "ignore":
        event = st.plotly_chart(fig, key=key, config=config, alt=name)
    else:
        event = st.plotly_chart(_counting_clicks(fig, key), key=key, config=config, selection_mode="points",
                                on_select=_counted(on_select, key) if callable(on_select) else on_select, alt=name)
    if frame is not None:
        chart_text.show_frame(key, frame)
    chart_text.describe(text, key, clickable_heads(fig), on_select)
    return event


def _chart(text, fig, key: str, config: dict) -> None:
    """A chart nobody clicks and its summary: what ``drawn_once`` keeps of a view's figure."""
    st.plotly_chart(fig, key=key, config=config, alt=chart_text.accessible_name(text))
    st.caption(literal(text.summary))


def download_csv(frame, filename: str, key: str, label: str | None = None) -> None:
    """A button that downloads ``frame`` (a DataFrame, or a function returning one) as ``filename``. The CSV is
    made when the button is pressed, not on every run of the page (nor for every student of a class); the button
    is each session's own, also in a follower's replayed page (``replayed.live``)."""
    replayed.live(_download_csv, frame, filename, key, label)


def _download_csv(frame, filename: str, key: str, label: str | None) -> None:
    st.download_button(label or _("Matrix as CSV"),
                       lambda: (frame() if callable(frame) else frame).to_csv().encode("utf-8"),
                       file_name=filename, mime="text/csv", key=key, icon=":material/download:")


def selected_head(key: str, frame=None) -> tuple[int, int] | None:
    """The head picked in a chart (clicked point's customdata) or a table (``frame``'s selected row), if any."""
    from explorer.plots.heads import clicked_head

    typed = chart_text.typed_head(key)   # chosen in the chart's keyboard box
    if typed is not None:
        return typed
    event = st.session_state.get(key) or {}
    if frame is None:
        return clicked_head(event)
    rows = (event.get("selection") or {}).get("rows") or []
    if rows and rows[0] < len(frame):
        return int(frame.iloc[rows[0]]["layer"]), int(frame.iloc[rows[0]]["head"])
    return None


def _clicks(key: str) -> str:
    return f"_{key}_clicks"


def _counting_clicks(fig, key: str):
    """``fig`` with the number of clicks on chart ``key`` so far in its layout.meta. Streamlit keeps a chart's
    selection while its figure stays the same, and then a click on the point already selected changes nothing;
    with the count in it, the figure differs after every click, so the next click counts."""
    clicks = st.session_state.get(_clicks(key), 0)
    return fig.set_meta(clicks) if isinstance(fig, LightFigure) else fig.update_layout(meta=clicks)


def _counted(callback, key: str):
    """``callback`` (a chart's on_select) that first counts the click (see ``_counting_clicks``)."""
    def clicked():
        st.session_state[_clicks(key)] = st.session_state.get(_clicks(key), 0) + 1
        callback()
    return clicked


def open_head(key: str, frame=None, layer_key: str = "layer", head_key: str = "head"):
    """An ``on_select`` callback: the clicked map cell or table row becomes the layer and head shown."""
    def callback():
        head = selected_head(key, frame)
        if head is not None:
            st.session_state[layer_key], st.session_state[head_key] = head
    return callback


def page_link(page: str, label: str, query_params: dict | None = None, icon: str | None = None) -> None:
    """st.page_link, or the label as plain text when ``page`` is not part of the running app. The link carries the
    session's language (``language.in_link``)."""
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(page, label=label, icon=icon, query_params=language.in_link(query_params) or query_params)
    except StreamlitAPIException:
        st.markdown(f"{icon or '•'} {label} *" + _("(not in this app)") + "*")


def download_lazy(label: str, build, filename: str, key: str, mime: str = "text/csv") -> None:
    """A download button whose file is only built when clicked: ``build()`` returns a DataFrame (as CSV) or text;
    each session's own, also in a follower's replayed page (``replayed.live``)."""
    replayed.live(_download_lazy, label, build, filename, key, mime)


def _download_lazy(label: str, build, filename: str, key: str, mime: str) -> None:
    def data():
        made = build()
        return made.to_csv().encode("utf-8") if hasattr(made, "to_csv") else made
    # on_click="ignore": no rerun races the file's own request (a click then sometimes fetched nothing)
    st.download_button(label, data, file_name=filename, mime=mime, key=key, icon=":material/download:",
                       on_click="ignore")


def use_app_navigation() -> None:
    """Route a deep link through app.py's navigation, even when it is the server's very first request.

    Streamlit treats an app with a ``pages/`` folder as an old-style multipage app until the entry script has
    called ``st.navigation`` once; a link straight to ``/heatmaps`` on a fresh server would run the page file
    alone (no wide layout, no page titles). Switching that mode off and rerunning goes through app.py. Each run
    asks whether it came through app.py itself: sessions that started at once on a fresh server (a class
    reconnecting after a restart) may all have begun in the old mode before the first of them switched it off.
    """
    if streamlit_internals.leave_folder_navigation():
        st.rerun()
    language.register()
    language.choose()   # a page run on its own (AppTest of one file) reads ?lang= too; through app.py: already done
    class_banner.on_page()   # classroom live mode: rejoin from the URL, follow the teacher, the room's banner
    page_file = sys._getframe(1).f_code.co_filename
    on_this_page(page_file)   # the sidebar's "Words on this page"
    if _writes_formulas(page_file):
        chart_text.keyboard_scrolling()   # a formula wider than its column: focusable, so the keyboard scrolls it


@functools.lru_cache(maxsize=64)
def _writes_formulas(page_file: str) -> bool:
    """Whether a page's source calls st.latex (read once a file): only those pages need the keyboard script."""
    try:
        return ".latex(" in Path(page_file).read_text(encoding="utf-8")
    except OSError:
        return False

