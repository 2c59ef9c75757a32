"""stream-json line codec: bytes -> typed line, and back.

One msgspec decode into the tagged line union. When it refuses a ``user`` or
``assistant`` line because of its content (an unknown block type, a tool_result whose
content is neither a string nor a block list), the line is still typed and those
values are kept as :class:`msgspec.Raw`. Anything else (not JSON, an unknown ``type``,
a body that fails its schema) becomes :class:`~txcodec.model.native.Opaque` with a diagnostic,
so a line is never lost and decoding never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.native import json_source
from ...model.native import merge_record
from ...model.native import opaque_for
from ...model.native import repairs_surrogates
from ...model.native import tag_of
from ..claude_code.records import BLOCK_TYPES
from ..claude_code.records import ResultPart
from .records import LINE_TYPES
from .records import Line

_decoder = msgspec.json.Decoder(Line)
_any = msgspec.json.Decoder()
_block_decoders = {name: msgspec.json.Decoder(cls) for name, cls in BLOCK_TYPES.items()}


class StreamJsonCodec:
    name = "stream_json"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            return _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return _lenient(line, exc)

    def encode(self, record: Any, original: bytes | None) -> bytes:
        return merge_record(record, original)


def _lenient(line: bytes, error: Exception) -> Any:
    try:
        value = _any.decode(json_source(line))
    except msgspec.DecodeError:
        return opaque_for(line, error)
    if not isinstance(value, dict) or value.get("type") not in ("user", "assistant"):
        return opaque_for(line, error)
    message = value.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return opaque_for(line, error)
    blocks = [_block(b) for b in content]
    message["content"] = []
    try:
        record = msgspec.convert(value, LINE_TYPES[value["type"]])
    except msgspec.ValidationError:
        return opaque_for(line, error)
    record.message.content = blocks
    return record


def _block(value: Any) -> Any:
    raw = msgspec.Raw(msgspec.json.encode(value))
    decoder = _block_decoders.get(tag_of(value))
    if decoder is None:
        return raw
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError:
        if value.get("type") != "tool_result" or "content" not in value:
            return raw
    rest = dict(value)
    inner = rest.pop("content")
    try:
        block = _block_decoders["tool_result"].decode(msgspec.json.encode(rest))
    except msgspec.ValidationError:
        return raw
    block.content = _parts(inner)
    return block


def _parts(value: Any) -> Any:
    if not isinstance(value, list):
        return msgspec.Raw(msgspec.json.encode(value))
    parts = []
    for item in value:
        try:
            parts.append(msgspec.convert(item, ResultPart))
        except msgspec.ValidationError:
            parts.append(msgspec.Raw(msgspec.json.encode(item)))
    return parts


CODEC = StreamJsonCodec()
