"""The HTML pages in a real browser: headless Chromium from the system's packages,
driven by Playwright (never a browser Playwright downloads: the machine is offline).

For every golden session: the page loads with no console error and no request but its
own file; the DOM holds every tool-use id and every assistant text of the Common
conversation; collapsing and expanding work; a screenshot is kept as an artifact
(``$TXCODEC_ARTIFACTS`` when set, else pytest's temporary folder). The hostile page
runs none of the script its strings carry.

Without a browser these tests skip, saying why, unless ``TXCODEC_REQUIRE_BROWSER=1``
(as CI sets it) makes a missing browser a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.browser import chromium
from support.html_cases import CASES
from support.html_cases import LONG_MARK
from support.html_cases import SCRIPT
from support.html_cases import assistant_texts
from support.html_cases import expected_text
from support.html_cases import golden_conversation
from support.html_cases import hostile_conversation
from support.html_cases import tool_use_ids as all_tool_use_ids
from support.paths import GOLDEN

from txcodec.export import html


@pytest.fixture(scope="module")
def browser():
    with chromium() as opened:
        yield opened


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    where = os.environ.get("TXCODEC_ARTIFACTS")
    if where:
        path = Path(where) / "html-screenshots"
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("html-screenshots")


class Loaded:
    """A page opened from a file, with what it logged and requested."""

    def __init__(self, browser, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.url = path.resolve().as_uri()
        self.page = browser.new_page(viewport={"width": 1100, "height": 900})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("dialog", lambda d: (self.errors.append("dialog: " + d.message), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(self.url, wait_until="load")

    def foreign_requests(self) -> list[str]:
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]


def _write(tmp_path: Path, conv, name: str = "page.html") -> Path:
    path = tmp_path / name
    path.write_text(html.render(conv), encoding="utf-8")
    return path


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.relative_to(GOLDEN).as_posix())
def test_golden_page_in_browser(browser, artifacts, case, tmp_path):
    conv = golden_conversation(case)
    loaded = Loaded(browser, _write(tmp_path, conv))
    page = loaded.page
    try:
        assert loaded.errors == []
        assert loaded.foreign_requests() == []
        ids = page.eval_on_selector_all("[data-tool-use-id]", "els => els.map(e => e.dataset.toolUseId)")
        assert sorted(ids) == sorted(all_tool_use_ids(conv))
        results = set(
            page.eval_on_selector_all("[data-tool-result-for]", "els => els.map(e => e.dataset.toolResultFor)")
        )
        assert results <= set(ids) | _all_result_ids(conv)
        body = " ".join(page.eval_on_selector("main", "m => m.textContent").split())
        for text in assistant_texts(conv):
            assert expected_text(text) in body
        assert page.locator("[data-epoch]").count() == len(conv.epochs)
        assert page.locator("article[data-role]").count() > 0 or not conv.messages
        _check_toggles(page)
        shot = case.relative_to(GOLDEN).as_posix().replace("/", "-") + ".png"
        page.screenshot(path=str(artifacts / shot), full_page=True)
    finally:
        page.close()


def _all_result_ids(conv) -> set[str]:
    from support.html_cases import walk

    from txcodec.model.common import ToolResult

    return {b.tool_use_id for c in walk(conv) for m in c.messages for b in m.content if type(b) is ToolResult}


def _check_toggles(page) -> None:
    details = page.locator("main details")
    if details.count():
        first = details.first
        before = first.evaluate("d => d.open")
        first.locator("summary").first.click()
        assert first.evaluate("d => d.open") is (not before)
        page.click('button[data-action="collapse"]')
        assert page.eval_on_selector_all("main details", "ds => ds.filter(d => d.open).length") == 0
        page.click('button[data-action="expand"]')
        assert page.eval_on_selector_all("main details", "ds => ds.filter(d => !d.open).length") == 0
        first.locator("summary").first.click()
        assert first.evaluate("d => d.open") is False


def test_hostile_page_runs_no_script(browser, artifacts, tmp_path):
    loaded = Loaded(browser, _write(tmp_path, hostile_conversation(), "hostile.html"))
    page = loaded.page
    try:
        page.click('button[data-action="expand"]')
        for link in page.locator("main a").all():  # a javascript: link would run on a click
            assert (link.get_attribute("href") or "").startswith("https:")
        assert page.evaluate("window.__pwned") is None
        assert loaded.errors == []  # not even a script the CSP had to block
        assert loaded.foreign_requests() == []  # the remote image and iframe stayed text
        assert page.locator("main script, main iframe, main textarea, main svg").count() == 0
        text = page.eval_on_selector("main", "m => m.textContent")
        assert SCRIPT in text  # shown as text
        fold = page.locator(".fold").filter(has_text=LONG_MARK).first
        height = fold.evaluate("f => f.querySelector('pre').clientHeight")
        fold.locator("button.unfold").click()
        assert fold.evaluate("f => f.classList.contains('open')")
        assert fold.evaluate("f => f.querySelector('pre').clientHeight") > height
        page.screenshot(path=str(artifacts / "hostile.png"), full_page=True)
    finally:
        page.close()


def test_markdown_images_make_no_request(browser, tmp_path):
    from txcodec.model.common import Conversation
    from txcodec.model.common import Message
    from txcodec.model.common import Text

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    text = f"![remote](https://example.invalid/r.png) ![dot](data:image/png;base64,{png}) [![linked](http://example.invalid/l.png)](https://example.invalid/)"
    loaded = Loaded(browser, _write(tmp_path, Conversation(messages=[Message("assistant", [Text(text)], model="m")])))
    page = loaded.page
    try:
        assert loaded.errors == [] and loaded.foreign_requests() == []
        images = page.eval_on_selector_all("main .md img", "is => is.map(i => [i.alt, i.complete && i.naturalWidth])")
        assert images == [["dot", 1]]  # the data: image is shown
        links = page.eval_on_selector_all("main .md a", "as => as.map(a => [a.textContent, a.getAttribute('href')])")
        assert links == [["remote", "https://example.invalid/r.png"], ["linked", "https://example.invalid/"]]
    finally:
        page.close()


def test_index_search_filters_rows(browser, tmp_path):
    rows = [
        {
            "href": f"{i}.html",
            "title": t,
            "prompt": p,
            "harness": "codex",
            "project": proj,
            "updated": f"2026-01-0{i}",
            "messages": 1,
        }
        for i, (t, p, proj) in enumerate(
            [
                ("fix the parser", "the parser fails", "/a"),
                ("write docs", "docs please", "/a"),
                ("benchmarks", "measure the parser", "/b"),
            ],
            1,
        )
    ]
    path = tmp_path / "index.html"
    path.write_text(html.render_index(rows), encoding="utf-8")
    loaded = Loaded(browser, path)
    page = loaded.page
    try:
        page.fill("#search", "parser")
        visible = page.eval_on_selector_all(
            "li[data-search]", "ls => ls.filter(l => !l.hidden).map(l => l.querySelector('a').textContent)"
        )
        assert sorted(visible) == ["benchmarks", "fix the parser"]
        page.fill("#search", "docs")
        assert page.locator("section.project:not([hidden])").count() == 1
        assert page.inner_text("#count") == "1"
        assert loaded.errors == [] and loaded.foreign_requests() == []
    finally:
        page.close()
