"""``txcodec metrics SESSION...``: token usage as OTLP metrics, derived from transcripts."""

from __future__ import annotations

from pathlib import Path

import click

from ..metrics import MissingExtra
from ..metrics import check_endpoint
from ..metrics import parse_since
from ..metrics import send
from ..metrics import to_otlp_json
from ..metrics import to_otlp_proto
from ..metrics import token_points
from .options import SessionParam
from .options import read_common
from .options import stdout_binary
from .options import user_errors


def _files(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given; a folder contributes its sessions, recursively, as `usage` reads them."""
    from ..usage import folder_files

    out: list[Path] = []
    for path in paths:
        found = folder_files(path) if path.is_dir() else [path]
        if not found:
            raise click.ClickException(f"{path}: no session files in this folder")
        out.extend(found)
    return out


def register(group: click.Group) -> None:
    @group.command("metrics")
    @click.argument("paths", nargs=-1, required=True, type=SessionParam(dir_okay=True))
    @click.option("--since", help="Only calls at or after this time: ISO 8601, or a duration back from now (24h, 7d).")
    @click.option(
        "--format", "fmt", type=click.Choice(["otlp-json", "otlp-proto"]), default="otlp-json", show_default=True
    )
    @click.option(
        "--endpoint",
        help="Send to this OTLP/HTTP receiver (protobuf; /v1/metrics added to a bare URL) instead of printing.",
    )
    def metrics(paths: tuple[Path, ...], since: str | None, fmt: str, endpoint: str | None) -> None:
        """claude_code.token.usage as Claude Code's exporter writes it, derived from the
        transcripts: one point per finished call (its last fragment's usage, counted once),
        type input/output/cacheRead/cacheCreation, model, session.id and query_source
        main/subagent, as per-minute delta sums. Other harnesses' calls go under
        txcodec.token.usage. Needs the metrics extra. See docs/metrics.md."""
        with user_errors():
            if endpoint:
                check_endpoint(endpoint)  # a bad URL is told before any session is read
            since_ns = parse_since(since) if since else None
            conversations = [read_common(p) for p in _files(paths)]
            points = token_points(conversations, since_ns=since_ns)
            try:
                if endpoint:
                    status = send(points, endpoint)
                    click.echo(f"sent {len(points)} points to {endpoint} (HTTP {status})", err=True)
                    return
                data = to_otlp_json(points) if fmt == "otlp-json" else to_otlp_proto(points)
            except MissingExtra as exc:
                raise click.ClickException(str(exc)) from exc
        if fmt == "otlp-json":
            click.echo(data.decode(), nl=False)
        else:
            stdout_binary().write(data)
