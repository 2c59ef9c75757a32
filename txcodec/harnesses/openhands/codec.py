"""OpenHands codec: one event file (or ``base_state.json``) -> a typed record, and back.

Each file of a conversation is one JSON document, kept whole as one "line" of the folder
session (:mod:`.store`). What is neither an event nor the base state stays
:class:`~txcodec.model.native.Opaque` with its bytes. Decoding never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...kit.codec import JsonCodec
from ...model.native import json_source
from ...model.native import opaque_for
from ...model.native import repairs_surrogates
from .records import BaseState
from .records import Event

_event = msgspec.json.Decoder(Event)
_base_state = msgspec.json.Decoder(BaseState)


class OpenHandsCodec(JsonCodec):
    """An event file, else the base state: two record types, tried in turn."""

    name = "openhands"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        source = json_source(line)
        try:
            return _event.decode(source)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            try:
                return _base_state.decode(source)
            except (msgspec.ValidationError, msgspec.DecodeError):
                return opaque_for(line, exc, tag="kind")


CODEC = OpenHandsCodec()
