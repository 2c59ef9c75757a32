"""Typed records of a Codex CLI rollout (``rollout-*.jsonl``).

Sources: openai/codex ``codex-rs/protocol/src/protocol.rs`` (``RolloutLine``: a
``timestamp`` next to a ``RolloutItem`` tagged by ``type`` with its body in ``payload``)
and ``models.rs`` (``ResponseItem``, the Responses API items), plus files written by
codex 0.77-0.171 (docs/codex.md#format-facts, the corpus). Newer builds add a top-level ``ordinal`` and
``metadata`` and new line types (``world_state``, ``token_usage_record``, ...).

Three levels, each kept apart from the next:

* the line: one of the ``*Line`` structs below, or :class:`OtherLine` for a line type
  this module does not know (its payload kept as :class:`msgspec.Raw`);
* the payload: a tagged struct (``ResponseItem``, ``EventMsg`` members, ...); a payload
  whose ``type`` is unknown, or whose shape does not fit, is kept as ``Raw`` while the line
  around it stays typed;
* older generations: a bare meta line (:class:`LegacyMeta`), ``{"record_type":
  "state"}`` markers (:class:`LegacyState`), and bare response items without an envelope.

Only the fields a reader uses are named; everything else stays in the line's bytes (a
:class:`~txcodec.model.native.NativeSession` re-emits untouched lines verbatim, and merges
edited ones into their original object). ``UNSET`` keeps "absent" apart from ``null``.
"""

from __future__ import annotations

from typing import Any
from typing import Union

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType


class _S(msgspec.Struct, omit_defaults=True):
    pass


# --- content parts (Responses API) ----------------------------------------------------


class _Part(_S, tag_field="type"):
    pass


class InputText(_Part, tag="input_text"):
    text: str = ""


class OutputText(_Part, tag="output_text"):
    text: str = ""
    annotations: Any = UNSET


class InputImage(_Part, tag="input_image"):
    image_url: str | None | UnsetType = UNSET
    detail: str | None | UnsetType = UNSET


ContentPart = Union[InputText, OutputText, InputImage]


class SummaryText(_Part, tag="summary_text"):
    text: str = ""


class ReasoningText(_Part, tag="reasoning_text"):
    text: str = ""


class PlainText(_Part, tag="text"):
    text: str = ""


ReasoningContent = Union[ReasoningText, PlainText]


# --- response_item payloads (models.rs ResponseItem) ----------------------------------


class _Item(_S, tag_field="type"):
    pass


class MessageItem(_Item, tag="message"):
    role: str = ""  # user | assistant | developer | system
    content: list[ContentPart] = msgspec.field(default_factory=list)
    id: str | None | UnsetType = UNSET
    status: str | UnsetType = UNSET
    phase: str | None | UnsetType = UNSET  # commentary | final_answer | ...
    end_turn: bool | None | UnsetType = UNSET


class ReasoningItem(_Item, tag="reasoning"):
    summary: list[SummaryText] = msgspec.field(default_factory=list)
    content: list[ReasoningContent] | None | UnsetType = UNSET
    encrypted_content: str | None | UnsetType = UNSET
    id: str | None | UnsetType = UNSET


class FunctionCallItem(_Item, tag="function_call"):
    name: str = ""
    # A JSON *string* (models.rs); codex 0.171 drops a call whose arguments are an
    # object, so anything else is kept only to round-trip.
    arguments: Any = UNSET
    call_id: str = ""
    id: str | None | UnsetType = UNSET
    namespace: str | None | UnsetType = UNSET
    status: str | UnsetType = UNSET


class FunctionCallOutputItem(_Item, tag="function_call_output"):
    call_id: str = ""
    # a string or a list of content parts; an object (older "{content, success}") or a
    # missing output is read by codex as "aborted"
    output: Any = UNSET
    id: str | None | UnsetType = UNSET
    # a goal tool's output (0.171: name "goal_objective", namespace "agent") has no call_id
    name: str | UnsetType = UNSET
    namespace: str | None | UnsetType = UNSET


class CustomToolCallItem(_Item, tag="custom_tool_call"):
    call_id: str = ""
    name: str = ""
    input: str = ""  # freeform: apply_patch's patch text
    id: str | None | UnsetType = UNSET
    status: str | None | UnsetType = UNSET


class CustomToolCallOutputItem(_Item, tag="custom_tool_call_output"):
    call_id: str = ""
    output: Any = UNSET  # a string or a list of content parts
    id: str | None | UnsetType = UNSET


class LocalShellAction(_S):
    type: str = "exec"
    command: list[str] = msgspec.field(default_factory=list)
    timeout_ms: int | None | UnsetType = UNSET
    working_directory: str | None | UnsetType = UNSET
    env: dict[str, str] | None | UnsetType = UNSET
    user: str | None | UnsetType = UNSET


class LocalShellCallItem(_Item, tag="local_shell_call"):
    call_id: str | None | UnsetType = UNSET
    status: str | UnsetType = UNSET
    action: LocalShellAction | UnsetType = UNSET
    id: str | None | UnsetType = UNSET


class WebSearchAction(_S):
    type: str = "search"  # search | open_page | find_in_page | ...
    query: str | None | UnsetType = UNSET
    queries: list[str] | None | UnsetType = UNSET
    url: str | None | UnsetType = UNSET
    pattern: str | None | UnsetType = UNSET


class WebSearchCallItem(_Item, tag="web_search_call"):
    id: str | None | UnsetType = UNSET
    status: str | None | UnsetType = UNSET
    action: WebSearchAction | None | UnsetType = UNSET


class CompactionItem(_Item, tag="compaction"):
    encrypted_content: str | None | UnsetType = UNSET


class CompactionSummaryItem(_Item, tag="compaction_summary"):
    """The older name of :class:`CompactionItem` (``#[serde(alias)]`` in models.rs)."""

    encrypted_content: str | None | UnsetType = UNSET


class GhostSnapshotItem(_Item, tag="ghost_snapshot"):
    ghost_commit: Any = UNSET


ResponseItem = Union[
    MessageItem,
    ReasoningItem,
    FunctionCallItem,
    FunctionCallOutputItem,
    CustomToolCallItem,
    CustomToolCallOutputItem,
    LocalShellCallItem,
    WebSearchCallItem,
    CompactionItem,
    CompactionSummaryItem,
    GhostSnapshotItem,
]
RESPONSE_ITEM_TYPES: dict[str, type] = {c.__struct_config__.tag: c for c in ResponseItem.__args__}


# --- event_msg payloads (protocol.rs EventMsg; what the UI shows) ---------------------


class _Event(_S, tag_field="type"):
    pass


class UserMessageEvent(_Event, tag="user_message"):
    message: str = ""
    images: list[str] | None | UnsetType = UNSET
    local_images: Any = UNSET
    text_elements: Any = UNSET
    kind: str | None | UnsetType = UNSET


class AgentMessageEvent(_Event, tag="agent_message"):
    message: str = ""
    phase: str | None | UnsetType = UNSET


class AgentReasoningEvent(_Event, tag="agent_reasoning"):
    text: str = ""


class AgentReasoningRawContentEvent(_Event, tag="agent_reasoning_raw_content"):
    text: str = ""


class TokenUsage(_S):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0
    cache_write_input_tokens: int | UnsetType = UNSET


class TokenInfo(_S):
    total_token_usage: TokenUsage | None | UnsetType = UNSET
    last_token_usage: TokenUsage | None | UnsetType = UNSET
    model_context_window: int | None | UnsetType = UNSET


class TokenCountEvent(_Event, tag="token_count"):
    info: TokenInfo | None | UnsetType = UNSET
    rate_limits: Any = UNSET


class TaskStartedEvent(_Event, tag="task_started"):
    turn_id: str | UnsetType = UNSET
    model_context_window: int | None | UnsetType = UNSET
    started_at: Any = UNSET


class TaskCompleteEvent(_Event, tag="task_complete"):
    turn_id: str | UnsetType = UNSET
    last_agent_message: str | None | UnsetType = UNSET


class TurnAbortedEvent(_Event, tag="turn_aborted"):
    reason: str | UnsetType = UNSET
    turn_id: str | UnsetType = UNSET


class ContextCompactedEvent(_Event, tag="context_compacted"):
    pass


class ErrorEvent(_Event, tag="error"):
    message: str = ""


class ThreadNameUpdatedEvent(_Event, tag="thread_name_updated"):
    thread_name: str | None | UnsetType = UNSET
    thread_id: str | UnsetType = UNSET


class ItemCompletedEvent(_Event, tag="item_completed"):
    """0.171 mirrors each finished turn item for the UI (``item.type``: UserMessage,
    AgentMessage, Reasoning, CommandExecution, FileChange, ...)."""

    item: Any = UNSET
    turn_id: str | UnsetType = UNSET


class ExecCommandEndEvent(_Event, tag="exec_command_end"):
    call_id: str | UnsetType = UNSET
    exit_code: int | None | UnsetType = UNSET


class PatchApplyEndEvent(_Event, tag="patch_apply_end"):
    call_id: str | UnsetType = UNSET
    success: bool | None | UnsetType = UNSET


EventMsg = Union[
    UserMessageEvent,
    AgentMessageEvent,
    AgentReasoningEvent,
    AgentReasoningRawContentEvent,
    TokenCountEvent,
    TaskStartedEvent,
    TaskCompleteEvent,
    TurnAbortedEvent,
    ContextCompactedEvent,
    ErrorEvent,
    ThreadNameUpdatedEvent,
    ItemCompletedEvent,
    ExecCommandEndEvent,
    PatchApplyEndEvent,
]
EVENT_TYPES: dict[str, type] = {c.__struct_config__.tag: c for c in EventMsg.__args__}


# --- other payloads -------------------------------------------------------------------


class GitInfo(_S):
    commit_hash: str | None | UnsetType = UNSET
    branch: str | None | UnsetType = UNSET
    repository_url: str | None | UnsetType = UNSET


class BaseInstructions(_S):
    text: str = ""
    # 0.171: {"type": "model", "model": ...}: which model's instructions these are; without it
    # a resume under another configured model rebuilds them for that model
    provenance: Any = UNSET


class SessionMeta(_S):
    """``SessionMetaLine``. 0.171 requires ``id``, ``timestamp``, ``cwd``,
    ``originator`` and ``cli_version`` (docs/codex.md#how-the-real-client-is-driven); all are optional here so an
    incomplete meta still reads."""

    id: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    originator: str | UnsetType = UNSET
    cli_version: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    forked_from_id: str | None | UnsetType = UNSET
    parent_thread_id: str | None | UnsetType = UNSET
    source: Any = UNSET  # "cli" | "exec" | "vscode" | {"subagent": ...}
    thread_source: str | None | UnsetType = UNSET
    model_provider: str | None | UnsetType = UNSET
    base_instructions: BaseInstructions | None | UnsetType = UNSET
    instructions: str | None | UnsetType = UNSET  # before base_instructions (0.77)
    git: GitInfo | None | UnsetType = UNSET
    history_mode: str | None | UnsetType = UNSET


class TurnContext(_S):
    turn_id: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    approval_policy: Any = UNSET
    sandbox_policy: Any = UNSET
    effort: str | None | UnsetType = UNSET
    summary: Any = UNSET


class Compacted(_S):
    """``CompactedItem``: the summary; newer builds add the ``replacement_history``
    that replaces the whole context (response items)."""

    message: str = ""
    replacement_history: list[Any] | None | UnsetType = UNSET


# --- lines ----------------------------------------------------------------------------


class _Line(_S, tag_field="type"):
    timestamp: str | UnsetType = UNSET
    ordinal: int | UnsetType = UNSET


class SessionMetaLine(_Line, tag="session_meta"):
    payload: SessionMeta = msgspec.field(default_factory=SessionMeta)


class ResponseItemLine(_Line, tag="response_item"):
    payload: ResponseItem | UnsetType = UNSET  # or Raw: an unknown item type


class EventMsgLine(_Line, tag="event_msg"):
    payload: EventMsg | UnsetType = UNSET  # or Raw: an unknown event type


class TurnContextLine(_Line, tag="turn_context"):
    """The turn's settings, as they are: 0.171 diffs its context items against the whole
    payload on resume (``root_turn_id``, ``permission_profile``, ... that no struct names), so
    it is kept whole and read through :func:`turn_settings`."""

    payload: Raw = msgspec.field(default_factory=lambda: Raw(b"{}"))


class CompactedLine(_Line, tag="compacted"):
    payload: Compacted = msgspec.field(default_factory=Compacted)


RolloutLine = Union[SessionMetaLine, ResponseItemLine, EventMsgLine, TurnContextLine, CompactedLine]
LINE_TYPES: dict[str, type] = {c.__struct_config__.tag: c for c in RolloutLine.__args__}

# The payload union of each line type, for the lenient path.
PAYLOAD_TYPES: dict[type, Any] = {
    SessionMetaLine: SessionMeta,
    ResponseItemLine: ResponseItem,
    EventMsgLine: EventMsg,
    CompactedLine: Compacted,
}


class OtherLine(_S):
    """A line type this module does not type (``world_state``, ``token_usage_record``,
    ``inter_agent_communication_metadata``, the next one ...): envelope typed, payload
    as it was."""

    type: str
    timestamp: str | UnsetType = UNSET
    ordinal: int | UnsetType = UNSET
    payload: Any = UNSET  # msgspec.Raw


class LegacyMeta(_S):
    """The first line of a 2025 rollout, before the envelope: ``{id, timestamp,
    instructions, git}``."""

    id: str
    timestamp: str | UnsetType = UNSET
    instructions: str | None | UnsetType = UNSET
    git: Any = UNSET


class LegacyState(_S):
    """``{"record_type": "state"}``: a 2025 bookkeeping marker, no conversation."""

    record_type: str


class TsSession(_S):
    """``session`` of a Codex 0.1.x rollout: ``{timestamp, id, instructions}``."""

    id: str
    timestamp: str | UnsetType = UNSET
    instructions: str | None | UnsetType = UNSET


class TsRollout(_S):
    """A Codex 0.1.x (the TypeScript CLI) rollout, ``sessions/rollout-<date>-<id>.json``: one
    pretty-printed JSON document ``{session, items}`` that the CLI rewrites after every item
    (docs/codex.md#versions-read). ``items`` are Responses API items, typed when read."""

    session: TsSession
    items: list[msgspec.Raw]


Record = Union[RolloutLine, OtherLine, LegacyMeta, LegacyState, ResponseItem, TsRollout]
"""A decoded line: an envelope line, or (2025) a legacy meta / state marker / bare item, or
(0.1.x) the whole rollout document."""


def payload_of(line: Any) -> Any:
    """The payload of an envelope line, or the bare item of a legacy line."""
    return getattr(line, "payload", line)


_turn_context = msgspec.json.Decoder(TurnContext)


def turn_settings(payload: Any) -> TurnContext:
    """The typed view of a ``turn_context`` payload (an empty one when it does not fit)."""
    if isinstance(payload, TurnContext):
        return payload
    try:
        return _turn_context.decode(payload) if isinstance(payload, Raw) else TurnContext()
    except (msgspec.ValidationError, msgspec.DecodeError):
        return TurnContext()


def raw_json(value: Any) -> Any:
    """A kept :class:`msgspec.Raw` decoded; anything else as it is."""
    if isinstance(value, Raw):
        return msgspec.json.decode(value)
    return value
