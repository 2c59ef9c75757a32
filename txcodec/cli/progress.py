"""A progress bar on stderr, shown only when stderr is a terminal (never in CI logs or
pipes); what the command prints meanwhile goes above it."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def progress(total: int, what: str, enabled: bool = True) -> Iterator[Callable[[], None]]:
    """A context giving ``advance()``, to call once per item done."""
    if not enabled or total < 2 or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=True)
    task = bar.add_task(what, total=total)
    with bar:
        yield lambda: bar.advance(task)
