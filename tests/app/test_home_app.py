"""AppTest of the home page: alone (links degrade to text) and inside app.py's navigation."""
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from explorer.examples import ANIMAL_TIRED, ANIMAL_WIDE
from explorer.model import loading, registry
from explorer.sitemap import table as guides

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


@pytest.fixture(scope="module")
def home_in_app() -> AppTest:
    """app.py run once on its default page, Home: the tests below only read it."""
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()


def test_home_in_the_app_links_to_the_flip_demo(home_in_app):
    at = home_in_app
    assert not at.exception, at.exception
    links = at.get("page_link")
    assert len(links) >= 4
    demo = [link.proto for link in links if "flip demo" in link.proto.label]
    assert demo, [link.proto.label for link in links]
    params = parse_qs(demo[0].query_string)
    assert params["text"] == [ANIMAL_TIRED] and params["text_b"] == [ANIMAL_WIDE]
    assert params["query"] == ["it"] and params["cands"] == ["animal,street"]
    assert "(not in this app)" not in _markdown(at)


def test_home_links_every_page_of_the_navigation_with_its_question(home_in_app):
    """Home and the navigation read one table: every page but Home itself has its link and its question."""
    at = home_in_app
    assert not at.exception, at.exception
    linked = {link.proto.page for link in at.get("page_link")}
    others = [p for p in guides.PAGES.values() if not p.default]
    assert len(others) >= 16
    missing = [p.file for p in others if Path(p.file).stem not in linked]
    assert missing == [], f"pages in the navigation but not linked from Home: {missing}"
    captions = "\n".join(c.value for c in at.caption)
    for page in others:
        assert f"{page.does} *{page.asks}*" in captions
    headings = [h.value for h in at.subheader]
    assert [h for h in headings if h in {s.on_home for s in guides.SECTIONS}] == [h for h, _ in guides.on_home()]
