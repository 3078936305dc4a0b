"""Every private plotly name lives in one module, ``explorer/plots/base.py`` (the figure base every plot uses): this
test reads every file of explorer/, pages/, bench/ and app.py and fails on any other file that names one (in code, a
string or a comment: a docstring that names an internal is where the next use of it starts). The checker runs on this
repository and, to show that it can fail, on small trees that break it. That the figure base still sends what
plotly itself would is tests/unit/test_plots.py (a LightFigure's JSON against plotly's validated figure)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from guards import uses_outside, whole_words, write_tree

from explorer.plots import base

ROOT = Path(__file__).resolve().parents[2]
HOME = "explorer/plots/base.py"
# what may not appear outside HOME: plotly's private package and modules, the private names taken from them, and
# the private keyword that skips validation
FORBIDDEN = {
    **whole_words("_plotly_utils", "basedatatypes", "BasePlotlyType", "convert_to_base64", "_validate"),
    "a private plotly module": r"\bplotly\.(\w+\.)*_\w+",
}
UNUSED_HERE = {"a private plotly module"}   # forbidden everywhere, used nowhere


def check_tree(root: Path) -> list[str]:
    """Each use of a private plotly name outside HOME in the tree at ``root``: "path:line: name"."""
    return uses_outside(root, HOME, FORBIDDEN)


def test_no_private_plotly_name_outside_the_figure_base():
    assert check_tree(ROOT) == []


def test_the_figure_base_is_where_they_are():
    """The guard guards something: the names it forbids elsewhere are the ones the module uses."""
    text = (ROOT / HOME).read_text(encoding="utf-8")
    unused = [name for name, pattern in FORBIDDEN.items() if not re.search(pattern, text) and name not in UNUSED_HERE]
    assert unused == []


def test_the_docstring_lists_each_internal_it_uses():
    for name in ("_plotly_utils.utils.convert_to_base64", "plotly.basedatatypes.BasePlotlyType", "_validate=False"):
        assert name in base.__doc__, name


@pytest.mark.parametrize("files, expected", [
    ({"explorer/plots/heads.py": "from _plotly_utils.utils import convert_to_base64\n"},
     ["explorer/plots/heads.py:1: _plotly_utils", "explorer/plots/heads.py:1: convert_to_base64"]),
    ({"explorer/ui/widgets.py": "x = 1\nif isinstance(v, plotly.basedatatypes.BasePlotlyType):\n"},
     ["explorer/ui/widgets.py:2: basedatatypes", "explorer/ui/widgets.py:2: BasePlotlyType"]),
    ({"pages/p.py": "go.Figure(data, _validate=False)  # fast\n"}, ["pages/p.py:1: _validate"]),
    ({"app.py": "import plotly.io._json\n"}, ["app.py:1: a private plotly module"]),
    ({HOME: "from _plotly_utils.utils import convert_to_base64\n",
      "explorer/plots/f.py": "import plotly.graph_objects as go\nvalidate = True  # plotly.io.to_json\n"}, []),
])
def test_the_checker_finds_each_use(tmp_path, files, expected):
    assert sorted(check_tree(write_tree(tmp_path, files))) == sorted(expected)
