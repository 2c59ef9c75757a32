"""Token usage of one Codex rollout, from a lean typed decode.

:mod:`.read` turns ``token_count`` events into usage on the assistant message of that
model call; which message that is depends only on how items open and join messages. This
replays exactly that (which items open an assistant message, which join the open one,
which close it) on a decode of the few fields it needs, without building Common:

* a ``token_count`` whose running total repeats the previous one is skipped; otherwise
  its ``last_token_usage`` (else the total) goes to the newest assistant message opened
  since the previous counted event, or nowhere when none was;
* a counted ``token_count`` no assistant message took is a local compaction's own call
  when a ``compacted`` line follows, and counts as one;
* input excludes the cached part (Common follows Anthropic), reasoning is kept apart.

Rollouts the lean pass does not replay (2025 files without envelopes, events-only
rollouts, forks that replay a parent, lines of another shape) return ``None``: the caller
reads them the full way. ``tests/features/test_usage_fast.py`` checks both ways agree on the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...kit.registry import UsageReader


class _TokenUsage(
    msgspec.Struct, gc=False
):  # records.TokenUsage's fields and types, never tracked by the GC (records is not imported on usage's start-up path)
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0
    cache_write_input_tokens: int | UnsetType = UNSET


class _TokenInfo(msgspec.Struct, gc=False):  # records.TokenInfo's
    total_token_usage: _TokenUsage | None | UnsetType = UNSET
    last_token_usage: _TokenUsage | None | UnsetType = UNSET
    model_context_window: int | None | UnsetType = UNSET


class _Payload(msgspec.Struct, gc=False):
    type: Any = None
    role: Any = None
    id: Any = None
    model: Any = None
    cwd: Any = None
    info: _TokenInfo | None = None


class _Line(msgspec.Struct, gc=False):
    type: Any = None
    timestamp: Any = None
    payload: _Payload | None = None


_lines = msgspec.json.Decoder(_Line)


def _decode_lines(data: bytes | memoryview) -> list[_Line]:
    """Every line of ``data``; one refused only for a lone surrogate escape is decoded on
    its own from a repaired copy, so it does not send the whole file to the full reader."""
    try:
        return _lines.decode_lines(data)
    except msgspec.DecodeError:
        from ...model.native import decode_lines_repairing  # not on usage's start-up path

        return decode_lines_repairing(_lines, data)


# items that open an assistant message or join the open one (read.side("assistant"))
_ASSISTANT_ITEMS = {
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
}
_USER_ITEMS = {"function_call_output", "custom_tool_call_output", "tool_search_output"}
_COMPACTION_ITEMS = {"compaction", "compaction_summary"}


def file_calls(data: bytes | Iterable[bytes]) -> tuple[str | None, str | None, list[list]] | None:
    """``(session id, cwd, calls)``; each call is ``[id, model, timestamp, (input,
    output, cache write, cache read) | None, True, reasoning]``. ``data`` is the file's
    bytes or its whole-line pieces (each may be a view that is reused once the next is
    asked for). ``None`` when the rollout needs the full reader."""
    try:
        return _calls((data,) if isinstance(data, (bytes, bytearray, memoryview)) else data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):  # a line nested too deeply
        return None


def _calls(pieces: Iterable[Any]) -> tuple[str | None, str | None, list[list]] | None:
    # one loop over every line of every piece, no generator between: this is usage's
    # inner loop over a Codex store
    own_id: Any = None
    cwd = None
    model: str | None = None
    calls: list[list] = []
    open_call: list | None = None  # the assistant message items join, if one is open
    fresh = False  # an assistant message opened since the last counted token_count
    last_total: Any = None
    unattributed: Any = None  # a counted token_count no assistant message took
    has_message_item = False
    for piece in pieces:
        for line in _decode_lines(piece):  # a lone surrogate escape costs its own line only
            p = line.payload
            if p is None:
                return None  # a 2025 line without an envelope
            kind = line.type
            if kind == "event_msg":
                t = p.type
                if t == "token_count":
                    info = p.info
                    if info is None:
                        continue
                    total = info.total_token_usage
                    if type(total) is not _TokenUsage or total == last_total:
                        continue
                    last_total = total
                    last = info.last_token_usage
                    if type(last) is not _TokenUsage:
                        last = total
                    if fresh:
                        _add(calls[-1], last)
                        unattributed = None
                    else:
                        unattributed = last  # a compaction's own call, if a compacted line follows
                    fresh = False
                elif t == "error":  # a synthetic assistant message: not a call, closes the open one
                    open_call = None
            elif kind == "response_item":
                t = p.type
                if type(t) is not str:
                    return None  # the full reader decides what a line of another shape is
                if t == "message":
                    has_message_item = True
                    if p.role != "assistant":
                        open_call = None
                        continue
                    if open_call is None:
                        open_call, fresh = _open(calls, model, line.timestamp), True
                    if open_call[0] is None and isinstance(p.id, str):
                        open_call[0] = p.id
                elif t in _ASSISTANT_ITEMS:
                    if open_call is None:
                        open_call, fresh = _open(calls, model, line.timestamp), True
                    if t == "web_search_call":  # a synthetic empty result follows the call
                        open_call = None
                elif t in _USER_ITEMS:
                    open_call = None
                elif t in _COMPACTION_ITEMS:  # a compaction message: a call, never joined
                    _open(calls, model, line.timestamp)
                    open_call, fresh = None, True
            elif kind == "turn_context":
                if isinstance(p.model, str):
                    model = p.model
            elif kind == "session_meta":
                pid = p.id
                if own_id is None:
                    own_id = pid if isinstance(pid, str) else ""
                    cwd = p.cwd if isinstance(p.cwd, str) else None
                elif pid != own_id:
                    return None  # a fork replaying its parent
            elif kind == "compacted":  # a synthetic summary message: the compaction's call, when counted
                open_call = None
                if unattributed is not None:
                    _add(_open(calls, model, line.timestamp), unattributed)
                    unattributed = None
    if not has_message_item:
        return None  # events-only: read from the UI events
    return (own_id or None), cwd, calls


def _open(calls: list[list], model: str | None, ts: Any) -> list:
    call = [None, model or None, ts if isinstance(ts, str) else None, None, True, None]
    calls.append(call)
    return call


def _add(call: list, u: Any) -> None:
    cached = min(u.cached_input_tokens, u.input_tokens)
    write = u.cache_write_input_tokens if isinstance(u.cache_write_input_tokens, int) else 0
    tokens = (u.input_tokens - cached, u.output_tokens, write, cached)
    old = call[3]
    call[3] = (
        tokens if old is None else (old[0] + tokens[0], old[1] + tokens[1], old[2] + tokens[2], old[3] + tokens[3])
    )
    call[5] = (call[5] or 0) + u.reasoning_output_tokens


USAGE = UsageReader(file_calls=file_calls)
