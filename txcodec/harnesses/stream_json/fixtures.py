"""Claude Code stream-json's shapes comparable to the fixture checklist's (the seed's section 12
is Claude Code's session files; a capture is what ``claude -p --output-format stream-json``
printed), for ``txcodec fixtures`` (docs/redact.md#fixtures): a cut keeps the ``system``
``init`` lines, the record, and the records sharing its tool use ids (a call, its result, a
subagent's messages under it)."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape
from ...kit.registry import linked_cut


def _system(subtype: str) -> Any:
    return lambda r: r.get("type") == "system" and r.get("subtype") == subtype


def _blocks(r: dict, kind: str) -> list[dict]:
    message = r.get("message") if r.get("type") in ("assistant", "user") else None
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if isinstance(content, list) else []


def _links(r: dict) -> list[Any]:
    return (
        [b.get("id") for b in _blocks(r, "tool_use")]
        + [b.get("tool_use_id") for b in _blocks(r, "tool_result")]
        + [r.get("parent_tool_use_id")]
    )


SHAPES = (
    FixtureShape("init", '.type=="system" and .subtype=="init"', _system("init")),
    FixtureShape(
        "tool-use", '.type=="assistant" and a content block of .type=="tool_use"',
        lambda r: r.get("type") == "assistant" and bool(_blocks(r, "tool_use")),
    ),
    FixtureShape(
        "tool-result", '.type=="user" and a content block of .type=="tool_result"',
        lambda r: r.get("type") == "user" and bool(_blocks(r, "tool_result")),
    ),
    FixtureShape(
        "tool-error", 'a content block of .type=="tool_result" and .is_error==true',
        lambda r: any(b.get("is_error") is True for b in _blocks(r, "tool_result")),
    ),
    FixtureShape(
        "thinking", '.type=="assistant" and a content block of .type=="thinking"',
        lambda r: r.get("type") == "assistant" and bool(_blocks(r, "thinking")),
    ),
    FixtureShape(
        "redacted-thinking", '.type=="assistant" and a content block of .type=="redacted_thinking"',
        lambda r: r.get("type") == "assistant" and bool(_blocks(r, "redacted_thinking")),
    ),
    FixtureShape(
        "subagent-message", '.parent_tool_use_id != null',
        lambda r: r.get("type") in ("assistant", "user") and isinstance(r.get("parent_tool_use_id"), str),
    ),
    FixtureShape("result", '.type=="result"', lambda r: r.get("type") == "result"),
    FixtureShape(
        "result-error", '.type=="result" and .is_error==true',
        lambda r: r.get("type") == "result" and r.get("is_error") is True,
    ),
    FixtureShape("stream-event", '.type=="stream_event"', lambda r: r.get("type") == "stream_event"),
    FixtureShape("compact-boundary", '.type=="system" and .subtype=="compact_boundary"', _system("compact_boundary")),
    FixtureShape("status", '.type=="system" and .subtype=="status"', _system("status")),
    FixtureShape("task-started", '.type=="system" and .subtype=="task_started"', _system("task_started")),
    FixtureShape(
        "task-notification", '.type=="system" and .subtype=="task_notification"', _system("task_notification")
    ),
    FixtureShape("control-request", '.type=="control_request"', lambda r: r.get("type") == "control_request"),
    FixtureShape("control-response", '.type=="control_response"', lambda r: r.get("type") == "control_response"),
)  # fmt: skip

FIXTURES = Fixtures(shapes=SHAPES, cut=linked_cut(_system("init"), _links))
