"""pi's shapes comparable to the fixture checklist's (the seed's section 12 is Claude Code's),
for ``txcodec fixtures`` (docs/redact.md#fixtures): a cut keeps the ``session`` header and the
entry's chain of parents (``parentId``)."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape
from ...kit.registry import parent_chain_cut


def _message(r: dict) -> dict:
    message = r.get("message")
    return message if isinstance(message, dict) else {}


def _blocks(r: dict, kind: str) -> list[dict]:
    content = _message(r).get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if isinstance(content, list) else []


def _role(role: str) -> Any:
    return lambda r: r.get("type") == "message" and _message(r).get("role") == role


SHAPES = (
    FixtureShape("compaction", '.type=="compaction"', lambda r: r.get("type") == "compaction"),
    FixtureShape("model-change", '.type=="model_change"', lambda r: r.get("type") == "model_change"),
    FixtureShape(
        "thinking-level-change", '.type=="thinking_level_change"', lambda r: r.get("type") == "thinking_level_change"
    ),
    FixtureShape(
        "tool-call", '.message.role=="assistant" and a content block of .type=="toolCall"',
        lambda r: _role("assistant")(r) and bool(_blocks(r, "toolCall")),
    ),
    FixtureShape("tool-result", '.message.role=="toolResult"', _role("toolResult")),
    FixtureShape(
        "tool-error", '.message.role=="toolResult" and .message.isError==true',
        lambda r: _role("toolResult")(r) and _message(r).get("isError") is True,
    ),
    FixtureShape(
        "thinking", '.message.role=="assistant" and a content block of .type=="thinking"',
        lambda r: _role("assistant")(r) and bool(_blocks(r, "thinking")),
    ),
    FixtureShape("hook-message", '.message.role=="hookMessage"', _role("hookMessage")),
)  # fmt: skip

FIXTURES = Fixtures(shapes=SHAPES, cut=parent_chain_cut("id", "parentId", lambda r: r.get("type") == "session"))
