"""A conversation's workspace changes, each harness's own way: :mod:`txcodec.model.changes`
walks the tool calls and builds the diffs, a harness declares how its calls are read
(``Harness.changes``), and this module joins the two through the registry. Common JSON is
written here too, since it carries those changes (``derived_changes``)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import msgspec
from msgspec import UNSET

from ..model.common_json import encode
from . import registry

if TYPE_CHECKING:
    from ..model.common import Change
    from ..model.common import Conversation

_encoder = msgspec.json.Encoder()


def _declared(harness: str) -> Any:
    """The harness's ``Harness.changes`` (a ``ChangesReader``), or None."""
    found = registry.find(harness)
    return found.changes if found is not None else None


def conversation_changes(conv: Conversation, *, subagents: bool = True, agent_id: Any = UNSET) -> list[Change]:
    """Every change of ``conv`` in call order; its subagents' after it, each marked with
    its ``agent_id``, unless ``subagents=False``."""
    from ..model.changes import derive  # here: a command that derives no change never loads difflib

    return derive(conv, _declared, subagents=subagents, agent_id=agent_id)


def session_changes(session: Any, conv: Conversation) -> list[Change]:
    """:func:`conversation_changes`, where the harness reads a better account from the
    native lines Common does not carry (``ChangesReader.from_session``: a Codex rollout's
    ``patch_apply_end`` events)."""
    changes = conversation_changes(conv)
    declared = _declared(session.harness)
    if declared is None or declared.from_session is None:
        return changes
    return declared.from_session(session, conv, changes)


def to_json(conversation: Conversation) -> bytes:
    """The conversation as Common JSON, its changes derived afresh
    (:func:`txcodec.model.common_json.from_json` reads it back)."""
    return encode(with_changes(conversation), _encoder.encode)


def with_changes(conversation: Conversation) -> Conversation:
    """A copy whose ``derived_changes`` (and each child's) is derived afresh from its messages."""
    found = conversation_changes(conversation, subagents=False)
    children = [msgspec.structs.replace(c, conversation=with_changes(c.conversation)) for c in conversation.children]
    return msgspec.structs.replace(conversation, derived_changes=found or UNSET, children=children)
