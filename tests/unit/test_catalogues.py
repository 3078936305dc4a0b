"""The catalogues and the translator: every language holds exactly the code's messages, translated, with the same
placeholders; the language is per thread of work (a session), never per process."""
from __future__ import annotations

import contextvars
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


def test_a_held_language_is_read_without_asking_the_resolver(monkeypatch):
    asked = []
    monkeypatch.setattr(i18n, "_resolver", lambda: asked.append(1) or "es")

    def run():   # as a page's run: its start holds the session's language, then makes its texts
        i18n.hold("de")
        texts = [_("Attention explorer") for _n in range(3)]
        with i18n.language("es"):
            assert i18n.current() == "es"   # an explicit language still wins…
        assert i18n.current() == "de"       # …and the held one comes back after it
        i18n.hold(None)
        return texts, i18n.current()

    texts, after = contextvars.copy_context().run(run)
    assert texts == [i18n.translations("de").gettext("Attention explorer")] * 3 != ["Attention explorer"] * 3
    assert after == "es" and asked == [1]   # the resolver asked once: only after hold(None)
    assert i18n.current() == "es" and asked == [1, 1]   # nothing held outside that context: the resolver asked


# ----------------------------------------------------------------------------- nothing hidden from the catalogues

BAD_FILE = '''from explorer.words.i18n import _, ngettext, pgettext
head = f"{_('Largest')}: 0.51"
joined = _("Layer " + str(2))
made = _(f"Layer {n}")
chosen = ngettext("one" if x else "two", "many", n)
formatted = pgettext("a score", "score %s" % y)
picked = _(PAGES[row["page"]])
fine = _("Layer {n}").format(n=2) + _(TABLE[k]) + _(LOOKS.get(k, k)) + _(name) + ngettext("{n} step", "{n} steps", n)
'''


def test_no_message_is_hidden_from_the_extractor():
    """No ``_()`` inside an f-string and no message made at run time in app.py, pages/ or explorer/: on Python 3.11
    the extractor does not see them, so the sentence stays English in every language."""
    assert catalogues.hidden() == []


def test_the_guard_fails_on_a_file_that_hides_messages(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "explorer").mkdir()
    (tmp_path / "explorer" / "bad.py").write_text(BAD_FILE)
    found = catalogues.hidden(tmp_path)
    assert {line for _file, line, _why in found} == {2, 3, 4, 5, 6, 7}, found
    assert {file for file, _line, _why in found} == {"explorer/bad.py"}
    assert "inside an f-string" in dict((line, why) for _f, line, why in found)[2]


def test_no_translated_message_formats_a_number_itself(code):
    """Numbers go into messages already written the reader's way (explorer/words/numbers.py): a ``{w:.3f}`` in a
    message would write "0.401" in German too."""
    assert catalogues.formats_numbers(code) == []
    bad = {"w": "weight {w:.3f}", "n": "{n:,} entries", "s": ("{s:.0%} of one", "{s:.0%} of many"),
           "ok": "Layer {layer} of {{literal}}", "odd": "a { lone brace"}
    assert sorted(catalogues.formats_numbers(bad)) == ["n", "s", "w"]


def test_the_check_fails_on_a_hidden_message(monkeypatch, capsys):
    found = [("pages/x.py", 3, "_() inside an f-string")]
    monkeypatch.setattr(catalogues, "hidden", lambda root=catalogues.ROOT: found)
    assert catalogues.main(["check"]) == 1
    assert "pages/x.py:3" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------------- plurals

@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_every_plural_message_renders_with_0_1_2_and_5(lang, code):
    """Each ngettext message in German and Spanish: the singular form for 1, the plural for 0, 2 and 5 (CLDR: both
    languages say "0 Schritte", "0 pasos"), each formatting with its fields."""
    plurals = {key: msgid for key, msgid in code.items() if isinstance(msgid, tuple)}
    assert len(plurals) >= 40
    held = {catalogues._key(m.id, m.context): m for m in catalogues.read(lang) if m.id}
    for key, (singular, plural) in plurals.items():
        forms = held[key].string
        assert len(forms) == 2 and all(forms), (lang, key)
        for n in (0, 1, 2, 5):
            with i18n.language(lang):
                text = i18n.ngettext(singular, plural, n)
            assert text == forms[0 if n == 1 else 1], (lang, key, n)
            rendered = text.format(**{name: n for name in catalogues.fields(singular) or ()})
            if "n" in (catalogues.fields(singular) or ()):
                assert str(n) in rendered, (lang, key, n, rendered)


@pytest.mark.parametrize("lang, n, said", [
    ("de", 1, "**1 von 25 hat geantwortet**"), ("de", 2, "**2 von 25 haben geantwortet**"),
    ("es", 1, "**1 de 25 ha respondido**"), ("es", 5, "**5 de 25 han respondido**"),
    ("en", 1, "**1 of 25 answered**")])
def test_the_answer_count_agrees_with_its_verb(lang, n, said):
    with i18n.language(lang):
        text = i18n.ngettext("**{answered} of {students} answered**", "**{answered} of {students} answered**", n)
    assert text.format(answered=n, students=25) == said


@pytest.mark.parametrize("lang, wrote, said", [
    ("de", 1, "**1 von 25** Schüler:innen hat einen geschrieben"),
    ("de", 2, "**2 von 25** Schüler:innen haben einen geschrieben"),
    ("es", 1, "**1 de 25** estudiantes ha escrito una"), ("es", 5, "**5 de 25** estudiantes han escrito una"),
    ("en", 1, "**1 of 25** students wrote one")])
def test_the_sentence_count_agrees_with_who_wrote_not_with_the_class(lang, wrote, said):
    """The sentences panel's count: "1 de 25 estudiantes escribieron una" chose its form by the class of 25."""
    from explorer.classroom.sentences import wrote_count
    with i18n.language(lang):
        assert wrote_count(wrote, 25) == said


@pytest.mark.parametrize("lang, one, five", [
    ("de", "greedy (stets das wahrscheinlichste), bis zu 1 neues Token",
     "greedy (stets das wahrscheinlichste), bis zu 5 neue Tokens"),
    ("es", "voraz (siempre el más probable), hasta 1 token nuevo",
     "voraz (siempre el más probable), hasta 5 tokens nuevos"),
    ("en", "greedy, up to 1 new token", "greedy, up to 5 new tokens")])
def test_a_count_in_the_generation_settings_is_plural_safe(lang, one, five):
    from explorer.generation.sampling import Settings
    with i18n.language(lang):
        assert Settings(greedy=True, new_tokens=1).describe() == one
        assert Settings(greedy=True, new_tokens=5).describe() == five
