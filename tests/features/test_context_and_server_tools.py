"""Issue 31: what the model saw, not only the messages. Claude Code's attachments are kept
as Common context blocks and go back to Claude Code as the records they were; another
target gets their text where the original had it, or a write-side loss entry names them.
Server tools (web search, web fetch) are blocks of their own: back to Claude Code and
stream-json as blocks, to Codex as its web_search_call, named by every other writer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest
from support.paths import GOLDEN

from txcodec import api
from txcodec.kit import registry
from txcodec.model.common import Context
from txcodec.model.common import ServerToolUse
from txcodec.model.common import Text
from txcodec.model.common import WebFetchToolResult
from txcodec.model.common import WebSearchToolResult
from txcodec.model.common_json import from_json

SID = "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01"
SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "txcodec"}}
RESULTS = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [{"type": "web_search_result", "url": "https://e.x", "title": "E", "encrypted_content": "enc"}],
}
FETCH = {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_fetch", "input": {"url": "https://e.x"}}
FETCHED = {
    "type": "web_fetch_tool_result",
    "tool_use_id": "srvtoolu_2",
    "content": {"type": "web_fetch_result", "url": "https://e.x", "content": {"type": "document"}},
}
# 2.1.332 records what it sent for an attachment (rendered, renderedRole); older clients
# do not, and a hook's own content is then the text carried
ENV = {
    "attachment": {"type": "environment", "cwd": "/w"},
    "rendered": [{"content": "<system-reminder>\n# Environment\n - cwd: /w\n</system-reminder>"}],
    "renderedRole": "system",
}
HOOK = {"attachment": {"type": "hook_additional_context", "hookEvent": "PostToolUse", "content": ["lint: clean"]}}
SNAPSHOT = {"attachment": {"type": "prompt_snapshot", "prompt": "x"}}


def _session(*records: tuple[str, dict]) -> bytes:
    lines, parent = [], None
    for n, (kind, body) in enumerate(records):
        uid = f"00000000-0000-4000-8000-{n:012d}"
        line = {"parentUuid": parent, "isSidechain": False, "type": kind, **body, "uuid": uid}
        line.update({"timestamp": "2026-01-01T00:00:00.000Z", "sessionId": SID, "version": "2.1.332", "cwd": "/w"})
        lines.append(json.dumps(line))
        parent = uid
    return "\n".join(lines).encode() + b"\n"


def _user(content) -> tuple[str, dict]:
    return "user", {"message": {"role": "user", "content": content}}


def _assistant(block: dict, msg_id: str = "msg_1") -> tuple[str, dict]:
    message = {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-x", "content": [block]}
    return "assistant", {"message": {**message, "stop_reason": None}}


SERVER = _session(
    _user("search"),
    *(_assistant(b) for b in (SEARCH, RESULTS, FETCH, FETCHED, {"type": "text", "text": "found it"})),
)
CALL = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
CONTEXT = _session(
    _user("look around"),
    ("attachment", ENV),
    ("attachment", SNAPSHOT),
    _assistant(CALL, "msg_2"),
    ("attachment", HOOK),  # between the call and its result (a PreToolUse/PostToolUse hook)
    _user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]),
    _assistant({"type": "text", "text": "done"}, "msg_3"),
)


def _lines(written) -> list[dict]:
    return [json.loads(line) for body in written.files.values() for line in body.splitlines() if line.strip()]


def _blocks(lines: list[dict]) -> list[dict]:
    return [b for r in lines if r.get("type") == "assistant" for b in r["message"]["content"]]


def test_server_blocks_are_common_blocks_of_their_own():
    conv = api.to_common(api.load(SERVER, "claude_code"))
    kinds = [type(b) for b in conv.messages[1].content]
    assert kinds == [ServerToolUse, WebSearchToolResult, ServerToolUse, WebFetchToolResult, Text]
    assert conv.messages[1].content[1].content == RESULTS["content"]
    # and Common JSON keeps them
    assert from_json(msgspec.json.encode(conv)).messages[1].content == conv.messages[1].content


@pytest.mark.parametrize("target", ["claude_code", "stream_json"])
def test_claude_and_stream_json_write_server_blocks_back_as_blocks(target):
    written, loss = api.convert(SERVER, target)
    blocks = [b for r in _lines(written) for b in ((r.get("message") or {}).get("content") or []) if type(b) is dict]
    for block in (SEARCH, RESULTS, FETCH, FETCHED):
        assert block in blocks
    assert not [k for k in loss.counts() if k.startswith("write:")]
    assert b"[server_tool_use]" not in b"".join(written.files.values())


def test_codex_gets_web_search_as_its_web_search_call_and_names_the_rest():
    written, loss = api.convert(SERVER, "codex")
    items = [r["payload"] for r in _lines(written) if r.get("type") == "response_item"]
    searches = [i for i in items if i["type"] == "web_search_call"]
    assert searches == [
        {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "txcodec"}}
    ]
    counts = loss.counts()
    assert counts["write:web-search-result"] == 1  # the results: Codex's item holds the query only
    assert counts["write:block:server_tool_use"] == 1 and counts["write:block:web_fetch_tool_result"] == 1  # web fetch


@pytest.mark.parametrize("target", ["gemini_cli", "pi", "qwen_code", "opencode"])
def test_other_targets_name_server_blocks_on_the_write_side(target):
    written, loss = api.convert(SERVER, target)
    named = [e for e in loss.entries if e.kind.startswith("write:") and "erver" in e.kind + json.dumps(e.detail)]
    named += [e for e in loss.entries if e.kind.startswith("write:") and "web_" in e.kind]
    assert named, loss.counts()
    assert b"srvtoolu_1" in b"".join(written.files.values())  # written as text, not dropped


def test_claude_attachments_are_kept_as_context():
    conv = api.to_common(api.load(CONTEXT, "claude_code"))
    first = conv.messages[0].content
    assert [type(b) for b in first] == [Text, Context, Context]
    env = first[1]
    assert (env.kind, env.role, env.text) == ("environment", "system", ENV["rendered"][0]["content"])
    assert first[2].kind == "prompt_snapshot" and first[2].text is msgspec.UNSET  # the model never saw it
    # the hook between a call and its result joins the result's message: no message between them
    results = conv.messages[2]
    assert [type(b).__name__ for b in results.content] == ["ToolResult", "Context"]
    assert results.content[1].text == "lint: clean"


def test_claude_to_claude_writes_the_attachment_records_back():
    written, loss = api.convert(CONTEXT, "claude_code")
    source = [json.loads(line) for line in CONTEXT.splitlines()]
    kept = [r for r in _lines(written) if r["type"] == "attachment"]
    want = [r for r in source if r["type"] == "attachment"]
    for key in ("attachment", "rendered", "renderedRole"):
        assert [r.get(key) for r in kept] == [r.get(key) for r in want]
    # each hangs off the record before it, as the client chains them
    lines = _lines(written)
    for record in kept:
        index = lines.index(record)
        assert record["parentUuid"] == lines[index - 1]["uuid"]
    assert lines[1]["type"] == "attachment"  # right after the prompt, where the original had it
    assert not [k for k in loss.counts() if k.startswith("write:")]


@pytest.mark.parametrize("target", ["gemini_cli", "pi", "qwen_code"])
def test_other_targets_get_the_context_text_in_place_or_a_loss_entry(target):
    written, loss = api.convert(CONTEXT, target)
    body = b"".join(written.files.values()).decode()
    env = json.dumps(ENV["rendered"][0]["content"])[1:-1]
    assert env in body or ENV["rendered"][0]["content"] in body
    assert body.index("look around") < body.index("# Environment") < body.index("lint: clean") < body.index("done")
    details = [e.detail for e in loss.entries if e.kind == "write:context-as-text"]
    assert len(details) == 2 and "'environment' (sent as system)" in details[0]
    assert [e.detail for e in loss.entries if e.kind == "write:context"] == [
        "message 0: claude_code context 'prompt_snapshot' records no text the model saw; left out"
    ]


def test_codex_gets_context_as_items_of_its_own_apart_from_the_prompt():
    # codex gives context as developer / user message items; carried into the prompt's own
    # message, a reminder showed in Codex's history (the user_message event) after the prompt
    written, loss = api.convert(CONTEXT, "codex")
    lines = _lines(written)
    items = [r["payload"] for r in lines if r["type"] == "response_item" and r["payload"]["type"] == "message"]
    said = [(i["role"], [p["text"] for p in i["content"]]) for i in items]
    assert said == [
        ("user", ["look around"]),
        ("developer", [ENV["rendered"][0]["content"]]),  # sent as system by Claude Code
        ("user", ["lint: clean"]),
        ("assistant", ["done"]),
    ]
    events = [r["payload"]["message"] for r in lines if r["type"] == "event_msg"]
    assert events == ["look around", "done"]  # the user_message and agent_message events
    assert "write:context-as-text" not in loss.counts()
    assert [e.detail for e in loss.entries if e.kind == "write:context"] == [
        "message 0: claude_code context 'prompt_snapshot' records no text the model saw; left out"
    ]
    prompts = [m for m in api.to_common(api.load(written.files[written.main])).messages if m.role == "user"]
    assert [b.text for b in prompts[0].content] == ["look around"]


# --- the per-target table in docs/mapping.md ----------------------------------------------

# the same sessions without their context or server blocks: what a target reports for
# these and not for the full session is what context and server tools cost there
PLAIN_CONTEXT = _session(
    _user("look around"),
    _assistant(CALL, "msg_2"),
    _user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]),
    _assistant({"type": "text", "text": "done"}, "msg_3"),
)
PLAIN_SERVER = _session(_user("search"), _assistant({"type": "text", "text": "found it"}))
MAPPING = Path(__file__).resolve().parents[2] / "docs" / "mapping.md"
BEGIN, END = "<!-- context-table -->", "<!-- /context-table -->"


def _cost(session: bytes, plain: bytes, target: str) -> str:
    kinds = set(api.convert(session, target)[1].counts()) - set(api.convert(plain, target)[1].counts())
    written = sorted(k for k in kinds if k.startswith("write:"))
    return "<br>".join(f"`{k}`" for k in written) or "kept, nothing reported"


def _table() -> str:
    rows = ["| Claude Code -> | context (attachments) | server tools (web search, web fetch) |", "|---|---|---|"]
    for target in sorted(name for name, h in registry.harnesses().items() if h.write is not None):
        rows.append(f"| `{target}` | {_cost(CONTEXT, PLAIN_CONTEXT, target)} | {_cost(SERVER, PLAIN_SERVER, target)} |")
    return "\n".join(rows)


def test_mapping_shows_context_and_server_tools_per_target():
    """docs/mapping.md's table is what each writer reports for a Claude session's context
    and server tools (``TXCODEC_UPDATE_MAPPING=1`` rewrites it)."""
    text = MAPPING.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    table = _table()
    if os.environ.get("TXCODEC_UPDATE_MAPPING"):
        MAPPING.write_text(text[:start] + "\n" + table + "\n" + text[end:], encoding="utf-8")
        return
    assert text[start:end].strip() == table


def test_another_clients_context_records_are_freed_before_the_writer_runs(monkeypatch):
    """Issue 37: a Claude Code session's attachment records are often a third of its bytes
    (2.1.332's prompt snapshots), held whole in their Context blocks. A conversion to
    another client keeps only their text, so the blocks are let go before the target's
    writer runs, not held beside its output (docs/speed.md#big-sessions-issue-37)."""
    import gc

    codex = registry.get("codex")
    held: list[int] = []
    before: set[int] = set()  # blocks other tests of this process left alive are not this conversion's

    def spy(conversation, loss, options):
        held.append(sum(type(o) is Context and id(o) not in before for o in gc.get_objects()))
        return codex.write(conversation, loss, options)

    spied = msgspec.structs.replace(codex, write=spy)
    real_get = registry.get
    monkeypatch.setattr(registry, "get", lambda name: spied if registry.canonical(name) == "codex" else real_get(name))
    source = next((GOLDEN / "claude_code" / "attachment_signals").glob("*.jsonl"))
    assert any(type(b) is Context for _, m in api.messages(api.to_common(api.load(source))) for b in m.content)
    gc.collect()
    before.update(id(o) for o in gc.get_objects() if type(o) is Context)
    written, loss = api.convert(source, "codex")
    assert held == [0]
    assert written.files and {"write:context", "write:context-as-text"} & set(loss.counts())
