"""Lesson 7 ("Where is the answer carried?") on the embedded SmolLM2: each computed answer equals a recomputation
from the exact grids written here by hand, the README's measured story holds, and a step whose receiver is not the
head that restores most is caught by its check. The grids come from the patching page's shared jobs (what the page
and the lesson read); the core's own tests check the grids themselves."""
from dataclasses import replace

import numpy as np
import pytest
import torch

from explorer.heads_do.knockout import knockout
from explorer.lessons import catalogue
from explorer.lessons.computed import ask, contradiction
from explorer.patching import READY, shared

LESSON = next(x for x in catalogue({})[0] if x.title == "Where is the answer carried?")
STEP = {s.computed or s.checks[0]: s for s in LESSON.steps}
IOI = READY["ioi"]


@pytest.fixture(scope="module")
def grids(decoder):
    c = shared.contrast(decoder, IOI).wait()
    run = {(level, d): shared.exact(decoder, IOI, level, d).wait().values
           for level, d in (("residual", "denoise"), ("heads", "denoise"), ("heads", "noise"))}
    run["path"] = shared.exact(decoder, IOI, "path", "denoise", receiver=(23, 3), via="qkv").wait().values
    return c, run


def test_the_pair_and_the_readme_story(grids):
    c, run = grids
    assert c.clean > 0 > c.corrupted and c.positions == [9]
    resid = run[("residual", "denoise")]
    at_word = np.flatnonzero(resid[:, 9] >= 0.5)
    assert at_word[-1] == 23 and (resid[:, 9] >= 0.5)[:24].all()        # the name's own position, up to layer 23
    assert np.flatnonzero(resid[:, -1] >= 0.5)[0] == 24                  # the last position, from layer 24 on
    assert (np.abs(resid[:, :9]) < 5e-4).all()                           # step 2: "every earlier position reads 0"
    assert (resid[:20, 9] > 0.95).all()                                  # "the whole answer … in every layer up to 19"
    split = resid[20:24][:, [9, -1]]                                     # "over four late layers (20 to 23) … split"
    assert ((0.1 < split) & (split < 0.95)).all() and (resid[24:, -1] > 0.9).all()
    heads = run[("heads", "denoise")]
    assert np.unravel_index(np.argmax(heads), heads.shape) == (23, 3) and round(100 * heads[23, 3]) == 58
    assert np.sort(heads.ravel())[-2] < heads[23, 3] / 2                 # step 3: "one stands out"
    assert heads.min() < -0.1 and heads[20, 0] >= 0.1                    # blue tiles; L20H0 "lit up in step 3"
    assert run["path"].max() < 0.025                                     # "no single sender brings back more than 2%"


def test_each_computed_answer_equals_a_recomputation(decoder, grids):
    c, run = grids
    resid, heads, noise, path = run[("residual", "denoise")], run[("heads", "denoise")], run[("heads", "noise")], \
        run["path"]
    last = int(np.flatnonzero(resid[:, 9] >= 0.5)[-1])                   # 23: bands of 30 layers are 0-7 … 22-29
    q = ask(STEP["patch_word_until"], decoder)
    assert q.correct == ["layers 0–7", "layers 8–14", "layers 15–21", "layers 22–29"][(last >= 8) + (last >= 15)
                                                                                      + (last >= 22)]
    q = ask(STEP["patch_path_sender"], decoder)
    assert q.correct == ("less than a tenth of it" if path.max() < 0.1 else "between a tenth and half of it")
    q = ask(STEP["patch_directions"], decoder)
    same = np.argmax(heads) == np.argmax(1 - noise)
    assert q.correct == ("yes: it takes away the most" if same else q.options[1])
    with c.loaded.lock, torch.inference_mode(), knockout(c.loaded.model, {23: [3]}):   # the job's own copy
        knocked = float(c.run("clean", 1, 0)[0])
    lost, patched = 1 - (knocked - c.corrupted) / (c.clean - c.corrupted), 1 - noise[23, 3]
    q = ask(STEP["patch_knockout"], decoder)
    assert q.correct == ("it loses less than the patch does" if lost < patched - 0.1 else
                         "it loses more than the patch does" if lost > patched + 0.1 else q.options[1])
    assert (round(100 * lost), round(100 * patched)) == (26, 61)          # as the README says


def test_a_receiver_that_is_not_the_best_head_is_caught(decoder, grids):
    step = STEP["patch_path_sender"]
    wrong = replace(step, params={**step.params, "pt_rl": "29", "pt_rh": "1"})
    said = contradiction(wrong, 4, decoder)
    assert said and "L23H3" in said and "L29H1" in said
    assert contradiction(step, 4, decoder) is None
