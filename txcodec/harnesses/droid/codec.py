"""droid line codec: bytes -> :class:`~.records.Record`, and back.

A line that is not a typed record becomes an :class:`~txcodec.model.native.Opaque` record that
keeps its bytes. Decoding never raises.
"""

from __future__ import annotations

from ...kit.codec import JsonCodec
from .records import Record


class DroidCodec(JsonCodec):
    name = "droid"
    record = Record


CODEC = DroidCodec()
