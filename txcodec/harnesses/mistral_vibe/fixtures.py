"""Mistral Vibe's shapes comparable to the fixture checklist's (the seed's section 12 is Claude
Code's), for ``txcodec fixtures`` (docs/redact.md#fixtures). ``messages.jsonl`` holds chat
messages only (the session's metadata is ``meta.json`` beside it): a cut keeps the record and
the call and results sharing its tool call ids."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape
from ...kit.registry import linked_cut


def _calls(r: dict) -> list[dict]:
    calls = r.get("tool_calls")
    return [c for c in calls if isinstance(c, dict)] if r.get("role") == "assistant" and isinstance(calls, list) else []


def _links(r: dict) -> list[Any]:
    return [c.get("id") for c in _calls(r)] + [r.get("tool_call_id")]


SHAPES = (
    FixtureShape("user-message", '.role=="user"', lambda r: r.get("role") == "user"),
    FixtureShape("tool-call", '.role=="assistant" and (.tool_calls|length)>0', lambda r: bool(_calls(r))),
    FixtureShape("tool-result", '.role=="tool"', lambda r: r.get("role") == "tool"),
    FixtureShape(
        "assistant-text", '.role=="assistant" and (.tool_calls|length)==0',
        lambda r: r.get("role") == "assistant" and not _calls(r),
    ),
    FixtureShape(
        "reasoning", '.role=="assistant" and .reasoning_content != null',
        lambda r: r.get("role") == "assistant" and bool(r.get("reasoning_content")),
    ),
)  # fmt: skip

FIXTURES = Fixtures(shapes=SHAPES, cut=linked_cut(lambda r: False, _links))
