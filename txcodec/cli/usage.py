"""``txcodec usage PATH...``: tokens per session and model (subagents included)."""

from __future__ import annotations

from pathlib import Path

import click

from ..usage import TOKEN_FIELDS, ModelUsage, session_usage
from .common import echo_json, read_common, user_errors

_HEADER = ("session", "model", "calls", "no usage", "input", "output", "cache write", "cache read", "total")
_NOTE = (
    "unverified: calls that never reported a stop_reason (Claude Code before 2.1.220 wrote null on "
    "nearly every call); their last fragment's usage, whose output count may be a streaming stub. "
    "See docs/usage.md."
)


def _paths(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given; a folder contributes its top-level ``*.jsonl`` main transcripts."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(p.glob("*.jsonl"))
            if not found:
                raise click.ClickException(f"{p}: no *.jsonl session files in this folder")
            out.extend(found)
        else:
            out.append(p)
    return out


def _table_rows(r: ModelUsage) -> list[tuple[str, ...]]:
    """The verified row, and an ``(unverified)`` row when some calls had no stop_reason."""
    sid = r.session[:36]
    rows = []
    verified_calls = r.calls - r.calls_unverified
    if verified_calls or not r.calls_unverified:
        tokens = [getattr(r, f) for f in TOKEN_FIELDS]
        rows.append((sid, r.model, str(verified_calls), str(r.calls_without_usage), *(f"{t:,}" for t in tokens), f"{sum(tokens):,}"))
    if r.calls_unverified:
        tokens = [getattr(r, "unverified_" + f) for f in TOKEN_FIELDS]
        rows.append((sid, f"{r.model} (unverified)", str(r.calls_unverified), "", *(f"{t:,}" for t in tokens), f"{sum(tokens):,}"))
    return rows


def register(group: click.Group) -> None:
    @group.command("usage")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
    @click.option("--json", "as_json", is_flag=True, help="One JSON object per session and model.")
    @click.option("--no-subagents", is_flag=True, help="Count the main transcript only.")
    def usage(paths: tuple[Path, ...], as_json: bool, no_subagents: bool) -> None:
        """Token usage per session and model: a call counts once, with its last fragment's
        usage, and only when it reported a stop_reason; calls without one are reported
        apart as unverified."""
        rows: list[tuple[Path, ModelUsage]] = []
        with user_errors():
            for path in _paths(paths):
                conv = read_common(path)
                rows.extend((path, r) for r in session_usage(conv, subagents=not no_subagents))
        if as_json:
            echo_json([{"path": str(p), **r.to_dict()} for p, r in rows])
            return
        table = [_HEADER] + [row for _, r in rows for row in _table_rows(r)]
        widths = [max(len(row[i]) for row in table) for i in range(len(_HEADER))]
        for row in table:
            click.echo("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
        if any(r.calls_unverified for _, r in rows):
            click.echo("\n" + _NOTE)
