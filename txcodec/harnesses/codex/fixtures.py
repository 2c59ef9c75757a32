"""Codex's shapes comparable to the fixture checklist's (the seed's section 12 is Claude Code's):
each a name, its predicate in jq, and the same test over one decoded rollout line, for
``txcodec fixtures`` (docs/redact.md#fixtures)."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape


def _payload(r: dict) -> dict:
    payload = r.get("payload")
    return payload if isinstance(payload, dict) else {}


def _item(kind: str) -> Any:
    return lambda r: r.get("type") == "response_item" and _payload(r).get("type") == kind


def _event(kind: str) -> Any:
    return lambda r: r.get("type") == "event_msg" and _payload(r).get("type") == kind


SHAPES = (
    FixtureShape("function-call", '.type=="response_item" and .payload.type=="function_call"', _item("function_call")),
    FixtureShape(
        "function-call-output", '.type=="response_item" and .payload.type=="function_call_output"',
        _item("function_call_output"),
    ),
    FixtureShape(
        "custom-tool-call", '.type=="response_item" and .payload.type=="custom_tool_call"',
        _item("custom_tool_call"),
    ),
    FixtureShape(
        "reasoning-encrypted", '.payload.type=="reasoning" and .payload.encrypted_content != null',
        lambda r: _item("reasoning")(r) and _payload(r).get("encrypted_content") is not None,
    ),
    FixtureShape(
        "web-search-call", '.type=="response_item" and .payload.type=="web_search_call"', _item("web_search_call")
    ),
    FixtureShape("compaction", '.type=="compacted"', lambda r: r.get("type") == "compacted"),
    FixtureShape("context-compacted-event", '.payload.type=="context_compacted"', _event("context_compacted")),
    FixtureShape("token-count", '.type=="event_msg" and .payload.type=="token_count"', _event("token_count")),
    FixtureShape("turn-context", '.type=="turn_context"', lambda r: r.get("type") == "turn_context"),
    FixtureShape("user-message-event", '.payload.type=="user_message"', _event("user_message")),
    FixtureShape("task-complete", '.payload.type=="task_complete"', _event("task_complete")),
)  # fmt: skip


def cut(records: list[Any], index: int) -> list[int]:
    """A minimal rollout holding ``records[index]``: the ``session_meta`` header, the
    ``turn_context`` in force at the record, the record, and the call or output it pairs with
    by ``call_id``."""
    keep = {index}
    keep |= {i for i, r in enumerate(records[:index]) if isinstance(r, dict) and r.get("type") == "session_meta"}
    context = [i for i, r in enumerate(records[:index]) if isinstance(r, dict) and r.get("type") == "turn_context"]
    if context:
        keep.add(context[-1])
    record = records[index]
    call = _payload(record).get("call_id") if isinstance(record, dict) else None
    if isinstance(call, str):
        keep |= {i for i, r in enumerate(records) if isinstance(r, dict) and _payload(r).get("call_id") == call}
    return sorted(keep)


FIXTURES = Fixtures(shapes=SHAPES, cut=cut)
