"""Gemini CLI session -> Common conversation.

First the *effective* history, computed the way the CLI's loader does
(``loadConversationRecord``): message records are upserted by ``id`` (a repeat replaces
the earlier record in place, keeping its position), ``$rewindTo`` drops that message and
everything after it (everything, when the id is unknown), ``$set`` merges metadata and
``$set.messages`` replaces the whole history, and a metadata line may carry ``messages``
(the legacy whole-session record).

Then each message, the way ``convertSessionToClientHistory`` builds the request:

- ``gemini`` messages: when ``content`` holds ``functionCall`` or ``thought`` parts it is
  the whole turn; otherwise the turn is ``thoughts`` (as ``**subject** description``),
  then ``content``, then ``toolCalls`` as calls. Each tool call's ``result`` becomes a
  tool_result in a user message that follows.
- ``user`` messages: the CLI also records every tool result as a separate user record of
  ``functionResponse`` parts (and an earlier resume may have added ``<id>_response``
  records): a result whose call id was already answered is a duplicate and is skipped,
  so no result appears twice. A ``<session_context>`` turn is injected context (``meta``).
- ``info`` / ``error`` / ``warning`` are UI notices the model never sees: loss report.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from ...core.ids import inside
from ...core.ids import is_safe_id
from ...core.ids import shown
from ...kit.read import load_file
from ...kit.read import malformed
from ...model.common import Block
from ...model.common import Child
from ...model.common import ChildLink
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Image
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.native import Opaque
from ...model.native import plain
from ...model.tools import tool_kind
from .records import Checkpoint
from .records import Content
from .records import MessageRecord
from .records import Metadata
from .records import Part
from .records import Rewind
from .records import SetRecord
from .records import Tokens
from .records import ToolCall

CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")
# 0.1.x opens the history with its environment context and a canned model reply
# (gemini-cli-core 0.1.22 utils/environmentContext.js, core/client.js)
CHECKPOINT_CONTEXT = "This is the Gemini CLI. We are setting up the context for our chat."
CHECKPOINT_ACK = "Got it. Thanks for the "
_WORKING_IN = re.compile(r"^I'm currently working in the directory: (.+)$", re.M)
_META_FIELDS = ("start_time", "last_updated", "summary", "memory_scratchpad", "directories", "kind")


# --- effective history ----------------------------------------------------------------


class History:
    """The metadata and messages in effect after every record, each message with the
    1-based line it came from."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {}
        self.first_start: str | None = None
        self.messages: dict[str, tuple[MessageRecord, int]] = {}
        # the newest record of each id written on its own line: a checkpoint ($set.messages)
        # rewrites messages without tokens/model, which these still have
        self.versions: dict[str, MessageRecord] = {}
        self.rewound = 0

    def apply(self, record: Any, line: int) -> None:
        handler = _APPLY.get(type(record))
        if handler is not None:
            handler(self, record, line)

    def _message(self, record: MessageRecord, line: int) -> None:
        self.messages[record.id] = (record, line)  # dict keeps the first position
        self.versions[record.id] = record

    def _rewind(self, record: Rewind, line: int) -> None:
        ids = list(self.messages)
        cut = ids.index(record.rewind_to) if record.rewind_to in self.messages else 0
        for key in ids[cut:]:
            del self.messages[key]
        self.rewound += len(ids) - cut

    def _set(self, record: SetRecord, line: int) -> None:
        self._merge(record.set, line, checkpoint=True)

    def _metadata(self, record: Metadata, line: int) -> None:
        if self.first_start is None and record.start_time is not UNSET:
            self.first_start = record.start_time
        self._merge(record, line, checkpoint=False)

    def _merge(self, patch: Any, line: int, checkpoint: bool) -> None:
        for name in ("session_id", "project_hash", *_META_FIELDS):
            value = getattr(patch, name)
            if value is not UNSET:
                self.meta[name] = value
        if patch.messages is not UNSET:
            # a checkpoint ($set) clears the history; a metadata line's messages add to it
            if checkpoint:
                self.messages.clear()
            for message in patch.messages:
                self.messages[message.id] = (message, line)


_APPLY = {
    MessageRecord: History._message,
    Rewind: History._rewind,
    SetRecord: History._set,
    Metadata: History._metadata,
}


# --- parts -> blocks ------------------------------------------------------------------


def as_parts(content: Content | None | Any) -> list[Part]:
    """``PartListUnion`` as a list of parts (strings become text parts)."""
    if content is UNSET or content is None:
        return []
    if isinstance(content, str):
        return [Part(text=content)]
    if isinstance(content, Part):
        return [content]
    return [Part(text=p) if isinstance(p, str) else p for p in content]


def text_of(content: Any) -> str:
    return "".join(p.text for p in as_parts(content) if isinstance(p.text, str) and p.thought is not True)


def part_block(part: Part, loss: LossReport, line: int) -> Block:
    if part.function_call is not UNSET:
        fc = part.function_call
        if part.thought_signature is not UNSET:
            loss.add("field:thoughtSignature", "a functionCall part's thought signature", line=line)
        name = fc.name if fc.name is not UNSET else ""
        return ToolUse(
            id=fc.id if fc.id is not UNSET else "", name=name, input=_unset_none(fc.args), kind=tool_kind(name)
        )
    if part.function_response is not UNSET:
        fr = part.function_response
        content, is_error = response_content(fr.response)
        return ToolResult(tool_use_id=fr.id if fr.id is not UNSET else "", content=content, is_error=is_error)
    if part.text is not UNSET:
        if part.thought is True:
            sig = part.thought_signature
            return Thinking(thinking=part.text, signature=sig)
        return Text(part.text)
    if part.inline_data is not UNSET:
        blob = part.inline_data
        cls = Image if str(blob.mime_type or "").startswith("image/") else Document
        return cls(media_type=blob.mime_type, data=blob.data)
    if part.file_data is not UNSET:
        return Document(media_type=part.file_data.mime_type, url=part.file_data.file_uri)
    loss.add("block:gemini-part", "a Gemini part Common has no type for (kept as raw)", line=line)
    return RawBlock("gemini_part", plain(part))


def response_content(response: Any) -> tuple[str, bool | None]:
    """The CLI wraps a tool's answer as ``{"output": text}`` or ``{"error": text}``."""
    import json

    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if key == "output" and isinstance(value, str):
            return value, None
        if key == "error" and isinstance(value, str):
            return value, True
    return json.dumps(_unset_none(response), ensure_ascii=False), None


_STATUS_ERROR = {"success": False, "error": True, "cancelled": True}


def result_block(call: ToolCall, loss: LossReport, line: int) -> ToolResult | None:
    """A tool call's ``result`` (``functionResponse`` parts, plus any sibling parts such
    as images) as one tool_result."""
    if call.result is UNSET or call.result is None or call.result == "" or call.result == []:
        return None
    is_error = _STATUS_ERROR.get(call.status) if isinstance(call.status, str) else None
    structured = call.result_display if call.result_display is not UNSET else UNSET
    if isinstance(call.result, str):
        return ToolResult(call.id, call.result, is_error, structured)
    text: str | None = None
    extras: list[Block] = []
    for part in as_parts(call.result):
        if part.function_response is not UNSET and text is None:
            text, flagged = response_content(part.function_response.response)
            if flagged and is_error is None:
                is_error = True
        else:
            extras.append(part_block(part, loss, line))
    content: str | list[Block] = (text or "") if not extras else ([Text(text)] if text else []) + extras
    return ToolResult(call.id, content, is_error, structured)


def usage_of(tokens: Tokens | None | Any) -> Any:
    """Gemini counts cached tokens inside ``input`` and thoughts outside ``output``;
    Common (Anthropic's shape) counts input without cache reads and output with thinking."""
    if not isinstance(tokens, Tokens):
        return UNSET
    thoughts = tokens.thoughts if tokens.thoughts is not UNSET else 0
    tool = tokens.tool if tokens.tool is not UNSET else 0
    return Usage(
        input_tokens=max(tokens.input + tool - tokens.cached, 0),
        output_tokens=tokens.output + thoughts,
        cache_read_input_tokens=tokens.cached,
        reasoning_output_tokens=thoughts if tokens.thoughts is not UNSET else UNSET,
    )


def _unset_none(value: Any) -> Any:
    return None if value is UNSET else plain(value)


# --- messages ---------------------------------------------------------------------------


class _Reader:
    def __init__(self, loss: LossReport, file: str | None, versions: dict[str, MessageRecord]) -> None:
        self.loss = loss
        self.versions = versions
        self.file = file
        self.answered: dict[str, None] = {}  # (a dict: a reader that carries on takes back the last added)
        self.messages: list[Message] = []
        self.models: list[str] = []

    def add(self, record: MessageRecord, line: int) -> None:
        kind = record.type if isinstance(record.type, str) else ""
        handler = {"user": self.user, "gemini": self.gemini}.get(kind)
        if handler is None:
            self.loss.add(f"message:{kind or 'untyped'}", text_of(record.content)[:200], file=self.file, line=line)
            return
        handler(record, line)

    def _base(self, role: str, record: MessageRecord, blocks: list[Block]) -> Message:
        return Message(role=role, content=blocks, timestamp=record.timestamp, source_ids=[record.id])

    def user(self, record: MessageRecord, line: int) -> None:
        blocks: list[Block] = []
        dropped = False
        for part in as_parts(record.content):
            block = part_block(part, self.loss, line)
            if isinstance(block, ToolResult) and block.tool_use_id in self.answered:
                dropped = True  # the CLI's second copy of a result already read
                continue
            if isinstance(block, ToolResult):
                self.answered[block.tool_use_id] = None
            blocks.append(block)
        if not blocks:
            if dropped and self.messages:
                self.messages[-1].source_ids.append(record.id)
            return
        message = self._base("user", record, blocks)
        first = text_of(record.content).lstrip()
        if first.startswith(CONTEXT_PREFIXES):
            message.meta = True
        if record.display_content is not UNSET:
            message.extra["gemini_display_content"] = plain(record.display_content)
        self.messages.append(message)

    def gemini(self, record: MessageRecord, line: int) -> None:
        parts = as_parts(record.content)
        calls = record.tool_calls if record.tool_calls is not UNSET else []
        if any(p.function_call is not UNSET or p.thought is True for p in parts):
            blocks = [part_block(p, self.loss, line) for p in parts]
        else:
            blocks = [Thinking(thinking=_thought_text(t)) for t in (record.thoughts or [])]
            blocks += [part_block(p, self.loss, line) for p in parts if not (p.text == "" and p.thought is UNSET)]
            blocks += [ToolUse(id=c.id, name=c.name, input=_unset_none(c.args), kind=tool_kind(c.name)) for c in calls]
        message = self._base("assistant", record, blocks)
        older = self.versions.get(record.id)
        if older is not None and older is not record:
            if record.model is UNSET:
                record = msgspec.structs.replace(record, model=older.model)
            if record.tokens is UNSET:
                record = msgspec.structs.replace(record, tokens=older.tokens)
        if isinstance(record.model, str):
            message.model = record.model
            if record.model not in self.models:
                self.models.append(record.model)
        message.usage = usage_of(record.tokens)
        ui = {c.id: _ui_fields(c) for c in calls if _ui_fields(c)}
        if ui:
            message.extra["gemini_tool_calls"] = ui
        self.messages.append(message)
        results = [r for c in calls if (r := result_block(c, self.loss, line)) is not None]
        if results:
            self.answered.update(dict.fromkeys(r.tool_use_id for r in results))
            self.messages.append(
                Message(role="user", content=results, timestamp=record.timestamp, source_ids=[record.id])
            )


def _thought_text(thought: Any) -> str:
    subject = thought.subject if isinstance(thought.subject, str) else ""
    description = thought.description if isinstance(thought.description, str) else ""
    return f"**{subject}** {description}" if subject else description


def _ui_fields(call: ToolCall) -> dict[str, Any]:
    keys = ("status", "timestamp", "display_name", "description", "render_output_as_markdown", "agent_id")
    return {k: getattr(call, k) for k in keys if getattr(call, k) is not UNSET}


# --- the conversation -------------------------------------------------------------------


def read(session: NativeSession, loss: LossReport, _depth: int = 0) -> Conversation:
    file = str(session.path) if session.path else None
    if len(session.records) == 1 and isinstance(session.records[0], Checkpoint):
        return _checkpoint(session.records[0], session.path, loss)
    history = History()
    for n, record in enumerate(session.records, 1):
        if isinstance(record, Opaque):
            loss.add("record:opaque", record.diagnostic, file=file, line=n)
        with malformed(loss, file, n):
            history.apply(record, n)
    if history.rewound:
        loss.add(
            "rewind:dropped", f"{history.rewound} message(s) rewound away by $rewindTo (not in the history)", file=file
        )
    reader = _Reader(loss, file, history.versions)
    for record, line in history.messages.values():
        with malformed(loss, file, line, "message"):
            reader.add(record, line)
    meta = _meta(history, session.path, reader.models)
    conversation = Conversation(meta=meta, messages=reader.messages)
    if _depth == 0 and session.path is not None:
        conversation.children = _children(session.path, meta, reader.messages, loss)
    return conversation


def _checkpoint(record: Checkpoint, path: Path | None, loss: LossReport) -> Conversation:
    """A 0.1.x ``/chat save`` file (docs/gemini_cli.md#versions-read): the API contents in
    order, ``user`` and ``model``; the first pair is the CLI's context set-up. A
    ``functionCall`` part carries no id there: it takes the id of the ``functionResponse``
    that answers it (the next unanswered one of the same name)."""
    file = str(path) if path is not None else None
    messages: list[Message] = []
    for content in record.contents:
        blocks = [part_block(p, loss, 1) for p in content.parts]
        role = "assistant" if content.role == "model" else "user"
        if content.role not in ("user", "model"):
            loss.add("field:role", f"content role {content.role!r} read as user", file=file, line=1)
        message = Message(role=role, content=blocks)
        first = text_of(content.parts).lstrip()
        if role == "user" and first.startswith((*CONTEXT_PREFIXES, CHECKPOINT_CONTEXT)):
            message.meta = True
        elif role == "assistant" and first.startswith(CHECKPOINT_ACK) and messages and messages[-1].meta:
            message.synthetic = True  # the CLI's own answer to its context message, never the model's
        messages.append(message)
    unanswered: list[ToolUse] = [b for m in messages for b in m.content if isinstance(b, ToolUse) and not b.id]
    for result in (b for m in messages for b in m.content if isinstance(b, ToolResult)):
        call = next((u for u in unanswered if result.tool_use_id and u.name == _name_of(result, record)), None)
        if call is not None:
            call.id = result.tool_use_id
            unanswered.remove(call)
    meta = Meta(source_harness="gemini_cli")
    if path is not None:
        meta.id = path.name.removesuffix(".json")
        meta.extra["gemini_checkpoint_tag"] = meta.id.removeprefix("checkpoint-")
        # no .project_root marker yet: the context message names the folder whose sha256
        # names the checkpoint's own (utils/paths.js getProjectHash)
        said = _WORKING_IN.search(text_of(record.contents[0].parts)) if record.contents else None
        root = said.group(1).strip() if said else None
        if root and hashlib.sha256(root.encode()).hexdigest() == path.parent.name:
            meta.cwd = root
    return Conversation(meta=meta, messages=messages)


def _name_of(result: ToolResult, record: Checkpoint) -> str | None:
    for content in record.contents:
        for part in content.parts:
            fr = part.function_response
            if fr is not UNSET and fr.id == result.tool_use_id:
                return fr.name if isinstance(fr.name, str) else None
    return None


def _meta(history: History, path: Path | None, models: list[str]) -> Meta:
    m = history.meta
    meta = Meta(source_harness="gemini_cli", models=models)
    if "session_id" in m:
        meta.id = m["session_id"]
    if history.first_start or "start_time" in m:
        meta.started_at = history.first_start or m["start_time"]
    if "last_updated" in m:
        meta.ended_at = m["last_updated"]
    if isinstance(m.get("summary"), str):
        meta.title = m["summary"]
    for key, name in (
        ("project_hash", "projectHash"),
        ("kind", "kind"),
        ("directories", "directories"),
        ("memory_scratchpad", "memoryScratchpad"),
    ):
        if key in m:
            meta.extra[f"gemini_{name}"] = plain(m[key])
    cwd = project_root_for(path, m.get("project_hash"))
    if cwd is not None:
        meta.cwd = cwd
    return meta


def project_root_for(path: Path | None, project_hash: Any) -> str | None:
    """The cwd, from the ``.project_root`` marker of the session's project folder, when
    its sha256 is the session's ``projectHash``."""
    if path is None or not isinstance(project_hash, str):
        return None
    for folder in list(path.resolve().parents)[:3]:
        marker = folder / ".project_root"
        if marker.is_file() and not marker.is_symlink():  # a side file: never followed out
            try:
                root = marker.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            return root if hashlib.sha256(root.encode()).hexdigest() == project_hash else None
    return None


def _children(
    path: Path, meta: Meta, messages: list[Message], loss: LossReport, read_before: dict | None = None
) -> list[Child]:
    """Subagent chats: ``chats/<parent session id>/<subagent session id>.jsonl``.
    ``read_before`` (a follow's): each chat's stamp and conversation when last read; a chat
    whose file has the same size, time and inode is not read again."""
    from ...kit.registry import get

    if not isinstance(meta.id, str):
        return []
    if not is_safe_id(meta.id):
        # the id is data: "../victim" or "/home" must not make us read another folder
        loss.add(
            "subagent:unsafe-id",
            f"sessionId {shown(meta.id)} cannot name a folder; its subagent chats were not looked for",
            file=str(path),
        )
        return []
    folder = path.parent / meta.id
    if not folder.is_dir() or folder.is_symlink():
        return []
    calls = {}
    for message in messages:
        for call_id, ui in message.extra.get("gemini_tool_calls", {}).items():
            if "agent_id" in ui:
                calls[ui["agent_id"]] = call_id
    children = []
    for child_path in sorted(folder.glob("*.jsonl")):
        if child_path.is_symlink() and not inside(folder, child_path):
            loss.add(
                "side-file:symlink-outside",
                f"{child_path} is a symlink out of the session folder; not read",
                file=str(path),
            )
            continue
        stamp = _file_stamp(child_path) if read_before is not None else None
        kept = read_before.get(child_path) if read_before is not None else None
        if kept is not None and stamp is not None and kept[0] == stamp:
            child = kept[1]
        else:
            child = read(load_file(child_path, get("gemini_cli").codec, "gemini_cli"), loss, _depth=1)
            if read_before is not None and stamp is not None:
                read_before[child_path] = (stamp, child)
        agent = child.meta.id if isinstance(child.meta.id, str) else child_path.stem
        link = (
            ChildLink(via="toolCalls.agentId", tool_use_id=calls[agent], agent_id=agent)
            if agent in calls
            else (ChildLink(via="folder", agent_id=agent))
        )
        children.append(Child(link=link, conversation=child))
    return children


def _file_stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


# --- a reader that carries on (Harness.carry_on, txcodec.live) -------------------------


class CarryOn:
    """A session file read as Gemini CLI appends to it. The history (message records by
    id, each kept at its first position) is applied a record at a time; the messages are
    read on from the first history entry a line added or changed: a new message is read
    after the others, and a newer version of an earlier one (the CLI writes a reply again
    as its tool calls finish) or a rewind to one has the reader taken back to where that
    entry began (what it held then: its message count, the results answered, the models,
    and the sources of the message before) and read on from there. A ``$set`` checkpoint
    (its line carries the whole history) reads the history again. Its subagents' chats are
    read again only when their file changed."""

    def __init__(self, path: Any = None) -> None:
        from ...kit.conform import Fitted
        from ...model.loss import UnreadLoss
        from .codec import CODEC

        self.codec, self.path = CODEC, (Path(path) if path is not None else None)
        self.file = str(self.path) if self.path is not None else None
        self.loss = UnreadLoss()
        self.history = History()
        self.lines = 0
        self.order: list[str] = []  # the history's ids, as read into ``reader``
        self.position: dict[str, int] = {}  # the same, each with its place in ``order``
        # what the reader held before each entry of ``order`` was read: its messages, answered
        # results and models, and the source ids of its last message (a result's second copy adds one)
        self.marks: list[tuple[int, int, int, int]] = []
        self.changed: int | None = 0  # the first history position to read again; None: all
        self.reader = _Reader(self.loss, self.file, self.history.versions)
        self.seen = 0
        self.fitted = Fitted()
        self.chats: dict[Path, Any] = {}  # each subagent chat's stamp and conversation, when last read

    def feed(self, lines: list[Any]) -> None:
        history, first = self.history, self.lines
        for n, line in enumerate(lines, first + 1):
            record = line.record
            kind = type(record)
            if self.changed is not None:
                if kind is MessageRecord:
                    at = self.position.get(record.id)
                    if at is not None:  # a newer version of a message read: read again from it
                        self.changed = min(self.changed, at)
                elif kind is Rewind:
                    # the history from the message rewound to goes (all of it, if that id is not in it)
                    target = record.rewind_to
                    at = self.position.get(target) if target in history.messages else 0
                    if at is not None:  # (else a message not read yet: those read stay)
                        self.changed = min(self.changed, at)
                elif _rewrites(record):
                    self.changed = None  # rewritten by a checkpoint: its line holds the whole history
            with malformed(self.loss, self.file, n):
                history.apply(record, n)
        self.lines += len(lines)

    def hand_on(self) -> list[tuple[Message, bool]]:
        return []  # every message is held (carry_on)

    def _back_to(self, at: int) -> None:
        """The reader as it was before entry ``at`` of ``order`` was read."""
        reader = self.reader
        size, answered, models, sources = self.marks[at]
        del reader.messages[size:]
        while len(reader.answered) > answered:
            reader.answered.popitem()
        del reader.models[models:]
        if size and sources >= 0:
            del reader.messages[size - 1].source_ids[sources:]
        for key in self.order[at:]:
            del self.position[key]
        del self.order[at:], self.marks[at:]

    def conversation(self) -> tuple[Conversation, list[int]]:
        reader = self.reader
        if self.changed is None:
            self.reader = reader = _Reader(self.loss, self.file, self.history.versions)
            self.order, self.position, self.marks = [], {}, []
            self.seen = 0
        elif self.changed < len(self.order):
            self._back_to(self.changed)
        start = len(self.order)
        first_message = max(0, len(reader.messages) - 1)  # a result's second copy names the message before
        history = self.history.messages
        # the entries from ``start``: the history's newest, without a list of all of it
        entries = list(itertools.islice(reversed(history.values()), len(history) - start))[::-1]
        for record, line in entries:
            messages = reader.messages
            sources = len(messages[-1].source_ids) if messages else -1
            self.marks.append((len(messages), len(reader.answered), len(reader.models), sources))
            with malformed(self.loss, self.file, line, "message"):
                reader.add(record, line)
            self.position[record.id] = len(self.order)
            self.order.append(record.id)
        self.changed = len(self.order)
        messages = reader.messages
        meta = _meta(self.history, self.path, list(reader.models))
        conversation = Conversation(meta=meta, messages=messages)
        if self.path is not None:
            conversation.children = _children(self.path, meta, messages, self.loss, self.chats)
        touched = set(range(min(self.seen, first_message), len(messages)))
        self.seen = len(messages)
        return self.fitted.fit(conversation, touched, self.loss)


def _rewrites(record: Any) -> bool:
    """Whether a ``$set`` or metadata line brings messages (a checkpoint's clear the history)."""
    kind = type(record)
    if kind is SetRecord:
        return record.set.messages is not UNSET
    return kind is Metadata and record.messages is not UNSET


def carry_on(path: Any = None, window: int | None = None) -> CarryOn:
    """(Harness.carry_on) ``window`` is not used: a rewind or a checkpoint (``$set.messages``) rewrites the history:
    any message may change, so every message is held."""
    return CarryOn(path)
