"""pi session -> Common conversation.

The history is what pi 0.73.1 sends when it resumes (``buildSessionContext``): the leaf
is the last entry of the file, the path is walked back through ``parentId`` (a cycle or
a missing parent ends it), and messages are taken in path order, converted as its
``convertToLlm`` does (``bashExecution`` -> user text, ``custom`` -> user content,
branch and compaction summaries -> user text with their fixed prefixes).

Version 1 files (no ``id``/``parentId``) are linked in file order and version 2
``hookMessage`` roles read as ``custom``, as the client's migrations do.

A ``compaction`` entry on the path opens an :class:`~txcodec.model.common.Epoch`: the messages
before it stay in ``messages`` (the full history), then come the summary message
(``compact_summary``) and what followed; ``preserved_ids`` names the entries pi keeps
(from ``firstKeptEntryId`` up to the compaction). Model and thinking-level changes are
listed in ``meta.extra`` with the index of the message they precede.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...kit.read import line_dicts
from ...kit.read import malformed
from ...model.common import Block
from ...model.common import Conversation
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
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.native import tag_of
from ...model.tools import tool_kind

COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUFFIX = "</summary>"
STOP_REASONS = {
    "stop": "end_turn",
    "toolUse": "tool_use",
    "length": "max_tokens",
    "error": "error",
    "aborted": "aborted",
}


def entries_of(
    values: list[tuple[int, Any]], loss: LossReport, file: str | None
) -> tuple[dict, list[tuple[int, dict]]]:
    """The header and the entries, migrated to version 3 as the client does."""
    parsed = [(n, v) for n, v in values if isinstance(v, dict)]
    for n, v in values:
        if not isinstance(v, dict):
            loss.add("record:invalid", "not a JSON object (pi skips it)", file=file, line=n)
    header = next((v for _, v in parsed if v.get("type") == "session"), {})
    version = header.get("version") if isinstance(header.get("version"), int) else 1
    entries = [(n, v) for n, v in parsed if v.get("type") != "session"]
    if version < 2:
        previous = None
        for k, (_n, v) in enumerate(entries):
            v["id"], v["parentId"] = f"v1-{k:06d}", previous
            previous = v["id"]
        for _n, v in entries:
            index = v.pop("firstKeptEntryIndex", None) if v.get("type") == "compaction" else None
            if isinstance(index, int) and 0 <= index < len(parsed) and parsed[index][1].get("type") != "session":
                v["firstKeptEntryId"] = parsed[index][1].get("id")
    if version < 3:
        for _, v in entries:
            message = v.get("message")
            if v.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
    return header, entries


def path_to_leaf(entries: list[tuple[int, dict]], loss: LossReport, file: str | None) -> list[tuple[int, dict]]:
    by_id = {v.get("id"): (n, v) for n, v in entries if isinstance(v.get("id"), str)}
    path: list[tuple[int, dict]] = []
    seen: set[str] = set()
    current = entries[-1] if entries else None
    while current is not None:
        ident = current[1].get("id")
        ident = ident if isinstance(ident, str) else None
        if ident in seen:
            loss.add("chain:cycle", f"parentId cycle at {ident}", file=file)
            break
        seen.add(ident)
        path.append(current)
        parent = current[1].get("parentId")
        if not parent or not isinstance(parent, str):  # an id of another shape names no entry
            break
        if parent not in by_id:
            loss.add("chain:gap", f"{ident} names a missing parent {parent}", file=file)
            break
        current = by_id[parent]
    path.reverse()
    on_path = {tag_of(v, "id") for _, v in path}
    for n, v in entries:
        if tag_of(v, "id") not in on_path and tag_of(v) in (
            "message",
            "custom_message",
            "branch_summary",
            "compaction",
        ):
            loss.add("record:off-branch", "not on the path to the last entry", file=file, line=n)
    return path


def read(session: NativeSession, loss: LossReport) -> Conversation:
    file = str(session.path) if session.path else None
    return _read(line_dicts(session), loss, file)[0]


def _read(values: list[tuple[int, Any]], loss: LossReport, file: str | None) -> tuple[Conversation, Any, Any, Any]:
    """The conversation, and for a reader that carries on: its builder, the header and the entries."""
    header, entries = entries_of(values, loss, file)
    meta = Meta(source_harness="pi")
    for key, attr in (("id", "id"), ("cwd", "cwd"), ("timestamp", "started_at")):
        if isinstance(header.get(key), str):
            setattr(meta, attr, header[key])
    if isinstance(header.get("parentSession"), str):
        meta.extra["parent_session"] = header["parentSession"]
    meta.extra["pi_version"] = header.get("version", 1)
    conversation = Conversation(meta=meta)
    builder = _Builder(conversation, loss, file)
    for n, entry in path_to_leaf(entries, loss, file):
        with malformed(loss, file, n):
            builder.entry(n, entry)
    for _, entry in entries:  # the newest name anywhere in the file, as pi shows it
        if entry.get("type") == "session_info":
            name = entry.get("name")
            meta.title = name.strip() if isinstance(name, str) and name.strip() else msgspec.UNSET
    if conversation.messages and isinstance(conversation.messages[-1].timestamp, str):
        meta.ended_at = conversation.messages[-1].timestamp
    return conversation, builder, header, entries


class CarryOn:
    """A session file read as pi appends to it (Harness.carry_on). An entry whose parent is
    the last entry extends the path to the leaf: the builder goes on from where it was, and
    a result joins the results message before it. Anything else (a branch: an entry whose
    parent is further back, an id seen before, a header, a file older than version 3 that
    pi migrates whole) has the path read again from every entry, so the lines are kept
    (as plain JSON)."""

    def __init__(self, path: Any = None) -> None:
        from pathlib import Path

        from ...kit.conform import Fitted
        from ...model.loss import UnreadLoss
        from .codec import CODEC

        self.codec, self.path = CODEC, (Path(path) if path is not None else None)
        self.file = str(self.path) if self.path is not None else None
        self.loss = UnreadLoss()
        self.values: list[tuple[int, Any]] = []
        self.lines = 0
        self.again = True  # the path is to be read again from every entry
        self.conv: Conversation | None = None
        self.builder: Any = None
        self.leaf: Any = None  # the id of the last entry
        self.ids: set[Any] = set()
        self.seen = 0
        self.fitted = Fitted()

    def feed(self, lines: list[Any]) -> None:
        first = self.lines
        values = [(first + n, v) for n, v in line_dicts(NativeSession("pi", self.codec, lines, True, self.path))]
        self.lines += len(lines)
        self.values.extend(values)
        for n, v in values:
            if self.again:
                return
            if not isinstance(v, dict):
                continue  # pi skips it
            ident = v.get("id")
            if (
                v.get("type") == "session"
                or not isinstance(ident, str)
                or ident in self.ids
                or v.get("parentId") != self.leaf
            ):
                self.again = True
                return
            self.ids.add(ident)
            self.leaf = ident
            with malformed(self.loss, self.file, n):
                self.builder.entry(n, v)
            if v.get("type") == "session_info":  # the newest name, as read() takes it
                name = v.get("name")
                self.conv.meta.title = name.strip() if isinstance(name, str) and name.strip() else msgspec.UNSET  # type: ignore[union-attr]

    def hand_on(self) -> list[tuple[Message, bool]]:
        return []  # every message is held (carry_on)

    def conversation(self) -> tuple[Conversation, list[int]]:
        if self.again or self.conv is None:
            self.conv, self.builder, header, entries = _read(self.values, self.loss, self.file)
            version = header.get("version") if isinstance(header.get("version"), int) else 1
            self.again = version < 3  # migrated whole, as pi does: read again at every look
            self.ids = {v.get("id") for _, v in entries}
            self.leaf = entries[-1][1].get("id") if entries else None
            self.seen = 0
            self.fitted = type(self.fitted)()
        conv = self.conv
        messages = conv.messages
        last = messages[-1].timestamp if messages else None
        conv.meta.ended_at = last if isinstance(last, str) else msgspec.UNSET
        touched = set(range(max(0, self.seen - 1), len(messages)))  # a result may join the last one
        self.seen = len(messages)
        return self.fitted.fit(conv, touched, self.loss)


def carry_on(path: Any = None, window: int | None = None) -> CarryOn:
    """(Harness.carry_on) ``window`` is not used: a branch (an entry whose parent is further back) makes the
    conversation the path to another leaf: any message may go, so every message is held."""
    return CarryOn(path)


class _Builder:
    def __init__(self, conversation: Conversation, loss: LossReport, file: str | None) -> None:
        self.c, self.loss, self.file = conversation, loss, file
        self.seen_ids: list[str] = []  # message entry ids on the path, in order

    @property
    def messages(self) -> list[Message]:
        return self.c.messages

    def add(self, message: Message, entry: dict, merge_results: bool = False) -> None:
        message.source_ids = [entry["id"]] if isinstance(entry.get("id"), str) else []
        if isinstance(entry.get("timestamp"), str):
            message.timestamp = entry["timestamp"]
        last = self.messages[-1] if self.messages else None
        if (
            merge_results
            and last is not None
            and last.role == "user"
            and last.content
            and all(isinstance(b, ToolResult) for b in last.content)
        ):
            last.content.extend(message.content)
            last.source_ids.extend(message.source_ids)
            return
        self.messages.append(message)

    def entry(self, n: int, entry: dict) -> None:
        kind = entry.get("type")
        handler = getattr(self, f"on_{kind}", None)
        if handler is None:
            self.loss.add(
                f"record:{kind}", "no place in Common (not part of the model's history)", file=self.file, line=n
            )
            return
        handler(n, entry)

    def on_model_change(self, n: int, entry: dict) -> None:
        model = entry.get("modelId")
        if isinstance(model, str) and model not in self.c.meta.models:
            self.c.meta.models.append(model)
        self.c.meta.extra.setdefault("model_changes", []).append(
            {"at": len(self.messages), "provider": entry.get("provider"), "model": model}
        )

    def on_thinking_level_change(self, n: int, entry: dict) -> None:
        self.c.meta.extra.setdefault("thinking_levels", []).append(
            {"at": len(self.messages), "level": entry.get("thinkingLevel")}
        )

    def on_session_info(self, n: int, entry: dict) -> None:
        pass  # read from the whole file in read()

    def on_compaction(self, n: int, entry: dict) -> None:
        summary = entry.get("summary") if isinstance(entry.get("summary"), str) else ""
        ids = [i for m in self.messages for i in m.source_ids]
        first = entry.get("firstKeptEntryId")
        preserved = ids[ids.index(first) :] if first in ids else []
        epoch = Epoch(start=len(self.messages), preserved_ids=preserved)
        if isinstance(entry.get("id"), str):
            epoch.boundary_id = entry["id"]
        if isinstance(entry.get("tokensBefore"), int):
            epoch.pre_tokens = entry["tokensBefore"]
        if entry.get("fromHook") is True:
            epoch.trigger = "hook"
        self.c.epochs.append(epoch)
        message = Message(
            "user", [Text(COMPACTION_PREFIX + summary + COMPACTION_SUFFIX)], synthetic=True, compact_summary=True
        )
        self.add(message, entry)

    def on_branch_summary(self, n: int, entry: dict) -> None:
        summary = entry.get("summary")
        if isinstance(summary, str) and summary:
            message = Message(
                "user", [Text(BRANCH_PREFIX + summary + BRANCH_SUFFIX)], synthetic=True, origin="branch_summary"
            )
            self.add(message, entry)

    def on_custom_message(self, n: int, entry: dict) -> None:
        blocks = self.blocks(entry.get("content"), n)
        self.add(Message("user", blocks, meta=True, origin=f"custom:{entry.get('customType')}"), entry)

    def on_message(self, n: int, entry: dict) -> None:
        message = entry.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        handler = getattr(self, f"role_{role}", None)
        if handler is None:
            self.loss.add(f"message:{role}", "a message role Common has no place for", file=self.file, line=n)
            return
        handler(n, entry, message)

    def role_user(self, n: int, entry: dict, m: dict) -> None:
        self.add(Message("user", self.blocks(m.get("content"), n)), entry)

    def role_assistant(self, n: int, entry: dict, m: dict) -> None:
        blocks: list[Block] = []
        content = m.get("content")
        if isinstance(content, str):  # pi's own messages hold a list; a plain string is one text
            content = [{"type": "text", "text": content}]
        for part in self.parts(content, n):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                blocks.append(Text(part.get("text", "")))
                if "textSignature" in part:
                    self.loss.add(
                        "field:textSignature", "a text block's signature has no slot in Common", file=self.file, line=n
                    )
            elif kind == "thinking":
                thinking = Thinking(part.get("thinking", ""))
                signature = part.get("thinkingSignature")
                if part.get("redacted") and isinstance(signature, str) and not thinking.thinking:
                    blocks.append(RedactedThinking(signature))  # Anthropic's redacted_thinking
                    continue
                if isinstance(signature, str):
                    if part.get("redacted"):
                        thinking.encrypted = signature
                    else:
                        thinking.signature = signature
                blocks.append(thinking)
            elif kind == "toolCall":
                name = part.get("name", "")
                blocks.append(ToolUse(part.get("id", ""), name, part.get("arguments", {}), tool_kind(name)))
            else:
                blocks.append(self.raw(part, n))
        message = Message("assistant", blocks)
        if isinstance(m.get("model"), str):
            message.model = m["model"]
            if m["model"] not in self.c.meta.models:
                self.c.meta.models.append(m["model"])
        if isinstance(m.get("responseId"), str):
            message.id = m["responseId"]
        stop = m.get("stopReason")
        if isinstance(stop, str):
            message.stop_reason = STOP_REASONS.get(stop, stop)
            message.api_error = stop == "error"
            message.interrupted = stop == "aborted"
        if isinstance(m.get("errorMessage"), str):
            message.extra["error_message"] = m["errorMessage"]
        for key in ("api", "provider"):
            if isinstance(m.get(key), str):
                message.extra[key] = m[key]
        usage = m.get("usage")
        if isinstance(usage, dict):
            message.usage = Usage(
                input_tokens=_int(usage.get("input")),
                output_tokens=_int(usage.get("output")),
                cache_read_input_tokens=_int(usage.get("cacheRead")),
                cache_creation_input_tokens=_int(usage.get("cacheWrite")),
            )
            if isinstance(usage.get("cost"), dict):
                message.extra["cost"] = usage["cost"]
        self.add(message, entry)

    def role_toolResult(self, n: int, entry: dict, m: dict) -> None:
        content = self.blocks(m.get("content"), n)
        result = ToolResult(
            m.get("toolCallId", ""), content, is_error=m.get("isError") if isinstance(m.get("isError"), bool) else None
        )
        message = Message("user", [result])
        if "details" in m:
            message.extra["details"] = {result.tool_use_id: m["details"]}
        self.add(message, entry, merge_results=True)
        if "details" in m and self.messages[-1] is not message:
            self.messages[-1].extra.setdefault("details", {})[result.tool_use_id] = m["details"]

    def role_bashExecution(self, n: int, entry: dict, m: dict) -> None:
        if m.get("excludeFromContext"):
            self.loss.add(
                "message:bashExecution", "excluded from the model's context (!! command)", file=self.file, line=n
            )
            return
        self.add(Message("user", [Text(bash_text(m))], meta=True, origin="bash"), entry)

    def role_custom(self, n: int, entry: dict, m: dict) -> None:
        blocks = self.blocks(m.get("content"), n)
        self.add(Message("user", blocks, meta=True, origin=f"custom:{m.get('customType')}"), entry)

    def role_branchSummary(self, n: int, entry: dict, m: dict) -> None:
        text = BRANCH_PREFIX + str(m.get("summary", "")) + BRANCH_SUFFIX
        self.add(Message("user", [Text(text)], synthetic=True, origin="branch_summary"), entry)

    def role_compactionSummary(self, n: int, entry: dict, m: dict) -> None:
        text = COMPACTION_PREFIX + str(m.get("summary", "")) + COMPACTION_SUFFIX
        self.add(Message("user", [Text(text)], synthetic=True, compact_summary=True), entry)

    def parts(self, content: Any, n: int) -> list[Any]:
        """A message's content list; anything else but absent content is reported."""
        if isinstance(content, list):
            return content
        if content is not None:
            self.loss.add(
                "read:malformed", f"content is {type(content).__name__}, not a list: not read", file=self.file, line=n
            )
        return []

    def blocks(self, content: Any, n: int) -> list[Block]:
        if isinstance(content, str):
            return [Text(content)]
        out: list[Block] = []
        for part in self.parts(content, n):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                out.append(Text(part.get("text", "")))
            elif kind == "image":
                out.append(Image(media_type=part.get("mimeType", ""), data=part.get("data", "")))
            else:
                out.append(self.raw(part, n))
        return out

    def raw(self, part: Any, n: int) -> RawBlock:
        kind = part.get("type") if isinstance(part, dict) else type(part).__name__
        self.loss.add(f"block:{kind}", "a content block Common has no type for (kept as raw)", file=self.file, line=n)
        return RawBlock(str(kind), part)


def bash_text(m: dict) -> str:
    """pi's ``bashExecutionToText``: how a ``!command`` reaches the model."""
    text = f"Ran `{m.get('command', '')}`\n"
    text += f"```\n{m['output']}\n```" if m.get("output") else "(no output)"
    if m.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(m.get("exitCode"), int) and m["exitCode"] != 0:
        text += f"\n\nCommand exited with code {m['exitCode']}"
    if m.get("truncated") and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {m['fullOutputPath']}]"
    return text


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0
