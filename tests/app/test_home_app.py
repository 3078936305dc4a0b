"""AppTest of the home page: alone (links degrade to text) and, once app.py registers it, inside the navigation."""
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from explorer.examples import ANIMAL_TIRED, ANIMAL_WIDE
from explorer.model import loading, registry

ROOT = Path(__file__).resolve().parents[2]


def _markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_home_alone_names_models_device_and_pages():
    at = AppTest.from_file(str(ROOT / "pages" / "home.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    text = _markdown(at)
    assert loading.device_label(loading.best_device()) in text
    for name in registry.EMBEDDED:
        assert name in text
    assert "Antecedent flip" in text and "(not in this app)" in text   # run alone: no page to link to


@pytest.mark.skipif("pages/home.py" not in (ROOT / "app.py").read_text(), reason="app.py does not register home yet")
def test_home_in_the_app_links_to_the_flip_demo():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    links = at.get("page_link")
    assert len(links) >= 4
    demo = [link.proto for link in links if "flip demo" in link.proto.label]
    assert demo, [link.proto.label for link in links]
    params = parse_qs(demo[0].query_string)
    assert params["text"] == [ANIMAL_TIRED] and params["text_b"] == [ANIMAL_WIDE]
    assert params["query"] == ["it"] and params["cands"] == ["animal,street"]
    assert "(not in this app)" not in _markdown(at)
