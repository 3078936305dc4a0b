"""A lesson's handout: one self-contained HTML page (its own print stylesheet, no script, no network) listing the
steps and their questions, and, when a class is running, the join link and its QR code. Every text is escaped."""
from __future__ import annotations

from collections.abc import Mapping
from html import escape

from explorer.classroom.qr import qr_svg
from explorer.labs.quiz import Question
from explorer.words import numbers
from explorer.words.i18n import _, current, ngettext

from .claims import unescaped
from .computed import COMPUTED, measured_on
from .model import Lesson

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #111; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } .about { color: #333; }
ol.steps > li { margin: 0 0 1rem; padding: .6rem .8rem; border: 1px solid #bbb; border-radius: 6px;
  break-inside: avoid; }
.page { color: #444; font-size: .9rem; } .q { margin: .4rem 0 0; } .opts li { list-style: none; }
.opts li::before { content: "\\25A2  "; } .join { display: flex; gap: 1rem; align-items: center;
  border: 2px solid #111; padding: .6rem; border-radius: 6px; } .join svg { width: 9rem; height: 9rem; }
@media print { body { margin: 0; max-width: none; font-size: 11pt; } a { color: #111; text-decoration: none; }
  ol.steps > li { border-color: #999; } @page { margin: 1.5cm; } }
"""


def handout_html(lesson: Lesson, join_url: str | None = None, room: str | None = None,
                 asked: Mapping[int, Question | str] | None = None) -> str:
    """The handout as an HTML document. ``join_url`` (and the room's ``room`` code, as shown): print the way in.
    ``asked``: the computed steps' questions by step index, as computed on their models (or the sentence shown
    instead); a computed step missing from it prints what its question will ask."""
    asked = asked or {}
    length = ngettext("{n} step, about {minutes} minutes", "{n} steps, about {minutes} minutes",
                      len(lesson.steps)).format(n=len(lesson.steps), minutes=numbers.number(lesson.minutes))
    heading = escape(_("{title} · handout").format(title=lesson.title))
    parts = [f"<!doctype html><html lang={current()}><head><meta charset=utf-8>",
             f"<title>{heading}</title><style>{STYLE}</style>"
             "</head><body>", f"<h1>{escape(lesson.title)}</h1>",
             f"<p class=about>{escape(lesson.about)} · {escape(length)}</p>"]
    if join_url:
        way = (_("Join the class: scan the code or open {link} with the code {code}.") if room
               else _("Join the class: scan the code or open {link}.")).format(
            link="\x00link\x00", code="\x00code\x00")
        way = escape(way).replace("\x00link\x00", f"<b>{escape(join_url)}</b>").replace(
            "\x00code\x00", f"<b>{escape(room or '')}</b>")
        parts.append(f"<div class=join>{qr_svg(join_url)}<div>{way}</div></div>")
    parts.append("<ol class=steps>")
    for n, step in enumerate(lesson.steps):
        page, minutes = _(step.page_title), _("{minutes} min").format(minutes=numbers.number(step.minutes))
        parts.append(f"<li><b>{escape(step.title)}</b> <span class=page>· {escape(page)} · "
                     f"{escape(minutes)}</span>")
        q = step.question.question() if step.question else asked.get(n) if step.computed else None
        if isinstance(q, Question):
            options = "".join(f"<li>{escape(o)}</li>" for o in q.options)
            prompt = q.prompt if step.question else unescaped(q.prompt)   # a computed one is written as markdown
            parts.append(f"<p class=q>{escape(prompt)}</p><ul class=opts>{options}</ul>")
        elif isinstance(q, str):
            parts.append(f"<p class=q>{escape(q)}</p>")
        elif step.computed:
            said = _("A question measured on {model} when the step opens: {about}.").format(
                model=measured_on(step), about=_(COMPUTED[step.computed].about))
            parts.append(f"<p class=q>{escape(said)}</p>")
        elif step.page_question:
            said = _("Predict, then reveal: the question on the {page} page.").format(page=_(step.page_title))
            parts.append(f"<p class=q>{escape(said)}</p>")
        parts.append("</li>")
    made = _("Made with the attention explorer. Your answers stay in the class; nothing is kept after it ends.")
    parts.append(f"</ol><p class=page>{escape(made)}</p></body></html>")
    return "".join(parts)
