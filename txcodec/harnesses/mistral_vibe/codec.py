"""Mistral Vibe line codec: bytes -> :class:`~.records.Line`, and back.

A line that is not a JSON object (or whose known keys have the wrong type) becomes an
:class:`~txcodec.model.native.Opaque` record that keeps its bytes. Decoding never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.native import json_source, merge_record, opaque_for, repairs_surrogates
from .records import Line

_decoder = msgspec.json.Decoder(Line)


class MistralVibeCodec:
    name = "mistral_vibe"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            return _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc, "role")

    def encode(self, record: Any, original: bytes | None) -> bytes:
        return merge_record(record, original)


CODEC = MistralVibeCodec()
