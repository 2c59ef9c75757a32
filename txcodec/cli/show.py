"""``txcodec show FILE``: a readable terminal view of a session (subagents indented)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..export import terminal
from ..export.text import safe_text
from .options import SessionParam
from .options import from_option
from .options import read_common
from .options import user_errors


def register(group: click.Group) -> None:
    @group.command("show")
    @click.argument("path", type=SessionParam())
    @from_option()
    @click.option("--color/--no-color", default=None, help="Colour the output (default: when stdout is a terminal).")
    @click.option(
        "--raw",
        is_flag=True,
        help="Pass control characters in session text to the terminal as they are (default: shown as cat -v does).",
    )
    def show(path: Path, harness: str | None, color: bool | None, raw: bool) -> None:
        """Show the conversation in PATH (a file, a session id or prefix, or latest[:HARNESS]),
        its subagents indented under their calls. Escape sequences in the session's text are
        shown as ^[ and the like, never run by the terminal, unless --raw."""
        with user_errors():
            conv = read_common(path, harness)
        use_color = sys.stdout.isatty() if color is None else color
        if use_color:
            try:
                from rich.console import Console
                from rich.text import Text
            except ImportError:  # rich is optional: plain text then
                use_color = False
        shown = (lambda text: text) if raw else safe_text
        if not use_color:
            click.echo(shown(terminal.render(conv)), nl=False)
            return
        console = Console(highlight=False, force_terminal=True)
        for style, line in terminal.lines(conv):
            console.print(Text(shown(line), style=terminal.STYLES.get(style, "")))
