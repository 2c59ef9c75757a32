"""Typed view of a cline session's messages file (``<id>/<id>.messages.json``).

Facts from cline 3.0.65 (files it wrote against a loopback mock, docs/cline.md#format-facts): one
JSON document ``{version: 1, updated_at, agent, sessionId, origin, messages, system_prompt}``,
pretty-printed with two spaces and no final newline. A message is ``{id, role, content:
[text | tool_use{id, name, input} | tool_result{tool_use_id, name, content}], ts,
modelInfo?, metrics?}``. The session record ``<id>.json`` beside it holds what the
``sessions.db`` row holds (cwd, provider, model, prompt, metadata).

The messages vary and stay :class:`msgspec.Raw`, so unknown keys survive in the bytes.
"""

from __future__ import annotations

import re

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType

# A user text as stored: the typed text inside ``<user_input>``, with the mode it was typed in.
WRAPPED = re.compile(r"\A\s*<user_input(?: mode=\"([^\"]*)\")?>(.*)</user_input>\s*\Z", re.DOTALL)


class Session(msgspec.Struct, omit_defaults=True):
    sessionId: str
    messages: list[Raw]
    version: int | UnsetType = UNSET
    updated_at: str | UnsetType = UNSET
    agent: str | UnsetType = UNSET
    origin: Raw | UnsetType = UNSET
    system_prompt: str | UnsetType = UNSET
