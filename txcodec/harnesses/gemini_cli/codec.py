"""Gemini CLI codec: one line (or a whole legacy ``.json`` document) -> typed record.

Records have no ``type`` tag, so a line is peeked at as a plain object and classified
the way the CLI's own loader does (``$rewindTo`` string, then ``id`` string, then
``$set`` object, then ``sessionId`` + ``projectHash`` strings; see :mod:`.records`), then
converted to that Struct. Whatever does not fit stays :class:`~txcodec.model.native.Opaque`
with its bytes. The legacy single-object ``session-*.json`` is pretty-printed over many
lines: :func:`~txcodec.model.native.decode_document` keeps it as one "line" and this codec
decodes it whole (a :class:`~.records.Metadata` with ``messages``), and so is a 0.1.x
``checkpoint-<tag>.json`` (a bare list of API contents, :class:`~.records.Checkpoint`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...kit.codec import JsonCodec
from ...model.native import Opaque
from ...model.native import json_source
from ...model.native import opaque_for
from ...model.native import repairs_surrogates
from .records import ApiContent
from .records import Checkpoint
from .records import MessageRecord
from .records import Metadata
from .records import Rewind
from .records import SetRecord

_peek = msgspec.json.Decoder()


def classify(value: Any) -> type | None:
    """The record class for a decoded JSON value, in the CLI's order; ``None`` if none."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("$rewindTo"), str):
        return Rewind
    if isinstance(value.get("id"), str):
        return MessageRecord
    if isinstance(value.get("$set"), dict):
        return SetRecord
    if isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str):
        return Metadata
    return None


class GeminiCodec(JsonCodec):
    """Four record shapes told apart by their keys, as the CLI does, not by one tag."""

    name = "gemini_cli"

    @repairs_surrogates
    def decode(self, line: bytes) -> Any:
        try:
            value = _peek.decode(json_source(line))
        except msgspec.DecodeError as exc:
            return opaque_for(line, exc)
        if is_checkpoint(value):
            try:
                return Checkpoint(msgspec.convert(value, list[ApiContent]))
            except msgspec.ValidationError as exc:
                return Opaque(line, f"invalid 0.1.x checkpoint: {exc}")
        cls = classify(value)
        if cls is None:
            if isinstance(value, dict):
                return Opaque(line, "not a Gemini CLI record: no $rewindTo, id, $set or sessionId+projectHash")
            return opaque_for(line, ValueError("not an object"))
        try:
            return msgspec.convert(value, cls)
        except msgspec.ValidationError as exc:
            return Opaque(line, f"invalid {cls.__name__} record: {exc}")

    def encode(self, record: Any, original: bytes | None) -> bytes:
        if isinstance(record, Checkpoint):  # a bare list, as the CLI wrote it
            return msgspec.json.encode(record.contents)
        return super().encode(record, original)


def is_checkpoint(value: Any) -> bool:
    """A 0.1.x ``/chat save`` file: a non-empty list of ``{role, parts}`` objects."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(c, dict) and isinstance(c.get("parts"), list) and "role" in c for c in value)
    )


CODEC = GeminiCodec()
