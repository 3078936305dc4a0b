"""A lesson written back as the TOML file ``files.parse`` reads back to the same lesson."""
from __future__ import annotations

import json

from .model import PAGE_QUESTION, Lesson


def _toml_value(value) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)   # a JSON string is a TOML basic string


def dump(lesson: Lesson) -> str:
    """The lesson as a TOML file that ``parse`` reads back to the same lesson."""
    lines = [f"title = {_toml_value(lesson.title)}"]
    if lesson.about:
        lines.append(f"about = {_toml_value(lesson.about)}")
    for step in lesson.steps:
        lines += ["", "[[step]]", f"title = {_toml_value(step.title)}", f"page = {_toml_value(step.page)}",
                  f"minutes = {_toml_value(step.minutes)}"]
        if step.notes:
            lines.append(f"notes = {_toml_value(step.notes)}")
        if step.params:
            lines.append("params = { " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}"
                                                   for k, v in step.params.items()) + " }")
        if step.checks:
            lines.append(f"check = {_toml_value(step.checks)}")
        if step.page_question:
            lines.append(f"question = {_toml_value(PAGE_QUESTION)}")
        elif step.computed:
            lines.append(f"question = {{ computed = {_toml_value(step.computed)} }}")
        elif step.question:
            q = step.question
            lines += ["", "[step.question]", f"prompt = {_toml_value(q.prompt)}",
                      f"options = {_toml_value(q.options)}", f"answer = {_toml_value(q.answer)}",
                      f"explain = {_toml_value(q.explain)}"]
    return "\n".join(lines) + "\n"
