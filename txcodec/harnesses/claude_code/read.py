"""Claude Code session -> Common conversation, by the reconstruction rules of
docs/claude_code_reader.md#reconstruction-rules.

1. Duplicate records are dropped by ``(file, uuid)``, the first kept (docs/claude_code_reader.md#reconstruction-rules).
2. Messages are assembled by ``(message.id, line order)``; ``parentUuid`` is never walked
   (docs/claude_code_reader.md#reconstruction-rules). A call's fragments may be far apart; the tool results of one
   assistant turn join one user message, as the Messages API requires.
3. Every block of a content array is read (docs/claude_code_reader.md#reconstruction-rules).
4. A call's usage is its last fragment's in line order, and only when the call has a
   ``stop_reason`` (docs/claude_code_reader.md#provider-calls); usage is never summed. A call without
   one keeps that usage as ``usage_unverified`` (old clients wrote null everywhere).
5. ``toolUseResult`` is shape-checked before any field access (docs/claude_code_reader.md#reconstruction-rules).

Nothing is dropped silently: what Common has no slot for goes to the loss report with
its line number.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import compress
from itertools import repeat
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from ...core.errors import MALFORMED
from ...kit.read import UnknownKeys
from ...kit.read import report_lone_surrogate_lines
from ...kit.read import report_malformed
from ...kit.read import streamed_batches
from ...model.common import Artifact
from ...model.common import Command
from ...model.common import Context
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Epoch
from ...model.common import Image
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RawBlock
from ...model.common import RedactedThinking
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.common import server_block
from ...model.loss import Loss
from ...model.loss import LossReport
from ...model.loss import PageLoss
from ...model.loss import UnreadLoss
from ...model.native import Line
from ...model.native import NativeSession
from ...model.native import Opaque
from ...model.native import RawLines
from ...model.native import builtins
from ...model.tools import tool_kind
from . import envelopes
from .codec import CODEC
from .codec import PAGE_CODEC
from .codec import STREAMED_CODEC
from .codec import UNREAD_CODEC
from .origin import FORKED_FROM
from .origin import claude_origin
from .records import SHOWN_KEYS
from .records import AgentNameRecord
from .records import AssistantRecord
from .records import AttachmentRecord
from .records import CustomTitleRecord
from .records import DocumentBlock
from .records import ImageBlock
from .records import PageUserRecord
from .records import RedactedThinkingBlock
from .records import ServerToolUseBlock
from .records import ShownToolUseResult
from .records import SkippedProgress
from .records import StreamedUserRecord
from .records import SummaryRecord
from .records import SystemRecord
from .records import TextBlock
from .records import ThinkingBlock
from .records import ToolReferenceBlock
from .records import ToolResultBlock
from .records import ToolUseBlock
from .records import UserRecord
from .records import tool_use_result_shape

HARNESS = "claude_code"
INTERRUPT_PREFIX = "[Request interrupted by user"
SYNTHETIC_MODEL = "<synthetic>"
PERSISTED_TAG = "<persisted-output>"

_decode = msgspec.json.decode


def _raw(value: Any) -> Any:
    return UNSET if value is UNSET else _decode(value)


def _value(value: Any) -> Any:
    """A kept value: decoded from its bytes, or as a streamed read decoded it already."""
    return _decode(value) if type(value) is msgspec.Raw else value


# --- blocks --------------------------------------------------------------------------


def _source(raw: Any) -> dict:
    value = _raw(raw)
    return value if isinstance(value, dict) else {}


def _image(block: ImageBlock) -> Image:
    s = _source(block.source)
    return Image(
        media_type=s.get("media_type", UNSET),
        data=s.get("data", UNSET),
        url=s.get("url", UNSET),
        file_id=s.get("file_id", UNSET),
    )


def _document(block: DocumentBlock) -> Document:
    s = _source(block.source)
    title = block.title if isinstance(block.title, str) else UNSET
    return Document(
        media_type=s.get("media_type", UNSET), data=s.get("data", UNSET), url=s.get("url", UNSET), title=title
    )


def _raw_block(kind: str, value: Any) -> RawBlock:
    return RawBlock(source_type=kind, value=value)


@dataclass
class _Call:
    """One provider call: the assistant message its fragments build."""

    message: Message
    last_usage: Any = None  # the native usage of the last fragment in line order
    stopped: bool = False  # some fragment carried a stop_reason
    results: Message | None = None  # the user message holding this turn's tool results


@dataclass
class _PendingBoundary:
    uuid: str | None
    line: int
    logical_parent: Any
    metadata: dict


@dataclass
class _Spawn:
    """A parent call that started (or may have started) a subagent."""

    tool_use_id: str
    status: Any = UNSET
    run_id: Any = UNSET
    line: int = 0


@functools.cache
def _sidechain_in_main(version: Any) -> bool:
    """Claude Code before 2.0.28 wrote a subagent's records into the main file; from 2.0.28
    they go to files of their own, and a sidechain record in a main file is not a subagent's
    (docs/claude_code.md#versions-read)."""
    if not isinstance(version, str):
        return False
    parts = version.split("-", 1)[0].split(".")
    try:
        return tuple(int(p) for p in parts[:3]) < (2, 0, 28)
    except ValueError:
        return False


def _keep_nothing(entry: Loss) -> None:
    pass


class _FileReader:
    """Reads one transcript file (main or subagent) into a Conversation."""

    def __init__(
        self,
        session: NativeSession,
        loss: LossReport,
        file: str,
        tool_results: dict[str, Path],
        split_sidechains: bool = False,
    ):
        self.session = session
        # a main file of Claude Code before 2.0.28 holds its subagents' records too, marked
        # isSidechain: they are set apart here and read as children (docs/claude_code_reader.md#subagents)
        self.sidechains: list[tuple[int, Line]] | None = [] if split_sidechains else None
        self.loss = loss
        self.file = file
        self.tool_results = tool_results
        self.messages: list[Message] = []
        self.base = 0  # messages handed on before ``messages[0]`` (a streamed read: MessageStream)
        self.handlers = _HANDLERS  # record type -> the method that reads it
        self.calls: dict[str, _Call] = {}
        self.owner: dict[str, _Call] = {}  # tool_use_id -> the call that made it
        self.artifact_calls: set[str] = set()
        self.last_call: _Call | None = None
        self.meta = Meta(source_harness=HARNESS)
        self.models: dict[str, None] = {}
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        self.titles: dict[str, str] = {}
        self.epochs: list[Epoch] = []
        self.boundaries: list[_PendingBoundary] = []
        self.commands: dict[str, Command] = {}  # record uuid -> the command it recorded
        # a local-command caveat waiting for the command it stands before: its wording
        # changed between client versions and the client resends it as recorded
        self.caveat: str | None = None
        self.spawns: dict[str, _Spawn] = {}  # agentId -> spawn (toolUseResult.agentId)
        self.runs: dict[str, _Spawn] = {}  # workflow runId -> spawn
        self.pending_origin: tuple[str, int] | None = None
        self.pending_context: list[tuple[Context, Any]] = []  # attachments waiting for a call's results
        self.seen: set[str] = set()
        # a report nobody reads (an HTML page) keeps nothing and skips the per-line key check
        unread = isinstance(loss, UnreadLoss)
        self.page = type(loss) is PageLoss  # and a page's read keeps of toolUseResult what it shows
        self.unknown = UnknownKeys(() if unread else _HANDLERS)
        self.add_loss = _keep_nothing if unread else loss.entries.append
        self.repaired: list[int] = []  # lines read from a copy with lone surrogates repaired (streamed only)
        # a reader that carries on (CarryOn): the messages built earlier that a line changed,
        # and the calls whose usage may have to be settled again
        self.touched: list[Message] | None = None
        self.touched_calls: list[_Call] | None = None

    # -- helpers ---------------------------------------------------------------------
    def lose(self, kind: str, detail: str, line: int) -> None:
        self.add_loss(Loss(kind, detail, self.file, line))  # LossReport.add, without its keywords (a call per line)

    def _envelope_meta(self, rec: Any) -> None:
        m = self.meta
        if m.id is UNSET and rec.session_id is not UNSET:
            m.id = rec.session_id
        if m.cwd is UNSET and rec.cwd is not UNSET:
            m.cwd = rec.cwd
        if m.git_branch is UNSET and rec.git_branch is not UNSET:
            m.git_branch = rec.git_branch
        if m.client_version is UNSET and rec.version is not UNSET:
            m.client_version = rec.version
        ts = rec.timestamp
        if ts is not UNSET and isinstance(ts, str):
            if self.first_ts is None or ts < self.first_ts:
                self.first_ts = ts
            if self.last_ts is None or ts > self.last_ts:
                self.last_ts = ts

    def _new_message(self, role: str, rec: Any, line: int) -> Message:
        msg = Message(role=role, timestamp=rec.timestamp if isinstance(rec.timestamp, str) else UNSET)
        if rec.uuid:
            msg.source_ids.append(rec.uuid)
        self.messages.append(msg)
        return msg

    # -- the pass --------------------------------------------------------------------
    def run(self, numbered: Iterable[tuple[int, Line]] | None = None) -> Conversation:
        """Reads the session's lines, or only ``numbered`` (a sidechain's lines)."""
        session = self.session
        if numbered is None:
            keep = self.add_loss is not _keep_nothing
            numbered = enumerate(session.lines, 1) if session.pending is None else self._streamed(keep)
        side = self.sidechains
        self.feed(numbered)
        if side and not self.messages:  # every record is a sidechain's: a subagent's file read on its own
            self.sidechains = None
            self.feed(side)
        return self.finish()

    def feed(self, numbered: Iterable[tuple[int, Line]]) -> None:
        """Read these lines, each with its number; an old main file's sidechain records are
        set apart in ``sidechains`` when it is a list."""
        handlers = self.handlers
        seen = self.seen
        unknown = self.unknown.add
        lose, file = self.add_loss, self.file
        keep = lose is not _keep_nothing  # for a report nobody reads, the per-line entries are not even made
        side = self.sidechains
        for n, line in numbered:
            rec = line.record
            if side is not None and getattr(rec, "is_sidechain", None) is True and _sidechain_in_main(rec.version):
                side.append((n, line))
                continue
            kind = type(rec)
            handler = handlers.get(kind)
            if handler is None:
                if not keep:
                    pass
                elif kind is Opaque:
                    lose(Loss("opaque", rec.diagnostic, file, n))
                else:
                    lose(Loss(_bookkeeping(kind), "bookkeeping record; Common has no slot", file, n))
                continue
            if keep:
                unknown(n, rec, line._raw)
            uuid = getattr(rec, "uuid", None)
            if uuid:  # rule 1: (file, uuid), keep the first
                if uuid in seen:
                    lose(Loss("duplicate", f"uuid {uuid} already read; the first copy is kept", file, n))
                    continue
                seen.add(uuid)
            try:
                handler(self, rec, n)
            except MALFORMED as exc:
                report_malformed(self.loss, self.file, n, exc)
            unslotted = _UNSLOTTED_READ.get(kind) if keep else None
            if unslotted:
                fields, kinds = unslotted
                for loss_kind, value in zip(kinds, fields(rec)):
                    if value is not UNSET:
                        lose(Loss(loss_kind, "envelope field with no Common slot", file, n))

    def _streamed(self, keep: bool) -> Iterator[tuple[int, Line]]:
        return itertools.chain.from_iterable(self.batches(keep))

    def batches(self, keep: bool) -> Iterator[Iterable[tuple[int, Line]]]:
        """The lines of a session read as it is decoded, with their numbers, a batch at a
        time: each batch is dropped once read, and the pages of the file behind it are
        given back. For a report nobody reads, the progress lines (decoded lean) are not
        handed on at all: the reader would only skip them."""
        session = self.session
        data, session.pending = session.pending, None
        final_newline = bool(data) and data[-1] == 0x0A
        maybe_fork = False
        codec = session.codec
        if codec is CODEC:  # the records are dropped once read: toolUseResult decoded with its line
            # for a report nobody reads, progress lines lean; for a page, toolUseResult too
            codec = STREAMED_CODEC if keep else PAGE_CODEC if self.page else UNREAD_CODEC
        for first, batch in streamed_batches(data, codec, self.repaired):
            maybe_fork = maybe_fork or _may_fork(batch)
            numbered = enumerate(batch, first)
            if keep:
                yield numbered
            else:
                kinds = map(type, map(_record, batch))
                yield compress(numbered, map(operator.is_not, kinds, repeat(SkippedProgress)))
        session.final_newline = final_newline
        session.origin = claude_origin(RawLines(data), session.path, None, maybe_fork)

    def finish(self) -> Conversation:
        self.settle(self.calls.values())
        conversation = self.snapshot()
        for b in self.boundaries:  # a boundary whose summary never came
            self.lose(
                "compaction:no-summary", f"compact_boundary {b.uuid} has no following isCompactSummary record", b.line
            )
        trailing = self.trailing_context()
        if trailing is not None:
            self.messages.append(trailing)
        if self.pending_origin is not None:
            self.lose(
                "origin:unattached",
                f"attachment origin {self.pending_origin[0]!r} precedes no user message",
                self.pending_origin[1],
            )
        return conversation

    def trailing_context(self) -> Message | None:
        """The attachments after the last call, with no result to join (yet): a message of their own."""
        if not self.pending_context:
            return None
        msg = Message("user", [b for b, _ in self.pending_context], meta=True)
        msg.source_ids = [uid for _, uid in self.pending_context if uid]
        return msg

    @staticmethod
    def settle(calls: Iterable[_Call]) -> None:
        for call in calls:  # rule 4, once every fragment is read
            if call.last_usage is not None:
                if call.stopped:
                    call.message.usage = _usage(call.last_usage)
                    call.message.usage_unverified = UNSET  # a reader that carries on saw it unstopped
                else:  # kept apart: not provably the call's final count
                    call.message.usage_unverified = _usage(call.last_usage)

    def snapshot(self) -> Conversation:
        """The conversation as the lines read so far make it (no loss is reported: a
        reader that carries on takes one at every look)."""
        meta = self.meta
        meta.models = list(self.models)
        if self.first_ts is not None:
            meta.started_at = self.first_ts
            meta.ended_at = self.last_ts
        for key in ("custom-title", "agent-name", "summary"):  # docs/claude_code_reader.md#titles
            if key in self.titles:
                meta.title = self.titles[key]
                break
        # a boundary whose summary never came (yet) starts an epoch at the end
        epochs = self.epochs + [_epoch(b, self.base + len(self.messages)) for b in self.boundaries]
        return Conversation(meta=meta, messages=self.messages, epochs=epochs)

    # -- assistant -------------------------------------------------------------------
    def assistant(self, rec: AssistantRecord, n: int) -> None:
        self._envelope_meta(rec)
        m = rec.message
        key = m.id if m.id is not UNSET else f"\0line{n}"  # rule 2: (message.id, line order)
        call = self.calls.get(key)
        if call is None:
            msg = self._new_message("assistant", rec, n)
            if m.id is not UNSET:
                msg.id = m.id
            if m.model is not UNSET:
                msg.model = m.model
                if m.model == SYNTHETIC_MODEL:
                    msg.synthetic = True
                else:
                    self.models[m.model] = None
            call = self.calls[key] = _Call(msg)
        else:
            msg = call.message
            if rec.uuid:
                msg.source_ids.append(rec.uuid)
            if self.touched is not None:
                self.touched.append(msg)
        self.last_call = call
        if self.touched_calls is not None:
            self.touched_calls.append(call)
        if rec.is_api_error_message is True:
            msg.api_error = True
        if rec.is_aborted_mid_stream is True or rec.truncated_after_output is True:
            msg.interrupted = True
        if m.stop_reason is not UNSET:
            if m.stop_reason is not None:
                call.stopped = True
                msg.stop_reason = m.stop_reason
            elif msg.stop_reason is UNSET:
                msg.stop_reason = None
        if m.usage is not UNSET and m.usage is not None:
            call.last_usage = m.usage  # rule 4: the last fragment in line order
        content = m.content
        if isinstance(content, str):
            if content:
                msg.content.append(Text(content))
            return
        if content is UNSET:
            return
        out = msg.content
        for block in content:  # rule 3: the whole array
            t = type(block)
            if t is TextBlock:
                out.append(Text(block.text))
                if block.citations is not UNSET:
                    self.lose("field:citations", "text citations have no Common slot", n)
            elif t is ToolUseBlock:
                out.append(self._tool_use(block, call, n))
            elif t is ThinkingBlock:
                out.append(Thinking(block.thinking, block.signature))
            elif t is RedactedThinkingBlock:
                out.append(RedactedThinking(block.data))
            else:
                out.append(self._other_block(block, n))

    def _tool_use(self, block: ToolUseBlock, call: _Call, n: int) -> Any:
        value = _raw(block.input)
        self.owner[block.id] = call
        if block.name == "Artifact" and isinstance(value, dict) and isinstance(value.get("file_path"), str):
            # docs/claude_code_reader.md#reconstruction-rules: an Artifact call and its result are one published file
            self.artifact_calls.add(block.id)
            desc = value.get("description")
            extra = set(value) - {"file_path", "description"}
            if extra:
                self.lose("field:artifact-input", f"Artifact input keys without a slot: {sorted(extra)}", n)
            return Artifact(path=value["file_path"], description=desc if isinstance(desc, str) else UNSET)
        if block.caller is not UNSET:
            self.lose("field:caller", f"tool_use {block.id} caller has no Common slot", n)
        return ToolUse(
            id=block.id, name=block.name, input=None if value is UNSET else value, kind=tool_kind(block.name)
        )

    def _other_block(self, block: Any, n: int) -> Any:
        t = type(block)
        if t is ImageBlock:
            return _image(block)
        if t is DocumentBlock:
            if block.context is not UNSET and block.context is not None:
                self.lose("block:document-context", "a document's context has no slot in Common", n)
            return _document(block)
        if t is ServerToolUseBlock:
            # a server-side tool has no client tool_result: a block of its own, so no
            # tool_use in Common waits for a result that never comes
            value = builtins(_plain_block(block))
            found = server_block(value)
            if found is not None:
                return found
            self.lose("block:server_tool_use", "without an id or a name: kept as a raw block", n)
            return _raw_block("server_tool_use", value)
        if t is ToolReferenceBlock:
            return _raw_block("tool_reference", {"type": "tool_reference", "tool_name": block.tool_name})
        if isinstance(block, msgspec.Raw):
            value = _decode(block)
            found = server_block(value)
            if found is not None:  # web_search_tool_result, web_fetch_tool_result
                return found
            kind = value.get("type") if isinstance(value, dict) else None
            self.lose(f"block:{kind}", "unknown block type, kept as a raw block", n)
            return _raw_block(str(kind), value)
        if t is ToolResultBlock:  # a tool_result on an assistant line: keep it raw
            self.lose("block:tool_result", "tool_result on an assistant line, kept as a raw block", n)
            return _raw_block("tool_result", builtins(_plain_block(block)))
        self.lose(f"block:{type(block).__name__}", "unexpected block, kept as a raw block", n)
        return _raw_block(type(block).__name__, builtins(_plain_block(block)))

    # -- user ------------------------------------------------------------------------
    def user(self, rec: UserRecord, n: int) -> None:
        self._user(rec, n)
        if self.pending_context and self.messages and self.messages[-1].role == "user":
            last = self.messages[-1]
            for block, uid in self.pending_context:
                last.content.append(block)
                if uid:
                    last.source_ids.append(uid)
            self.pending_context = []
            if self.touched is not None:
                self.touched.append(last)

    def _user(self, rec: UserRecord, n: int) -> None:
        self._envelope_meta(rec)
        content = rec.message.content
        if isinstance(content, str):
            if self._envelope(rec, content, n):
                return
            blocks: list[Any] = [Text(content)]
            results = False
        elif content is UNSET:
            blocks, results = [], False
            self.lose("record:user", "user record without message.content", n)
        else:
            # an envelope is a string body (docs/claude_code.md#slash-commands);
            # a text block that looks like one is text
            blocks, results = self._user_blocks(rec, content, n)
            if results and not blocks:  # only Artifact results, folded into their artifacts
                return
        if results:
            owner = None
            for b in blocks:
                if type(b) is ToolResult:
                    owner = self.owner.get(b.tool_use_id)
                    break
            if owner is not None and owner is self.last_call:
                if owner.results is None:
                    owner.results = self._new_message("user", rec, n)
                    self._mark_user(owner.results, rec, n)
                else:
                    if rec.uuid:
                        owner.results.source_ids.append(rec.uuid)
                    self._mark_user(owner.results, rec, n)
                    if self.touched is not None:
                        self.touched.append(owner.results)
                owner.results.content.extend(blocks)
                return
        msg = self._new_message("user", rec, n)
        msg.content = blocks
        self._mark_user(msg, rec, n)
        if rec.is_compact_summary is True:
            self._open_epoch(msg, rec, n)

    def _mark_user(self, msg: Message, rec: UserRecord, n: int) -> None:
        if rec.is_meta is True:
            msg.meta = True
        origin = _origin_kind(rec.origin)
        if origin is not None:
            msg.origin = origin
        elif self.pending_origin is not None and msg.origin is UNSET:
            msg.origin = self.pending_origin[0]
        self.pending_origin = None
        if rec.tool_denial_kind is not UNSET:
            msg.extra["tool_denial_kind"] = rec.tool_denial_kind
        if rec.interrupted_message_id is not UNSET:
            msg.extra["interrupted_message_id"] = rec.interrupted_message_id
        for b in msg.content:
            if type(b) is Text and b.text.startswith(INTERRUPT_PREFIX):
                msg.interrupted = True
                break

    def _user_blocks(self, rec: UserRecord, content: list, n: int) -> tuple[list[Any], bool]:
        out: list[Any] = []
        results = False
        structured_used = False
        for block in content:  # rule 3: the whole array ([image, text] is not a text prompt)
            t = type(block)
            if t is ToolResultBlock:
                results = True
                result = self._tool_result(block, n)
                if not structured_used:
                    structured_used = True
                    self._structured(result, rec, n)
                if block.tool_use_id in self.artifact_calls:
                    self.lose(
                        "artifact-result",
                        f"result of Artifact call {block.tool_use_id} folded into the artifact block",
                        n,
                    )
                    continue
                out.append(result)
            elif t is TextBlock:
                out.append(Text(block.text))
            else:
                out.append(self._other_block(block, n))
        if not structured_used and rec.tool_use_result is not UNSET:
            self.lose("field:toolUseResult", "toolUseResult on a record without a tool_result", n)
        return out, results

    def _tool_result(self, block: ToolResultBlock, n: int) -> ToolResult:
        content = block.content
        if content is UNSET:
            value: Any = ""
        elif isinstance(content, str):
            value = content
        elif isinstance(content, msgspec.Raw):
            value = _raw_block("json", _decode(content))
            value = [value]
            self.lose("tool_result:content-not-blocks", "tool_result content neither string nor blocks; kept raw", n)
        else:
            value = []
            for part in content:
                t = type(part)
                if t is TextBlock:
                    value.append(Text(part.text))
                else:
                    value.append(self._other_block(part, n))
        is_error = block.is_error if isinstance(block.is_error, bool) else None  # absent = unknown
        return ToolResult(tool_use_id=block.tool_use_id, content=value, is_error=is_error)

    def _structured(self, result: ToolResult, rec: UserRecord, n: int) -> None:
        raw = rec.tool_use_result
        if type(raw) is ShownToolUseResult:  # a page's read: the object by the keys it holds of those a page shows
            raw = {key: v for name, key in SHOWN_KEYS if (v := getattr(raw, name)) is not UNSET}
        shape, value = tool_use_result_shape(raw)  # rule 5
        if shape == "absent":
            self._persisted(result, None, n)
            return
        # decoded once: the shape check's value is the value, but for JSON held in a string
        result.structured = value if shape != "json-string" else _value(rec.tool_use_result)
        if shape == "object":
            agent_id = value.get("agentId")
            if isinstance(agent_id, str):
                self.spawns.setdefault(agent_id, _Spawn(result.tool_use_id, value.get("status", UNSET), line=n))
            run_id = value.get("runId")
            if isinstance(run_id, str):
                self.runs.setdefault(run_id, _Spawn(result.tool_use_id, value.get("status", UNSET), run_id, n))
            self._persisted(result, value, n)
        else:
            self._persisted(result, None, n)

    def _persisted(self, result: ToolResult, structured: dict | None, n: int) -> None:
        """docs/claude_code_reader.md#persisted-output: the marker names a side file that may be gone."""
        content = result.content
        text = content if isinstance(content, str) else None
        if text is None or PERSISTED_TAG not in text:
            if structured is None or not isinstance(structured.get("persistedOutputPath"), str):
                return
        path = structured.get("persistedOutputPath") if structured else None
        name = Path(path).name if isinstance(path, str) else _persisted_name(text or "")
        found = self.tool_results.get(name) if name else None
        if found is None:
            self.lose("persisted-output:missing", f"side file {name or '?'} not found; the preview is kept", n)
            return
        try:
            result.persisted_output = found.read_bytes().decode("utf-8", "replace")
        except OSError as exc:
            self.lose("persisted-output:unreadable", f"{found}: {exc}", n)

    def _envelope(self, rec: Any, body: str, n: int) -> bool:
        """A command envelope (user or system/local_command line): True when consumed."""
        env = envelopes.parse_envelope(body)
        if env is None:
            return False
        if env.is_caveat_only:
            self.caveat = env.get(envelopes.CAVEAT)  # kept on the next command's message
            return True
        parent = rec.parent_uuid if isinstance(rec.parent_uuid, str) else None
        if env.is_command:
            name = env.name or ("/" + (env.get(envelopes.COMMAND_MESSAGE) or "").split(" ", 1)[0])
            cmd = Command(name=name)
            for tag, attr in _COMMAND_FIELDS:
                v = env.get(tag)
                if v is not None:
                    setattr(cmd, attr, v)
            # a layout other than the one the writer renders is kept: the model reads it as is
            if body != envelopes.render_command(
                name,
                message=cmd.message if cmd.message is not UNSET else None,
                args=cmd.args if cmd.args is not UNSET else None,
            ):
                cmd.envelope = body
            self._command_output(cmd, env, n)
            msg = self._new_message("user", rec, n)
            msg.content.append(cmd)
            if self.caveat is not None:
                msg.extra["caveat"] = self.caveat
                self.caveat = None
            if type(rec) is SystemRecord:
                msg.extra["subtype"] = "local_command"
            else:
                self._mark_user(msg, rec, n)
            if rec.uuid:
                self.commands[rec.uuid] = cmd
            return True
        if env.is_output:
            cmd = (
                self.commands.get(parent) if parent else None
            )  # paired via parentUuid (docs/claude_code.md#slash-commands)
            if cmd is None or cmd.output is not UNSET or cmd.stderr is not UNSET:
                cmd = None
            if cmd is None:
                # output with no command to pair with: carried as an unnamed command
                self.lose("envelope:unpaired-output", "command output without its command record", n)
                cmd = Command(name="")
                msg = self._new_message("user", rec, n)
                msg.content.append(cmd)
            else:
                # the output record's id joins the command's message
                for msg in reversed(self.messages):
                    if cmd in msg.content:
                        if rec.uuid:
                            msg.source_ids.append(rec.uuid)
                        if self.touched is not None:
                            self.touched.append(msg)
                        break
            self._command_output(cmd, env, n)
            if rec.uuid:
                self.commands[rec.uuid] = cmd
            return True
        return False

    def _command_output(self, cmd: Command, env: envelopes.Envelope, n: int) -> None:
        for tag, attr in ((envelopes.STDOUT, "output"), (envelopes.STDERR, "stderr")):
            v = env.get(tag)
            if v is None:
                continue
            clean = envelopes.strip_ansi(v)
            if clean != v:
                self.lose("envelope:ansi-stripped", f"terminal escape codes removed from {tag}", n)
            setattr(cmd, attr, clean)
        if env.get(envelopes.CAVEAT) is not None:
            self.lose("envelope:caveat", "local-command caveat (fixed boilerplate) dropped", n)

    # -- system ----------------------------------------------------------------------
    def system(self, rec: SystemRecord, n: int) -> None:
        self._envelope_meta(rec)
        sub = rec.subtype
        if sub == "local_command":
            content = _raw(rec.content)
            if isinstance(content, str) and self._envelope(rec, content, n):
                return
        elif sub == "compact_boundary":
            meta = _raw(rec.compact_metadata)
            self.boundaries.append(
                _PendingBoundary(
                    rec.uuid if isinstance(rec.uuid, str) else None,
                    n,
                    rec.logical_parent_uuid,
                    meta if isinstance(meta, dict) else {},
                )
            )
            return
        self.lose(f"record:system/{sub if sub is not UNSET else '?'}", "system record; Common has no slot", n)

    def _open_epoch(self, msg: Message, rec: UserRecord, n: int) -> None:
        """compact_boundary + the following isCompactSummary record form an epoch
        (docs/claude_code_reader.md#compaction): matched by id, never by timestamp."""
        msg.compact_summary = True
        parent = rec.parent_uuid
        chosen = None
        for b in self.boundaries:
            if b.uuid is not None and b.uuid == parent:
                chosen = b
                break
        if chosen is None and self.boundaries:
            chosen = self.boundaries[-1]
            self.lose(
                "compaction:unlinked-summary",
                "summary's parentUuid is not its boundary; paired with the last boundary",
                n,
            )
        if chosen is not None:
            self.boundaries.remove(chosen)
            self.epochs.append(_epoch(chosen, self.base + len(self.messages) - 1))
        else:
            self.epochs.append(Epoch(start=self.base + len(self.messages) - 1))
            self.lose("compaction:no-boundary", "isCompactSummary record without a compact_boundary", n)

    # -- attachments and titles ------------------------------------------------------
    def attachment(self, rec: AttachmentRecord, n: int) -> None:
        """An attachment is context the client adds (docs/claude_code.md#attachments): kept
        whole as a Context block, with the text the model was sent when the record says."""
        self._envelope_meta(rec)
        body = _decode(rec.attachment) if rec.attachment is not UNSET else None
        kind = body.get("type") if isinstance(body, dict) else None
        kind = kind if isinstance(kind, str) else "?"
        origin = (
            _origin_kind(msgspec.json.encode(body["origin"])) if isinstance(body, dict) and "origin" in body else None
        )
        if origin is not None:
            self.pending_origin = (
                origin,
                n,
            )  # docs/claude_code_reader.md#reconstruction-rules: origin also sits on attachment.origin
        value: dict[str, Any] = {}
        if rec.attachment is not UNSET:
            value["attachment"] = body
        rendered = _decode(rec.rendered) if rec.rendered is not UNSET else UNSET
        if rendered is not UNSET:
            value["rendered"] = rendered
        if rec.rendered_role is not UNSET:
            value["renderedRole"] = rec.rendered_role
        block = Context(kind, source=HARNESS, value=value)
        text = _rendered_text(rendered, body)
        if text is not None:
            block.text = text
            block.role = rec.rendered_role if isinstance(rec.rendered_role, str) else "user"
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "user" and not last.compact_summary:
            last.content.append(block)
            if rec.uuid:
                last.source_ids.append(rec.uuid)
            if self.touched is not None:
                self.touched.append(last)
        elif last is not None and last.role == "assistant" and any(type(b) is ToolUse for b in last.content):
            # between a call and its result: joins the result's message, so no message
            # stands between the two (docs/claude_code.md#attachments)
            self.pending_context.append((block, rec.uuid))
        else:
            msg = self._new_message("user", rec, n)
            msg.meta = True
            msg.content.append(block)

    def summary(self, rec: SummaryRecord, n: int) -> None:
        if isinstance(rec.summary, str):
            self.titles.setdefault("summary", rec.summary)  # the first summary
        else:
            self.lose("record:summary", "summary without text", n)

    def custom_title(self, rec: CustomTitleRecord, n: int) -> None:
        if isinstance(rec.custom_title, str):
            self.titles["custom-title"] = rec.custom_title  # the latest rename wins

    def agent_name(self, rec: AgentNameRecord, n: int) -> None:
        if isinstance(rec.agent_name, str):
            self.titles["agent-name"] = rec.agent_name


_COMMAND_FIELDS = (
    (envelopes.COMMAND_ARGS, "args"),
    (envelopes.COMMAND_MESSAGE, "message"),
    (envelopes.COMMAND_CONTENTS, "contents"),
)

# Fields of conversation records that Common has no slot for (counted in the loss
# report, one entry per line). Identity and structure fields (uuid, parentUuid,
# sessionId, timestamp, cwd, ...) are carried or rebuilt by a writer; the redundant
# joins (sourceToolAssistantUUID, apiBlockIndex) are implied by the assembled messages.
_ENVELOPE_UNSLOTTED = (
    ("user_type", "userType"),
    ("entrypoint", "entrypoint"),
    ("slug", "slug"),
    ("forked_from", "forkedFrom"),
    ("is_visible_in_transcript_only", "isVisibleInTranscriptOnly"),
)
_UNSLOTTED: dict[type, tuple[tuple[str, str], ...]] = {
    UserRecord: _ENVELOPE_UNSLOTTED
    + (
        ("prompt_id", "promptId"),
        ("prompt_source", "promptSource"),
        ("permission_mode", "permissionMode"),
        ("mcp_meta", "mcpMeta"),
        ("todos", "todos"),
    ),
    AssistantRecord: _ENVELOPE_UNSLOTTED
    + (
        ("request_id", "requestId"),
        ("effort", "effort"),
        ("per_turn_effort", "perTurnEffort"),
        ("attribution_agent", "attributionAgent"),
        ("attribution_skill", "attributionSkill"),
        ("attribution_mcp_server", "attributionMcpServer"),
        ("attribution_mcp_tool", "attributionMcpTool"),
        ("attribution_plugin", "attributionPlugin"),
        ("advisor_model", "advisorModel"),
        ("api_error_status", "apiErrorStatus"),
    ),
}


_UNSLOTTED[StreamedUserRecord] = _UNSLOTTED[PageUserRecord] = _UNSLOTTED[
    UserRecord
]  # the same fields, toolUseResult decoded

_fork_key = re.compile(re.escape(FORKED_FROM)).search


_record = operator.attrgetter("_record")  # a line's record, without marking it touched


def _may_fork(batch: list[Line]) -> bool:
    """Whether a line of ``batch`` can name a fork: ``origin.claude_origin`` reads the
    top-level ``forkedFrom`` of a line that holds the key. A conversation record says by
    its typed field whether it has one; any other line, by its bytes. (Instead of a scan
    of the whole file for the key.)"""
    for line in batch:
        link = getattr(line._record, "forked_from", None)
        if link is None:
            raw = line._raw
            if raw is not None and _fork_key(raw) is not None:
                return True
        elif link is not UNSET:
            return True
    return False


# per record class: its unslotted fields in one call, and the loss kind of each
_UNSLOTTED_READ = {
    cls: (operator.attrgetter(*(attr for attr, _ in fields)), tuple(f"field:{name}" for _, name in fields))
    for cls, fields in _UNSLOTTED.items()
}


@functools.cache
def _bookkeeping(kind: type) -> str:
    """The loss kind of a record the reader has no use for: ``record:<its tag>``."""
    config = getattr(kind, "__struct_config__", None)
    return f"record:{config.tag if config is not None else kind.__name__}"


_HANDLERS = {
    UserRecord: _FileReader.user,
    StreamedUserRecord: _FileReader.user,
    PageUserRecord: _FileReader.user,
    AssistantRecord: _FileReader.assistant,
    SystemRecord: _FileReader.system,
    AttachmentRecord: _FileReader.attachment,
    SummaryRecord: _FileReader.summary,
    CustomTitleRecord: _FileReader.custom_title,
    AgentNameRecord: _FileReader.agent_name,
}


def _plain_block(block: Any) -> Any:
    from ...model.native import plain

    return plain(block)


def _usage(u: Any) -> Usage:
    return Usage(
        input_tokens=u.input_tokens or 0,
        output_tokens=u.output_tokens or 0,
        cache_creation_input_tokens=u.cache_creation_input_tokens or 0,
        cache_read_input_tokens=u.cache_read_input_tokens or 0,
    )


def _rendered_text(rendered: Any, body: Any) -> str | None:
    """What the model was sent for an attachment: the ``rendered`` contents the client
    recorded (2.1.332), else a hook's own ``content`` (older clients record no rendering);
    ``None`` when the record does not say (docs/claude_code.md#attachments)."""
    if isinstance(rendered, list):
        pieces = [_text_of(part.get("content")) for part in rendered if isinstance(part, dict)]
        texts = [p for p in pieces if p]
        return "\n".join(texts) if texts else None
    if isinstance(body, dict) and body.get("type") == "hook_additional_context":
        return _text_of(body.get("content")) or None
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p if isinstance(p, str) else p.get("text", "") for p in content if isinstance(p, (str, dict)))
    return ""


def _origin_kind(raw: Any) -> str | None:
    """``origin.kind`` (an open set: human, task-notification, coordinator, peer, ...)."""
    if raw is UNSET:
        return None
    value = _decode(raw)
    if isinstance(value, dict) and isinstance(value.get("kind"), str):
        return value["kind"]
    if isinstance(value, str):
        return value
    return None


def _epoch(b: _PendingBoundary, start: int) -> Epoch:
    md = b.metadata
    preserved = md.get("preservedMessages")
    ids: list[str] = []
    if isinstance(preserved, dict):
        all_ids = preserved.get("allUuids", preserved.get("uuids"))
        if isinstance(all_ids, list):
            ids = [i for i in all_ids if isinstance(i, str)]
    trigger = md.get("trigger")
    pre = md.get("preTokens")
    return Epoch(
        start=start,
        boundary_id=b.uuid if b.uuid is not None else UNSET,
        logical_parent_id=b.logical_parent if b.logical_parent is not UNSET else UNSET,
        preserved_ids=ids,  # may name records never written (unresolved by design)
        trigger=trigger if isinstance(trigger, str) else UNSET,
        pre_tokens=pre if isinstance(pre, int) and not isinstance(pre, bool) else UNSET,
    )


def _persisted_name(text: str) -> str | None:
    marker = "tool-results/"
    i = text.find(marker)
    if i < 0:
        return None
    j = i + len(marker)
    k = j
    while k < len(text) and not text[k].isspace():
        k += 1
    return text[j:k] or None


# --- sessions with side files --------------------------------------------------------


def read_file(
    session: NativeSession,
    loss: LossReport,
    file: str | None = None,
    tool_results: dict[str, Path] | None = None,
    split_sidechains: bool = False,
    numbered: Iterable[tuple[int, Line]] | None = None,
) -> tuple[Conversation, _FileReader]:
    """One transcript file, or (``numbered``) a sidechain's lines of one."""
    name = file if file is not None else (str(session.path) if session.path else "<bytes>")
    reader = _FileReader(session, loss, name, tool_results or {}, split_sidechains)
    conversation = reader.run(numbered)
    reader.unknown.report(loss, name)
    if conversation.meta.id is UNSET and session.path is not None:
        conversation.meta.id = session.path.name.removesuffix(".jsonl")
    return conversation, reader


def read(session: NativeSession, loss: LossReport) -> Conversation:
    """The session as a Common conversation; subagents nest under ``children`` when the
    session was loaded from a path whose side files exist."""
    from .subagents import attach_children
    from .subagents import attach_sidechains

    files = None
    tool_results: dict[str, Path] = {}
    if session.path is not None:
        from .sidefiles import session_files

        files = session_files(Path(session.path))
        tool_results = {p.name: p for p in files.tool_results}
        for refused in files.refused:
            loss.add(
                "side-file:symlink-outside",
                f"{refused} is a symlink out of the session folder; not read",
                file=str(session.path),
            )
    conversation, reader = read_file(session, loss, tool_results=tool_results, split_sidechains=True)
    if reader.sidechains:
        attach_sidechains(conversation, reader, loss, read_file)
    if files is not None:
        if reader.spawns and session.path is not None:
            from .sidefiles import add_flat_agents

            for refused in add_flat_agents(Path(session.path), list(reader.spawns), files):
                loss.add(
                    "side-file:symlink-outside",
                    f"{refused} is a symlink out of the project folder; not read",
                    file=str(session.path),
                )
        attach_children(conversation, reader, files, loss, read_file)
    # a streamed session's lines are gone once read: what to_common reports of them for
    # any session is reported here, in its place
    report_lone_surrogate_lines(loss, str(session.path) if session.path is not None else None, reader.repaired)
    return conversation
