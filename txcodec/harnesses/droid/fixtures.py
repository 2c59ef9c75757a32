"""Factory droid's shapes comparable to the fixture checklist's (the seed's section 12 is Claude
Code's), for ``txcodec fixtures`` (docs/redact.md#fixtures): a cut keeps the ``session_start``
header and the message's chain of parents (``parentId``)."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape
from ...kit.registry import parent_chain_cut


def _blocks(r: dict, kind: str) -> list[dict]:
    message = r.get("message") if r.get("type") == "message" else None
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if isinstance(content, list) else []


def _role(r: dict) -> Any:
    message = r.get("message")
    return message.get("role") if r.get("type") == "message" and isinstance(message, dict) else None


SHAPES = (
    FixtureShape(
        "user-prompt", '.type=="message" and .message.role=="user" and a content block of .type=="text"',
        lambda r: _role(r) == "user" and bool(_blocks(r, "text")) and not str(r.get("id")).startswith("context-"),
    ),
    FixtureShape(
        "context-message", '.type=="message" and (.id|startswith("context-"))',
        lambda r: r.get("type") == "message" and str(r.get("id")).startswith("context-"),
    ),
    FixtureShape(
        "tool-use", '.message.role=="assistant" and a content block of .type=="tool_use"',
        lambda r: _role(r) == "assistant" and bool(_blocks(r, "tool_use")),
    ),
    FixtureShape("tool-result", 'a content block of .type=="tool_result"', lambda r: bool(_blocks(r, "tool_result"))),
    FixtureShape(
        "tool-error", 'a content block of .type=="tool_result" and .is_error==true',
        lambda r: any(b.get("is_error") is True for b in _blocks(r, "tool_result")),
    ),
    FixtureShape(
        "thinking", '.message.role=="assistant" and a content block of .type=="thinking"',
        lambda r: _role(r) == "assistant" and bool(_blocks(r, "thinking")),
    ),
    FixtureShape("turn-outcome", '.type=="agent_turn_outcome"', lambda r: r.get("type") == "agent_turn_outcome"),
    FixtureShape(
        "forked-session", '.type=="session_start" and .parent != null',
        lambda r: r.get("type") == "session_start" and bool(r.get("parent")),
    ),
)  # fmt: skip

FIXTURES = Fixtures(shapes=SHAPES, cut=parent_chain_cut("id", "parentId", lambda r: r.get("type") == "session_start"))
