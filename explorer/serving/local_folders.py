"""Model folders on the server's own disk, as a shared server allows them (see ``explorer.serving.policy``).

Local folders are off unless the deployer sets ``EXPLORER_ALLOW_LOCAL=1``; while off, ``check_local`` gives one
fixed answer and never looks at the disk, so a user cannot learn which paths exist. While on, a folder must lie
under ``EXPLORER_LOCAL_ROOT`` after resolving symlinks. Pure standard library, like the policy.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from explorer.serving.policy import ON, PolicyRefusal, environment
from explorer.words.i18n import N_, _

LOCAL_OFF = N_("Model folders on this server's disk cannot be opened here: the deployer has not switched them on "
                "(EXPLORER_ALLOW_LOCAL=1, with EXPLORER_LOCAL_ROOT set to the folder that holds them).")


class LocalRefused(PolicyRefusal):
    """A local folder is switched off, missing, outside the root, or not a model folder."""


def local_allowed(env: Mapping[str, str] | None = None) -> bool:
    """True only when EXPLORER_ALLOW_LOCAL is 1/true/yes/on (off by default)."""
    return environment(env).get("EXPLORER_ALLOW_LOCAL", "0").strip().lower() in ON


def local_root(env: Mapping[str, str] | None = None) -> Path | None:
    """EXPLORER_LOCAL_ROOT as a path (``~`` expanded, nothing read from disk), or None when unset."""
    raw = environment(env).get("EXPLORER_LOCAL_ROOT", "").strip()
    return Path(raw).expanduser() if raw else None


def looks_like_path(name: str) -> bool:
    """Whether ``name`` is meant as a folder, decided from the string alone (no disk access).

    Paths start with ``/ ./ ../ ~`` or a drive letter, are ``.`` or ``..``, contain a backslash, a ``.``/``..``
    segment, or more than one ``/``. A hub id has at most one ``/`` (``org/model``), so a relative folder with one
    slash must be written ``./models/bert``.
    """
    name = (name or "").strip()
    if name in {".", ".."} or name.startswith(("/", "./", "../", "~")) or "\\" in name:
        return True
    if re.match(r"^[A-Za-z]:", name) or name.count("/") > 1 or name.endswith("/"):
        return True
    return any(part in {".", ".."} for part in name.split("/"))


def check_local(name: str, env: Mapping[str, str] | None = None) -> Path:
    """The resolved folder for ``name``, or LocalRefused.

    Off: always LOCAL_OFF, before touching the file system. On: the path (relative ones are taken under the
    root) must resolve, symlinks included, to a folder inside EXPLORER_LOCAL_ROOT (anywhere when no root is set)
    holding a regular config.json; no top-level entry may be a symlink that leads out of the root. Missing,
    outside and not-a-folder give the same message, so paths outside the root cannot be probed.
    """
    if not local_allowed(env):
        raise LocalRefused(_(LOCAL_OFF))
    root = local_root(env)
    refused = LocalRefused((_("There is no model folder {name} under this server's model folder.") if root
                            else _("There is no model folder {name}.")).format(name=repr(name)))
    if not name or len(name) >= 4096 or "\0" in name:
        raise refused
    base = None
    if root is not None:
        try:
            base = root.resolve(strict=True)
        except (OSError, RuntimeError):
            raise LocalRefused(_("EXPLORER_LOCAL_ROOT does not name an existing folder on this server.")) from None
    candidate = Path(name).expanduser()
    if base is not None:
        candidate = candidate if candidate.is_absolute() else base / candidate
        lexical = Path(os.path.normpath(candidate))                      # '..' out of the root: no disk access
        if not (lexical.is_relative_to(base) or lexical.is_relative_to(os.path.abspath(root))):
            raise refused
    try:
        folder = candidate.resolve(strict=True)
    except (OSError, RuntimeError):   # missing, a symlink loop, a name the file system refuses
        raise refused from None
    if (base is not None and not folder.is_relative_to(base)) or not folder.is_dir():
        raise refused
    no_config = LocalRefused(_("The folder {name} has no config.json, so it is not a model folder.").format(
        name=repr(name)))
    try:
        config = (folder / "config.json").resolve(strict=True)
    except (OSError, RuntimeError):
        raise no_config from None
    if not config.is_file() or (base is not None and not config.is_relative_to(base)):
        raise no_config
    if base is not None:
        for entry in folder.iterdir():
            if entry.is_symlink() and not entry.resolve().is_relative_to(base):
                raise LocalRefused(_("The folder {name} links to files outside this server's model "
                                     "folder.").format(name=repr(name)))
    return folder
