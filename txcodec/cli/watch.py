"""``txcodec watch``: a live table of the sessions being written now (:class:`txcodec.live.Watcher`)."""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path

import click

from .options import from_option
from .options import user_errors


def _table(active: list) -> object:
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold", expand=True)
    for header in ("harness", "last activity", "project", "title", "running", "tokens", "cost"):
        table.add_column(
            header, no_wrap=True, overflow="ellipsis", justify="right" if header in ("tokens", "cost") else "left"
        )
    for a in active:
        table.add_row(
            a.harness,
            datetime.fromtimestamp(a.last_activity).strftime("%H:%M:%S"),
            a.project,
            a.title,
            a.running or "",
            f"{a.tokens:,}",
            "" if a.cost is None else f"${a.cost:.2f}",
        )
    if not active:
        table.add_row("", "", "", "(no session written to lately)", "", "", "")
    return table


def register(group: click.Group) -> None:
    @group.command("watch")
    @from_option(help="Only this harness's store.")
    @click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="With --from: this store folder.")
    @click.option(
        "--within", type=click.FloatRange(min=1), default=600, show_default=True, help="Seconds since the last write."
    )
    @click.option("--interval", type=click.FloatRange(min=0.1), default=1.0, show_default=True)
    @click.option("--once", is_flag=True, help="Print the table once and stop.")
    def watch(harness: str | None, root: Path | None, within: float, interval: float, once: bool) -> None:
        """A live table of the sessions being written now, in every store: harness, last
        activity, project, title, the tool running, tokens so far and cost where known.
        Ctrl-C stops. See docs/live.md."""
        from rich.console import Console
        from rich.live import Live

        from ..live import Changes
        from ..live import Watcher

        if root is not None and harness is None:
            raise click.UsageError("--root needs --from: whose store it is")
        watcher = Watcher(harness, root, within)
        console = Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 160)
        with user_errors():
            if once:
                console.print(_table(watcher.look()))
                return
            # woken by a change in a store folder (watchfiles installed) or every --interval
            changes = Changes(watcher.folders())
            try:
                with Live(_table(watcher.look()), console=console, auto_refresh=False) as live:
                    shown = time.monotonic()
                    while True:
                        # notified: a table when a store changes (or every 10 s, as sessions age out of
                        # --within), at most one a --interval; polling: one every --interval
                        changes.wait(10.0 if changes.notified else interval)
                        time.sleep(max(0.0, interval - (time.monotonic() - shown)))
                        live.update(_table(watcher.look()), refresh=True)
                        shown = time.monotonic()
            except KeyboardInterrupt:
                sys.exit(130)
            finally:
                changes.close()
