"""Codex rollout line codec: bytes -> typed record, and back.

The fast path is one msgspec decode into the tagged union of envelope lines. A line that
it refuses takes the lenient path: the envelope is typed on its own and the payload is
typed when its ``type`` is known and its shape fits, else kept as :class:`msgspec.Raw`
(an unknown event never makes its line opaque). Line types this codec does not know ride
along as :class:`OtherLine`; 2025 lines without an envelope are recognized, and so is the
0.1.x rollout, one JSON document (:class:`TsRollout`). Only what is
not a JSON object, or lacks any recognizable shape, becomes :class:`Opaque`. Decoding
never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.native import Opaque
from ...model.native import bad_tag
from ...model.native import batch_decoder
from ...model.native import json_source
from ...model.native import merge_record
from ...model.native import opaque_for
from ...model.native import repairs_surrogates
from .records import LINE_TYPES
from .records import PAYLOAD_TYPES
from .records import RESPONSE_ITEM_TYPES
from .records import LegacyMeta
from .records import LegacyState
from .records import OtherLine
from .records import ResponseItem
from .records import RolloutLine
from .records import TsRollout

_decoder = msgspec.json.Decoder(RolloutLine)
_dict_decoder = msgspec.json.Decoder()
_item_decoder = msgspec.json.Decoder(ResponseItem)
_ts_decoder = msgspec.json.Decoder(TsRollout)


class CodexCodec:
    name = "codex"
    accepts_buffers = True  # decode() takes a memoryview: no copy per line at load time

    @repairs_surrogates
    def decode(self, line: bytes | memoryview) -> Any:
        try:
            return _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return _lenient(bytes(line), exc)

    decode_batch = batch_decoder(_decoder)

    def encode(self, record: Any, original: bytes | None) -> bytes:
        if isinstance(record, Opaque):
            return record.raw
        return merge_record(record, original)


def _lenient(line: bytes, error: Exception) -> Any:
    try:
        value = _dict_decoder.decode(json_source(line))
    except msgspec.DecodeError:
        return opaque_for(line, error)
    if not isinstance(value, dict):
        return opaque_for(line, error)
    if "type" not in value and isinstance(value.get("session"), dict) and isinstance(value.get("items"), list):
        try:  # 0.1.x: the whole rollout document, its items kept as their bytes
            return _ts_decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc)
    if (opaque := bad_tag(line, value)) is not None:
        return opaque
    kind = value.get("type")
    if "payload" in value and isinstance(kind, str):
        return _envelope(line, value, kind, error)
    if kind is None and isinstance(value.get("record_type"), str):
        return _convert(line, value, LegacyState, error)
    if kind is None and isinstance(value.get("id"), str):
        return _convert(line, value, LegacyMeta, error)
    if kind in RESPONSE_ITEM_TYPES:
        return _convert(line, value, ResponseItem, error)
    return opaque_for(line, error)


def _envelope(line: bytes, value: dict, kind: str, error: Exception) -> Any:
    cls = LINE_TYPES.get(kind, OtherLine)
    payload = value.pop("payload")
    try:
        record = msgspec.convert(value, cls)
    except msgspec.ValidationError as exc:  # e.g. a timestamp that is not a string
        return opaque_for(line, exc)
    record.payload = _payload(PAYLOAD_TYPES.get(cls), payload)
    return record


def _payload(kind: Any, payload: Any) -> Any:
    if kind is not None:
        try:
            return msgspec.convert(payload, kind)
        except msgspec.ValidationError:
            pass
    return msgspec.Raw(msgspec.json.encode(payload))


def _convert(line: bytes, value: dict, cls: Any, error: Exception) -> Any:
    try:
        return msgspec.convert(value, cls)
    except msgspec.ValidationError as exc:
        return opaque_for(line, exc)


CODEC = CodexCodec()
