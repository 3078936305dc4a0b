"""A model this server would have to download asks before loading it: named by a link, picked or typed.

On a shared server a crafted link (``?model=some/huge-model``) would otherwise start a download for whoever
clicks it, and a hub id typed into the picker would start one before the teacher has seen what it costs. Embedded
models, models already loaded and local folders open at once; any other model waits for "Load it" (the page
meanwhile shows the model it showed before, or the embedded default). The question is one card for both paths
(``card``): the model's family and what works on it, read from its config (a few kB, no weights), then the
download size and the server's size check from the hub's file list; offline it says so plainly. A model confirmed
once stays confirmed for the session.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from explorer.model import loading, preview
from explorer.model.registry import ModelSpec, ModelUnavailable, hub_policy, resolve_spec
from explorer.serving import policy, regions
from explorer.ui import cached, params
from explorer.ui.text import literal
from explorer.words import i18n
from explorer.words.i18n import N_, _

CONFIRMED = "_models_confirmed"   # session state: the models this session said "Load it" to
OFFLINE = N_("Its size is unknown: the hub cannot be reached from this server, so it loads only if it is "
             "already in this server's cache.")   # English: Download.why is translated where it is shown


@dataclass(frozen=True)
class Download:
    """What the hub's file list says about loading a model: its size, or why that is not known, or why the
    server's size check refuses it."""
    size_mb: int | None
    why: str = ""            # why the size is unknown, or the size check's refusal (shown through _())
    refused: bool = False    # the size check refuses it: loading it would fail the same way


# (hub id, language) -> (when, Download): the hub is asked once a minute at most; its words are in that language.
# (model, language) -> (when, what works, or None). Memos of the memos region, the 256 models asked about last each.
_sizes = regions.memo(f"{__name__}._sizes", 1 << 20, max_entries=256)
_works = regions.memo(f"{__name__}._works", 1 << 20, max_entries=256)


def needs_asking(name: str) -> ModelSpec | None:
    """The spec of ``name`` when loading it must be confirmed: a hub id or folder this server would load but has
    not loaded yet. None for embedded models, models loaded or loading now (someone on this server chose them: a
    class following its teacher is not asked again), hub models already in this server's hub cache (nothing to
    download), and names the picker refuses anyway."""
    try:
        spec = resolve_spec(name)
    except ModelUnavailable:
        return None                          # the page shows why when it tries
    if spec.source == "embedded" or spec.name in cached.WORKER.requested():
        return None
    if spec.source == "hub" and policy.cached_snapshot(spec.name) is not None:
        return None                          # in this server's hub cache: loading it downloads nothing
    allowed, allowlist = hub_policy()
    if spec.source == "hub" and (not allowed or (allowlist and spec.name not in allowlist)):
        return None                          # the picker says it is not offered
    return spec


def download(spec: ModelSpec) -> Download:
    """The hub's file list for ``spec`` through the size check a load runs (the cap, free disk and memory), asked
    once a minute at most; offline it is not asked."""
    now, at = time.monotonic(), (spec.name, i18n.current())
    known = _sizes.peek(at)
    if known and now - known[0] < 60:
        return known[1]
    if not loading.hub_reachable():
        found = Download(None, OFFLINE)
    else:
        try:
            metadata = policy.fetch_metadata(spec.name, timeout=3)
            found = Download(policy.check_download(spec.name, metadata, free_disk_bytes=policy.free_disk(),
                                                   free_memory_bytes=policy.free_memory()))
        except policy.MetadataUnavailable as err:
            found = Download(None, _("Its size is unknown ({error})").format(error=err))
        except policy.PolicyRefusal as err:
            found = Download(None, str(err), refused=True)
    _sizes.put(at, (now, found))
    return found


def question(spec: ModelSpec, typed: bool = False) -> str:
    """"This link asks for X from the hub, 499 MB. Load it?" (or why the size is unknown, or why this server would
    refuse it); ``typed``: the picker's wording. X is user text: show it literally."""
    if spec.source == "local":
        return _("This link asks for the model folder {model} on this server. Load it?").format(model=spec.name)
    found = download(spec)
    why = _(found.why) if found.why else ""
    if found.refused:
        text = (_("{model} is not on this server yet: a download from the hub, which this server refuses: {why}")
                if typed else _("This link asks for {model} from the hub, which this server refuses: {why}"))
    elif found.size_mb is None:
        text = (_("{model} is not on this server yet: a download from the hub. {why} Load it?") if typed
                else _("This link asks for {model} from the hub. {why} Load it?"))
    else:
        text = (_("{model} is not on this server yet: a download from the hub, {size}. Load it?") if typed
                else _("This link asks for {model} from the hub, {size}. Load it?"))
    size = "" if found.size_mb is None else preview.size_words(found.size_mb)
    return text.format(model=spec.name, why=why, size=size)


def what_works(spec: ModelSpec) -> str | None:
    """The model's family and which capabilities work on it, from its config alone (a local folder's
    ``config.json``, or the hub's, a few kB, no weights); None when it cannot be read. Asked once a minute."""
    now, at = time.monotonic(), (spec.name, i18n.current())
    known = _works.peek(at)
    if known and now - known[0] < 60:
        return known[1]
    data = None
    snapshot = policy.cached_snapshot(spec.name) if spec.source == "hub" else None
    if spec.source == "local" or snapshot is not None:
        data = preview.local_config(str(snapshot or spec.name))
    elif spec.source == "hub" and loading.hub_reachable():
        try:
            data = preview.fetch_config(spec.name)
        except policy.PolicyRefusal:
            data = None
    text = None if data is None else preview.what_works(preview.config_of(data))
    _works.put(at, (now, text))
    return text


def show_what_works(name: str) -> None:
    """Under a typed folder or a confirmed hub id: its family, its download size and what works on it."""
    try:
        spec = resolve_spec(name)
    except ModelUnavailable:
        return
    if spec.source == "embedded":
        return
    works = what_works(spec)
    if works and spec.source == "hub" and policy.cached_snapshot(spec.name) is not None:
        st.caption(literal(_("{model}, in this server's hub cache (no download): {works}").format(model=spec.name,
                                                                                                  works=works)))
    elif works:
        size = download(spec).size_mb if spec.source == "hub" else None
        st.caption(literal(f"{spec.name}, {preview.size_words(size)}: {works}" if size is not None else works))


def confirmed(name: str) -> bool:
    """Whether this session has said "Load it" to ``name`` (it is not asked again)."""
    return name in st.session_state.get(CONFIRMED, ())


def _confirm(name: str) -> None:
    st.session_state[CONFIRMED] = {*st.session_state.get(CONFIRMED, ()), name}


def card(spec: ModelSpec, key: str, typed: bool, stay_label: str, load: Callable[[], None],
         stay: Callable[[], None]) -> None:
    """The one question before a load, for a link and for the picker: what it is and what works on it (config
    first), the download's size or why it is unknown, another download running, "Load it" and ``stay_label``.
    ``load`` runs after the model is marked confirmed for this session."""
    works = what_works(spec)
    text = question(spec, typed)
    with st.container(border=True):
        st.markdown(f"{':material/download:' if typed else ':material/link:'} {literal(text)}")
        if works:
            st.caption(literal(works))
        elif spec.source == "hub":
            st.caption(_("Its config could not be read either, so its family and what works on it show once it "
                         "has loaded."))
        busy = loading.current_download()
        if busy:
            st.caption(_("Another download is running on this server ({model}); this one would wait for it.").format(
                model=literal(busy)))
        if not (spec.source == "hub" and download(spec).refused):
            st.button(_("Load it"), key=f"{key}_load", on_click=lambda: (_confirm(spec.name), load()),
                      icon=":material/download:")
        st.button(stay_label, key=f"{key}_stay", on_click=stay, icon=":material/undo:")


def ask_before_loading(key: str, default: str) -> str | None:
    """Call before the model picker reads the URL. Returns the model waiting for an answer (None: nothing to
    ask); while it waits, the picker shows ``default``. Answers: "Load" puts the model in the picker,
    "Stay on" drops the question."""
    pending = f"_ask_{key}"
    if key not in st.session_state and pending not in st.session_state and key in st.query_params:
        linked = str(st.query_params[key])
        if needs_asking(linked) is not None and not confirmed(linked):
            st.session_state[pending] = linked
            st.session_state[key] = default
    asked = st.session_state.get(pending)
    if asked is None:
        return None
    spec = needs_asking(asked)
    if spec is None:                         # loaded meanwhile by someone else: open it at once
        st.session_state.pop(pending)
        st.session_state[key] = st.session_state[params.kept(key)] = asked
        return None

    def load():
        st.session_state[key] = st.session_state[params.kept(key)] = st.session_state.pop(pending)

    def stay():
        st.session_state.pop(pending, None)
        st.session_state[key] = st.session_state[params.kept(key)] = default

    card(spec, f"{key}_ask", False, _("Stay on {model}").format(model=default), load, stay)
    return asked


def picked_waits(key: str, name: str, shown: str) -> bool:
    """After the picker: True while ``name`` (picked or typed) is a hub model this session has not confirmed, with
    its card drawn; the page meanwhile shows ``shown``. "Stay on" puts ``shown`` back in the picker. A folder, an
    embedded, loaded or confirmed model returns False at once (a typed one gets its caption)."""
    spec = needs_asking(name)
    if spec is None or spec.source == "local" or confirmed(spec.name):
        return False

    def stay():
        st.session_state[key] = st.session_state[params.kept(key)] = shown
        st.session_state.pop(f"{key}_other", None)
        st.session_state.pop(f"_typed_{key}", None)   # the free box forgets the id it was not to load

    card(spec, f"{key}_pick", True, _("Stay on {model}").format(model=shown), lambda: None, stay)
    return True
