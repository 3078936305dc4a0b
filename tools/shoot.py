"""Screenshots of every page, for comparing a change before and after (a developer's tool, not a test).

    .venv/bin/python tools/shoot.py OUT_DIR [page ...]

Starts the real server on a free port, opens each page of app.py in headless Chromium, waits for the script to
finish, and saves OUT_DIR/<page>.png; prints any exception text and any request that tried to leave the machine.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from chromium import CHROMIUM, CHROMIUM_ARGS, Server, app_pages, exception_texts, open_page  # noqa: E402


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(sys.argv[2:])
    from playwright.sync_api import sync_playwright
    server = Server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for path, title in app_pages():
                name = path or "home"
                if wanted and name not in wanted:
                    continue
                page = open_page(browser, f"{server.url}/{path}", timeout=240)
                height = page.evaluate("() => Math.max(...[...document.querySelectorAll("
                                       "'[data-testid=\"stMain\"], [data-testid=\"stMainBlockContainer\"]')]"
                                       ".map(e => e.scrollHeight), 800)")
                page.set_viewport_size({"width": 1400, "height": min(int(height) + 80, 9000)})
                page.wait_for_timeout(1200)
                page.screenshot(path=str(out / f"{name}.png"), full_page=True)
                print(name, title, "exceptions:", exception_texts(page), "external:", page.external, flush=True)
                page.context.close()
            browser.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
