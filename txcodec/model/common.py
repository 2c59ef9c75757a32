"""The Common model: one conversation in the Anthropic Messages shape.

Every harness reads into it and writes from it. A message is a role and a list of
content blocks; tool calls and their results are blocks joined by id. ``UNSET`` marks
a value the source did not have, which differs from ``null``. What a source carries
but Common has no slot for goes to the ``extra`` bags or, when it cannot be carried,
to the loss report (:mod:`txcodec.model.loss`).

The JSON form is one object with top-level ``version``, ``meta`` and ``messages``;
subagent conversations nest under ``children``, never inside the main ``messages``.
``schemas/common.schema.json`` is generated from these structs; reading and writing
that JSON is :mod:`txcodec.model.common_json`.
"""

from __future__ import annotations

from typing import Any
from typing import ClassVar
from typing import Literal
from typing import Union

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

COMMON_VERSION = "1.0"


class _Struct(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False):
    pass


# --- blocks --------------------------------------------------------------------------


class _Block(_Struct, tag_field="type"):
    pass


class Text(_Block, tag="text"):
    """Plain text."""

    text: str


class Thinking(_Block, tag="thinking"):
    """Reasoning. Claude Code usually keeps only the ``signature`` (docs/claude_code.md#what-is-typed:
    most thinking blocks have no text); Codex keeps ``encrypted`` content."""

    thinking: str = ""
    signature: str | UnsetType = UNSET
    encrypted: str | UnsetType = UNSET


class RedactedThinking(_Block, tag="redacted_thinking"):
    """Reasoning the provider returned encrypted whole (the Messages API's
    ``redacted_thinking`` block): ``data`` is opaque and goes back to the API as it was.
    Only an Anthropic model can read it; a writer for another provider keeps it where it
    has an encrypted slot or reports ``write:redacted-thinking``."""

    data: str


class ToolUse(_Block, tag="tool_use"):
    """A tool call. ``input`` is exactly what the source held (not always an object);
    :attr:`tool` gives the typed view, and ``kind`` the normalized family."""

    id: str
    name: str
    input: Any = None
    kind: str = "generic"

    @property
    def tool(self) -> Any:
        from .tools import typed_tool

        return typed_tool(self.name, self.input)


class ToolResult(_Block, tag="tool_result"):
    """A tool's result. ``is_error`` is ``None`` when the source did not say: an absent
    flag is unknown, never success (docs/claude_code_reader.md#reconstruction-rules)."""

    tool_use_id: str
    content: str | list[Block] = ""
    is_error: bool | None = None
    structured: Any = UNSET  # Claude Code's ``toolUseResult``, as it was
    # the whole output when ``content`` holds only a preview and the client saved the
    # rest to a side file (Claude Code's ``<persisted-output>``, read from tool-results/)
    persisted_output: str | UnsetType = UNSET


class Image(_Block, tag="image"):
    """An image: inline ``data`` (base64) with its media type, a ``url``, or a ``file_id``."""

    media_type: str | UnsetType = UNSET
    data: str | UnsetType = UNSET  # base64
    url: str | UnsetType = UNSET
    file_id: str | UnsetType = UNSET


class Document(_Block, tag="document"):
    """A document (PDF, text): inline ``data`` with its media type, or a ``url``."""

    media_type: str | UnsetType = UNSET
    data: str | UnsetType = UNSET  # base64, or plain text when media_type is text/plain
    url: str | UnsetType = UNSET
    title: str | UnsetType = UNSET


class Artifact(_Block, tag="artifact"):
    """A file the agent published. ``data`` (base64) holds inline bytes when the
    source had them; a writer materializes them beneath the session's folder."""

    path: str
    description: str | UnsetType = UNSET
    media_type: str | UnsetType = UNSET
    data: str | UnsetType = UNSET


class Command(_Block, tag="command"):
    """A slash command the user ran, with its arguments and what it printed."""

    name: str
    args: str | UnsetType = UNSET
    message: str | UnsetType = UNSET
    output: str | UnsetType = UNSET  # stdout, terminal escapes removed
    stderr: str | UnsetType = UNSET
    contents: str | UnsetType = UNSET  # a prompt command's expanded text, when recorded
    # the command's record body as the source client wrote it (Claude Code's envelope: its
    # element order and whitespace), written back by that client while it still says the same
    envelope: str | UnsetType = UNSET

    def as_text(self) -> str:
        """``/name args`` as the user typed it, then what it printed: for targets that
        have no command form. ``name`` keeps the source's spelling (Claude Code's has
        the slash), so one is added only when it is missing."""
        name = self.name if self.name.startswith("/") else "/" + self.name
        lines = [f"{name} {self.args if isinstance(self.args, str) else ''}".rstrip()] if self.name else []
        lines += [out for out in (self.output, self.stderr) if isinstance(out, str) and out]
        return "\n".join(lines)


class ServerToolUse(_Block, tag="server_tool_use"):
    """A tool the provider ran on its own side (the Messages API's ``server_tool_use``: web
    search, web fetch, code execution). No client result answers it: its result is a
    :class:`WebSearchToolResult` / :class:`WebFetchToolResult` block later in the same
    assistant message. ``extra`` keeps the block's other keys as the source had them."""

    id: str
    name: str
    input: Any = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    def api_block(self) -> dict[str, Any]:
        return {"type": "server_tool_use", "id": self.id, "name": self.name, "input": self.input, **self.extra}


class WebSearchToolResult(_Block, tag="web_search_tool_result"):
    """The provider's web search result: ``content`` is the list of ``web_search_result``
    items (their ``encrypted_content`` included) or the error object, as the API gave it."""

    tool_use_id: str
    content: Any = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    def api_block(self) -> dict[str, Any]:
        return {
            "type": "web_search_tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
            **self.extra,
        }


class WebFetchToolResult(_Block, tag="web_fetch_tool_result"):
    """The provider's web fetch result: ``content`` is the ``web_fetch_result`` (the page
    as a document) or the error object, as the API gave it."""

    tool_use_id: str
    content: Any = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    def api_block(self) -> dict[str, Any]:
        return {"type": "web_fetch_tool_result", "tool_use_id": self.tool_use_id, "content": self.content, **self.extra}


ServerBlock = Union[ServerToolUse, WebSearchToolResult, WebFetchToolResult]
_SERVER_KEYS = {"server_tool_use": ("id", "name", "input"), "web_search_tool_result": ("tool_use_id", "content")}
_SERVER_KEYS["web_fetch_tool_result"] = _SERVER_KEYS["web_search_tool_result"]


def server_block(value: Any) -> ServerBlock | None:
    """A Messages API server-tool block (a dict) as its Common block; ``None`` when it is
    not one, or lacks the ids that join a call to its result."""
    kind = value.get("type") if isinstance(value, dict) else None
    keys = _SERVER_KEYS.get(kind) if isinstance(kind, str) else None
    if keys is None or not isinstance(value.get(keys[0]), str):
        return None
    extra = {k: v for k, v in value.items() if k != "type" and k not in keys}
    if kind == "server_tool_use":
        if not isinstance(value.get("name"), str):
            return None
        return ServerToolUse(value["id"], value["name"], value.get("input"), extra)
    cls = WebSearchToolResult if kind == "web_search_tool_result" else WebFetchToolResult
    return cls(value["tool_use_id"], value.get("content"), extra)


class Context(_Block, tag="context"):
    """Context the client showed the model that is not a message anyone wrote: a hook's
    additional context, a reminder, plan mode, the tools it loaded, a file re-read after a
    compaction (docs/mapping.md#context). ``kind`` names it in the source's terms (Claude
    Code's attachment type); ``text`` is what the model saw, when the source recorded it;
    ``role`` how it was sent (``system`` or ``user``). ``value`` is the source's own record
    (its harness in ``source``), so that the same client gets it back as it was. A message
    holding only Context blocks is ``meta``."""

    kind: str
    text: str | UnsetType = UNSET
    role: str | UnsetType = UNSET
    source: str | UnsetType = UNSET
    value: Any = UNSET


class RawBlock(_Block, tag="raw"):
    """A block Common has no type for, kept as the source held it."""

    source_type: str
    value: Any = None


Block = Union[
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
    ToolResult,
    Image,
    Document,
    Artifact,
    Command,
    ServerToolUse,
    WebSearchToolResult,
    WebFetchToolResult,
    Context,
    RawBlock,
]


# --- messages ------------------------------------------------------------------------


class Usage(_Struct):
    """The tokens of one model call: read, written, and cache writes and reads."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    reasoning_output_tokens: int | UnsetType = UNSET

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


Role = Literal["user", "assistant"]


class Message(_Struct):
    """One message of the conversation: a user turn or one model call (assistant), its
    content blocks, and what the source said about it (model, stop reason, usage, origin)."""

    role: Role
    content: list[Block] = msgspec.field(default_factory=list)
    id: str | UnsetType = UNSET  # the provider's message id (assistant) when known
    timestamp: str | UnsetType = UNSET
    source_ids: list[str] = msgspec.field(default_factory=list)  # native record ids, in order
    model: str | UnsetType = UNSET
    stop_reason: str | None | UnsetType = UNSET
    usage: Usage | UnsetType = UNSET  # only for a finished call (docs/claude_code_reader.md#reconstruction-rules)
    # a call that never reported a stop_reason still carries a usage block: kept apart,
    # because it was measured to be a streaming stub on 2.1.220+, while clients
    # before that wrote stop_reason null on (nearly) every call (docs/usage.md)
    usage_unverified: Usage | UnsetType = UNSET
    synthetic: bool = False  # written by the client, not the model or the user
    compact_summary: bool = False  # the summary that opens a compaction epoch
    interrupted: bool = False
    api_error: bool = False
    meta: bool = False  # injected context the user did not type (isMeta)
    origin: str | UnsetType = UNSET  # human, task-notification, ... (an open set)
    extra: dict[str, Any] = msgspec.field(default_factory=dict)


# --- conversation --------------------------------------------------------------------


class ForkedFrom(_Struct):
    """Where a session was forked from: the source session and the message the copy
    reaches (Claude Code's ``forkedFrom``, Codex's ``forked_from_id``, pi's parent)."""

    session_id: str
    message_id: str | UnsetType = UNSET


class Meta(_Struct):
    """What the session says about itself: id, title, project folder, client, models, times."""

    id: str | UnsetType = UNSET
    title: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    git_branch: str | UnsetType = UNSET
    client_version: str | UnsetType = UNSET
    models: list[str] = msgspec.field(default_factory=list)
    started_at: str | UnsetType = UNSET
    ended_at: str | UnsetType = UNSET
    source_harness: str | UnsetType = UNSET
    # how the session began: new | clear | fork | resume (docs/lineage.md); unset when
    # the source cannot tell
    started_by: str | UnsetType = UNSET
    forked_from: ForkedFrom | UnsetType = UNSET
    extra: dict[str, Any] = msgspec.field(default_factory=dict)


class Epoch(_Struct):
    """A compaction: from ``start`` (index into ``messages`` of the summary message)
    the context is the summary plus the preserved messages. Ids may be unresolved."""

    start: int
    boundary_id: str | UnsetType = UNSET
    logical_parent_id: str | None | UnsetType = UNSET
    preserved_ids: list[str] = msgspec.field(default_factory=list)
    trigger: str | UnsetType = UNSET
    pre_tokens: int | UnsetType = UNSET


class ChildLink(_Struct):
    """How a subagent conversation was joined to its parent, and how sure that is."""

    via: str  # meta.toolUseId | toolUseResult.agentId | journal | parentAgentId | sidechain.prompt | none
    tool_use_id: str | UnsetType = UNSET
    agent_id: str | UnsetType = UNSET
    parent_agent_id: str | UnsetType = UNSET
    status: str | UnsetType = UNSET  # async_launched | forked | completed | ...
    workflow_run: str | UnsetType = UNSET


class Hunk(_Struct):
    """One hunk of a unified diff: ``lines`` start with `` ``, ``-`` or ``+``. The
    starts and counts are unset when the source gave none (a Codex patch's ``@@``)."""

    lines: list[str]
    old_start: int | UnsetType = UNSET
    old_lines: int | UnsetType = UNSET
    new_start: int | UnsetType = UNSET
    new_lines: int | UnsetType = UNSET


class Change(_Struct):
    """What one tool call did to one file (docs/changes.md). Derived from the raw
    results, never written into a native file.

    ``operation`` is create / modify / delete, ``write`` when the whole content was
    written and the source does not say whether the file existed, ``unknown`` when the
    call may have changed files the record does not name (a shell command).
    ``basis`` is ``runtime_reported`` (the client wrote the patch or both versions),
    ``derived`` (computed here from what the call carried) or ``unknown``. A hash is
    the sha256 of the UTF-8 content; ``None`` means the file did not exist, unset that
    the source did not record it."""

    tool_use_id: str
    tool: str
    operation: str
    captured_by: str
    basis: str
    path: str | UnsetType = UNSET  # relative to the session's cwd when inside it
    moved_to: str | UnsetType = UNSET
    hunks: list[Hunk] = msgspec.field(default_factory=list)
    before_sha256: str | None | UnsetType = UNSET
    after_sha256: str | None | UnsetType = UNSET
    agent_id: str | UnsetType = UNSET  # the subagent whose transcript holds the call
    note: str | UnsetType = UNSET


class Conversation(msgspec.Struct):
    """Every field is always written, ``version`` first; ``changes`` is derived from
    the messages by :func:`txcodec.kit.changes.to_json` and left out when there is none."""

    version: str = COMMON_VERSION
    meta: Meta = msgspec.field(default_factory=Meta)
    messages: list[Message] = msgspec.field(default_factory=list)
    derived_changes: list[Change] | UnsetType = msgspec.field(default=UNSET, name="changes")
    children: list[Child] = msgspec.field(default_factory=list)
    epochs: list[Epoch] = msgspec.field(default_factory=list)

    SCHEMA_ID: ClassVar[str] = "https://txcodec.dev/schemas/common.schema.json"


class Child(_Struct):
    """A subagent conversation and how it was joined to the call that started it."""

    link: ChildLink
    conversation: Conversation
    agent_type: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    spawn_depth: int = 1
