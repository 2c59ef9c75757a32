"""Common -> Claude Code: a session file that the real ``claude --resume`` loads.

The layout is the one Claude Code 2.1.332 writes itself (docs/claude_code.md#how-the-real-client-is-driven):

- one ``user``/``assistant`` record per line, chained by ``parentUuid``; an assistant
  message is written as one record per content block, all with the same ``message.id``
  (the CLI merges them back into one message when it resumes);
- each ``tool_result`` is its own user record whose ``parentUuid`` is the record of its
  own ``tool_use``; the next record hangs off the last result;
- entry ids are UUIDv5 in one fixed namespace, named from the session id and the entry's
  position, so the same conversation always gives the same bytes;
- every conversation line carries ``sessionId``, ``timestamp``, ``cwd``, ``gitBranch``,
  ``version``, ``isSidechain``, ``userType`` and ``entrypoint``;
- a ``summary`` line (first) and a ``custom-title`` line when there is a title, and a
  closing ``last-prompt`` record, all naming the leaf: the last user/assistant record;
- slash commands as ``system``/``local_command`` records holding envelope markup (the
  newer CLIs' shape, docs/claude_code.md#slash-commands), escaped so a payload cannot forge or cut an envelope;
- compaction epochs as a ``compact_boundary`` record (a new root, ``logicalParentUuid``
  naming the last pre-compaction record) followed by the ``isCompactSummary`` message;
- subagents as ``<sid>/subagents/agent-<id>.jsonl`` + ``.meta.json``.

What the Messages API would reject is changed so that it accepts the request, and each
change is recorded in the loss report (``write:*`` kinds): non-object tool inputs are
wrapped as ``{"input": value}``, tool ids the API does not take are renamed (calls
and results alike), tool_result content that is not a string or a valid
block list is flattened to text, thinking without a signature is dropped, a tool_use
without a result gets an ``is_error`` result, a result without its call becomes text,
and blocks the API has no type for become text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Collection

import msgspec
from msgspec import UNSET

from ...core.ids import check_uuid
from ...core.ids import derive_uuid
from ...core.ids import is_safe_id
from ...core.ids import is_uuid
from ...core.ids import safe_relpath
from ...core.ids import shown
from ...core.ids import uuid_namer
from ...kit.changes import to_json
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Artifact
from ...model.common import Block
from ...model.common import Child
from ...model.common import Command
from ...model.common import Context
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Epoch
from ...model.common import Image
from ...model.common import Message
from ...model.common import RawBlock
from ...model.common import RedactedThinking
from ...model.common import ServerToolUse
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import WebFetchToolResult
from ...model.common import WebSearchToolResult
from ...model.loss import LossReport
from ...model.native import builtins
from .envelopes import parse_envelope
from .envelopes import render_caveat
from .envelopes import render_command
from .envelopes import render_output
from .store import munge_cwd

# One fixed namespace for every id this writer makes (never change it: ids would move).
NAMESPACE = uuid.UUID("5d3c1e0a-7f3b-5b8e-9c44-2f0a6c1d7e91")
# The client version this writer's output was tested against (real-client tests).
TESTED_VERSION = "2.1.332"
# ids are matched whole (fullmatch): "$" would accept a final newline into a file name
_AGENT_ID = re.compile(r"a[0-9a-f]{16}")
# The ids the Messages API takes for tool_use (its 400: "tool_use.id: String should match
# pattern '^[a-zA-Z0-9_-]+$'", anomalyco/opencode#1279).
_API_TOOL_ID = re.compile(r"[a-zA-Z0-9_-]+")
_EPOCH_TS = "1970-01-01T00:00:00.000Z"
MISSING_RESULT = "[Tool result missing: the source recorded no result for this call]"
# Block types that may sit in a tool_result's content list.
_RESULT_PART_TYPES = {"text", "image", "document", "search_result", "tool_reference"}
# RawBlocks the API takes as they are (they carry their own integrity data).
_PASS_THROUGH = {"assistant": {"redacted_thinking"}, "user": set()}


def entry_id(session_id: str, position: str) -> str:
    return derive_uuid(NAMESPACE, f"{session_id}/{position}")


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    """The caller's id (a UUID, else :class:`UnsafeId`), the source's when it is a UUID,
    else a UUIDv5 derived from the source's id or from the conversation. A source id that
    could not even name a file (``../x``, ``$(cmd)``) is reported; a plain non-UUID is the
    usual case of another harness's ids and is not."""
    if options.session_id:
        return check_uuid(options.session_id, why="Claude Code only resumes UUIDs")
    source = conversation.meta.id
    if is_uuid(source):
        return source.lower()
    name = source if isinstance(source, str) else hashlib.sha256(to_json(conversation)).hexdigest()
    derived = derive_uuid(NAMESPACE, f"session:{name}")
    if isinstance(source, str) and not is_safe_id(source) and loss is not None:
        loss.add("write:session-id", f"source id {shown(source)} cannot name a file; written as {derived}")
    return derived


def api_tool_id(tool_id: str) -> str:
    """``tool_id`` when the API takes it, else a stable ``toolu_`` id made from it (the
    same for the call and its results, so the pair stays a pair)."""
    if not tool_id or _API_TOOL_ID.fullmatch(tool_id):
        return tool_id
    return "toolu_" + derive_uuid(NAMESPACE, f"tool-id:{tool_id}").replace("-", "")[:24]


# Whether the writer takes its shortcut for plain tool results (Writer.plain_results);
# the differential tests turn it off for their reference.
PLAIN_RESULTS = True

_fast_json = msgspec.json.Encoder().encode
_fast_lines = msgspec.json.Encoder().encode_lines
_fast_pack = msgspec.msgpack.Encoder().encode


def dumps(value: Any) -> bytes:
    """Compact JSON as ``JSON.stringify`` writes it: non-ASCII raw, lone surrogates
    escaped (they cannot be UTF-8).

    The bytes are ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``'s
    (the goldens hold them). msgspec writes the same bytes several times faster for
    everything but floats (it spells exponents and NaN differently), so it writes a
    value whose MessagePack form has no float marker (0xCB: msgspec packs every float
    as float64; the byte inside a string only costs the slow path); anything msgspec
    refuses (a lone surrogate, an int past 64 bits) takes the slow path too."""
    try:
        if b"\xcb" not in _fast_pack(value):
            return _fast_json(value)
    except Exception:  # noqa: BLE001 - the slow path below is the reference and decides
        pass
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")  # fails exactly when a lone surrogate is there
    except UnicodeEncodeError:
        text = re.sub(r"[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)
        return text.encode("utf-8")


def dumps_lines(lines: list[Any], loose: Collection[int] = ()) -> bytes:
    """``dumps(line) + b"\\n"`` for every line, joined. Only the lines whose index is in
    ``loose`` may hold a float (a source's free-form value: a tool input, a structured
    result, a raw block); the others hold Common's typed strings, ints and bools. So only
    the loose lines get the float check, and when none has a float (the usual case)
    msgspec writes every line in one call. A line with a float, and any run that msgspec
    refuses (a lone surrogate), is written by :func:`dumps`."""
    careful = sorted(index for index in loose if not _float_free(lines[index]))
    if not careful:
        return _plain_lines(lines)
    pieces: list[bytes] = []
    start = 0
    for index in careful:
        pieces.append(_plain_lines(lines[start:index]))
        pieces.append(dumps(lines[index]) + b"\n")
        start = index + 1
    pieces.append(_plain_lines(lines[start:]))
    return b"".join(pieces)


def _float_free(value: Any) -> bool:
    try:
        return b"\xcb" not in _fast_pack(value)  # the float check of dumps()
    except Exception:  # noqa: BLE001 - dumps() decides
        return False


def _plain_lines(lines: list[Any]) -> bytes:
    try:
        return _fast_lines(lines)
    except Exception:  # noqa: BLE001 - dumps() decides, line by line
        return b"".join(dumps(line) + b"\n" for line in lines)


# --- one stream (main or subagent) --------------------------------------------------


@dataclass
class _Stream:
    sid: str
    cwd: str
    branch: str
    version: str
    entrypoint: str
    loss: LossReport
    file: str
    agent_id: str | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)
    tail: str | None = None  # the uuid the next record hangs off
    leaf: str | None = None  # the last user/assistant record
    last_prompt: str | None = None
    timestamp: str = _EPOCH_TS
    tool_records: dict[str, str] = field(default_factory=dict)  # tool_use id -> record uuid
    open_calls: set[str] = field(default_factory=set)  # calls the next user message may answer
    calls: list[str] = field(default_factory=list)  # the last assistant message's calls, in order
    records: list[str] = field(default_factory=list)  # every record written, for the message being written
    counter: int = 0
    forked_from: dict[str, Any] | None = None  # the session's fork link, on its conversation records
    loose: set[int] = field(default_factory=set)  # the lines that may hold a float (see dumps_lines)

    def __post_init__(self) -> None:
        # entry ids are entry_id(sid, "<scope>/<n>"): the common prefix is hashed once
        scope = f"agent-{self.agent_id}" if self.agent_id else "main"
        self.named = uuid_namer(NAMESPACE, f"{self.sid}/{scope}/")
        self.file_named = uuid_namer(NAMESPACE, f"{self.sid}/{self.file}/")
        # what every record ends with, in the order the CLI writes it
        self.closing = {
            "userType": "external",
            "entrypoint": self.entrypoint,
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": self.branch,
        }

    def new_id(self) -> str:
        self.counter += 1
        return self.named(str(self.counter))

    def envelope(self, kind: str, parent: str | None) -> dict[str, Any]:
        if self.agent_id is None:
            return {"parentUuid": parent, "isSidechain": False, "type": kind}
        record: dict[str, Any] = {"parentUuid": parent, "isSidechain": True}
        if self.agent_id:
            record["agentId"] = self.agent_id
        record["type"] = kind
        return record

    def finish(self, record: dict[str, Any], uid: str, loose: bool) -> None:
        record["uuid"] = uid
        record["timestamp"] = self.timestamp
        record.update(self.closing)
        if loose:
            self.loose.add(len(self.lines))
        self.lines.append(record)
        self.records.append(uid)

    def conversation_record(
        self,
        role: str,
        message: dict[str, Any],
        parent: str | None,
        top: dict[str, Any] | None = None,
        loose: bool = False,
    ) -> str:
        """A user/assistant record; ``loose`` when ``message`` or ``top`` may hold a
        float (a source's free-form value that failed the float check: see
        :func:`dumps_lines`). :meth:`new_id` and the main-chain :meth:`envelope` inline:
        this runs once per record."""
        self.counter += 1
        uid = self.named(str(self.counter))
        if self.agent_id is None:
            record: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "type": role, "message": message}
        else:
            record = self.envelope(role, parent)
            record["message"] = message
        if top:
            for key, value in top.items():
                if value is not UNSET and value is not None:
                    record[key] = value
        if self.forked_from is not None:
            record["forkedFrom"] = self.forked_from
        self.finish(record, uid, loose)
        self.tail = self.leaf = uid
        return uid

    def system_record(self, subtype: str, parent: str | None, **fields: Any) -> str:
        uid = self.new_id()
        record = self.envelope("system", parent)
        record["subtype"] = subtype
        record.update(fields)
        self.finish(record, uid, True)  # rare: every one takes the careful path
        self.tail = uid
        return uid


# --- blocks -------------------------------------------------------------------------


def _flatten(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _media_block(block: Image | Document, kind: str) -> dict[str, Any] | None:
    if isinstance(block, Image) and block.file_id is not UNSET:
        return {"type": kind, "source": {"type": "file", "file_id": block.file_id}}
    if block.data is not UNSET:
        media = (
            block.media_type if block.media_type is not UNSET else ("text/plain" if kind == "document" else "image/png")
        )
        source_type = "text" if media == "text/plain" else "base64"
        out: dict[str, Any] = {"type": kind, "source": {"type": source_type, "media_type": media, "data": block.data}}
    elif block.url is not UNSET:
        out = {"type": kind, "source": {"type": "url", "url": block.url}}
    else:
        return None
    if kind == "document" and isinstance(block, Document) and block.title is not UNSET:
        out["title"] = block.title
    return out


def _result_content(result: ToolResult, loss: LossReport, where: str) -> str | list[dict[str, Any]]:
    content = result.content
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, Text):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, (Image, Document)):
            media = _media_block(block, block.__struct_config__.tag)
            if media is None:
                loss.add("write:empty-media", f"{where}: a {block.__struct_config__.tag} without data", file=where)
                parts.append({"type": "text", "text": f"[{block.__struct_config__.tag} without data]"})
            else:
                parts.append(media)
        elif isinstance(block, RawBlock) and block.source_type in _RESULT_PART_TYPES and isinstance(block.value, dict):
            parts.append(block.value)
        else:
            loss.add(
                "write:result-part-as-text",
                f"{where}: a {_tag(block)} block inside a tool result became text",
                file=where,
            )
            parts.append({"type": "text", "text": _flatten(_plain(block))})
    return parts


def _plain(block: Any) -> Any:
    if isinstance(block, RawBlock):
        return block.value

    return builtins(block)


def _tag(block: Any) -> str:
    if isinstance(block, RawBlock):
        return block.source_type
    return block.__struct_config__.tag


def _tool_input(block: ToolUse, loss: LossReport, where: str) -> dict[str, Any]:
    if isinstance(block.input, dict):
        return block.input
    loss.add(
        "write:wrapped-input",
        f'{where}: {block.name} input was {type(block.input).__name__}, wrapped as {{"input": ...}}',
        file=where,
    )
    return {"input": block.input}


# --- the writer ---------------------------------------------------------------------


@dataclass
class _Writer:
    conversation: Conversation
    loss: LossReport
    sid: str
    cwd: str
    root_rel: str  # the project folder, relative to the projects root
    files: dict[str, bytes] = field(default_factory=dict)
    artifacts: int = 0

    def stream(self, conversation: Conversation, file: str, agent_id: str | None) -> _Stream:
        meta = conversation.meta
        native = meta.source_harness == "claude_code"
        version = meta.client_version if native and meta.client_version is not UNSET else TESTED_VERSION
        entrypoint = meta.extra.get("entrypoint") if isinstance(meta.extra.get("entrypoint"), str) else "cli"
        return _Stream(
            sid=self.sid,
            cwd=self.cwd,
            branch=meta.git_branch if meta.git_branch is not UNSET else "HEAD",
            version=version,
            entrypoint=entrypoint,
            loss=self.loss,
            file=file,
            agent_id=agent_id,
            timestamp=meta.started_at if meta.started_at is not UNSET else _EPOCH_TS,
            forked_from=_fork_link(meta, self.sid) if agent_id is None else None,
        )

    def write_messages(self, conversation: Conversation, s: _Stream) -> None:
        messages = conversation.messages
        epochs = {e.start: e for e in conversation.epochs}
        written: list[list[str]] = []  # message index -> the records written for it
        deferred: list[str] = []  # unanswered calls whose added results join the next message
        for index, message in enumerate(messages):
            if message.timestamp is not UNSET:
                s.timestamp = message.timestamp
            where = f"{s.file}#message{index}"
            s.records = []
            boundary = self.boundary(epochs[index], s) if index in epochs else None
            if message.role == "assistant":
                self.assistant(message, s, where)
                s.calls = [b.id for b in message.content if isinstance(b, ToolUse)]
                following = messages[index + 1] if index + 1 < len(messages) else None
                missing = _unanswered(s.calls, following)
                if missing and following is not None and following.role == "user":
                    # results a source split over several messages (Qwen Code writes a record per
                    # parallel result): the run of result-only messages after the first answers too
                    later = index + 2
                    while missing and later < len(messages) and later not in epochs and _results_only(messages[later]):
                        missing = _unanswered(missing, messages[later])
                        later += 1
                s.open_calls = set(s.calls) - set(missing)
                for tool_id in missing:
                    self.loss.add(
                        "write:missing-tool-result",
                        f"{where}: tool_use {tool_id} had no result; an is_error result was added",
                        file=s.file,
                    )
                if following is not None and following.role == "user" and index + 1 not in epochs:
                    deferred = missing  # written with that message's results, in call order
                else:
                    self.missing_results(missing, s)
            else:
                if deferred or not self.plain_results(message, s):
                    self.user(message, s, where, deferred)
                deferred = []
                following = messages[index + 1] if index + 1 < len(messages) else None
                if following is None or index + 1 in epochs or not _results_only(following):
                    s.open_calls = set()
                else:  # the calls still open are answered by the next message
                    s.open_calls -= {b.tool_use_id for b in message.content if isinstance(b, ToolResult)}
            written.append(s.records)
            if boundary is not None:
                self.relink(epochs[index], boundary, written, messages, s)

    def relink(
        self, epoch: Epoch, boundary: dict[str, Any], written: list[list[str]], messages: list[Message], s: _Stream
    ) -> None:
        """Name the preserved messages' records in the boundary, as the CLI does
        (``compactMetadata.preservedMessages``: on resume, 2.1.332 chains them after
        the ``anchorUuid`` record, the summary, and hangs the later turns off the last)."""
        wanted = set(epoch.preserved_ids)
        if not wanted:
            return
        found: set[str] = set()
        uuids: list[str] = []
        for index in range(min(epoch.start, len(written))):
            hit = wanted.intersection(messages[index].source_ids)
            if hit and written[index]:
                found |= hit
                uuids.extend(written[index])
        if wanted - found:
            self.loss.add(
                "write:preserved-unresolved",
                f"{len(wanted - found)} preserved message ids name no message written before the boundary; left out",
                file=s.file,
            )
        if uuids and s.tail is not None:
            boundary["compactMetadata"]["preservedMessages"] = {"anchorUuid": s.tail, "uuids": uuids}

    # compaction: the boundary is a new root; the summary hangs off it
    def boundary(self, epoch: Epoch, s: _Stream) -> dict[str, Any]:
        metadata: dict[str, Any] = {"trigger": epoch.trigger if epoch.trigger is not UNSET else "manual"}
        if epoch.pre_tokens is not UNSET:
            metadata["preTokens"] = epoch.pre_tokens
        s.system_record(
            "compact_boundary",
            None,
            content="Conversation compacted",
            level="info",
            isMeta=False,
            compactMetadata=metadata,
            logicalParentUuid=s.tail,
        )
        return s.lines[-1]

    def assistant(self, message: Message, s: _Stream, where: str) -> None:
        # entry_id(s.sid, f"{s.file}/{where}/message"), from the stream's hashed prefix
        msg_id = (
            message.id if message.id is not UNSET else "msg_" + s.file_named(f"{where}/message").replace("-", "")[:24]
        )
        blocks: list[dict[str, Any]] = []
        artifact_results: list[tuple[str, Artifact]] = []
        for i, block in enumerate(message.content):
            # the usual blocks, as assistant_block writes them
            kind = type(block)
            if kind is Text and block.text:
                blocks.append({"type": "text", "text": block.text})
                continue
            if (
                kind is ToolUse
                and block.name
                and type(block.input) is dict
                and block.id
                and _API_TOOL_ID.fullmatch(block.id)
            ):
                blocks.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
                continue
            converted = self.assistant_block(block, s, f"{where}.{i}")
            if converted is None:
                continue
            if isinstance(block, Artifact):
                artifact_results.append((converted["id"], block))
            blocks.append(converted)
        if not blocks:
            self.loss.add(
                "write:empty-message",
                f"{where}: an assistant message with nothing the API accepts; left out",
                file=s.file,
            )
            return
        body: dict[str, Any] = {"id": msg_id, "type": "message", "role": "assistant"}
        model = message.model if message.model is not UNSET else ("<synthetic>" if message.synthetic else UNSET)
        if model is not UNSET:
            body["model"] = model
        stop = message.stop_reason
        usage = _usage(message)
        top: dict[str, Any] = {"isApiErrorMessage": True} if message.api_error else {}
        for block in blocks:
            record_body = body.copy()
            record_body["content"] = [block]
            if stop is not UNSET:
                record_body["stop_reason"] = stop
                record_body["stop_sequence"] = None
            if usage is not None:
                record_body["usage"] = usage
            # a tool input, or a raw block passed through, is the source's own value
            kind = block["type"]
            loose = kind not in ("text", "thinking") and not (kind == "tool_use" and _float_free(block["input"]))
            uid = s.conversation_record("assistant", record_body, s.tail, top, loose)
            if block["type"] == "tool_use":
                s.tool_records[block["id"]] = uid
        for tool_id, _artifact in artifact_results:
            published = next(b["input"]["file_path"] for b in blocks if b.get("id") == tool_id)
            s.conversation_record(
                "user",
                {
                    "role": "user",
                    "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": f"Published {published}"}],
                },
                s.tool_records.get(tool_id, s.tail),
                {"sourceToolAssistantUUID": s.tool_records.get(tool_id)},
            )

    def assistant_block(self, block: Block, s: _Stream, where: str) -> dict[str, Any] | None:
        if isinstance(block, Text):
            if not block.text:
                self.loss.add("write:empty-text", f"{where}: empty text block left out", file=s.file)
                return None
            return {"type": "text", "text": block.text}
        if isinstance(block, Thinking):
            if block.signature is UNSET:
                self.loss.add(
                    "write:thinking-without-signature",
                    f"{where}: thinking without a signature left out ({len(block.thinking)} chars)",
                    file=s.file,
                )
                return None
            return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
        if isinstance(block, RedactedThinking):  # back to the API as it was
            return {"type": "redacted_thinking", "data": block.data}
        if isinstance(block, ToolUse):
            tool_id, name = api_tool_id(block.id), block.name
            if tool_id != block.id:
                self.loss.add(
                    "write:tool-id",
                    f"{where}: tool id {block.id!r} is not one the API takes; written as {tool_id} (its results too)",
                    file=s.file,
                )
            if not tool_id or not name:  # the API requires both
                self.loss.add(
                    "write:tool-use-named", f"{where}: a tool_use without an id or a name got one", file=s.file
                )
                tool_id = tool_id or "toolu_" + entry_id(s.sid, f"{where}/id").replace("-", "")[:24]
                name = name or "unnamed_tool"
            return {"type": "tool_use", "id": tool_id, "name": name, "input": _tool_input(block, self.loss, where)}
        if isinstance(block, Artifact):
            return self.artifact(block, s, where)
        if isinstance(block, (ServerToolUse, WebSearchToolResult, WebFetchToolResult)):  # the API's own blocks
            return block.api_block()
        if (
            isinstance(block, RawBlock)
            and block.source_type in _PASS_THROUGH["assistant"]
            and isinstance(block.value, dict)
        ):
            return block.value
        return self.as_text(block, s, where)

    def as_text(self, block: Block, s: _Stream, where: str) -> dict[str, Any] | None:
        if isinstance(block, (Image, Document)):
            media = _media_block(block, _tag(block))
            if media is not None:
                return media
        self.loss.add(
            "write:block-as-text",
            f"{where}: a {_tag(block)} block the API has no place for here became text",
            file=s.file,
        )
        return {"type": "text", "text": f"[{_tag(block)}] {_flatten(_plain(block))}"}

    def artifact(self, block: Artifact, s: _Stream, where: str) -> dict[str, Any]:
        path = block.path
        if block.data is not UNSET:
            try:
                data = base64.b64decode(block.data, validate=True)
            except (binascii.Error, ValueError):
                self.loss.add(
                    "write:artifact-bad-data",
                    f"{where}: artifact {block.path!r} data is not base64; not materialized",
                    file=s.file,
                )
            else:
                self.artifacts += 1
                rel = f"{s.sid}/artifacts/{self.artifacts:03d}-{_safe_name(block.path)}"
                self.files[f"{self.root_rel}/{rel}"] = data
                path = rel
        tool_input: dict[str, Any] = {"file_path": path}
        if block.description is not UNSET:
            tool_input["description"] = block.description
        tool_id = "toolu_" + entry_id(s.sid, f"{where}/artifact").replace("-", "")[:24]
        return {"type": "tool_use", "id": tool_id, "name": "Artifact", "input": tool_input}

    def missing_results(self, ids: list[str], s: _Stream, top: dict[str, Any] | None = None) -> None:
        """Results for calls the source never answered, right after their message
        (when no user message follows to carry them)."""
        for tool_id in ids:
            self.result_record(_placeholder(tool_id), dict(top or {}), s)

    def result_record(
        self, block: dict[str, Any], fields: dict[str, Any], s: _Stream, more: list[dict[str, Any]] = ()
    ) -> None:
        """One tool_result record hanging off the record of its own tool_use, as the CLI
        writes it; ``more`` is the rest of the user message, in the same record."""
        call = s.tool_records.get(block["tool_use_id"])
        # a raw part of the content, a structured result: the source's own values
        loose = not (isinstance(block["content"], str) or _float_free(block["content"])) or (
            "toolUseResult" in fields and not _float_free(fields["toolUseResult"])
        )
        s.conversation_record(
            "user",
            {"role": "user", "content": [block, *more]},
            call or s.tail,
            {**fields, "sourceToolAssistantUUID": call},
            loose,
        )

    def plain_results(self, message: Message, s: _Stream) -> bool:
        """What :meth:`user` writes for the most common user message, written without its
        general steps: tool results only, each a string answering another call of the
        message before, with no structured value, in a message with nothing else set
        (one record per result, nothing to report). ``False`` (nothing written) for any
        other message."""
        content = message.content
        if not content or message.meta or message.origin is not UNSET or not PLAIN_RESULTS:
            return False
        open_calls = s.open_calls
        ids = set()
        for block in content:
            if (
                type(block) is not ToolResult
                or type(block.content) is not str
                or block.structured is not UNSET
                or block.tool_use_id not in open_calls
            ):
                return False
            ids.add(block.tool_use_id)
        if len(ids) != len(content):  # a call answered twice: the second is an orphan
            return False
        records = s.tool_records
        for block in content:
            self.persist(block)
            tool_id = api_tool_id(block.tool_use_id)
            out: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": block.content}
            if block.is_error is not None:
                out["is_error"] = block.is_error
            call = records.get(tool_id)
            s.conversation_record(
                "user", {"role": "user", "content": [out]}, call or s.tail, {"sourceToolAssistantUUID": call}
            )
        return True

    def user(self, message: Message, s: _Stream, where: str, missing: list[str]) -> None:
        """A user message: its results (with the ones added for unanswered calls, in call
        order) and its first run of other blocks in one message, then one message per
        command and per later run (``write:split-message`` when that is more than one)."""
        results = [b for b in message.content if isinstance(b, ToolResult)]
        others = [b for b in message.content if not isinstance(b, ToolResult)]
        said = [b for b in message.content if not isinstance(b, Context)]  # context goes after the results
        if results and others and any(not isinstance(b, ToolResult) for b in said[: len(results)]):
            self.loss.add(
                "write:reordered-results",
                f"{where}: tool results moved before the message's other blocks (the API requires it)",
                file=s.file,
            )
        top = _user_top(message)
        answered: list[tuple[dict[str, Any], dict[str, Any]]] = []
        orphans: list[Block] = []
        for i, result in enumerate(results):
            done = self.tool_result(result, s, f"{where}.result{i}", top)
            (orphans if isinstance(done, Text) else answered).append(done)
        if missing:
            answered = _in_call_order(
                answered, [(_placeholder(t), dict(top)) for t in missing], [api_tool_id(c) for c in s.calls]
            )
        runs: list[list[Block]] = [orphans]
        for block in others:
            if isinstance(block, (Command, Context)):
                runs += [[block], []]
            else:
                runs[-1].append(block)
        pieces = contexts = 0
        first = self.user_content(runs[0], s, where) if runs[0] else []
        if answered:
            for block, fields in answered[:-1]:
                self.result_record(block, fields, s)
            more = [{"type": "text", "text": first}] if isinstance(first, str) else first
            self.result_record(*answered[-1], s, more)
            pieces += 1
        elif first:
            self.text_record(first, message, s, top)
            pieces += 1
        for k, run in enumerate(runs[1:], 1):
            if run and isinstance(run[0], Context):
                contexts += self.context(run[0], s, f"{where}.context{k}")
            elif run and isinstance(run[0], Command):
                # the CLI puts a caveat before a local command's records: the source's own
                # where it had one, else one in the wording of the version written for,
                # before each command that printed something (2.1.332 does so; older clients wrote
                # one per run of commands: docs/claude_code.md#slash-commands)
                recorded = message.extra.get("caveat") if k == 1 else None
                command = run[0]
                if isinstance(recorded, str) or command.output is not UNSET or command.stderr is not UNSET:
                    caveat = render_caveat(recorded if isinstance(recorded, str) else None)
                    s.conversation_record("user", {"role": "user", "content": caveat}, s.tail, {"isMeta": True})
                self.command(run[0], s)
                pieces += 1
            elif run:
                content = self.user_content(run, s, f"{where}.run{k}")
                if content:
                    self.text_record(content, message, s, top)
                    pieces += 1
        if not pieces and not contexts:
            self.loss.add(
                "write:empty-message", f"{where}: a user message with nothing the API accepts; left out", file=s.file
            )
        elif pieces > 1:
            self.loss.add(
                "write:split-message",
                f"{where}: a user message with commands written as {pieces} messages "
                "(a command is a record of its own)",
                file=s.file,
            )

    def text_record(
        self, content: str | list[dict[str, Any]], message: Message, s: _Stream, top: dict[str, Any]
    ) -> None:
        fields = dict(top)
        if message.compact_summary:
            fields["isCompactSummary"] = True
            fields["isVisibleInTranscriptOnly"] = True
        s.conversation_record("user", {"role": "user", "content": content}, s.tail, fields)
        if not message.meta and not message.compact_summary and isinstance(content, str):
            s.last_prompt = content

    def user_content(self, blocks: list[Block], s: _Stream, where: str) -> str | list[dict[str, Any]]:
        if len(blocks) == 1 and isinstance(blocks[0], Text):
            text = blocks[0].text
            if not text:
                self.loss.add("write:empty-text", f"{where}: empty text left out", file=s.file)
                return []
            # a plain string that is entirely envelope markup would read back as a
            # command: the block form is never an envelope
            return [{"type": "text", "text": text}] if parse_envelope(text) is not None else text
        out = []
        for i, block in enumerate(blocks):
            if isinstance(block, Text):
                if block.text:
                    out.append({"type": "text", "text": block.text})
                else:
                    self.loss.add("write:empty-text", f"{where}.{i}: empty text block left out", file=s.file)
            elif isinstance(block, ToolUse):
                self.loss.add(
                    "write:block-as-text", f"{where}.{i}: a tool_use in a user message became text", file=s.file
                )
                out.append({"type": "text", "text": f"[tool_use {block.name}] {_flatten(block.input)}"})
            else:
                converted = self.as_text(block, s, f"{where}.{i}")
                if converted is not None:
                    out.append(converted)
        return out

    def tool_result(
        self, result: ToolResult, s: _Stream, where: str, top: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]] | Text:
        """The result block and its record fields; a result whose call is not open
        (not in the message before) becomes a text block."""
        content = result.content if type(result.content) is str else _result_content(result, self.loss, where)
        if result.tool_use_id not in s.open_calls:
            self.loss.add(
                "write:orphan-result",
                f"{where}: result for unknown tool_use {result.tool_use_id} written as text",
                file=s.file,
            )
            text = content if isinstance(content, str) else _flatten(content)
            return Text(f"[tool result {result.tool_use_id}] {text}")
        s.open_calls.discard(result.tool_use_id)
        self.persist(result)
        block: dict[str, Any] = {
            "tool_use_id": api_tool_id(result.tool_use_id),
            "type": "tool_result",
            "content": content,
        }
        if result.is_error is not None:
            block["is_error"] = result.is_error
        fields = dict(top)
        if result.structured is not UNSET:
            fields["toolUseResult"] = result.structured
        return block, fields

    def persist(self, result: ToolResult) -> None:
        """An output the client saved beside the transcript (its ``<persisted-output>`` marker
        names it) is written back as ``<sid>/tool-results/<name>``, where the client keeps it
        (docs/claude_code.md#persisted-output)."""
        if type(result.persisted_output) is not str:
            return
        path = result.structured.get("persistedOutputPath") if isinstance(result.structured, dict) else None
        if not isinstance(path, str):
            path = result.content if isinstance(result.content, str) else ""
        found = _PERSISTED_NAME.search(path)
        name = found.group(1) if found else None
        if not is_safe_id(name):
            name = f"{api_tool_id(result.tool_use_id)}.txt"
        self.files.setdefault(
            f"{self.root_rel}/{self.sid}/tool-results/{name}", result.persisted_output.encode("utf-8", "replace")
        )

    def context(self, block: Context, s: _Stream, where: str) -> int:
        """Context the client added: its own attachment record, as it was, where the source
        is Claude Code (docs/claude_code.md#attachments); another client's context with a
        text as a meta user text. The number of records written (0 or 1)."""
        value = block.value
        if block.source == "claude_code" and isinstance(value, dict) and isinstance(value.get("attachment"), dict):
            uid = s.new_id()
            record = s.envelope("attachment", s.tail)
            del record["type"]
            record["attachment"] = value["attachment"]
            record["type"] = "attachment"
            record["uuid"] = uid
            record["timestamp"] = s.timestamp
            for key in ("rendered", "renderedRole"):
                if key in value:
                    record[key] = value[key]
            record.update(s.closing)
            s.loose.add(len(s.lines))
            s.lines.append(record)
            s.records.append(uid)
            s.tail = uid
            return 1
        if isinstance(block.text, str) and block.text:
            s.conversation_record("user", {"role": "user", "content": block.text}, s.tail, {"isMeta": True})
            return 1
        self.loss.add(
            "write:context", f"{where}: {block.kind} context with no text the model saw; left out", file=s.file
        )
        return 0

    def command(self, command: Command, s: _Stream) -> None:
        body = render_command(
            command.name,
            message=command.message if command.message is not UNSET else None,
            args=command.args if command.args is not UNSET else None,
        )
        if isinstance(command.envelope, str) and _same_command(command.envelope, command):
            body = command.envelope  # the source's order and whitespace (docs/claude_code.md#slash-commands)
        s.system_record("local_command", s.tail, content=body, level="info", isMeta=False)
        if command.contents is not UNSET and body is not command.envelope:
            self.loss.add(
                "write:command-contents",
                f"{command.name}: a prompt command's expanded text has no place in a local command record",
                file=s.file,
            )
        if command.output is not UNSET or command.stderr is not UNSET:
            out = render_output(
                command.output if command.output is not UNSET else None,
                command.stderr if command.stderr is not UNSET else None,
            )
            s.system_record("local_command", s.tail, content=out, level="info", isMeta=False)

    # --- files ---------------------------------------------------------------------

    def render(self, s: _Stream, title: str | None) -> bytes:
        lines: list[dict[str, Any]] = []
        loose: Collection[int] = s.loose
        if title and s.leaf:
            lines.append({"type": "summary", "summary": title, "leafUuid": s.leaf})
            loose = {i + 1 for i in loose}
        lines.extend(s.lines)
        if title and s.leaf and s.agent_id is None:
            lines.append({"type": "custom-title", "customTitle": title, "sessionId": s.sid})
        if s.leaf and s.agent_id is None:
            last: dict[str, Any] = {"type": "last-prompt"}
            if s.last_prompt is not None:
                last["lastPrompt"] = s.last_prompt
            last.update(leafUuid=s.leaf, sessionId=s.sid)
            lines.append(last)
        return dumps_lines(lines, loose)

    def agent_ids(self, children: list[Child], parent_agent: str | None, used: set[str]) -> list[str]:
        """The siblings' file ids, claimed before any of their own children's: a direct
        child keeps its id over a deeper one that repeats it."""
        out = []
        for n, child in enumerate(children):
            agent_id = child.link.agent_id if child.link.agent_id is not UNSET else None
            if not agent_id or not _AGENT_ID.fullmatch(agent_id) or agent_id in used:
                given = agent_id
                agent_id = "a" + entry_id(self.sid, f"agent/{parent_agent}/{n}").replace("-", "")[:16]
                self.loss.add(
                    "write:agent-id",
                    f"subagent id {given!r} is missing, not a{{16 hex}} or taken; written as {agent_id}",
                    file=self.root_rel,
                )
            used.add(agent_id)
            out.append(agent_id)
        return out

    def children(self, children: list[Child], parent_agent: str | None, used: set[str]) -> None:
        for agent_id, child in zip(self.agent_ids(children, parent_agent, used), children):
            base = f"{self.root_rel}/{self.sid}/subagents/agent-{agent_id}"
            s = self.stream(child.conversation, f"{base}.jsonl", agent_id)
            self.write_messages(child.conversation, s)
            if child.conversation.epochs:
                self.loss.add(
                    "write:child-epochs", f"{base}.jsonl: subagent compaction written in the child file", file=s.file
                )
            self.files[f"{base}.jsonl"] = self.render(s, None)
            meta: dict[str, Any] = {
                "agentType": child.agent_type if child.agent_type is not UNSET else "general-purpose"
            }
            if child.description is not UNSET:
                meta["description"] = child.description
            if child.link.tool_use_id is not UNSET:
                meta["toolUseId"] = api_tool_id(child.link.tool_use_id)
            if parent_agent:
                meta["parentAgentId"] = parent_agent
            meta["spawnDepth"] = child.spawn_depth
            self.files[f"{base}.meta.json"] = dumps(meta)
            self.children(child.conversation.children, agent_id, used)


def _same_command(envelope: str, command: Command) -> bool:
    """Whether a recorded envelope still says what ``command`` says: its name, message, args
    and contents, and no output (that is written in a record of its own)."""
    parsed = parse_envelope(envelope)
    if parsed is None or parsed.is_output:
        return False
    fields = (
        ("command-name", command.name),
        ("command-message", command.message),
        ("command-args", command.args),
        ("command-contents", command.contents),
    )
    return all(parsed.get(tag) == (value if isinstance(value, str) else None) for tag, value in fields)


def _fork_link(meta: Any, sid: str) -> dict[str, Any] | None:
    """``forkedFrom`` for the session's records (docs/lineage.md): the source session and
    the message the fork reaches. The client itself stamps each copied record with that
    record's own source uuid; a converted session knows the fork point only."""
    link = meta.forked_from
    if link is UNSET or link.session_id == sid:
        return None
    out: dict[str, Any] = {"sessionId": link.session_id}
    if isinstance(link.message_id, str):
        out["messageUuid"] = link.message_id
    return out


def _usage(message: Message) -> dict[str, int] | None:
    # a call without a stop_reason keeps its (unverified) usage beside stop_reason null,
    # as the client wrote it
    u = message.usage if message.usage is not UNSET else message.usage_unverified
    if u is UNSET:
        return None
    return {
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "output_tokens": u.output_tokens,
    }


def _user_top(message: Message) -> dict[str, Any]:
    top: dict[str, Any] = {}
    if message.meta:
        top["isMeta"] = True
    if message.origin is not UNSET:
        top["origin"] = {"kind": message.origin}
    return top


def _placeholder(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": api_tool_id(tool_id), "content": MISSING_RESULT, "is_error": True}


def _in_call_order(
    answered: list[tuple[dict, dict]], added: list[tuple[dict, dict]], calls: list[str]
) -> list[tuple[dict, dict]]:
    """The message's results with each added one before the first result of a later
    call: call order when the source's results were in call order."""
    rank = {c: i for i, c in enumerate(calls)}
    out = list(answered)
    for entry in added:
        mine = rank.get(entry[0]["tool_use_id"], len(calls))
        at = next((k for k, (b, _) in enumerate(out) if rank.get(b["tool_use_id"], -1) > mine), len(out))
        out.insert(at, entry)
    return out


def _results_only(message: Message) -> bool:
    return message.role == "user" and bool(message.content) and all(type(b) is ToolResult for b in message.content)


def _unanswered(calls: list[str], following: Message | None) -> list[str]:
    """The calls of an assistant message that the message after it does not answer (the
    API wants every call answered in the very next message)."""
    if not calls:
        return []
    got = (
        {b.tool_use_id for b in following.content if isinstance(b, ToolResult)}
        if following is not None and following.role == "user"
        else set()
    )
    return [c for c in calls if c not in got]


# the file a persisted output's path or marker names: .../tool-results/<name>
_PERSISTED_NAME = re.compile(r"tool-results/([^\s/\\]+)(?:\s|$)")


def _safe_name(path: str) -> str:
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")
    return name[:100] or "artifact"


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    """The session's files, by path relative to the Claude projects root: the main
    ``<munged cwd>/<sid>.jsonl`` first, then subagents and materialized artifacts."""
    sid = session_id_for(conversation, options, loss)
    # an empty cwd would make the project folder "" and the file /<sid>.jsonl
    cwd = options.cwd or (
        conversation.meta.cwd if isinstance(conversation.meta.cwd, str) and conversation.meta.cwd else "/"
    )
    root_rel = munge_cwd(cwd)
    writer = _Writer(conversation, loss, sid, cwd, root_rel)
    main_file = f"{root_rel}/{sid}.jsonl"
    s = writer.stream(conversation, main_file, None)
    writer.write_messages(conversation, s)
    if s.leaf is None:
        loss.add(
            "write:no-conversation",
            "no user or assistant message to write; Claude Code will not find this session",
            file=main_file,
        )
    title = conversation.meta.title if conversation.meta.title is not UNSET else None
    files = {main_file: writer.render(s, title)}
    writer.children(conversation.children, None, set())
    files.update(writer.files)
    for rel in files:
        safe_relpath(rel)
    return Written(sid, files)
