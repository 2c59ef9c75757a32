"""Continue CLI codec: the session document -> :class:`~.records.Session`, and back.

The client pretty-prints the file over many lines; :func:`~txcodec.model.native.decode_document`
keeps it as one "line" that this codec decodes whole (a one-line file decodes the same
way). Whatever is not a session object stays :class:`~txcodec.model.native.Opaque` with its
bytes. Decoding never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.native import Opaque, json_source, merge_record, opaque_for, repairs_surrogates
from .records import Session

_decoder = msgspec.json.Decoder(Session)


class ContinueCliCodec:
    name = "continue_cli"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            return _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc, tag="sessionId")

    def encode(self, record: Any, original: bytes | None) -> bytes:
        if isinstance(record, Opaque):
            return record.raw
        return merge_record(record, original)


CODEC = ContinueCliCodec()
