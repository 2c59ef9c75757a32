"""pi: ``~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuidv7>.jsonl``."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import lazy
from ...kit.registry import package_harness
from ...model.native import tag_of
from .. import codec_on_demand
from . import store
from .records import ENTRY_TYPES


def detect(sample: list[Any]) -> int:
    """A ``session`` header with a string ``id`` first (pi's own validity test), then
    entries tagged by pi's entry types."""
    if not sample or not isinstance(sample[0], dict):
        return 0
    header = sample[0]
    if header.get("type") != "session" or not isinstance(header.get("id"), str):
        return 0
    score = 10
    for value in sample[1:]:
        if isinstance(value, dict) and tag_of(value) in ENTRY_TYPES:
            score += 2
    return score


HARNESS = package_harness(
    __name__,
    append_only=True,  # the client only appends to its JSONL files (txcodec.live)
    carry_on=lazy(f"{__name__}.read", "carry_on"),  # and a follow's reader carries on from its last line
    title="pi",
    detect=detect,
    store=store.STORE,
    fork_slot="parentSession",  # its writer declares the loss itself when the parent is no pi session file
    resume=("pi", "--session", "{id}"),
    origin=Later(f"{__name__}.origin", "ORIGIN"),
    changes=Later(f"{__name__}.changes", "CHANGES"),
    # the keys whose values are ids, hashes or signatures: never redacted (docs/redact.md)
    redact_keep=("id", "parentId", "thinkingSignature", "textSignature", "responseId", "toolCallId"),
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
