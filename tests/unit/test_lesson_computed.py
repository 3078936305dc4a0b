"""Computed lesson questions and checks, the mechanism: a lesson file names them (unknown names, the wrong page and
a computed question with hand-written fields are one message each) and reads back the same; the logit-lens question
on a tiny random decoder has the answer its own lens gives; a step that cannot be computed (an encoder asked to
write) is one sentence; a check that disagrees names the step, the claim and the measured value; the room's view
and the handout carry a computed question or the sentence shown instead."""
import pytest
from tiny import TEXT

from explorer.generation import readout
from explorer.generation.sampling import settings_from_params
from explorer.generation.steps import generate
from explorer.labs.quiz import Question
from explorer.lessons import LessonError, Step, catalogue, dump, parse
from explorer.lessons import computed as computed_mod
from explorer.lessons.claims import NotComputable, layer_ranges, ordinal
from explorer.lessons.computed import Check, ask, asked, contradiction
from explorer.lessons.handout import handout_html
from explorer.lessons.run import place

WRITE = """
title = "Lens"
[[step]]
title = "The lens"
page = "pages/write.py"
minutes = 2
params = { lm = "SmolLM2-135M-Instruct", prompt = "The capital of France is", step = 0 }
question = { computed = "logit_lens_first_top" }
[[step]]
title = "Rows"
page = "pages/heatmaps.py"
minutes = 2
check = ["rows_sum_to_one", "causal_upper_zero"]
"""


def error_of(text: str) -> LessonError:
    with pytest.raises(LessonError) as caught:
        parse(text, "bad.toml")
    return caught.value


def test_a_file_names_computed_questions_and_checks_and_reads_back_the_same():
    lesson = parse(WRITE, "lens.toml")
    assert lesson.steps[0].computed == "logit_lens_first_top" and lesson.steps[0].question is None
    assert lesson.steps[1].checks == ("rows_sum_to_one", "causal_upper_zero")
    assert parse(dump(lesson), "lens.toml") == lesson
    assert lesson.question_id(0) != lesson.question_id(1)


@pytest.mark.parametrize("old, new, field, words", [
    ('computed = "logit_lens_first_top"', 'computed = "nope"', "question.computed", "logit_lens_first_top"),
    ('computed = "logit_lens_first_top" }', 'computed = "logit_lens_first_top", prompt = "x" }', "question",
     "give only its name"),
    ('check = ["rows_sum_to_one", "causal_upper_zero"]', 'check = "nope"', "check", "rows_sum_to_one"),
    ('check = ["rows_sum_to_one", "causal_upper_zero"]', 'check = "temperature_flattens"', "check",
     "not of pages/heatmaps.py"),
    ('check = ["rows_sum_to_one", "causal_upper_zero"]', "check = 3", "check", "a list of names"),
])
def test_each_wrong_name_is_one_message(old, new, field, words):
    err = error_of(WRITE.replace(old, new))
    assert err.field == field and words in str(err), str(err)


def test_a_computed_question_on_a_page_it_does_not_read_is_refused():
    err = error_of(WRITE.replace('page = "pages/write.py"', 'page = "pages/heatmaps.py"').replace(
        'lm = "SmolLM2-135M-Instruct", prompt = "The capital of France is", step = 0', "layer = 1"))
    assert err.step == 1 and err.field == "question.computed" and "pages/write.py" in str(err)


def test_layer_ranges_cover_every_layer_once_with_the_last_alone():
    assert layer_ranges(30) == [(0, 9), (10, 19), (20, 28), (29, 29)]
    assert layer_ranges(2) == [(0, 0), (1, 1)]
    for n in range(2, 41):
        covered = [x for low, high in layer_ranges(n) for x in range(low, high + 1)]
        assert covered == list(range(n)) and layer_ranges(n)[-1] == (n - 1, n - 1)
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 396, 2452)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "396th", "2,452nd"]


def lens_step(model: str, **params) -> Step:
    return Step("The lens", "pages/write.py", 2.0, params={"lm": model, **params}, computed="logit_lens_first_top")


def test_the_logit_lens_question_on_a_tiny_decoder_has_its_own_lens_answer(tiny_loaded, tiny_folder):
    loaded = tiny_loaded("llama")
    params = {"prompt": TEXT, "mode": "greedy", "new": "2", "step": "1"}
    question = ask(lens_step(str(tiny_folder("llama")), **params), loaded)
    gen = generate(loaded, TEXT, settings_from_params(params), check=False)
    ranks = readout.logit_lens(loaded, gen, 1).picked_rank
    first = next(x for x in range(len(ranks)) if (ranks[x:] == 0).all())
    assert question.options == ("after layer 0", "only after the last layer, 1")
    assert question.correct == question.options[first]
    assert f"from layer **{first}** on" in question.reveal and "the model writes" in question.prompt


def test_a_question_that_cannot_be_computed_is_one_sentence(tiny_loaded, tiny_folder):
    encoder = tiny_loaded("bert")
    step = lens_step(str(tiny_folder("bert")), prompt=TEXT)
    shown = asked(step, encoder)
    assert isinstance(shown, str) and "could not be" in shown and "encoder" in shown
    with pytest.raises(NotComputable):
        ask(lens_step("x"), encoder)   # no prompt
    assert "no 'prompt'" in asked(lens_step("x"), tiny_loaded("llama"))


def test_a_check_that_disagrees_names_the_step_the_claim_and_the_measure(monkeypatch):
    checks = {"agrees": Check(lambda loaded, params: (True, "fine"), "all is well", ("pages/heatmaps.py",)),
              "disagrees": Check(lambda loaded, params: (False, f"the measure is {params['layer']}"),
                                 "the measure is 0", ("pages/heatmaps.py",)),
              "breaks": Check(lambda loaded, params: (_ for _ in ()).throw(NotComputable("the text is too short")),
                              "something", ("pages/heatmaps.py",))}
    monkeypatch.setattr(computed_mod, "CHECKS", checks)
    step = Step("Rows", "pages/heatmaps.py", 2.0, params={"layer": "3"}, checks=("agrees",))
    assert contradiction(step, 4, None) is None
    said = contradiction(Step("Rows", "pages/heatmaps.py", 2.0, params={"layer": "3"},
                              checks=("agrees", "disagrees", "breaks")), 4, None)
    assert said == ("Step 4 (“Rows”) says the measure is 0, but on all-MiniLM-L6-v2 the measure is 3. "
                    "Step 4 (“Rows”) says something, but on all-MiniLM-L6-v2 it could not be measured (the text is "
                    "too short).")


def test_a_contradiction_reads_in_the_sessions_language(monkeypatch, tiny_loaded):
    """The claim (a catalogue message) and the measured value's sentence are in the language the step is checked
    in: a German teacher reads no English in the warning."""
    from explorer.lessons.claims import rows_sum_to_one
    from explorer.words.i18n import language

    with language("de"):
        holds, measured = rows_sum_to_one(tiny_loaded("bert"), {"text": "the cat sat on the mat"})
    assert holds and measured.startswith("die Zeilen seiner ") and "weichen um höchstens" in measured
    claim = computed_mod.CHECKS["rows_sum_to_one"].claim
    wrong = Check(lambda loaded, params: (False, "ρ = 0.9"), claim, ("pages/heatmaps.py",))
    monkeypatch.setattr(computed_mod, "CHECKS", {"rows_sum_to_one": wrong})
    with language("de"):
        said = contradiction(Step("Zeilen", "pages/heatmaps.py", 2.0, checks=("rows_sum_to_one",)), 2, None)
    assert said == ("Schritt 2 („Zeilen“) sagt: jede Zeile der Aufmerksamkeitsgewichte ergibt genau 1; aber bei "
                    "all-MiniLM-L6-v2: ρ = 0.9.")


def test_the_rooms_view_and_the_handout_carry_the_computed_question_or_its_sentence():
    lesson = parse(WRITE, "lens.toml")
    question = Question("From which layer on?", ("early", "late"), "late", "measured: **29**")
    where = place(lesson, 0, 1.0, 2.0, question)
    assert where["qid"] == lesson.question_id(0)
    assert where["question"] == {"prompt": "From which layer on?", "options": ["early", "late"], "answer": "late",
                                 "explain": "measured: **29**"}
    note = place(lesson, 0, 1.0, 2.0, "This step's question could not be computed.")
    assert note["question"] is None and note["note"] == "This step's question could not be computed."
    assert "note" not in place(lesson, 1, 1.0, 2.0, "ignored: step 2 computes nothing")
    page = handout_html(lesson, asked={0: question})
    assert "From which layer on?" in page and "<li>late</li>" in page
    marked = Question("Is “␣a\\*b\\.” on top?", ("yes", "no"), "yes", "")   # markdown, as computed
    assert "Is “␣a*b.” on top?" in handout_html(lesson, asked={0: marked})
    assert "could not be computed" in handout_html(lesson, asked={0: "It could not be computed."})
    assert "measured on SmolLM2-135M-Instruct when the step opens" in handout_html(lesson)


def test_shipped_lessons_name_only_known_functions_for_their_pages():
    for lesson in catalogue({})[0]:
        for step in lesson.steps:
            names = [*step.checks, *([step.computed] if step.computed else [])]
            for name in names:
                entry = computed_mod.COMPUTED.get(name) or computed_mod.CHECKS[name]
                assert step.page in entry.pages, (lesson.title, step.title, name)
