"""Typed view of an opencode session export (``opencode export <id>``), the form sessions go
in and out of the client in.

Facts from opencode 1.18.33 (files it wrote against a loopback mock, and what ``opencode
import`` took; docs/opencode.md#format-facts): ``{info, messages: [{info, parts}]}``. ``info``
is the session (``id`` ``ses_…``, ``slug``, ``projectID``, ``directory``, ``title``,
``version``, ``time{created, updated}`` in ms, ...). A message's ``info`` has ``id``
(``msg_…``), ``sessionID``, ``role``, ``time``; a user message ``agent`` and ``model``; an
assistant message ``parentID`` (its user message), ``modelID``, ``providerID``, ``mode``,
``agent``, ``path``, ``cost``, ``tokens{input, output, reasoning, cache{read, write}}`` and
``finish``. Parts (``prt_…``) are ``text``, ``reasoning``, ``file``, ``tool`` (``callID``,
``tool``, ``state{status, input, output | error, title, metadata, time}``), ``step-start``,
``step-finish`` (``reason``, ``tokens``, ``cost``) and others (``patch``, ``snapshot``,
``compaction``, ``agent``, ``subtask``).

Messages and parts stay :class:`msgspec.Raw`, so unknown keys survive in the bytes.
"""

from __future__ import annotations

import msgspec
from msgspec import Raw


class SessionInfo(msgspec.Struct):
    id: str


class Export(msgspec.Struct):
    info: SessionInfo
    messages: list[Raw]
