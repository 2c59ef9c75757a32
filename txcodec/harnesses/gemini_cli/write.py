"""Common conversation -> a Gemini CLI session that ``gemini --resume <sid>`` resumes.

The file is what the CLI itself writes (``chatRecordingService.ts``), without the
bookkeeping it can do without: a metadata line ``{sessionId, projectHash = sha256(cwd),
startTime, lastUpdated, kind: "main"}``, then one record per turn. Choices, each because
of what the CLI does when it resumes (``convertSessionToClientHistory``):

- an assistant turn is one ``gemini`` record: ``thoughts`` (thinking text as the
  description), ``content`` (its text), ``toolCalls[{id, name, args, result, status,
  timestamp}]``, ``tokens``, ``model``. Its content holds no ``functionCall`` part, so the
  CLI rebuilds the turn as thoughts, text, calls: a text that followed a call in the
  source moves before it (reported as ``write:reordered``);
- tool results go **only** into ``toolCalls[].result`` as ``functionResponse`` parts
  (``{"output": text}``, or ``{"error": text}`` with status ``error``). The CLI also records
  each result as a separate user record, and resumes with both copies; we don't;
- ``args`` must be an object: anything else is wrapped as ``{"input": value}``;
- a call without a result gets a cancelled one (the API rejects a call that is not
  answered in the next turn); a result whose call is unknown becomes user text;
- a user turn that starts with ``/``, ``?``, ``<session_context>`` or ``<hook_context>`` is
  skipped by the CLI on resume, and so is a last user turn no reply follows: it is
  written, and reported as ``write:hidden-by-client``.

``Written.files`` (relative to the ``~/.gemini`` root): the chat file
``tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<sid8>.jsonl``, ``tmp/<slug>/.project_root``
(the cwd) and ``projects.json`` (this project's registration). Install them with
:func:`txcodec.harnesses.gemini_cli.store.install`, which merges the registration into an
existing store instead of replacing it.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime
from datetime import timezone
from typing import Any

import msgspec
from msgspec import UNSET

from ...core.dates import parse_timestamp
from ...core.ids import check_id
from ...core.ids import checked_cwd
from ...core.ids import derive_uuid
from ...core.ids import is_safe_id
from ...core.ids import safe_relpath
from ...core.ids import shown
from ...core.ids import source_cwd
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...kit.write import block_kind
from ...model.common import Artifact
from ...model.common import Command
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Image
from ...model.common import Message
from ...model.common import RawBlock
from ...model.common import RedactedThinking
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from ...model.native import builtins
from .records import Blob
from .records import FileData
from .records import FunctionResponse
from .records import MessageRecord
from .records import Metadata
from .records import Part
from .records import Thought
from .records import Tokens
from .records import ToolCall
from .store import MARKER
from .store import REGISTRY
from .store import project_hash
from .store import session_file_name
from .store import slugify

_NS = uuid.UUID("6f1e0d1c-56a5-4a55-9d47-0b1f6f9a2c11")
_HIDDEN = ("/", "?", "<session_context>", "<hook_context>")
DEFAULT_CWD = "/tmp/txcodec-project"
_encoder = msgspec.json.Encoder()


def write(conversation: Conversation, loss: LossReport, options: WriteOptions | None = None) -> Written:
    options = options or WriteOptions()
    meta = conversation.meta
    session_id = check_id(options.session_id, "session id") if options.session_id else _source_id(meta.id, loss)
    session_id = session_id or derive_uuid(_NS, _encoder.encode(conversation).hex()[:4096])
    cwd = checked_cwd(options.cwd) or source_cwd(meta.cwd, loss)
    if cwd is None:
        cwd = DEFAULT_CWD
        loss.add("write:cwd", f"the conversation has no cwd; wrote it for {cwd} (pass a cwd)")
    cwd = os.path.abspath(cwd)
    start = _iso(meta.started_at) or _first_timestamp(conversation) or _iso_now()
    records = _Builder(session_id, start, loss).build(conversation.messages)
    last = _iso(meta.ended_at) or (records[-1].timestamp if records else start)
    header = Metadata(
        session_id=session_id, project_hash=project_hash(cwd), start_time=start, last_updated=last, kind="main"
    )
    if isinstance(meta.title, str) and meta.title:
        header.summary = meta.title
    if conversation.epochs:
        loss.add(
            "write:compaction", f"{len(conversation.epochs)} compaction epoch(s) flattened: summaries kept as text"
        )
    if records and getattr(records[-1], "type", None) == "user":
        # observed (the pi compaction scenario, whose file ends with a summary): the CLI
        # resumes without a last user turn that no reply followed
        loss.add("write:hidden-by-client", "the CLI does not resend the last user turn: no reply follows it")
    loss.children_not_written(conversation.children, "write:subagent", "not written (main chat only)")
    lines = [_encoder.encode(header)] + [_encoder.encode(r) for r in records]
    slug = slugify(cwd)
    chat = safe_relpath(f"tmp/{slug}/chats/{session_file_name(session_id, start)}")
    registry = json.dumps({"projects": {cwd: slug}}, indent=2, ensure_ascii=False)
    return Written(
        session_id,
        {
            chat: b"\n".join(lines) + b"\n",
            f"tmp/{slug}/{MARKER}": cwd.encode("utf-8"),
            REGISTRY: registry.encode("utf-8"),
        },
    )


def _source_id(value: Any, loss: LossReport) -> str | None:
    """The source's id when it can name the chat file, else a UUIDv5 made from it
    (reported); ``None`` when the source has none."""
    if not isinstance(value, str) or not value:
        return None
    if is_safe_id(value):
        return value
    derived = derive_uuid(_NS, value)
    loss.add("write:session-id", f"source id {shown(value)} cannot name a file; written as {derived}")
    return derived


class _Builder:
    def __init__(self, session_id: str, start: str, loss: LossReport) -> None:
        self.session_id, self.start, self.loss = session_id, start, loss
        self.records: list[MessageRecord] = []
        self.calls: dict[str, ToolCall] = {}  # unanswered calls by id
        self.count = 0

    def new_id(self) -> str:
        self.count += 1
        return derive_uuid(_NS, f"{self.session_id}/{self.count}")

    def build(self, messages: list[Message]) -> list[MessageRecord]:
        for index, message in enumerate(messages):
            (self.assistant if message.role == "assistant" else self.user)(message, index)
        for call in self.calls.values():
            self._cancel(call)
        return self.records

    def _stamp(self, message: Message) -> str:
        return _iso(message.timestamp) or (self.records[-1].timestamp if self.records else self.start)

    def assistant(self, message: Message, index: int) -> None:
        for call in self.calls.values():
            self._cancel(call)  # unanswered by the user turn in between
        self.calls = {}
        stamp = self._stamp(message)
        thoughts: list[Thought] = []
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content:
            if isinstance(block, Thinking):
                if block.thinking:
                    thoughts.append(Thought(subject="", description=block.thinking, timestamp=stamp))
                    if isinstance(block.signature, str) or isinstance(block.encrypted, str):
                        self.loss.add("write:thinking-signature", "a thought has no signature field", line=index + 1)
                else:
                    self.loss.add(
                        "write:thinking", "thinking without text (signature/encrypted only) dropped", line=index + 1
                    )
            elif isinstance(block, RedactedThinking):
                self.loss.add(
                    "write:redacted-thinking",
                    "redacted (encrypted) thinking has no place in a Gemini turn; dropped",
                    line=index + 1,
                )
            elif isinstance(block, Text):
                if calls:
                    self.loss.add("write:reordered", "text after a tool call moved before the calls", line=index + 1)
                texts.append(block.text)
            elif isinstance(block, ToolUse):
                args = block.input
                if not isinstance(args, dict):
                    self.loss.add("write:wrapped-input", f"tool {block.name} input is not an object", line=index + 1)
                    args = {"input": args}
                call = ToolCall(
                    id=block.id or self.new_id(), name=block.name, args=args, status="success", timestamp=stamp
                )
                calls.append(call)
                self.calls[call.id] = call
            else:
                texts.append(self._fallback_text(block, index))
        record = MessageRecord(
            id=self.new_id(),
            timestamp=stamp,
            type="gemini",
            content="\n\n".join(t for t in texts if t) if texts else "",
            thoughts=thoughts,
        )
        if calls:
            record.tool_calls = calls
        if message.usage is not UNSET:
            u = message.usage
            reasoning = u.reasoning_output_tokens if u.reasoning_output_tokens is not UNSET else 0
            tokens = Tokens(
                input=u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
                output=max(u.output_tokens - reasoning, 0),
                cached=u.cache_read_input_tokens,
                thoughts=reasoning,
                tool=0,
            )
            tokens.total = tokens.input + tokens.output + reasoning
            record.tokens = tokens
        if isinstance(message.model, str):
            record.model = message.model
        self.records.append(record)

    def user(self, message: Message, index: int) -> None:
        parts: list[Part] = []
        for block in message.content:
            if isinstance(block, ToolResult):
                call = self.calls.pop(block.tool_use_id, None)
                if call is not None:
                    call.result, call.status = self._result(call, block, index)
                    continue
                self.loss.add(
                    "write:orphan-result",
                    f"result for unknown call {block.tool_use_id} written as text",
                    line=index + 1,
                )
                parts.append(Part(text=f"[tool result {block.tool_use_id}]\n{_result_text(block.content)}"))
            elif isinstance(block, Text):
                parts.append(Part(text=block.text))
            elif isinstance(block, (Image, Document)) and isinstance(block.data, str):
                self._title_lost(block, index)
                parts.append(
                    Part(inline_data=Blob(mime_type=block.media_type or "application/octet-stream", data=block.data))
                )
            elif isinstance(block, (Image, Document)) and isinstance(block.url, str):
                self._title_lost(block, index)
                parts.append(
                    Part(
                        file_data=FileData(mime_type=block.media_type or "application/octet-stream", file_uri=block.url)
                    )
                )
            else:
                parts.append(Part(text=self._fallback_text(block, index)))
        if not parts:
            return
        text = "".join(p.text for p in parts if isinstance(p.text, str)).strip()
        if not text and all(p.text is not UNSET for p in parts):
            return  # the CLI drops an empty user turn anyway
        if text.startswith(_HIDDEN):
            self.loss.add(
                "write:hidden-by-client", f"the CLI does not resend a user turn starting {text[:20]!r}", line=index + 1
            )
        self.records.append(MessageRecord(id=self.new_id(), timestamp=self._stamp(message), type="user", content=parts))

    def _result(self, call: ToolCall, block: ToolResult, index: int) -> tuple[list[Part], str]:
        text = _result_text(block.content)
        key = "error" if block.is_error else "output"
        parts = [Part(function_response=FunctionResponse(id=call.id, name=call.name, response={key: text}))]
        if isinstance(block.content, list):
            for inner in block.content:
                if isinstance(inner, (Image, Document)) and isinstance(inner.data, str):
                    parts.append(
                        Part(
                            inline_data=Blob(mime_type=inner.media_type or "application/octet-stream", data=inner.data)
                        )
                    )
                elif not isinstance(inner, Text):
                    self.loss.add(
                        "write:result-block",
                        f"a {type(inner).__name__} inside a tool result became text",
                        line=index + 1,
                    )
        return parts, "error" if block.is_error else "success"

    def _cancel(self, call: ToolCall) -> None:
        if call.result is UNSET:
            self.loss.add("write:synthetic-result", f"call {call.id} ({call.name}) had no result: marked cancelled")
            call.result = [
                Part(
                    function_response=FunctionResponse(
                        id=call.id,
                        name=call.name,
                        response={"error": "[Tool call interrupted: no result was recorded]"},
                    )
                )
            ]
            call.status = "cancelled"

    def _title_lost(self, block: Any, index: int) -> None:
        if isinstance(block, Document) and isinstance(block.title, str):
            self.loss.add(
                "write:document-title", f"document title {block.title!r}: Gemini parts have no title", line=index + 1
            )

    def _fallback_text(self, block: Any, index: int) -> str:
        if isinstance(block, Command):
            text = block.as_text()
        elif isinstance(block, Artifact):
            text = f"[artifact {block.path}]"
        elif isinstance(block, RawBlock):
            text = json.dumps(block.value, ensure_ascii=False)
        elif isinstance(block, (Image, Document)):
            text = f"[{type(block).__name__}]"
        elif isinstance(block, ToolResult):
            text = _result_text(block.content)
        else:  # a server tool's call or result: its JSON, as the other writers do
            text = json.dumps(builtins(block), ensure_ascii=False)
        self.loss.add(
            f"write:block:{block_kind(block)}", "a block Gemini has no part for, written as text", line=index + 1
        )
        return text


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if isinstance(block, Text):
            out.append(block.text)
        elif isinstance(block, (Image, Document)):
            out.append(f"[{block.type}]" if hasattr(block, "type") else "[attachment]")
        else:
            out.append(json.dumps(builtins(block), ensure_ascii=False))
    return "\n".join(out)


def _iso(value: Any) -> str | None:
    """A timestamp as the CLI writes it (``toISOString``: ``YYYY-MM-DDTHH:MM:SS.mmmZ``)."""
    moment = parse_timestamp(value) if isinstance(value, str) else None  # in UTC, a zoneless time taken as UTC
    if moment is None:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _iso_now() -> str:
    return _iso(datetime.now(timezone.utc).isoformat()) or ""


def _first_timestamp(conversation: Conversation) -> str | None:
    for message in conversation.messages:
        stamp = _iso(message.timestamp)
        if stamp:
            return stamp
    return None
