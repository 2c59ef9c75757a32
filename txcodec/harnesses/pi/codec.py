"""pi line codec: bytes -> typed entry, and back.

A line that is not a known entry (an unknown ``type``, a content block of a new kind,
not JSON) becomes an :class:`~txcodec.model.native.Opaque` record that keeps its bytes and
rides along untouched; the reader still follows its ``id``/``parentId``. Decoding never
raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.native import json_source, merge_record, opaque_for, repairs_surrogates
from .records import Entry

_decoder = msgspec.json.Decoder(Entry)


class PiCodec:
    name = "pi"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            return _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc)

    def encode(self, record: Any, original: bytes | None) -> bytes:
        return merge_record(record, original)


CODEC = PiCodec()
