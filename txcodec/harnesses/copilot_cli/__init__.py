"""GitHub Copilot CLI: ``~/.copilot/session-state/<session id>/events.jsonl``.

``records`` (the event envelope), ``codec`` (bytes <-> events), ``store`` (discovery),
``read`` (-> Common) and ``write`` (Common -> an event log ``copilot --resume`` replays).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import lazy
from ...kit.registry import package_harness
from .. import codec_on_demand
from . import store


def detect(sample: list[Any]) -> int:
    """An event envelope (``type`` with a dot, ``data`` object, ``id``, ``timestamp`` and
    a ``parentId`` key) scores; a ``session.start`` whose producer is ``copilot-agent`` is
    decisive. No other harness writes ``parentId`` beside a dotted ``type``."""
    score = 0
    for value in sample:
        if not isinstance(value, dict) or not isinstance(value.get("type"), str) or "." not in value["type"]:
            continue
        if not ("parentId" in value and isinstance(value.get("id"), str) and isinstance(value.get("data"), dict)):
            continue
        score += 3
        if value["type"] == "session.start" and value["data"].get("producer") == "copilot-agent":
            score += 20
    return score


HARNESS = package_harness(
    __name__,
    append_only=True,  # the client only appends to its JSONL files (txcodec.live)
    carry_on=lazy(f"{__name__}.read", "carry_on"),  # and a follow's reader carries on from its last line
    title="GitHub Copilot CLI",
    detect=detect,
    store=store.STORE,
    resume=("copilot", "--resume", "{id}"),
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
