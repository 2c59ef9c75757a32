"""Qwen Code line codec: bytes -> :class:`~.records.Record`, and back.

A line that is not an object with the identity fields and a known ``type`` (or whose
parts do not fit :class:`~.records.Part`) becomes an :class:`~txcodec.model.native.Opaque`
record that keeps its bytes: it rides along untouched. Decoding never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...kit.codec import JsonCodec
from ...model.native import json_source
from ...model.native import opaque_for
from ...model.native import repairs_surrogates
from .records import RECORD_TYPES
from .records import Record

_decoder = msgspec.json.Decoder(Record)


class QwenCodeCodec(JsonCodec):
    """A record of a type the CLI does not write is opaque too."""

    name = "qwen_code"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            record = _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc)
        if record.type not in RECORD_TYPES:
            return opaque_for(line, ValueError(f"unknown record type {record.type!r}"))
        return record


CODEC = QwenCodeCodec()
