"""``txcodec metrics SESSION...``: token usage as OTLP metrics, derived from transcripts."""

from __future__ import annotations

from pathlib import Path

import click

from ..metrics import MissingExtra
from ..metrics import check_endpoint
from ..metrics import send
from ..metrics import since_ns
from ..metrics import to_otlp_json
from ..metrics import to_otlp_proto
from ..metrics import token_points
from .options import SessionParam
from .options import chosen_timezone
from .options import read_common
from .options import stdout_binary
from .options import timezone_option
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
    @click.option(
        "--since",
        metavar="WHEN",
        help="Only calls at or after WHEN: a date, an ISO time, today, or an age: 30min, 12h, 7d, 2w, 3mo.",
    )
    @timezone_option()
    @click.option(
        "--format", "fmt", type=click.Choice(["otlp-json", "otlp-proto"]), default="otlp-json", show_default=True
    )
    @click.option(
        "--endpoint",
        help="Send to this OTLP/HTTP receiver (protobuf; /v1/metrics added to a bare URL) instead of printing.",
    )
    @click.option(
        "--follow", is_flag=True, help="Go on: push each finished minute as the sessions grow (Ctrl-C stops)."
    )
    @click.option(
        "--lookback",
        default="24h",
        show_default=True,
        help="With --follow: calls older than this when first seen are not sent.",
    )
    @click.option(
        "--state",
        "state_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="With --follow: the state file (default: $XDG_STATE_HOME/txcodec/metrics-follow.json).",
    )
    @click.option("--interval", type=click.FloatRange(min=0.05), default=5.0, show_default=True, hidden=True)
    @click.option("--grace", type=click.FloatRange(min=0), default=10.0, show_default=True, hidden=True)
    @click.option("--idle", type=click.FloatRange(min=0), hidden=True)
    def metrics(
        paths: tuple[Path, ...],
        since: str | None,
        fmt: str,
        endpoint: str | None,
        follow: bool,
        lookback: str,
        state_file: Path | None,
        interval: float,
        grace: float,
        idle: float | None,
    ) -> None:
        """claude_code.token.usage as Claude Code's exporter writes it, derived from the
        transcripts: one point per finished call (its last fragment's usage, counted once),
        type input/output/cacheRead/cacheCreation, model, session.id and query_source
        main/subagent, as per-minute delta sums. Other harnesses' calls go under
        txcodec.token.usage. otlp-proto and --endpoint need the metrics extra. See
        docs/metrics.md; --follow
        (with --endpoint) goes on as the sessions grow: docs/live.md."""
        if follow:
            _follow(paths, endpoint, lookback, state_file, interval, grace, idle)
            return
        with user_errors():
            if endpoint:
                check_endpoint(endpoint)  # a bad URL is told before any session is read
            start = since_ns(since, chosen_timezone()) if since else None
            conversations = [read_common(p) for p in _files(paths)]
            points = token_points(conversations, since_ns=start)
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


def _follow(
    paths: tuple[Path, ...],
    endpoint: str | None,
    lookback: str,
    state_file: Path | None,
    interval: float,
    grace: float,
    idle: float | None,
) -> None:
    import sys
    import time

    from ..metrics import _proto
    from ..metrics_follow import MetricsFollower
    from ..metrics_follow import default_state_file

    if not endpoint:
        raise click.UsageError("--follow sends to a receiver: give it --endpoint URL")
    with user_errors():
        check_endpoint(endpoint)  # a bad URL is told before any session is read
        try:
            _proto()
        except MissingExtra as exc:
            raise click.ClickException(str(exc)) from exc
        horizon = since_ns(lookback, chosen_timezone())
        follower = MetricsFollower(
            list(paths),
            endpoint,
            state_file or default_state_file(),
            lookback_ns=time.time_ns() - horizon,
            grace=grace,
            say=lambda line: click.echo(line, err=True),
        )
        try:
            follower.run(interval, idle)
        except KeyboardInterrupt:  # the state file is written after every change: nothing to save
            sys.exit(130)
