"""A link that names a model nobody has loaded yet asks before loading it.

On a shared server a crafted link (``?model=some/huge-model``) would otherwise start a download for whoever
clicks it. Embedded models and models already loaded open at once; any other model named in the URL waits for
the student's "Load" (the page meanwhile shows the embedded model). The question gives the download size from
the hub's file list when the hub answers, and says so when it does not.
"""
from __future__ import annotations

import time

import streamlit as st

from explorer.model import loading
from explorer.model.registry import ModelSpec, ModelUnavailable, hub_policy, resolve_spec
from explorer.serving import policy
from explorer.ui import cached
from explorer.ui.text import literal

_sizes: dict[str, tuple[float, str]] = {}   # hub id -> (when, question): the hub is asked once a minute at most


def needs_asking(name: str) -> ModelSpec | None:
    """The spec of ``name`` when loading it must be confirmed: a hub id or folder this server would load but has
    not loaded yet. None for embedded and loaded models, and for names the picker refuses anyway."""
    try:
        spec = resolve_spec(name)
    except ModelUnavailable:
        return None                          # the page shows why when it tries
    if spec.source == "embedded" or spec.name in cached.WORKER.loaded():
        return None
    allowed, allowlist = hub_policy()
    if spec.source == "hub" and (not allowed or (allowlist and spec.name not in allowlist)):
        return None                          # the picker says it is not offered
    return spec


def question(spec: ModelSpec) -> str:
    """"This link asks for X from the hub, 499 MB. Load it?" (or why the size is unknown). X is user text."""
    if spec.source == "local":
        return f"This link asks for the model folder {spec.name} on this server. Load it?"
    now = time.monotonic()
    known = _sizes.get(spec.name)
    if known and now - known[0] < 60:
        return known[1]
    if not loading.hub_reachable():
        text = (f"This link asks for {spec.name} from the hub. Its size is unknown: the hub cannot be reached from "
                "this server, so it loads only if it is already in this server's cache. Load it?")
    else:
        try:
            size_mb = -(-policy.weights_bytes(policy.fetch_metadata(spec.name, timeout=3)) // policy.MB)
            text = policy.describe_link_request(spec.name, size_mb)
        except policy.PolicyRefusal as err:
            text = f"This link asks for {spec.name} from the hub. Its size is unknown ({err}) Load it?"
    _sizes[spec.name] = (now, text)
    return text


def ask_before_loading(key: str, default: str) -> str | None:
    """Call before the model picker reads the URL. Returns the model waiting for an answer (None: nothing to
    ask); while it waits, the picker shows ``default``. Answers: "Load" puts the model in the picker,
    "Stay on" drops the question."""
    pending = f"_ask_{key}"
    if key not in st.session_state and pending not in st.session_state and key in st.query_params:
        linked = str(st.query_params[key])
        if needs_asking(linked) is not None:
            st.session_state[pending] = linked
            st.session_state[key] = default
    asked = st.session_state.get(pending)
    if asked is None:
        return None
    spec = needs_asking(asked)
    if spec is None:                         # loaded meanwhile by someone else: open it at once
        st.session_state.pop(pending)
        st.session_state[key] = st.session_state[f"_kept_{key}"] = asked
        return None

    def load():
        st.session_state[key] = st.session_state[f"_kept_{key}"] = st.session_state.pop(pending)

    def stay():
        st.session_state.pop(pending, None)
        st.session_state[key] = st.session_state[f"_kept_{key}"] = default

    with st.container(border=True):
        st.markdown(f":material/link: {literal(question(spec))}")
        busy = loading.current_download()
        if busy:
            st.caption(f"Another download is running on this server ({literal(busy)}); this one would wait for it.")
        st.button("Load it", key=f"{key}_ask_load", on_click=load, icon=":material/download:")
        st.button(f"Stay on {default}", key=f"{key}_ask_stay", on_click=stay, icon=":material/undo:")
    return asked
