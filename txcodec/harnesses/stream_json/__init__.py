"""stream-json: Claude Code's live protocol (``claude -p --output-format stream-json
--verbose``; ``--input-format stream-json`` on stdin), as captured by the tools that
drive it. Not a store: captures live wherever their host kept them."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Harness
from ...kit.registry import Later
from ...model.native import tag_of
from .codec import CODEC
from .read import read
from .records import LINE_TYPES
from .records import PROTOCOL_ONLY
from .write import write
from .write import write_input

# Keys only a Claude Code session file uses (camelCase envelope). One of them rules a
# capture out: stream-json lines say session_id / parent_tool_use_id instead.
_SESSION_FILE_KEYS = ("sessionId", "parentUuid", "leafUuid", "isSidechain", "agentId", "toolUseResult")
_CAPTURE_KEYS = ("session_id", "parent_tool_use_id")


def detect(sample: list[Any]) -> int:
    """Score the leading decoded lines: a ``system``/``init``, a ``result``, control or
    stream lines, or snake_case ``session_id`` on conversation lines say "capture"; a
    camelCase session-file key says "not a capture" (score 0)."""
    score = 0
    for value in sample:
        if not isinstance(value, dict):
            continue
        if any(k in value for k in _SESSION_FILE_KEYS):
            return 0
        kind = tag_of(value)
        if kind not in LINE_TYPES:
            continue
        if kind in PROTOCOL_ONLY:
            score += 3
        elif kind == "system" and value.get("subtype") == "init" and "session_id" in value:
            score += 4
        elif any(k in value for k in _CAPTURE_KEYS):
            score += 2
        elif kind == "user" and "message" in value and "uuid" not in value:
            score += 2  # a prompt on stdin: {"type": "user", "message": {...}}
    return score


HARNESS = Harness(
    name="stream_json",
    title="Claude Code stream-json",
    codec=CODEC,
    detect=detect,
    read=read,
    write=write,
    # a capture holds what the CLI printed, not what the user typed: prompts or the
    # stdin side complete it; and its writer can write that stdin side
    reads_prompts=True,
    writes_stdin_side=True,
    append_only=True,  # a capture grows line by line as the CLI prints (txcodec.live)
    carry_on=Later(f"{__name__}.read", "carry_on"),  # its reader kept between looks, ended on a copy
    token_metric="claude_code.token.usage",  # Claude Code's own exporter's name
    flags_failed_results=True,  # the Messages API\'s is_error (docs/dataset.md#tool-failures)
    # no origin: a capture records none. Its tool_use_result is Claude Code's toolUseResult
    changes=Later("txcodec.harnesses.claude_code.changes", "CHANGES"),
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)

__all__ = ["HARNESS", "CODEC", "detect", "read", "write", "write_input"]
