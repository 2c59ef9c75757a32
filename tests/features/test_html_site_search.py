"""Issue 34 item 17: a store's static pages link back to its index, the index searches the
full text of every session (built offline at export time: a word only in a tool result is
found), and a page's heading is the whole title, never cut with "…"."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from support.browser import chromium

from txcodec import api
from txcodec.cli import main
from txcodec.export import html
from txcodec.export import search
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse

ONLY_IN_RESULT = "quokkaberry"
LONG_PROMPT = "Please look at the checkout flow " + " ".join(f"step{i}" for i in range(60)) + " and the empty cart"


def _conversation(sid: str, prompt: str, output: str) -> Conversation:
    return Conversation(
        meta=Meta(id=sid, cwd="/home/dev/shop"),
        messages=[
            Message("user", [Text(prompt)]),
            Message("assistant", [ToolUse("toolu_s1", "Bash", {"command": "cat notes.txt"})]),
            Message("user", [ToolResult("toolu_s1", output, is_error=False)]),
            Message("assistant", [Text("Read it.")]),
        ],
    )


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    for sid, prompt, output in (
        ("5d7f3b9e-1111-4a2b-8c3d-000000000001", LONG_PROMPT, f"the {ONLY_IN_RESULT} is in the notes"),
        ("5d7f3b9e-2222-4a2b-8c3d-000000000002", "Tidy the README", "nothing to see"),
    ):
        written, _ = api.convert(_conversation(sid, prompt, output), "claude_code", cwd="/home/dev/shop")
        for rel, data in written.files.items():
            (root / "-home-dev-shop" / Path(rel).name).parent.mkdir(parents=True, exist_ok=True)
            (root / "-home-dev-shop" / Path(rel).name).write_bytes(data)
    return root


def _export(tmp_path: Path) -> Path:
    out = tmp_path / "site"
    result = CliRunner().invoke(
        main,
        ["export", "--all", "--to", "html", "-o", str(out), "--root", str(_store(tmp_path)), "--from", "claude_code"],
    )
    assert result.exit_code == 0, result.output
    return out


def test_words_cover_tool_results_inputs_and_subagents() -> None:
    conv = _conversation("s", "hello there", f"a {ONLY_IN_RESULT} here")
    found = search.words(conv).split()
    assert ONLY_IN_RESULT in found and "notes" in found and "bash" in found
    assert len(found) == len(set(found))
    assert search.words(conv, budget=10).count(" ") < 3


def test_the_index_carries_each_session_s_words_and_pages_link_back(tmp_path: Path) -> None:
    out = _export(tmp_path)
    index = (out / "index.html").read_text()
    rows = re.findall(r'<li data-role="session"[^>]*>', index)
    assert len(rows) == 2
    assert sum(ONLY_IN_RESULT in row for row in rows) == 1
    assert ONLY_IN_RESULT not in "".join(re.findall(r'data-search="[^"]*"', index))  # not a title nor a prompt
    for page in (p for p in out.rglob("*.html") if p.name != "index.html"):
        href = re.search(r'<a href="([^"]+)" data-role="index-link">', page.read_text()).group(1)
        assert (page.parent / href).resolve() == (out / "index.html").resolve()


def test_the_heading_is_the_whole_title() -> None:
    conv = _conversation("s", LONG_PROMPT, "ok")
    page = html.render(conv)
    heading = re.search(r"<h1>(.*?)</h1>", page, re.S).group(1)
    assert heading == LONG_PROMPT and "…" not in heading
    assert re.search(r"<title>(.*?)</title>", page).group(1).endswith("…")  # the tab's title stays short


def test_the_index_search_finds_a_word_only_in_a_tool_result_in_a_browser(tmp_path: Path) -> None:
    out = _export(tmp_path)
    with chromium() as browser:
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((out / "index.html").as_uri())
        page.fill("#search", ONLY_IN_RESULT)
        assert page.inner_text("#count") == "1"
        visible = page.locator("li[data-role=session]:not([hidden]) a")
        assert visible.count() == 1
        visible.first.click()
        page.wait_for_selector("[data-role=index-link]")
        assert ONLY_IN_RESULT in page.content()
        page.click("[data-role=index-link]")
        page.wait_for_selector("#search")
        page.fill("#search", "empty cart")  # both words, in the long first prompt
        assert page.inner_text("#count") == "1"
        page.fill("#search", "zzznotaword")
        assert page.inner_text("#count") == "0"
        page.fill("#search", "")
        assert page.inner_text("#count") == "2"
        page.fill("#since", "2999-01-01")  # the filters: dates, harness, project
        assert page.inner_text("#count") == "0"
        page.fill("#since", "")
        page.select_option("#harness", "claude_code")
        assert page.inner_text("#count") == "2"
        page.select_option("#project", "/home/dev/shop")
        assert page.inner_text("#count") == "2"
        # each session: prompt, call, answer (the result carrier is no message of its own: model.summary)
        assert "2 sessions · 6 messages" in page.inner_text("[data-role=project-totals]")
        assert not errors
