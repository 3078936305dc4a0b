"""Icons draw offline on any lab PC: Material Symbols (a font Streamlit ships), never emoji (empty boxes without a
colour-emoji font), and a page icon that is a local image (a :material/ page icon makes the browser fetch the
favicon from a CDN)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EMOJI = re.compile("[\U0001F000-\U0001FFFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F]")
SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "explorer").rglob("*.py"))]


def test_no_emoji_in_what_the_app_shows():
    found = [f"{p.relative_to(ROOT)}:{n}" for p in SOURCES for n, line in enumerate(p.read_text().splitlines(), 1)
             if EMOJI.search(line)]
    assert found == []


def test_the_checker_sees_an_emoji():
    assert EMOJI.search('st.title("\U0001F525 Heatmaps")') and EMOJI.search("\u2B07\uFE0F CSV")


def test_every_page_has_a_material_icon_and_the_page_icon_is_a_local_image():
    from explorer.sitemap.table import PAGES  # app.py makes one st.Page per row (tests/unit/test_words.py)

    icons = [page.icon for page in PAGES.values()]
    assert len(icons) >= 11
    assert all(re.fullmatch(r":material/[a-z_]+:", icon) for icon in icons), icons
    import app  # noqa: F401 - the module, not the navigation (that runs only as __main__)
    assert app.FAVICON.is_file() and app.FAVICON.suffix == ".png"
