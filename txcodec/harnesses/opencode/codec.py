"""opencode export codec: the export document -> :class:`~.records.Export`, and back.

``opencode export`` pretty-prints the document over many lines (two spaces, a final LF);
:func:`~txcodec.model.native.decode_document` keeps it as one "line" that this codec decodes
whole. Anything that is not an export stays :class:`~txcodec.model.native.Opaque` with its
bytes. Decoding never raises. Kilo's exports are the same documents.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.native import Opaque, json_source, merge_record, opaque_for, repairs_surrogates
from .records import Export

_decoder = msgspec.json.Decoder(Export)


class OpencodeCodec:
    def __init__(self, name: str) -> None:
        self.name = name

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            return _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc, tag="info")

    def encode(self, record: Any, original: bytes | None) -> bytes:
        if isinstance(record, Opaque):
            return record.raw
        return merge_record(record, original)


CODEC = OpencodeCodec("opencode")
