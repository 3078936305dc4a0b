"""bertviz's returned HTML rebuilt as one self-contained, offline page (see ``explorer.plots.bertviz``).

bertviz's page fetches require.js, d3 and jQuery from a CDN. Here the CDN tags are dropped and d3 5.7.0 and jQuery
2.2.4 (vendored from npm in ``assets/vendor/``) are inlined, followed by a tiny ``require`` shim that hands bertviz
the two libraries it asks for; bertviz's own script is inlined with its parameters re-serialised so that no token
can end the script early (``safe_json``). A Content-Security-Policy (``default-src 'none'``, scripts allowed only
by their sha256) tells the browser that the page makes no request at all.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from pathlib import Path

VENDOR_DIR = Path(__file__).resolve().parents[2] / "assets" / "vendor"
VENDORED_JS = ("d3-5.7.0.min.js", "jquery-2.2.4.min.js")   # inlined in this order, before the shim

# Only a browser may run this: it replaces require.js. bertviz's script calls requirejs(["jquery", "d3"], fn).
REQUIRE_SHIM = """(function () {
  "use strict";
  // Offline stand-in for require.js: d3 and jQuery are inlined above and set window.d3 / window.jQuery.
  var modules = {jquery: window.jQuery, d3: window.d3};
  function require(names, callback) {
    var found = names.map(function (name) {
      if (!modules[name]) { throw new Error("offline bertviz: no inlined module named " + name); }
      return modules[name];
    });
    if (callback) { callback.apply(window, found); }
  }
  require.config = function () {};
  window.require = window.requirejs = require;
}());"""


class BertvizFormatError(RuntimeError):
    """bertviz's HTML no longer has the shape this module rewrites (a bertviz upgrade?)."""


@functools.cache
def vendored() -> tuple[str, ...]:
    """The scripts every page inlines, in order: d3, jQuery (each checked inlinable), then the ``require`` shim."""
    scripts = []
    for name in VENDORED_JS:
        text = (VENDOR_DIR / name).read_text(encoding="utf-8")
        text = re.sub(r"^//# sourceMappingURL=.*$", "", text, flags=re.M)   # not even a devtools fetch
        check_inlinable(text, name)
        scripts.append(text)
    return (*scripts, REQUIRE_SHIM)


@functools.cache
def fixed_bytes() -> int:
    """Bytes every page carries besides the weights: libraries, bertviz's JS, markup (an upper bound)."""
    import bertviz

    js = max((Path(bertviz.__file__).parent / f).stat().st_size for f in ("head_view.js", "model_view.js"))
    return sum(len(s) for s in vendored()) + js + 4_000


def check_inlinable(script: str, what: str) -> None:
    """Raise ``BertvizFormatError`` if ``script`` could end its ``<script>`` element or open a comment."""
    if re.search(r"</script|<!--", script, flags=re.I):
        raise BertvizFormatError(f"{what} contains '</script' or '<!--' and cannot be inlined safely.")


def safe_json(value) -> str:
    """JSON that is inert inside an HTML ``<script>`` element (``ensure_ascii`` also escapes U+2028/9)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def offline_page(bertviz_html: str, js_file: str, title: str, background: str = "#fff") -> str:
    """Rebuild bertviz's returned HTML as a standalone page: its markup, the inlined libraries and shim, and its
    own script with the parameters re-serialised safely and no ``require.config`` naming the CDN."""
    import bertviz

    loader = re.match(r'\s*<script src="https?://[^"]*require[^"]*"></script>', bertviz_html)
    opener = '\n<script type="text/javascript">\n'
    start = bertviz_html.find(opener)
    if loader is None or start < 0:
        raise BertvizFormatError("bertviz's HTML does not start with the require.js tag and its markup.")
    markup = bertviz_html[loader.end():start]
    anchor = "const params = "
    at = bertviz_html.find(anchor, start)
    if "<script" in markup.lower() or at < 0:
        raise BertvizFormatError("bertviz's markup or its 'const params = …' line is not where expected.")
    try:
        params, _end = json.JSONDecoder().raw_decode(bertviz_html, at + len(anchor))
    except json.JSONDecodeError as err:
        raise BertvizFormatError(f"bertviz's parameters are not JSON: {err}") from err

    template = (Path(bertviz.__file__).parent / js_file).read_text(encoding="utf-8")
    template, n_config = re.subn(r"require\.config\(\{.*?\}\);\s*", "", template, count=1, flags=re.S)
    if n_config != 1 or f"{anchor}PYTHON_PARAMS;" not in template:
        raise BertvizFormatError(f"bertviz's {js_file} has no require.config(…) or 'const params = PYTHON_PARAMS;'.")
    check_inlinable(template, js_file)
    code = template.replace(f"{anchor}PYTHON_PARAMS;", f"{anchor}{safe_json(params)};", 1)

    scripts = (*vendored(), code)
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
                      for s in scripts)
    csp = f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'"
    body = "\n".join(f"<script>{s}</script>" for s in scripts)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n<title>{title}</title>\n'
            f"<style>html, body {{ margin: 0; padding: 4px; background: {background}; color-scheme: light; }}"
            f"</style>\n</head>\n<body>\n{markup.strip()}\n{body}\n</body>\n</html>\n")
