"""``txcodec verify PATH...``: byte-identical round trip, file by file, for CI."""

from __future__ import annotations

import click

from .. import registry
from ..verify import collect, verify_file
from .common import echo_json


def register(group: click.Group) -> None:
    @group.command("verify")
    @click.argument("paths", nargs=-1, required=True, type=click.Path())
    @click.option("--harness", metavar="NAME", help="Read every file as this harness (detected per file when omitted).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a result per file.")
    def verify(paths: tuple[str, ...], harness: str | None, as_json: bool) -> None:
        """Check that every file decodes and re-encodes to exactly its own bytes.

        Directories are searched for .jsonl, .json and .zst files. Files are streamed
        line by line, so memory stays flat however large they are. A differing file is
        named with the byte offset and line of its first difference; a missing or
        unreadable one is reported and the others are still checked. Exit status: 0
        when every file round-trips, 1 when any differs or cannot be read (or none was
        found), 2 on a usage error.
        """
        if harness is not None:
            try:
                registry.get(harness)
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="'--harness'") from exc
        results = [verify_file(path, harness) for path in collect(paths)]
        failed = [r for r in results if not r.ok]
        if as_json:
            echo_json({"ok": not failed, "files": len(results), "failed": len(failed),
                       "results": [r.to_dict() for r in results]})
        else:
            for r in results:
                if r.error is not None:
                    click.echo(f"ERROR  {r.path}: {r.error}")
                elif r.ok:
                    opaque = f", {r.opaque} kept as bytes only" if r.opaque else ""
                    click.echo(f"ok     {r.path} ({r.harness}, {r.lines} lines, {r.bytes} bytes{opaque})")
                else:
                    click.echo(f"DIFF   {r.path}: line {r.difference_line} differs from byte offset "
                               f"{r.first_difference}")
            word = "file" if len(results) == 1 else "files"
            summary = (f"{len(results)} {word}: all byte-identical" if not failed
                       else f"{len(results)} {word}: {len(failed)} failed")
            click.echo(summary, err=bool(failed))
        if not results:
            raise click.ClickException("no .jsonl, .json or .zst files found")
        if failed:
            raise SystemExit(1)
