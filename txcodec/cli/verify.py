"""``txcodec verify PATH...``: byte-identical round trip, file by file, for CI.

Results stream as each file is checked; on a terminal a progress bar runs on stderr.
``--junit FILE`` writes the results as a JUnit XML report for CI systems."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .. import sessions
from ..core.atomic import write_atomic
from ..core.errors import InputError
from ..kit import registry
from ..verify import Verified
from ..verify import collect
from ..verify import verify_file
from .options import SessionParam
from .options import UsageProblem
from .options import echo_json
from .options import from_option
from .progress import progress


def _paths(names: tuple[str, ...]) -> list[Path]:
    """Paths as they are (a missing one is reported with the results); a name that is
    not a path (an id, a prefix, ``latest``) is looked up in the stores."""
    out = []
    for name in names:
        looks_like_path = os.sep in name or "/" in name or name.endswith(("json", ".zst")) or name.startswith(".")
        if looks_like_path or Path(name).exists():
            out.append(Path(name))
            continue
        try:
            out.append(sessions.resolve(name))
        except InputError as exc:
            raise click.BadParameter(str(exc), param_hint="PATHS") from exc
    return out


def _line(r: Verified) -> str:
    if r.error is not None:
        return f"ERROR  {r.path}: {r.error}"
    if r.ok and r.harness == "jsonl":  # the fallback: no harness recognised the lines
        return f"skip   {r.path}: not a session of any known harness (its {r.lines} lines round-trip as plain JSON)"
    if r.ok:
        opaque = f", {r.opaque} kept as bytes only" if r.opaque else ""
        return f"ok     {r.path} ({r.harness}, {r.lines} lines, {r.bytes} bytes{opaque})"
    return f"DIFF   {r.path}: line {r.difference_line} differs from byte offset {r.first_difference}"


def junit(results: list[Verified]) -> bytes:
    """The results as JUnit XML: one test case per file, a difference a failure, an
    unreadable file an error."""
    failures = sum(1 for r in results if not r.ok and r.error is None)
    errors = sum(1 for r in results if r.error is not None)
    from xml.etree import ElementTree  # only for --junit

    suite = ElementTree.Element(
        "testsuite", name="txcodec verify", tests=str(len(results)), failures=str(failures), errors=str(errors)
    )
    for r in results:
        case = ElementTree.SubElement(suite, "testcase", classname=r.harness or "unknown", name=str(r.path))
        if r.error is not None:
            ElementTree.SubElement(case, "error", message=r.error)
        elif not r.ok:
            ElementTree.SubElement(case, "failure", message=_line(r).split(": ", 1)[1])
    return (
        ElementTree.tostring(ElementTree.ElementTree(suite).getroot(), encoding="utf-8", xml_declaration=True) + b"\n"
    )


def register(group: click.Group) -> None:
    @group.command("verify")
    @click.argument("paths", nargs=-1, required=True, shell_complete=SessionParam().shell_complete)
    @from_option("Read every file as this harness (detected per file when left out).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a result per file.")
    @click.option("--failures-only", is_flag=True, help="Print only the files that fail, and the summary.")
    @click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit status tells.")
    @click.option(
        "--junit",
        "junit_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Also write the results as JUnit XML to this file (replaced if it exists).",
    )
    def verify(
        paths: tuple[str, ...],
        harness: str | None,
        as_json: bool,
        failures_only: bool,
        quiet: bool,
        junit_file: Path | None,
    ) -> None:
        """Check that every file decodes and re-encodes to exactly its own bytes.

        PATHS are files, folders (searched for .jsonl, .json and .zst files), session
        ids, id prefixes or latest[:HARNESS]. Files are streamed line by line, so memory
        stays flat however large they are, and each result is printed as it comes. A
        differing file is named with the byte offset and line of its first difference;
        a missing or unreadable one is reported and the others are still checked. Exit
        status: 0 when every file round-trips, 1 when any differs or cannot be read, 2
        on a usage error (including a selection with no file in it).
        """
        if harness is not None:
            try:
                registry.get(harness)
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="'--from'") from exc
        files = list(collect(_paths(paths)))
        if not files:
            raise UsageProblem("no .jsonl, .json or .zst files found in " + ", ".join(paths))
        results: list[Verified] = []
        with progress(len(files), "verifying", enabled=not as_json and not quiet) as advance:
            for path in files:
                r = verify_file(path, harness)
                results.append(r)
                advance()
                if not (as_json or quiet or (failures_only and r.ok)):
                    click.echo(_line(r))
        failed = [r for r in results if not r.ok]
        if junit_file is not None:
            write_atomic(junit_file, junit(results), overwrite=True)
        if as_json:
            echo_json(
                {
                    "ok": not failed,
                    "files": len(results),
                    "failed": len(failed),
                    "results": [r.to_dict() for r in results],
                }
            )
        elif not quiet:
            word = "file" if len(results) == 1 else "files"
            foreign = sum(1 for r in results if r.ok and r.harness == "jsonl")
            others = f" ({foreign} not a session)" if foreign else ""
            click.echo(
                f"{len(results)} {word}{others}: all byte-identical"
                if not failed
                else f"{len(results)} {word}{others}: {len(failed)} failed",
                err=bool(failed),
            )
        if failed:
            sys.exit(1)
