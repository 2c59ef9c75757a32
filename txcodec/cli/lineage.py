"""``txcodec lineage SESSION``: how a session began, its ancestry and its descendants."""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from ..lineage import default_root
from ..lineage import lineage
from ..lineage import session_origin
from ..lineage import store_origins
from ..model.common import ForkedFrom
from .options import SessionParam
from .options import echo_json
from .options import user_errors


def _describe(o) -> str:
    if isinstance(o, ForkedFrom):
        return f"{o.session_id} (not in this store)"
    at = (
        f" at message {o.forked_from.message_id}" if o.forked_from and isinstance(o.forked_from.message_id, str) else ""
    )
    return f"{o.session_id}  started by {o.started_by}{at}  {o.path}"


def register(group: click.Group) -> None:
    @group.command("lineage")
    @click.argument("path", type=SessionParam())
    @click.option(
        "--root",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="The store to search for relatives (default: the store the file is in).",
    )
    @click.option("--json", "as_json", is_flag=True, help="The lineage as one JSON object.")
    @click.option(
        "--no-index",
        is_flag=True,
        help="Read every session of the store, past the origins the session index keeps (see `txcodec index`).",
    )
    def lineage_command(path: Path, root: Path | None, as_json: bool, no_index: bool) -> None:
        """How the session in PATH began (new, clear, fork, resume), the sessions it was
        forked from and the ones forked from it, by the links the files record
        (forkedFrom, forked_from_id, parentSession), never by guessing. A session begun
        with /clear names no predecessor. PATH is a file, a session id or prefix, or
        latest[:HARNESS]. See docs/lineage.md."""
        with user_errors():
            session = api.load(path)
            own = session_origin(session)
            if own.started_by is None:
                raise click.ClickException(f"{path}: {session.harness} records no session lineage")
            found = store_origins(own.harness, root or default_root(own.harness, path), index=not no_index)
            result = lineage(own, found)
        if as_json:
            echo_json(
                {
                    "session": own.to_dict(),
                    "ancestors": [
                        a.to_dict()
                        if not isinstance(a, ForkedFrom)
                        else {"session_id": a.session_id, "in_store": False}
                        for a in result.ancestors
                    ],
                    "descendants": [{"depth": d, **o.to_dict()} for d, o in result.descendants],
                }
            )
            return
        for depth, ancestor in enumerate(reversed(result.ancestors)):
            click.echo("  " * depth + _describe(ancestor))
        depth = len(result.ancestors)
        click.echo("  " * depth + "* " + _describe(own))
        for d, o in result.descendants:
            click.echo("  " * (depth + d) + _describe(o))
        if own.started_by == "clear":
            click.echo("began with /clear: the file names no predecessor, and none is guessed")
