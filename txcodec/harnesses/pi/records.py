"""Typed entries of a pi session file (``~/.pi/agent/sessions/--<cwd>--/<ts>_<id>.jsonl``).

Facts from pi 0.73.1 (``dist/core/session-manager.js``, ``@mariozechner/pi-ai`` types,
and files it wrote against a loopback mock):

- line 1 is the header ``{type: "session", version: 3, id, timestamp, cwd,
  parentSession?}``; version 1 files have no ``version`` (or ``1``) and entries without
  ``id``/``parentId`` (the client links them in file order when it loads them); version 2
  added the ``id``/``parentId`` tree; version 3 renamed the message role ``hookMessage``
  to ``custom``. The client migrates older files and rewrites them in place on load.
- every other line is an entry ``{type, id (8 hex), parentId, timestamp, ...}``:
  ``message``, ``model_change{provider, modelId}``, ``thinking_level_change{thinkingLevel}``,
  ``compaction{summary, firstKeptEntryId, tokensBefore, details?, fromHook?}``,
  ``branch_summary{fromId, summary}``, ``custom{customType, data}``,
  ``custom_message{customType, content, display, details?}``, ``label{targetId, label}``,
  ``session_info{name}``.
- ``message.message`` is tagged by ``role``: ``user{content: str | [text|image]}``,
  ``assistant{content: [text|thinking|toolCall], api, provider, model, usage, stopReason,
  errorMessage?, responseId?}``, ``toolResult{toolCallId, toolName, content, isError,
  details?}``, ``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary``.

Shapes that vary (tool arguments, details, extension data) stay :class:`msgspec.Raw`.
"""

from __future__ import annotations

from typing import Union

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType

# --- content blocks ----------------------------------------------------------------


class _Block(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True):
    pass


class TextContent(_Block, tag="text"):
    text: str = ""
    text_signature: str | UnsetType = UNSET


class ThinkingContent(_Block, tag="thinking"):
    thinking: str = ""
    thinking_signature: str | UnsetType = UNSET
    redacted: bool | UnsetType = UNSET


class ImageContent(_Block, tag="image"):
    data: str = ""
    mime_type: str = ""


class ToolCall(_Block, tag="toolCall"):
    id: str = ""
    name: str = ""
    arguments: Raw | UnsetType = UNSET
    thought_signature: str | UnsetType = UNSET


Content = Union[TextContent, ThinkingContent, ImageContent, ToolCall]


class Cost(msgspec.Struct, rename="camel", omit_defaults=True):
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


class Usage(msgspec.Struct, rename="camel", omit_defaults=True):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost | UnsetType = UNSET


class AgentMessage(msgspec.Struct, rename="camel", omit_defaults=True):
    """One message of any role; which fields are set depends on ``role``."""

    role: str
    content: str | list[Content] | UnsetType = UNSET
    timestamp: int | float | UnsetType = UNSET
    # assistant
    api: str | UnsetType = UNSET
    provider: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    response_id: str | UnsetType = UNSET
    usage: Usage | UnsetType = UNSET
    stop_reason: str | UnsetType = UNSET
    error_message: str | UnsetType = UNSET
    # toolResult
    tool_call_id: str | UnsetType = UNSET
    tool_name: str | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    details: Raw | UnsetType = UNSET
    # bashExecution
    command: str | UnsetType = UNSET
    output: str | UnsetType = UNSET
    exit_code: int | None | UnsetType = UNSET
    exclude_from_context: bool | UnsetType = UNSET
    # custom / summaries
    custom_type: str | UnsetType = UNSET
    summary: str | UnsetType = UNSET


# --- entries -----------------------------------------------------------------------


class _Entry(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True):
    id: str | UnsetType = UNSET  # absent in version 1 files
    parent_id: str | None | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET


class SessionHeader(_Entry, tag="session"):
    version: int | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    parent_session: str | UnsetType = UNSET


class MessageEntry(_Entry, tag="message"):
    message: AgentMessage | UnsetType = UNSET


class ModelChange(_Entry, tag="model_change"):
    provider: str | UnsetType = UNSET
    model_id: str | UnsetType = UNSET


class ThinkingLevelChange(_Entry, tag="thinking_level_change"):
    thinking_level: str | UnsetType = UNSET


class Compaction(_Entry, tag="compaction"):
    summary: str = ""
    first_kept_entry_id: str | UnsetType = UNSET
    first_kept_entry_index: int | UnsetType = UNSET  # version 1
    tokens_before: int | UnsetType = UNSET
    details: Raw | UnsetType = UNSET
    from_hook: bool | UnsetType = UNSET


class BranchSummary(_Entry, tag="branch_summary"):
    from_id: str | UnsetType = UNSET
    summary: str = ""
    details: Raw | UnsetType = UNSET
    from_hook: bool | UnsetType = UNSET


class Custom(_Entry, tag="custom"):
    custom_type: str | UnsetType = UNSET
    data: Raw | UnsetType = UNSET


class CustomMessage(_Entry, tag="custom_message"):
    custom_type: str | UnsetType = UNSET
    content: str | list[Content] | UnsetType = UNSET
    display: bool | UnsetType = UNSET
    details: Raw | UnsetType = UNSET


class Label(_Entry, tag="label"):
    target_id: str | UnsetType = UNSET
    label: str | None | UnsetType = UNSET


class SessionInfo(_Entry, tag="session_info"):
    name: str | UnsetType = UNSET


Entry = Union[
    SessionHeader,
    MessageEntry,
    ModelChange,
    ThinkingLevelChange,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
]
ENTRY_TYPES: dict[str, type] = {cls.__struct_config__.tag: cls for cls in Entry.__args__}
