"""OpenHands CLI: ``~/.openhands/conversations/<uuid hex>/`` (``base_state.json`` + ``events/``).

``records`` (an event, the base state), ``codec`` (one file's bytes <-> record), ``store``
(discovery, and a conversation folder loaded as one session), ``read`` (-> Common) and
``write`` (Common -> a folder ``openhands --resume <uuid>`` loads).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import package_harness
from .. import codec_on_demand
from . import store

KINDS = (
    "SystemPromptEvent",
    "MessageEvent",
    "ActionEvent",
    "ObservationEvent",
    "AgentErrorEvent",
    "UserRejectObservation",
    "ConversationStateUpdateEvent",
    "PauseEvent",
    "Condensation",
    "CondensationRequest",
)


def detect(sample: list[Any]) -> int:
    """An event names its class in ``kind`` (``...Event``) beside an ``id`` and ``source``;
    the conversation kinds score high, ``SystemPromptEvent`` highest. No other harness
    tags its records with ``kind``. A ``base_state.json`` (``id``, ``agent`` with ``llm``
    and a ``kind``) scores too."""
    score = 0
    for value in sample:
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            continue
        kind = value.get("kind")
        if isinstance(kind, str) and "source" in value and (kind in KINDS or kind.endswith(("Event", "Observation"))):
            score += 30 if kind == "SystemPromptEvent" else 20 if kind in KINDS else 5
        agent = value.get("agent")
        if (
            kind is None
            and isinstance(agent, dict)
            and isinstance(agent.get("llm"), dict)
            and isinstance(agent.get("kind"), str)
        ):
            score += 20
    return score


# Its tools' kinds (model.tools.tool_kind), by the names OpenHands SDK 1.21.0 defines
# (``openhands/tools``: the class name in snake case without ``_tool``); its ``task`` is a subagent.
TOOL_KINDS = {
    "terminal": "shell_exec",
    "file_editor": "modify_file",
    "planning_file_editor": "modify_file",
    "apply_patch": "modify_file",
    "edit": "modify_file",
    "write_file": "modify_file",
    "read_file": "read_file",
    "glob": "code_search",
    "grep": "code_search",
    "task_tracker": "manage_todos",
    "task": "subagent_task",
    "delegate": "subagent_task",
}

HARNESS = package_harness(
    __name__,
    title="OpenHands CLI",
    detect=detect,
    store=store.STORE,
    resume=("openhands", "--resume", "{id}"),
    tool_kinds=TOOL_KINDS,
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
