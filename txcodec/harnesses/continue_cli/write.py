"""Common conversation -> a Continue CLI session file that ``cn --resume`` / ``--fork <id>`` loads.

What 1.5.47 needs (docs/continue_cli.md#format-facts; the hand-written file it resumed): ``{sessionId,
history}``, each history item ``{message, contextItems: []}``; an assistant item carries
``toolCalls`` (``function.arguments`` a JSON string) and the results of those calls in its
own ``toolCallStates`` (``status: "done"`` or ``"errored"``, ``output: [{content}]``): a
result is never an item of its own. The file is ``<sessionId>.json`` in the sessions
folder; any id that can name a file is taken (the client resumed ``hw-session-1``).

The writer emits one line of JSON (the client pretty-prints its own files; it parses
either). A call left without a result is answered with an error state
(``write:synthetic-result``: Chat Completions refuses a call without its answer); thinking
has no place in a history item (``write:thinking``), nor do blocks other than text and
images (``write:block:*``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import msgspec

from ...kit import write as writekit
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Conversation
from ...model.common import Image
from ...model.common import Message
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from .store import SAFE_ID
from .store import session_relpath

INTERRUPTED = "[Tool call interrupted: no result was recorded]"
_NAMESPACE = uuid.UUID("3a8f0d4c-2b7e-4f61-8d2c-5e9b1a7c4f08")


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    return writekit.asked_or_kept_id(
        options.session_id,
        conversation,
        loss,
        lambda s: s if SAFE_ID.match(s) else None,
        _NAMESPACE,
        "cannot name a file",
        "a Continue session id names its file: letters, digits, '.', '_', '-' only",
    )


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    sid = session_id_for(conversation, options, loss)
    writer = writekit.fed(_Writer(loss), conversation, loss)
    writer.answer_pending()
    document: dict[str, Any] = {
        "sessionId": sid,
        "title": conversation.meta.title if isinstance(conversation.meta.title, str) else "Untitled Session",
    }
    cwd = options.cwd or (conversation.meta.cwd if isinstance(conversation.meta.cwd, str) else None)
    if cwd:
        document["workspaceDirectory"] = cwd
    document["history"] = writer.history
    document["usage"] = writer.totals
    return Written(sid, {session_relpath(sid): msgspec.json.encode(document) + b"\n"})


class _Writer:
    def __init__(self, loss: LossReport) -> None:
        self.loss = loss
        self.history: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}  # id -> the call, of the last assistant item
        self.states: dict[str, dict[str, Any]] = {}  # id -> its state, once answered
        self.totals: dict[str, Any] = {
            "totalCost": 0,
            "promptTokens": 0,
            "completionTokens": 0,
            "promptTokensDetails": {"cachedTokens": 0, "cacheWriteTokens": 0},
        }

    def answer_pending(self) -> None:
        """Give the last assistant item its states, answering a call left without a result."""
        if not self.calls:
            return
        item = self.history[-1] if self.history and self.history[-1]["message"]["role"] == "assistant" else None
        for ident, call in self.calls.items():
            if ident not in self.states:
                self.loss.add("write:synthetic-result", f"call {ident} had no result: answered with an error")
                self.states[ident] = self.state(call, INTERRUPTED, "errored")
        target = item if item is not None else self._assistant_of(next(iter(self.calls)))
        if target is not None:
            target["toolCallStates"] = [self.states[i] for i in self.calls]
        self.calls, self.states = {}, {}

    def _assistant_of(self, ident: str) -> dict[str, Any] | None:
        for item in reversed(self.history):
            if any(c["id"] == ident for c in item["message"].get("toolCalls", [])):
                return item
        return None

    @staticmethod
    def state(call: dict[str, Any], text: str, status: str) -> dict[str, Any]:
        arguments = call["function"]["arguments"]
        return {
            "toolCallId": call["id"],
            "toolCall": call,
            "status": status,
            "parsedArgs": json.loads(arguments),
            "output": [{"content": text, "name": "Tool Result", "description": "Tool execution result"}],
        }

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.assistant(message)
            return
        others = []
        for block in message.content:
            if (
                isinstance(block, ToolResult)
                and block.tool_use_id in self.calls
                and block.tool_use_id not in self.states
            ):
                status = "errored" if block.is_error else "done"
                self.states[block.tool_use_id] = self.state(
                    self.calls[block.tool_use_id], self.result_text(block), status
                )
            else:
                others.append(block)
        if not others:
            return
        self.answer_pending()
        parts: list[dict[str, Any]] = []
        for block in others:
            if isinstance(block, ToolResult):
                self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
                parts.append({"type": "text", "text": f"[tool result {block.tool_use_id}]\n{self.result_text(block)}"})
            elif isinstance(block, Text):
                if block.text:
                    parts.append({"type": "text", "text": block.text})
            elif isinstance(block, Image) and isinstance(block.data, str) and isinstance(block.media_type, str):
                parts.append({"type": "imageUrl", "imageUrl": {"url": f"data:{block.media_type};base64,{block.data}"}})
            elif isinstance(block, Image) and isinstance(block.url, str):
                parts.append({"type": "imageUrl", "imageUrl": {"url": block.url}})
            else:
                parts.append({"type": "text", "text": self.as_text(block)})
        if not parts:
            return
        content: Any = "\n\n".join(p["text"] for p in parts) if all(p["type"] == "text" for p in parts) else parts
        item: dict[str, Any] = {"message": {"role": "user", "content": content}, "contextItems": []}
        if isinstance(content, str):
            item["editorState"] = content
        self.history.append(item)

    def assistant(self, message: Message) -> None:
        self.answer_pending()
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, Text):
                texts.append(block.text)
            elif isinstance(block, Thinking):
                self.loss.add("write:thinking", "a Continue history item has no place for thinking: dropped")
            elif isinstance(block, ToolUse):
                args = writekit.object_input(block, self.loss)
                calls.append(
                    {
                        "id": block.id,
                        "type": "function",
                        "function": {
                            "name": block.name,
                            "arguments": json.dumps(args, ensure_ascii=False, separators=(",", ":")),
                        },
                    }
                )
            else:
                texts.append(self.as_text(block))
        if not texts and not calls:
            self.loss.add("write:empty-message", "an assistant message with nothing to write")
            return
        body: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts)}
        if calls:
            body["toolCalls"] = calls
        if message.usage is not msgspec.UNSET:
            u = message.usage
            prompt = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
            usage: dict[str, Any] = {
                "prompt_tokens": prompt,
                "completion_tokens": u.output_tokens,
                "total_tokens": prompt + u.output_tokens,
            }
            if u.cache_read_input_tokens or u.cache_creation_input_tokens:
                usage["prompt_tokens_details"] = {
                    "cached_tokens": u.cache_read_input_tokens,
                    "cache_write_tokens": u.cache_creation_input_tokens,
                }
            if isinstance(message.model, str):
                usage["model"] = message.model
            body["usage"] = usage
            self.totals["promptTokens"] += prompt
            self.totals["completionTokens"] += u.output_tokens
            self.totals["promptTokensDetails"]["cachedTokens"] += u.cache_read_input_tokens
            self.totals["promptTokensDetails"]["cacheWriteTokens"] += u.cache_creation_input_tokens
        self.history.append({"message": body, "contextItems": []})
        self.calls = {c["id"]: c for c in calls}

    def result_text(self, block: ToolResult) -> str:
        return writekit.result_text(block, self.loss)

    def as_text(self, block: Any) -> str:
        return writekit.as_text(block, self.loss, "a Continue history item")
