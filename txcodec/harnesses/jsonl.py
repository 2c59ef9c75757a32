"""Generic JSONL: the fallback for a file no harness recognizes (empty, or nothing but
garbage). Every line is opaque, so its bytes still round-trip."""

from __future__ import annotations

from typing import Any

from ..kit.registry import Harness
from ..model.native import Opaque


class GenericCodec:
    name = "jsonl"

    def decode(self, line: bytes) -> Any:
        return Opaque(line, "generic JSONL: no harness recognized this file")

    def encode(self, record: Any, original: bytes | None) -> bytes:
        if isinstance(record, Opaque):
            return record.raw
        raise TypeError("a generic JSONL session holds only opaque lines")


HARNESS = Harness(name="jsonl", title="Generic JSONL", codec=GenericCodec(), detect=lambda sample: 0)
