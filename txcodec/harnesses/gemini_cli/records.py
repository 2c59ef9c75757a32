"""Typed records of a Gemini CLI session file.

Sources: google-gemini/gemini-cli ``packages/core/src/services/chatRecordingTypes.ts`` and
``chatRecordingService.ts`` (``loadConversationRecord``), and files written by gemini 0.61.0.

A session file (``session-<YYYY-MM-DDTHH-MM>-<sid8>.jsonl``) holds one JSON object per line.
Records carry no ``type`` tag; the CLI tells them apart by shape, in this order, and so do we:

=====================  ==================================================================
``{"$rewindTo": id}``  :class:`Rewind`: drop message ``id`` and everything after it
``{"id": str, ...}``   :class:`MessageRecord`: a message; a later one with the same id
                       replaces the earlier in place (an upsert)
``{"$set": {...}}``    :class:`SetRecord`: merge into the metadata; ``$set.messages``
                       replaces the whole history (a checkpoint)
``{"sessionId",``      :class:`Metadata`: the first line (written again by every resume);
``"projectHash", ...}``  a legacy single-object file is one of these with ``messages``
=====================  ==================================================================

Anything else rides along as :class:`~txcodec.model.native.Opaque`. ``content`` is the
``@google/genai`` ``PartListUnion``: a string, one part, or a list of strings and parts.
"""

from __future__ import annotations

from typing import Any
from typing import Union

import msgspec
from msgspec import UNSET
from msgspec import UnsetType
from msgspec import field


class _S(msgspec.Struct, rename="camel", omit_defaults=True):
    pass


# --- parts (the Gemini API's Part) ----------------------------------------------------


class FunctionCall(_S):
    id: str | UnsetType = UNSET
    name: str | UnsetType = UNSET
    args: Any = UNSET


class FunctionResponse(_S):
    id: str | UnsetType = UNSET
    name: str | UnsetType = UNSET
    response: Any = UNSET  # the CLI writes {"output": str} or {"error": str}


class Blob(_S):
    mime_type: str | UnsetType = UNSET
    data: str | UnsetType = UNSET  # base64


class FileData(_S):
    mime_type: str | UnsetType = UNSET
    file_uri: str | UnsetType = UNSET


class Part(_S):
    text: str | UnsetType = UNSET
    thought: bool | UnsetType = UNSET
    thought_signature: str | UnsetType = UNSET
    function_call: FunctionCall | UnsetType = UNSET
    function_response: FunctionResponse | UnsetType = UNSET
    inline_data: Blob | UnsetType = UNSET
    file_data: FileData | UnsetType = UNSET
    executable_code: Any = UNSET
    code_execution_result: Any = UNSET
    video_metadata: Any = UNSET


Content = Union[str, list[Union[str, Part]], Part]
"""``PartListUnion``."""


# --- message records ------------------------------------------------------------------


class Thought(_S):
    """A thought summary (``ThoughtSummary`` + timestamp); the CLI sends it back to the
    model as ``**subject** description`` when it rebuilds a legacy-shaped message."""

    subject: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET


class Tokens(msgspec.Struct, rename="camel"):
    """``TokensSummary``: the API's usageMetadata, renamed. Zeros are written (the CLI
    always writes every count)."""

    input: int = 0  # promptTokenCount (includes cached)
    output: int = 0  # candidatesTokenCount
    cached: int = 0  # cachedContentTokenCount
    thoughts: int | UnsetType = UNSET  # thoughtsTokenCount
    tool: int | UnsetType = UNSET  # toolUsePromptTokenCount
    total: int = 0  # totalTokenCount


class ToolCall(_S):
    id: str = ""
    name: str = ""
    args: Any = UNSET  # an object in practice
    result: Content | None | UnsetType = UNSET  # the functionResponse parts sent back
    status: str | UnsetType = UNSET  # success | error | cancelled | ...
    timestamp: str | UnsetType = UNSET
    agent_id: str | UnsetType = UNSET
    display_name: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    result_display: Any = UNSET  # what the UI showed (string, diff object, ...)
    render_output_as_markdown: bool | UnsetType = UNSET


class MessageRecord(_S):
    """``type`` is user | gemini | info | error | warning (an open set)."""

    id: str
    timestamp: str | UnsetType = UNSET
    type: str | UnsetType = UNSET
    content: Content | None | UnsetType = UNSET
    display_content: Content | None | UnsetType = UNSET
    thoughts: list[Thought] | UnsetType = UNSET
    tokens: Tokens | None | UnsetType = UNSET
    model: str | UnsetType = UNSET
    tool_calls: list[ToolCall] | UnsetType = UNSET


# --- metadata ---------------------------------------------------------------------------


class Metadata(_S):
    session_id: str = ""
    project_hash: str = ""
    start_time: str | UnsetType = UNSET
    last_updated: str | UnsetType = UNSET
    summary: str | UnsetType = UNSET
    memory_scratchpad: Any = UNSET
    directories: list[str] | UnsetType = UNSET
    kind: str | UnsetType = UNSET  # main | subagent
    messages: list[MessageRecord] | UnsetType = UNSET  # legacy whole-session record


class MetadataPatch(_S):
    """What a ``$set`` may hold: any metadata field (``messages`` = a checkpoint)."""

    session_id: str | UnsetType = UNSET
    project_hash: str | UnsetType = UNSET
    start_time: str | UnsetType = UNSET
    last_updated: str | UnsetType = UNSET
    summary: str | UnsetType = UNSET
    memory_scratchpad: Any = UNSET
    directories: list[str] | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    messages: list[MessageRecord] | UnsetType = UNSET


class SetRecord(msgspec.Struct, omit_defaults=True):
    set: MetadataPatch = field(name="$set")


class Rewind(msgspec.Struct, omit_defaults=True):
    rewind_to: str = field(name="$rewindTo")


class ApiContent(_S):
    """A Gemini API ``Content``: what the 0.1.x chat history holds (role user or model)."""

    role: str | UnsetType = UNSET
    parts: list[Part] = msgspec.field(default_factory=list)


class Checkpoint(msgspec.Struct):
    """A Gemini CLI 0.1.x ``/chat save <tag>`` file, ``tmp/<sha256 of the project
    root>/checkpoint-<tag>.json``: the chat history as a bare JSON list of API contents,
    pretty-printed (``JSON.stringify(history, null, 2)``; docs/gemini_cli.md#versions-read).
    0.1.x keeps no other session file."""

    contents: list[ApiContent]


Record = Union[Rewind, MessageRecord, SetRecord, Metadata]

MESSAGE_TYPES = ("user", "gemini", "info", "error", "warning")
