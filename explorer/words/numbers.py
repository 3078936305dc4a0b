"""Numbers written the reader's way: "0.401" in English, "0,401" in German and Spanish, from the session's language.

Every number the app puts into a sentence, a table, a hover or a tick goes through here, never through a format
spec inside a translated message (``_("weight {w:.3f}")`` would write "0.401" in every language;
tests/unit/test_catalogues.py fails on such a message). The caller chooses the precision and passes the text::

    _("Token 1's weight on token 2 is {w}").format(w=number(w, 3))        # "0.401" / "0,401"
    _("{share} of heads").format(share=percent(f))                         # "40%" / "40 %"
    _("{n} bytes").format(n=integer(n))                                      # "10,000" / "10.000"

The digits are Python's own (``f"{x:.3f}"``: the same rounding as before, so the worked example's numbers stay
exactly the seed's and English text is unchanged); Babel's ``format_decimal`` / ``format_percent`` then write them
with the locale's decimal mark, grouping and percent pattern (CLDR). Where the decimal mark is a comma, the
elements of a list are separated by "; " (``vector``: "[0,401; 0,198; 0,401]"), so a vector never reads as twice as
many numbers. Plotly writes its own ticks, colour bars and ``%{z:.3f}`` hovers with ``layout.separators``
(``plotly_separators``: ".," or ",."), which explorer/plots/base.py sets on every figure.

A language the app does not know (a browser's "pt-BR") is English here as in ``i18n.current``: English words with
English numbers, never a mix. CSV downloads are for machines and keep the decimal point (``DataFrame.to_csv``).
A table shown on a page (``st.dataframe``, ``st.table``) is ``table(frame)``: its numeric columns written here too.
"""
from __future__ import annotations

import math
import re
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Callable, Iterable, Mapping

from babel.dates import format_time
from babel.numbers import format_decimal, format_percent, get_decimal_symbol, get_group_symbol, get_minus_sign_symbol

from explorer.words import i18n


def locale(lang: str | None = None) -> str:
    """The locale numbers are written in: ``lang`` if the app speaks it, else the session's language."""
    return i18n.current() if lang is None else (i18n.spoken(lang) or i18n.SOURCE)


def _pattern(places: int, group: bool) -> str:
    return ("#,##0" if group else "0") + ("." + "0" * places if places else "")


@lru_cache(maxsize=8)
def _marks(lang: str) -> tuple[str, str, str, str]:
    """``lang``'s decimal mark, minus sign, and the text before and after a percentage's digits, from Babel's CLDR
    data (German: ",", "-", "", "\xa0%"). Read once: a heatmap writes a number for each of its cells."""
    around = format_percent(Decimal("0.5"), locale=lang).split("50")
    return get_decimal_symbol(lang), get_minus_sign_symbol(lang), around[0], around[1]


def _localized(text: str, lang: str, group: bool, plus: bool) -> str:
    """``text`` (Python's fixed-point digits, "-1234.50") in ``lang``'s notation: the digits unchanged. Ungrouped,
    the marks are swapped directly (what ``format_decimal`` with a "0.000" pattern writes, ~50× faster; a test
    checks both agree); grouped, Babel's ``format_decimal`` places the groups as CLDR says."""
    if not _finite(text):
        return text
    if group:
        places = len(text.split(".")[1]) if "." in text else 0
        out = format_decimal(Decimal(text), format=_pattern(places, True), locale=lang)
    else:
        mark, minus = _marks(lang)[:2]
        out = text.replace("-", minus).replace(".", mark) if (mark, minus) != (".", "-") else text
    return ("+" + out) if plus and not out.startswith(("-", _marks(lang)[1])) else out


def _finite(text: str) -> bool:
    return not any(word in text for word in ("inf", "nan"))


def number(x: float, decimals: int | None = None, *, digits: int | None = None, sign: bool = False,
           group: bool = False, lang: str | None = None) -> str:
    """``x`` with ``decimals`` places after the mark (``f"{x:.3f}"``), or ``digits`` significant digits (``:.3g``),
    or, with neither, as few as say it (``:g``); ``sign``: "+" before a positive number (``:+.3f``); ``group``:
    thousands grouped (``:,.0f``: "10.000"; off by default, as in ``:.3f``). Python's "e" notation, where ``:g``
    chooses it, keeps its exponent ("1,2e-05")."""
    lang = locale(lang)
    spec = f".{decimals}f" if decimals is not None else (f".{digits}g" if digits is not None else "g")
    text = format(float(x), spec)
    if "e" in text:
        return scientific(x, digits=None, sign=sign, lang=lang, _text=text)
    return _localized(text, lang, group, sign)


def each(values: Iterable[float], decimals: int, *, lang: str | None = None) -> list[str]:
    """:func:`number` of every value, the locale looked up once: a heatmap's cell texts and hovers."""
    mark, minus = _marks(locale(lang))[:2]
    texts = [format(float(v), f".{decimals}f") for v in values]
    if (mark, minus) == (".", "-"):
        return texts
    return [t.replace("-", minus).replace(".", mark) for t in texts]


def signed(x: float, decimals: int, *, lang: str | None = None) -> str:
    """``f"{x:+.3f}"``: :func:`number` with a "+" before a positive number."""
    return number(x, decimals, sign=True, lang=lang)


def integer(n: int, *, lang: str | None = None) -> str:
    """A count with the locale's grouping: ``f"{n:,}"`` in English ("402,653,184"), "402.653.184" in German."""
    return _localized(str(int(n)), locale(lang), True, False)


def percent(x: float, decimals: int = 0, *, sign: bool = False, lang: str | None = None) -> str:
    """A share as a percentage with the locale's pattern: ``f"{x:.0%}"`` ("40%") in English, "40 %" in German."""
    lang = locale(lang)
    text = format(float(x), f"{'+' if sign else ''}.{decimals}%")
    if not _finite(text):
        return text
    digits = text[:-1]
    before, after = _marks(lang)[2:]
    out = before + _localized(digits.lstrip("+"), lang, False, False) + after
    return ("+" + out) if digits.startswith("+") else out


def scientific(x: float, digits: int | None = 1, *, sign: bool = False, lang: str | None = None,
               _text: str | None = None) -> str:
    """``f"{x:.1e}"`` ("1.2e-05") with the locale's decimal mark ("1,2e-05"); ``digits`` places after the mark."""
    lang = locale(lang)
    text = _text or format(float(x), f"{'+' if sign else ''}.{digits}e")
    if sign and not text.startswith(("+", "-")):
        text = "+" + text
    return text.replace(".", get_decimal_symbol(lang)) if _finite(text) else text


def formatted(x: float, spec: str, *, lang: str | None = None) -> str:
    """``format(x, spec)`` written the reader's way, for a caller that holds a Python format spec (".3f", "+.2f",
    ",", ".0%", ".1e", "g"): the same digits, the locale's marks."""
    lang = locale(lang)
    text = format(x, spec)
    if not _finite(text):
        return text
    if text.endswith("%"):
        places = len(text[:-1].split(".")[1]) if "." in text else 0
        return percent(x, places, sign=text.startswith("+"), lang=lang)
    if "e" in text:
        return scientific(x, lang=lang, _text=text)
    plus = text.startswith("+")
    return _localized(text.lstrip("+").replace(",", ""), lang, "," in spec, plus)


def comma_decimal(lang: str | None = None) -> bool:
    """Whether ``lang`` (default: the session's) writes a decimal comma."""
    return get_decimal_symbol(locale(lang)) == ","


def list_separator(lang: str | None = None) -> str:
    """What separates numbers in a list: ", " in English, "; " where the decimal mark is a comma."""
    return "; " if comma_decimal(lang) else ", "


def joined(parts: Iterable[str], lang: str | None = None) -> str:
    """``parts`` (texts that hold numbers) joined with :func:`list_separator`."""
    return list_separator(lang).join(parts)


def vector(values: Iterable[float], decimals: int = 3, *, lang: str | None = None) -> str:
    """``[0.401, 0.198, 0.401]`` / ``[0,401; 0,198; 0,401]``: whole numbers without decimals ("[1, 0, 0,707]" never:
    "[1; 0; 0,707]")."""
    lang = locale(lang)
    return "[" + joined((whole_or(v, decimals, lang=lang) for v in values), lang) + "]"


def whole_or(x: float, decimals: int = 3, *, lang: str | None = None) -> str:
    """Whole numbers as integers ("2"), others to ``decimals`` places; ``-0`` as "0"."""
    x = float(x)
    if math.isfinite(x) and abs(x - round(x)) < 1e-12:
        return _localized(str(int(round(x))), locale(lang), False, False)   # never grouped: "1000" in a list
    text = number(x, decimals, lang=lang)
    return "0" if math.isfinite(x) and float(format(x, f".{decimals}f")) == 0 else text


def plotly_separators(lang: str | None = None) -> str:
    """plotly's ``layout.separators``: the decimal mark then the thousands separator (".," English, ",." German)."""
    return _separators(locale(lang))


@lru_cache(maxsize=8)
def _separators(lang: str) -> str:   # Babel looks up its CLDR data on every call: every figure asks
    return get_decimal_symbol(lang) + get_group_symbol(lang)


_DECIMAL_IN_TEXT = re.compile(r"(?<![\w.,])(-?\d+)\.(\d+)(?![\w]|\.\d)")
_BRACKETED = re.compile(r"\[([^\[\]]*)\]")
_ELEMENT = re.compile(r"\s*[-−]?\d+(\.\d+)?\s*")


def in_text(text: str, lang: str | None = None) -> str:
    """A text written with English numbers (a lesson file: "[0.707, 0.707]", "1.5 nats") with its numbers written the
    reader's way: where the decimal mark is a comma, each decimal point becomes a comma and a bracketed list of
    numbers is separated by "; " ("[0,707; 0,707]"), so that "[1,0]" can never read as one number. Other text, and
    whole numbers, are left as they are."""
    lang = locale(lang)
    if not comma_decimal(lang):
        return text

    def listed(match: re.Match) -> str:
        parts = match.group(1).split(",")
        if len(parts) < 2 or not all(_ELEMENT.fullmatch(p) for p in parts):
            return match.group(0)
        return "[" + list_separator(lang).join(p.strip() for p in parts) + "]"

    mark = get_decimal_symbol(lang)
    return _DECIMAL_IN_TEXT.sub(lambda m: f"{m.group(1)}{mark}{m.group(2)}", _BRACKETED.sub(listed, text))


def table(frame, decimals: int | Mapping[object, int] = 3, *, formats: Mapping[object, Callable] | None = None,
          lang: str | None = None):
    """``frame`` (a pandas DataFrame) as a Styler whose numbers are written the reader's way, for ``st.dataframe`` and
    ``st.table``: they show the Styler's texts ("0,401", "402.653.184") and still sort a column by its numbers.

    A float column is written to ``decimals`` places (one number for every column, or a column -> places mapping;
    3 for a column it leaves out), as grouped whole numbers when every value in it is whole (a step, a count); an
    integer column as a grouped count (:func:`integer`); a boolean one as "●" or nothing; a column of mixed cells
    each by its own type. ``formats`` gives a column its own writer (``{"p": lambda p: scientific(p, 1)}``). Missing
    values (a hidden cell) are left empty. The frame itself is not changed: its CSV keeps the decimal point."""
    lang = locale(lang)
    writers: dict[object, Callable] = {}
    for column in frame.columns:
        places = decimals.get(column, 3) if isinstance(decimals, Mapping) else decimals
        if formats and column in formats:
            writers[column] = formats[column]
            continue
        values = frame[column]
        kind = values.dtype.kind
        if kind == "f":
            finite = values[values.abs() != math.inf].dropna()
            whole = len(finite) > 0 and bool((finite % 1 == 0).all())
            writers[column] = (lambda x, lang=lang: integer(round(x), lang=lang)) if whole else \
                (lambda x, p=places, lang=lang: number(x, p, lang=lang))
        else:
            writers[column] = lambda x, p=places, lang=lang: _cell(x, p, lang)
    return frame.style.format(writers, na_rep="")


def _cell(x, places: int, lang: str) -> str:
    """One cell of a column that is not all floats: a number written by its type, anything else as it is."""
    kind = getattr(getattr(x, "dtype", None), "kind", "")
    if isinstance(x, bool) or kind == "b":
        return "●" if x else ""
    if isinstance(x, int) or kind in ("i", "u"):
        return integer(int(x), lang=lang)
    if isinstance(x, float) or kind == "f":
        return number(float(x), places, lang=lang) if math.isfinite(float(x)) else ""
    return str(x)


def time_of_day(seconds: float, *, lang: str | None = None) -> str:
    """The server's local time of day at ``seconds`` (``time.time()``), hours and minutes the reader's way: "9:12 AM",
    "09:12"."""
    return format_time(datetime.fromtimestamp(seconds).time(), format="short", locale=locale(lang))
