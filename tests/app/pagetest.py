"""What the AppTest files share (a helper module, not a test file): open a page with URL parameters, and read
back what it wrote and drew; a browser session of app.py (``session``), a button click, a student joining a class."""
import base64
import json
import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from explorer.ui.live.seat import SEAT
from explorer.words.i18n import LANGUAGES

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")   # the whole app, navigation included
MESSAGES = ("markdown", "caption", "info", "warning", "success", "error")   # what texts() reads


def open_page(path: str, *, timeout: float = 300, **params) -> AppTest:
    """AppTest of ``path`` (from the repository root: "pages/compare.py"), run once with ``params`` in its URL;
    the run must raise nothing. A test file binds its page once: ``run = partial(open_page, "pages/flip.py")``."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest, *, raw: bool = False) -> str:
    """Everything the page wrote (markdown, captions and the four message boxes), one element a line; the
    backslashes ``ui.text.literal`` puts before markdown characters are taken out unless ``raw`` (to find
    ``literal(...)`` itself, or an unescaped tag)."""
    out = "\n".join(str(e.value) for kind in MESSAGES for e in getattr(at, kind))
    return out if raw else out.replace("\\", "")


def in_order(block):
    """Every element under ``block`` (``at.main``, an expander…) in the order the page drew them, depth first."""
    for i in sorted(block.children):
        child = block.children[i]
        yield child
        if hasattr(child, "children"):
            yield from in_order(child)


def notes(at: AppTest) -> str:
    """The link notes (shown as st.info, markdown escapes taken out)."""
    return " ".join(str(i.value) for i in at.info).replace("\\", "")


def figures(at: AppTest) -> dict[str, dict]:
    """Every plotly chart on the page, as the JSON it sends, by title (without its subtitle after ``<br>``)."""
    out = {}
    for element in at.get("plotly_chart"):
        spec = json.loads(element.proto.spec)
        title = (spec["layout"].get("title") or {}).get("text") or ""
        out[title.split("<br>")[0]] = spec
    return out


def array(value) -> np.ndarray:
    """A plotly array from a figure's JSON: a list (None as NaN), or a typed array {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return out.reshape([int(s) for s in str(shape).split(",")]) if shape else out
    return np.asarray(value, dtype=float)


def in_app(path: str, *, timeout: float = 300) -> AppTest:
    """AppTest of app.py switched to page ``path`` ("pages/compare.py"), so that its links to other pages resolve
    (a page run on its own shows them as plain text); the run must raise nothing."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout).run()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def session(**params) -> AppTest:
    """One browser session of app.py (its default page, Home), opened with ``params`` in its URL and run once; the
    run must raise nothing. The classroom and lesson tests keep one per teacher and per student."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    return at


def click(at: AppTest, label: str, nth: int = 0) -> AppTest:
    """Click the ``nth`` button labelled ``label`` and run; the run must raise nothing."""
    [b for b in at.button if b.label == label][nth].click().run()
    assert not at.exception, at.exception
    return at


SHOW = "Show me without predicting"   # a question's button that unfolds what it folds, for the rest of the session


def unfolded(at: AppTest) -> AppTest:
    """``at`` after a click on each question's "Show me without predicting" (the parts of the page each question
    folds are then drawn, as they are after a prediction); the run must raise nothing."""
    for _ in range(5):   # one question a click: a lesson's, then its page's own
        if not any(b.label == SHOW for b in at.button):
            break
        click(at, SHOW)
    return at


def classroom_page(**params) -> AppTest:
    """A session switched to the classroom page."""
    at = session(**params)
    at.switch_page("pages/classroom.py").run()
    assert not at.exception, at.exception
    return at


def join(room: str, nickname: str = "", typed: str | None = None) -> AppTest:
    """A new student's session that joins ``room`` on the classroom page (typing ``typed``, else the code)."""
    student = classroom_page()
    student.text_input(key="_class_typed").input(typed or room)
    student.text_input(key="_class_nick").input(nickname)
    return click(student, "Join")


BREAKDOWN_LINK = "apart on the heatmap page"   # the label's end of every "Take “it” → “animal” apart" link


def seat_of(at: AppTest):
    """``at``'s place in a class (``explorer.ui.live.seat.ClassSeat``: room, teacher key, student id, ...)."""
    return at.session_state[SEAT]


def breakdown_links(at: AppTest) -> list[tuple[str, dict[str, str]]]:
    """(label, address parameters) of each link that opens the heatmap page with a score taken apart."""
    from urllib.parse import parse_qs

    return [(e.proto.label, {k: v[0] for k, v in parse_qs(e.proto.query_string).items()})
            for e in at.get("page_link") if e.proto.label.endswith(BREAKDOWN_LINK)
            and "heatmaps" in e.proto.page]


def breakdown_weight(at: AppTest) -> float:
    """The weight the heatmap page's open breakdown shows ("weight = softmax of the row at this key = **w**")."""
    import re

    unfolded(at)   # the breakdown's question folds the score until it is answered
    found = re.search(r"weight = softmax of the row at this key = \*\*([0-9.]+)\*\*", texts(at, raw=True))
    assert found, "no breakdown on the page"
    return float(found.group(1))


# ------------------------------------------------------------------------------------------------ languages
# Words that stay as they are in every language (the term table in docs/translating.md): model terms a German or
# Spanish course writes in English, abbreviations, file kinds, model families.
ALLOWED = frozenset(w.casefold() for w in (
    "softmax", "token", "tokens", "Query", "Queries", "Key", "Keys", "Value", "Values", "Heatmap", "Heatmaps",
    "Encoder", "Decoder", "Embedding", "Embeddings", "Unembedding", "Transformer", "Transformers", "logit", "logits",
    "nats", "nat", "Rollout", "top", "CSV", "PNG", "HTML", "QR", "PCA", "SNE", "RoPE", "GQA", "MLP", "MLPs", "RNN",
    "KV", "BERT", "GPT", "Llama", "GGUF", "LayerNorm", "RMSNorm", "QK", "QKᵀ", "ln", "max", "min", "CLS", "SEP",
    "PAD", "Hub", "Prompt", "cos", "ok", "OK", "CPU", "GPU", "MPS", "MB", "GB", "MiB", "safetensors", "odds", "log",
    "Spearman",
    *(w for name in LANGUAGES.values() for w in name.split()),   # the language menu: each by its own name
))
# Words a language shares with English where the translation is the same word (German "Head", "Text", "Start").
ALLOWED_IN = {
    "de": frozenset(w.casefold() for w in (
        "Head", "Heads", "Score", "Scores", "Text", "Start", "Position", "Permutation", "Seed", "Sampling",
        "Knockout", "Attention", "Cache", "Download", "Link", "Handout", "Name", "Bias", "Gradient", "Attribution",
        "Matrix", "Enter", "Code")),
    "es": frozenset(w.casefold() for w in ("feed", "forward", "rollout", "embedding", "unembedding", "transformer",
                                           "top", "hub", "Intro", "link", "Code", "Sinusoidal")),
}
WIDGETS = ("button", "checkbox", "toggle", "radio", "selectbox", "multiselect", "slider", "select_slider",
           "text_input", "text_area", "number_input", "color_picker", "date_input", "time_input")
_ICON = re.compile(r":material/[a-z_]+:|:[a-z]+\[[^\]]*\]")   # material icons, colour directives


def _figure_texts(spec: dict) -> list[str]:
    """A chart's words: its title, axis and colour-bar titles, subplot titles, legend names and hover words."""
    layout, out = spec.get("layout", {}), []
    for key, value in layout.items():
        if key == "title" or key.startswith(("xaxis", "yaxis")):
            title = (value or {}).get("title") if key != "title" else value
            out.append((title or {}).get("text") if isinstance(title, dict) else title)
    out += [a.get("text") for a in layout.get("annotations", [])]
    for trace in spec.get("data", []):
        out += [trace.get("name"), ((trace.get("colorbar") or {}).get("title") or {}).get("text")]
        hover = re.sub(r"%\{[^}]*\}|<[^>]*>", " ", trace.get("hovertemplate") or "")
        out.append(hover)
    return [str(t) for t in out if t and str(t).strip()]


def page_texts(at: AppTest) -> list[str]:
    """Every text a page showed, for the language checks: headings, messages (``MESSAGES``), widget labels,
    options and help, metric labels, tab and expander labels, link and download labels, table headers, and each
    chart's words."""
    out = [str(e.value) for kind in ("title", "header", "subheader", *MESSAGES) for e in getattr(at, kind)]
    for kind in WIDGETS:
        for w in at.get(kind):
            out += [w.label, getattr(w, "help", None) or ""]
            out += [str(o) for o in getattr(w, "options", None) or ()]
            if kind in ("text_input", "text_area") and w.placeholder:
                out.append(w.placeholder)
    out += [m.label for m in at.metric] + [m.help or "" for m in at.metric]
    out += [e.proto.label for kind in ("tabs", "expander") for e in at.get(kind) if hasattr(e.proto, "label")]
    out += [e.proto.label for kind in ("page_link", "download_button") for e in at.get(kind)]
    out += [e.proto.help for e in at.get("download_button")]
    for tab in at.get("tab"):
        out.append(tab.label)
    for frame in at.dataframe:
        value = frame.value
        out += [str(c) for c in value.columns] + [str(i) for i in value.index if isinstance(i, str)]
    for spec in figures(at).values():
        out += _figure_texts(spec)
    return [t.replace("\\", "").strip() for t in out if t and t.strip()]


def words(text: str) -> list[str]:
    """The words of ``text`` to translate (two letters or more): icons, numbers, symbols and names from code
    (d_model, attention_mask) taken out."""
    return re.findall(r"[^\W\d_]{2,}", re.sub(r"\w*_\w*", " ", _ICON.sub(" ", str(text))))


def english_left(texts_en: list[str], texts_other: list[str], allowed: set[str] | frozenset[str] = ALLOWED,
                 keep=()) -> list[str]:
    """The texts of a page in another language that stayed as they are in English, leaving out those whose words
    are all in ``allowed`` (case-insensitive: words the same in every language such as softmax, token, Query, Key,
    Value, Heatmap, Encoder, Decoder, Embedding; model tokens, model names) or in a text of ``keep`` (texts never
    translated: the model's tokens, a user's or an example's text). Numbers and symbols never count.

    ``texts_en``, ``texts_other``: what the page wrote in each render (``page_texts``). A text only the other
    render has is translated by construction; one both have is English left unless every word in it may stay."""
    kept = {a.casefold() for a in allowed} | {w.casefold() for text in keep for w in words(text)}
    english = set(texts_en)
    return sorted({t for t in texts_other if t in english and any(w.casefold() not in kept for w in words(t))})


def ticks(at: AppTest) -> list[str]:
    """The tick labels of every chart: model tokens, which stay as the model wrote them."""
    out = []
    for spec in figures(at).values():
        for name, axis in spec.get("layout", {}).items():
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                out.extend(str(t) for t in axis.get("ticktext") or ())
    return out


def rerun(at: AppTest) -> AppTest:
    """``at.run()`` for a session that shows another language than English. AppTest reads a select box's value back
    through the widget's ``format_func`` in the test's own thread, where no session runs and ``_()`` gives
    English: a box whose options were written in German (the token picker's "· Position 3") would not find its
    value. In the session's language, it does."""
    from explorer.ui import language
    from explorer.words import i18n

    with i18n.language(at.session_state[language.STATE] if language.STATE in at.session_state else i18n.SOURCE):
        at.run()
    assert not at.exception, at.exception
    return at
