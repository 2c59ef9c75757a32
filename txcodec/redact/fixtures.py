"""``txcodec fixtures``: a fixture set built from a real store. For each shape a harness
declares (``Harness.fixtures``: the seed's fixture checklist), the first record in the store
that holds it is found, cut down to a minimal session (the record, the records it links to,
the session's header), redacted, checked to verify byte-identically and load without
diagnostics, and written with a MANIFEST (docs/redact.md#fixtures)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import InputError
from ..kit import registry
from . import Redactor
from . import Report
from . import _harness_of


class Fixture(msgspec.Struct):
    shape: str
    harness: str
    predicate: str
    file: str | None = None  # relative to the output folder; None: not found
    lines: int = 0
    source_version: str | None = None
    private: bool = False


class FixturesReport(msgspec.Struct):
    fixtures: list[Fixture] = msgspec.field(default_factory=list)
    redaction: Report = msgspec.field(default_factory=Report)
    rejected: list[tuple[str, str]] = msgspec.field(default_factory=list)  # (shape, why a cut was not kept)

    @property
    def missing(self) -> list[Fixture]:
        return [f for f in self.fixtures if f.file is None]


def _decode(line: bytes) -> Any:
    try:
        return msgspec.json.decode(line)
    except msgspec.DecodeError:
        return None


def _checked(data: bytes, harness: str) -> str | None:
    """Why ``data`` is no good fixture (None: it loads without diagnostics and dumps to itself)."""
    from ..kit.load import load

    try:
        session = load(data, harness)
    except (InputError, ValueError) as exc:
        return f"does not load: {type(exc).__name__}"
    if session.harness != harness:
        return f"reads as {session.harness}"
    if session.diagnostics:
        return f"{len(session.diagnostics)} line(s) kept only as bytes"
    if session.dump() != data:
        return "does not round-trip byte for byte"
    return None


def build_fixtures(
    stores: Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None,
    redactor: Redactor,
) -> FixturesReport:
    """Find, cut, redact and (unless ``out`` is None) write a fixture per declared shape."""
    from ..core.atomic import write_atomic

    report = FixturesReport()
    files: list[Path] = []
    for store in stores:
        path = Path(store)
        if not path.exists():
            raise InputError(f"{path}: no such file or folder")
        files += sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
    wanted: dict[str, dict[str, Any]] = {}  # harness -> shape name -> shape, still to find
    found: dict[tuple[str, str], Fixture] = {}
    for file in files:
        data = file.read_bytes()
        harness = _harness_of(file, data)
        declared = registry.find(harness).fixtures if harness else None
        if declared is None:
            continue
        if harness not in wanted:
            wanted[harness] = {shape.name: shape for shape in declared.shapes}
            for shape in declared.shapes:
                found[harness, shape.name] = Fixture(shape.name, harness, shape.predicate, private=shape.private)
        todo = wanted[harness]
        if not todo:
            continue
        lines = data.split(b"\n")
        final = lines[-1] == b""
        if final:
            lines.pop()
        records = [_decode(line) for line in lines]
        redactor.learn(data)
        for index, record in enumerate(records):
            if not isinstance(record, dict):
                continue
            for name, shape in list(todo.items()):
                try:
                    hit = shape.test(record)
                except (KeyError, TypeError, AttributeError):
                    hit = False
                if not hit:
                    continue
                kept = declared.cut(records, index)
                cut = b"\n".join(lines[i] for i in kept) + b"\n"
                why = _checked(cut, harness)
                if why is None:
                    rel = f"{harness}/{name}/{redactor.redact_name(file.name)}"
                    redacted = redactor.redact_bytes(cut, rel, report.redaction, harness)
                    why = _checked(redacted, harness)
                if why is not None:
                    report.rejected.append((name, why))
                    continue
                fixture = found[harness, name]
                fixture.file, fixture.lines = rel, len(kept)
                version = record.get("version")
                fixture.source_version = version if isinstance(version, str) else None
                if out is not None:
                    write_atomic(Path(out) / rel, redacted)
                del todo[name]
    report.fixtures = sorted(found.values(), key=lambda f: (f.harness, f.file is None, f.shape))
    if out is not None and report.fixtures:
        rows = ["shape\tharness\tfile\tlines\tsource_version\tprivate\tpredicate"]
        for f in report.fixtures:
            rows.append(
                "\t".join(
                    [
                        f.shape,
                        f.harness,
                        f.file or "(not found)",
                        str(f.lines),
                        f.source_version or "",
                        "yes" if f.private else "",
                        f.predicate,
                    ]
                )
            )
        write_atomic(Path(out) / "MANIFEST.tsv", ("\n".join(rows) + "\n").encode())
    return report
