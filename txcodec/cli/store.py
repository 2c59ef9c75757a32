"""``txcodec list`` (sessions in the harnesses' stores) and ``txcodec sample``.

Both are thin: the index (one row type for every harness, filters, content search) is
:mod:`txcodec.sessions`, the date filters :mod:`txcodec.core.dates`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import click

from .. import sessions
from ..api import sample
from ..api import samples
from ..core.dates import parse_when
from ..core.gcpause import frozen
from ..sessions import SessionRow
from .options import AliasOption
from .options import canonical_choice
from .options import canonical_harness
from .options import chosen_timezone
from .options import complete_harness
from .options import echo_json
from .options import timezone_option
from .options import user_errors


def _head_cells(row: SessionRow, child: bool, wide: bool, shown_id: str) -> list[str]:
    """The cells of a row but the title (the columns measured for their widths)."""
    when = (row.updated or row.started or "")[:16].replace("T", " ")
    cells = [row.harness, when if wide else when[5:], _messages_cell(row), ("└ " if child else "") + shown_id]
    if wide:
        project = row.project or ""
        cells.append(project if project.isprintable() else _CONTROL.sub("?", project))
    return cells


def _messages_cell(row: SessionRow) -> str:
    messages = "" if row.messages is None else str(row.messages)
    return f"{messages} +{row.subagents}" if row.subagents else messages


def _title_cell(row: SessionRow) -> str:
    status = "" if row.status == "ok" else f"[{row.status}] "
    label = row.label
    if not label.isprintable():  # no escape sequence reaches the terminal
        label = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", label)
    return status + label


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
SHORTEST_ID = 8  # the first group of a UUID: a shorter prefix than that is no use to a reader


def short_ids(ids: Iterable[str], shortest: int = SHORTEST_ID, wanted: Iterable[str] | None = None) -> dict[str, str]:
    """Each id's shortest prefix that no other of ``ids`` starts with, as ``git`` abbreviates
    commits (never shorter than ``shortest``): what ``txcodec show PREFIX`` resolves to it.
    ``wanted``: only these ids' (each one of ``ids``), for a listing that shows a few of many."""
    ordered = sorted(set(ids))
    # the longest prefix each shares with a neighbour in sorted order (no other id shares more);
    # ids that differ within their first ``shortest`` characters need no count
    if wanted is not None:
        from bisect import bisect_left

        out = {}
        for sid in set(wanted):
            at, common = bisect_left(ordered, sid), 0
            for near in (at - 1, at + 1):
                if 0 <= near < len(ordered) and ordered[near][:shortest] == sid[:shortest]:
                    common = max(common, len(os.path.commonprefix((ordered[near], sid))))
            out[sid] = sid[: max(shortest, common + 1)]
        return out
    shared = [0] * len(ordered)
    for i in range(1, len(ordered)):
        before, sid = ordered[i - 1], ordered[i]
        if before[:shortest] == sid[:shortest]:
            common = len(os.path.commonprefix((before, sid)))
            shared[i - 1] = max(shared[i - 1], common)
            shared[i] = max(shared[i], common)
    return {sid: sid[: max(shortest, common + 1)] for sid, common in zip(ordered, shared)}


def _cell_len(text: str) -> int:
    """The terminal cells ``text`` takes (one a character when it is printable ASCII)."""
    if text.isascii() and text.isprintable():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def _fit(text: str, width: int, right: bool = False) -> str:
    """``text`` in exactly ``width`` terminal cells: padded, or cut with an ellipsis."""
    if text.isascii() and text.isprintable():  # one cell a character (most cells of a listing)
        size = len(text)
    else:
        from rich.cells import cell_len

        size = cell_len(text)
    if size > width:
        from rich.cells import set_cell_size

        return set_cell_size(text, width - 1) + "…" if width > 1 else set_cell_size(text, width)
    padding = " " * (width - size)
    return padding + text if right else text + padding


STREAM_ROWS = 1000  # a listing this long is printed as its rows are read
_MSGS_WIDTH = 9  # the message count's column in a streamed table: its rows are not all read yet
_FLUSH = 256  # lines of a streamed table written at a time


def _order(rows: list[SessionRow]) -> list[tuple[SessionRow, bool]]:
    """The rows in the order they are shown, each with whether it is a subagent chat shown
    under its session."""
    if all(r.parent is None for r in rows):  # no subagent chats listed: the rows as they are
        return [(row, False) for row in rows]
    children: dict[tuple[str, str], list[SessionRow]] = {}
    ids = {(r.harness, r.session_id) for r in rows if r.parent is None}
    for row in rows:
        if row.parent is not None and (row.harness, row.parent) in ids:
            children.setdefault((row.harness, row.parent), []).append(row)
    shown = []
    for row in rows:
        if row.parent is not None and (row.harness, row.parent) in ids:
            continue
        shown.append((row, False))
        for child in children.pop((row.harness, row.session_id), []) if row.parent is None else []:
            shown.append((child, True))
    return shown


def _table(rows: sessions.Index, every_id: list[str], full_id: bool) -> None:
    """A table fitted to the terminal: the harness, time, size and id always whole (the id
    as its shortest unique prefix unless ``full_id``: what other commands take), the project
    only when there is room, the title taking what is left; subagent chats under their
    parent session. Written as plain lines (a rich table cost half of a long listing); a
    listing of :data:`STREAM_ROWS` rows or more is written as its rows are read, its message
    count in a column of fixed width."""
    tty = sys.stdout.isatty()
    width = shutil.get_terminal_size((160, 24)).columns if tty else 160
    wide = width >= 110
    ids = [r.session_id for r in rows]
    # a filtered listing (--grep) shows a few of the home's ids: only theirs are worked out
    shown = {} if full_id else short_ids([*every_id, *ids], wanted=ids if len(ids) * 4 < len(every_id) else None)
    order = _order(rows)
    streamed = len(order) >= STREAM_ROWS
    described = rows.described(row for row, _ in order)
    if not streamed:
        described = iter(list(described))

    headers = ["harness", "updated", "msgs", "session", *(["project"] if wide else []), "title / first prompt"]
    right = headers.index("msgs")
    # every column but the last as wide as its widest cell (the project at most 20), each
    # distinct cell measured once; the title gets what is left of the line. Reading a row's
    # details changes its message count alone: a streamed table's other columns are measured before
    heads = [_head_cells(row, child, wide, shown.get(row.session_id, row.session_id)) for row, child in order]
    columns = [set(column) for column in zip(*heads)]
    widths = [max([len(h), *map(_cell_len, column)]) for h, column in zip(headers, columns)]
    if streamed:
        widths[right] = _MSGS_WIDTH
    if wide:
        widths[-1] = min(widths[-1], 20)
    widths.append(max(8, width - sum(widths) - 2 * (len(headers) - 1)))

    # a line of printable ASCII (most of them) is one format: a character a cell
    line = "  ".join(f"{{:{'>' if i == right else '<'}{w}}}" for i, w in enumerate(widths))

    def render(cells: list[str]) -> str:
        joined = "".join(cells)
        if joined.isascii() and joined.isprintable():
            cut = [c if len(c) <= w else c[: w - 1] + "…" if w > 1 else c[:w] for c, w in zip(cells, widths)]
            return line.format(*cut).rstrip()
        fitted = [_fit(c, w, i == right) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(fitted).rstrip()

    head = render(headers)
    out = [click.style(head, bold=True) if tty else head]
    for cells, row in zip(heads, described):
        cells[right] = _messages_cell(row)  # the one cell of them reading the row's details changes
        cells.append(_title_cell(row))
        out.append(render(cells))
        if streamed and len(out) >= _FLUSH:
            click.echo("\n".join(out))
            out = []
    if out:
        click.echo("\n".join(out))


def _warn(errors: list[str]) -> None:
    for error in errors:
        click.echo(f"txcodec: warning: {error}", err=True)


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
    index: bool = True,
    stream: bool = False,
) -> sessions.Index:
    with user_errors():
        return sessions.discover(
            harness,
            stream=stream,
            root=root,
            project=project,
            grep=grep,
            limit=limit,
            details=details,
            describe=describe,
            index=index,
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
        shell_complete=complete_harness,
        help="Only this harness's store.",
    )
    @filter_options
    @click.option(
        "--limit",
        type=click.IntRange(min=1),
        help="At most this many sessions (the newest; only the newest files are read).",
    )
    @click.option("--json", "as_json", is_flag=True, help="One JSON array of rows (the schema in docs/api.md).")
    @click.option(
        "--no-index",
        is_flag=True,
        help="Read every session's file, past the session index (see `txcodec index`).",
    )
    @click.option(
        "--full-id", is_flag=True, help="Whole session ids (default: the shortest prefix naming each, as git does)."
    )
    def list_sessions(
        harness: str | None,
        project: str | None,
        since: str | None,
        until: str | None,
        grep: str | None,
        root: Path | None,
        limit: int | None,
        as_json: bool,
        no_index: bool,
        full_id: bool,
    ) -> None:
        """List the sessions in the harnesses' stores, newest first.

        Every row has the same fields whatever the harness: harness, session_id, path,
        cwd, project, title, first_prompt, started, updated, messages, models, parent,
        started_by, forked_from (null when unknown). The title falls back to the first
        prompt; subagent chats are listed under their session. The table shows each id
        as its shortest unique prefix (every command takes it); --full-id shows it
        whole. A session whose main transcript was pruned while its subagents survive
        is marked `pruned`, a file holding only metadata records `metadata-only`. Files
        that cannot be read are reported on stderr and skipped.
        """
        found = select(harness, project, since, until, grep, root, limit, index=not no_index, stream=True)
        _warn(found.errors)
        # the rows found live to the end of the command: the collector leaves them alone instead
        # of walking them again and again as the table's cells are made (a quarter of a warm listing)
        with frozen(), user_errors():
            if as_json:  # a JSON array is of use once whole: read whole
                echo_json(list(found.described()))
                return
            if not found:
                list(found.described())  # nothing to read; the index is closed
                click.echo("no sessions found", err=True)
                return
            _table(found, found.ids, full_id)

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
