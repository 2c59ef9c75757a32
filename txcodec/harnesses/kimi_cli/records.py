"""Typed records of a Kimi CLI context file (``~/.kimi/sessions/<md5 of cwd>/<id>/context.jsonl``).

Facts from kimi-cli 1.51.0 (files it wrote against a loopback mock, and its source:
``kimi_cli/soul/context.py`` ``_apply_context_record`` and ``kosong/message.py``): every
line is one JSON object with a ``role``. The client's own records are
``{"role":"_system_prompt","content":str}`` (re-sent verbatim on resume),
``{"role":"_checkpoint","id":int}`` and ``{"role":"_usage","token_count":int}`` (the
context size after a call, not a per-call usage). Every other line is a chat message
(``system``, ``user``, ``assistant``, ``tool``): ``content`` a string or a list of parts
(``text``, ``think``, ``image_url``, ``audio_url``, ``video_url``), ``tool_calls``
(``{type:"function", id, function:{name, arguments (a JSON string)}}``) and
``tool_call_id``. A line the client cannot read is skipped with a warning.

``content`` and ``tool_calls`` stay :class:`msgspec.Raw`, so unknown keys survive in the
line's bytes.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType

# the client's bookkeeping lines, beside the chat messages
SYSTEM_PROMPT, CHECKPOINT, USAGE = "_system_prompt", "_checkpoint", "_usage"
CHAT_ROLES = ("system", "user", "assistant", "tool")


class Record(msgspec.Struct, omit_defaults=True):
    role: str
    content: Raw | UnsetType = UNSET
    tool_calls: Raw | UnsetType = UNSET
    tool_call_id: str | None | UnsetType = UNSET
    name: str | None | UnsetType = UNSET
    id: int | UnsetType = UNSET
    token_count: int | UnsetType = UNSET
