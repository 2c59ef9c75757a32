"""Typed records of a Claude Code session file (docs/claude_code.md#what-is-typed,
docs/claude_code.md#what-rides-along).

Records and blocks are ``gc=False`` structs: they form trees, never cycles, and keeping
tens of thousands of them out of the cycle collector is most of what makes a typed load
faster than an untyped one.

Every line is a JSON object tagged by ``type``. The structs name the fields a reader
uses; everything else stays in the line's bytes (the native session keeps them), so an
untouched line is re-emitted exactly and an edited one keeps its unknown keys.
``UNSET`` keeps "absent" apart from ``null``. Values whose shape varies by tool or by
client version (``toolUseResult``, ``compactMetadata``, ``attachment`` bodies, ...) are
kept as :class:`msgspec.Raw` and shape-checked where they are read.
"""

from __future__ import annotations

from typing import Any
from typing import Literal
from typing import Union

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType
from msgspec import field

# --- content blocks ----------------------------------------------------------------


class _Block(msgspec.Struct, tag_field="type", omit_defaults=True, gc=False):
    pass


class TextBlock(_Block, tag="text"):
    text: str = ""
    citations: Raw | UnsetType = UNSET


class ThinkingBlock(_Block, tag="thinking"):
    thinking: str = ""
    signature: str | UnsetType = UNSET


class RedactedThinkingBlock(_Block, tag="redacted_thinking"):
    data: str = ""


class ToolUseBlock(_Block, tag="tool_use"):
    id: str = ""
    name: str = ""
    input: Raw | UnsetType = UNSET  # the API wants an object; files hold whatever was sent
    caller: Raw | UnsetType = UNSET


class ServerToolUseBlock(_Block, tag="server_tool_use"):
    id: str = ""
    name: str = ""
    input: Raw | UnsetType = UNSET


class ImageBlock(_Block, tag="image"):
    source: Raw | UnsetType = UNSET


class DocumentBlock(_Block, tag="document"):
    source: Raw | UnsetType = UNSET
    title: str | None | UnsetType = UNSET
    context: Any = UNSET  # the API's free text about the document: no slot in Common


class ToolReferenceBlock(_Block, tag="tool_reference"):
    tool_name: str = ""


ResultPart = Union[TextBlock, ImageBlock, DocumentBlock, ToolReferenceBlock]


class ToolResultBlock(_Block, tag="tool_result"):
    tool_use_id: str = ""
    # a string or a list of blocks (docs/claude_code.md#tool-results); any other JSON is kept as
    # :class:`msgspec.Raw` by the codec's lenient path
    content: str | list[ResultPart] | UnsetType = UNSET
    is_error: bool | None | UnsetType = UNSET


Block = Union[
    TextBlock,
    ThinkingBlock,
    RedactedThinkingBlock,
    ToolUseBlock,
    ServerToolUseBlock,
    ToolResultBlock,
    ImageBlock,
    DocumentBlock,
    ToolReferenceBlock,
]
"""A content block. An unknown block type is kept in the content list as
:class:`msgspec.Raw` (its exact bytes)."""

BLOCK_TYPES: dict[str, type] = {cls.__struct_config__.tag: cls for cls in Block.__args__}


class Usage(msgspec.Struct, omit_defaults=True, gc=False):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    # the rest (cache_creation, service_tier, server_tool_use, iterations, speed, ...)
    # varies by client version and rides along in the line's bytes


class Message(msgspec.Struct, omit_defaults=True, gc=False):
    role: str | UnsetType = UNSET
    content: str | list[Block] | UnsetType = UNSET
    id: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    type: str | UnsetType = UNSET
    stop_reason: str | None | UnsetType = UNSET
    stop_sequence: str | None | UnsetType = UNSET
    usage: Usage | None | UnsetType = UNSET
    diagnostics: Raw | UnsetType = UNSET  # {cache_miss_reason: ...} or null


# --- records -------------------------------------------------------------------------


class _Record(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, gc=False):
    pass


class _Envelope(_Record):
    """Fields that user / assistant / system / attachment / progress lines share."""

    uuid: str | None | UnsetType = UNSET
    parent_uuid: str | None | UnsetType = UNSET
    logical_parent_uuid: str | None | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    git_branch: str | UnsetType = UNSET
    version: str | UnsetType = UNSET
    is_sidechain: bool | UnsetType = UNSET
    user_type: str | UnsetType = UNSET
    entrypoint: str | UnsetType = UNSET
    agent_id: str | UnsetType = UNSET
    slug: str | UnsetType = UNSET
    is_meta: bool | UnsetType = UNSET
    forked_from: Raw | UnsetType = UNSET  # {sessionId, messageUuid}: the resume/fork link
    is_visible_in_transcript_only: bool | UnsetType = UNSET


class UserRecord(_Envelope, tag="user"):
    message: Message = msgspec.field(default_factory=Message)
    tool_use_result: Raw | UnsetType = UNSET  # object, bare string, array or JSON-in-string
    source_tool_assistant_uuid: str | UnsetType = field(default=UNSET, name="sourceToolAssistantUUID")
    source_tool_use_id: str | UnsetType = field(default=UNSET, name="sourceToolUseID")
    is_compact_summary: bool | UnsetType = UNSET
    origin: Raw | UnsetType = UNSET  # {kind: human | task-notification | coordinator | peer | ...}
    prompt_id: str | UnsetType = UNSET
    prompt_source: str | UnsetType = UNSET
    permission_mode: str | UnsetType = UNSET
    tool_denial_kind: str | UnsetType = UNSET
    interrupted_message_id: str | UnsetType = UNSET
    mcp_meta: Raw | UnsetType = UNSET
    todos: Raw | UnsetType = UNSET


class AssistantRecord(_Envelope, tag="assistant"):
    message: Message = msgspec.field(default_factory=Message)
    request_id: str | UnsetType = UNSET
    api_block_index: int | UnsetType = UNSET
    is_api_error_message: bool | UnsetType = UNSET
    api_error_status: int | None | UnsetType = UNSET
    error: Raw | UnsetType = UNSET
    is_aborted_mid_stream: bool | UnsetType = UNSET
    truncated_after_output: bool | UnsetType = UNSET
    effort: str | None | UnsetType = UNSET
    per_turn_effort: Raw | UnsetType = UNSET
    attribution_agent: Raw | UnsetType = UNSET
    attribution_skill: Raw | UnsetType = UNSET
    attribution_mcp_server: Raw | UnsetType = UNSET
    attribution_mcp_tool: Raw | UnsetType = UNSET
    attribution_plugin: Raw | UnsetType = UNSET
    advisor_model: Raw | UnsetType = UNSET


class SystemRecord(_Envelope, tag="system"):
    """``subtype`` is an open set: local_command, compact_boundary, api_error,
    turn_duration, stop_hook_summary, away_summary, informational, ..."""

    subtype: str | UnsetType = UNSET
    content: Raw | UnsetType = UNSET
    level: str | UnsetType = UNSET
    compact_metadata: Raw | UnsetType = UNSET
    duration_ms: float | UnsetType = UNSET
    retry_attempt: int | UnsetType = UNSET
    max_retries: int | UnsetType = UNSET
    error: Raw | UnsetType = UNSET
    tool_use_id: str | UnsetType = field(default=UNSET, name="toolUseID")


class AttachmentBody(msgspec.Struct, omit_defaults=True):
    type: str | UnsetType = UNSET
    origin: Raw | UnsetType = UNSET


class AttachmentRecord(_Envelope, tag="attachment"):
    attachment: Raw | UnsetType = UNSET  # {type, ...}: kept whole, written back as it was
    # what the model was sent for it (2.1.332: [{content}], with the role it went as)
    rendered: Raw | UnsetType = UNSET
    rendered_role: str | UnsetType = field(default=UNSET, name="renderedRole")


class ProgressRecord(_Envelope, tag="progress"):
    data: Raw | UnsetType = UNSET
    tool_use_id: str | UnsetType = field(default=UNSET, name="toolUseID")
    parent_tool_use_id: str | UnsetType = field(default=UNSET, name="parentToolUseID")


class SummaryRecord(_Record, tag="summary"):
    summary: str | UnsetType = UNSET
    leaf_uuid: str | None | UnsetType = UNSET


class CustomTitleRecord(_Record, tag="custom-title"):
    custom_title: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET


class AgentNameRecord(_Record, tag="agent-name"):
    agent_name: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET


class AiTitleRecord(_Record, tag="ai-title"):
    ai_title: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET


class LastPromptRecord(_Record, tag="last-prompt"):
    session_id: str | UnsetType = UNSET
    leaf_uuid: str | None | UnsetType = UNSET
    last_prompt: str | UnsetType = UNSET


class FileHistorySnapshotRecord(_Record, tag="file-history-snapshot"):
    message_id: str | UnsetType = UNSET
    snapshot: Raw | UnsetType = UNSET  # keyed by absolute paths: private by design
    is_snapshot_update: bool | UnsetType = UNSET


class FileHistoryDeltaRecord(_Record, tag="file-history-delta"):
    message_id: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET


class QueueOperationRecord(_Record, tag="queue-operation"):
    operation: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    content: Raw | UnsetType = UNSET


class ModeRecord(_Record, tag="mode"):
    mode: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET


class PermissionModeRecord(_Record, tag="permission-mode"):
    permission_mode: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET


# Records that newer clients and hosts write (docs/claude_code.md#what-rides-along): typed
# only by the fields that every one of them carries; their bodies ride along as bytes.
class _SessionTagged(_Record):
    session_id: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET


class ApiRequestRecord(_SessionTagged, tag="api-request"):
    id: str | UnsetType = UNSET


class ApiRequestBlobRecord(_SessionTagged, tag="api-request-blob"):
    hash: str | UnsetType = UNSET


class ApiRequestShapeRecord(_SessionTagged, tag="api-request-shape"):
    shape_hash: str | UnsetType = UNSET


class ToolsUsedRecord(_SessionTagged, tag="tools-used"):
    pass


class AtisLatchRecord(_SessionTagged, tag="atis-latch"):
    pass


class CostStateRecord(_SessionTagged, tag="cost-state"):
    total_cost_usd: float | UnsetType = field(default=UNSET, name="totalCostUSD")


class BridgeSessionRecord(_SessionTagged, tag="bridge-session"):
    bridge_session_id: str | UnsetType = UNSET


class PrLinkRecord(_SessionTagged, tag="pr-link"):
    pr_url: str | UnsetType = UNSET


class FrameLinkRecord(_SessionTagged, tag="frame-link"):
    pass


class ArtifactAutoreactLedgerRecord(_SessionTagged, tag="artifact-autoreact-ledger"):
    pass


class ArtifactCommentMonitorRecord(_SessionTagged, tag="artifact-comment-monitor"):
    pass


class WorktreeStateRecord(_SessionTagged, tag="worktree-state"):
    pass


class RelocatedRecord(_SessionTagged, tag="relocated"):
    relocated_cwd: str | UnsetType = UNSET


# Workflow ``subagents/workflows/<wf>/journal.jsonl`` lines (docs/claude_code_reader.md#subagents):
# no sessionId, version or timestamp; they say which children a run has.
class JournalStarted(_Record, tag="started"):
    key: str | UnsetType = UNSET
    agent_id: str | UnsetType = UNSET


class JournalResult(_Record, tag="result"):
    key: str | UnsetType = UNSET
    agent_id: str | UnsetType = UNSET
    result: Raw | UnsetType = UNSET  # a string or an object


JournalRecord = Union[JournalStarted, JournalResult]


Record = Union[
    UserRecord,
    AssistantRecord,
    SystemRecord,
    AttachmentRecord,
    ProgressRecord,
    SummaryRecord,
    CustomTitleRecord,
    AgentNameRecord,
    AiTitleRecord,
    LastPromptRecord,
    FileHistorySnapshotRecord,
    FileHistoryDeltaRecord,
    QueueOperationRecord,
    ModeRecord,
    PermissionModeRecord,
    ApiRequestRecord,
    ApiRequestBlobRecord,
    ApiRequestShapeRecord,
    ToolsUsedRecord,
    AtisLatchRecord,
    CostStateRecord,
    BridgeSessionRecord,
    PrLinkRecord,
    FrameLinkRecord,
    ArtifactAutoreactLedgerRecord,
    ArtifactCommentMonitorRecord,
    WorktreeStateRecord,
    RelocatedRecord,
    JournalStarted,
    JournalResult,
]

RECORD_TYPES: dict[str, type] = {cls.__struct_config__.tag: cls for cls in Record.__args__}


class StreamedUserRecord(UserRecord, tag="user"):
    """A user line of a streamed read, whose lines are dropped once read and never
    written back: ``toolUseResult`` is decoded with the line, in the same pass, instead
    of kept as bytes and decoded again (it is often most of a long session's bytes)."""

    tool_use_result: Any = UNSET  # any JSON value, shape-checked where it is read


class ShownToolUseResult(msgspec.Struct, rename="camel", gc=False):
    """The keys of a ``toolUseResult`` object that an HTML page shows (an edit's
    ``structuredPatch`` and ``filePath``) or the reader reads (a subagent's ``agentId`` and
    ``status``, a workflow's ``runId``, a saved output's ``persistedOutputPath``); a page's
    read skips the rest (tests/features/test_html.py checks that every golden page is the same)."""

    structured_patch: Any = UNSET
    file_path: Any = UNSET
    agent_id: Any = UNSET
    status: Any = UNSET
    run_id: Any = UNSET
    persisted_output_path: Any = UNSET


# (attribute, key) of each: the object a page's read gives the reader, its keys as written
SHOWN_KEYS = tuple((f.name, f.encode_name) for f in msgspec.structs.fields(ShownToolUseResult))


class PageUserRecord(UserRecord, tag="user"):
    """A user line of a streamed read for a page: ``toolUseResult`` decoded as
    :class:`StreamedUserRecord` decodes it, but an object only by the keys of
    :class:`ShownToolUseResult`."""

    tool_use_result: ShownToolUseResult | str | list | int | float | bool | None | UnsetType = UNSET


class SkippedProgress(_Record, tag="progress"):
    """A ``progress`` line read for a report nobody reads (an HTML page): the reader has
    no use for the record, only its loss entry would have named it, so only the field
    the lineage scan asks of every line is typed. (About 70% of a long session's lines.)"""

    forked_from: Raw | UnsetType = UNSET


# the unions a streamed read decodes a batch of lines into: the user record decoded
# whole, and for a report nobody reads, the progress record lean
StreamedRecord = Union[tuple(StreamedUserRecord if cls is UserRecord else cls for cls in Record.__args__)]
UnreadRecord = Union[tuple(SkippedProgress if cls is ProgressRecord else cls for cls in StreamedRecord.__args__)]
# and for a page, toolUseResult by the keys it shows
PageRecord = Union[tuple(PageUserRecord if cls is StreamedUserRecord else cls for cls in UnreadRecord.__args__)]

ConversationRecord = Union[UserRecord, AssistantRecord]

# --- side files ----------------------------------------------------------------------


class AgentMeta(msgspec.Struct, rename="camel", omit_defaults=True):
    """``subagents/agent-<id>.meta.json`` (docs/claude_code.md#side-files)."""

    agent_type: str | UnsetType = UNSET
    spawn_depth: int | UnsetType = UNSET  # absent on some sidecars: read as 1
    model: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    tool_use_id: str | UnsetType = UNSET
    parent_agent_id: str | UnsetType = UNSET
    is_fork: bool | UnsetType = UNSET
    request_non_interactive: bool | UnsetType = UNSET
    request_shape: Raw | UnsetType = UNSET
    spawned_with_worktree: bool | UnsetType = UNSET
    worktree_branch: str | UnsetType = UNSET
    worktree_path: str | UnsetType = UNSET
    stopped_by_user: bool | UnsetType = UNSET

    @property
    def depth(self) -> int:
        """``spawnDepth``, read as 1 when absent (docs/claude_code.md#what-is-typed)."""
        return self.spawn_depth if isinstance(self.spawn_depth, int) else 1


class WorkflowRun(msgspec.Struct, rename="camel", omit_defaults=True):
    """``<sid>/workflows/wf_<run>.json``: one workflow run (docs/claude_code.md#side-files). Typed
    only by the fields that name the run; the script, args and totals ride along."""

    run_id: str | UnsetType = UNSET
    task_id: str | UnsetType = UNSET
    status: str | UnsetType = UNSET
    workflow_name: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    script_path: str | UnsetType = UNSET


# Side files that are one JSON object without a ``type`` tag: the key that marks each.
UNTAGGED: dict[str, type] = {"agentType": AgentMeta, "spawnDepth": AgentMeta, "runId": WorkflowRun}


def raw_json(raw: Raw | UnsetType) -> Any:
    """Decode a kept :class:`msgspec.Raw` value; ``UNSET`` stays ``UNSET``."""
    if raw is UNSET:
        return UNSET
    return msgspec.json.decode(raw)


ToolUseResultShape = Literal["object", "string", "array", "json-string", "other", "absent"]


def tool_use_result_shape(raw: Any) -> tuple[ToolUseResultShape, Any]:
    """Shape-check ``toolUseResult`` before any field access (bare strings,
    arrays, JSON in a string: docs/claude_code.md#tool-results). ``raw`` is the kept
    bytes, or the value a streamed read already decoded (:class:`StreamedUserRecord`)."""
    if raw is UNSET:
        return "absent", None
    value = msgspec.json.decode(raw) if type(raw) is Raw else raw
    if isinstance(value, dict):
        return "object", value
    if isinstance(value, list):
        return "array", value
    if isinstance(value, str):
        text = value.lstrip()
        if text[:1] in ("{", "["):
            try:
                return "json-string", msgspec.json.decode(text)
            except msgspec.DecodeError:
                pass
        return "string", value
    return "other", value
