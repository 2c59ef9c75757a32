"""Kimi CLI's shapes comparable to the fixture checklist's (the seed's section 12 is Claude
Code's), for ``txcodec fixtures`` (docs/redact.md#fixtures). A ``context.jsonl`` line is a
chat message or one of the client's own (``_system_prompt``, ``_checkpoint``, ``_usage``): a
cut keeps the system prompt line, the record, and the call and results sharing its tool call ids."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape
from ...kit.registry import linked_cut


def _role(role: str) -> Any:
    return lambda r: r.get("role") == role


def _calls(r: dict) -> list[dict]:
    calls = r.get("tool_calls")
    return [c for c in calls if isinstance(c, dict)] if r.get("role") == "assistant" and isinstance(calls, list) else []


def _parts(r: dict, kind: str) -> list[dict]:
    content = r.get("content")
    return [p for p in content if isinstance(p, dict) and p.get("type") == kind] if isinstance(content, list) else []


def _links(r: dict) -> list[str]:
    return [c.get("id") for c in _calls(r)] + [r.get("tool_call_id")]


SHAPES = (
    FixtureShape("system-prompt", '.role=="_system_prompt"', _role("_system_prompt")),
    FixtureShape("user-message", '.role=="user"', _role("user")),
    FixtureShape("tool-call", '.role=="assistant" and (.tool_calls|length)>0', lambda r: bool(_calls(r))),
    FixtureShape("tool-result", '.role=="tool"', _role("tool")),
    FixtureShape(
        "tool-result-parts", '.role=="tool" and (.content|type)=="array"',
        lambda r: r.get("role") == "tool" and isinstance(r.get("content"), list),
    ),
    FixtureShape(
        "thinking", '.role=="assistant" and a content part of .type=="think"',
        lambda r: r.get("role") == "assistant" and bool(_parts(r, "think")),
    ),
    FixtureShape("checkpoint", '.role=="_checkpoint"', _role("_checkpoint")),
    FixtureShape("usage", '.role=="_usage"', _role("_usage")),
)  # fmt: skip

FIXTURES = Fixtures(shapes=SHAPES, cut=linked_cut(lambda r: r.get("role") == "_system_prompt", _links))
