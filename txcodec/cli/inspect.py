"""``txcodec inspect FILE``: what a native file holds, line by line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import click
import msgspec

from .. import api
from ..kit import registry
from ..model.native import NativeSession
from ..model.native import Opaque
from .options import SessionParam
from .options import echo_json
from .options import from_option
from .options import user_errors


class _TypePeek(msgspec.Struct):
    type: Any = None


_type_peek = msgspec.json.Decoder(_TypePeek)


def kind(record: Any) -> str:
    """A census key: the record's type tag (``opaque`` for a line kept as bytes), with a
    ``system`` record's subtype, an ``attachment``'s own type or a Codex payload's type
    after a colon."""
    if isinstance(record, Opaque):
        return f"opaque:{record.type}" if record.type else "opaque"
    config = getattr(record, "__struct_config__", None)
    own_type = getattr(record, "type", None)  # an untagged envelope that keeps its type (Codex OtherLine)
    name = (
        config.tag
        if config is not None and isinstance(config.tag, str)
        else own_type
        if isinstance(own_type, str)
        else type(record).__name__
    )
    payload = getattr(record, "payload", None)  # Codex: response_item:message, event_msg:token_count
    inner = getattr(getattr(payload, "__struct_config__", None), "tag", None)
    if isinstance(payload, msgspec.Raw):  # a payload type the codec does not know
        try:
            inner = _type_peek.decode(payload).type
        except (msgspec.DecodeError, msgspec.ValidationError):
            inner = None
    if isinstance(inner, str):
        return f"{name}:{inner}"
    subtype = getattr(record, "subtype", None)
    if isinstance(subtype, str):
        return f"{name}:{subtype}"
    inner = getattr(getattr(record, "attachment", None), "type", None)
    if isinstance(inner, str):
        return f"{name}:{inner}"
    return name


def report(session: NativeSession, size: int) -> dict[str, Any]:
    harness = registry.get(session.harness)
    census = Counter(kind(line.peek) for line in session.lines)
    sides: dict[str, list[Path]] = {}
    store = harness.store
    if store is not None and store.side_files is not None and session.path is not None:
        sides = store.side_files(session.path)
    return {
        "path": str(session.path) if session.path else None,
        "harness": session.harness,
        "harness_title": harness.title,
        "bytes": size,
        "lines": len(session.lines),
        "final_newline": session.final_newline,
        "census": dict(sorted(census.items(), key=lambda kv: (-kv[1], kv[0]))),
        "diagnostics": [
            {"line": n, "type": o.type, "diagnostic": o.diagnostic, "partial": o.partial}
            for n, o in session.diagnostics
        ],
        "side_files": {k: [str(p) for p in v] for k, v in sides.items()},
    }


def _echo_text(info: dict[str, Any]) -> None:
    click.echo(f"file:      {info['path']}")
    click.echo(f"harness:   {info['harness']} ({info['harness_title']})")
    newline = "" if info["final_newline"] else ", no final newline"
    click.echo(f"size:      {info['bytes']} bytes, {info['lines']} lines{newline}")
    click.echo("records:")
    for name, count in info["census"].items():
        click.echo(f"  {count:7}  {name}")
    if info["diagnostics"]:
        click.echo(f"diagnostics ({len(info['diagnostics'])} lines kept as bytes):")
        for d in info["diagnostics"]:
            click.echo(f"  line {d['line']}: {d['diagnostic']}")
    if info["side_files"]:
        click.echo("side files:")
        for group, paths in info["side_files"].items():
            click.echo(f"  {group} ({len(paths)}):")
            for path in paths:
                click.echo(f"    {path}")


def register(group: click.Group) -> None:
    @group.command("inspect")
    @click.argument("file", type=SessionParam())
    @from_option("Read FILE as this harness (detected when left out).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    def inspect(file: Path, harness: str | None, as_json: bool) -> None:
        """Show what FILE holds: its harness, a census of record types, every line kept
        only as bytes (with its line number and why) and the session's side files. FILE
        may also be a session id, an id prefix or latest[:HARNESS]."""
        with user_errors():
            session = api.load(file, harness)
            info = report(session, file.stat().st_size)
        if as_json:
            echo_json(info)
        else:
            _echo_text(info)
