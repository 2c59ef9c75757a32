"""pi line codec: bytes -> typed entry, and back.

A line that is not a known entry (an unknown ``type``, a content block of a new kind,
not JSON) becomes an :class:`~txcodec.model.native.Opaque` record that keeps its bytes and
rides along untouched; the reader still follows its ``id``/``parentId``. Decoding never
raises.
"""

from __future__ import annotations

from ...kit.codec import JsonCodec
from .records import Entry


class PiCodec(JsonCodec):
    name = "pi"
    record = Entry


CODEC = PiCodec()
