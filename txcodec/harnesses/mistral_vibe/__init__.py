"""Mistral Vibe: legacy ``logs/session/session_*_<id[:8]>/messages.jsonl`` (+ ``meta.json``)
and the 3.x unified store ``logs/session/unified/<id>/`` (``CURRENT`` -> manifest -> chunks).

``records`` (both forms' lines), ``codec`` (bytes <-> records), ``store`` (discovery and
the unified digest chain), ``read`` (either form -> Common) and ``write`` (Common -> the
legacy form, which ``vibe --resume <id>`` imports).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import package_harness
from .. import codec_on_demand
from . import store
from .records import STORE_FORMAT

_VIBE_KEYS = frozenset(
    {"message_id", "injected", "reasoning_message_id", "reasoning_payloads", "user_display_content", "tool_result"}
)


def detect(sample: list[Any]) -> int:
    """A unified ``CURRENT`` is decisive. A message line with a key only Vibe's
    ``LLMMessage`` writes (``message_id``, ``injected`` …) scores; so does a ``tool``
    line naming its tool (``name``: Kimi CLI's tool lines carry none)."""
    score = 0
    for value in sample:
        if not isinstance(value, dict):
            continue
        if value.get("store_format") == STORE_FORMAT:
            score += 40
        elif isinstance(value.get("role"), str) and "content" in value and not ({"type", "timestamp"} & value.keys()):
            if _VIBE_KEYS & value.keys():
                score += 3
            elif value["role"] == "tool" and isinstance(value.get("name"), str) and "tool_call_id" in value:
                score += 5
    return score


# Its tools' kinds (model.tools.tool_kind), by the names Mistral Vibe 3.0.2 defines
# (``vibe/core/tools/builtins``: the class name in snake case); its ``edit`` is not pi's.
TOOL_KINDS = {
    "bash": "shell_exec",
    "read_file": "read_file",
    "write_file": "modify_file",
    "edit": "modify_file",
    "grep": "code_search",
    "todo": "manage_todos",
    "task": "subagent_task",
    "web_fetch": "http_request",
    "web_search": "http_request",
}

HARNESS = package_harness(
    __name__,
    title="Mistral Vibe",
    detect=detect,
    store=store.STORE,
    resume=("vibe", "--resume", "{id}"),
    tool_kinds=TOOL_KINDS,
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
