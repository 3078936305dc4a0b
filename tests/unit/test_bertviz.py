"""The offline bertviz page: no network, vendored code inlined, capped size, user text kept literal.

Pages built from small random attention, read as text (tests/browser/test_bertviz_browser.py opens them in
headless Chromium with every non-file request aborted and recorded).
"""
from __future__ import annotations

import hashlib
import json
import re
from types import SimpleNamespace

import numpy as np
import pytest
from bertviz_cases import HOSTILE, random_weights

from explorer.plots import bertviz as bo
from explorer.plots import offline_html

VENDOR_SHA256 = {
    "d3-5.7.0.min.js": "bdad5585ef9a965ff25458738309b006058c55f2c78d794d25fbecae35014609",
    "jquery-2.2.4.min.js": "05b85d96f41fff14d8f608dad03ab71e2c1017c2da0914d7c59291bad7a54f8e",
}


def params_of(html: str) -> dict:
    """The parameters the page hands bertviz's script, decoded the way the browser will read them."""
    anchor = "const params = "
    return json.JSONDecoder().raw_decode(html, html.index(anchor) + len(anchor))[0]


def scripts_of(html: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", html, flags=re.S)


# ------------------------------------------------------------------------------------------------------ units

def test_vendored_files_are_the_npm_builds_named_in_the_readme():
    readme = (offline_html.VENDOR_DIR / "README.md").read_text()
    for name, sha in VENDOR_SHA256.items():
        assert hashlib.sha256((offline_html.VENDOR_DIR / name).read_bytes()).hexdigest() == sha
        assert sha in readme
    assert (offline_html.VENDOR_DIR / "LICENSE-d3").exists() and (offline_html.VENDOR_DIR / "LICENSE-jquery").exists()


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
