"""``txcodec show FILE``: a readable terminal view of a session (subagents indented);
``--follow`` goes on printing what the client writes (:mod:`txcodec.live`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path

import click

from ..export import terminal
from ..export.text import safe_text
from ..model.common import Conversation
from .options import SessionParam
from .options import from_option
from .options import read_common
from .options import user_errors


def _printer(color: bool | None) -> object:
    """A rich console when the output is coloured, else None (plain text)."""
    use_color = sys.stdout.isatty() if color is None else color
    if use_color:
        try:
            from rich.console import Console
        except ImportError:  # rich is optional: plain text then
            return None
        return Console(highlight=False, force_terminal=True)
    return None


def _print(console: object, lines: Iterable[tuple[str, str]], shown: Callable[[str], str]) -> None:
    if console is None:
        for _, line in lines:
            click.echo(shown(line))
        sys.stdout.flush()
        return
    from rich.text import Text

    for style, line in lines:
        console.print(Text(shown(line), style=terminal.STYLES.get(style, "")))  # type: ignore[attr-defined]


def _unchanged(text: str) -> str:
    return text


def register(group: click.Group) -> None:
    @group.command("show")
    @click.argument("path", type=SessionParam(stdin_ok=True))
    @from_option()
    @click.option("--color/--no-color", default=None, help="Colour the output (default: when stdout is a terminal).")
    @click.option(
        "--raw",
        is_flag=True,
        help="Pass control characters in session text to the terminal as they are (default: shown as cat -v does).",
    )
    @click.option(
        "--follow", "-f", is_flag=True, help="Go on printing each new message as the client writes it (Ctrl-C stops)."
    )
    @click.option(
        "--idle", type=click.FloatRange(min=0), metavar="SECONDS", help="With --follow: stop after this long idle."
    )
    def show(path: Path, harness: str | None, color: bool | None, raw: bool, follow: bool, idle: float | None) -> None:
        """Show the conversation in PATH (a file, a session id or prefix, or latest[:HARNESS]),
        its subagents indented under their calls. Escape sequences in the session's text are
        shown as ^[ and the like, never run by the terminal, unless --raw. See docs/live.md for
        --follow (PATH - with --follow: a stream-json capture piped in, followed until the pipe
        closes)."""
        shown = _unchanged if raw else safe_text
        if follow:
            _follow(path, harness, color, idle, shown)
            return
        if str(path) == "-":
            raise click.UsageError("- (standard input) is for --follow: a capture read as it is printed")
        console = _printer(color)
        with user_errors():
            # a message at a time where the reader can (a huge session's first message at once)
            conv = read_common(path, harness, streamed=True, messages=True)
            if console is None:
                for chunk in terminal.chunks(conv):  # written as it is made, not built whole first
                    click.echo(shown(chunk), nl=False)
                return
            made = terminal.lines(conv) if type(conv) is Conversation else terminal.streamed_lines(conv)
            _print(console, made, shown)


def _follow(
    path: Path, harness: str | None, color: bool | None, idle: float | None, shown: Callable[[str], str]
) -> None:
    from ..live import WINDOW
    from ..live import follow

    console = _printer(color)
    view = terminal.FollowView()
    try:
        with user_errors():
            stream = sys.stdin.buffer if str(path) == "-" else None
            for event in follow("<stdin>" if stream else path, harness, idle=idle, stream=stream, window=WINDOW):
                _print(console, view.lines(event), shown)
    except KeyboardInterrupt:  # Ctrl-C is how a follow ends: no traceback
        sys.exit(130)
