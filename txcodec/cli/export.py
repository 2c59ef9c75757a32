"""``txcodec export FILE --to common|markdown|html``: the Common JSON, a Markdown or an
HTML rendering; ``txcodec export --all --to html -o DIR``: a whole store as pages."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from ..atomic import atomic_stream, write_atomic
from ..common import to_json
from ..loss import LossReport
from ..render import html, markdown
from .common import echo_json, read_common, stdout_binary, user_errors

# Turns a model's usage row (usage.ModelUsage) into dollars for the HTML pages, or None
# when it cannot; None here shows no cost at all. Where txcodec.usage can price a row,
# this is where it is plugged in.
PRICE: html.PriceFn | None = None

FORMATS = {
    "common": lambda conv: msgspec.json.format(to_json(conv), indent=2) + b"\n",
    "markdown": lambda conv: markdown.render(conv).encode("utf-8"),
    "html": None,  # streamed to its file: see _write_html
}


def _write_html(conv, out: str) -> None:
    if out == "-":
        html.write(conv, stdout_binary(), price=PRICE)
        stdout_binary().flush()
        return
    with atomic_stream(out) as stream:  # never overwrites an existing file
        html.write(conv, stream, price=PRICE)


def _export_all(root: Path | None, harness: str | None, fmt: str, out: str) -> None:
    from ..render import site
    from .store import _stored_sessions

    if fmt != "html":
        raise click.UsageError("--all exports pages: use it with --to html")
    if out == "-":
        raise click.UsageError("--all writes a folder: name it with -o DIR")
    with user_errors():
        items, errors = _stored_sessions(root, harness)  # the rows `list` shows: its filters narrow them here
        report = site.export_store(items, out, price=PRICE)
    for error in errors + report.errors:
        click.echo(f"txcodec: warning: {error}", err=True)
    click.echo(f"{len(report.rendered)} pages written, {len(report.unchanged)} unchanged, "
               f"{len(report.errors)} failed: {Path(out) / 'index.html'}", err=True)


def register(group: click.Group) -> None:
    @group.command("export")
    @click.argument("path", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--to", "fmt", type=click.Choice(sorted(FORMATS)), default="common", show_default=True)
    @click.option("-o", "--output", "out", type=str, default="-", show_default=True,
                  help="Output file; '-' for stdout (with --all: the folder).")
    @click.option("--from", "harness", type=str, help="The file's harness (detected when left out; with --all: only its store).")
    @click.option("--loss", "show_loss", is_flag=True, help="Print the loss report as JSON (on stderr when the export goes to stdout).")
    @click.option("--all", "everything", is_flag=True,
                  help="Every session in the stores (as `list` finds them) as pages in -o DIR, with an index.html; "
                       "unchanged sessions are not rendered again.")
    @click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path),
                  help="With --all: the store folder to scan instead of each harness's default.")
    def export(path: Path | None, fmt: str, out: str, harness: str | None, show_loss: bool, everything: bool,
               root: Path | None) -> None:
        """Export the conversation in PATH as Common JSON, Markdown or a self-contained HTML page.

        With --all --to html -o DIR, export every stored session (only --from's harness
        when given) as one page each plus an index.html with search.
        """
        if everything:
            if path is not None:
                raise click.UsageError("give either PATH or --all, not both")
            _export_all(root, harness, fmt, out)
            return
        if path is None:
            raise click.UsageError("missing PATH (or --all)")
        loss = LossReport()
        with user_errors():
            conv = read_common(path, harness, loss)
            if fmt == "html":
                _write_html(conv, out)
            elif out == "-":
                stdout_binary().write(FORMATS[fmt](conv))
                stdout_binary().flush()
            else:
                write_atomic(out, FORMATS[fmt](conv))  # never overwrites an existing file
        if show_loss:
            if out == "-":
                click.echo(msgspec.json.format(msgspec.json.encode(loss.to_dict()), indent=2).decode(), err=True)
            else:
                echo_json(loss.to_dict())
