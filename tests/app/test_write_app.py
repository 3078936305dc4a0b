"""AppTest of the "Watch it write" page on the embedded SmolLM2 (and a tiny local Llama for end-of-sequence at
the first step): the generation, the step controls, the readouts, and bad input."""
import re
from functools import partial

import numpy as np
import pagetest
import pytest
from pagetest import array, figures, open_page
from streamlit.testing.v1 import AppTest
from test_robustness_app import TEXT_ROWS, literal_everywhere, shows, usable

from explorer.generation.sampling import Settings
from explorer.generation.steps import generate
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.ui import cached
from explorer.ui.text import literal
from explorer.ui.views import generation_run

run = partial(open_page, "pages/write.py")


def texts(at: AppTest) -> str:
    return pagetest.texts(at, raw=True)


def pills(at: AppTest) -> list[str]:
    """The written tokens as shown (markdown escapes removed)."""
    return [o.replace("\\", "").rstrip("\u200b") for o in at.pills(key="_step_pick").options] if at.pills else []


def test_writes_paris_and_the_checks_hold():
    at = run()
    assert pills(at)[0] == "Paris" and len(pills(at)) == 20
    shown = texts(at)
    assert "Picked: **“␣Paris”**" in shown
    fidelity = float(re.search(r"largest difference \*\*([0-9.e+-]+)\*\*", shown).group(1))
    assert fidelity <= 1e-5
    total, logit, gap = re.search(r"= \*\*(-?[0-9.]+)\*\*; the model's logit is \*\*(-?[0-9.]+)\*\* "
                                  r"\(difference ([0-9.e+-]+)\)", shown).groups()
    assert abs(float(total) - float(logit)) <= 1e-3 and float(gap) <= 1e-3
    assert {m.label for m in at.metric} >= {"Cache at step 0", "A cached step (median, this run)"}
    assert at.dataframe[0].value["top token"].iloc[-1] == "“␣Paris”"        # the lens' last layer is the output


def test_step_slider_click_and_temperature_rerun_no_model():
    at = run()
    runs = cached.result_cache().misses
    at.slider(key="step").set_value(3).run()
    gen = generation_run.finished(("generate", EMBEDDED_DECODER, "The capital of France is", Settings()))
    bars = {t.split(":")[0]: f for t, f in figures(at).items()}["Step 3"]["data"][0]
    assert not at.exception and np.allclose(array(bars["y"]), gen.row(3, 0, 0))   # the stored row, shown
    assert at.pills(key="_step_pick").value == 3                          # the clicked-token row follows
    at.pills(key="_step_pick").set_value(5).run()                          # a click on a written token
    assert not at.exception and at.slider(key="step").value == 5
    n = gen.n_prompt
    assert gen.tokens[n + 2] == gen.tokens[n + 3] == "⏎"                  # a repeated token: its own step
    at.pills(key="_step_pick").set_value(3).run()
    assert not at.exception and at.slider(key="step").value == 3
    misses = cached.result_cache().misses
    assert misses <= runs + 3                                              # the new steps' readouts only
    at.slider(key="vtemp").set_value(0.3).run()                            # reshapes stored logits
    assert not at.exception and cached.result_cache().misses == misses
    assert "at T = 0.3" in texts(at)


def test_sampled_link_is_reproducible():
    link = dict(mode="sample", temp="1.3", topk="50", topp="0.95", seed="11", new="8")
    first, again = run(**link), run(**link)
    assert pills(first) == pills(again) and len(pills(first)) >= 1
    assert "The draw u = **" in texts(first)
    want = generate(cached.WORKER.get(EMBEDDED_DECODER), "The capital of France is",
                    Settings(8, False, 1.3, 50, 0.95, 11), check=False)
    assert pills(first) == want.tokens[want.n_prompt:]


def test_bad_input_messages():
    at = run(prompt="   ")
    assert "Type a prompt for the model to continue." in texts(at)
    at = run(lm=EMBEDDED_ENCODER)
    assert "Generation needs a causal decoder" in texts(at) and not at.pills
    at = run(new="500", temp="-2", topk="many", topp="7", mode="sample", step="99", layer="-4", head="x", vtemp="9")
    notes = texts(at)
    for part in ("new tokens 500 is out of range", "temperature -2 is out of range", "'many' is not a number",
                 "top p 7 is out of range", "Step 99 is out of range", "Layer -4 is out of range"):
        assert part in notes.replace("\\", ""), part
    assert at.number_input(key="new").value == 64 and at.slider(key="step").value == len(pills(at)) - 1


def test_hostile_prompt_is_text():
    hostile = "<img src=x onerror=alert(1)> **bold** $x^2$ :red[red]"
    at = run(prompt=hostile, new="2")
    assert not at.exception
    shown = [m.value for m in at.markdown if "click a written token" in m.value][0]
    assert shown.startswith(literal(hostile) + " → ") and "\\<img src\\=x" in shown   # every markup char escaped


def test_end_of_sequence_at_the_first_step(tmp_path):
    from tiny import TEXT, build
    folder = str(build("llama", tmp_path / "llama"))
    loaded = cached.WORKER.get(folder)
    first = generate(loaded, TEXT, Settings(new_tokens=1), check=False).picked(0)
    loaded.model.config.eos_token_id = first
    at = run(lm=folder, prompt=TEXT)
    assert "it wrote its end-of-sequence token" in texts(at) and len(pills(at)) == 1
    assert "Step: 0 (the only one)" in texts(at)


def test_predict_first_asks_before_showing():
    at = run(predict="1")
    assert "Which token does it write next?" in texts(at) and not at.get("plotly_chart")
    assert pills(at) == ["?"]                                             # step 0's token is hidden
    radio = at.radio(key="write_next_answer")
    assert "“␣Paris”" in radio.options
    radio.set_value("“␣Paris”").run()
    at.button(key="write_next_commit").click().run()
    assert not at.exception and "Right: “␣Paris”." in [s.value for s in at.success]
    assert at.get("plotly_chart")                                          # the step's details now
    at.slider(key="step").set_value(2).run()                               # a new step: a new question
    assert pills(at) == ["Paris", ".", "?"] and not at.get("plotly_chart")


def test_predict_first_takes_a_typed_word():
    at = run(predict="1")
    at.radio(key="write_next_answer").set_value("Another word…").run()
    at.button(key="write_next_commit").click().run()                      # nothing typed yet: asked to type
    assert "Type a word first" in " ".join(w.value for w in at.warning) and not at.get("plotly_chart")
    at.text_input(key="write_next_typed").input("  paris ").run()
    at.button(key="write_next_commit").click().run()                      # the option it names
    assert not at.exception and "Right: “␣Paris”." in [s.value for s in at.success]
    at.button(key="write_next_retry").click().run()
    at.radio(key="write_next_answer").set_value("Another word…").run()
    at.text_input(key="write_next_typed").input("<b>Lyon</b> *x*").run()
    at.button(key="write_next_commit").click().run()
    wrong = at.error[0].value
    assert wrong.startswith(f"Not quite: you said “{literal('<b>Lyon</b> *x*')}”;") and "“␣Paris”" in wrong


# ---------------------------------------------------------------------------------------------- every bad-text row

@pytest.fixture(scope="module")
def tiny_decoder(tiny_folder):
    name = str(tiny_folder("llama"))
    cached.WORKER.get(name)   # loaded already: a link to it opens without asking first
    return name


@pytest.mark.parametrize("row", TEXT_ROWS, ids=[r.id for r in TEXT_ROWS])
def test_typed_prompt(row, tiny_decoder):
    """Each bad-text row of docs/robustness.md as the prompt, on a tiny random Llama; then a good prompt again."""
    at = run(lm=tiny_decoder, new="3")
    at.text_area(key="prompt").set_value(row.text).run()
    assert not at.exception, [e.value[:500] for e in at.exception]
    if row.sees:
        shows(at, row.sees)
    else:
        assert at.get("plotly_chart")
    if row.id == "10k-chars":
        assert "The prompt was cut to its first tokens." in texts(at)
    literal_everywhere(at, row.fragments)
    at.text_area(key="prompt").set_value("the cat sat on the mat").run()
    usable(at)


def test_a_generation_the_region_dropped_is_written_again_on_the_next_ask():
    at = run()
    key = ("generate", EMBEDDED_DECODER, "The capital of France is", Settings())
    first = generation_run.finished(key)
    assert first is not None and key not in generation_run.GENERATIONS.running()   # the job table kept nothing
    cached.result_cache().clear()               # as when other texts fill the byte budget
    assert generation_run.finished(key) is None
    at.run()                                    # asked again: written again, and stored again
    again = generation_run.finished(key)
    assert not at.exception and again is not None and again is not first and again.ids == first.ids


def test_a_replaced_generation_stops_unstored(tiny_decoder, monkeypatch):
    """The page's runner: a generation whose session asked for another one meanwhile stops at its next step and
    leaves nothing in the result cache; asked again, it runs whole and is stored read-only."""
    from explorer.ui.views import generation_run as gx
    folder, prompt = tiny_decoder, "the animal didn't cross the street"
    monkeypatch.setenv("EXPLORER_FORWARD_QUEUE", "0")
    settings = Settings(new_tokens=8)
    key, newer = ("generate", folder, prompt, settings), ("generate", folder, "the cat", settings)
    calls = []

    def progress(fraction, text):
        calls.append(text)
        if len(calls) == 2:                        # the student typed another prompt meanwhile
            gx._latest.put("s1", newer)

    gx._latest.put("s1", key)
    with pytest.raises(gx.Abandoned):
        gx.GENERATIONS.run(key, lambda p: gx._work(folder, key, prompt, settings, "s1", progress)).wait(60)
    assert len(calls) == 2 and gx.finished(key) is None   # nothing half-written kept
    gx._latest.put("s1", key)
    gen = gx.GENERATIONS.run(key, lambda p: gx._work(folder, key, prompt, settings, "s1", p)).wait(60)
    assert gx.finished(key) is gen and not gen.weights.flags.writeable
