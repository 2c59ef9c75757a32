"""Codex rollout -> Claude Code in one pass, for the rollouts whose every line it knows.

``api.convert`` reads a rollout into Common (typed records, the Codex reader, ``conform``)
and writes Common as Claude Code: four passes that each build a copy of the session.
:func:`convert` goes from the rollout's lines to the Claude Code lines directly, with
each tool output carried as the bytes of its JSON string (a :class:`msgspec.Raw` pasted
into the written line) where those bytes are what the writer's encoder would write. Each
message is written as soon as no later line can change it (:meth:`_Read.settled`), so the
conversation is never all held.

It gives what the reference path gives: the same files, byte for byte, the same loss
entries in the same order and the same ``written.cwd``. It knows a subset: the shapes a
Codex CLI writes for text, reasoning, function and custom tool calls answered by string
outputs in the next message, compactions, turn settings, token counts and the UI's mirror
events. Anything else (another line, item or event type, a field of an odd shape, an image,
a fork, a call without its answer, a float in a tool input, an events-only rollout, ...)
makes it return ``None`` at once, and the reference path runs as before.

The mirror of each step it takes is named in its comments (``_Reader.side``,
``_Writer.assistant``, ...); ``tests/features/test_codex_claude_fast_paths.py`` holds the two to
the same output on every golden and corpus rollout, odd variants and mutants.
"""

from __future__ import annotations

import codecs
import io
import mmap
import os
import re
from collections.abc import Generator
from collections.abc import Iterator
from typing import Any
from typing import Union

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.errors import InternalError
from ...core.ids import is_safe_cwd
from ...core.ids import is_safe_relpath
from ...core.ids import is_uuid
from ...kit.registry import Written
from ...model.loss import LossReport
from ...model.native import Opaque
from ...model.native import _one_object_per_line
from ...model.native import builtins
from ...model.native import line_spans
from ..codex import codec as codex_codec
from ..codex import read as codex_read
from ..codex import records as R
from ..codex.prelude import prelude_kind
from . import write as W

# Whether api.convert takes this path; the differential tests turn it off for their reference.
ENABLED = True


class _Bail(Exception):
    """Something outside the subset: the reference path converts the rollout."""


# --- the lines it decodes ----------------------------------------------------------------
# The records' own structs wherever it reads what the Codex reader reads, so a line decodes
# here exactly when (and as) the Codex codec's typed decode takes it; only the two outputs
# differ: ``Raw`` where the records have ``Any`` (both take any JSON value).


class _FunctionOutput(R._Item, tag="function_call_output"):
    call_id: str = ""
    output: msgspec.Raw | UnsetType = UNSET
    id: str | None | UnsetType = UNSET


class _CustomOutput(R._Item, tag="custom_tool_call_output"):
    call_id: str = ""
    output: msgspec.Raw | UnsetType = UNSET
    id: str | None | UnsetType = UNSET


_Items = Union[
    R.MessageItem,
    R.ReasoningItem,
    R.FunctionCallItem,
    _FunctionOutput,
    R.CustomToolCallItem,
    _CustomOutput,
    R.WebSearchCallItem,
    R.GhostSnapshotItem,
]


class _ItemLine(R._Line, tag="response_item"):
    payload: _Items | UnsetType = UNSET


_Lines = Union[R.SessionMetaLine, _ItemLine, R.EventMsgLine, R.TurnContextLine, R.CompactedLine]
_decoder = msgspec.json.Decoder(_Lines)
_lines_decoder = _decoder.decode_lines
_REFUSED = Opaque(b"", "")
_LINES, _BYTES = 1024, 1 << 20  # a batch of lines decoded in one msgspec call
_RELEASE = 8 << 20  # a mapped rollout's pages are given back every 8 MiB read (readkit's rhythm)


def _batches(data: Any) -> Iterator[tuple[list[Any], Any, list[int], list[int]]]:
    """The lines of ``data`` a batch at a time, as ``native.decode_batches`` finds and
    decodes them (a batch in one call when each of its lines is one object, else line by
    line): the batch's records, a view of ``data`` and the lines' start and end offsets.
    A record is :data:`_REFUSED` where this decoder refuses the line (the Codex codec's
    lenient path then reads it, or finds it opaque). A batch, not a line, at a time: the
    caller's loop over a batch's records costs less than a generator's step per line."""
    view = memoryview(data)
    release, released = _releaser(data), 0
    for starts, ends in line_spans(data, _LINES, _BYTES):
        start = ends[-1] + 1  # where the next batch starts
        records = None
        if len(starts) > 1 and _one_object_per_line(data, starts, ends):
            try:
                records = _lines_decoder(view[starts[0] : ends[-1]])
            except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                records = None
            if records is not None and len(records) != len(starts):
                records = None
        if records is None:
            records = [_decoded(view[a:b]) for a, b in zip(starts, ends)]
        yield records, view, starts, ends
        if release is not None and start - released >= _RELEASE:
            released = _released(release, released, start)


def _releaser(data: Any) -> Any:
    """``data.madvise`` for a mapped file, else ``None``. Its pages read so far can be
    given back (``MADV_DONTNEED``) at any time: a pasted output in them is read again from
    the file when its record is written, so the rollout is never all resident at once."""
    return getattr(data, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None


def _released(release: Any, start: int, end: int) -> int:
    """The pages from ``start`` up to the one holding ``end`` given back; where the
    next release starts."""
    page = end - end % mmap.PAGESIZE
    if page > start:
        release(mmap.MADV_DONTNEED, start, page - start)
    return max(page, start)


def _decoded(line: Any) -> Any:
    try:
        return _decoder.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return _REFUSED
    except RecursionError:  # nested too deeply: the reference keeps the line as bytes
        raise _Bail from None


_utf8 = codecs.utf_8_decode
_api_tool_id, _float_free = W._API_TOOL_ID.fullmatch, W._float_free
_string = msgspec.json.Decoder(str)
_ESCAPE = re.compile(rb"\\[u/]")  # the escapes msgspec does not write (or not always)


def _output(raw: Any) -> Any:
    """A string output as the writer's encoder would write it: its own bytes (``Raw``)
    when they are valid UTF-8 (msgspec skips a value without checking it) and hold no
    ``\\u`` or ``\\/`` escape, for msgspec escapes only ``"``, ``\\`` and the control
    characters, as ``\\b \\f \\n \\r \\t`` and ``\\u00XX`` (a test pins it); else
    the decoded string. Anything but a string is outside the subset."""
    view = memoryview(raw)
    if view[:1] != b'"':
        raise _Bail
    try:
        _utf8(view)
    except UnicodeDecodeError:  # the strict decode refuses the line: the reference reads it leniently
        raise _Bail from None
    if _ESCAPE.search(view) is not None:
        return _string.decode(view)
    return raw


# --- the conversation, as the Codex reader would build it ------------------------------

# What ``_Reader.event`` does with each event: nothing (``None``: a mirror of a response
# item; a turn's start, which matters to a fork's replay only; an abort, which marks what
# the writer does not read), count tokens, add a loss entry of that kind, or more than the
# subset does (an error becomes a synthetic message).
_TOKEN_COUNT, _BAIL = "token_count", "bail"
_EVENTS: dict[Any, str | None] = {
    cls: None if tag in codex_read.MIRROR_EVENTS else f"event:{tag}" for tag, cls in R.EVENT_TYPES.items()
}
_EVENTS.update(
    {R.TaskStartedEvent: None, R.TurnAbortedEvent: None, R.TokenCountEvent: _TOKEN_COUNT, R.ErrorEvent: _BAIL}
)


class _Message:
    """One Common message, with only what the Claude Code writer reads of it. ``kind``:
    ``assistant``, ``text`` (a user message: human, or ``meta`` for an injected prelude),
    ``results`` (tool results), ``compact`` (a compaction summary, opening an epoch)."""

    __slots__ = ("kind", "timestamp", "blocks", "meta", "closed", "id", "model", "usage", "usage_unverified")

    def __init__(self, kind: str, timestamp: Any, blocks: list[Any], meta: bool = False) -> None:
        self.kind, self.timestamp, self.blocks, self.meta = (
            kind,
            timestamp if isinstance(timestamp, str) else UNSET,
            blocks,
            meta,
        )
        self.closed = False  # a synthetic message (a web search's result) that no later item joins
        self.id = self.model = self.usage = self.usage_unverified = UNSET


class _Read:
    """``codex.read._Reader`` for the subset: the messages, the reader's loss entries and
    the session's meta."""

    def __init__(self, file: str | None) -> None:
        self.file = file
        self.messages: list[_Message] = []
        self.loss = LossReport()
        self.model: str | None = None
        self.meta: R.SessionMeta | None = None
        self.started_at: Any = UNSET
        self.last_total: tuple | None = None
        self.pending_usage_from = 0
        self.open: dict[str, str] = {}  # calls without an output yet, and their names
        self.called: set[str] = set()  # every call id so far: one used twice is outside the subset
        self.any_message = False  # an events-only rollout is read from its events: not here
        self.humans = 0  # human messages so far (those written are gone from ``messages``)

    def lose(self, kind: str, detail: str, n: int) -> None:
        self.loss.add(kind, detail, file=self.file, line=n)

    def new(self, kind: str, ts: Any, blocks: list[Any], meta: bool = False) -> _Message:
        msg = _Message(kind, ts, blocks, meta)
        if kind == "assistant" and self.model:
            msg.model = self.model
        elif kind == "text" and not meta:
            self.humans += 1
        self.messages.append(msg)
        return msg

    def settled(self, written: int) -> int:
        """How many messages, from the first, can no longer change, and so can be written
        while the rest is read (``written`` of them are, and gone): all before the last
        (which the next item may join) and before the assistant message the next token
        count would add its usage to (the last one since the last count, never written)."""
        messages = self.messages
        upto = len(messages) - 1
        for index in range(upto, max(self.pending_usage_from, written) - 1, -1):
            if messages[index].kind == "assistant":
                return index
        return max(upto, written)

    def side(self, kind: str, ts: Any) -> _Message:
        """``_Reader.side``: the open assistant message, or the open message of results."""
        last = self.messages[-1] if self.messages else None
        if last is not None and last.kind == kind and not last.closed:
            return last
        if kind == "results" and last is not None and last.kind == "text" and not last.meta and not last.blocks:
            raise _Bail  # an empty human message takes the results: a mixed message
        return self.new(kind, ts, [])

    def line(self, record: Any, n: int) -> None:
        kind = type(record)
        if kind is _ItemLine:
            p, ts = record.payload, record.timestamp
            item = type(p)
            if item is _FunctionOutput or item is _CustomOutput:
                call_id, output = p.call_id, p.output
                if self.open.pop(call_id, None) is None or output is UNSET:
                    raise _Bail  # orphan-output and output-shape entries
                last = self.messages[-1]  # a call came first
                if last.kind != "results" or last.closed:
                    last = self.side("results", ts)
                last.blocks.append((call_id, _output(output)))
            elif item is R.FunctionCallItem:
                args = p.arguments
                if type(args) is not str or p.namespace:  # an MCP namespace: the reference names it
                    raise _Bail
                try:
                    value = codex_read._arguments(args)
                except ValueError:  # no JSON (real rollouts' redacted arguments): a string input
                    value = args
                    self.lose("tool:arguments-not-json", f"{p.name} arguments kept as the string they were", n)
                except Exception:  # noqa: BLE001 - nested too deeply: the reference's case
                    raise _Bail from None
                self.call(p.call_id, p.name, value, ts)
            elif item is R.CustomToolCallItem:
                self.call(p.call_id, p.name, p.input, ts)
            elif item is R.MessageItem:
                self.message_item(p, ts)
            elif item is R.ReasoningItem:
                if isinstance(p.content, list) and p.content:
                    self.lose("field:reasoning.content", "raw reasoning text is not carried next to the summary", n)
                self.side("assistant", ts).blocks.append(("thinking", len("\n\n".join(s.text for s in p.summary))))
            elif item is R.WebSearchCallItem:  # _Reader.web_search_call: answered at once, by an empty result
                call_id = p.id if isinstance(p.id, str) else f"ws_line{n}"
                self.call(
                    call_id, "web_search", builtins(p.action) if isinstance(p.action, R.WebSearchAction) else None, ts
                )
                del self.open[call_id]
                self.new("results", ts, [(call_id, "")]).closed = True  # synthetic: nothing joins it
            elif item is R.GhostSnapshotItem:
                self.lose("item:ghost_snapshot", "response item Common does not carry", n)
            else:  # no payload
                raise _Bail
        elif kind is R.EventMsgLine:
            p = record.payload
            if type(p) is R.PatchApplyEndEvent and p.success is False:
                raise _Bail  # a failed apply_patch: its output is an error result (codex.read)
            event = _EVENTS.get(type(p), _BAIL)
            if event is _TOKEN_COUNT:
                self.token_count(p)
            elif event is _BAIL:
                raise _Bail
            elif event is not None:
                self.lose(event, "UI event Common does not carry", n)
        elif kind is R.TurnContextLine:
            model = R.turn_settings(record.payload).model
            if isinstance(model, str):
                self.model = model
            self.lose("record:turn_context", "turn settings (approval, sandbox, effort): kept for Codex only", n)
        elif kind is R.CompactedLine:
            self.compacted(record, n)
        elif kind is R.SessionMetaLine:
            p = record.payload
            if self.meta is not None or not is_uuid(p.id) or isinstance(p.forked_from_id, str):
                raise _Bail  # a fork's replay, a session id to derive, a fork link
            self.meta = p
            self.started_at = p.timestamp if isinstance(p.timestamp, str) else record.timestamp
        else:
            raise _Bail

    def refused(self, raw: bytes, n: int) -> None:
        """A line the typed decode refuses, read as the Codex codec's lenient path reads it:
        a line, event or item of a type nobody types is a loss entry (``_Reader.other``,
        ``event``, ``item``); anything else is outside the subset."""
        try:
            record = codex_codec._lenient(raw, _Bail())
        except Exception:  # noqa: BLE001 - nested too deeply: the reference keeps it as bytes
            raise _Bail from None
        kind = type(record)
        if kind is R.OtherLine:
            self.lose(f"record:{record.type}", "line type Common does not carry", n)
        elif kind is R.EventMsgLine and isinstance(record.payload, msgspec.Raw):
            value = R.raw_json(record.payload)
            self.lose(
                f"event:{value.get('type') if isinstance(value, dict) else None}", "event Common does not carry", n
            )
        elif kind is R.ResponseItemLine and isinstance(record.payload, msgspec.Raw):
            value = R.raw_json(record.payload)
            if isinstance(value, dict) and value.get("type") in ("tool_search_call", "tool_search_output"):
                raise _Bail  # context the reader keeps (codex.read tool_search)
            self.lose(
                f"item:{value.get('type') if isinstance(value, dict) else None}",
                "response item Common does not carry",
                n,
            )
        else:
            raise _Bail

    def call(self, call_id: str, name: str, value: Any, ts: Any) -> None:
        # the writer's fast case only: an id the API takes, a name, a value without a float
        if call_id in self.called or not name or not call_id or not _api_tool_id(call_id) or not _float_free(value):
            raise _Bail
        self.called.add(call_id)
        self.open[call_id] = name
        self.side("assistant", ts).blocks.append(("tool", call_id, name, value))

    def message_item(self, p: R.MessageItem, ts: Any) -> None:
        texts = []
        for part in p.content:
            if type(part) is R.InputImage:
                raise _Bail
            texts.append(part.text)
        self.any_message = True
        if p.role == "assistant":
            msg = self.side("assistant", ts)
            msg.blocks.extend(("text", text) for text in texts)
            if isinstance(p.id, str) and msg.id is UNSET:
                msg.id = p.id
            return
        meta = p.role in ("developer", "system") or (bool(texts) and all(prelude_kind(t) is not None for t in texts))
        self.new("text", ts, texts, meta)

    def compacted(self, line: R.CompactedLine, n: int) -> None:
        """``_Reader.compacted``, for a compaction whose model call is not counted apart."""
        p = line.payload
        history = p.replacement_history if isinstance(p.replacement_history, list) else None
        summary = p.message
        derived = not summary.strip() and history is not None
        if derived:
            summary = codex_read.summary_from_history(history)
        self.new("compact", line.timestamp, [summary])
        if derived:
            self.lose(
                "compaction:summary-from-history",
                "the compacted line has no summary text; the summary is its "
                "replacement history as text (a remote compaction's own summary is encrypted)",
                n,
            )
            kept = 0
        elif history is not None:
            kept = sum(1 for item in history if not codex_read._is_summary_item(item, p.message))
        else:
            kept = self.humans  # the human messages before this one
        if kept:
            self.lose(
                "compaction:kept-history",
                f"codex resumes this compaction with {kept} earlier item(s) besides the summary; "
                "a Common epoch starts at the summary (kept in extra for Codex)",
                n,
            )

    def token_count(self, p: R.TokenCountEvent) -> None:
        """``_Reader.token_count`` (never replaying: a fork is outside the subset)."""
        info = p.info
        if not isinstance(info, R.TokenInfo) or not isinstance(info.total_token_usage, R.TokenUsage):
            return
        total = msgspec.structs.astuple(info.total_token_usage)
        if total == self.last_total:
            return
        self.last_total = total
        last = info.last_token_usage if isinstance(info.last_token_usage, R.TokenUsage) else info.total_token_usage
        usage = codex_read._usage(last)
        messages = self.messages
        # from the end: it meets the message it looks for before any already written (None),
        # as :meth:`settled` keeps that one back
        target = next((m for m in reversed(messages[self.pending_usage_from :]) if m.kind == "assistant"), None)
        self.pending_usage_from = len(messages)
        if target is None:
            raise _Bail  # a call no message answers: a compaction's own, kept in meta.extra
        target.usage = usage if target.usage is UNSET else codex_read._usage_sum(target.usage, usage)


# --- the Claude Code lines, as the writer would write them ---------------------------------
# The writer builds a dict per record and encodes them all in one msgspec call. Here the two
# records written by the ten thousand (a tool result, an assistant message's block) are put
# together from their encoded parts, in the same key order; the rare others are the
# writer's dicts, encoded one by one. msgspec writes compact JSON, so the parts join into
# the bytes it would write for the whole record (the differential tests compare them).

_enc = W._fast_json
_RESULT_OPEN = b'","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"'
_RESULT_CONTENT = b'","type":"tool_result","content":'
_RESULT_CALL = b'}]},"sourceToolAssistantUUID":"'
_ASSISTANT = b',"isSidechain":false,"type":"assistant","message":'
_UUID = b'","uuid":"'
_PIECES = 1 << 15  # about 3,000 records' pieces, about 5 MB


def fast(session: Any, cwd: str | None, default_cwd: str | None) -> tuple[Written, LossReport] | None:
    """Claude Code's fast path from Codex (``Harness.fast_paths``): :func:`convert` of a
    rollout whose lines are still undecoded (``session.pending``), else ``None`` (and
    ``api.convert`` reads the session into Common)."""
    if not ENABLED or session.pending is None:
        return None
    return convert(session.pending, str(session.path) if session.path is not None else None, cwd, default_cwd)


def convert(data: Any, path: str | None, cwd: str | None, default_cwd: str | None) -> tuple[Written, LossReport] | None:
    """``api.convert(data, "claude_code", from_="codex", cwd=cwd, default_cwd=default_cwd)``
    for a rollout inside the subset (``data``: its bytes or the mapped file, ``path``
    its name), else ``None``."""
    try:
        return _convert(data, path, cwd, default_cwd)
    except _Bail:
        return None


def _convert(data: Any, path: str | None, cwd: str | None, default_cwd: str | None) -> tuple[Written, LossReport]:
    read = _Read(path)
    line = read.line
    writer: _ClaudeFile | None = None
    release = _releaser(data)
    first = 1  # the number of the batch's first line
    for records, view, starts, ends in _batches(data):
        for n, record in enumerate(records, first):
            if record is _REFUSED:
                read.refused(bytes(view[starts[n - first] : ends[n - first]]), n)
            else:
                line(record, n)
        first += len(records)
        if writer is None and read.meta is not None and read.started_at is not UNSET:
            writer = _ClaudeFile(read.meta, cwd, default_cwd, read.started_at, release, len(data))
        if writer is not None:
            writer.take(read.messages, read.settled(writer.taken))
    if not read.any_message or read.meta is None:
        raise _Bail  # an events-only rollout, no session id
    for call_id, name in read.open.items():  # _Reader.finish
        read.loss.add("tool:no-output", f"{name} call {call_id} has no output in the rollout", file=path)
    if writer is None:  # no start time before the end: _Reader.finish takes the first message's
        started_at = next((m.timestamp for m in read.messages if m.timestamp is not UNSET), UNSET)
        writer = _ClaudeFile(read.meta, cwd, default_cwd, started_at, release, len(data))
    writer.take(read.messages, len(read.messages))
    body = writer.finish()
    loss = read.loss
    loss.extend(writer.loss)  # the writer's entries after all of the reader's, as the reference adds them
    written = Written(writer.sid, {writer.file: body})
    written.cwd = writer.cwd
    return written, loss


class _ClaudeFile:
    """``claude_code.write`` for the subset's messages, fed in order as each becomes final
    (:func:`_write` runs as a generator, each message sent to it); its loss entries are
    kept apart until the reader's are all in."""

    def __init__(
        self, meta: R.SessionMeta, cwd: str | None, default_cwd: str | None, started_at: Any, release: Any, size: int
    ) -> None:
        # api._convert and claude_code.write.write: the folder, the session id, the file
        source_cwd = meta.cwd
        recorded = (
            source_cwd
            if isinstance(source_cwd, str) and os.path.isabs(source_cwd) and is_safe_cwd(source_cwd)
            else None
        )
        if cwd is None and recorded is None:
            cwd = default_cwd
        folder = cwd or (source_cwd if isinstance(source_cwd, str) and source_cwd else "/")
        self.sid = meta.id.lower()
        self.file = f"{W.munge_cwd(folder)}/{self.sid}.jsonl"
        if not is_safe_relpath(self.file):
            raise _Bail  # the reference refuses it
        self.cwd = cwd or recorded
        branch = meta.git.branch if isinstance(meta.git, R.GitInfo) and isinstance(meta.git.branch, str) else "HEAD"
        self.loss = LossReport()
        self.taken = 0  # the messages written so far
        self._steps = _write(self.loss, self.sid, folder, branch, self.file, started_at, release, size)
        next(self._steps)  # up to where it waits for the first message

    def take(self, messages: list[Any], upto: int) -> None:
        """Write ``messages[self.taken:upto]``, each let go once written."""
        send = self._steps.send
        try:
            for index in range(self.taken, upto):
                message, messages[index] = messages[index], None
                send(message)
        except (
            msgspec.EncodeError,
            OverflowError,
            UnicodeEncodeError,
        ):  # what msgspec refuses (an int past 64 bits) is the reference's to write
            raise _Bail from None
        self.taken = upto

    def finish(self) -> bytes:
        """The file, once every message is in."""
        try:
            self._steps.send(None)
        except StopIteration as done:
            return done.value
        except (msgspec.EncodeError, OverflowError, UnicodeEncodeError):
            raise _Bail from None
        raise InternalError("the Claude Code writer went on past the last message")


def _write(
    loss: LossReport, sid: str, cwd: str, branch: str, file: str, timestamp: Any, release: Any = None, size: int = 0
) -> Generator[None, _Message | None, bytes]:
    """``_Writer.write_messages`` and ``render`` for the subset's messages, sent one by one
    (``None`` after the last: the file is returned); ``release`` gives back a mapped
    rollout's pages (see :func:`_releaser`) once a batch of records is in the file."""
    add = loss.add
    named = W.uuid_namer(W.NAMESPACE, f"{sid}/main/")
    file_named = W.uuid_namer(W.NAMESPACE, f"{sid}/{file}/")
    closing = {
        "userType": "external",
        "entrypoint": "cli",
        "cwd": cwd,
        "sessionId": sid,
        "version": W.TESTED_VERSION,
        "gitBranch": branch,
    }
    end = b"," + _enc(closing)[1:] + b"\n"  # what every record ends with
    timestamp = timestamp if timestamp is not UNSET else W._EPOCH_TS
    stamp = b'","timestamp":' + _enc(timestamp) + end  # after a record's uuid
    # the file's pieces (a Raw output among them), moved into ``body`` a batch at a time: the
    # pieces and the file are never all held at once (a BytesIO's value is not copied out)
    body = io.BytesIO()
    out: list[Any] = []
    put, extend = out.append, out.extend
    counter = 0
    tail = leaf = last_prompt = None
    tool_records: dict[str, bytes] = {}  # a call's id -> the uuid of the record holding it
    calls: list[str] = []  # the last assistant message's calls
    deferred: list[str] = []  # its calls the next message does not answer, when that message takes their results
    calls_where = ""

    def record(fields: dict[str, Any], uid: str) -> None:
        """A rare record: the writer's dict, closed as ``_Stream.finish`` closes it."""
        fields["uuid"] = uid
        fields["timestamp"] = timestamp
        fields.update(closing)
        put(_enc(fields) + b"\n")

    def missing(ids: list[str], top: dict[str, Any], more: list[Any] = ()) -> None:
        """_Writer.missing_results and result_record: an is_error result for each call
        without one, the last one carrying ``more`` (the rest of a user message)."""
        nonlocal counter, tail, leaf
        for k, tool_id in enumerate(ids):
            call = tool_records.get(tool_id)
            if call is not None:
                call = call.decode()
            content = [W._placeholder(tool_id), *more] if k == len(ids) - 1 else [W._placeholder(tool_id)]
            counter += 1
            uid = named(str(counter))
            fields = {
                "parentUuid": call or tail,
                "isSidechain": False,
                "type": "user",
                "message": {"role": "user", "content": content},
                **top,
            }
            if call is not None:
                fields["sourceToolAssistantUUID"] = call
            record(fields, uid)
            tail = leaf = uid

    index = -1
    while True:
        message = yield
        if message is None:
            break
        index += 1
        if len(out) > _PIECES:
            body.writelines(out)
            out.clear()
            if release is not None:
                _released(release, 0, size)
        kind = message.kind
        if calls and kind != "results":  # _Writer.write_messages: _unanswered
            for tool_id in calls:
                add(
                    "write:missing-tool-result",
                    f"{calls_where}: tool_use {tool_id} had no result; an is_error result was added",
                    file=file,
                )
            if kind == "compact":  # an epoch opens: the results go right after their calls
                missing(calls, {})
            else:
                deferred = calls
            calls = []
        if message.timestamp is not UNSET and message.timestamp != timestamp:
            timestamp = message.timestamp
            stamp = b'","timestamp":' + _enc(timestamp) + end
        if kind == "results":  # _Writer.plain_results
            blocks = message.blocks
            if len(blocks) == 1 == len(calls):  # the common case: one call, one answer
                if blocks[0][0] != calls[0]:
                    raise _Bail  # the answer to another call
            else:
                ids = [block[0] for block in blocks]
                if len(set(ids)) != len(ids) or set(ids) != set(calls):
                    raise _Bail  # an answer twice, or not to the message before, or some calls unanswered
            for tool_id, content in blocks:
                call = tool_records[tool_id]
                counter += 1
                uid = named(str(counter))
                extend(
                    (
                        b'{"parentUuid":"',
                        call,
                        _RESULT_OPEN,
                        tool_id.encode(),
                        _RESULT_CONTENT,
                        content if type(content) is msgspec.Raw else _enc(content),
                        _RESULT_CALL,
                        call,
                        _UUID,
                        uid.encode(),
                        stamp,
                    )
                )
                tail = leaf = uid
            calls = []
            continue
        where = f"{file}#message{index}"
        if kind == "assistant":  # _Writer.assistant
            blocks = []
            for i, block in enumerate(message.blocks):
                what = block[0]
                if what == "text":
                    if block[1]:
                        blocks.append((None, {"type": "text", "text": block[1]}))
                    else:
                        add("write:empty-text", f"{where}.{i}: empty text block left out", file=file)
                elif what == "thinking":
                    add(
                        "write:thinking-without-signature",
                        f"{where}.{i}: thinking without a signature left out ({block[1]} chars)",
                        file=file,
                    )
                else:
                    _, tool_id, name, value = block
                    if type(value) is not dict:
                        add(
                            "write:wrapped-input",
                            f'{where}.{i}: {name} input was {type(value).__name__}, wrapped as {{"input": ...}}',
                            file=f"{where}.{i}",
                        )
                        value = {"input": value}
                    blocks.append((tool_id, {"type": "tool_use", "id": tool_id, "name": name, "input": value}))
                    calls.append(tool_id)
            calls_where = where
            if not blocks:
                add(
                    "write:empty-message",
                    f"{where}: an assistant message with nothing the API accepts; left out",
                    file=file,
                )
                continue
            msg_id = (
                message.id if message.id is not UNSET else "msg_" + file_named(f"{where}/message").replace("-", "")[:24]
            )
            head: dict[str, Any] = {"id": msg_id, "type": "message", "role": "assistant"}
            if message.model is not UNSET:
                head["model"] = message.model
            usage = W._usage(message)  # type: ignore[arg-type]
            opening = _enc(head)[:-1] + b',"content":['  # the body up to its one block
            closing_body = b"]}" if usage is None else b'],"usage":' + _enc(usage) + b"}"
            for tool_id, block in blocks:
                counter += 1
                uid = named(str(counter))
                uid_bytes = uid.encode()
                extend(
                    (
                        b'{"parentUuid":null' if tail is None else b'{"parentUuid":"' + tail.encode() + b'"',
                        _ASSISTANT,
                        opening,
                        _enc(block),
                        closing_body,
                        b',"uuid":"',
                        uid_bytes,
                        stamp,
                    )
                )
                tail = leaf = uid
                if tool_id is not None:
                    tool_records[tool_id] = uid_bytes
        else:  # a user message of text: _Writer.user, user_content and text_record
            if kind == "compact":  # the boundary first: a new root (_Writer.boundary)
                counter += 1
                uid = named(str(counter))
                record(
                    {
                        "parentUuid": None,
                        "isSidechain": False,
                        "type": "system",
                        "subtype": "compact_boundary",
                        "content": "Conversation compacted",
                        "level": "info",
                        "isMeta": False,
                        "compactMetadata": {"trigger": "codex"},
                        "logicalParentUuid": tail,
                    },
                    uid,
                )
                tail = uid
            texts = message.blocks
            if len(texts) == 1:
                content: Any = texts[0]
                if not content:
                    add("write:empty-text", f"{where}: empty text left out", file=file)
                    content = []
                elif W.parse_envelope(content) is not None:
                    content = [{"type": "text", "text": content}]
            else:
                content = []
                for i, text in enumerate(texts):
                    if text:
                        content.append({"type": "text", "text": text})
                    else:
                        add("write:empty-text", f"{where}.{i}: empty text block left out", file=file)
            if deferred:  # _Writer.user: the added results first, the last one holding the message
                missing(
                    deferred,
                    {"isMeta": True} if message.meta else {"origin": {"kind": "human"}},
                    [{"type": "text", "text": content}] if isinstance(content, str) else content,
                )
                deferred = []
            elif not content:
                add("write:empty-message", f"{where}: a user message with nothing the API accepts; left out", file=file)
            else:
                counter += 1
                uid = named(str(counter))
                fields: dict[str, Any] = {
                    "parentUuid": tail,
                    "isSidechain": False,
                    "type": "user",
                    "message": {"role": "user", "content": content},
                }
                if kind == "compact":
                    fields["isCompactSummary"] = True
                    fields["isVisibleInTranscriptOnly"] = True
                elif message.meta:
                    fields["isMeta"] = True
                else:
                    fields["origin"] = {"kind": "human"}
                    if isinstance(content, str):
                        last_prompt = content
                record(fields, uid)
                tail = leaf = uid
    if calls:  # the last message's calls: their results right after them
        for tool_id in calls:
            add(
                "write:missing-tool-result",
                f"{calls_where}: tool_use {tool_id} had no result; an is_error result was added",
                file=file,
            )
        missing(calls, {})
    if leaf is None:
        raise _Bail  # nothing to resume: the reference says so
    last: dict[str, Any] = {"type": "last-prompt"}
    if last_prompt is not None:
        last["lastPrompt"] = last_prompt
    last.update(leafUuid=leaf, sessionId=sid)
    put(_enc(last) + b"\n")
    body.writelines(out)
    return body.getvalue()
