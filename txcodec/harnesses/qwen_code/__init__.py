"""Qwen Code: ``~/.qwen/projects/<munged cwd>/chats/<session id>.jsonl``."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import lazy
from ...kit.registry import package_harness
from ...model.native import tag_of
from .. import codec_on_demand
from . import store
from .records import RECORD_TYPES


def detect(sample: list[Any]) -> int:
    """Qwen records look like Claude Code's (``uuid``, ``parentUuid``, ``sessionId``,
    ``type: user|assistant|system``) but hold ``message.parts`` where Claude Code holds
    ``message.content``; ``tool_result`` records and ``systemPayload`` are Qwen's alone.
    Each such line scores above what Claude Code's detector gives any line."""
    score = 0
    for value in sample:
        if not isinstance(value, dict) or tag_of(value) not in RECORD_TYPES or "sessionId" not in value:
            continue
        message = value.get("message")
        if isinstance(message, dict) and "content" in message:
            return 0  # a Claude Code record
        if isinstance(message, dict) and isinstance(message.get("parts"), list):
            score += 4
        elif value.get("type") == "tool_result" or "systemPayload" in value:
            score += 3
    return score


HARNESS = package_harness(
    __name__,
    append_only=True,  # the client only appends to its JSONL files (txcodec.live)
    carry_on=lazy(f"{__name__}.read", "carry_on"),  # and a follow's reader carries on from its last line
    title="Qwen Code",
    detect=detect,
    store=store.STORE,
    resume=("qwen", "--resume", "{id}"),
    # the same resultDisplay as Gemini CLI's
    changes=Later("txcodec.harnesses.gemini_cli.changes", "CHANGES"),
    # the keys whose values are ids, hashes or signatures: never redacted (docs/redact.md)
    redact_keep=("sessionId", "uuid", "parentUuid", "subagent_id", "callId", "responseId", "prompt_id"),
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
