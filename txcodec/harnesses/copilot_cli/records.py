"""Typed records of a GitHub Copilot CLI event log (``~/.copilot/session-state/<id>/events.jsonl``).

Facts from Copilot CLI 1.0.102 (its bundled ``schemas/session-events.schema.json``, files it
wrote against a loopback mock, and what it refused): every line is one event ``{type,
data, id, timestamp, parentId}``. ``id`` must be a UUID, ``timestamp`` an ISO 8601 time with
a timezone, ``parentId`` a UUID or ``null`` (the key present); a file whose line breaks one
of these is refused whole ("Session file is corrupted"). ``parentId`` names the event before
it, but the client replays events in **file order** (docs/copilot_cli.md#format-facts). ``agentId`` marks the
events of a subagent; ``ephemeral`` ones are never written to disk.

``data`` varies with ``type`` (197 types in the schema) and stays :class:`msgspec.Raw`, so
unknown keys survive in the line's bytes.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType

# what the reader turns into conversation; every other type is bookkeeping for it
CONVERSATION_TYPES = (
    "session.start",
    "user.message",
    "assistant.message",
    "tool.execution_complete",
    "session.usage_record",
    "session.compaction_complete",
)


class Event(msgspec.Struct, rename="camel", omit_defaults=True):
    type: str
    id: str
    timestamp: str
    parent_id: str | None
    data: Raw | UnsetType = UNSET
    ephemeral: bool | UnsetType = UNSET
    agent_id: str | UnsetType = UNSET
