"""opencode export codec: the export document -> :class:`~.records.Export`, and back.

``opencode export`` pretty-prints the document over many lines (two spaces, a final LF);
:func:`~txcodec.model.native.decode_document` keeps it as one "line" that this codec decodes
whole. Anything that is not an export stays :class:`~txcodec.model.native.Opaque` with its
bytes. Decoding never raises. Kilo's exports are the same documents.
"""

from __future__ import annotations

from ...kit.codec import JsonCodec
from .records import Export


class OpencodeCodec(JsonCodec):
    record = Export
    tag = "info"

    def __init__(self, name: str) -> None:
        self.name = name  # kilo's exports are opencode's: one class, two harness names


CODEC = OpencodeCodec("opencode")
