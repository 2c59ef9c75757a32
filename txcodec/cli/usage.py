"""``txcodec usage [PATH...]``: a token and cost report over files, folders or every store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..usage import GROUP_KEYS
from ..usage import TOKEN_FIELDS
from .options import SessionParam
from .options import chosen_timezone
from .options import complete_list
from .options import echo_json
from .options import harness_choice
from .options import timezone_option
from .options import user_errors

_NOTE = (
    "unverified: calls that never reported a stop_reason (Claude Code before 2.1.220 wrote null on "
    "nearly every call); their last fragment's usage, whose output count may be a streaming stub. "
    "Totals count them; * marks a total that includes them. See docs/usage.md."
)
_TOKEN_HEADERS = ("input", "output", "cache write", "cache read")


def _by(value: str) -> list[str]:
    keys = [k.strip() for k in value.split(",") if k.strip()]
    bad = [k for k in keys if k not in GROUP_KEYS]
    if bad or not keys:
        raise click.BadParameter(f"{','.join(bad) or value!r}: choose from {', '.join(GROUP_KEYS)} (comma-separated)")
    return keys


def _key_cells(row: Any, by: list[str]) -> list[str]:
    return [(getattr(row, k) or "?")[:36] if k == "session" else str(getattr(row, k) or "?") for k in by]


def _money(row: Any) -> str:
    """Dollars; ``>=`` when some of the row's calls have no known price, ``?`` when none has."""
    if row.cost_usd is None:
        return "?"
    return ("" if row.cost_complete else ">=") + f"${row.cost_usd:,.2f}"


def _lines(report: Any, reasoning: bool) -> tuple[list[str], list[tuple[list[str], str]]]:
    """The header and ``(cells, style)`` rows: a group's verified row, its unverified row
    (``KEY (unverified)``), and the totals."""
    by = report.by
    header = [*by, "calls", "no usage", *_TOKEN_HEADERS, *(["reasoning"] if reasoning else []), "total", "cost"]
    out: list[tuple[list[str], str]] = []
    for r in report.rows:
        keys = _key_cells(r, by)
        verified_calls = r.calls - r.calls_unverified
        if verified_calls or not r.calls_unverified:
            tokens = [getattr(r, f) for f in TOKEN_FIELDS]
            extra = [f"{r.reasoning_output_tokens:,}"] if reasoning else []
            cost = _money(r)  # the group's, unverified calls included
            out.append(
                (
                    [
                        *keys,
                        str(verified_calls),
                        str(r.calls_without_usage),
                        *(f"{t:,}" for t in tokens),
                        *extra,
                        f"{sum(tokens):,}",
                        cost,
                    ],
                    "",
                )
            )
        if r.calls_unverified:
            tokens = [getattr(r, "unverified_" + f) for f in TOKEN_FIELDS]
            marked = keys[:-1] + [f"{keys[-1]} (unverified)"]
            extra = [""] if reasoning else []
            cost = "" if verified_calls else _money(r)
            out.append(
                (
                    [
                        *marked,
                        str(r.calls_unverified),
                        "",
                        *(f"{t:,}" for t in tokens),
                        *extra,
                        f"{sum(tokens):,}",
                        cost,
                    ],
                    "dim",
                )
            )
    t = report.totals
    if len(report.rows) > 1 or t.calls_unverified:
        tokens = [getattr(t, f) + getattr(t, "unverified_" + f) for f in TOKEN_FIELDS]
        star = "*" if t.calls_unverified else ""
        extra = [f"{t.reasoning_output_tokens:,}"] if reasoning else []
        first = ["total" + star] + [""] * (len(by) - 1)
        out.append(
            (
                [
                    *first,
                    str(t.calls),
                    str(t.calls_without_usage),
                    *(f"{x:,}" for x in tokens),
                    *extra,
                    f"{sum(tokens):,}{star}",
                    _money(t),
                ],
                "bold",
            )
        )
    return header, out


def _plain(header: list[str], rows: list[tuple[list[str], str]], keys: int) -> None:
    table = [header] + [cells for cells, _ in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) if i < keys else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
        for row in table
    ]
    click.echo("\n".join(lines))  # one write: a store's report has thousands of rows


def _rich(header: list[str], rows: list[tuple[list[str], str]], keys: int) -> None:
    from rich.console import Console
    from rich.table import Table

    widths = [max(len(r[i]) for r in [header] + [cells for cells, _ in rows]) for i in range(len(header))]
    console = Console()
    numbers = sum(widths[keys:]) + 2 * (len(header) - 1)
    if numbers + keys * 16 > console.width:  # too narrow for folded keys: never crop a number
        console = Console(width=sum(widths) + 2 * (len(header) - 1))
    table = Table(box=None, pad_edge=False, header_style="bold")
    for i, name in enumerate(header):
        if i < keys:  # keys fold on a narrow terminal; numbers never do
            table.add_column(name, justify="left", overflow="fold", min_width=min(widths[i], 16))
        else:
            table.add_column(name, justify="right", no_wrap=True)
    for n, (cells, style) in enumerate(rows):
        table.add_row(*cells, style=style or None, end_section=n == len(rows) - 2 and rows[-1][1] == "bold")
    console.print(table)


def register(group: click.Group) -> None:
    @group.command("usage")
    @click.argument("paths", nargs=-1, type=SessionParam(dir_okay=True))
    @click.option(
        "--by",
        "by",
        default="session,model",
        show_default=True,
        metavar="KEYS",
        shell_complete=complete_list(GROUP_KEYS),
        help=f"Group by one or more of {', '.join(GROUP_KEYS)}, comma-separated (e.g. day,model).",
    )
    @click.option(
        "--since",
        metavar="WHEN",
        help="Calls from this day on: a date, an ISO time, today, or an age: 30min, 12h, 7d, 2w, 3mo.",
    )
    @click.option("--until", metavar="WHEN", help="Calls up to this day (same forms as --since).")
    @timezone_option()
    @click.option("--project", metavar="NAME", help="Sessions whose project folder is NAME (or whose cwd contains it).")
    @click.option(
        "--harness", type=harness_choice(), help="One harness: its store with no PATH, its format for the files given."
    )
    @click.option("--json", "as_json", is_flag=True, help="The report as JSON: rows, totals, unpriced models, errors.")
    @click.option("--no-subagents", is_flag=True, help="Count the main transcript only.")
    @click.option("--no-cost", is_flag=True, help="Leave out dollars (no price table is read).")
    @click.option("--jobs", type=click.IntRange(1), help="Processes reading files (default: the CPU count).")
    @click.option(
        "--no-index",
        is_flag=True,
        help="Read every file, past the session index (which keeps each unchanged file's usage between runs).",
    )
    def usage(
        paths: tuple[Path, ...],
        by: str,
        since: str | None,
        until: str | None,
        project: str | None,
        harness: str | None,
        as_json: bool,
        no_subagents: bool,
        no_cost: bool,
        jobs: int | None,
        no_index: bool,
    ) -> None:
        """Tokens and cost per session and model, or grouped --by day, week, month, model,
        project or harness, with a totals row. PATHs are session files or folders (read
        recursively); with none, every harness's store is read.

        A call counts once, with its last fragment's usage, and only when it reported a
        stop_reason; calls without one are shown apart as unverified and counted in the
        totals. Cost comes from the genai-prices table (a snapshot ships with txcodec; an
        installed genai-prices is newer), named under the table; models it cannot price are named."""
        from ..usage import usage as report_usage

        keys = _by(by)
        with user_errors():
            report = report_usage(
                list(paths) or None,
                by=keys,
                since=since,
                until=until,
                project=project,
                harness=harness,
                subagents=not no_subagents,
                jobs=jobs,
                prices=not no_cost,
                timezone=chosen_timezone(),
                index=not no_index,
            )
        for line in report.errors:
            click.echo(f"Error: {line}", err=True)
        if as_json:
            echo_json(report.to_dict())
        elif report.rows:
            _table(report, keys, no_cost)
        elif not report.errors:
            click.echo("no usage found")
        if paths and report.errors:
            raise SystemExit(1)


def _table(report: Any, keys: list[str], no_cost: bool) -> None:
    header, rows = _lines(report, report.totals.reasoning_output_tokens > 0)
    if no_cost:
        header, rows = header[:-1], [(cells[:-1], style) for cells, style in rows]
    (_rich if sys.stdout.isatty() and _has_rich() else _plain)(header, rows, len(keys))
    if report.totals.calls_unverified:
        click.echo("\n" + _NOTE)
    if report.copies:
        n = sum(int(line.rsplit(": ", 1)[1].split()[0]) for line in report.copies)
        click.echo(
            f"not counted again: {n} call{'s' if n != 1 else ''} in {len(report.copies)} converted"
            f" cop{'ies' if len(report.copies) != 1 else 'y'} of sessions counted above (--json lists them)"
        )
    if report.unpriced and not no_cost:
        click.echo(f"no price known for: {', '.join(report.unpriced)} (their cost is left out: ? or >= in the table)")
    elif report.prices is None and not no_cost:
        click.echo("no cost: install the price table with  pip install 'txcodec[prices]'")
    if report.prices is not None and not no_cost:
        click.echo(f"prices: {report.prices}")


def _has_rich() -> bool:
    from importlib.util import find_spec

    return find_spec("rich") is not None
