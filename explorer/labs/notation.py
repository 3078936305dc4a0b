"""How the labs write numbers, vectors and matrices: LaTeX for st.latex and short strings for prose and tables.

In the session's locale (explorer/words/numbers.py): "0.707" in English, "0,707" in German and Spanish (in LaTeX
"0{,}707", so KaTeX sets no space after the comma), and a vector's elements separated by "; " where the decimal
mark is a comma. The digits themselves are the same in every language.
"""
from __future__ import annotations

import numpy as np

from explorer.words import numbers


def latex_number(x: float, decimals: int = 3) -> str:
    """Whole numbers as integers ("2"), others rounded to ``decimals`` ("0.707"); ``-0`` shown as "0"."""
    x = float(x)
    if not np.isfinite(x):
        return r"-\infty" if x < 0 else r"\infty"
    return numbers.whole_or(x, decimals).replace(",", "{,}")


def latex_matrix(m: np.ndarray, decimals: int = 3) -> str:
    """A 2-D array (or a 1-D row) as a LaTeX ``bmatrix``."""
    m = np.atleast_2d(np.asarray(m, dtype=float))
    rows = [" & ".join(latex_number(v, decimals) for v in row) for row in m]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def latex_weighted_sum(weights: np.ndarray, values: np.ndarray, decimals: int = 3) -> str:
    """``w_1 v_1 + w_2 v_2 + ... = output`` for one query row: the last step of attention written out."""
    weights = np.asarray(weights, dtype=float)
    values = np.asarray(values, dtype=float)
    terms = " + ".join(f"{latex_number(w, decimals)}\\,{latex_matrix(v, decimals)}" for w, v in zip(weights, values))
    return f"{terms} = {latex_matrix(weights @ values, decimals)}"


def format_list(values, decimals: int = 3) -> str:
    """``[1, 0, 0.707]`` (German: ``[1; 0; 0,707]``): a vector for prose, whole numbers without decimals."""
    return numbers.vector(np.ravel(values), decimals)


def format_weight(p: float, decimals: int = 3, max_decimals: int = 12) -> str:
    """A probability to ``decimals`` places, with more places only when rounding would show a false 0 or 1.

    ``0.0901 -> "0.090"``, ``3.35e-4 -> "0.0003"``, ``1.12e-7 -> "0.0000001"``, ``0.99966 -> "0.9997"``.
    """
    p = float(p)
    for d in range(decimals, max_decimals + 1):
        if (0 < p < 1) and float(f"{p:.{d}f}") in (0.0, 1.0):
            continue
        return numbers.number(p, d)
    return numbers.number(p, max_decimals)


def format_weights(ps, decimals: int = 3) -> str:
    """``[0.090, 0.245, 0.665]`` (German: ``[0,090; 0,245; 0,665]``): :func:`format_weight` over a vector."""
    return "[" + numbers.joined(format_weight(p, decimals) for p in np.ravel(ps)) + "]"
