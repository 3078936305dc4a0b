"""The class's report, from the store's data: every question with its votes per round, as a CSV (question, round,
option, count, correct) and as a printable summary (the share of the class right in each round and the shift
from round 1 to round 2). Nothing here is kept: the teacher downloads it before ending the class, which deletes the
room with every answer. No Streamlit, no Plotly."""
from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass

from explorer.words import numbers
from explorer.words.i18n import N_, _, current, ngettext

from .errors import not_teacher_error
from .polls import OPEN, REVEALED, SHOWN, Asked, answer_text, counts_by_text

CSV_COLUMNS = (N_("question"), N_("round"), N_("option"), N_("count"), N_("correct"))   # in the reader's language
_FORMULA = ("=", "+", "-", "@", "\t", "\r")   # a cell starting so is a formula to a spreadsheet


@dataclass(frozen=True)
class QuestionReport:
    """One question's votes: ``rounds[r - 1]`` maps each answer given in round r to its count."""

    asked: Asked
    rounds: tuple[dict[str, int], ...]

    def answers(self, round_: int) -> list[tuple[str, int]]:
        """(answer, count) of ``round_``: the options in the question's order (0 when nobody chose one), then the
        answers typed that are not options, most frequent first."""
        counts = self.rounds[round_ - 1]
        typed = sorted(((a, n) for a, n in counts.items() if a not in self.asked.options), key=lambda p: (-p[1], p[0]))
        return [(o, counts.get(o, 0)) for o in self.asked.options] + typed

    def voters(self, round_: int) -> int:
        return sum(self.rounds[round_ - 1].values()) if round_ <= len(self.rounds) else 0

    def share_right(self, round_: int) -> float | None:
        """The share of ``round_``'s voters who chose the right answer (None: no votes, or no known answer)."""
        n = self.voters(round_)
        if not n or self.asked.correct is None:
            return None
        return self.right(round_) / n

    def right(self, round_: int) -> int:
        """How many of ``round_``'s voters chose a right answer (any of them, on a near-tie)."""
        return sum(self.rounds[round_ - 1].get(a, 0) for a in self.asked.rights)

    @property
    def shift(self) -> float | None:
        """Share right in round 2 minus share right in round 1 (None without both)."""
        first, second = self.share_right(1), self.share_right(2)
        return None if first is None or second is None else second - first


def collect(store, code: str, key: str) -> list[QuestionReport]:
    """Every question of the room with its votes per round, in the order the questions came (teacher only). The
    store keeps an option's votes by its place (``polls.vote_of``), so each option is counted once whatever
    language its votes were cast in, and reads as the teacher's page stored it (the teacher's language)."""
    if not store.is_teacher(code, key):
        raise not_teacher_error()
    return [QuestionReport(q, tuple(counts_by_text(store.counts(code, q.qid, round=r), q.options)
                                    for r in range(1, q.round + 1)))
            for q in store.questions(code)]


@dataclass(frozen=True)
class SentencesReport:
    """The class's sentences for the report: the round's ``number``, its ``prompt`` and the sentences the teacher
    did not hide, in the order they came (no names: the report may travel)."""
    number: int
    prompt: str
    texts: tuple[str, ...]


def collect_sentences(store, code: str, key: str) -> SentencesReport | None:
    """The room's sentence round for the report (teacher only); None before the teacher asks for sentences."""
    found = store.sentence_round(code)
    if not found.number:
        return None
    return SentencesReport(found.number, found.prompt,
                           tuple(s.text for s in store.sentences(code, key) if not s.hidden))


def _cell(text: str) -> str:
    """Text for a spreadsheet cell: one that would start a formula is kept as text by a leading apostrophe."""
    return "'" + text if text.startswith(_FORMULA) else text


def csv_text(reports: list[QuestionReport], sentences: SentencesReport | None = None) -> str:
    """The report as CSV: one row per question, round and answer (every option, chosen or not), with its count and
    whether it is the right answer ("yes"/"no"; "" when the page never stored the question). Then the class's
    sentences, one row each: the prompt, the round, the sentence, 1 and "" (no right answer)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([_(column) for column in CSV_COLUMNS])
    for report in reports:
        right = report.asked.correct
        for r in range(1, len(report.rounds) + 1):
            for answer, count in report.answers(r):
                writer.writerow([_cell(report.asked.prompt), r, _cell(answer), count,
                                 "" if right is None else _("yes") if answer in report.asked.rights else _("no")])
    for text in sentences.texts if sentences else ():
        writer.writerow([_cell(sentences.prompt), sentences.number, _cell(text), 1, ""])
    return out.getvalue()


def percent(share: float | None) -> str:
    return "–" if share is None else numbers.percent(share)


def points(shift: float | None) -> str:
    """A shift in percentage points, signed: '+40 points', '-10 points', '0 points'; '–' when there is none."""
    if shift is None:
        return "–"
    value = round(shift * 100)
    return ngettext("{value} point", "{value} points", abs(value)).format(
        value=numbers.number(value, 0, sign=True) if value else "0")


def round_line(report: QuestionReport, round_: int) -> str:
    """'3 of 5 right (60%)', or what stands in for it."""
    if round_ > len(report.rounds):
        return _("no second round")
    n, share = report.voters(round_), report.share_right(round_)
    still = _(" · voting still open") if round_ == report.asked.round and report.asked.state == OPEN else ""
    if not n:
        return _("no votes") + still
    if share is None:
        return ngettext("{n} vote", "{n} votes", n).format(n=n) + still
    right = report.right(round_)
    return _("{right} of {n} right ({share})").format(right=right, n=n, share=percent(share)) + still


_STATE = {OPEN: N_("voting"), SHOWN: N_("answers shown"), REVEALED: N_("revealed")}
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #111; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem; }
table { border-collapse: collapse; margin: .5rem 0; } th, td { border: 1px solid #999; padding: .3rem .6rem;
  text-align: left; vertical-align: top; } td.n { text-align: right; }
.right { font-weight: bold; } .note { color: #444; }
@media print { body { margin: 0; } section { break-inside: avoid; } .note { display: none; } }
@page { margin: 1.5cm; }
"""


def summary_html(reports: list[QuestionReport], *, room: str, when: str, progress=None,
                 sentences: SentencesReport | None = None) -> str:
    """A standalone, printable page in the reader's language: a table of every question (share right per round,
    shift), then each question's counts per answer. Every text from the class (questions, typed answers,
    sentences) is escaped. ``progress`` (a homework's ``homework.HomeworkProgress``) adds how many students started
    and finished; ``sentences`` the class's sentences under their prompt, numbered, without names."""
    e = html.escape
    started = "" if progress is None else "<p>" + e(ngettext(
        "Homework: {started} student started, {finished} finished.",
        "Homework: {started} students started, {finished} finished.", progress.started).format(
        started=progress.started, finished=progress.finished)) + "</p>"
    rows = "".join(
        f"<tr><td>{i}</td><td>{e(r.asked.prompt)}</td><td>{e(numbers.joined(r.asked.rights) or '–')}</td>"
        f"<td>{e(round_line(r, 1))}</td><td>{e(round_line(r, 2))}</td><td class='n'>{e(points(r.shift))}</td></tr>"
        for i, r in enumerate(reports, 1))
    details = []
    right_answer, answer_word = e(_("(right answer)")), e(_("answer"))
    for i, r in enumerate(reports, 1):
        rounds = [e(_("round {n}").format(n=k)) for k in range(1, len(r.rounds) + 1)]
        head = "".join(f"<th>{name}</th>" for name in rounds)
        tallies = [dict(r.answers(k)) for k in range(1, len(r.rounds) + 1)]
        body = "".join(
            f"<tr{' class=right' if a in r.asked.rights else ''}><td>{e(a)}"
            f"{' ' + right_answer if a in r.asked.rights else ''}</td>"
            + "".join(f"<td class='n'>{t.get(a, 0)}</td>" for t in tallies) + "</tr>"
            for a in dict.fromkeys(a for k in range(1, len(r.rounds) + 1) for a, _n in r.answers(k)))
        state = e(_(_STATE[r.asked.state]))
        details.append(f"<section><h2>{i}. {e(r.asked.prompt)}</h2><p class='note'>{state}"
                       f"</p><table><tr><th>{answer_word}</th>{head}</tr>{body}</table></section>")
    columns = (_("question"), _("right answer"), _("round {n}").format(n=1), _("round {n}").format(n=2), _("shift"))
    table = ("<table><tr><th>#</th>" + "".join(f"<th>{e(c)}</th>" for c in columns) + f"</tr>{rows}</table>"
             if reports else "<p>" + e(_("No class questions were asked.")) + "</p>")
    title = e(_("Class {room}: report").format(room=room))
    counted = ngettext("{n} question", "{n} questions", len(reports)).format(n=len(reports))
    shift = e(_("The shift is the share right in round 2 minus the share right in round 1, in percentage points."))
    keep = e(_("Print this page (Ctrl+P) or keep the file: the class’s answers are deleted when the class ends."))
    if sentences is not None:
        none = "<li>" + e(_("No sentence yet.")) + "</li>"
        heading = e(_("Sentences: {prompt}").format(prompt=sentences.prompt))
        items = "".join(f"<li>{e(text)}</li>" for text in sentences.texts) or none
        details.append(f"<section><h2>{heading}</h2><ol>{items}</ol></section>")
    return (f"<!doctype html><html lang='{e(current())}'><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>{_STYLE}</style></head><body><h1>{title}</h1><p>{e(when)} · {e(counted)}. {shift}"
            f"</p>{started}<p class='note'>{keep}</p>{table}{''.join(details)}</body></html>")


@dataclass(frozen=True)
class RecapLine:
    """One question of a student's recap: what they answered in each round, and the right answer (None when the
    teacher's page stored none)."""

    prompt: str
    said: dict[int, str]
    correct: str | None
    also: tuple[str, ...] = ()   # other answers as right (a near-tie)

    @property
    def right(self) -> bool | None:
        """Whether the student's last answer is a right one (None: no answer, or no known right answer)."""
        last = self.said.get(max(self.said)) if self.said else None
        return None if last is None or self.correct is None else last in (self.correct, *self.also)


def recap(questions: list[Asked], mine: dict[str, dict[int, str]], qids: list[str]) -> list[RecapLine]:
    """A student's recap of the questions ``qids`` (a lesson's, in its order; ids the room never asked are left
    out): their answers per round (``store.my_answers``) beside the right answer."""
    asked = {q.qid: q for q in questions}
    return [RecapLine(asked[qid].prompt, {r: answer_text(v, asked[qid].options) for r, v in mine.get(qid, {}).items()},
                      asked[qid].correct, asked[qid].also)
            for qid in dict.fromkeys(qids) if qid in asked]
