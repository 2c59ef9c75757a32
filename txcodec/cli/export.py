"""``txcodec export FILE --to common|markdown``: the Common JSON or a Markdown rendering."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from ..atomic import write_atomic
from ..common import to_json
from ..loss import LossReport
from ..render import markdown
from .common import SessionParam, echo_json, from_option, read_common, stdout_binary, user_errors

FORMATS = {
    "common": lambda conv: msgspec.json.format(to_json(conv), indent=2) + b"\n",
    "markdown": lambda conv: markdown.render(conv).encode("utf-8"),
}


def register(group: click.Group) -> None:
    @group.command("export")
    @click.argument("path", type=SessionParam())
    @click.option("--to", "fmt", type=click.Choice(sorted(FORMATS)), default="common", show_default=True)
    @click.option("-o", "--output", "out", type=str, default="-", show_default=True, help="Output file; '-' for stdout.")
    @from_option()
    @click.option("--loss", "show_loss", is_flag=True, help="Print the loss report as JSON (on stderr when the export goes to stdout).")
    def export(path: Path, fmt: str, out: str, harness: str | None, show_loss: bool) -> None:
        """Export the conversation in PATH (a file, a session id or prefix, or
        latest[:HARNESS]) as Common JSON or Markdown."""
        loss = LossReport()
        with user_errors():
            conv = read_common(path, harness, loss)
            data = FORMATS[fmt](conv)
            if out == "-":
                stdout_binary().write(data)
                stdout_binary().flush()
            else:
                write_atomic(out, data)  # never overwrites an existing file
        if show_loss:
            if out == "-":
                click.echo(msgspec.json.format(msgspec.json.encode(loss.to_dict()), indent=2).decode(), err=True)
            else:
                echo_json(loss.to_dict())
