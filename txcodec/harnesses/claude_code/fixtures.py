"""The fixture checklist's shapes in Claude Code files (the seed's section 12): each a name, the
predicate as the checklist writes it (jq), and the same predicate over one decoded record, for
``txcodec fixtures`` (docs/redact.md#fixtures)."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape


def _result(r: dict) -> Any:
    return r.get("toolUseResult")


def _content(r: dict) -> list:
    message = r.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _blocks(r: dict, kind: str) -> list[dict]:
    return [block for block in _content(r) if block.get("type") == kind]


def _result_field(r: dict, key: str) -> Any:
    result = _result(r)
    return result.get(key) if isinstance(result, dict) else None


def _text(r: dict) -> str:
    message = r.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


SHAPES = (
    FixtureShape(
        "streaming-duplication", '.type=="assistant" and .apiBlockIndex>0',
        lambda r: r.get("type") == "assistant" and isinstance(r.get("apiBlockIndex"), int) and r["apiBlockIndex"] > 0,
    ),
    FixtureShape(
        "bash-structured-carrier", '(.toolUseResult|type)=="object" and (.toolUseResult|has("stdout"))',
        lambda r: isinstance(_result(r), dict) and "stdout" in _result(r),
    ),
    FixtureShape(
        "bash-background-task", ".toolUseResult.backgroundTaskId? != null",
        lambda r: _result_field(r, "backgroundTaskId") is not None,
    ),
    FixtureShape(
        "tool-failure", '.type=="user" and any tool_result with is_error==true',
        lambda r: r.get("type") == "user" and any(b.get("is_error") is True for b in _blocks(r, "tool_result")),
    ),
    FixtureShape(
        "persisted-output", ".toolUseResult.persistedOutputPath? != null",
        lambda r: _result_field(r, "persistedOutputPath") is not None,
    ),
    FixtureShape(
        "carrier-string", '(.toolUseResult|type)=="string"', lambda r: isinstance(_result(r), str)
    ),
    FixtureShape(
        "carrier-array", '(.toolUseResult|type)=="array"', lambda r: isinstance(_result(r), list)
    ),
    FixtureShape(
        "edit-structured-patch", ".toolUseResult.structuredPatch? != null",
        lambda r: _result_field(r, "structuredPatch") is not None,
    ),
    FixtureShape(
        "read-variant", '.toolUseResult.type? | IN("image","parts","file_unchanged")',
        lambda r: _result_field(r, "type") in ("image", "parts", "file_unchanged"),
    ),
    FixtureShape(
        "agent-async-launch", '.toolUseResult.status?=="async_launched"',
        lambda r: _result_field(r, "status") == "async_launched",
    ),
    FixtureShape(
        "agent-sync-result", ".toolUseResult.toolStats? != null", lambda r: _result_field(r, "toolStats") is not None
    ),
    FixtureShape(
        "subagent-record", '.isSidechain==true and (.agentId|type)=="string"',
        lambda r: r.get("isSidechain") is True and isinstance(r.get("agentId"), str),
    ),
    FixtureShape(
        "task-notification", '.type=="user" and .origin.kind=="task-notification"',
        lambda r: r.get("type") == "user"
        and isinstance(r.get("origin"), dict)
        and r["origin"].get("kind") == "task-notification",
    ),
    FixtureShape("fork-link", ".forkedFrom? != null", lambda r: r.get("forkedFrom") is not None),
    FixtureShape("last-prompt", '.type=="last-prompt"', lambda r: r.get("type") == "last-prompt"),
    FixtureShape("tool-denial", ".toolDenialKind? != null", lambda r: r.get("toolDenialKind") is not None),
    FixtureShape(
        "interrupted-turn", ".interruptedMessageId? != null", lambda r: r.get("interruptedMessageId") is not None
    ),
    FixtureShape(
        "aborted-or-truncated", ".isAbortedMidStream==true or .truncatedAfterOutput==true",
        lambda r: r.get("isAbortedMidStream") is True or r.get("truncatedAfterOutput") is True,
    ),
    FixtureShape("api-error", ".isApiErrorMessage==true", lambda r: r.get("isApiErrorMessage") is True),
    FixtureShape("compact-summary", ".isCompactSummary==true", lambda r: r.get("isCompactSummary") is True),
    FixtureShape(
        "compact-boundary", '.type=="system" and .subtype=="compact_boundary"',
        lambda r: r.get("type") == "system" and r.get("subtype") == "compact_boundary",
    ),
    FixtureShape(
        "hook-blocking-error", '.type=="attachment" and .attachment.type=="hook_blocking_error"',
        lambda r: r.get("type") == "attachment"
        and isinstance(r.get("attachment"), dict)
        and r["attachment"].get("type") == "hook_blocking_error",
    ),
    FixtureShape(
        "read-truncation-notice", '.type=="attachment" and .attachment.type=="read_truncation_notice"',
        lambda r: r.get("type") == "attachment"
        and isinstance(r.get("attachment"), dict)
        and r["attachment"].get("type") == "read_truncation_notice",
    ),
    FixtureShape(
        "mcp-call", 'any tool_use whose .name starts with "mcp__"',
        lambda r: any(str(b.get("name", "")).startswith("mcp__") for b in _blocks(r, "tool_use")),
    ),
    FixtureShape("mcp-meta", ".mcpMeta? != null", lambda r: r.get("mcpMeta") is not None),
    FixtureShape(
        "block-array-result", 'any tool_result whose (.content|type)=="array"',
        lambda r: any(isinstance(b.get("content"), list) for b in _blocks(r, "tool_result")),
    ),
    FixtureShape(
        "thinking-signature-only", "a thinking block whose .thinking is empty",
        lambda r: any(b.get("thinking") == "" for b in _blocks(r, "thinking")),
    ),
    FixtureShape(
        "thinking-with-text", "a thinking block whose .thinking is not empty",
        lambda r: any(isinstance(b.get("thinking"), str) and b["thinking"] for b in _blocks(r, "thinking")),
    ),
    FixtureShape(
        "slash-command", '.type=="user", a string content holding <command-name>',
        lambda r: r.get("type") == "user" and "<command-name>" in _text(r),
    ),
    FixtureShape(
        "queue-dequeue", '.type=="queue-operation" and .operation=="dequeue"',
        lambda r: r.get("type") == "queue-operation" and r.get("operation") == "dequeue",
    ),
    FixtureShape(
        "workflow-subagent", ".toolUseResult.workflowName? != null",
        lambda r: _result_field(r, "workflowName") is not None,
    ),
    FixtureShape(
        "file-history-snapshot", '.type=="file-history-snapshot"',
        lambda r: r.get("type") == "file-history-snapshot", private=True,
    ),
    FixtureShape(
        "ask-user-answers", ".toolUseResult.answers? != null",
        lambda r: _result_field(r, "answers") is not None, private=True,
    ),
)  # fmt: skip


def _ids(record: Any, kind: str, key: str) -> set[str]:
    return {b[key] for b in _blocks(record, kind) if isinstance(b.get(key), str)} if isinstance(record, dict) else set()


def cut(records: list[Any], index: int) -> list[int]:
    """The lines a minimal session holding ``records[index]`` needs: the leading lines before
    the conversation (the session's header), the record's chain of parents (``parentUuid``,
    and a compaction's ``logicalParentUuid``), the tool calls and results it pairs with, and
    their parents."""
    by_uuid = {r["uuid"]: i for i, r in enumerate(records) if isinstance(r, dict) and isinstance(r.get("uuid"), str)}
    uses = {u: i for i, r in enumerate(records) for u in _ids(r, "tool_use", "id")}
    results = {u: i for i, r in enumerate(records) for u in _ids(r, "tool_result", "tool_use_id")}
    keep: set[int] = set()
    todo = [index]
    while todo:
        i = todo.pop()
        if i in keep:
            continue
        keep.add(i)
        record = records[i]
        if not isinstance(record, dict):
            continue
        for key in ("parentUuid", "logicalParentUuid"):
            parent = record.get(key)
            if isinstance(parent, str) and parent in by_uuid:
                todo.append(by_uuid[parent])
        todo += [results[u] for u in _ids(record, "tool_use", "id") if u in results]
        todo += [uses[u] for u in _ids(record, "tool_result", "tool_use_id") if u in uses]
    first = next((i for i, r in enumerate(records) if isinstance(r, dict) and "uuid" in r), len(records))
    keep |= set(range(first))
    return sorted(keep)


FIXTURES = Fixtures(shapes=SHAPES, cut=cut)
