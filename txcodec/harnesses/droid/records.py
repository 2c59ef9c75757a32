"""Typed records of a Factory droid session (``~/.factory/sessions/<munged cwd>/<id>.jsonl``).

Facts from droid 0.225.2 (files it wrote against a loopback mock, docs/droid.md#format-facts): every
line is one record with a ``type``: ``session_start {id, title, owner, version: 2, cwd,
hostId}`` first, then ``message {id, parentId, timestamp, message: {role, content:
[text | tool_use | tool_result blocks, Anthropic style]}}`` and ``agent_turn_outcome``
bookkeeping. The first user message of a run is a ``context-<id>`` record holding a
``<system-reminder>`` tool list. Fields vary and stay :class:`msgspec.Raw` or optional, so
unknown keys survive in the line's bytes.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType


class Record(msgspec.Struct, omit_defaults=True):
    type: str
    id: str | UnsetType = UNSET
    parentId: str | None | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    message: Raw | UnsetType = UNSET
