"""Common conversation -> an opencode export that ``opencode import`` takes and ``opencode run
--session <id>`` resumes (Kilo: ``kilo import`` / ``kilo run --session``).

What 1.18.33 needs, found by removal (docs/opencode.md#format-facts): session ``slug``, ``title``, ``version``,
``time``; a user message ``sessionID``, ``time``, ``agent``, ``model``; an assistant message
``parentID`` (its user message), ``time``, ``modelID``, ``providerID``, ``mode``, ``agent``,
``path``, ``cost``, ``tokens``; a tool part ``status``, ``input``, ``output``, ``title``,
``metadata``, ``time``. Ids are ``ses_`` / ``msg_`` / ``prt_`` and 26 characters; the client
orders messages by creation time, then id, and parts by id, so the writer makes both grow.

Mapping: a user message -> a user message with ``text`` / ``file`` parts; an assistant
message -> an assistant message whose ``tool`` parts carry their results (the next user
message's ToolResults: ``completed`` with ``output``, or ``error`` with ``error``); a call
left without a result gets an ``error`` state (``write:synthetic-result``: the client would
send the call unanswered). Thinking -> ``reasoning`` parts. Usage -> ``tokens``. The
document is written on one line (the client pretty-prints its own exports; it parses
either).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

import msgspec

from ...kit import write as writekit
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Image
from ...model.common import Message
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from .dialect import Dialect

DEFAULT_CWD = "/"
INTERRUPTED = "[Tool call interrupted: no result was recorded]"
SESSION_ID = re.compile(r"^ses_[A-Za-z0-9]{26}\Z")  # \Z: no newline after
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_FINISH = {"tool_use": "tool-calls", "end_turn": "stop", "max_tokens": "length"}


def _ms(stamp: Any, default: int) -> int:
    if isinstance(stamp, str):
        try:
            return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            pass
    return default


def _suffix(seed: str, length: int) -> str:
    digest = int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big")
    out = []
    for _ in range(length):
        digest, r = divmod(digest, 62)
        out.append(_BASE62[r])
    return "".join(out)


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    return writekit.asked_or_kept_id(
        options.session_id,
        conversation,
        loss,
        lambda s: s if SESSION_ID.match(s) else None,
        lambda seed: "ses_" + _suffix(seed, 26),
        "cannot be an opencode id",
        "opencode session ids are 'ses_' and 26 letters or digits",
        plain_is_usual=True,
    )


def writer(dialect: Dialect):
    def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
        sid = session_id_for(conversation, options, loss)
        cwd = options.cwd or (conversation.meta.cwd if isinstance(conversation.meta.cwd, str) else None)
        cwd = writekit.cwd_or_default(cwd, loss, DEFAULT_CWD, "pass --cwd")
        w = writekit.fed(_Writer(sid, cwd, loss, conversation, dialect.agent), conversation, loss)
        w.answer_pending()
        title = (
            conversation.meta.title if isinstance(conversation.meta.title, str) and conversation.meta.title else None
        )
        if title is None:
            first = next(
                (
                    b.text
                    for m in conversation.messages
                    if m.role == "user"
                    for b in m.content
                    if isinstance(b, Text) and b.text
                ),
                "",
            )
            title = first.strip().splitlines()[0][:80] if first.strip() else "Imported session"
        info = {
            "id": sid,
            "slug": "imported-" + sid[4:12].lower(),
            "projectID": "global",
            "directory": cwd,
            "title": title,
            "version": dialect.version,
            "time": {"created": w.start, "updated": max(w.clock, w.start)},
        }
        document = {"info": info, "messages": w.messages}
        return Written(sid, {f"{sid}.json": msgspec.json.encode(document) + b"\n"})

    return write


class _Writer:
    def __init__(self, sid: str, cwd: str, loss: LossReport, conversation: Conversation, agent: str) -> None:
        self.sid, self.cwd, self.loss, self.agent = sid, cwd, loss, agent
        self.messages: list[dict[str, Any]] = []
        self.start = _ms(conversation.meta.started_at, 1_700_000_000_000)
        self.clock = self.start
        self.counter = 0
        self.user_id: str | None = None
        self.pending: dict[str, dict[str, Any]] = {}  # callID -> its tool part, until answered
        self.models = conversation.meta.models

    def ident(self, prefix: str) -> str:
        # grows with the counter (12 hex digits, as the client's own ids grow with time)
        self.counter += 1
        return f"{prefix}_{self.counter:012x}" + _suffix(f"{self.sid}/{self.counter}", 14)

    def tick(self, message: Message) -> int:
        self.clock = max(self.clock + 1, _ms(message.timestamp, self.clock + 1))
        return self.clock

    def answer_pending(self) -> None:
        for ident, part in self.pending.items():
            self.loss.add("write:synthetic-result", f"call {ident} had no result: answered with an error")
            part["state"] = {
                "status": "error",
                "input": part["state"]["input"],
                "error": INTERRUPTED,
                "metadata": {},
                "time": part["state"]["time"],
            }
        self.pending = {}

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.answer_pending()
            self.assistant(message)
            return
        others = []
        for block in message.content:
            if isinstance(block, ToolResult) and block.tool_use_id in self.pending:
                part = self.pending.pop(block.tool_use_id)
                text = self.result_text(block)
                state = part["state"]
                if block.is_error:
                    part["state"] = {
                        "status": "error",
                        "input": state["input"],
                        "error": text,
                        "metadata": {},
                        "time": state["time"],
                    }
                else:
                    state.update(status="completed", output=text)
            else:
                others.append(block)
        if not others:
            return
        self.answer_pending()
        mid = self.ident("msg")
        created = self.tick(message)
        parts = []
        for block in others:
            part = self.user_part(block)
            if part is not None:
                parts.append({**part, "id": self.ident("prt"), "sessionID": self.sid, "messageID": mid})
        if not parts:
            return
        # the model the client runs the next turn on: the source's own when it was opencode's
        model = message.extra.get("model")
        if not (
            isinstance(model, dict)
            and isinstance(model.get("providerID"), str)
            and isinstance(model.get("modelID"), str)
        ):
            model = {"providerID": "txcodec", "modelID": self.models[-1] if self.models else "unknown"}
        info = {
            "role": "user",
            "time": {"created": created},
            "agent": self.agent,
            "model": model,
            "id": mid,
            "sessionID": self.sid,
        }
        self.messages.append({"info": info, "parts": parts})
        self.user_id = mid

    def user_part(self, block: Any) -> dict[str, Any] | None:
        if isinstance(block, Text):
            return {"type": "text", "text": block.text} if block.text else None
        if (
            isinstance(block, (Image, Document))
            and isinstance(block.media_type, str)
            and (isinstance(block.data, str) or isinstance(block.url, str))
        ):
            url = f"data:{block.media_type};base64,{block.data}" if isinstance(block.data, str) else block.url
            return {"type": "file", "mime": block.media_type, "url": url, "filename": "attachment"}
        if isinstance(block, ToolResult):
            self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
            return {"type": "text", "text": f"[tool result {block.tool_use_id}]\n{self.result_text(block)}"}
        return {"type": "text", "text": self.as_text(block)}

    def assistant(self, message: Message) -> None:
        if self.user_id is None:  # an assistant message needs its user message
            self.loss.add(
                "write:missing-user", "an assistant message before any user message: an empty user turn was added"
            )
            self.message(Message("user", [Text("(continued)")], timestamp=message.timestamp))
        mid = self.ident("msg")
        created = self.tick(message)
        parts: list[dict[str, Any]] = [{"type": "step-start"}]
        for block in message.content:
            if isinstance(block, Text):
                if block.text:
                    parts.append({"type": "text", "text": block.text, "time": {"start": created, "end": created}})
            elif isinstance(block, Thinking):
                thought = writekit.thinking_text(
                    block, self.loss, "a thinking signature has no place in a reasoning part"
                )
                if thought is not None:
                    parts.append({"type": "reasoning", "text": thought, "time": {"start": created, "end": created}})
            elif isinstance(block, ToolUse):
                args = writekit.object_input(block, self.loss)
                part = {
                    "type": "tool",
                    "tool": block.name,
                    "callID": block.id,
                    "state": {
                        "status": "completed",
                        "input": args,
                        "output": "",
                        "title": block.name,
                        "metadata": {},
                        "time": {"start": created, "end": created},
                    },
                }
                parts.append(part)
                self.pending[block.id] = part
            else:
                parts.append({"type": "text", "text": self.as_text(block), "time": {"start": created, "end": created}})
        u = message.usage
        tokens = {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
        if u is not msgspec.UNSET:
            tokens = {
                "input": u.input_tokens,
                "output": u.output_tokens,
                "reasoning": u.reasoning_output_tokens if isinstance(u.reasoning_output_tokens, int) else 0,
                "cache": {"read": u.cache_read_input_tokens, "write": u.cache_creation_input_tokens},
            }
        calls = any(p["type"] == "tool" for p in parts)
        finish = (
            _FINISH.get(message.stop_reason, message.stop_reason)
            if isinstance(message.stop_reason, str)
            else ("tool-calls" if calls else "stop")
        )
        parts.append({"type": "step-finish", "reason": finish, "tokens": tokens, "cost": 0})
        for part in parts:
            part.update(id=self.ident("prt"), sessionID=self.sid, messageID=mid)
        info = {
            "parentID": self.user_id,
            "role": "assistant",
            "mode": self.agent,
            "agent": self.agent,
            "path": {"cwd": self.cwd, "root": "/"},
            "cost": 0,
            "tokens": tokens,
            "modelID": message.model
            if isinstance(message.model, str)
            else (self.models[-1] if self.models else "unknown"),
            "providerID": message.extra.get("providerID", "txcodec")
            if isinstance(message.extra.get("providerID"), str)
            else "txcodec",
            "time": {"created": created, "completed": created},
            "finish": finish,
            "id": mid,
            "sessionID": self.sid,
        }
        self.messages.append({"info": info, "parts": parts})

    def result_text(self, block: ToolResult) -> str:
        return writekit.result_text(block, self.loss)

    def as_text(self, block: Any) -> str:
        return writekit.as_text(block, self.loss, "an opencode part")
