"""``txcodec list`` (sessions in the harnesses' stores) and ``txcodec sample``.

Both are thin: the index (one row type for every harness, filters, content search) is
:mod:`txcodec.sessions`, the date filters :mod:`txcodec.core.dates`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import sessions
from ..api import sample
from ..api import samples
from ..core.dates import parse_when
from ..sessions import SessionRow
from .options import AliasOption
from .options import canonical_choice
from .options import canonical_harness
from .options import chosen_timezone
from .options import echo_json
from .options import timezone_option
from .options import user_errors


def _row_cells(row: SessionRow, child: bool, wide: bool) -> list[str]:
    when = (row.updated or row.started or "")[:16].replace("T", " ")
    messages = "" if row.messages is None else str(row.messages)
    if row.subagents:
        messages += f" +{row.subagents}"
    sid = ("└ " if child else "") + row.session_id
    status = "" if row.status == "ok" else f"[{row.status}] "
    cells = [row.harness, when if wide else when[5:], messages, sid]
    return [*cells, row.project or "", status + row.label] if wide else [*cells, status + row.label]


def _table(rows: list[SessionRow]) -> None:
    """A table fitted to the terminal: the harness, time, size and full id always whole
    (an id is what other commands take), the project only when there is room, the title
    taking what is left; subagent chats under their parent session."""
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160, markup=False)
    wide = console.width >= 110
    children: dict[tuple[str, str], list[SessionRow]] = {}
    ids = {(r.harness, r.session_id) for r in rows if r.parent is None}
    for row in rows:
        if row.parent is not None and (row.harness, row.parent) in ids:
            children.setdefault((row.harness, row.parent), []).append(row)
    lines = []
    for row in rows:
        if row.parent is not None and (row.harness, row.parent) in ids:
            continue
        lines.append(_row_cells(row, False, wide))
        for child in children.pop((row.harness, row.session_id), []) if row.parent is None else []:
            lines.append(_row_cells(child, True, wide))
    headers = ["harness", "updated", "msgs", "session", *(["project"] if wide else []), "title / first prompt"]
    # every column but the last as wide as its widest cell (the project at most 20); the
    # title gets what is left of the line
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers[:-1])]
    if wide:
        widths[-1] = min(widths[-1], 20)
    widths.append(max(8, console.width - sum(widths) - 2 * (len(headers) - 1)))
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for header, width in zip(headers, widths):
        table.add_column(
            header,
            overflow="ellipsis",
            no_wrap=True,
            max_width=width,
            min_width=width if header != headers[-1] else None,
            justify="right" if header == "msgs" else "left",
        )
    for line in lines:
        table.add_row(*line)
    console.print(table)


def filter_options(command):
    """The options that select sessions, shared by ``list`` and ``convert --all`` (each
    names the harness its own way)."""
    for option in reversed(
        (
            click.option(
                "--project", metavar="NAME", help="Only sessions of this project (its name, or part of the cwd)."
            ),
            click.option(
                "--since",
                metavar="WHEN",
                help="Updated at or after WHEN: a date, an ISO time, today, or an age: 30min, 12h, 7d, 2w, 3mo.",
            ),
            click.option("--until", metavar="WHEN", help="Updated at or before WHEN (a date includes that whole day)."),
            timezone_option(),
            click.option("--grep", metavar="TEXT", help="Only sessions whose file contains TEXT (case-insensitive)."),
            click.option(
                "--root",
                type=click.Path(exists=True, file_okay=False, path_type=Path),
                help="Store folder to scan instead of each harness's default "
                "(Claude Code: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects).",
            ),
        )
    ):
        command = option(command)
    return command


def select(
    harness: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    grep: str | None,
    root: Path | None,
    limit: int | None = None,
    details: bool = True,
    describe: bool = True,
) -> sessions.Index:
    with user_errors():
        return sessions.discover(
            harness,
            root=root,
            project=project,
            grep=grep,
            limit=limit,
            details=details,
            describe=describe,
            since=parse_when(since, tz=chosen_timezone()) if since else None,
            until=parse_when(until, end=True, tz=chosen_timezone()) if until else None,
        )


def register(group: click.Group) -> None:
    @group.command("list")
    @click.option(
        "--harness",
        "--from",
        "harness",
        cls=AliasOption,
        metavar="NAME",
        callback=canonical_harness,
        help="Only this harness's store.",
    )
    @filter_options
    @click.option("--limit", type=click.IntRange(min=1), help="At most this many sessions (the newest).")
    @click.option("--json", "as_json", is_flag=True, help="One JSON array of rows (the schema in docs/api.md).")
    def list_sessions(
        harness: str | None,
        project: str | None,
        since: str | None,
        until: str | None,
        grep: str | None,
        root: Path | None,
        limit: int | None,
        as_json: bool,
    ) -> None:
        """List the sessions in the harnesses' stores, newest first.

        Every row has the same fields whatever the harness: harness, session_id, path,
        cwd, project, title, first_prompt, started, updated, messages, models, parent,
        started_by, forked_from (null when unknown). The title falls back to the first
        prompt; subagent chats are listed under their session. A session whose main
        transcript was pruned while its subagents survive is marked `pruned`, a file
        holding only metadata records `metadata-only`. Files that cannot be read are
        reported on stderr and skipped.
        """
        found = select(harness, project, since, until, grep, root, limit)
        for error in found.errors:
            click.echo(f"txcodec: warning: {error}", err=True)
        if as_json:
            echo_json(list(found))
            return
        if not found:
            click.echo("no sessions found", err=True)
            return
        _table(found)

    @group.command("sample")
    @click.option(
        "--harness",
        "--from",
        "harness",
        cls=AliasOption,
        default="claude_code",
        show_default=True,
        type=canonical_choice(samples()),
        help="Whose sample session.",
    )
    def sample(harness: str) -> None:
        """Print the path of a small synthetic session bundled with txcodec.

        Try the other commands on it, e.g. `txcodec inspect "$(txcodec sample)"`. Every
        harness's sample is the Claude Code one, converted.
        """
        click.echo(sample_path(harness))


def sample_path(harness: str) -> Path:
    with user_errors():
        return sample(harness)
