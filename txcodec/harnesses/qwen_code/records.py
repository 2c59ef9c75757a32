"""Typed records of a Qwen Code session file (``~/.qwen/projects/<munged cwd>/chats/<sid>.jsonl``).

Facts from Qwen Code 0.24.4 (its bundled ``transcript-records`` module, and files it wrote
against a loopback mock): every line is one object ``{uuid, parentUuid, sessionId,
timestamp, type, cwd, version, ...}`` whose ``type`` is ``user``, ``assistant``,
``tool_result`` or ``system``. Conversation records carry a Gemini-style ``message{role:
user|model, parts[...]}``; ``system`` records carry a ``subtype`` (``ui_telemetry``,
``attribution_snapshot``, ``chat_compression``, ``custom_title``, ...) and a
``systemPayload``. Several lines may share one ``uuid``: the client joins such fragments,
concatenating their parts. A part is an object with one of ``text`` (with ``thought:
true`` for reasoning), ``functionCall``, ``functionResponse``, ``inlineData``, ...

Values whose shape varies (tool arguments and responses, payloads, usage) stay
:class:`msgspec.Raw`; keys no struct names survive in the line's bytes.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType

RECORD_TYPES = ("user", "assistant", "tool_result", "system")
# system subtypes that are not part of the conversation chain (the client skips them
# when it picks the leaf)
SIDE_SUBTYPES = frozenset(
    {
        "session_artifact_event",
        "session_artifact_snapshot",
        "session_sources_snapshot",
        "managed_session_header_v1",
        "managed_session_event_v1",
        "managed_session_commit_v1",
    }
)


class FunctionCall(msgspec.Struct, omit_defaults=True):
    name: str = ""
    id: str | UnsetType = UNSET
    args: Raw | UnsetType = UNSET


class FunctionResponse(msgspec.Struct, omit_defaults=True):
    name: str = ""
    id: str | UnsetType = UNSET
    response: Raw | UnsetType = UNSET


class Part(msgspec.Struct, rename="camel", omit_defaults=True):
    """One Gemini ``Part``: exactly one of its payload fields is normally set."""

    text: str | UnsetType = UNSET
    thought: bool | UnsetType = UNSET
    thought_signature: str | UnsetType = UNSET
    function_call: FunctionCall | UnsetType = UNSET
    function_response: FunctionResponse | UnsetType = UNSET
    inline_data: Raw | UnsetType = UNSET
    file_data: Raw | UnsetType = UNSET


class Content(msgspec.Struct, omit_defaults=True):
    role: str | UnsetType = UNSET
    parts: list[Part] | UnsetType = UNSET


class Record(msgspec.Struct, rename="camel", omit_defaults=True):
    uuid: str
    parent_uuid: str | None
    session_id: str
    type: str
    timestamp: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    version: str | UnsetType = UNSET
    subtype: str | UnsetType = UNSET
    provenance: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    message: Content | UnsetType = UNSET
    usage_metadata: Raw | UnsetType = UNSET
    tool_call_result: Raw | UnsetType = UNSET
    system_payload: Raw | UnsetType = UNSET
