"""Mistral Vibe line codec: bytes -> :class:`~.records.Line`, and back.

A line that is not a JSON object (or whose known keys have the wrong type) becomes an
:class:`~txcodec.model.native.Opaque` record that keeps its bytes. Decoding never raises.
"""

from __future__ import annotations

from ...kit.codec import JsonCodec
from .records import Line


class MistralVibeCodec(JsonCodec):
    name = "mistral_vibe"
    record = Line
    tag = "role"


CODEC = MistralVibeCodec()
