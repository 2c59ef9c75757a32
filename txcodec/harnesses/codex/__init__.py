"""Codex CLI: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import lazy
from ...kit.registry import package_harness

# Envelope line types newer builds write that the codec keeps as OtherLine.
_NEWER_LINES = {"world_state", "token_usage_record", "inter_agent_communication_metadata"}


def detect(sample: list[Any]) -> int:
    """Score leading lines: the ``{timestamp, type, payload}`` envelope is Codex's alone;
    2025 files start with a bare ``{id, timestamp, instructions}`` meta and carry
    ``{"record_type": "state"}`` markers and bare response items; a 0.1.x rollout is one
    ``{session, items}`` document."""
    # the record structs and the codec's helpers are imported when a file is scored, not
    # for every use of the package (a rollout opening with Codex's signature is never
    # scored, and usage reads one without txcodec.model.native)
    from ...model.native import tag_of
    from .records import LINE_TYPES
    from .records import RESPONSE_ITEM_TYPES

    score = 0
    for n, value in enumerate(sample):
        if not isinstance(value, dict):
            continue
        kind = tag_of(value)
        if "payload" in value and isinstance(kind, str):
            if kind in LINE_TYPES:
                score += 3 if kind == "session_meta" else 2
            elif kind in _NEWER_LINES:
                score += 1
        elif "type" in value and kind is None:
            continue  # a tag that is not a string names nothing
        elif kind is None and value.get("record_type") == "state":
            score += 2
        elif (
            n == 0 and kind is None and isinstance(value.get("session"), dict) and isinstance(value.get("items"), list)
        ):
            score += 3 if "id" in value["session"] else 0  # 0.1.x: the whole rollout, one document
        elif n == 0 and kind is None and "id" in value and ("instructions" in value or "git" in value):
            score += 3
        elif kind in RESPONSE_ITEM_TYPES and "role" in value or kind in ("reasoning", "function_call_output"):
            score += 1
    return score


# codec, read, write, store and resume check by the standard names, each imported on first
# use: usage reads without the codec
HARNESS = package_harness(
    __name__,
    append_only=True,  # the client only appends to its JSONL files (txcodec.live)
    carry_on=lazy(f"{__name__}.read", "carry_on"),  # and a follow's reader carries on from its last line
    title="Codex CLI",
    detect=detect,
    read_streams=True,  # it reads a NativeSession.pending as it decodes it
    read_unshared=True,  # no object sits in two messages (conform.conform's checked)
    fork_slot="session_meta.forked_from_id",
    writes_context=True,  # another client's context: a developer / user message item of its own
    resume=("codex", "resume", "{id}"),
    origin=Later(f"{__name__}.origin", "ORIGIN"),
    usage=Later(f"{__name__}.usage", "USAGE"),  # the lean pass imports this module alone
    changes=Later(f"{__name__}.changes", "CHANGES"),
    # the keys whose values are ids, hashes or signatures: never redacted (docs/redact.md)
    redact_keep=(
        "id",
        "turn_id",
        "thread_id",
        "root_turn_id",
        "session_id",
        "message_id",
        "call_id",
        "window_id",
        "previous_window_id",
        "first_window_id",
        "last_started_turn_id",
        "response_id",
        "encrypted_content",
        "revision",
    ),
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)
