"""Kimi CLI line codec: bytes -> :class:`~.records.Record`, and back.

A line that is not an object with a string ``role`` becomes an
:class:`~txcodec.model.native.Opaque` record that keeps its bytes. Decoding never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.native import json_source, merge_record, opaque_for, repairs_surrogates
from .records import Record

_decoder = msgspec.json.Decoder(Record)


class KimiCliCodec:
    name = "kimi_cli"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            return _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc, "role")

    def encode(self, record: Any, original: bytes | None) -> bytes:
        return merge_record(record, original)


CODEC = KimiCliCodec()
