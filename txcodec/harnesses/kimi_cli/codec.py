"""Kimi CLI line codec: bytes -> :class:`~.records.Record`, and back.

A line that is not an object with a string ``role`` becomes an
:class:`~txcodec.model.native.Opaque` record that keeps its bytes. Decoding never raises.
"""

from __future__ import annotations

from ...kit.codec import JsonCodec
from .records import Record


class KimiCliCodec(JsonCodec):
    name = "kimi_cli"
    record = Record
    tag = "role"


CODEC = KimiCliCodec()
