"""``txcodec index``: where the session index is, how many sessions it holds, and ``--clear``."""

from __future__ import annotations

import click

from .. import grep_index
from .. import session_index
from .. import sessions


def register(group: click.Group) -> None:
    @group.command("index")
    @click.option("--clear", is_flag=True, help="Remove the index (the next `list` reads every session again).")
    @click.option(
        "--fts",
        is_flag=True,
        help="Also keep which texts each session's file may hold, for `list --grep` (made or brought up to date now).",
    )
    def index(clear: bool, fts: bool) -> None:
        """Show or clear the session index, where `list` keeps what it read of each session.

        It sits in the platform's cache folder ($XDG_CACHE_HOME/txcodec on Linux), mode
        0600, and holds each session's title, first prompt, message count, models and
        lineage, kept while the session's file keeps its size, time and inode. `list
        --no-index` reads past it; a damaged index, or one another txcodec version
        wrote, is rebuilt. --fts also keeps, for every 16 KB of each session file, which
        three-byte sequences it holds (a second database beside it, about a quarter of
        the files' size), so that `list --grep` reads only the parts of the files that may
        hold the text; `list --grep` then adds the files that changed. See docs/speed.md.

        `usage` keeps there each Claude Code and Codex file's tokens per model and day and
        its calls' marks (`usage --no-index` reads past them; docs/usage.md), and `lineage`
        how each session of a store began (`lineage --no-index` reads every file).
        """
        path = session_index.default_path()
        if clear:
            removed = [*session_index.clear(path), *grep_index.clear()]
            click.echo(f"removed {path}" if removed else f"no index at {path}")
            return
        if fts:
            held, read = sessions.index_texts()
            click.echo(f"{grep_index.default_path()}: the text of {held} session files ({read} read now)")
        if not path.exists():
            click.echo(f"{path}: no index yet (txcodec list or usage makes it)")
            return
        found = session_index.SessionIndex(path)
        try:
            click.echo(f"{path}: {found.count()} sessions, {path.stat().st_size} bytes")
        finally:
            found.close()
