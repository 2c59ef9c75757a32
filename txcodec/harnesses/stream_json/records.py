"""Typed lines of Claude Code's stream-json protocol (``claude -p --output-format
stream-json --verbose``, and ``--input-format stream-json`` on stdin).

Sources (docs/stream_json.md#line-types): captures of the real CLI
(2.1.332) run against the mock model, which show what no document lists: ``system``
subtypes ``status``, ``thinking_tokens``, ``task_started``/``task_progress``/
``task_updated``/``task_notification``, ``permission_denied``; ``stream_event`` lines with
``api_message_id``; ``user`` lines with ``isReplay``, ``tool_use_result`` and
``tool_result_meta``; ``result`` lines with ``modelUsage`` (camelCase, cumulative per
process) and ``model_usage_since_last_result``. Every line is a JSON object tagged by
``type``; field names are snake_case except a few camelCase keys the CLI mixes in
(``permissionMode``, ``apiKeySource``, ``isReplay``, ``modelUsage``).

The structs name the fields a reader uses. Values whose shape varies (tool lists,
``usage``, control payloads, stream events) are ``Any``; everything the structs do not
name stays in the line's bytes, which the native session re-emits untouched.
"""

from __future__ import annotations

from typing import Any
from typing import Union

import msgspec
from msgspec import UNSET
from msgspec import UnsetType
from msgspec import field

from ..claude_code.records import Message

# --- lines ---------------------------------------------------------------------------


class _Line(msgspec.Struct, tag_field="type", omit_defaults=True):
    pass


class _Envelope(_Line):
    """What almost every stdout line carries."""

    session_id: str | None | UnsetType = UNSET
    uuid: str | None | UnsetType = UNSET


class SystemLine(_Envelope, tag="system"):
    """``subtype`` is an open set. ``init`` starts each run (one per prompt, also with
    ``--input-format stream-json``); the others are progress and bookkeeping."""

    subtype: str | UnsetType = UNSET
    # init
    cwd: str | None | UnsetType = UNSET
    model: str | None | UnsetType = UNSET
    tools: Any = UNSET
    mcp_servers: Any = UNSET
    permission_mode: Any = field(default=UNSET, name="permissionMode")
    slash_commands: Any = UNSET
    api_key_source: Any = field(default=UNSET, name="apiKeySource")
    claude_code_version: str | None | UnsetType = UNSET
    output_style: Any = UNSET
    agents: Any = UNSET
    skills: Any = UNSET
    plugins: Any = UNSET
    # status
    status: Any = UNSET
    # task_started / task_progress / task_updated / task_notification
    task_id: str | None | UnsetType = UNSET
    tool_use_id: str | None | UnsetType = UNSET
    description: Any = UNSET
    subagent_type: Any = UNSET
    prompt: Any = UNSET
    summary: Any = UNSET
    patch: Any = UNSET
    output_file: Any = UNSET
    usage: Any = UNSET
    summary_is_report: Any = UNSET
    # permission_denied
    tool_name: str | None | UnsetType = UNSET
    message: Any = UNSET
    decision_reason: Any = UNSET
    decision_reason_type: Any = UNSET
    # compact_boundary
    compact_metadata: Any = UNSET
    # hook_started / hook_response (a SessionStart hook's; -p prints no other event's)
    hook_id: Any = UNSET
    hook_name: Any = UNSET
    hook_event: Any = UNSET
    output: Any = UNSET
    stdout: Any = UNSET
    stderr: Any = UNSET
    exit_code: Any = UNSET
    outcome: Any = UNSET


class _Conversational(_Envelope):
    message: Message = msgspec.field(default_factory=Message)
    parent_tool_use_id: str | None | UnsetType = UNSET  # set on a subagent's lines
    timestamp: str | None | UnsetType = UNSET
    agent_id: str | None | UnsetType = UNSET
    subagent_type: Any = UNSET
    task_description: Any = UNSET


class AssistantLine(_Conversational, tag="assistant"):
    """One content block per line (like the session file); lines of one API message
    share ``message.id``. ``stop_reason`` is null and ``usage`` is the message_start
    snapshot: the final values come in ``stream_event`` message_delta or ``result``."""

    error: Any = UNSET
    is_api_error_message: bool | None | UnsetType = UNSET
    api_error_status: int | None | UnsetType = UNSET
    api_error_type: Any = UNSET


class UserLine(_Conversational, tag="user"):
    """Tool results on stdout, a replayed prompt (``isReplay``), a subagent's prompt,
    or, on stdin, a prompt sent to the CLI (no ``uuid`` then)."""

    is_replay: bool | None | UnsetType = field(default=UNSET, name="isReplay")
    is_synthetic: bool | None | UnsetType = field(default=UNSET, name="isSynthetic")
    tool_use_result: Any = UNSET  # Claude Code's toolUseResult: object or bare string
    tool_result_meta: Any = UNSET  # [{id, permission_decision, non_execution_kind}]


class ResultLine(_Envelope, tag="result"):
    """The end of a run. ``result`` is the final text (some hosts document an
    object ``{text, session_id}``; the real CLI writes a string: docs/stream_json.md#line-types). ``total_cost_usd`` and
    ``modelUsage`` are cumulative over the process; ``usage`` and
    ``model_usage_since_last_result`` are this run's."""

    subtype: str | UnsetType = UNSET
    is_error: bool | None | UnsetType = UNSET
    result: Any = UNSET
    errors: Any = UNSET
    num_turns: int | None | UnsetType = UNSET
    duration_ms: float | None | UnsetType = UNSET
    duration_api_ms: float | None | UnsetType = UNSET
    total_cost_usd: float | None | UnsetType = UNSET
    cost_usd: float | None | UnsetType = UNSET  # another host's name (docs/stream_json.md#line-types)
    usage: Any = UNSET
    model_usage_camel: Any = field(default=UNSET, name="modelUsage")
    model_usage: Any = UNSET  # another host's name (docs/stream_json.md#line-types): {model: {context_window}}
    model_usage_since_last_result: Any = UNSET
    total_input_tokens: int | None | UnsetType = UNSET
    total_output_tokens: int | None | UnsetType = UNSET
    permission_denials: Any = UNSET
    stop_reason: Any = UNSET
    terminal_reason: Any = UNSET
    api_error_status: Any = UNSET


class StreamEventLine(_Envelope, tag="stream_event"):
    """A raw Messages API stream event (``--include-partial-messages``)."""

    event: Any = UNSET
    parent_tool_use_id: str | None | UnsetType = UNSET
    api_message_id: str | None | UnsetType = UNSET


class RateLimitLine(_Envelope, tag="rate_limit"):
    """docs/stream_json.md#line-types's rate-limit notification."""

    message: Any = UNSET
    rate_limit_message: Any = UNSET


class RateLimitEventLine(_Envelope, tag="rate_limit_event"):
    """Newer CLIs: ``rate_limit_info{status, resetsAt, rateLimitType, ...}``."""

    rate_limit_info: Any = UNSET


class ControlRequestLine(_Line, tag="control_request"):
    """Either direction: ``initialize``/``interrupt`` from the host, ``can_use_tool``
    and ``hook_callback`` from the CLI."""

    request_id: str | None | UnsetType = UNSET
    request: Any = UNSET


class ControlResponseLine(_Line, tag="control_response"):
    """``response{subtype, request_id, response|result|error}``; ``request_id`` may also sit
    at the top level."""

    request_id: str | None | UnsetType = UNSET
    response: Any = UNSET


class ControlCancelRequestLine(_Line, tag="control_cancel_request"):
    request_id: str | None | UnsetType = UNSET


class KeepAliveLine(_Line, tag="keep_alive"):
    pass


class ToolProgressLine(_Envelope, tag="tool_progress"):
    tool_use_id: str | None | UnsetType = UNSET
    tool_name: str | None | UnsetType = UNSET
    parent_tool_use_id: str | None | UnsetType = UNSET
    elapsed_time_seconds: float | None | UnsetType = UNSET


class AuthStatusLine(_Envelope, tag="auth_status"):
    is_authenticating: bool | None | UnsetType = field(default=UNSET, name="isAuthenticating")
    output: Any = UNSET
    error: Any = UNSET


Line = Union[
    SystemLine,
    AssistantLine,
    UserLine,
    ResultLine,
    StreamEventLine,
    RateLimitLine,
    RateLimitEventLine,
    ControlRequestLine,
    ControlResponseLine,
    ControlCancelRequestLine,
    KeepAliveLine,
    ToolProgressLine,
    AuthStatusLine,
]

LINE_TYPES: dict[str, type] = {cls.__struct_config__.tag: cls for cls in Line.__args__}

# Types no Claude Code session file has: seeing one is strong evidence of a capture.
PROTOCOL_ONLY = frozenset(LINE_TYPES) - {"system", "assistant", "user"}
