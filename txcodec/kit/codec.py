"""The codec most harnesses share: one JSON value per line (or per document), typed by a
msgspec record type, and encoded back with the bytes of the keys the type does not know.

A harness declares what differs::

    class KimiCliCodec(JsonCodec):
        name = "kimi_cli"
        record = Record  # the msgspec type (or union) one line decodes to
        tag = "role"  # the key that names a record's kind, for an Opaque's diagnostic

Decoding never raises: a line the type refuses becomes an
:class:`~txcodec.model.native.Opaque` keeping its bytes, whose diagnostic says why
(:func:`~txcodec.model.native.opaque_for`); a line refused only for a lone surrogate escape is
decoded again from a repaired copy (:func:`~txcodec.model.native.repairs_surrogates`).
"""

from __future__ import annotations

from typing import Any
from typing import ClassVar

import msgspec

from ..model.native import Opaque
from ..model.native import json_source
from ..model.native import merge_record
from ..model.native import opaque_for
from ..model.native import repairs_surrogates


class JsonCodec:
    """A harness's codec over a JSON record type. A subclass that declares ``record`` gets
    ``decode``; one that decodes its own way (several record types, a check after decoding)
    declares its own ``decode`` instead and keeps ``encode``."""

    name: str
    record: ClassVar[Any]  # the msgspec type (or tagged union) one line decodes to
    tag: ClassVar[str] = "type"  # the key naming a record's kind, for an Opaque's diagnostic

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "record" in cls.__dict__ and "decode" not in cls.__dict__:
            cls.decode = _typed_decode(msgspec.json.Decoder(cls.record), cls.tag)

    def decode(self, line: bytes) -> Any:
        raise NotImplementedError(f"{type(self).__name__} declares neither a record type nor a decode")

    def encode(self, record: Any, original: bytes | None) -> bytes:
        if isinstance(record, Opaque):
            return record.raw
        return merge_record(record, original)


def _typed_decode(decoder: msgspec.json.Decoder, tag: str) -> Any:
    """The ``decode`` of one subclass. Decoding is the hot path of every read, so the decoder
    is built once, when the class is declared, and reached as a closure variable: no
    attribute is looked up per line, as when each codec kept it as a module constant."""
    decode_json = decoder.decode

    @repairs_surrogates
    def decode(self: Any, line: bytes) -> Any:
        try:
            return decode_json(json_source(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return opaque_for(line, exc, tag)

    return decode
