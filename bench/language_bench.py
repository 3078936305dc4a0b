"""Languages on the heatmap page (issue 37): row 2's warm rerun after a new text, in English and in German, and
the rerun that switches the language of the same view (the picker): its figures and texts are drawn again in the
new language, the model's attention comes from the cache.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.language_bench [model] [reps]
    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.language_bench --smoke    # once on the encoder (CI)
"""
from __future__ import annotations

import json
import sys

from bench.server_side import N_TOKENS, PAGE, apptest_as_a_server, quiet
from bench.stats import median, spread, timed
from bench.texts import fit, single_token_markers


def language_rows(name: str = "SmolLM2-135M-Instruct", reps: int = 7) -> dict:
    from streamlit.testing.v1 import AppTest

    from explorer.model.loading import freeze_heap
    from explorer.ui import cached, language
    from explorer.words import i18n

    quiet()
    apptest_as_a_server()
    at = AppTest.from_file(str(PAGE), default_timeout=600)
    at.query_params["model"] = name
    at.run()
    freeze_heap()
    loaded = cached.get_model(name)
    markers = single_token_markers(loaded.tokenizer, 2 * reps + 2)
    texts = [fit(loaded.tokenizer, N_TOKENS, seed=i, marker=m) for i, m in enumerate(markers)]
    shown = ["en"]   # the language of the last render: AppTest reads select boxes back in it (pagetest.rerun)

    cpu = {"en": [], "de": []}

    def run(lang: str) -> float:
        with i18n.language(shown[0]):
            at.session_state[language.STATE] = lang
            wall, spent = timed(at.run, device=loaded.device)
        shown[0] = lang
        cpu[lang].append(spent)
        return wall

    edits = {"en": [], "de": []}
    for i, text in enumerate(texts):   # new text each run, alternating languages (the first two warm up)
        lang = ("en", "de")[i % 2]
        if i == 2:
            cpu["en"].clear(), cpu["de"].clear()   # the warm-up runs do not count
        with i18n.language(shown[0]):
            at.text_area(key="text").set_value(text)
        wall = run(lang)
        assert not at.exception, at.exception
        if i >= 2:
            edits[lang].append(wall)
    edit_cpu = {k: 1000 * median(v) for k, v in cpu.items()}
    switches = []
    for i in range(2 * reps + 2):   # the same view, its language switched each run
        wall = run(("de", "en")[i % 2])
        assert not at.exception, at.exception
        if i >= 2:
            switches.append(wall)
    same = []
    for _i in range(reps):   # the same view in the same language: a rerun that changes nothing
        same.append(run(shown[0]))
    title = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]
    return dict(model=name, n=reps, edit_en_ms=1000 * median(edits["en"]), edit_de_ms=1000 * median(edits["de"]),
                edit_de_spread_ms=[1000 * s for s in spread(edits["de"])],
                edit_cpu_ms=edit_cpu, switch_ms=1000 * median(switches),
                switch_spread_ms=[1000 * s for s in spread(switches)],
                same_view_ms=1000 * median(same), last_title=title)


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["--smoke"]:   # one repetition on the encoder: that it still runs (CI)
        args = ["all-MiniLM-L6-v2", "1"]
    print(json.dumps(language_rows(*(args[:1] or ["SmolLM2-135M-Instruct"]), *(int(a) for a in args[1:2])),
                     indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
