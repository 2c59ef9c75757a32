"""Codex reader/writer/store rules (no client needed)."""

from __future__ import annotations

import json
from datetime import datetime
from datetime import timezone

import pytest
import zstandard
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.harnesses.codex import store
from txcodec.harnesses.codex.write import TOOL_MAP
from txcodec.harnesses.codex.write import write
from txcodec.kit.changes import to_json
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Epoch
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common_json import from_json
from txcodec.model.loss import LossReport
from txcodec.model.tools import Patch

CASES = sorted(p for p in (GOLDEN / "codex").iterdir() if p.is_dir() and p.name != "scenarios")


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    session = api.load(case / "rollout.jsonl")
    assert session.harness == "codex"
    conv = api.to_common(session)
    assert json.loads(to_json(conv)) == json.loads((case / "common.json").read_bytes())
    written = write(from_json((case / "common.json").read_bytes()), LossReport(), WriteOptions())
    assert written.files[written.main] == (case / "written.jsonl").read_bytes()
    assert api.load(written.files[written.main]).diagnostics == []


def _hand_built():
    return api.to_common(api.load(GOLDEN / "codex" / "hand_built" / "rollout.jsonl"))


def test_preludes_are_meta_not_prompts():
    msgs = _hand_built().messages
    assert [m.extra.get("codex_prelude") for m in msgs[:2]] == ["developer", "user_instructions"]
    assert all(m.meta for m in msgs[:2]) and not msgs[2].meta and msgs[2].origin == "human"


def test_reasoning_calls_and_patch():
    msgs = _hand_built().messages
    thinking, call = msgs[3].content[:2]
    assert (
        isinstance(thinking, Thinking)
        and thinking.thinking == "Read the file first."
        and thinking.encrypted == "gAAAAB-opaque"
    )
    assert isinstance(call, ToolUse) and call.input == {"cmd": "cat hello.py", "workdir": "/work/demo"}
    assert msgs[4].content[0].tool_use_id == "call_1"
    patch = msgs[5].content[0]
    assert isinstance(patch.tool, Patch) and patch.kind == "modify_file"


def test_usage_repeats_not_double_counted():
    msgs = _hand_built().messages
    usages = [m.usage for m in msgs if m.role == "assistant" and m.usage]
    # two identical token_count events count once; cached tokens move to cache_read
    assert [(u.input_tokens, u.cache_read_input_tokens, u.output_tokens) for u in usages] == [
        (800, 200, 50),
        (600, 700, 30),
    ]


def test_fork_replay_usage_not_counted():
    own, parent = "01a30000-0000-7000-8000-000000000002", "01a20000-0000-7000-8000-000000000001"
    tc = lambda n: {
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {
                "total_token_usage": {"input_tokens": n, "output_tokens": 1},
                "last_token_usage": {"input_tokens": n, "output_tokens": 1},
            },
        },
    }
    lines = [
        {"type": "session_meta", "payload": {"id": own, "forked_from_id": parent}},
        {"type": "session_meta", "payload": {"id": parent}},
        {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "01a20000-0001-7000-8000-000000000000"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "parent"}]},
        },
        tc(100),
        {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "01a30000-0001-7000-8000-000000000000"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        },
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "child"}]},
        },
        tc(250),
    ]
    data = b"".join(json.dumps({"timestamp": "2026-01-01T00:00:00Z", **l}).encode() + b"\n" for l in lines)
    conv = api.to_common(api.load(data))
    assert conv.messages[0].usage is msgspec_unset()
    assert conv.messages[2].usage.input_tokens == 250
    assert conv.meta.extra["forked_from_id"] == parent


def msgspec_unset():
    import msgspec

    return msgspec.UNSET


def test_every_corpus_file_reads():
    for path in corpus_files("codex", suffixes=(".jsonl",)):
        loss = LossReport()
        api.to_common(api.load(path), loss)
        assert all(e.line is not None for e in loss.entries)


def test_events_only_rollout_reads_from_events():
    (path,) = [p for p in corpus_files("codex") if "malformed" in str(p)]
    loss = LossReport()
    conv = api.to_common(api.load(path), loss)
    assert [m.content[0].text for m in conv.messages] == ["Safe line before malformed input."]
    assert loss.lines("opaque") == [3]


def claude_like() -> Conversation:
    return Conversation(
        meta=Meta(
            id="6f9619ff-8b86-d011-b42d-00cf4fc964ff",
            cwd="/work/p",
            source_harness="claude_code",
            started_at="2026-03-04T05:06:07.089Z",
        ),
        messages=[
            Message("user", [Text("Fix it, nonce OMEGA-3")]),
            Message(
                "assistant",
                [
                    Thinking("", signature="sig"),
                    Text("Looking."),
                    ToolUse("toolu_1", "Bash", {"command": "ls", "description": "list"}),
                ],
            ),
            Message("user", [ToolResult("toolu_1", "a.py", False)]),
            Message(
                "assistant",
                [ToolUse("toolu_2", "Edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})],
            ),
            Message("user", [ToolResult("toolu_2", [Text("ok")], True)]),
            Message("assistant", [Text("Done.")]),
        ],
    )


def test_writer_maps_claude_tools_and_reports():
    loss = LossReport()
    written = write(claude_like(), loss, WriteOptions())
    lines = [json.loads(l) for l in written.files[written.main].splitlines()]
    meta = lines[0]["payload"]
    assert lines[0]["type"] == "session_meta" and {"id", "timestamp", "cwd", "originator", "cli_version"} <= set(meta)
    assert (
        meta["id"][14] == "7"
        and written.main.endswith(f"-{meta['id']}.jsonl")
        and written.main.startswith("sessions/2026/03/04/rollout-2026-03-04T05-06-07-")
    )
    assert written.session_id == write(claude_like(), LossReport(), WriteOptions()).session_id  # deterministic
    items = [l["payload"] for l in lines if l["type"] == "response_item"]
    calls = [i for i in items if i["type"] in ("function_call", "custom_tool_call")]
    assert calls[0] == {
        "type": "function_call",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": "ls"}),
        "call_id": "toolu_1",
    }
    assert calls[1]["type"] == "custom_tool_call" and calls[1]["name"] == "apply_patch"
    assert "-x = 1\n+x = 2" in calls[1]["input"]
    outputs = [i for i in items if i["type"].endswith("_output")]
    assert [o["type"] for o in outputs] == ["function_call_output", "custom_tool_call_output"]
    assert all(isinstance(o["output"], (str, list)) for o in outputs)
    assert all("timestamp" in l for l in lines) and [l["ordinal"] for l in lines] == list(range(len(lines)))
    events = [l["payload"]["type"] for l in lines if l["type"] == "event_msg"]
    assert "user_message" in events and "agent_message" in events
    counts = loss.counts()
    assert (
        counts["write:tool-mapped"] == 2
        and counts["write:is_error"] == 1
        and counts["write:thinking-without-text"] == 1
    )


def _claude_to_codex_table() -> dict[str, list[str]]:
    """The rows of docs/mapping.md's Claude Code -> Codex table whose first cell is one
    tool name: ``{tool: [codex cell, loss cell]}``."""
    import re

    from support.paths import ROOT

    doc = (ROOT / "docs" / "mapping.md").read_text(encoding="utf-8")
    section = doc.split("## Claude Code <-> Codex", 1)[1].split("\n## ", 1)[0]
    table = section.split("| Claude Code | Codex | Declared loss |", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`([A-Za-z]+)`", cells[0])
        if m:
            assert m.group(1) not in rows, f"{m.group(1)} listed twice"
            rows[m.group(1)] = cells[1:]
    return rows


def test_tool_map_table_matches_the_code():
    """Every TOOL_MAP entry has exactly one row, naming the Codex tool and item kind the
    mapper produces and the loss it declares; the table lists no tool the code does not map."""
    rows = _claude_to_codex_table()
    assert set(rows) == set(TOOL_MAP)
    for name, mapper in TOOL_MAP.items():
        kind, codex_name, _, note = mapper({})
        codex_cell, loss_cell = rows[name]
        assert codex_cell.startswith(f"`{codex_name}`"), (name, codex_cell)
        assert ("custom call" in codex_cell) == (kind == "custom"), (name, codex_cell)
        assert "`write:tool-mapped`" in loss_cell, (name, loss_cell)
        loss = LossReport()
        conv = Conversation(
            meta=Meta(source_harness="claude_code"), messages=[Message("assistant", [ToolUse("t1", name, {})])]
        )
        write(conv, loss, WriteOptions())
        assert loss.counts() == {"write:tool-mapped": 1}, (name, loss.counts())


def test_store_discover_and_zst(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    assert store.default_root() == tmp_path
    assert store.discover() == []
    written = write(claude_like(), LossReport(), WriteOptions())
    data = written.files[written.main]
    store.save(tmp_path / written.main, data)
    z = tmp_path / "archived_sessions" / "rollout-2026-01-01T00-00-00-01990000-0000-7000-8000-00000000000a.jsonl.zst"
    store.save(z, data)
    assert zstandard.ZstdDecompressor().stream_reader(z.read_bytes()).read() == data
    assert api.load(z).dump() == data
    (tmp_path / "sessions" / "rollout-broken.jsonl").write_bytes(b"\xff\n{")
    infos = {i.path: i for i in store.discover()}
    main = infos[str(tmp_path / written.main)]
    assert main.id == written.session_id and main.cwd == "/work/p" and main.user_messages == 1 and main.tool_calls == 2
    assert infos[str(z)].archived and infos[str(z)].compressed
    assert infos[str(tmp_path / "sessions" / "rollout-broken.jsonl")].id == "rollout-broken.jsonl"


def _compacted(message: str, history: list) -> bytes:
    meta = {
        "timestamp": "2026-01-01T00:00:00Z",
        "type": "session_meta",
        "payload": {
            "id": "01990000-0000-7000-8000-0000000000d1",
            "cwd": "/w",
            "originator": "o",
            "cli_version": "0.171.0",
        },
    }
    line = {
        "timestamp": "2026-01-01T00:00:01Z",
        "type": "compacted",
        "payload": {"message": message, "replacement_history": history},
    }
    return (json.dumps(meta) + "\n" + json.dumps(line) + "\n").encode()


def _user(text: str, role: str = "user") -> dict:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def test_remote_compaction_summary_comes_from_its_history():
    """compact_remote.rs writes ``message: ""``: the summary is read from the history (the
    kept messages, preludes left out), declared, and written back as codex wrote it."""
    from txcodec.harnesses.codex.read import SUMMARY_PREFIX

    history = [
        _user("<permissions instructions>x</permissions instructions>", "developer"),
        _user("keep NU-5"),
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        {"type": "compaction", "encrypted_content": "gAAA"},
    ]
    data = _compacted("", history)
    loss = LossReport()
    conv = api.to_common(api.load(data), loss)
    (summary,) = conv.messages
    text = summary.content[0].text
    assert (
        summary.compact_summary and "user: keep NU-5" in text and "assistant: ok" in text and "permissions" not in text
    )
    assert "encrypted" in text and loss.lines("compaction:summary-from-history") == [2]
    assert "compaction:kept-history" not in loss.counts()
    written = write(conv, LossReport(), WriteOptions())
    line = json.loads(written.files[written.main].splitlines()[1])
    assert line["payload"] == {"message": "", "replacement_history": history}
    # a local compaction's summary message inside the history is the summary itself
    local = SUMMARY_PREFIX + " (prompt)\nthe work so far"
    conv = api.to_common(api.load(_compacted("  ", [_user("first ask"), _user(local)])))
    assert conv.messages[0].content[0].text == local


def test_corpus_empty_compaction_message_gets_a_summary():
    (path,) = [p for p in corpus_files("codex") if p.name == "small.jsonl"]
    conv = api.to_common(api.load(path))
    summaries = [m.content[0].text for m in conv.messages if m.compact_summary and m.role == "user"]
    assert summaries and all(s.strip() for s in summaries)


def test_thread_id_is_a_time_ordered_uuid7():
    import uuid

    from txcodec.harnesses.codex.write import uuid7

    ids = []
    for start in (
        "2025-12-31T23:59:59.999Z",
        "2026-03-04T05:06:07.089Z",
        "2026-03-04T05:06:07.090+00:00",
        "2031-01-01T00:00:00",
    ):
        conv = claude_like()
        conv.meta.started_at = start
        sid = write(conv, LossReport(), WriteOptions()).session_id
        u = uuid.UUID(sid)
        assert (u.version, u.variant) == (7, uuid.RFC_4122) and str(u) == sid
        ms = int(datetime.fromisoformat(start.replace("Z", "+00:00")).replace(tzinfo=timezone.utc).timestamp() * 1000)
        assert u.int >> 80 == ms  # the first 48 bits are the start's millisecond clock (UTC)
        ids.append(sid)
    assert ids == sorted(ids)  # later starts sort later, as codex's own ids do
    # deterministic: one source id, one thread id; another source id at the same time differs
    assert uuid7("2026-01-01T00:00:00Z", "claude_code:a") == uuid7("2026-01-01T00:00:00.000Z", "claude_code:a")
    assert uuid7("2026-01-01T00:00:00Z", "claude_code:a") != uuid7("2026-01-01T00:00:00Z", "claude_code:b")
    # without a source id, the conversation itself is the seed
    conv = claude_like()
    conv.meta.id = msgspec_unset()
    assert (
        write(conv, LossReport(), WriteOptions()).session_id
        == write(claude_like_without_id(), LossReport(), WriteOptions()).session_id
    )


def claude_like_without_id() -> Conversation:
    conv = claude_like()
    conv.meta.id = msgspec_unset()
    return conv


def test_session_id_option_must_be_a_uuid():
    with pytest.raises(ValueError, match="not a UUID"):
        write(claude_like(), LossReport(), WriteOptions(session_id="my-session"))
    sid = "0199AAAA-0000-7000-8000-000000000001"
    written = write(claude_like(), LossReport(), WriteOptions(session_id=sid))
    assert written.session_id == sid.lower() and written.main.endswith(f"-{sid.lower()}.jsonl")


LOCALPUSH = [p for p in corpus_files("codex", suffixes=(".jsonl",)) if "localpush" in str(p)]


@pytest.mark.parametrize("path", LOCALPUSH, ids=lambda p: p.name[:40])
def test_usage_sums_to_codex_running_total(path):
    """Real sessions write every token_count twice (after the call, and again at the next
    turn_context). Summed over the conversation, the usage the reader keeps must equal the
    running total codex itself wrote last: nothing counted twice, nothing missed."""
    totals = []
    for raw in path.read_bytes().splitlines():
        line = json.loads(raw)
        payload = line.get("payload") or {}
        if line["type"] == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
            totals.append(payload["info"]["total_token_usage"])
    assert len(totals) > len({json.dumps(t, sort_keys=True) for t in totals}) or len(totals) == 1  # repeats are there
    final = totals[-1]
    usages = [m.usage for m in api.to_common(api.load(path)).messages if m.usage is not msgspec_unset()]
    assert len(usages) == len({json.dumps(t, sort_keys=True) for t in totals})  # one per model call
    assert sum(u.input_tokens + u.cache_read_input_tokens for u in usages) == final["input_tokens"]
    assert sum(u.cache_read_input_tokens for u in usages) == final["cached_input_tokens"]
    assert sum(u.output_tokens for u in usages) == final["output_tokens"]
    assert sum(u.reasoning_output_tokens for u in usages) == final["reasoning_output_tokens"]


class _CountingMessages(list):
    """The conversation's messages, counting how many the writer looks at."""

    visited = 0

    def __iter__(self):
        _CountingMessages.visited += len(self)
        return super().__iter__()

    def __getitem__(self, key):
        got = super().__getitem__(key)
        _CountingMessages.visited += len(got) if isinstance(key, slice) else 1
        return got


def test_preserved_items_scan_the_messages_once_not_per_compaction():
    # issue 37: each compaction used to rescan every earlier message for the ids it kept,
    # so a long session with many compactions converted in quadratic time
    messages, epochs = [], []
    for k in range(300):
        messages += [Message("user", [Text(f"q{k}")]), Message("assistant", [Text(f"a{k}")])]
        epochs.append(Epoch(start=len(messages), preserved_ids=[f"src-{len(messages) - 1}"]))
        messages.append(Message("user", [Text(f"summary {k}")], compact_summary=True))
    for i, m in enumerate(messages):
        m.source_ids = [f"src-{i}"]
    conv = Conversation(meta=Meta(id="019a0000-0000-7000-8000-000000000037"), messages=messages, epochs=epochs)
    conv.messages = _CountingMessages(messages)
    _CountingMessages.visited = 0
    data = next(iter(write(conv, LossReport(), WriteOptions()).files.values()))
    assert _CountingMessages.visited <= 4 * len(messages)  # was about 300 x 450 (compactions x messages / 2)
    compacted = [json.loads(x)["payload"] for x in data.splitlines() if b'"type":"compacted"' in x]
    assert len(compacted) == 300
    for k, payload in enumerate(compacted):  # each still carries the answer it kept
        kept = [i for i in payload["replacement_history"] if i.get("role") == "assistant"]
        assert [c["text"] for i in kept for c in i["content"]] == [f"a{k}"]
