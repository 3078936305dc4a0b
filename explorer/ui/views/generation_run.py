"""The "Watch it write" page's controls and its one heavy computation: settings from the link, the generation
run in a shared job (tokens shown as they come), and the per-step readouts, all cached by plain values.

A generation runs in ``GENERATIONS`` (a ``worker.Jobs``), a thread no page owns: a student who moves a slider or
leaves the page stops nothing, and only a finished generation is stored (by its keeper, in the ``results`` region,
keyed by model, prompt and settings: :func:`finished`). Each of its steps takes one turn of the server's fair
forward queue, so ten students generating at once take turns token by token. A generation its session has replaced
by a newer one (another prompt or setting) stops at its next step and is not stored.
"""
from __future__ import annotations

import streamlit as st

from explorer.generation.readout import direct_effect, logit_lens
from explorer.generation.sampling import URL_KEYS, Settings, clamp_settings, max_new_tokens
from explorer.generation.steps import KINDS, Generation, generate
from explorer.jobs import keepers
from explorer.model.registry import ModelUnavailable
from explorer.serving import process, regions
from explorer.serving.fairqueue import QueueFull, Replaced
from explorer.ui import cached, params
from explorer.ui.live import membership
from explorer.ui.live import streamlit_internals as internals
from explorer.ui.text import literal
from explorer.ui.widgets import from_url, link_note
from explorer.ui.words import tip
from explorer.words import numbers
from explorer.words.i18n import _, ngettext

GENERATIONS = keepers.jobs("generations")   # finished ones live on in the byte-bounded results region
DEFAULT_PROMPT = "The capital of France is"
MAX_PROMPT_CHARS = 2000
# session -> the generation it asked for last, for the 2,000 sessions that asked last (a memo of the memos region)
_latest = regions.memo(f"{__name__}._latest", 1 << 20, max_entries=2000)
URL = URL_KEYS


class Abandoned(RuntimeError):
    """The session that started a generation asked for another one: this one stops, unstored."""


def prompt_box() -> str:
    value = str(from_url("prompt", DEFAULT_PROMPT))
    if len(value) > MAX_PROMPT_CHARS:
        link_note(_("The linked prompt was {n} characters; it was cut to {most}.").format(
            n=numbers.integer(len(value)), most=numbers.integer(MAX_PROMPT_CHARS)))
        st.session_state["prompt"] = value[:MAX_PROMPT_CHARS]
    locked = membership.text_locked()
    prompt = st.text_area(_("Prompt"), key="prompt", max_chars=MAX_PROMPT_CHARS, height=80, disabled=locked,
                          help=_("Locked by the teacher: follow along, or explore on your own.") if locked else None)
    params.put("prompt", prompt)
    return prompt


def flag(label: str, key: str) -> bool:
    """A deep-linked toggle (``1`` / ``0`` in the URL)."""
    st.session_state[key] = str(from_url(key, "0")).strip().lower() in {"1", "true", "yes", "on"}
    on = st.toggle(label, key=key)
    params.put(key, "1" if on else "0")
    return on


def settings_controls() -> Settings:
    """New tokens, greedy or sampling (temperature, top-k, top-p, seed), from the link, clamped with a note."""
    raw = {name: from_url(key, getattr(Settings(), name)) for name, key in URL.items()}
    raw["greedy"] = from_url("mode", "greedy") != "sample"
    settings, notes = clamp_settings(raw)
    for message in notes:
        link_note(_("Link: {note}").format(note=message))
    for name, key in URL.items():
        st.session_state[key] = getattr(settings, name)
    st.session_state["mode"] = "greedy" if settings.greedy else "sample"
    row = st.columns([2, 3, 2, 2, 2, 2], vertical_alignment="bottom")
    new = row[0].number_input(_("New tokens (≤ {most})").format(most=max_new_tokens()), 1, max_new_tokens(), key="new")
    mode = row[1].segmented_control(_("Pick the next token"), ["greedy", "sample"], key="mode",
                                    format_func={"greedy": _("most likely"), "sample": _("sample")}.get) or "greedy"
    sample = mode == "sample"
    temp = row[2].number_input(_("Temperature"), 0.05, 5.0, step=0.1, key="temp", disabled=not sample,
                               help=tip("temperature"))
    top_k = row[3].number_input(_("Top-k (0: off)"), 0, 1000, step=1, key="topk", disabled=not sample,
                                help=tip("top-k"))
    top_p = row[4].number_input(_("Top-p (1: off)"), 0.01, 1.0, step=0.05, key="topp", disabled=not sample,
                                help=tip("top-p"))
    seed = row[5].number_input(_("Seed"), 0, 2**31 - 1, step=1, key="seed", disabled=not sample)
    chosen = Settings(int(new), not sample, float(temp), int(top_k), float(top_p), int(seed))
    params.put_all({"mode": mode, "new": str(chosen.new_tokens)})
    for name in ("temperature", "top_k", "top_p", "seed"):
        if sample:
            params.put(URL[name], str(getattr(chosen, name)))
        else:
            params.drop(URL[name])
    if not sample:   # greedy ignores them: one cache entry, one link, whatever the disabled boxes hold
        chosen = Settings(chosen.new_tokens)
    return chosen


def _runner(session: str, key: tuple):
    """Run one step's forward through the fair queue as ``session``, unless the session has moved on."""
    def run(fn):
        while True:
            if _latest.peek(session, key) != key:
                raise Abandoned("a newer generation of the same session replaced this one")
            try:
                return _queued(session, fn)
            except Replaced:          # this session's other generation took the place: try again if still wanted
                continue
    return run


def _queued(session: str, fn):
    """``fn()`` as one job of the shared forward queue for ``session`` (``EXPLORER_FORWARD_QUEUE=0``: at once)."""
    if not process.forward_queue_on():
        return fn()
    return cached.FORWARDS.submit(session, None, fn).result()


def _work(model: str, key: tuple, prompt: str, settings: Settings, session: str, progress) -> Generation:
    loaded = cached.WORKER.get(model)
    gen = generate(loaded, prompt, settings, run=_runner(session, key),
                   on_token=lambda step, text: progress((step + 1) / settings.new_tokens, text))
    for array in (gen.weights, gen.logits, gen.draws, gen.resid, gen.heads, gen.mlp, gen.step_ms):
        if array is not None:
            array.setflags(write=False)
    return gen   # stored by GENERATIONS only now, whole


def finished(key: tuple) -> Generation | None:
    """The finished generation of ``key`` (``("generate", model, prompt, settings)``) if the region holds it."""
    job = GENERATIONS.peek(key)
    return job.value if job is not None and job.done.is_set() and job.error is None else None


def generation_or_stop(model: str, prompt: str, settings: Settings) -> tuple[tuple, Generation]:
    """The generation for these plain values: from the cache, or run now with its tokens shown as they come.
    An empty prompt, an encoder or a failure is one clear message and the page stops."""
    if not prompt.strip():
        st.info(_("Type a prompt for the model to continue."), icon=":material/edit:")
        st.stop()
    loaded = cached.get_model(model)
    if loaded.kind != "decoder":
        st.info(_("{model} is an {kind}: it reads a whole text at once and has no next-token head. Generation needs "
                  "a causal decoder such as the embedded SmolLM2.").format(model=model,
                                                                           kind=_(KINDS.get(loaded.kind, loaded.kind))),
                icon=":material/block:")
        st.stop()
    key = ("generate", model, prompt, settings)
    session = internals.session_id() or "server"
    _latest.put(session, key)
    job = GENERATIONS.run(key, lambda progress: _work(model, key, prompt, settings, session, progress),
                          name=f"writing after {prompt[:30]!r}")
    live = st.empty()
    while not job.done.wait(0.15):
        with live.container(border=True):
            written = job.message if job.fraction else ""   # the job's message is the text written so far
            st.markdown(f"{literal(prompt)}:orange[{literal(written)}]▌")
            writing = ngettext("Writing… {n} of at most {most} token", "Writing… {n} of at most {most} tokens",
                               settings.new_tokens)
            st.progress(job.fraction, text=writing.format(n=round(job.fraction * settings.new_tokens),
                                                          most=settings.new_tokens))
    live.empty()
    try:
        return key, job.wait()
    except Abandoned:
        st.rerun()
    except (ValueError, ModelUnavailable, QueueFull) as err:
        st.warning(literal(err))
        st.stop()


def readout(model: str, key: tuple, gen: Generation, step: int):
    """``(logit lens, direct effect or the error why not)`` of ``step``: computed once, through the fair queue."""
    rkey = ("readout", key, step)
    hit = cached.result_cache().peek(rkey)
    if hit is not None:
        return hit
    loaded = cached.get_model(model)

    def compute():
        try:
            effect = direct_effect(loaded, gen, step)
        except ValueError as err:   # kept as the error: its message is read in each session's language
            effect = err
        return logit_lens(loaded, gen, step), effect
    return cached.forward(rkey, lambda: cached.result_cache().get_or_compute(rkey, compute))
