"""``txcodec redact``: sessions, folders and stores made safe to share (docs/redact.md)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import msgspec

from .options import user_errors

KEEP_HELP = "Keep a category (paths, emails, hosts, ips, phones, secrets) or a kind; repeatable."


def redactor_options(function):
    """The options every command that redacts takes."""
    seed_help = "Placeholders from the values themselves: runs with one seed agree."
    function = click.option("--seed", help=seed_help)(function)
    function = click.option("--keep", multiple=True, metavar="CATEGORY", help=KEEP_HELP)(function)
    function = click.option(
        "--config",
        type=click.Path(dir_okay=False, exists=True),
        help="Extra patterns and allow-lists (default: ./.txcodec-redact.toml when there is one).",
    )(function)
    return function


def make_redactor(seed: str | None, keep: tuple[str, ...], config: str | None):
    """The run's :class:`~txcodec.redact.Redactor` (one line naming the extra when
    detect-secrets is not installed)."""
    import socket

    from ..redact import Redactor
    from ..redact import load_config

    settings = load_config(config)
    host = socket.gethostname().split(".")[0]
    return Redactor(
        seed=seed,
        keep=[*keep, *settings.get("keep", [])],
        extra=settings.get("extra", []),
        allow=settings.get("allow", []),
        allow_patterns=settings.get("allow_patterns", []),
        # the machine's own name, when it cannot be a word of a text (a name like "build" or
        # "main" would take every such word with it)
        hosts=[host] if len(host) >= 6 and re.search(r"[-\d]", host) else [],
    )


redact_flag = click.option(
    "--redact",
    is_flag=True,
    help="Replace secrets and personal data by placeholders first (docs/redact.md; "
    "./.txcodec-redact.toml is read when there is one).",
)


def echo_counts(report) -> None:
    """The one line an export or a conversion with --redact adds: what it replaced, by kind
    (``report``: a Report, or its counts gathered from a batch's workers)."""
    found = report if isinstance(report, dict) else report.counts()
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(found.items(), key=lambda kv: -kv[1])) or "nothing"
    click.echo(f"redacted: {counts}", err=True)


def echo_report(report, as_json: bool) -> None:
    """The findings (never a value: each has a kind, a place and a short keyed hash)."""
    if as_json:
        click.echo(msgspec.json.encode(report).decode())
        return
    for finding in report.findings:
        where = f"{finding.file}:{finding.line}" + (f" {finding.path}" if finding.path else "")
        click.echo(f"{finding.kind:24} {where}  {finding.placeholder} #{finding.hash}")
    for file, note in report.notes:
        click.echo(f"note: {file}: {note}", err=True)
    counts = ", ".join(f"{n} {kind}" for kind, n in report.counts().items()) or "nothing"
    click.echo(f"{report.files} file(s): {counts} redacted", err=True)


def register(group: click.Group) -> None:
    @group.command("redact")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
    @click.option("-o", "--output", "out", type=click.Path(path_type=Path), help="The folder (or file) to write.")
    @click.option("--dry-run", is_flag=True, help="Print the report; write nothing.")
    @click.option("--check", is_flag=True, help="Write nothing; exit 1 when anything would be redacted.")
    @click.option("--json", "as_json", is_flag=True, help="The report as JSON.")
    @redactor_options
    def redact(paths, out, dry_run, check, as_json, seed, keep, config) -> None:
        """Replace secrets and personal data in sessions, folders or stores by placeholders.

        The output is the same harness's native files, every other byte kept: a line with
        nothing to redact is unchanged, and the files still verify and resume. Folders are
        mirrored into -o (names redacted too). The report names each value's kind, file,
        line, JSON path and a short hash, never the value.
        """
        from ..redact import redact_paths

        write = not (dry_run or check)
        if write and out is None:
            raise click.UsageError("name the output with -o (or use --dry-run or --check)")
        with user_errors():
            redactor = make_redactor(seed, keep, config)
            report = redact_paths(paths, out, redactor, write=write)
        echo_report(report, as_json)
        if check and report.findings:
            raise SystemExit(1)

    @group.command("fixtures")
    @click.argument("stores", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
    @click.option("-o", "--output", "out", type=click.Path(path_type=Path), required=True, help="The folder to write.")
    @redactor_options
    def fixtures(stores, out, seed, keep, config) -> None:
        """Build a fixture set from real sessions: for each shape of the fixture checklist, the
        first record holding it, cut to a minimal session, redacted, with a MANIFEST.tsv.

        Each fixture verifies byte-identically and loads without diagnostics; the shapes not
        found are listed (docs/redact.md#fixtures).
        """
        from ..redact.fixtures import build_fixtures

        with user_errors():
            report = build_fixtures(stores, out, make_redactor(seed, keep, config))
        for fixture in report.fixtures:
            if fixture.file is not None:
                click.echo(f"{fixture.shape:28} {fixture.file} ({fixture.lines} lines)")
        for shape, why in dict(report.rejected).items():
            if shape in {f.shape for f in report.missing}:
                click.echo(f"note: {shape}: an exemplar was found, but its cut {why}", err=True)
        missing = ", ".join(f.shape for f in report.missing)
        if missing:
            click.echo(f"not found: {missing}", err=True)
        found = len(report.fixtures) - len(report.missing)
        click.echo(f"{found} fixture(s) written to {out} (MANIFEST.tsv)", err=True)
