"""``export --to html`` and ``export --all --to html``: structure, escaping, folds,
diffs, and the incremental store export (the browser checks are in test_html_browser.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from html import unescape
from html.parser import HTMLParser

import msgspec
import pytest
from click.testing import CliRunner
from support.html_cases import CASES
from support.html_cases import HOSTILE
from support.html_cases import LONG_MARK
from support.html_cases import SCRIPT
from support.html_cases import golden_conversation
from support.html_cases import harness_of
from support.html_cases import hostile_conversation
from support.html_cases import native_input
from support.html_cases import tool_use_ids
from support.html_cases import walk
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.export import html
from txcodec.export import site
from txcodec.kit import registry
from txcodec.kit.load import streamed
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Command
from txcodec.model.common import Conversation
from txcodec.model.common import Epoch
from txcodec.model.common import Image
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import RedactedThinking
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common import Usage
from txcodec.model.loss import LossReport
from txcodec.model.loss import PageLoss
from txcodec.model.loss import UnreadLoss


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.relative_to(GOLDEN).as_posix())
def test_golden_exports_through_the_cli(case, tmp_path):
    out = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["export", str(native_input(case)), "--to", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    conv = golden_conversation(case)
    ids = set(re.findall(r'data-tool-use-id="([^"]*)"', page))
    assert ids == {html_escape(i) for i in tool_use_ids(conv)}
    for tid in ids:
        assert f'data-tool-result-for="{tid}"' in page or "no result" in page
    assert page.count("data-epoch=") == len(conv.epochs)
    assert page.count('data-role="subagent"') == sum(1 for _ in _children(conv))


def _children(conv):
    for child in conv.children:
        yield child
        yield from _children(child.conversation)


def test_a_page_gathers_no_loss_report_unless_asked(tmp_path):
    # a case whose report holds every kind a reader adds, the whole-file checks' included
    case = next(c for c in CASES if c.parent.name == "claude_code" and c.name == "lineage_genuine")
    full, unread = LossReport(), UnreadLoss()
    conv = api.to_common(api.load(native_input(case)), full)
    assert "field:unknown" in full.counts() and "record:mode" in full.counts()
    assert html.render(api.to_common(api.load(native_input(case)), unread)) == html.render(conv)
    assert unread.entries == []  # nothing kept
    out = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["export", str(native_input(case)), "--to", "html", "-o", str(out), "--loss"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"] == full.counts()  # --loss still reports it all


def test_a_page_reads_progress_lines_lean_as_a_full_read_would(tmp_path):
    # the page's read decodes progress lines lean (only forkedFrom typed): a well-formed one,
    # one the full decode refuses (an int uuid), and one that alone names a fork must give
    # the conversation a read with a full report gives
    base = GOLDEN / "claude_code" / "session_lineage" / "dd50435d-b1e2-5e1c-a256-7a6915db3c7b.jsonl"
    lines = [line for line in base.read_bytes().splitlines() if b"forkedFrom" not in line]
    sid = json.loads(lines[0])["sessionId"]
    progress = {
        "type": "progress",
        "uuid": "p-1",
        "parentUuid": None,
        "sessionId": sid,
        "timestamp": "2026-09-18T10:00:00.000Z",
        "toolUseID": "t",
        "parentToolUseID": "t",
        "data": {"type": "hook_progress", "forkedFrom": {"sessionId": "nested"}},
    }
    refused = {**progress, "uuid": 5}
    forked = {
        **progress,
        "uuid": "p-2",
        "forkedFrom": {"sessionId": "0d5e2b8c-3f4a-4b6c-9d1e-7a8b9c0d1e2f", "messageUuid": "m"},
    }
    for extra, fork in (([progress, refused], False), ([progress, refused, forked], True)):
        path = tmp_path / f"{sid}.jsonl"
        path.write_bytes(b"\n".join([*lines[:1], *(json.dumps(e).encode() for e in extra), *lines[1:]]) + b"\n")
        full = LossReport()
        expected = api.to_common(api.load(path), full)
        assert {"record:progress", "opaque"} <= set(full.counts())
        got = api.to_common(streamed(path, None), UnreadLoss())
        assert msgspec.json.encode(got) == msgspec.json.encode(expected)
        assert (b"0d5e2b8c" in msgspec.json.encode(got)) is fork


def test_a_page_s_read_keeps_of_tool_use_result_what_the_page_shows():
    # a page's read (PageLoss) decodes a toolUseResult object only by the keys the page and
    # the reader read: every Claude Code page must be the one a full read gives, and some
    # of the results must really have been trimmed (else the lean read went untested)
    trimmed = 0
    for case in (c for c in CASES if harness_of(c) == "claude_code"):
        path = native_input(case)
        session = streamed(path, None)
        if session is None:  # a case that is not one JSON Lines file is read whole
            continue
        page = api.to_common(session, PageLoss())
        full = api.to_common(api.load(path), LossReport())
        assert html.render(page) == html.render(full), case
        if msgspec.json.encode(page) != msgspec.json.encode(full):
            trimmed += 1
    assert trimmed >= 5


@pytest.mark.parametrize("value", [b"1e999", b'"\xff"'], ids=["number past a float", "not UTF-8"])
def test_a_page_reads_a_result_whose_skipped_key_a_full_read_refuses(value, tmp_path):
    # a number past a float's range or a string that is not UTF-8 in a toolUseResult makes a
    # full read refuse the record (read:malformed, its result lost); in a key the page does not
    # read, the page's read skips it and keeps the record: the page then shows the result the
    # full read lost (the ways the two differ)
    base = GOLDEN / "claude_code" / "agent_launch" / "7bb34311-2f27-53b1-870e-083a3ab1a166.jsonl"
    lines = base.read_bytes().splitlines()
    i = next(n for n, line in enumerate(lines) if b'"toolUseResult":{' in line)
    result_for = json.loads(lines[i])["message"]["content"][0]["tool_use_id"]
    lines[i] = lines[i].replace(b'"toolUseResult":{', b'"toolUseResult":{"elsewhere":' + value + b",", 1)
    path = tmp_path / base.name
    path.write_bytes(b"\n".join(lines) + b"\n")
    full = LossReport()
    whole = html.render(api.to_common(api.load(path), full))
    assert "read:malformed" in full.counts() and f'data-tool-result-for="{result_for}"' not in whole
    page = html.render(api.to_common(streamed(path, None), PageLoss()))
    assert f'data-tool-result-for="{result_for}"' in page


def html_escape(text: str) -> str:
    from markupsafe import escape

    return str(escape(text))


def test_export_refuses_to_overwrite(tmp_path, monkeypatch):
    out = tmp_path / "page.html"
    out.write_text("mine")

    def unread(*args, **kwargs):
        raise AssertionError("read before the refusal")

    monkeypatch.setattr("txcodec.cli.export.read_common", unread)  # told at once, not after a long read
    result = CliRunner().invoke(main, ["export", str(native_input(CASES[0])), "--to", "html", "-o", str(out)])
    assert result.exit_code == 1 and "already exists" in result.output
    assert out.read_text() == "mine"


def test_hostile_strings_are_escaped():
    page = html.render(hostile_conversation())
    # one script element: the page's own, whose hash the CSP names
    assert len(re.findall(r"<script", page, re.I)) == 1
    own = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(own.encode()).digest()).decode()
    csp = unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1))
    assert f"'sha256-{digest}'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    tags = _tags(page)
    assert [t for t, _ in tags if t in ("script", "iframe", "textarea", "svg", "object", "embed")] == ["script"]
    assert not [(t, a) for t, attrs in tags for a, _ in attrs if a.startswith("on")]  # no event handler
    hrefs = [v or "" for _, attrs in tags for a, v in attrs if a in ("href", "src")]
    assert hrefs and not [h for h in hrefs if not h.startswith(("https:", "data:image/png", "#"))]
    assert "data:image/svg" not in page  # an SVG can carry script: never embedded
    assert "&lt;script&gt;window.__pwned = 1" in page


# Markdown that takes each rule's edge: nesting, tables, code, links both kept and refused,
# images, raw HTML, entities, hard breaks.
MARKDOWN_EDGES = [
    '# Title\n\nSome *em*, **strong**, ~~gone~~, `code <b>`, a [link](https://example.com "t") and <https://a.b/c>.',
    "- one\n  - nested `x`\n- two\n\n1. first\n2) second\n\n> quote\n> > deeper",
    "| a | b |\n|:--|--:|\n| 1 | <i>2</i> |\n| `|` | \\| |",
    "```py\n<script>alert(1)</script>\n```\n\n    indented <code>\n\n***\n\nSetext\n---",
    '![alt *text*](https://example.com/x.png "t") ![ref][r] ![data](data:image/png;base64,AAAA)\n\n[r]: http://e/y.png',
    "[js](javascript:alert(1)) [vb](vbscript:x) [file](file:///etc/passwd) [page](data:text/html,<b>x</b>) "
    "[ok](mailto:a@b.c)",
    '<div onclick="x()">block html</div>\n\ninline <span>html</span> &amp; &copy; &#x3C; &bogus; '
    "line  \nbreak\\\nbreak",
    *HOSTILE,
]


def _assistant_markdown() -> list[str]:
    texts = list(MARKDOWN_EDGES)
    for case in CASES:
        for conv in walk(golden_conversation(case)):
            texts += [b.text for m in conv.messages if m.role == "assistant" for b in m.content if type(b) is Text]
    return texts


def test_both_markdown_renderers_give_the_same_html():
    pytest.importorskip("markdown_it_pyrs", reason="the fast extra (markdown-it-pyrs) is not installed")
    fast, pure = html._markdown(True), html._markdown(False)
    assert fast.__module__ != pure.__module__  # really two renderers
    texts = _assistant_markdown()
    assert len(texts) > 100
    for text in texts:
        # one known difference: a code fence left open at the end of the text keeps its
        # last line's LF in markdown-it-py only (invisible at the end of a <pre>)
        assert fast(text).replace("\n</code></pre>", "</code></pre>") == pure(text).replace(
            "\n</code></pre>", "</code></pre>"
        ), text[:300]


@pytest.mark.parametrize("native", [True, False], ids=["markdown-it-pyrs", "markdown-it-py"])
def test_markdown_images_are_links_and_bad_links_are_text(native):
    if native:
        pytest.importorskip("markdown_it_pyrs", reason="the fast extra (markdown-it-pyrs) is not installed")
    render = html._markdown(native)
    out = html._images(render(MARKDOWN_EDGES[4] + "\n\n" + MARKDOWN_EDGES[5] + "\n\n" + MARKDOWN_EDGES[6]))
    # a remote image would be a fetch: a link to its address, named by its alt text, instead;
    # a base64 data: image of a raster type is shown
    assert re.findall(r"<img [^>]*>", out) == ['<img src="data:image/png;base64,AAAA" alt="data" loading="lazy">']
    assert '<a class="image-link" href="https://example.com/x.png" title="t">alt text</a>' in out
    assert '<a class="image-link" href="http://e/y.png">ref</a>' in out and "!<a" not in out
    hrefs = re.findall(r'href="([^"]*)"', out)
    assert not [
        h for h in hrefs if h.split(":", 1)[0] in ("javascript", "vbscript", "file")
    ] and "data:text" not in " ".join(hrefs)
    assert "[js](javascript:alert(1))" in out  # a refused link stays as its text
    assert "&lt;div onclick=" in out and "&lt;span&gt;" in out and "<span>" not in out  # raw HTML shows as text


def test_markdown_images_in_links_and_refused_sources():
    out = str(
        html.markdown(
            "[![inner](https://e/i.png) ![d](data:image/gif;base64,R0lGOD==)](https://e/page) "
            '![svg](data:image/svg+xml;base64,PHN2Zz4=) ![bad](data:image/png;base64,A"B) ![](rel.png)'
        )
    )
    # inside a link the image is its alt text (links do not nest); an inline one stays an image
    assert (
        '<a href="https://e/page"><span class="image-link">inner</span> '
        '<img src="data:image/gif;base64,R0lGOD==" alt="d" loading="lazy"></a>' in out
    )
    assert "<img" not in out.replace('<img src="data:image/gif;base64,R0lGOD==" alt="d" loading="lazy">', "")
    assert "![svg](data:image/svg+xml;base64,PHN2Zz4=)" in out  # the renderer refuses an SVG: it stays text
    assert '<a class="image-link" href="rel.png">rel.png</a>' in out  # no alt text: named by its address


def _tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Tags().feed(page)
    return found


def test_long_output_is_folded_once(tmp_path):
    page = html.render(hostile_conversation())
    # 200 lines, each once: the fold holds the whole text, nothing is repeated for a preview
    assert page.count(LONG_MARK) == 200
    assert 'class="fold"' in page and "Show all 200 lines" in page


def test_persisted_output_replaces_its_preview():
    conv = Conversation(
        messages=[
            Message("assistant", [ToolUse("t1", "Bash", {"command": "seq 9999"}, "shell_exec")]),
            Message(
                "user",
                [
                    ToolResult(
                        "t1", "<persisted-output>PREVIEW-ONLY</persisted-output>", persisted_output="FULL-OUTPUT\n" * 50
                    )
                ],
            ),
        ]
    )
    page = html.render(conv)
    assert page.count("FULL-OUTPUT") == 50 and "PREVIEW-ONLY" not in page
    assert "saved by the client" in page


def test_edit_diff_from_structured_patch_and_from_strings():
    patch = [
        {"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 2, "lines": [" keep", "-gone", "+came", "+also"]}
    ]
    conv = Conversation(
        messages=[
            Message(
                "assistant",
                [
                    ToolUse("e1", "Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}, "modify_file"),
                    ToolUse("e2", "replace", {"file_path": "b.py", "old_string": "one\ntwo", "new_string": "one\n2"}),
                ],
            ),
            Message(
                "user",
                [
                    ToolResult("e1", "ok", structured={"filePath": "a.py", "structuredPatch": patch}),
                    ToolResult("e2", "ok"),
                ],
            ),
        ]
    )
    page = html.render(conv)
    first, second = page.split('data-tool-use-id="e2"')
    assert (
        "@@ -3,1 +3,2 @@" in first
        and '<div class="del">-gone</div>' in first
        and '<div class="add">+also</div>' in first
    )
    assert '<div class="del">-x</div>' not in first  # the client's patch wins over the strings
    assert '<div class="del">-two</div>' in second and '<div class="add">+2</div>' in second
    assert (
        '<span class="chip">edit</span><span class="name">replace' in second
    )  # Gemini CLI's replace is an edit although its kind is generic


def test_compiled_templates_are_only_a_cache(tmp_path, monkeypatch):
    import jinja2

    def render() -> str:
        env = jinja2.Environment(
            loader=jinja2.DictLoader({"t": "{{ x }}!"}), autoescape=True, bytecode_cache=html._template_cache()
        )
        return env.get_template("t").render(x="<a>")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert render() == "&lt;a&gt;!"
    (kept,) = (tmp_path / "cache" / "txcodec" / "templates").iterdir()  # compiled once, kept
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])  # a damaged entry is compiled again, and replaced
    assert render() == "&lt;a&gt;!" and kept.read_bytes() == whole
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # a cache that cannot be written
    assert render() == "&lt;a&gt;!"


def test_diff_lines_escaped_together_or_one_by_one():
    hunks = [
        html.Hunk("@@ <h> @@", [("add", "+<b>"), ("del", "-a&b")]),
        html.Hunk("", [("ctx", " x\ny<i>")]),
        html.Hunk("@@", []),
    ]
    assert str(html.diff(hunks)) == (
        '<div class="diff"><div class="hunk">@@ &lt;h&gt; @@</div><div class="add">+&lt;b&gt;</div>'
        '<div class="del">-a&amp;b</div><div class="ctx"> x\ny&lt;i&gt;</div><div class="hunk">@@</div></div>'
    )


def test_todos_images_and_price_hook():
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    conv = Conversation(
        meta=Meta(models=["m1"]),
        messages=[
            Message(
                "assistant",
                [
                    ToolUse(
                        "t",
                        "TodoWrite",
                        {
                            "todos": [
                                {"content": "write tests", "status": "completed"},
                                {"content": "ship", "status": "in_progress"},
                            ]
                        },
                        "manage_todos",
                    )
                ],
                model="m1",
                usage=Usage(1000, 2000),
            ),
            Message("user", [ToolResult("t", [Text("done"), Image("image/png", png)])]),
        ],
    )
    page = html.render(conv, price=lambda row: row.total_tokens / 1000)
    assert '<li class="st-completed"><span class="box"></span>write tests</li>' in page
    assert f'src="data:image/png;base64,{png}"' in page
    assert "$3.00" in page
    unpriced = html.render(conv).split('data-role="header"')[1].split("</header>")[0]
    assert "$" not in unpriced and "<th>cost</th>" not in unpriced  # no price function: no cost shown


def _between(page: str, start: str, end: str) -> str:
    assert start in page, start
    return page.split(start, 1)[1].split(end, 1)[0]


def test_every_part_the_issue_lists_is_drawn_as_such():
    """The parts issue 14 names that no golden page is checked for: thinking of each kind,
    a slash command, a search, an API error, a compaction with its summary, a subagent's
    id under its call, and a call's own token usage."""
    child = Conversation(messages=[Message("assistant", [Text("child report")], model="m")])
    conv = Conversation(
        messages=[
            Message("user", [Text("find it")]),
            Message(
                "assistant",
                [
                    Thinking("weighing <options>"),
                    Thinking("", signature="c2ln"),
                    RedactedThinking("ZW5j"),
                    Thinking("", encrypted="gAAA"),
                    ToolUse("t_grep", "Grep", {"pattern": "TODO<x>", "path": "src"}, "code_search"),
                    ToolUse("t_task", "Task", {"description": "look around", "prompt": "go"}, "subagent_task"),
                ],
                model="m",
                usage=Usage(1500, 20, cache_read_input_tokens=12_000),
                stop_reason="tool_use",
            ),
            Message("user", [ToolResult("t_grep", "src/a.py:3: # TODO<x>"), ToolResult("t_task", "all seen")]),
            Message("user", [Command("/review", args="a<b", output="reviewed <ok>")]),
            Message("assistant", [Text("overloaded")], model="m", api_error=True),
            Message("user", [Text("what came before, summed up")], compact_summary=True),
            Message("user", [Text("after the compaction")]),
        ],
        children=[Child(ChildLink("toolUseResult.agentId", tool_use_id="t_task", agent_id="agent-7"), child)],
        epochs=[Epoch(5, trigger="auto", pre_tokens=150_000)],
    )
    page = html.render(conv)
    thinking = re.findall(
        r'<(?:details|div) class="thinking[^"]*" data-role="thinking">(.*?)</(?:details|div)>', page, re.S
    )
    assert len(thinking) == 4
    assert "weighing &lt;options&gt;" in thinking[0]
    assert thinking[1].startswith("Redacted thinking") and thinking[2].startswith("Redacted thinking")
    assert thinking[3].startswith("Encrypted reasoning")
    assert 'data-role="raw"' not in page  # each block has its own drawing
    grep = _between(page, 'data-tool-use-id="t_grep"', "</details>")
    assert "TODO&lt;x&gt; in src" in grep and 'data-tool-result-for="t_grep"' in grep and "src/a.py:3" in grep
    command = _between(page, 'data-role="command"', "</div>\n")
    assert '<code class="slash">/review a&lt;b</code>' in command and "reviewed &lt;ok&gt;" in command
    assert re.search(
        r'<article class="msg api-error" data-role="assistant">\s*<div class="who"><span class="role">API error', page
    )
    compaction = _between(page, 'data-role="compaction" data-epoch="1"', "</div>\n</div>")
    assert "Context compacted (auto) at 150k tokens" in compaction
    assert page.index('data-epoch="1"') < page.index("Compaction summary") < page.index("what came before, summed up")
    task = _between(page, 'data-tool-use-id="t_task"', '<div class="sub-body">')
    assert 'data-role="subagent" data-agent-id="agent-7"' in task  # nested under the call that started it
    assert '<span class="usage" data-role="call-usage">in 1.5k · out 20 · cache read 12k</span>' in page


def _store(tmp_path):
    """A Claude Code store with two golden sessions, one with subagents in its side folder."""
    project = tmp_path / "store" / "-home-dev-shop"
    project.mkdir(parents=True)
    for name in ("edit_read_write", "subagent_lineage"):
        case = next(c for c in CASES if c.name == name)
        for p in case.iterdir():
            if p.suffix == ".jsonl":
                shutil.copy(p, project / p.name)
            elif p.is_dir():
                shutil.copytree(p, project / p.name)
    return tmp_path / "store"


def _export_all(store, out, harness="claude_code"):
    result = CliRunner().invoke(
        main, ["export", "--all", "--to", "html", "-o", str(out), "--root", str(store), "--from", harness]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_store_export_is_incremental(tmp_path):
    store, out = _store(tmp_path), tmp_path / "site"
    assert "2 pages written, 0 unchanged" in _export_all(store, out)
    index = (out / "index.html").read_text()
    pages = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html") if p.name != "index.html")
    assert len(pages) == 2 and all(f'href="{p}"' in index for p in pages)
    assert 'data-search="guard the division' in index  # the first prompt, lower-cased for search
    stamps = {p: (out / p).stat().st_mtime_ns for p in pages}

    assert "0 pages written, 2 unchanged" in _export_all(store, out)
    main_file = next(store.rglob("9e0e95a4*.jsonl"))
    os.utime(main_file, ns=(1, 1))  # touched, same bytes: hashed, not rendered
    assert "0 pages written, 2 unchanged" in _export_all(store, out)
    assert {p: (out / p).stat().st_mtime_ns for p in pages} == stamps

    sub = next(p for p in store.rglob("*.jsonl") if "subagents" in p.parts)
    sub.write_bytes(sub.read_bytes())  # same bytes again
    with sub.open("ab") as f:
        f.write(b"\n")  # a side file changed: that session's page is made again
    assert "1 pages written, 1 unchanged" in _export_all(store, out)


def _stamp(path):
    st = path.stat()
    return st.st_mtime_ns, st.st_ino


def test_an_unchanged_site_writes_nothing(tmp_path):
    """With nothing changed, neither index.html nor the manifest is written again (a run is a
    stat per source); a run over fewer sessions, or with another title, writes the index anew."""
    store, out = _store(tmp_path), tmp_path / "site"
    _export_all(store, out)
    index, manifest = out / "index.html", out / site.MANIFEST
    before = (_stamp(index), _stamp(manifest))
    assert "0 pages written, 2 unchanged" in _export_all(store, out)
    assert (_stamp(index), _stamp(manifest)) == before

    wanted = next(store.rglob("9e0e95a4*.jsonl"))
    rows = [{"harness": "claude_code", "session_id": wanted.stem, "path": str(wanted)}]
    site.export_store(rows, out)  # one session of the two: the index lists it alone
    assert _stamp(index) != before[0] and index.read_text().count('data-role="session"') == 1
    shown = index.read_bytes()
    site.export_store(rows, out, title="Other")
    assert index.read_bytes() != shown and "Other" in index.read_text()
    assert "0 pages written, 2 unchanged" in _export_all(store, out)
    assert index.read_text().count('data-role="session"') == 2


def test_store_export_takes_list_s_filters(tmp_path):
    """``export --all --to html`` selects sessions as ``list`` does (here ``--grep``):
    only the matching session gets a page, and the index lists only it."""
    store, out = _store(tmp_path), tmp_path / "site"
    wanted = next(store.rglob("9e0e95a4*.jsonl"))
    word = "guard the division"
    assert word in wanted.read_text(encoding="utf-8").lower()
    others = [p for p in store.glob("*/*.jsonl") if p != wanted]
    assert others and all(word not in p.read_text(encoding="utf-8").lower() for p in others)
    result = CliRunner().invoke(
        main,
        [
            "export",
            "--all",
            "--to",
            "html",
            "-o",
            str(out),
            "--root",
            str(store),
            "--from",
            "claude_code",
            "--grep",
            word,
        ],
    )
    assert result.exit_code == 0, result.output
    pages = [p for p in out.rglob("*.html") if p.name != "index.html"]
    assert [p.stem for p in pages] == [wanted.stem]
    assert (out / "index.html").read_text().count('data-role="session"') == 1


def test_pages_read_their_session_as_it_is_decoded(tmp_path, monkeypatch):
    """A Claude Code session is read for its page as convert reads it, as it is decoded
    (so that its bytes and typed records are never all held beside the page): one page and
    a whole store are exported with ``api.load``, which holds them all, out of reach."""
    from txcodec import api as api_module

    def whole(*args, **kwargs):
        raise AssertionError("the session was loaded whole")

    store = _store(tmp_path)
    monkeypatch.setattr(api_module, "load", whole)
    _export_all(store, tmp_path / "site")
    assert len([p for p in (tmp_path / "site").rglob("*.html") if p.name != "index.html"]) == 2
    session = next(store.rglob("9e0e95a4*.jsonl"))
    result = CliRunner().invoke(main, ["export", str(session), "--to", "html", "-o", str(tmp_path / "one.html")])
    assert result.exit_code == 0, result.output
    # the same page, but for the store's link back to its index
    back = b'  <nav class="back"><a href="../index.html" data-role="index-link">\xe2\x86\x90 All sessions</a></nav>\n'
    site_page = (tmp_path / "site" / "claude_code" / f"{session.stem}.html").read_bytes()
    assert back in site_page
    assert (tmp_path / "one.html").read_bytes() == site_page.replace(back, b"")


def test_unsafe_session_id_does_not_name_the_page():
    taken: set[str] = set()
    name = site.page_name({"harness": "codex", "session_id": "../../etc/passwd", "path": "/x"}, taken)
    assert re.fullmatch(r"codex/[0-9a-f]{20}\.html", name)
    assert site.page_name({"harness": "codex", "session_id": "abc", "path": "/a"}, taken) == "codex/abc.html"
    assert site.page_name({"harness": "codex", "session_id": "abc", "path": "/b"}, taken) != "codex/abc.html"


def test_index_escapes_and_groups():
    index = html.render_index(
        [
            {
                "href": "a.html",
                "title": SCRIPT,
                "prompt": "p",
                "harness": "pi",
                "project": "/p1",
                "updated": "2026-01-02T00:00:00Z",
                "messages": 2,
            },
            {
                "href": "b.html",
                "title": "two",
                "prompt": "",
                "harness": "codex",
                "project": "/p2",
                "updated": "2026-01-03T00:00:00Z",
                "messages": 1,
            },
        ]
    )
    assert len(re.findall(r"<script", index)) == 1
    assert index.index("/p2") < index.index("/p1")  # the most recently active project first


def test_lone_surrogate_is_written_visibly():
    import io

    conv = Conversation(messages=[Message("assistant", [Text("half a pair: \ud83d here")])])
    out = io.BytesIO()
    html.write(conv, out)
    assert "half a pair: \\ud83d here" in out.getvalue().decode("utf-8")


# aider's history holds no tool calls (they are written as text): its export is in test_aider.py
STORES = [
    name
    for name, h in sorted(registry.harnesses().items())
    if h.store is not None and h.write is not None and name != "aider"
]


# opencode and Kilo install a session through the client's own ``import``: a real client
_CLIENT_INSTALLS = {"opencode", "kilo"}


@pytest.mark.parametrize(
    "harness", [pytest.param(h, marks=pytest.mark.real_client) if h in _CLIENT_INSTALLS else h for h in STORES]
)
def test_store_export_for_every_harness(harness, tmp_path):
    """A session written and installed as each harness's store holds it, then exported
    from that store: one page, with the calls of the conversation."""
    from txcodec import api

    case = next(c for c in CASES if c.name == "edit_read_write")
    written, _ = api.convert(native_input(case), harness)
    # opencode and Kilo find their database in a data folder named after the app
    root = tmp_path / "store" / {"opencode": "opencode", "kilo": "kilo"}.get(harness, "root")
    api.install(written, harness, root)
    _export_all(root, tmp_path / "site", harness)
    pages = [p for p in (tmp_path / "site").rglob("*.html") if p.name != "index.html"]
    assert len(pages) == 1 and pages[0].parent.name == harness
    page = pages[0].read_text(encoding="utf-8")
    installed = root / written.main  # a session of several files (OpenHands) is read whole from its store
    conv = api.to_common(api.load(installed if installed.is_file() else written.files[written.main], harness))
    assert tool_use_ids(conv)
    for tid in tool_use_ids(conv):
        assert f'data-tool-use-id="{html_escape(tid)}"' in page
    assert pages[0].relative_to(tmp_path / "site").as_posix() in (tmp_path / "site" / "index.html").read_text()
