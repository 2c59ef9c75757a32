"""Common conversation -> a Kimi CLI context file that ``kimi -r <id>`` resumes.

What 1.51.0 needs (docs/kimi_cli.md#format-facts: a 4-line hand-written ``context.jsonl``, without
``_system_prompt``, ``wire.jsonl`` or ``state.json``, resumed with its history sent; its
source, ``kimi_cli/soul/context.py``): one chat message a line, ``user`` (``content`` a
string or a list of parts), ``assistant`` (``content``, ``tool_calls`` with ``arguments``
as a JSON string), ``tool`` (``tool_call_id``, ``content``). The client adds its own
``_system_prompt`` line on resume. The file goes to ``sessions/<md5 of cwd>/<id>/`` and the
work folder must be registered in ``kimi.json``, written beside it (:func:`~.store.install`
merges it into an existing one): without it ``kimi -r <id>`` empties the file and starts
anew. The session id names a folder; any safe name works (``hw-kimi-1`` resumed).

The format holds no time, model or usage: those are in the loss report when the
conversation had them, with images (kept as ``image_url`` parts), thinking signatures of
another provider, and blocks with no place here (written as text).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import msgspec

from ...core.ids import check_id
from ...core.ids import is_safe_id
from ...core.ids import source_cwd
from ...kit import write as writekit
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Conversation
from ...model.common import Image
from ...model.common import Message
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from ...model.native import builtins
from .store import REGISTRY
from .store import registry_entry
from .store import session_relpath

DEFAULT_CWD = "/"
_NAMESPACE = uuid.UUID("5b0c7a1e-2f64-4d8b-9c3a-6e1d0f4b8a27")


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    if options.session_id:
        return check_id(options.session_id, "Kimi CLI session id (the session's folder name)")
    return writekit.kept_or_derived_id(
        conversation, loss, lambda s: s if is_safe_id(s) else None, _NAMESPACE, "cannot name a folder"
    )


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    sid = session_id_for(conversation, options, loss)
    cwd = writekit.cwd_or_default(
        options.cwd or source_cwd(conversation.meta.cwd, loss),
        loss,
        DEFAULT_CWD,
        "kimi -r finds a session by its work folder",
    )
    writer = writekit.fed(_Writer(loss), conversation, loss)
    writekit.report_unstamped(conversation, loss, "a context file")
    data = b"".join(msgspec.json.encode(line) + b"\n" for line in writer.lines)
    return Written(sid, {session_relpath(cwd, sid): data, REGISTRY: registry_entry(cwd, sid)})


class _Writer:
    def __init__(self, loss: LossReport) -> None:
        self.loss = loss
        self.lines: list[dict[str, Any]] = []
        self.pending: set[str] = set()

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.assistant(message)
            return
        parts: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolResult) and block.tool_use_id in self.pending:
                self.pending.discard(block.tool_use_id)
                self.lines.append({"role": "tool", "content": self.result(block), "tool_call_id": block.tool_use_id})
            elif isinstance(block, ToolResult):
                self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
                parts.append(_text(f"[tool result {block.tool_use_id}]\n{writekit.result_text(block, self.loss)}"))
            else:
                part = self.part(block)
                if part is not None:
                    parts.append(part)
        if parts:
            self.lines.append({"role": "user", "content": _content(parts)})

    def assistant(self, message: Message) -> None:
        parts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolUse):
                arguments = (
                    block.input
                    if isinstance(block.input, str)
                    else json.dumps(builtins(block.input), ensure_ascii=False)
                )
                calls.append(
                    {"type": "function", "id": block.id, "function": {"name": block.name, "arguments": arguments}}
                )
                self.pending.add(block.id)
            else:
                part = self.part(block)
                if part is not None:
                    parts.append(part)
        if not (parts or calls):
            self.loss.add("write:empty-message", "an assistant message with nothing to write")
            return
        line: dict[str, Any] = {"role": "assistant", "content": _content(parts)}
        if calls:
            line["tool_calls"] = calls
        self.lines.append(line)

    def part(self, block: Any) -> dict[str, Any] | None:
        if isinstance(block, Text):
            return _text(block.text) if block.text else None
        if isinstance(block, Thinking):
            if (thought := writekit.thinking_text(block, self.loss)) is None:
                return None
            return {"type": "think", "think": thought}
        if isinstance(block, Image) and (isinstance(block.data, str) or isinstance(block.url, str)):
            url = (
                block.url
                if isinstance(block.url, str)
                else f"data:{block.media_type or 'image/png'};base64,{block.data}"
            )
            return {"type": "image_url", "image_url": {"url": url}}
        if (
            isinstance(block, RawBlock)
            and block.source_type in ("audio_url", "video_url")
            and isinstance(block.value, dict)
        ):
            return block.value  # a Kimi part read as it was
        return _text(writekit.as_text(block, self.loss, "a Kimi CLI message"))

    def result(self, block: ToolResult) -> str | list[dict[str, Any]]:
        if isinstance(block.content, str):
            return block.content
        parts = []
        for inner in block.content:
            if isinstance(inner, Text):
                parts.append(_text(inner.text))
            else:
                self.loss.add("write:result-block", f"a {type(inner).__name__} inside a tool result became text")
                parts.append(_text(writekit.render(inner)))
        return parts


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """One text part is written as a plain string, as the client writes it (``Message``'s
    content serializer); anything else as the list, ``[]`` when empty."""
    if len(parts) == 1 and parts[0].get("type") == "text":
        return parts[0]["text"]
    return parts
