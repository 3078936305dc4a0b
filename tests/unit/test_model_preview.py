"""What a model would give before it is downloaded: family, size and what works, from its config alone."""
from __future__ import annotations

import io
import json
import urllib.request

import pytest

from explorer.model import families, preview
from explorer.serving import policy


def test_a_known_family_says_what_works_and_each_refusal_in_its_sentence():
    text = preview.describe("EleutherAI/pythia-70m", {"model_type": "gpt_neox", "hidden_size": 512}, 166)
    assert text.startswith("EleutherAI/pythia-70m (166 MB). GPT-NeoX (decoder): attention weights,")
    assert "direct effects" in text and "cannot" not in text
    olmo2 = preview.describe("allenai/OLMo-2", {"model_type": "olmo2"}, 20_000)
    assert "(20 GB)" in olmo2 and families.FAMILIES["olmo2"].refused["direct_effects"] in olmo2
    assert "direct effects" not in olmo2.split(":")[1].split(" work here.")[0]


def test_the_config_can_refuse_more_than_the_family():
    post = preview.describe("facebook/opt-350m", {"model_type": "opt", "do_layer_norm_before": False,
                                                  "hidden_size": 1024, "word_embed_proj_dim": 512}, 663)
    assert "normalises after each residual sum" in post and "logit lens" not in post.split(" work here.")[0]
    pre = preview.describe("facebook/opt-125m", {"model_type": "opt", "hidden_size": 768,
                                                 "word_embed_proj_dim": 768}, 251)
    assert "normalises" not in pre and "logit lens" in pre


def test_an_unknown_family_is_named_with_the_known_ones():
    text = preview.describe("state-spaces/mamba-130m", {"model_type": "mamba"}, 517)
    assert "'mamba'" in text and all(name in text for name in ("gpt_neox", "bert", "t5"))
    assert preview.describe("x/y", None, None) == ("x/y (size unknown): its config could not be read, so what works "
                                                   "on it is not known before loading.")


def test_an_encoder_does_not_list_the_decoder_only_capabilities_as_refused():
    text = preview.describe("bert-base-uncased", {"model_type": "bert"}, 440)
    assert text.endswith("six explanations work here.") and "generation" not in text


def test_fetch_config_reads_only_config_json(monkeypatch):
    asked = []

    def answer(url, timeout):
        asked.append(url)
        return io.BytesIO(json.dumps({"model_type": "gpt2", "n_layer": 12}).encode())
    monkeypatch.setattr(urllib.request, "urlopen", answer)
    env = {"HF_ENDPOINT": "https://hub.example/"}
    assert preview.fetch_config("gpt2", env=env) == {"model_type": "gpt2", "n_layer": 12}
    assert asked == ["https://hub.example/gpt2/resolve/main/config.json"]
    with pytest.raises(policy.MetadataUnavailable, match="offline"):
        preview.fetch_config("gpt2", env={"HF_HUB_OFFLINE": "1"})
    with pytest.raises(policy.MetadataUnavailable, match="not a hub id"):
        preview.fetch_config("../etc/passwd", env=env)
    assert len(asked) == 1


def test_a_local_folder_is_read_from_its_config(tiny_folder, tmp_path):
    data = preview.local_config(str(tiny_folder("llama")))
    assert data["model_type"] == "llama"
    assert preview.what_works(preview.config_of(data)).startswith("Llama (decoder): attention weights")
    assert preview.local_config(str(tmp_path)) is None


def test_the_curated_models_are_known_families_where_attention_works():
    """Each curated family is known, and its tiny config (tests/family_configs.py) passes the family matrix for
    attention weights and scores at least; each entry says where its facts were checked."""
    from family_configs import config
    assert {c.family for c in preview.CURATED} <= set(families.FAMILIES)
    for model in preview.CURATED:
        found = families.matrix(config(model.family))
        assert found["attention"] is None and found["scores"] is None, model
        assert model.checked and model.parameters.split()[1] in {"M", "B"}, model
    assert "EleutherAI/pythia-70m (GPT-NeoX, 70 M parameters, Apache-2.0)" in preview.curated_text()
    assert all(c.hub_id != "google/gemma-3-270m" for c in preview.CURATED)   # gated: no download without a token


def test_sizes_are_said_as_people_say_them():
    assert preview.size_words(499) == "499 MB" and preview.size_words(2_047) == "2,047 MB"
    assert preview.size_words(809_948) == "810 GB"
