"""The catalogues and the translator: every language holds exactly the code's messages, translated, with the same
placeholders; the language is per thread of work (a session), never per process."""
from __future__ import annotations

import threading

import pytest

from explorer.words import catalogues, i18n
from explorer.words.i18n import _

OTHER_LANGUAGES = [lang for lang in i18n.LANGUAGES if lang != i18n.SOURCE]


@pytest.fixture(scope="module")
def code():
    return catalogues.extracted()


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_a_catalogue_holds_exactly_the_codes_messages_translated(lang, code):
    report = catalogues.check(lang, code)
    assert not report.missing, f"{lang}.po lacks (run: python -m explorer.words.catalogues update) {report.missing[:9]}"
    assert not report.stale, f"{lang}.po keeps messages the code dropped: {report.stale[:10]}"
    assert not report.untranslated, f"{lang}.po has no translation for: {report.untranslated[:10]}"


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_placeholders_survive_translation(lang):
    for message in catalogues.read(lang):
        if not message.id or not message.string:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        wanted = catalogues.fields(ids[0])
        for text in strings:
            assert catalogues.fields(text) == wanted, (lang, message.id, text)
            if wanted:
                text.format(**{name: 7 for name in wanted})   # formats with sample values, no KeyError


def test_the_check_finds_a_missing_a_stale_and_an_untranslated_message(tmp_path, monkeypatch):
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    code = {"One": "One", "Two": "Two"}
    catalogues.update("de", code)
    report = catalogues.check("de", code)
    assert set(report.untranslated) == {"One", "Two"} and not report.missing and not report.stale
    text = (tmp_path / "de.po").read_text().replace('msgid "One"\nmsgstr ""', 'msgid "One"\nmsgstr "Eins"')
    (tmp_path / "de.po").write_text(text)
    report = catalogues.check("de", {"One": "One", "Three": "Three"})
    assert report.missing == ("Three",) and report.stale == ("Two",) and report.untranslated == ()
    catalogues.update("de", {"One": "One", "Three": "Three"})   # keeps "Eins", adds "Three", drops "Two"
    assert {m.id: m.string for m in catalogues.read("de") if m.id} == {"One": "Eins", "Three": ""}


def test_fields_reads_format_placeholders():
    assert catalogues.fields("Layer {layer}, head {head}") == ("head", "layer")
    assert catalogues.fields("no fields") == ()
    assert catalogues.fields("a { lone brace") is None


@pytest.mark.parametrize("asked, got", [("de", "de"), ("de-AT", "de"), ("es_MX", "es"), ("EN-gb", "en"),
                                        ("fr", None), ("", None), (None, None), (3, None)])
def test_known_languages(asked, got):
    assert i18n.spoken(asked) == got


def test_the_language_belongs_to_one_thread_of_work_not_the_process():
    seen = {}

    def speak(lang):
        with i18n.language(lang):
            barrier.wait()   # both threads hold their language at the same moment
            seen[lang] = _("Attention explorer")

    barrier = threading.Barrier(2)
    threads = [threading.Thread(target=speak, args=(lang,)) for lang in ("de", "en")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["en"] == "Attention explorer"
    assert seen["de"] == i18n.translations("de").gettext("Attention explorer") != "Attention explorer"
    assert i18n.current() == i18n.SOURCE   # nothing stayed set here


def test_the_ui_resolver_is_asked_when_no_language_is_set(monkeypatch):
    monkeypatch.setattr(i18n, "_resolver", lambda: "es-ES")
    assert i18n.current() == "es"
    with i18n.language("de"):
        assert i18n.current() == "de"   # an explicit language wins
    monkeypatch.setattr(i18n, "_resolver", lambda: "klingon")
    assert i18n.current() == "en"
