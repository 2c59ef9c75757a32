"""Training and evaluation shapes derived from Common: ``export --to openai-chat`` and
``export --to hf``.

``openai-chat`` is one JSON object per line in the Chat Completions fine-tuning shape::

    {"messages": [{"role": "user", "content": "..."},
                  {"role": "assistant", "content": "...", "tool_calls": [{"id": ..., "type": "function",
                   "function": {"name": ..., "arguments": "<JSON text>"}}]},
                  {"role": "tool", "tool_call_id": ..., "content": "..."}]}

A subagent's conversation is an example of its own, on its own line, after its parent's:
what it was asked and what it did is a complete exchange. ``hf`` is the same rows as a
Parquet file that ``datasets.load_dataset("parquet", data_files=...)`` opens, plus the
session's harness and id.

The shape holds text, tool calls and tool results, and nothing else: thinking (and its
signatures), images, documents that are not text, artifacts and blocks Common has no
type for are named in the loss report, by kind, with the message they were in.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import Any

import msgspec

from ..model.common import Command
from ..model.common import Conversation
from ..model.common import Document
from ..model.common import Text
from ..model.common import Thinking
from ..model.common import ToolResult
from ..model.common import ToolUse
from ..model.loss import LossReport

_encode = msgspec.json.Encoder().encode


def _tag(block: Any) -> str:
    return block.__struct_config__.tag


def _result_text(content: Any, loss: LossReport, where: str) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, Text):
            parts.append(block.text)
        else:
            loss.add(f"openai-chat:{_tag(block)}", f"in a tool result, {where}")
    return "\n".join(parts)


def _text(block: Any) -> str | None:
    """A block the shape carries as text, else ``None``."""
    if isinstance(block, Text):
        return block.text
    if isinstance(block, Command):
        return block.as_text()
    if isinstance(block, Document) and block.media_type == "text/plain" and isinstance(block.data, str):
        return block.data
    return None


def chat_messages(conversation: Conversation, loss: LossReport) -> list[dict[str, Any]]:
    """The conversation's messages in the Chat Completions shape (not its children)."""
    out: list[dict[str, Any]] = []
    for index, message in enumerate(conversation.messages):
        where = f"message {index}"
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in message.content:
            text = _text(block)
            if text is not None:
                texts.append(text)
            elif isinstance(block, ToolUse):
                calls.append(
                    {
                        "id": block.id,
                        "type": "function",
                        "function": {"name": block.name, "arguments": _encode(block.input).decode()},
                    }
                )
            elif isinstance(block, ToolResult):
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": block.tool_use_id,
                        "content": _result_text(block.content, loss, where),
                    }
                )
            elif isinstance(block, Thinking):
                loss.add("openai-chat:thinking", f"{len(block.thinking)} chars, {where}")
            else:
                loss.add(f"openai-chat:{_tag(block)}", where)
        if message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
            if calls:
                entry["tool_calls"] = calls
            if texts or calls:
                out.append(entry)
        elif texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def examples(conversation: Conversation, loss: LossReport) -> Iterator[dict[str, Any]]:
    """One example for the conversation, then one for each subagent, depth first."""
    messages = chat_messages(conversation, loss)
    if messages:
        yield {"messages": messages}
    elif conversation.messages:
        loss.add("openai-chat:empty", "no message had text or tool calls to carry")
    for child in conversation.children:
        yield from examples(child.conversation, loss)


def openai_chat_lines(conversation: Conversation, loss: LossReport) -> bytes:
    """The ``openai-chat`` JSONL bytes of one conversation."""
    return b"".join(_encode(example) + b"\n" for example in examples(conversation, loss))


def hf_table(items: list[tuple[Conversation, str, str | None]], loss: LossReport) -> Any:
    """An Arrow table of ``(conversation, harness, session id)`` items, one row per
    example, in the shape ``datasets`` reads as chat data."""
    import pyarrow as pa

    call = pa.struct(
        [
            ("id", pa.string()),
            ("type", pa.string()),
            ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
        ]
    )
    message = pa.struct(
        [("role", pa.string()), ("content", pa.string()), ("tool_calls", pa.list_(call)), ("tool_call_id", pa.string())]
    )
    schema = pa.schema([("harness", pa.string()), ("session_id", pa.string()), ("messages", pa.list_(message))])
    rows = []
    for conversation, harness, session_id in items:
        for example in examples(conversation, loss):
            rows.append({"harness": harness, "session_id": session_id, "messages": example["messages"]})
    return pa.Table.from_pylist(rows, schema=schema)


def write_hf(
    items: list[tuple[Conversation, str | None, str | None]], out: str | os.PathLike[str], loss: LossReport
) -> None:
    """:func:`hf_table` as one Parquet file at ``out``, written atomically, never over an
    existing file."""
    import pyarrow.parquet as pq

    from ..core.atomic import write_atomic

    buffer = io.BytesIO()
    pq.write_table(hf_table(items, loss), buffer)
    write_atomic(out, buffer.getvalue())
