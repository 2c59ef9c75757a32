"""Sessions the HTML tests render: every golden case (its native input file) and a
hostile conversation whose strings try to run script or break out of the page."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from support.paths import GOLDEN
from txcodec import api
from txcodec.export import html
from txcodec.kit import registry
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Conversation
from txcodec.model.common import Epoch
from txcodec.model.common import Image
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common import Usage

# files in a golden case that are expectations or helpers, not the session itself
_NOT_INPUT = {
    "case.toml",
    "common.json",
    "expected.common.json",
    "expected.loss.json",
    "loss.json",
    "prompts.json",
    "input.jsonl",
    "make_cases.py",
    "scenario.json",
}

# the golden cases, and the scenario library's sessions recorded with the real clients
CASES = sorted(p for p in [*GOLDEN.glob("*/*"), *GOLDEN.glob("*/scenarios/*")] if p.is_dir() and p.name != "scenarios")


def native_input(case: Path) -> Path:
    from txcodec.kit.registry import session_in_folder

    folder_session = session_in_folder(case)  # a case that is a session folder (Kimi CLI, Mistral Vibe)
    if folder_session is not None:
        return folder_session
    named = {
        n for h in registry.harnesses().values() if h.store is not None for n in h.store.file_names
    }  # aider's history
    found = [
        p
        for p in case.iterdir()
        if p.is_file()
        and p.name not in _NOT_INPUT
        and not p.name.startswith("written")
        and (p.suffix in (".jsonl", ".json", ".zst") or p.name in named)
    ]
    messages = [p for p in found if p.name.endswith(".messages.json")]  # cline: the record beside it is not the session
    found = messages or found
    found += [p for p in case.iterdir() if p.is_dir() and session_in_folder(p) == p]  # OpenHands: a folder
    assert len(found) == 1, f"{case}: expected one session file, found {[p.name for p in found]}"
    return found[0]


def harness_of(case: Path) -> str:
    return case.relative_to(GOLDEN).parts[0]


def golden_conversation(case: Path) -> Conversation:
    return api.to_common(api.load(native_input(case), harness_of(case)))


def walk(conv: Conversation):
    yield conv
    for child in conv.children:
        yield from walk(child.conversation)


def tool_use_ids(conv: Conversation) -> set[str]:
    return {b.id for c in walk(conv) for m in c.messages for b in m.content if type(b) is ToolUse}


def assistant_texts(conv: Conversation) -> list[str]:
    return [
        b.text
        for c in walk(conv)
        for m in c.messages
        if m.role == "assistant"
        for b in m.content
        if type(b) is Text and b.text.strip()
    ]


class _TextOf(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible_text(markup: str) -> str:
    """The text a fragment of HTML shows, whitespace collapsed (what textContent gives)."""
    parser = _TextOf()
    parser.feed(markup)
    return " ".join("".join(parser.parts).split())


def expected_text(assistant_text: str) -> str:
    """An assistant text as the page shows it: rendered as Markdown, then its text."""
    return visible_text(str(html.markdown(assistant_text)))


SCRIPT = "<script>window.__pwned = 1; console.error('pwned')</script>"
HOSTILE = [
    SCRIPT,
    "</textarea></title></style><script>window.__pwned = 2</script>",
    '<img src=x onerror="window.__pwned = 3">',
    '[click me](javascript:window.__pwned=4) and <a href="javascript:window.__pwned=5">raw</a>',
    '![remote](https://example.invalid/x.png) <iframe src="https://example.invalid/"></iframe>',
    '"><svg onload=window.__pwned=6>',
]
LONG_MARK = "line-of-a-long-output"


def hostile_conversation() -> Conversation:
    """Every string that reaches the page tries to escape: text, title, ids, tool names,
    inputs, outputs, a Markdown link, an SVG posing as an image, a subagent's title."""
    evil = " ".join(HOSTILE)
    long_output = "\n".join(f"{LONG_MARK} {i} {SCRIPT}" for i in range(200))
    svg = "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0id2luZG93Ll9fcHduZWQ9NyIvPg=="
    messages = [
        Message("user", [Text(evil)], timestamp="2026-01-01T00:00:00Z"),
        Message(
            "assistant",
            [
                Thinking(thinking=evil),
                Text("Here is **markdown** with " + evil),
                ToolUse(
                    id='toolu_"><script>window.__pwned=8</script>',
                    name="Bash<script>",
                    input={"command": evil},
                    kind="shell_exec",
                ),
                ToolUse(
                    id="toolu_edit",
                    name="Edit",
                    input={"file_path": evil, "old_string": SCRIPT, "new_string": evil},
                    kind="modify_file",
                ),
                ToolUse(
                    id="toolu_agent", name="Agent", input={"description": evil, "prompt": evil}, kind="subagent_task"
                ),
                ToolUse(id="toolu_long", name="Read", input={"file_path": "/x"}, kind="read_file"),
            ],
            model="claude-<b>x</b>",
            usage=Usage(10, 20),
            stop_reason="tool_use",
        ),
        Message(
            "user",
            [
                ToolResult('toolu_"><script>window.__pwned=8</script>', evil, is_error=True),
                ToolResult("toolu_edit", [Text(evil), Image(media_type="image/svg+xml", data=svg)]),
                ToolResult("toolu_agent", evil),
                ToolResult("toolu_long", long_output),
            ],
        ),
        Message("user", [Text("summary " + evil)], compact_summary=True),
        Message("assistant", [Text("[ok](https://example.invalid/ok) " + evil)], model="m", api_error=True),
    ]
    child = Conversation(messages=[Message("assistant", [Text("child " + evil)], model="m")])
    return Conversation(
        meta=Meta(
            id="s<script>", title="</title><script>window.__pwned=9</script>", cwd=evil, source_harness="claude_code"
        ),
        messages=messages,
        children=[
            Child(
                ChildLink("meta.toolUseId", tool_use_id="toolu_agent", agent_id='a"><script>x</script>'),
                child,
                description=evil,
            )
        ],
        epochs=[Epoch(3, trigger=evil)],
    )
