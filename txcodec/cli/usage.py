"""``txcodec usage PATH...``: tokens per session and model (subagents included)."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from .. import api
from ..usage import ModelUsage, session_usage
from .common import echo_json, user_errors

_COLUMNS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _paths(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given; a folder contributes its top-level ``*.jsonl`` main transcripts."""
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(p.glob("*.jsonl")) if p.is_dir() else [p])
    return out


def register(group: click.Group) -> None:
    @group.command("usage")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
    @click.option("--json", "as_json", is_flag=True, help="One JSON object per session and model.")
    @click.option("--no-subagents", is_flag=True, help="Count the main transcript only.")
    def usage(paths: tuple[Path, ...], as_json: bool, no_subagents: bool) -> None:
        """Token usage per session and model: a call counts once, with its last fragment's
        usage, and only when it reported a stop_reason."""
        rows: list[tuple[Path, ModelUsage]] = []
        with user_errors():
            for path in _paths(paths):
                conv = api.to_common(api.load(path))
                rows.extend((path, r) for r in session_usage(conv, subagents=not no_subagents))
        if as_json:
            echo_json([{"path": str(p), **msgspec.to_builtins(r), "total_tokens": r.total_tokens} for p, r in rows])
            return
        header = ("session", "model", "calls", "no usage", "input", "output", "cache write", "cache read", "total")
        table = [header] + [
            (r.session[:36], r.model, str(r.calls), str(r.calls_without_usage), *(f"{getattr(r, c):,}" for c in _COLUMNS), f"{r.total_tokens:,}")
            for _, r in rows
        ]
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        for row in table:
            click.echo("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
