"""The shared-server rules in headless Chromium against one real server with the deployer's defaults (local
folders off): a crafted link to a hub model asks before loading and loads nothing until answered; a link to a
path gets the one local-folder message, whether the path exists or not."""
from __future__ import annotations

import pytest
from chromium import ARTIFACTS, Server, exception_texts, open_page, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    srv = Server(env={"EXPLORER_ALLOW_LOCAL": "0"}, log_prefix="shared-server")
    yield srv
    srv.stop()


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def server_log(srv: Server) -> str:
    srv.log.flush()
    return open(srv.log.name).read()


def test_a_link_to_a_hub_model_asks_first_and_loads_nothing(server, browser):
    page = open_page(browser, f"{server.url}/heatmaps?model=roberta-base")
    try:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)     # the embedded encoder meanwhile
        text = main_text(page)
        assert "This link asks for roberta-base from the hub. Its size is unknown: the hub cannot be reached" in text
        assert page.get_by_role("button", name="Load it").count() == 1
        page.screenshot(path=str(ARTIFACTS / "shared-server-link-asks.png"), full_page=True)
        assert "roberta-base" in page.url                                        # a reload asks again
        page.get_by_role("button", name="Stay on all-MiniLM-L6-v2").click()
        wait_idle(page)
        assert "This link asks for" not in main_text(page) and "roberta-base" not in page.url
        assert exception_texts(page) == [] and page.external == []
        assert "roberta-base" not in server_log(server)                          # no load was even tried
    finally:
        page.context.close()


@pytest.mark.parametrize("path", ["/etc", "/no/such/folder"])
def test_a_link_to_a_path_gets_the_one_local_folder_message(server, browser, path):
    page = open_page(browser, f"{server.url}/heatmaps?model={path}")
    try:
        text = main_text(page)
        assert f"Model '{path}' is not available: Model folders on this server's disk cannot be opened here" in text
        assert "This link asks for" not in text and exception_texts(page) == []
        if path == "/etc":
            page.screenshot(path=str(ARTIFACTS / "shared-server-local-off.png"), full_page=True)
    finally:
        page.context.close()
