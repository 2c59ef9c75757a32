"""``txcodec changes SESSION``: the files each tool call changed, as diffs."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from .. import api
from ..kit.changes import session_changes
from ..model.changes import unified_diff
from .options import SessionParam
from .options import canonical_harness
from .options import complete_harness
from .options import echo_json
from .options import user_errors


def register(group: click.Group) -> None:
    @group.command("changes")
    @click.argument("path", type=SessionParam())
    @click.option(
        "--from",
        "harness",
        type=str,
        callback=canonical_harness,
        shell_complete=complete_harness,
        help="The file's harness (detected when left out).",
    )
    @click.option("--json", "as_json", is_flag=True, help="The change records as a JSON list.")
    def changes(path: Path, harness: str | None, as_json: bool) -> None:
        """The files each tool call changed, per call, with its diff: as the client
        reported it, or computed from the versions it recorded. A shell command is
        listed as unknown (its effect on files is not recorded), a failed edit not at
        all. PATH is a file, a session id or prefix, or latest[:HARNESS]. See docs/changes.md."""
        with user_errors():
            session = api.load(path, harness)
            found = session_changes(session, api.to_common(session))
        if as_json:
            echo_json(msgspec.to_builtins(found))
            return
        for c in found:
            who = f" [subagent {c.agent_id}]" if isinstance(c.agent_id, str) else ""
            where = c.path if isinstance(c.path, str) else "(files not recorded)"
            click.echo(f"{c.tool_use_id} {c.tool}{who}: {c.operation} {where} ({c.basis}, {c.captured_by})")
            if isinstance(c.note, str):
                click.echo(f"  {c.note}")
            elif c.hunks:
                click.echo(unified_diff(c))
            click.echo("")
        if not found:
            click.echo("no tool call changed a file")
