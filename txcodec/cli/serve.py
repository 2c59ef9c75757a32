"""``txcodec serve``: the stores as a local web site whose pages update themselves
(:mod:`txcodec.serve`)."""

from __future__ import annotations

from pathlib import Path

import click

from .options import from_option
from .options import user_errors


def register(group: click.Group) -> None:
    @group.command("serve")
    @click.option(
        "--host",
        default="127.0.0.1",
        show_default=True,
        help="Address to bind; any other than loopback prints a token every request must carry.",
    )
    @click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
    @from_option(help="Only this harness's store.")
    @click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="With --from: this store folder.")
    def serve(host: str, port: int, harness: str | None, root: Path | None) -> None:
        """Serve the sessions of every store as local web pages: the index with full-text
        search, and each session's page, updated in place while it is written. Read-only;
        needs the serve extra. See docs/live.md."""
        from .. import serve as server

        if root is not None and harness is None:
            raise click.UsageError("--root needs --from: whose store it is")
        with user_errors():
            try:
                server.serve(host, port, harness=harness, root=root, say=lambda line: click.echo(line, err=True))
            except server.MissingExtra as exc:
                raise click.ClickException(str(exc)) from exc
            except KeyboardInterrupt:
                pass
