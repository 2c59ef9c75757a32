"""GitHub Copilot CLI's shapes comparable to the fixture checklist's (the seed's section 12 is
Claude Code's), for ``txcodec fixtures`` (docs/redact.md#fixtures). Its ``events.jsonl`` events
each name the one before (``parentId``), so a chain would keep the whole session: a cut keeps
the ``session.start`` header, the event, and the events sharing its tool call ids (a request,
its start and its completion)."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape
from ...kit.registry import linked_cut


def _data(r: dict) -> dict:
    data = r.get("data")
    return data if isinstance(data, dict) else {}


def _type(kind: str) -> Any:
    return lambda r: r.get("type") == kind


def _requests(r: dict) -> list[dict]:
    requests = _data(r).get("toolRequests") if r.get("type") == "assistant.message" else None
    return [q for q in requests if isinstance(q, dict)] if isinstance(requests, list) else []


def _links(r: dict) -> list[Any]:
    return [q.get("toolCallId") for q in _requests(r)] + [_data(r).get("toolCallId")]


SHAPES = (
    FixtureShape("user-message", '.type=="user.message"', _type("user.message")),
    FixtureShape("system-message", '.type=="system.message"', _type("system.message")),
    FixtureShape(
        "assistant-text", '.type=="assistant.message" and (.data.toolRequests|length)==0',
        lambda r: r.get("type") == "assistant.message" and not _requests(r),
    ),
    FixtureShape(
        "tool-request", '.type=="assistant.message" and (.data.toolRequests|length)>0', lambda r: bool(_requests(r))
    ),
    FixtureShape(
        "parallel-tool-requests", '.type=="assistant.message" and (.data.toolRequests|length)>1',
        lambda r: len(_requests(r)) > 1,
    ),
    FixtureShape("tool-start", '.type=="tool.execution_start"', _type("tool.execution_start")),
    FixtureShape("tool-complete", '.type=="tool.execution_complete"', _type("tool.execution_complete")),
    FixtureShape(
        "tool-failure", '.type=="tool.execution_complete" and .data.success==false',
        lambda r: r.get("type") == "tool.execution_complete" and _data(r).get("success") is False,
    ),
    FixtureShape("turn-start", '.type=="assistant.turn_start"', _type("assistant.turn_start")),
    FixtureShape("turn-end", '.type=="assistant.turn_end"', _type("assistant.turn_end")),
    FixtureShape("usage-record", '.type=="session.usage_record"', _type("session.usage_record")),
    FixtureShape("permissions-changed", '.type=="session.permissions_changed"', _type("session.permissions_changed")),
    FixtureShape("session-resume", '.type=="session.resume"', _type("session.resume")),
    FixtureShape("session-shutdown", '.type=="session.shutdown"', _type("session.shutdown")),
)  # fmt: skip

FIXTURES = Fixtures(shapes=SHAPES, cut=linked_cut(_type("session.start"), _links))
