"""``txcodec watch`` (docs/live.md#watch): the sessions written to lately, each with the tool
running now and its tokens so far, followed as they grow; a session untouched for longer
than ``--within`` is not listed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from click.testing import CliRunner
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.live import Watcher
from txcodec.live import _running

SOURCE = next((GOLDEN / "claude_code" / "scenarios" / "write_edit").glob("*.jsonl"))
OTHER = next((GOLDEN / "claude_code" / "scenarios" / "parallel_tools").glob("*.jsonl"))


def _cut() -> int:
    """The first number of lines after which a tool call waits for its result."""
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    for k in range(1, len(lines)):
        if _running(api.to_common(api.load(b"".join(lines[:k]), "claude_code"))):
            return k
    raise AssertionError("no call waits for its result")


def test_watch_lists_what_is_written_now(tmp_path: Path) -> None:
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    project = tmp_path / "store" / "-home-dev-shop"
    project.mkdir(parents=True)
    path = project / SOURCE.name
    cut = _cut()
    path.write_bytes(b"".join(lines[:cut]))
    old = project / OTHER.name
    old.write_bytes(OTHER.read_bytes())
    hours_ago = time.time() - 7200
    os.utime(old, (hours_ago, hours_ago))

    watcher = Watcher("claude_code", tmp_path / "store", within=600)
    [active] = watcher.look()
    assert active.session_id == SOURCE.stem and active.running in ("Write", "Edit")
    first_tokens = active.tokens
    with path.open("ab") as file:
        file.write(b"".join(lines[cut:]))
    [active] = watcher.look()
    assert active.running is None and active.tokens > first_tokens

    result = CliRunner().invoke(main, ["watch", "--once", "--from", "claude_code", "--root", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    assert "claude_code" in result.output and f"{active.tokens:,}" in result.output
    assert OTHER.stem not in result.output
