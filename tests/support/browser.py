"""Headless Chromium from the system's packages under Playwright, for every test of a page:
never a browser Playwright downloads (the machine is offline); without one the test skips
saying why, unless TXCODEC_REQUIRE_BROWSER=1 (as CI sets it) makes that a failure."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _missing(reason: str) -> None:
    if os.environ.get("TXCODEC_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (TXCODEC_REQUIRE_BROWSER=1 requires the browser tests)")
    pytest.skip(f"{reason}: install the system's chromium-headless-shell and `pip install playwright` to run them")


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    try:
        from playwright.sync_api import Error
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed")
    executable = os.environ.get("TXCODEC_BROWSER") or next(filter(None, map(shutil.which, BROWSERS)), None)
    if not executable:
        _missing(f"no headless Chromium on PATH (looked for {', '.join(BROWSERS)})")
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=executable, args=ARGS)
        except Error as exc:
            _missing(f"{executable} does not start under Playwright: {str(exc).splitlines()[0]}")
        try:
            yield browser
        finally:
            browser.close()
