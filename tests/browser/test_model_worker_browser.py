"""A student who leaves a page while the decoder is being prepared stops nothing: the preparation runs in the
model worker, finishes, leaves no half-written folder, and the next decoder page draws at once. This is also the
suite's one real conversion of the decoder's GGUF into an empty cache: shown with its progress, done once, reused.

Found as a new user: with an empty cache, open the Masks lab (it loads the decoder), go Home 8 s later — the
conversion used to die with the page, leaving only an empty ``…tmp<pid>-<thread>`` folder behind."""
import time

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS, Server, exception_texts, need_chromium, open_page, wait_idle, watch

from explorer.model import embedded, registry


@pytest.mark.slow   # converts the decoder's GGUF once more, into an empty cache (~30 s)
def test_leaving_the_page_during_preparation_does_not_stop_it(tmp_path, monkeypatch):
    need_chromium()
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path))   # the server's cache, as this process reads it
    spec = registry.EMBEDDED[registry.EMBEDDED_DECODER]
    target = tmp_path / f"{spec.name}-{spec.sha256[:16]}"
    assert embedded.needs_preparation(spec.name)
    server = Server(env={"EXPLORER_CACHE": str(tmp_path), "EXPLORER_PRELOAD": ""})
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = watch(browser.new_context())
            page = context.new_page()
            page.goto(f"{server.url}/lab_masks")
            # the lab loads the encoder first, then the decoder: wait for the decoder's own conversion message
            page.get_by_text("Converting the GGUF", exact=False).first.wait_for(timeout=120_000)
            assert not (target / "complete").exists()        # we really left in the middle
            page.goto(f"{server.url}/")                     # the student leaves the page
            wait_idle(page)
            context.close()
            deadline = time.monotonic() + 240
            while not (target / "complete").is_file() and time.monotonic() < deadline:
                time.sleep(1)
            assert (target / "complete").is_file(), sorted(p.name for p in tmp_path.iterdir())
            assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []
            assert not embedded.needs_preparation(spec.name)
            again = open_page(browser, f"{server.url}/lab_masks")
            assert exception_texts(again) == [] and again.external == []
            assert again.get_by_text("Converting", exact=False).count() == 0   # reused, not converted again
            browser.close()
    finally:
        server.stop()
