"""Issue 31 items 5-7 on Codex 0.171 shapes: an MCP call's namespace (Claude's
mcp__<server>__<tool> in Common, the namespace back in Codex), a goal tool's output with
no call_id (kept for Codex, its text for others) and the arguments string the model wrote
(kept while the value is unchanged)."""

from __future__ import annotations

import json

from txcodec import api
from txcodec.model.common import Context
from txcodec.model.common import ToolUse

SID = "019a0000-0000-7000-8000-000000000001"
CALL = {
    "type": "function_call",
    "name": "lookup",
    "namespace": "mcp__notes",
    "arguments": '{"q":"caf\\u00e9"}',
    "call_id": "call_1",
}
GOAL = {"type": "function_call_output", "name": "goal_objective", "namespace": "agent", "output": "Objective: ship it"}


def _item(payload: dict) -> dict:
    return {"timestamp": "2026-01-01T00:00:00.000Z", "type": "response_item", "payload": payload}


def _rollout(*items: dict) -> bytes:
    meta = {"id": SID, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w", "originator": "codex_exec"}
    meta["cli_version"] = "0.171.0"
    lines = [{"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": meta}]
    lines += [_item(i) for i in items]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


ROLLOUT = _rollout(
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look it up"}]},
    CALL,
    {"type": "function_call_output", "call_id": "call_1", "output": "found"},
    GOAL,
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
)


def _payloads(written) -> list[dict]:
    lines = [json.loads(line) for line in written.files[written.main].splitlines()]
    return [line["payload"] for line in lines if line["type"] == "response_item"]


def test_common_names_an_mcp_call_as_claude_does():
    conv = api.to_common(api.load(ROLLOUT, "codex"))
    [use] = [b for m in conv.messages for b in m.content if isinstance(b, ToolUse)]
    assert use.name == "mcp__notes__lookup" and use.input == {"q": "café"}


def test_codex_to_codex_keeps_namespace_arguments_and_goal_output():
    written, loss = api.convert(ROLLOUT, "codex")
    payloads = _payloads(written)
    assert CALL in payloads  # the namespace, and the \\u00e9 escape and spacing of the model's string
    assert GOAL in payloads  # no call_id, as it was
    assert not [k for k in loss.counts() if k.startswith("write:")]


def test_changed_arguments_are_written_from_the_value():
    conv = api.to_common(api.load(ROLLOUT, "codex"))
    [use] = [b for m in conv.messages for b in m.content if isinstance(b, ToolUse)]
    use.input = {"q": "tea"}  # an edit (a redaction, say): the source string no longer holds
    written, _ = api.convert(conv, "codex")
    [call] = [p for p in _payloads(written) if p["type"] == "function_call"]
    assert json.loads(call["arguments"]) == {"q": "tea"} and call["namespace"] == "mcp__notes"


def test_other_targets_get_the_mcp_name_and_the_goal_as_text():
    for target in ("claude_code", "gemini_cli"):
        written, loss = api.convert(ROLLOUT, target)
        body = b"".join(written.files.values()).decode()
        assert "mcp__notes__lookup" in body and "Objective: ship it" in body
        assert [e.detail for e in loss.entries if e.kind == "write:context-as-text"] == [
            "message 2: codex context 'agent.goal_objective' (sent as user) written as user text"
        ]
        assert "write:orphan-result" not in loss.counts()


def test_goal_output_is_context_not_an_orphan_result():
    from txcodec.model.loss import LossReport

    loss = LossReport()
    conv = api.to_common(api.load(ROLLOUT, "codex"), loss)
    [goal] = [b for m in conv.messages for b in m.content if isinstance(b, Context)]
    assert (goal.kind, goal.text, goal.source) == ("agent.goal_objective", "Objective: ship it", "codex")
    assert "tool:orphan-output" not in loss.counts()


def test_claude_mcp_names_become_codex_namespaces():
    # Claude Code's mcp__<server>__<tool> is written as codex records an MCP call (it was kept
    # whole as an unknown tool name, write:tool-unmapped)
    claude, _ = api.convert(ROLLOUT, "claude_code")
    written, loss = api.convert(claude.files[claude.main], "codex")
    lines = [json.loads(line) for line in written.files[written.main].splitlines()]
    calls = [
        v["payload"] for v in lines if v.get("type") == "response_item" and v["payload"]["type"] == "function_call"
    ]
    assert [(c.get("namespace"), c["name"]) for c in calls] == [("mcp__notes", "lookup")]
    assert "write:tool-unmapped" not in loss.counts()


def test_tool_search_items_are_codex_context():
    search = {"type": "tool_search_call", "call_id": "s1", "execution": "client", "arguments": {"query": "notes"}}
    found = {"type": "tool_search_output", "call_id": "s1", "execution": "client", "tools": [{"type": "namespace"}]}
    rollout = _rollout(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look it up"}]},
        search,
        found,
        CALL,
        {"type": "function_call_output", "call_id": "call_1", "output": "found"},
    )
    conv = api.to_common(api.load(rollout))
    blocks = [b for m in conv.messages for b in m.content if isinstance(b, Context)]
    assert [(b.kind, b.value) for b in blocks] == [("tool_search_call", search), ("tool_search_output", found)]
    again, _ = api.convert(rollout, "codex")
    items = [json.loads(line)["payload"] for line in again.files[again.main].splitlines() if b"tool_search" in line]
    assert items == [search, found]
    _, loss = api.convert(rollout, "claude_code")
    assert loss.counts()["write:context"] == 2
