"""Two real replicas behind a real HAProxy (deploy/cluster.py), driven by headless Chromium.

A Streamlit session lives in one replica: the CSV behind a download button is served over HTTP (/media/…) only by
the process that holds the session. With the affinity cookie every one of 20 sessions gets its own CSV; without it
about half the downloads land on the other replica (404), so its sessions stop at the first batch that shows one.
Texts differ per session because media ids are content hashes: identical content on both
replicas would hide the problem.
"""
from __future__ import annotations

import gzip
import re
import shutil
import time
import urllib.parse

import pytest
from chromium import exception_texts, fetch, main_bundle, screenshot, wait_idle, watch
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from deploy.cluster import COOKIE, Cluster

pytestmark = [pytest.mark.browser, pytest.mark.cluster]

WORDS = ["harbour", "teacher", "violin", "garden", "mountain", "kitchen", "soldier", "library", "pilot", "river",
         "doctor", "island", "bicycle", "farmer", "castle", "painter", "forest", "engine", "village", "singer"]
BATCH = 4   # browser contexts open at once (the test machine has 2 cores)


def need_haproxy():
    if not shutil.which("haproxy"):
        pytest.fail("haproxy is not installed (apt-get install haproxy)")


def heatmap_url(cluster: Cluster, word: str) -> str:
    return cluster.url + "/heatmaps?" + urllib.parse.urlencode({"text": f"The {word} waited by the old door."})


def replica_of(context) -> str | None:
    """The replica HAProxy pinned this browser context to (the cookie is httponly: read it from the context)."""
    return next((c["value"] for c in context.cookies() if c["name"] == COOKIE), None)


def download_csv(page, timeout_s: float = 20) -> str | None:
    """Click the heatmap's CSV button; the file's text, or None when the browser's download failed (e.g. 404).

    The click asks the session's replica over the websocket to build the file, then fetches /media/<id>.csv over
    HTTP. Under load a click sometimes never gets its websocket answer (both replicas idle, no /media/ request made,
    the button spinning: not a routing failure), so a click that starts no download within ``timeout_s`` is
    repeated once; a second silence fails the test with a screenshot.
    """
    button = page.get_by_role("button", name=re.compile("matrix as CSV", re.IGNORECASE))
    for attempt in (1, 2):
        try:
            with page.expect_download(timeout=timeout_s * 1000) as info:
                button.click()
            download = info.value
            break
        except PlaywrightTimeout:
            if attempt == 2:
                shot = screenshot(page, f"cluster-no-download-{time.time():.0f}.png")
                raise AssertionError(f"no download started after two clicks; see {shot}") from None
            print(f"\nno download {timeout_s:.0f} s after the click on {page.url}; clicking again")
    if download.failure():
        return None
    with open(download.path(), encoding="utf-8") as f:
        return f.read()


def run_sessions(browser, cluster: Cluster, words: list[str], enough=None) -> list[tuple[str, str | None, bool]]:
    """Each word in its own browser context (own cookies = own student): load the heatmap page through HAProxy,
    download the CSV, a batch at a time, until the words run out or ``enough(results so far)`` after a batch.
    Returns (word, replica cookie, whether the CSV holds that session's own word)."""
    out = []
    for start in range(0, len(words), BATCH):
        batch = []
        for word in words[start:start + BATCH]:   # pages of a batch load in parallel inside Chromium
            context = watch(browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000}))
            page = context.new_page()
            page.goto(heatmap_url(cluster, word))
            batch.append((word, context, page))
        for word, context, page in batch:
            wait_idle(page)
            assert exception_texts(page) == []
            text = download_csv(page)
            out.append((word, replica_of(context), text is not None and f",{word}," in text))
            context.close()
        if enough and enough(out):
            break
    return out


def test_without_affinity_some_downloads_hit_the_wrong_replica(browser):
    need_haproxy()
    cluster = Cluster(2, affinity=False)
    try:
        cluster.start()
        started = time.perf_counter()
        # one wrong download proves the point: the batches stop there (about half go wrong, so mostly after one)
        results = run_sessions(browser, cluster, WORDS, enough=lambda out: not all(ok for _, _, ok in out))
    finally:
        cluster.stop()
    good = sum(ok for _, _, ok in results)
    print(f"\n{len(results)} sessions without affinity: {good}/{len(results)} downloads right, "
          f"{time.perf_counter() - started:.1f} s")
    assert all(r is None for _, r, _ in results)   # no cookie was set
    assert good < len(results)


@pytest.fixture(scope="module")
def sticky():
    need_haproxy()
    cluster = Cluster(2)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def test_twenty_sessions_each_download_their_own_csv_with_affinity(browser, sticky):
    started = time.perf_counter()
    results = run_sessions(browser, sticky, WORDS)
    print(f"\n20 sessions with affinity: {time.perf_counter() - started:.1f} s; "
          f"replicas {sorted(r for _, r, _ in results)}")
    assert [w for w, _, ok in results if not ok] == []
    assert {r for _, r, _ in results} == {"r0", "r1"}   # round robin spread the students over both replicas


def test_static_files_reach_browsers_gzipped_through_haproxy(sticky):
    """The replicas gzip Streamlit's bundles (app.py's GzipStatic); HAProxy passes the encoding on unchanged, so its
    own ``compression`` is not needed for them (docs/deploy.md)."""
    path = main_bundle(sticky.url)
    headers, body = fetch(sticky.url + path)
    assert headers["content-encoding"] == "gzip" and len(gzip.decompress(body)) > 2.5 * len(body)


def test_a_killed_replica_hands_the_session_to_the_other(browser, sticky):
    """Last in the file: it kills one of the replicas of the shared ``sticky`` cluster."""
    context = watch(browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000}))
    try:
        page = context.new_page()
        page.goto(heatmap_url(sticky, "lighthouse"))
        wait_idle(page)
        first = replica_of(context)
        assert first in ("r0", "r1")
        sticky.kill_replica(int(first[1:]))
        page.reload()   # the page and its websocket go through HAProxy again, which redispatches them
        wait_idle(page)
        assert replica_of(context) == ("r1" if first == "r0" else "r0")   # HAProxy re-pinned the browser
        assert exception_texts(page) == []
        charts = page.locator('[data-testid="stPlotlyChart"]')
        charts.nth(3).wait_for(timeout=30_000)   # heatmap, bars, head grid, overview: the page was drawn again
        assert "lighthouse" in page.locator('[data-testid="stTextArea"] textarea').input_value()
        text = download_csv(page)   # served by the surviving replica, which now holds the session
        assert text is not None and ",lighthouse," in text
    finally:
        context.close()
