"""Texts made once for every session (a shared job's notes, errors and progress; a cached result's error) are
``i18n.Later``: each session reads them in its own language, at the moment it shows them."""
import numpy as np
import pytest

from explorer.attribution import flow
from explorer.generation.sampling import Settings, clamp_settings
from explorer.words import i18n
from explorer.words.i18n import Later


def test_a_later_text_takes_the_language_of_the_moment_it_is_read():
    text = Later("Reading the corpus: sentence {done} of {n}…", done=3, n=200)
    with i18n.language("de"):
        made = text                                    # made in a German thread of work…
    assert str(made) == "Reading the corpus: sentence 3 of 200…"      # …read in English
    with i18n.language("es"):
        assert str(made) == "Leyendo el corpus: frase 3 de 200…"
    with i18n.language("de"):
        assert "Satz 3 von 200" in str(made)
    assert "sentence 3" in made and text == Later("Reading the corpus: sentence {done} of {n}…", done=3, n=200)


def test_an_error_raised_in_a_shared_job_reads_in_each_sessions_language():
    weights = np.full((2, 1, 400, 400), 1 / 400)      # longer than attention flow takes
    with i18n.language("de"), pytest.raises(ValueError) as raised:
        flow.attention_flow(weights, [399])
    assert str(raised.value).startswith("Attention flow is computed for inputs of up to")
    with i18n.language("de"):
        assert str(raised.value).startswith("Der Aufmerksamkeitsfluss wird für Eingaben von bis zu")
    with i18n.language("es"):
        assert "this input has" not in str(raised.value) and "400" in str(raised.value)


def test_settings_and_link_notes_in_the_sessions_language():
    with i18n.language("es"):
        assert Settings(5).describe() == "voraz (siempre el más probable), hasta 5 tokens nuevos"
        _settings, notes = clamp_settings(dict(new_tokens="0", top_k="x"))
        assert any(n.startswith("tokens nuevos 0 está fuera de rango") for n in notes)
    with i18n.language("de"):
        assert Settings(5, greedy=False, temperature=0.7, seed=3).describe() == (
            "Sampling (Temperatur 0,7, Startwert 3), bis zu 5 neue Tokens")


def test_a_jobs_first_message_reads_in_the_language_of_the_page_showing_it():
    from explorer.jobs.worker import Jobs
    from explorer.words import i18n

    job = Jobs(2).run("a key", lambda progress: None, "the model")   # reports no progress: its first message stays
    assert job.done.wait(10)
    with i18n.language("de"):
        assert str(job.message) == "the model wird vorbereitet…"
    with i18n.language("es"):
        assert str(job.message) == "Preparando the model…"
    assert str(job.message) == "Preparing the model…"
