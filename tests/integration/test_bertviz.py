"""The offline bertviz page: no network, vendored code inlined, capped size, user text kept literal.

Units build pages from small random attention; the browser tests open them in headless Chromium with every
non-file request aborted and recorded.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from explorer.plots import bertviz as bo

HOSTILE = [
    "[CLS]",
    "<script>alert(1)</script>",
    '<img src=x onerror="window.__xss=1">',
    "</script><img src=x onerror=window.__xss=2>",   # no quotes, so JSON leaves it as it is
    "<!--<script>",
    "&amp; &lt;b&gt;",
    "line\u2028sep",
    "'\"`${window.__xss=3}`",
    "[SEP]",
]
VENDOR_SHA256 = {
    "d3-5.7.0.min.js": "bdad5585ef9a965ff25458738309b006058c55f2c78d794d25fbecae35014609",
    "jquery-2.2.4.min.js": "05b85d96f41fff14d8f608dad03ab71e2c1017c2da0914d7c59291bad7a54f8e",
}


def random_weights(n_layers, n_heads, n_query, n_key=None, seed=0, causal=False):
    """Softmax rows of random scores: float32 ``[layer, head, query, key]``, each row sums to 1."""
    n_key = n_query if n_key is None else n_key
    x = np.random.default_rng(seed).normal(size=(n_layers, n_heads, n_query, n_key)) * 3
    if causal:
        x = np.where(np.tril(np.ones((n_query, n_key), bool)), x, -np.inf)
    w = np.exp(x - x.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)


def params_of(html: str) -> dict:
    """The parameters the page hands bertviz's script, decoded the way the browser will read them."""
    anchor = "const params = "
    return json.JSONDecoder().raw_decode(html, html.index(anchor) + len(anchor))[0]


def scripts_of(html: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", html, flags=re.S)


# ------------------------------------------------------------------------------------------------------ units

def test_vendored_files_are_the_npm_builds_named_in_the_readme():
    readme = (bo.VENDOR_DIR / "README.md").read_text()
    for name, sha in VENDOR_SHA256.items():
        assert hashlib.sha256((bo.VENDOR_DIR / name).read_bytes()).hexdigest() == sha
        assert sha in readme
    assert (bo.VENDOR_DIR / "LICENSE-d3").exists() and (bo.VENDOR_DIR / "LICENSE-jquery").exists()


@pytest.mark.parametrize("build", [bo.head_view_html_from_arrays, bo.model_view_html_from_arrays])
def test_page_makes_no_network_request_and_inlines_the_libraries(build):
    tokens = ["[CLS]", "the", "cat", "[SEP]"]
    html = build(tokens, random_weights(2, 3, 4))
    assert "cdnjs" not in html and "require.config(" not in html
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, flags=re.I)
    markup = re.sub(r"<script>.*?</script>", "", html, flags=re.S)           # the page outside its scripts
    assert "default-src 'none'" in markup
    # the policy's script hashes are base64, which may hold "//"; they name no address, so leave them out
    markup = re.sub(r"'sha256-[A-Za-z0-9+/=]+'", "", markup).lower()
    assert "<link" not in markup and "src=" not in markup and "href=" not in markup and "//" not in markup
    scripts = scripts_of(html)
    assert len(scripts) == 4                        # d3, jQuery, the require shim, bertviz's own script
    assert scripts[0].startswith("// https://d3js.org v5.7.0")
    assert scripts[1].startswith("/*! jQuery v2.2.4")
    assert "window.require = window.requirejs = require" in scripts[2]
    assert "requirejs(['jquery', 'd3']" in scripts[3]
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1)
    assert "default-src 'none'" in csp
    for script in scripts:                          # every script is allowed by its own hash, nothing else is
        digest = hashlib.sha256(script.encode()).digest()
        assert "'sha256-" + __import__("base64").b64encode(digest).decode() + "'" in csp


def test_weights_are_rounded_and_tokens_kept():
    w = np.full((1, 2, 3, 3), 1 / 3, dtype=np.float32)
    params = params_of(bo.head_view_html_from_arrays(["a", "b", "c"], w))
    (block,) = params["attention"]
    assert block["left_text"] == block["right_text"] == ["a", "b", "c"]
    assert np.array(block["attn"]).shape == (1, 2, 3, 3)
    assert block["attn"][0][0][0] == [0.333, 0.333, 0.333]


def test_hostile_tokens_stay_literal_and_inert():
    w = random_weights(2, 2, len(HOSTILE))
    for html in (bo.head_view_html_from_arrays(HOSTILE, w), bo.model_view_html_from_arrays(HOSTILE, w)):
        # No token can close the script or open markup: "<", ">" and "&" only appear as JSON escapes.
        assert html.lower().count("</script") == 4
        assert "<img" not in html and "<!--" not in html and "\u2028" not in html
        line = next(s for s in scripts_of(html) if "const params = " in s)
        body = line[line.index("const params = "):line.index("\n", line.index("const params = "))]
        assert "<" not in body and ">" not in body and "&" not in body
        block = params_of(html)["attention"][0]
        assert block["left_text"] == HOSTILE and block["right_text"] == HOSTILE   # exact round trip


def test_bertviz_alone_would_embed_the_hostile_token_raw():
    """Why the parameters are re-serialised: bertviz writes the token unescaped into its <script>."""
    import torch
    from bertviz import head_view

    w = random_weights(1, 1, 3)
    raw = head_view(tuple(torch.from_numpy(w[i][None]) for i in range(1)), ["a", HOSTILE[3], "b"],
                    html_action="return").data
    assert HOSTILE[3] in raw and "cdnjs.cloudflare.com" in raw


def test_cap_raises_a_message_and_scales_with_the_model():
    assert bo.max_tokens_for("head", 6, 12) == 78 and bo.max_tokens_for("model", 6, 12) == 40
    assert bo.max_tokens_for("head", 30, 9) == 40 and bo.max_tokens_for("model", 30, 9) == 21
    assert bo.max_tokens_for("head", 1, 12) > bo.max_tokens_for("head", 6, 12)   # fewer layers, more tokens
    w = random_weights(2, 2, 6)
    tokens = [f"t{i}" for i in range(6)]
    with pytest.raises(bo.TooManyTokens) as err:
        bo.head_view_html_from_arrays(tokens, w, max_tokens=5)
    assert isinstance(err.value, ValueError)
    assert (err.value.n_tokens, err.value.max_tokens) == (6, 5)
    assert "at most 5 tokens" in str(err.value) and "has 6 tokens" in str(err.value)
    with pytest.raises(bo.TooManyTokens):
        bo.model_view_html_from_arrays(tokens, w, max_tokens=5)
    assert bo.head_view_html_from_arrays(tokens, w, max_tokens=6)


@pytest.mark.parametrize("view,n_layers,n_heads", [("head", 6, 12), ("head", 30, 9), ("model", 6, 12),
                                                   ("model", 30, 9)])
def test_page_at_the_cap_stays_under_the_budget(view, n_layers, n_heads):
    n = bo.max_tokens_for(view, n_layers, n_heads)
    w = np.full((n_layers, n_heads, n, n), 0.123, dtype=np.float32)     # the longest number a weight can be
    build = bo.head_view_html_from_arrays if view == "head" else bo.model_view_html_from_arrays
    html = build([f"tok{i}" for i in range(n)], w)
    assert len(html.encode()) <= bo.HTML_BUDGET_BYTES
    with pytest.raises(bo.TooManyTokens):
        build([f"tok{i}" for i in range(n + 1)], np.full((n_layers, n_heads, n + 1, n + 1), 0.1, np.float32))


def test_layers_subset_and_bad_input():
    w = random_weights(4, 2, 3)
    params = params_of(bo.head_view_html_from_arrays(list("abc"), w, layer=2, layers=[2, 3]))
    assert params["include_layers"] == [2, 3] and params["layer"] == 2
    assert len(params["attention"][0]["attn"]) == 2
    with pytest.raises(ValueError, match="not among the layers"):
        bo.head_view_html_from_arrays(list("abc"), w, layer=0, layers=[2, 3])
    with pytest.raises(ValueError, match="subset"):
        bo.model_view_html_from_arrays(list("abc"), w, layers=[7])
    params = params_of(bo.model_view_html_from_arrays(list("abc"), w, heads=[1]))
    assert params["include_heads"] == [1] and np.array(params["attention"][0]["attn"]).shape == (4, 1, 3, 3)
    with pytest.raises(ValueError, match="heads must be"):
        bo.model_view_html_from_arrays(list("abc"), w, heads=[2])
    with pytest.raises(ValueError, match="3 queries"):
        bo.head_view_html_from_arrays(list("ab"), w)
    with pytest.raises(ValueError, match=r"\[layer, head, query, key\]"):
        bo.head_view_html_from_arrays(list("abc"), w[0])


def test_result_objects_self_cross_and_encoder_decoder():
    enc, dec = ["▁the", "▁cat", "</s>"], ["<pad>", "▁die", "▁Katze", "</s>"]
    self_result = SimpleNamespace(tokens=enc, weights=random_weights(2, 2, 3), key_tokens=None, part="self")
    assert params_of(bo.head_view_html(self_result))["attention"][0]["left_text"] == enc   # kept as given

    cross = SimpleNamespace(tokens=dec, key_tokens=enc, weights=random_weights(2, 2, 4, 3), part="cross")
    (block,) = params_of(bo.model_view_html(cross))["attention"]
    assert (block["name"], block["left_text"], block["right_text"]) == ("Cross", dec, enc)

    decoder = SimpleNamespace(tokens=dec, key_tokens=None, weights=random_weights(2, 2, 4, causal=True))
    main = SimpleNamespace(tokens=enc, key_tokens=None, weights=self_result.weights, part="encoder")
    main.parts = {"encoder": main, "decoder": decoder, "cross": cross}
    html = bo.head_view_html(main)
    assert [b["name"] for b in params_of(html)["attention"]] == ["Encoder", "Decoder", "Cross"]
    assert '<select id="filter">' in html
    assert bo.model_view_html(main).count("<option value=") == 3


# ---------------------------------------------------------------------------------------------------- browser

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip("no Chromium at /usr/bin/chromium")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync"])
        yield b
        b.close()


def open_page(browser, html: str, path: Path):
    """Open ``html`` from a file; every request that is not file:/data:/about: is recorded and aborted."""
    path.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    seen = {"requests": [], "blocked": [], "errors": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))

    def gate(route):
        seen["blocked"].append(route.request.url)
        route.abort()

    page.route(re.compile(r"^(?!file:|data:|about:).*"), gate)
    page.goto(path.as_uri(), wait_until="load")
    return page, seen


def svg_bottom(page) -> float:
    """Where the drawing ends (CSS px from the top); ``view_height`` must leave room for it."""
    return page.evaluate("Math.max(...[...document.querySelectorAll('#vis svg')]"
                         ".map(s => s.getBoundingClientRect().bottom))")


def external(seen) -> list[str]:
    return seen["blocked"] + [u for u in seen["requests"] if not u.startswith(("file:", "data:", "about:"))]


@pytest.mark.parametrize("keep_csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_head_view_draws_offline_and_hostile_tokens_are_text(browser, tmp_path, keep_csp):
    result = SimpleNamespace(tokens=HOSTILE, key_tokens=None, weights=random_weights(3, 4, len(HOSTILE)))
    html = bo.head_view_html(result, layer=1)
    if not keep_csp:   # the escaping must hold on its own, without the policy as a second wall
        html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    page, seen = open_page(browser, html, tmp_path / "head.html")
    page.wait_for_selector("svg text", state="attached", timeout=30_000)
    texts = page.eval_on_selector_all("svg text", "els => els.map(e => e.textContent)")
    assert texts == HOSTILE + HOSTILE                              # left column, right column, literal
    assert page.eval_on_selector_all("svg line", "els => els.length") == 4 * len(HOSTILE) ** 2
    assert page.eval_on_selector_all("#layer option", "els => els.map(e => e.value)") == ["0", "1", "2"]
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert svg_bottom(page) <= bo.view_height(result, "head")
    assert external(seen) == [] and seen["errors"] == []
    if keep_csp:
        page.screenshot(path="/tmp/bertviz_head_view.png", full_page=True)
    page.close()


def test_model_view_draws_offline_and_detail_shows_literal_tokens(browser, tmp_path):
    n_layers, n_heads = 3, 4
    result = SimpleNamespace(tokens=HOSTILE, key_tokens=None, weights=random_weights(n_layers, n_heads, len(HOSTILE)))
    page, seen = open_page(browser, bo.model_view_html(result), tmp_path / "model.html")
    page.wait_for_selector("svg line", state="attached", timeout=30_000)
    assert page.eval_on_selector_all("svg line", "els => els.length") == n_layers * n_heads * len(HOSTILE) ** 2
    # Click the first thumbnail (its transparent click region) to open the detail panel with the tokens.
    page.evaluate("""() => {
        const region = [...document.querySelectorAll('svg g > rect')].find(r => r.style.opacity === '0');
        region.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    }""")
    tokens = page.eval_on_selector_all("svg text.token", "els => els.map(e => e.textContent)")
    assert tokens == HOSTILE + HOSTILE
    assert page.evaluate("window.__xss") is None
    assert svg_bottom(page) <= bo.view_height(result, "model")
    assert external(seen) == [] and seen["errors"] == []
    page.screenshot(path="/tmp/bertviz_model_view.png")
    page.close()


def test_harness_catches_what_bertviz_alone_does(browser, tmp_path):
    """Control: bertviz's own page asks the CDN for require.js, and its raw JSON lets the token run."""
    import torch
    from bertviz import head_view

    w = random_weights(1, 1, 3)
    raw = head_view(tuple(torch.from_numpy(w[i][None]) for i in range(1)), ["a", HOSTILE[3], "b"],
                    html_action="return").data
    page, seen = open_page(browser, raw, tmp_path / "raw.html")
    page.wait_for_function("window.__xss === 2", timeout=10_000)
    assert any("cdnjs.cloudflare.com" in u for u in external(seen))
    page.close()
