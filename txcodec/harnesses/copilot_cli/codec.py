"""Copilot CLI line codec: bytes -> :class:`~.records.Event`, and back.

A line that is not an event envelope (``type``, ``id``, ``timestamp``, ``parentId``) becomes
an :class:`~txcodec.model.native.Opaque` record that keeps its bytes. Decoding never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.native import json_source, merge_record, opaque_for, repairs_surrogates
from .records import Event

_decoder = msgspec.json.Decoder(Event)


class CopilotCliCodec:
    name = "copilot_cli"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            return _decoder.decode(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc)

    def encode(self, record: Any, original: bytes | None) -> bytes:
        return merge_record(record, original)


CODEC = CopilotCliCodec()
