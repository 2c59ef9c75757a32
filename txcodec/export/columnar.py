"""Common conversations as Arrow tables: the columnar form behind ``export --to parquet``.

Six tables, one row per thing people count (``schemas/columnar.md`` documents every
column):

* ``sessions`` — one row per conversation, subagents included: a child's row names its
  parent in ``parent_key``, so nesting flattens into one table;
* ``messages`` — one row per message, with role, time, model, stop reason and usage;
* ``blocks`` — one row per content block, with its text, tool name, kind and ids;
* ``tool_calls`` — a call joined to its result, with the duration where both are dated;
* ``usage`` — one row per message that reported usage, verified or not;
* ``changes`` — one row per file a tool call changed (:mod:`txcodec.model.changes`), with its diff.

The query columns are views of the data. What a column cannot hold exactly (a field's
absence as opposed to ``null``, a block's rarer fields, ``extra`` bags) rides in a
``rest`` column of JSON, so :func:`conversations` rebuilds every conversation exactly from
``sessions``, ``messages`` and ``blocks``: the Parquet files are a lossless form of Common.
The bulky parts (texts, tool inputs) are stored once, in their own columns.

pyarrow is an optional dependency (``pip install 'txcodec[parquet]'``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from ..model import summary as session_summary
from ..model.common import Block
from ..model.common import Child
from ..model.common import ChildLink
from ..model.common import Conversation
from ..model.common import Epoch
from ..model.common import Message
from ..model.common import Meta
from ..model.common import Text
from ..model.common import ToolResult
from ..model.common import ToolUse
from ..model.common import Usage

TABLES = ("sessions", "messages", "blocks", "tool_calls", "usage", "changes")

_encoder = msgspec.json.Encoder()


def _valid_utf8(value: Any) -> Any:
    """``value`` (plain Python) with each lone surrogate made U+FFFD: Common JSON keeps
    them (a source may escape one), but a Parquet string column is UTF-8."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_valid_utf8(k): _valid_utf8(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_valid_utf8(v) for v in value]
    return value


def _encode(value: Any) -> bytes:
    try:
        return _encoder.encode(value)
    except UnicodeEncodeError:  # rare: only Common JSON brings lone surrogates
        return _encoder.encode(_valid_utf8(msgspec.to_builtins(value)))


def _encode_lines(rows: list[dict[str, Any]]) -> bytes:
    try:
        return _encoder.encode_lines(rows)
    except UnicodeEncodeError:
        return _encoder.encode_lines(_valid_utf8(msgspec.to_builtins(rows)))


_decode = msgspec.json.decode

# The block fields that have a column of their own; the rest go to ``rest``.
_TEXT_FIELD = {"text": "text", "thinking": "thinking", "command": "output"}


@dataclass(frozen=True)
class Source:
    """Where a conversation came from: the native file, for the ``sessions`` table and
    for incremental export (a source whose size, mtime and hash are unchanged is skipped)."""

    harness: str
    path: str | None = None
    sha256: str | None = None
    size: int | None = None
    mtime: float | None = None


_MISSING = "the columnar form needs pyarrow: pip install 'txcodec[parquet]'"


def _pa() -> Any:
    try:
        import pyarrow
    except ImportError as exc:  # an optional extra
        from ..core.errors import TxcodecError

        raise TxcodecError(_MISSING) from exc
    return pyarrow


def require_pyarrow() -> None:
    """Fail now, with the install hint, when pyarrow is missing (without importing it)."""
    from importlib.util import find_spec

    if find_spec("pyarrow") is None:
        from ..core.errors import TxcodecError

        raise TxcodecError(_MISSING)


_schemas: dict[str, Any] = {}


def schemas() -> dict[str, Any]:
    """The Arrow schema of every table, by name (built once)."""
    if not _schemas:
        _schemas.update(_build_schemas())
    return _schemas


def encode_rows(rows: list[dict[str, Any]]) -> bytes:
    """Rows as JSON lines, for :func:`table_from_json`: a few bytes that cross between
    processes cheaply and are joined by concatenation."""
    return _encode_lines(rows)


def table_from_json(name: str, lines: bytes) -> Any:
    """The Arrow table ``name`` from rows encoded by :func:`encode_rows`. Arrow's JSON
    reader builds the columns in C++, several times faster than ``Table.from_pylist``
    (and, unlike it, without importing pandas), to the same table."""
    pa = _pa()
    import pyarrow.json as pj

    schema = schemas()[name]
    if not lines:
        return schema.empty_table()
    table = pj.read_json(
        pa.py_buffer(lines),
        read_options=pj.ReadOptions(block_size=len(lines) + 1, use_threads=False),
        parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"),
    )
    return table.select(schema.names)


def _build_schemas() -> dict[str, Any]:
    pa = _pa()
    usage = pa.struct(
        [
            ("input_tokens", pa.int64()),
            ("output_tokens", pa.int64()),
            ("cache_creation_input_tokens", pa.int64()),
            ("cache_read_input_tokens", pa.int64()),
            ("reasoning_output_tokens", pa.int64()),
        ]
    )
    return {
        "sessions": pa.schema(
            [
                ("session_key", pa.string()),
                ("parent_key", pa.string()),
                ("harness", pa.string()),
                ("session_id", pa.string()),
                ("project", pa.string()),
                ("cwd", pa.string()),
                ("title", pa.string()),
                ("started", pa.string()),
                ("updated", pa.string()),
                ("date", pa.string()),
                ("models", pa.list_(pa.string())),
                ("agent_type", pa.string()),
                ("description", pa.string()),
                ("spawn_depth", pa.int32()),
                ("link_via", pa.string()),
                ("link_tool_use_id", pa.string()),
                ("message_count", pa.int64()),
                ("source_path", pa.string()),
                ("source_sha256", pa.string()),
                ("source_size", pa.int64()),
                ("source_mtime", pa.float64()),
                ("rest", pa.string()),
            ]
        ),
        "messages": pa.schema(
            [
                ("session_key", pa.string()),
                ("message_index", pa.int32()),
                ("role", pa.string()),
                ("timestamp", pa.string()),
                ("model", pa.string()),
                ("stop_reason", pa.string()),
                ("message_id", pa.string()),
                ("usage", usage),
                ("usage_unverified", usage),
                ("synthetic", pa.bool_()),
                ("compact_summary", pa.bool_()),
                ("interrupted", pa.bool_()),
                ("api_error", pa.bool_()),
                ("is_meta", pa.bool_()),
                ("origin", pa.string()),
                ("block_count", pa.int32()),
                ("rest", pa.string()),
            ]
        ),
        "blocks": pa.schema(
            [
                ("session_key", pa.string()),
                ("message_index", pa.int32()),
                ("position", pa.int32()),
                ("type", pa.string()),
                ("text", pa.string()),
                ("tool_name", pa.string()),
                ("kind", pa.string()),
                ("tool_use_id", pa.string()),
                ("is_error", pa.bool_()),
                ("input", pa.string()),  # a tool call's input, as JSON
                ("rest", pa.string()),
            ]
        ),
        "tool_calls": pa.schema(
            [
                ("session_key", pa.string()),
                ("tool_use_id", pa.string()),
                ("tool_name", pa.string()),
                ("kind", pa.string()),
                ("call_message_index", pa.int32()),
                ("result_message_index", pa.int32()),
                ("is_error", pa.bool_()),
                ("error_unknown", pa.bool_()),
                ("called_at", pa.string()),
                ("answered_at", pa.string()),
                ("duration_ms", pa.int64()),
            ]
        ),
        "changes": pa.schema(
            [
                ("session_key", pa.string()),
                ("tool_use_id", pa.string()),
                ("tool", pa.string()),
                ("path", pa.string()),
                ("moved_to", pa.string()),
                ("operation", pa.string()),
                ("basis", pa.string()),
                ("captured_by", pa.string()),
                ("before_sha256", pa.string()),
                ("after_sha256", pa.string()),
                ("diff", pa.string()),
            ]
        ),
        "usage": pa.schema(
            [
                ("session_key", pa.string()),
                ("message_index", pa.int32()),
                ("timestamp", pa.string()),
                ("model", pa.string()),
                ("verified", pa.bool_()),
                ("input_tokens", pa.int64()),
                ("output_tokens", pa.int64()),
                ("cache_creation_input_tokens", pa.int64()),
                ("cache_read_input_tokens", pa.int64()),
                ("reasoning_output_tokens", pa.int64()),
            ]
        ),
    }


# --- Common -> rows ----------------------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _usage(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, Usage):
        return None
    # a count past int64 (Common JSON may hold any integer) has no column value: the
    # message's ``rest`` keeps it, so the table still rebuilds the conversation exactly
    return {name: _int(value) for name, value in msgspec.structs.asdict(usage).items()}


def _int(value: Any, bits: int = 64) -> int | None:
    """``value`` when it is an integer the column's type holds, else None."""
    limit = 1 << (bits - 1)
    return value if isinstance(value, int) and -limit <= value < limit else None


def day(timestamp: Any) -> str:
    """The partition date: the day a session started, ``unknown`` when it has no time."""
    return timestamp[:10] if isinstance(timestamp, str) and len(timestamp) >= 10 else "unknown"


def _block_row(key: str, index: int, position: int, block: Any) -> dict[str, Any]:
    # the commonest blocks, field by field (the same row as the general way below, which
    # lays every block out as JSON data first)
    kind = type(block)
    if kind is Text and isinstance(block.text, str):
        return {
            "session_key": key,
            "message_index": index,
            "position": position,
            "type": "text",
            "text": block.text,
            "tool_name": None,
            "kind": None,
            "tool_use_id": None,
            "is_error": None,
            "input": None,
            "rest": None,
        }
    if kind is ToolUse and block.input is not msgspec.UNSET:
        return {
            "session_key": key,
            "message_index": index,
            "position": position,
            "type": "tool_use",
            "text": None,
            "tool_name": block.name,
            "kind": block.kind,
            "tool_use_id": block.id,
            "is_error": None,
            "input": None if block.input is None else _encode(block.input).decode(),
            "rest": None,
        }
    data = msgspec.to_builtins(block)
    kind = data.pop("type")
    row: dict[str, Any] = {
        "session_key": key,
        "message_index": index,
        "position": position,
        "type": kind,
        "text": None,
        "tool_name": None,
        "kind": None,
        "tool_use_id": None,
        "is_error": None,
        "input": None,
    }
    text_field = _TEXT_FIELD.get(kind)
    if text_field is not None and isinstance(data.get(text_field), str):
        row["text"] = data.pop(text_field)
    if isinstance(block, ToolUse):
        row.update(tool_name=data.pop("name"), tool_use_id=data.pop("id"), kind=data.pop("kind", "generic"))
        if "input" in data:
            row["input"] = _encode(data.pop("input")).decode()
    elif isinstance(block, ToolResult):
        row["tool_use_id"] = data.pop("tool_use_id")
        if "is_error" in data:  # absent (unknown) stays apart from false
            row["is_error"] = data.pop("is_error")
        if isinstance(data.get("content"), str):
            row["text"] = data.pop("content")
    row["rest"] = _encode(data).decode() if data else None
    return row


def _message_rows(key: str, index: int, message: Message, out: dict[str, list[dict[str, Any]]]) -> None:
    usage, unverified = _usage(message.usage), _usage(message.usage_unverified)
    out["messages"].append(
        {
            "session_key": key,
            "message_index": index,
            "role": message.role,
            "timestamp": _str(message.timestamp),
            "model": _str(message.model),
            "stop_reason": _str(message.stop_reason),
            "message_id": _str(message.id),
            "usage": usage,
            "usage_unverified": unverified,
            "synthetic": message.synthetic,
            "compact_summary": message.compact_summary,
            "interrupted": message.interrupted,
            "api_error": message.api_error,
            "is_meta": message.meta,
            "origin": _str(message.origin),
            "block_count": len(message.content),
            # the message but its blocks (they have rows of their own; an empty list is left out)
            "rest": _encode(msgspec.structs.replace(message, content=[])).decode(),
        }
    )
    for position, block in enumerate(message.content):
        out["blocks"].append(_block_row(key, index, position, block))
    for verified, counts in ((True, usage), (False, unverified)):
        if counts is not None:
            out["usage"].append(
                {
                    "session_key": key,
                    "message_index": index,
                    "timestamp": _str(message.timestamp),
                    "model": _str(message.model),
                    "verified": verified,
                    **counts,
                }
            )


def _flags_failed_results(harness: Any) -> bool:
    """Whether the source harness flags every failed result, so an unflagged one succeeded."""
    if not isinstance(harness, str):
        return False
    from ..kit import registry

    found = registry.find(harness)
    return found is not None and found.flags_failed_results


def _tool_call_rows(key: str, conversation: Conversation) -> list[dict[str, Any]]:
    """A call joined to its first result. ``is_error`` is the result's outcome where the
    source says it (an unflagged result of a harness that flags failures is a success),
    null where it does not; ``error_unknown`` says which (docs/dataset.md#tool-failures)."""
    flagged = _flags_failed_results(conversation.meta.source_harness)
    calls: dict[str, dict[str, Any]] = {}
    for index, message in enumerate(conversation.messages):
        for block in message.content:
            if isinstance(block, ToolUse) and block.id not in calls:
                calls[block.id] = {
                    "session_key": key,
                    "tool_use_id": block.id,
                    "tool_name": block.name,
                    "kind": block.kind,
                    "call_message_index": index,
                    "result_message_index": None,
                    "is_error": None,
                    "error_unknown": True,
                    "called_at": _str(message.timestamp),
                    "answered_at": None,
                    "duration_ms": None,
                }
            elif isinstance(block, ToolResult) and block.tool_use_id in calls:
                call = calls[block.tool_use_id]
                if call["result_message_index"] is None:
                    failed = block.is_error if block.is_error is not None else (False if flagged else None)
                    call.update(
                        result_message_index=index,
                        is_error=failed,
                        error_unknown=failed is None,
                        answered_at=_str(message.timestamp),
                    )
                    call["duration_ms"] = _millis_between(call["called_at"], call["answered_at"])
    return list(calls.values())


def _change_rows(key: str, conversation: Conversation) -> list[dict[str, Any]]:
    from ..kit.changes import conversation_changes
    from ..model.changes import unified_diff

    return [
        {
            "session_key": key,
            "tool_use_id": change.tool_use_id,
            "tool": change.tool,
            "path": _str(change.path),
            "moved_to": _str(change.moved_to),
            "operation": change.operation,
            "basis": change.basis,
            "captured_by": change.captured_by,
            "before_sha256": _str(change.before_sha256),
            "after_sha256": _str(change.after_sha256),
            "diff": unified_diff(change) if change.hunks else None,
        }
        for change in conversation_changes(conversation, subagents=False)
    ]


def _millis_between(start: str | None, end: str | None) -> int | None:
    if start is None or end is None:
        return None
    try:
        delta = datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(
            start.replace("Z", "+00:00")
        )
    except (ValueError, TypeError):  # not a time, or one with an offset and one without (no clock in common)
        return None
    return round(delta.total_seconds() * 1000)


def _session_rows(
    conversation: Conversation,
    key: str,
    parent: str | None,
    source: Source,
    child: Child | None,
    out: dict[str, list[dict[str, Any]]],
) -> None:
    meta = conversation.meta
    rest: dict[str, Any] = {
        "meta": msgspec.to_builtins(meta),
        "epochs": msgspec.to_builtins(conversation.epochs),
        "version": conversation.version,
    }
    if child is not None:
        rest["child"] = msgspec.to_builtins(msgspec.structs.replace(child, conversation=Conversation()))
        del rest["child"]["conversation"]
    link = child.link if child is not None else None
    out["sessions"].append(
        {
            "session_key": key,
            "parent_key": parent,
            "harness": source.harness,
            "session_id": _str(meta.id),
            "project": _project(meta.cwd),
            "cwd": _str(meta.cwd),
            "title": session_summary.title(conversation),
            "started": _str(meta.started_at),
            "updated": _str(meta.ended_at),
            "date": day(meta.started_at),
            "models": list(meta.models),
            "agent_type": _str(child.agent_type) if child is not None else None,
            "description": _str(child.description) if child is not None else None,
            "spawn_depth": _int(child.spawn_depth, 32) if child is not None else 0,
            "link_via": link.via if link is not None else None,
            "link_tool_use_id": _str(link.tool_use_id) if link is not None else None,
            "message_count": session_summary.message_count(conversation),
            "source_path": source.path if parent is None else None,
            "source_sha256": source.sha256 if parent is None else None,
            "source_size": source.size if parent is None else None,
            "source_mtime": source.mtime if parent is None else None,
            "rest": _encode(rest).decode(),
        }
    )
    for index, message in enumerate(conversation.messages):
        _message_rows(key, index, message, out)
    out["tool_calls"].extend(_tool_call_rows(key, conversation))
    out["changes"].extend(_change_rows(key, conversation))
    for number, sub in enumerate(conversation.children):
        name = sub.link.agent_id if isinstance(sub.link.agent_id, str) else str(number)
        _session_rows(sub.conversation, f"{key}/{number}:{name}", key, source, sub, out)


def _project(cwd: Any) -> str | None:
    if not isinstance(cwd, str) or not cwd:
        return None
    return cwd.rstrip("/").rsplit("/", 1)[-1] or cwd


def session_key(conversation: Conversation, source: Source) -> str:
    """The key every row of a source's main conversation shares: a hash of the source
    path, because ids are not unique across files (a session copied to two project
    folders keeps its id); ``<harness>:<id>`` for a conversation with no source file."""
    if source.path is not None:
        return hashlib.sha256(source.path.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    ident = conversation.meta.id if isinstance(conversation.meta.id, str) else "?"
    return f"{source.harness}:{ident}"


def rows(conversation: Conversation, source: Source) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table for one conversation and its subagents (plain Python)."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    _session_rows(conversation, session_key(conversation, source), None, source, None, out)
    return out


def tables(items: Iterable[tuple[Conversation, Source]]) -> dict[str, Any]:
    """Arrow tables of every conversation in ``items``."""
    merged: dict[str, list[bytes]] = {name: [] for name in TABLES}
    for conversation, source in items:
        for name, part in rows(conversation, source).items():
            merged[name].append(encode_rows(part))
    return {name: table_from_json(name, b"".join(merged[name])) for name in TABLES}


# --- rows -> Common ----------------------------------------------------------------------


def _block(row: dict[str, Any]) -> Any:
    data: dict[str, Any] = _decode(row["rest"]) if row["rest"] is not None else {}
    kind = row["type"]
    data["type"] = kind
    text_field = _TEXT_FIELD.get(kind)
    if text_field is not None and row["text"] is not None:
        data[text_field] = row["text"]
    if kind == "tool_use":
        data.update(id=row["tool_use_id"], name=row["tool_name"])
        if row["kind"] != "generic":  # left to the default, so it encodes as before (omitted)
            data["kind"] = row["kind"]
        if row["input"] is not None:
            data["input"] = _decode(row["input"])
    elif kind == "tool_result":
        data["tool_use_id"] = row["tool_use_id"]
        if row["is_error"] is not None:
            data["is_error"] = row["is_error"]
        if row["text"] is not None:
            data["content"] = row["text"]
    return msgspec.convert(data, Block)


def conversations(tables: dict[str, Any]) -> list[Conversation]:
    """Rebuild the Common conversations from the ``sessions``, ``messages`` and ``blocks``
    tables (Arrow tables, e.g. read back from Parquet), main sessions in row order."""
    sessions = tables["sessions"].to_pylist()
    blocks: dict[tuple[str, int], list[tuple[int, Any]]] = {}
    for row in tables["blocks"].to_pylist():
        blocks.setdefault((row["session_key"], row["message_index"]), []).append((row["position"], _block(row)))
    messages: dict[str, list[tuple[int, Message]]] = {}
    for row in tables["messages"].to_pylist():
        data = _decode(row["rest"])
        content = [
            block
            for _, block in sorted(blocks.get((row["session_key"], row["message_index"]), []), key=lambda item: item[0])
        ]
        message = msgspec.convert(data, Message)
        message.content = content
        messages.setdefault(row["session_key"], []).append((row["message_index"], message))
    built: dict[str, Conversation] = {}
    children: dict[str, list[Child]] = {}
    roots: list[Conversation] = []
    for row in sessions:
        rest = _decode(row["rest"])
        conversation = Conversation(
            version=rest["version"],
            meta=msgspec.convert(rest["meta"], Meta),
            messages=[m for _, m in sorted(messages.get(row["session_key"], []), key=lambda item: item[0])],
            epochs=msgspec.convert(rest["epochs"], list[Epoch]),
        )
        built[row["session_key"]] = conversation
        if row["parent_key"] is None:
            roots.append(conversation)
        else:
            child = rest["child"]
            children.setdefault(row["parent_key"], []).append(
                Child(
                    link=msgspec.convert(child["link"], ChildLink),
                    conversation=conversation,
                    agent_type=child.get("agent_type", msgspec.UNSET),
                    description=child.get("description", msgspec.UNSET),
                    spawn_depth=child.get("spawn_depth", 1),
                )
            )
    for key, kids in children.items():
        built[key].children = kids  # rows keep the order the children had
    return roots
