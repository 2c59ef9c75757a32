"""What a batch shows on stderr: a progress bar, only when stderr is a terminal (never in
CI logs or pipes; what the command prints meanwhile goes above it), and the summary at
the end."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..batch import Outcome


@contextlib.contextmanager
def progress(total: int, what: str, enabled: bool = True) -> Iterator[Callable[[], None]]:
    """A context giving ``advance()``, to call once per item done."""
    if not enabled or total < 2 or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn
    from rich.progress import MofNCompleteColumn
    from rich.progress import Progress
    from rich.progress import TextColumn
    from rich.progress import TimeRemainingColumn

    bar = Progress(
        TextColumn(what),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(what, total=total)
    with bar:
        yield lambda: bar.advance(task)


def summary_table(outcomes: list[Outcome], title: str, loss_dir: str | None = None, quiet: bool = False) -> None:
    """The end of a batch (convert, export) on stderr: sessions by result, each failure on a
    line of its own, and the losses by kind; with ``quiet``, only the failures."""
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True, highlight=False, markup=False, soft_wrap=False)
    failed = [o for o in outcomes if o.status == "failed"]
    by_status = Counter(o.status for o in outcomes)
    if quiet:
        for o in failed:
            click.echo(f"failed  {o.source}: {o.reason}", err=True)
        return
    table = Table(title=title, box=None, header_style="bold", title_justify="left")
    table.add_column("result")
    table.add_column("sessions", justify="right")
    skipped = Counter(o.reason or "already done" for o in outcomes if o.status == "skipped")
    table.add_row("converted", str(by_status.get("converted", 0)))
    for reason, n in sorted(skipped.items()):
        table.add_row(f"skipped ({reason})", str(n))
    if not skipped:
        table.add_row("skipped", "0")
    table.add_row("failed", str(by_status.get("failed", 0)))
    console.print(table)
    for o in failed:  # whole lines, never wrapped: a script or a person greps them
        click.echo(f"failed  {o.source}: {o.reason}", err=True)
    kinds: Counter[str] = Counter()
    sessions_with: Counter[str] = Counter()
    for o in outcomes:
        kinds.update(o.losses)
        sessions_with.update(o.losses.keys())
    if kinds:
        losses = Table(box=None, header_style="bold")
        losses.add_column("loss kind (docs/loss.md)")
        losses.add_column("sessions", justify="right")
        losses.add_column("entries", justify="right")
        for kind, n in sorted(kinds.items()):
            losses.add_row(kind, str(sessions_with[kind]), str(n))
        console.print(losses)
        if loss_dir:
            console.print(f"loss reports: {loss_dir}")
