"""Votes by option, whatever language they were cast in (explorer.classroom.polls.vote_of and friends), and the
report in the reader's language: a vote cast on the German question and one cast on the Spanish one count as one
option; old stores (votes kept as text) still read; typed words stay as typed."""
import csv
import io

import pytest

from explorer.classroom import open_store
from explorer.classroom.polls import answer_text, counts_by_text, option_index, vote_of
from explorer.classroom.report import collect, csv_text, summary_html
from explorer.words import i18n

EN = ("exactly 1", "the number of words", "it depends on the head")
DE = ("genau 1", "die Anzahl der Wörter", "das hängt vom Head ab")
ES = ("exactamente 1", "el número de palabras", "depende de la cabeza")


def test_an_option_is_kept_by_its_place_the_same_in_every_language():
    assert vote_of(EN, "exactly 1") == vote_of(DE, "genau 1") == vote_of(ES, "exactamente 1") == "#0"
    assert vote_of(DE, "das hängt vom Head ab") == "#2"
    assert answer_text("#2", ES) == "depende de la cabeza" and answer_text("#2", EN) == "it depends on the head"
    assert option_index("#1", DE) == 1 and option_index("#7", DE) is None


def test_typed_words_stay_as_typed_and_never_pass_for_an_option():
    assert vote_of(EN, "Paris") == "Paris" and answer_text("Paris", EN) == "Paris"
    assert vote_of(EN, "#1") == "＃1" and option_index("＃1", EN) is None   # typed, not option 2


def test_a_vote_stored_as_text_before_ids_still_reads_as_its_option():
    assert option_index("the number of words", EN) == 1
    assert counts_by_text({"#1": 2, "the number of words": 1, "Paris": 1}, EN) == {"the number of words": 3,
                                                                                   "Paris": 1}


def test_a_question_never_stored_names_the_option_by_number():
    with i18n.language("de"):
        assert answer_text("#1", ()) == "Option 2"


@pytest.fixture
def store(classroom_env):
    return open_store(classroom_env)


def test_three_votes_in_three_languages_count_once_under_one_option_in_the_teachers_language(store):
    code, key = store.create_room()
    for sid in ("de-1", "en-1", "es-1"):
        store.join(code, sid, sid)
    with i18n.language("es"):   # the teacher's page (Spanish) stores the question as it shows it
        store.ask(code, key, "q", "¿Cuánto suma una fila?", ES, ES[0])
    store.answer(code, "q", "de-1", vote_of(DE, "genau 1"))
    store.answer(code, "q", "en-1", vote_of(EN, "exactly 1"))
    store.answer(code, "q", "es-1", vote_of(ES, "exactamente 1"))
    assert store.counts(code, "q") == {"#0": 3}
    store.reveal(code, key, "q")
    with i18n.language("es"):
        reports = collect(store, code, key)
        assert reports[0].answers(1) == [("exactamente 1", 3), ("el número de palabras", 0),
                                         ("depende de la cabeza", 0)]
        rows = list(csv.reader(io.StringIO(csv_text(reports))))
        page = summary_html(reports, room="K7M-2QX", when="hoy")
    assert rows[0] == ["pregunta", "ronda", "opción", "recuento", "correcta"]
    assert rows[1] == ["¿Cuánto suma una fila?", "1", "exactamente 1", "3", "sí"]
    assert "3 de 3 correctas (100\xa0%)" in page and "<html lang='es'>" in page and "Clase K7M-2QX: informe" in page


def test_a_homework_takes_votes_by_option_place_and_refuses_a_place_it_does_not_have(store):
    from explorer.classroom import BadInput

    code, key = store.set_homework("app:1", "Rows", [("q", "¿Cuánto suma una fila?", ES, ES[0])], steps=1)
    for sid, options, said in (("de-1", DE, "genau 1"), ("en-1", EN, "exactly 1")):
        store.join(code, sid, sid)
        store.homework_answer(code, "q", sid, vote_of(options, said))
    store.join(code, "x-1", "x")
    with pytest.raises(BadInput):
        store.homework_answer(code, "q", "x-1", "#3")   # three options: no fourth place
    assert store.counts(code, "q") == {"#0": 2}
    assert answer_text(store.my_answer(code, "q", "de-1"), DE) == "genau 1"
