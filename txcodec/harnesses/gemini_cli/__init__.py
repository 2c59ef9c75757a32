"""Gemini CLI: ``~/.gemini/tmp/<project slug>/chats/session-<time>-<sid8>.jsonl``.

``records`` (typed records), ``codec`` (bytes <-> records, the legacy ``.json`` document
too), ``store`` (discovery and installing into a store), ``read`` (-> Common) and
``write`` (Common -> a file ``gemini --resume`` accepts).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import lazy
from ...kit.registry import package_harness
from ...model.native import tag_of
from .. import codec_on_demand
from . import store

_MESSAGE_TYPES = {"user", "gemini", "info", "error", "warning"}


def detect(sample: list[Any]) -> int:
    """A metadata line (``sessionId`` + ``projectHash``) is decisive; ``$set`` /
    ``$rewindTo`` records and ``{id, type: gemini|user...}`` messages without Claude's
    ``uuid`` add to it. A bare list of ``{role: user|model, parts}`` contents is a 0.1.x
    ``/chat save`` checkpoint."""
    score = 0
    for i, value in enumerate(sample):
        if i == 0 and isinstance(value, list) and value:  # a 0.1.x checkpoint: [{role, parts}, ...]
            roles = {c.get("role") for c in value if isinstance(c, dict) and isinstance(c.get("parts"), list)}
            if roles and roles <= {"user", "model"} and all(isinstance(c, dict) for c in value):
                score += 5
            continue
        if not isinstance(value, dict):
            continue
        if isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str):
            score += 10 if i == 0 else 3
        elif isinstance(value.get("$set"), dict) or isinstance(value.get("$rewindTo"), str):
            score += 3
        elif isinstance(value.get("id"), str) and tag_of(value) in _MESSAGE_TYPES and "uuid" not in value:
            score += 3 if value.get("type") == "gemini" else 1
    return score


HARNESS = package_harness(
    __name__,
    append_only=True,  # the client only appends to its JSONL files (txcodec.live)
    carry_on=lazy(f"{__name__}.read", "carry_on"),  # and a follow's reader carries on from its last line
    title="Gemini CLI",
    detect=detect,
    store=store.STORE,
    resume=("gemini", "--resume", "{id}"),
    changes=Later(f"{__name__}.changes", "CHANGES"),
    # the keys whose values are ids, hashes or signatures: never redacted (docs/redact.md)
    redact_keep=("id", "sessionId", "projectHash", "thoughtSignature", "callId", "responseId", "prompt_id"),
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
