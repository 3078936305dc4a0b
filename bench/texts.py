"""Benchmark inputs: texts of an exact token count, each led by a marker word the browser can look for.

A new text per repetition keeps every measured rerun honest (nothing cached by text), and the marker word
("zebra", "violin", …) is one token in both embedded tokenizers, so its tick label tells that the new heatmap
is on screen.
"""
from __future__ import annotations

import random

MARKERS = ["zebra", "violin", "harbor", "castle", "planet", "garden", "rocket", "winter", "pencil", "island",
           "dragon", "forest", "button", "candle", "ladder", "monkey", "orange", "pirate", "rabbit", "saddle",
           "tunnel", "velvet", "wagon", "yogurt", "anchor", "basket", "cactus", "dentist", "engine", "falcon"]

WORDS = ("the a an and but because it was too very quite then so when while after before student teacher "
         "animal street river city house road tree dog cat bird car train book paper table window door "
         "morning evening night day week year small large old new red green blue quick slow happy tired "
         "wide long short warm cold bright dark walked crossed read wrote saw heard found kept left took "
         "gave made said asked told thought knew felt came went ran sat stood over under near far into onto "
         "from with without about across along behind beside between").split()


def fit(tokenizer, n_tokens: int, seed: int, marker: str | None = None) -> str:
    """A sentence-like text of exactly ``n_tokens`` tokens (special tokens included): "The <marker> …"."""
    rng = random.Random(seed)
    words = ["The", marker] if marker else ["The"]

    def count(ws: list[str]) -> int:
        return len(tokenizer(" ".join(ws) + ".", add_special_tokens=True)["input_ids"])

    for _ in range(20 * n_tokens + 200):
        have = count(words)
        if have == n_tokens:
            return " ".join(words) + "."
        if have > n_tokens:
            words.pop()
            continue
        candidate = rng.choice(WORDS)
        if count(words + [candidate]) <= n_tokens:
            words.append(candidate)
    raise RuntimeError(f"could not build a text of exactly {n_tokens} tokens")


def single_token_markers(tokenizer, count: int) -> list[str]:
    """``count`` markers that stay one token after a space in this tokenizer, cycling when there are too few."""
    ok = [w for w in MARKERS if len(tokenizer(" " + w, add_special_tokens=False)["input_ids"]) == 1]
    if not ok:
        raise RuntimeError("no marker word is a single token in this tokenizer")
    return (ok * (count // len(ok) + 1))[:count]
