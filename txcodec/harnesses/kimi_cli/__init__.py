"""Kimi CLI: ``~/.kimi/sessions/<md5 of the work folder>/<session id>/context.jsonl``.

``records`` (the context lines), ``codec`` (bytes <-> records), ``store`` (discovery and
install, which registers the work folder in ``kimi.json``), ``read`` (-> Common) and
``write`` (Common -> a context file ``kimi -r <id>`` resumes).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import lazy
from ...kit.registry import package_harness
from .. import codec_on_demand
from . import store

_OWN = frozenset({"_system_prompt", "_checkpoint", "_usage"})
_CHAT = frozenset({"user", "assistant", "tool", "system"})
# keys Kimi's context lines never hold: envelopes of other harnesses, and Mistral Vibe's
# message lines (``message_id``; ``name`` on a tool line)
_OTHERS = frozenset({"type", "message", "timestamp", "name", "message_id", "injected"})


def detect(sample: list[Any]) -> int:
    """Chat Completions messages one a line (``role`` beside ``content``, no envelope)
    score a little; the client's own ``_system_prompt`` / ``_checkpoint`` / ``_usage``
    lines are decisive: no other harness writes a role starting with an underscore."""
    score = 0
    for value in sample:
        if not isinstance(value, dict) or not isinstance(value.get("role"), str):
            continue
        if value["role"] in _OWN:
            score += 20
        elif value["role"] in _CHAT and "content" in value and len(value) <= 5 and not (_OTHERS & value.keys()):
            score += 1
    return score


# Its tools' kinds (model.tools.tool_kind), by the names Kimi CLI 1.51.0 defines (``kimi_cli/tools``);
# names the shared table already knows (``Grep``) keep their kind.
TOOL_KINDS = {
    "Shell": "shell_exec",
    "ReadFile": "read_file",
    "ReadMediaFile": "read_file",
    "WriteFile": "modify_file",
    "StrReplaceFile": "modify_file",
    "SearchWeb": "http_request",
    "FetchURL": "http_request",
    "SetTodoList": "manage_todos",
}

HARNESS = package_harness(
    __name__,
    append_only=True,  # the client only appends to its JSONL files (txcodec.live)
    carry_on=lazy(f"{__name__}.read", "carry_on"),  # and a follow's reader carries on from its last line
    title="Kimi CLI",
    detect=detect,
    store=store.STORE,
    resume=("kimi", "-r", "{id}"),
    tool_kinds=TOOL_KINDS,
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
