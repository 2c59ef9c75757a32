"""aider codec: a Markdown line -> :class:`~.records.MarkdownLine`, and back.

A line is text, so every line that is UTF-8 decodes; one that is not stays
:class:`~txcodec.model.native.Opaque` with its bytes (aider reads the file with ``errors="ignore"``
only where it writes it). A line is only ever written back from its own bytes or, when
built by hand, from its prefix and text. Decoding never raises.
"""

from __future__ import annotations

from typing import Any

from ...model.native import Opaque
from .records import HEADER
from .records import TEXT
from .records import TOOL
from .records import USER
from .records import MarkdownLine

PREFIXES = ((USER, "#### "), (HEADER, "# "), (TOOL, "> "))


class AiderCodec:
    name = "aider"

    def decode(self, line: bytes) -> Any:
        try:
            text = bytes(line).decode("utf-8")
        except UnicodeDecodeError:
            return Opaque(bytes(line), "not UTF-8 text")
        for kind, prefix in PREFIXES:
            if text.startswith(prefix):
                return MarkdownLine(kind, text[len(prefix) :])
        return MarkdownLine(TEXT, text)

    def encode(self, record: Any, original: bytes | None) -> bytes:
        if isinstance(record, Opaque):
            return record.raw
        prefix = dict(PREFIXES).get(record.kind, "")
        return (prefix + record.text).encode("utf-8")


CODEC = AiderCodec()
