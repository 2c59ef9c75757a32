"""Qwen Code's shapes comparable to the fixture checklist's (the seed's section 12 is Claude
Code's), for ``txcodec fixtures`` (docs/redact.md#fixtures): a cut keeps the record and its
chain of parents (``parentUuid``)."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape
from ...kit.registry import parent_chain_cut


def _system(subtype: str) -> Any:
    return lambda r: r.get("type") == "system" and r.get("subtype") == subtype


def _parts(r: dict) -> list[dict]:
    message = r.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


SHAPES = (
    FixtureShape("chat-compression", '.type=="system" and .subtype=="chat_compression"', _system("chat_compression")),
    FixtureShape("ui-telemetry", '.type=="system" and .subtype=="ui_telemetry"', _system("ui_telemetry")),
    FixtureShape(
        "attribution-snapshot", '.type=="system" and .subtype=="attribution_snapshot"', _system("attribution_snapshot")
    ),
    FixtureShape("custom-title", '.type=="system" and .subtype=="custom_title"', _system("custom_title")),
    FixtureShape(
        "function-call", '.type=="assistant" and a part with .functionCall',
        lambda r: r.get("type") == "assistant" and any("functionCall" in p for p in _parts(r)),
    ),
    FixtureShape("tool-result", '.type=="tool_result"', lambda r: r.get("type") == "tool_result"),
    FixtureShape(
        "thought", '.type=="assistant" and a part with .thought==true',
        lambda r: r.get("type") == "assistant" and any(p.get("thought") is True for p in _parts(r)),
    ),
    FixtureShape(
        "subagent", ".subagent_id? != null or .isSidechain==true",
        lambda r: r.get("subagent_id") is not None or r.get("isSidechain") is True,
    ),
)  # fmt: skip

FIXTURES = Fixtures(shapes=SHAPES, cut=parent_chain_cut("uuid", "parentUuid", lambda r: False))
