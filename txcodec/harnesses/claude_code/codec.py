"""Claude Code line codec: bytes -> typed record, and back.

The fast path is one msgspec decode into the tagged record union. A line that it refuses
takes the lenient path: a known record whose content holds an unknown block type (or a
``tool_result.content`` that is neither a string nor a block list) is still typed, with
those values kept as :class:`msgspec.Raw`; anything else becomes an :class:`Opaque`
record with a diagnostic. Decoding never raises.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import msgspec

from ...core.jsonl import BOM
from ...model.native import Opaque
from ...model.native import bad_tag
from ...model.native import batch_decoder
from ...model.native import json_source
from ...model.native import merge_record
from ...model.native import opaque_for
from ...model.native import repairs_surrogates
from ...model.native import tag_of
from .records import BLOCK_TYPES
from .records import RECORD_TYPES
from .records import UNTAGGED
from .records import PageRecord
from .records import Record
from .records import ResultPart
from .records import StreamedRecord
from .records import UnreadRecord

_decoder = msgspec.json.Decoder(Record)
_dict_decoder = msgspec.json.Decoder()
_part_decoders = {name: msgspec.json.Decoder(cls) for name, cls in BLOCK_TYPES.items()}
_untagged_decoders = {cls: msgspec.json.Decoder(cls) for cls in set(UNTAGGED.values())}
_result_part_decoder = msgspec.json.Decoder(ResultPart)


class ClaudeCodeCodec:
    name = "claude_code"
    accepts_buffers = True  # decode() takes a memoryview: no copy per line at load time

    @repairs_surrogates
    def decode(self, line: bytes | memoryview) -> Any:
        try:
            return _decoder.decode(line[3:] if line[:3] == BOM else line)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return _lenient(bytes(line), exc)

    decode_batch = batch_decoder(_decoder)

    def encode(self, record: Any, original: bytes | None) -> bytes:
        return merge_record(record, original)


def _lenient(line: bytes, error: Exception) -> Any:
    try:
        value = _dict_decoder.decode(json_source(line))
    except msgspec.DecodeError:
        return opaque_for(line, error)
    if isinstance(value, dict) and "type" not in value:
        return _untagged(line, value, error)
    if (opaque := bad_tag(line, value)) is not None:
        return opaque
    kind = tag_of(value)
    if isinstance(kind, str) and kind not in RECORD_TYPES:
        return Opaque(line, f"unknown record type {kind!r}", type=kind)  # rides along verbatim
    cls = RECORD_TYPES.get(kind)
    message = value.get("message") if cls is not None else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return opaque_for(line, error)
    # Type the record without its content, then put the blocks back one by one.
    blocks = [_block(b) for b in content]
    message["content"] = []
    try:
        # re-encoded rather than msgspec.convert()ed: convert cannot fill Raw fields
        record = _decoder.decode(msgspec.json.encode(value))
    except msgspec.ValidationError:
        return opaque_for(line, error)
    if not hasattr(getattr(record, "message", None), "content"):  # a record type whose message is no chat message
        return opaque_for(line, error)
    record.message.content = blocks
    return record


def _untagged(line: bytes, value: dict, error: Exception) -> Any:
    """A side file that is one object without ``type`` (``agent-*.meta.json``,
    ``workflows/wf_*.json``), recognized by the key that marks it."""
    for key, cls in UNTAGGED.items():
        if key in value:
            try:
                return _untagged_decoders[cls].decode(json_source(line))
            except msgspec.ValidationError as exc:
                return Opaque(line, f"invalid {cls.__name__}: {exc}")
    return opaque_for(line, error)


def _block(value: Any) -> Any:
    raw = msgspec.Raw(msgspec.json.encode(value))
    decoder = _part_decoders.get(tag_of(value))
    if decoder is None:
        return raw
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError:
        if value.get("type") != "tool_result" or "content" not in value:
            return raw
    # A tool_result whose content is neither a string nor a block list: keep the rest
    # typed and the content as it was.
    inner = value.pop("content")
    try:
        block = _part_decoders["tool_result"].decode(msgspec.json.encode(value))
    except msgspec.ValidationError:  # another field is off too (``"is_error": 0``): kept as it was
        return raw
    block.content = _result_content(inner)
    return block


def _result_content(value: Any) -> Any:
    if isinstance(value, list):
        parts = []
        for item in value:
            raw = msgspec.json.encode(item)
            try:
                parts.append(_result_part_decoder.decode(raw))
            except msgspec.ValidationError:
                parts.append(msgspec.Raw(raw))
        return parts
    return msgspec.Raw(msgspec.json.encode(value))


class _StreamedCodec(ClaudeCodeCodec):
    """The codec of a streamed read (lines read once, then dropped): a batch decodes its
    user lines' ``toolUseResult`` whole (:class:`.records.StreamedUserRecord`). A batch
    with a line that this refuses (a number past a float's range, kept as bytes by
    :data:`CODEC`) is decoded line by line as :data:`CODEC` decodes it."""

    decode_batch = batch_decoder(msgspec.json.Decoder(StreamedRecord))


class _UnreadCodec(ClaudeCodeCodec):
    """:class:`_StreamedCodec` for a report nobody reads: a batch decodes its ``progress``
    lines lean too (:class:`.records.SkippedProgress`). A line decoded alone is decoded
    as :data:`CODEC` decodes it: either way the reader skips the record, and only the
    unread report could tell."""

    decode_batch = batch_decoder(msgspec.json.Decoder(UnreadRecord))


@lru_cache(maxsize=1)
def _page_batch() -> Any:
    # made on a page's first read: every other read (convert, usage) imports this module
    # and would pay for setting up the decoder's types
    return batch_decoder(msgspec.json.Decoder(PageRecord))


class _PageCodec(ClaudeCodeCodec):
    """:class:`_UnreadCodec` for a read drawn only as a page (:class:`txcodec.model.loss.PageLoss`):
    a batch decodes a user line's ``toolUseResult`` object only by the keys a page shows
    (:class:`.records.PageUserRecord`). A line decoded alone is decoded as :data:`CODEC`
    decodes it, whole."""

    def decode_batch(self, lines: bytes | memoryview) -> list[Any] | None:
        return _page_batch()(self, lines)


CODEC = ClaudeCodeCodec()
STREAMED_CODEC = _StreamedCodec()
UNREAD_CODEC = _UnreadCodec()
PAGE_CODEC = _PageCodec()
