"""Remake docs/html-page.png: the bundled sample session as an HTML page, in headless
Chromium (the system's), 960 pixels wide. Run: python docs/html_screenshot.py"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from txcodec import api
from txcodec.cli.store import sample_path
from txcodec.export import html

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def main() -> None:
    out = Path(__file__).with_name("html-page.png")
    browser = next(filter(None, map(shutil.which, ("chromium-headless-shell", "chromium"))), None)
    if browser is None:
        sys.exit("no headless Chromium on PATH")
    conv = api.to_common(api.load(sample_path("claude_code")))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_file = Path(tmp) / "page.html"
        page_file.write_text(html.render(conv), encoding="utf-8")
        chromium = p.chromium.launch(executable_path=browser, args=ARGS)
        page = chromium.new_page(viewport={"width": 960, "height": 800})
        page.goto(page_file.as_uri())
        page.screenshot(path=str(out), full_page=True)
        chromium.close()
    print(out, out.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
