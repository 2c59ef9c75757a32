"""Which harness wrote a file, from its first lines (:func:`detect`).

A first line that opens the way one client's own serializer opens its files
(:data:`registry.SIGNATURES`) names that harness at once: nothing is decoded (the reader
then decodes each line once) and no other harness is imported. Any other file is decoded
up to ``_SAMPLE_LINES`` lines and scored by every built-in harness's ``detect``, and by the
plugins' when none claims it.
This module imports neither the harnesses nor :mod:`txcodec.model.native`, so ``txcodec usage``
pays only for what it reads.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import guarded
from ..core.errors import strict
from ..core.jsonl import BOM
from . import registry

_SAMPLE_LINES = 40
_decoder = msgspec.json.Decoder()


def is_document(path: Path) -> bool:
    """A ``.json`` file (or ``.json.zst``) is one JSON document, not JSON Lines."""
    suffixes = path.suffixes[-2:]
    return path.suffix == ".json" or suffixes == [".json", ".zst"]


_OPENS_OBJECT = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*\{")


def spread_document(data: bytes) -> bool:
    """True when ``data`` opens a JSON object whose first line does not close it (and the
    whole is one document). Every line of a JSON Lines file is a whole value, so its first
    line ends with the ``}`` of its object; telling them apart costs one line's scan, and
    the whole is decoded only when the first line leaves the object open."""
    opened = _OPENS_OBJECT.match(data)
    if opened is None:
        return False
    end = data.find(b"\n", opened.end())
    return end != -1 and not data[opened.start() : end].rstrip().endswith(b"}")


@guarded
def detect(data: bytes) -> str:
    """The harness whose format the leading lines match best; ``jsonl`` when none does."""
    return detect_lines(_leading_lines(data))


def detect_lines(lines: Iterable[bytes | memoryview]) -> str:
    """:func:`detect` from lines already split (no LF; blank ones are skipped), e.g. the
    head of a file being streamed; only the first ``_SAMPLE_LINES`` count."""
    lines = (line for line in lines if not _blank(line))
    first = next(lines, None)
    if first is None:
        return _scored([])
    known = registry.sniff(first)
    return known if known is not None else _scored(itertools.chain((first,), lines))


def _scored(lines: Iterable[bytes | memoryview]) -> str:
    """The harness whose detector scores the first ``_SAMPLE_LINES`` non-blank lines best."""
    sample: list[Any] = []
    for line in itertools.islice(lines, _SAMPLE_LINES):
        try:
            sample.append(_shallow(line[3:] if line[:3] == BOM else line))
        except (msgspec.DecodeError, RecursionError):  # msgspec: RecursionError when nested too deeply
            sample.append(None)
    return _best_harness(sample)


_SHALLOW_LIMIT = 1 << 16
_raw_object = msgspec.json.Decoder(dict[str, msgspec.Raw])
_raw_array = msgspec.json.Decoder(list[msgspec.Raw])


def _shallow(line: bytes | memoryview | msgspec.Raw) -> Any:
    """The value of a line, for detection: in full when small; a huge one (a 100 MB
    prompt) keeps every key and every small value, but a long string inside it reads as
    ``""``, so sniffing never builds a second copy of the line."""
    if len(line) <= _SHALLOW_LIMIT:
        return _decoder.decode(line)
    head = bytes(memoryview(line)[:64]).lstrip()[:1]
    if head == b"{":
        return {k: _shallow(v) for k, v in _raw_object.decode(line).items()}
    if head == b"[":
        return [_shallow(v) for v in _raw_array.decode(line)]
    if head == b'"':
        return ""
    return _decoder.decode(line)


def _blank(line: bytes | memoryview) -> bool:
    return not bytes(line[:64]).strip() and not bytes(line).strip()  # copies only a blank head


def _leading_lines(data: bytes, budget: int = 1 << 20) -> Iterator[bytes]:
    """Up to ``_SAMPLE_LINES`` non-blank lines, whole, until about ``budget`` bytes were
    taken: a first line over the budget is still taken whole (cutting it would make a
    session that opens with a 2 MB prompt look like garbage)."""
    start, size, taken, count = 0, len(data), 0, 0
    while start < size and taken < budget and count < _SAMPLE_LINES:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        line, start = data[start:end], end + 1
        if not _blank(line):
            taken, count = taken + len(line), count + 1
            yield line


def _best_harness(sample: list[Any]) -> str:
    """The built-in harness whose detector scores ``sample`` best; the plugins' detectors
    only when none claims it (looking up the entry points costs more than reading a small
    session: a file of a built-in format never pays for it)."""
    best = _best_of(registry.builtins(), sample)
    if best == "jsonl":
        best = _best_of({n: h for n, h in registry.harnesses().items() if n not in registry.BUILTIN}, sample)
    return best


def _best_of(candidates: dict[str, Any], sample: list[Any]) -> str:
    best, best_score = "jsonl", 0
    for name, harness in candidates.items():
        try:
            score = harness.detect(sample)
        except Exception:  # a detector with a bug (or a plugin's) claims nothing
            if strict():
                raise
            continue
        if score > best_score:
            best, best_score = name, score
    return best
