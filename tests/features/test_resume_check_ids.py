"""``check-resume`` never lets an id from a file name a path or a client argument (issue 33, item 1).

Each driver takes the session id from inside the file (Copilot's ``session.start``,
Continue's ``sessionId``, opencode's ``info.id``, ...) or from a file or folder name
(droid, kimi, cline). A hostile id is refused with one line before anything is written or
any client is started; the hostile inputs are the literal files built below."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from txcodec.cli import main
from txcodec.core.errors import UnsafeId
from txcodec.kit import registry

# Far enough up to leave any temporary folder: on the old code the file landed in /tmp.
ESCAPE = "../" * 24 + "tmp/txcodec-hostile-{harness}-{pid}"


def _escaping(harness: str) -> str:
    return ESCAPE.format(harness=harness, pid=os.getpid())


def _hostile(harness: str, folder: Path) -> tuple[Path, Path | None]:
    """A session file of ``harness`` whose id is hostile, and where the old code wrote it
    outside its throw-away store (None when the id became a client argument only)."""
    escape = _escaping(harness)
    outside = Path("/tmp") / Path(escape).name
    if harness == "copilot_cli":
        path = folder / "session-state" / "x" / "events.jsonl"
        path.parent.mkdir(parents=True)
        start = {"type": "session.start", "data": {"sessionId": escape, "version": 1}, "id": "e1"}
        path.write_text(json.dumps(start) + "\n")
        return path, outside / "events.jsonl"
    if harness == "continue_cli":
        path = folder / "session.json"
        path.write_text(json.dumps({"sessionId": escape, "title": "t", "workspaceDirectory": "/w", "history": []}))
        return path, outside.with_suffix(".json")
    if harness in ("opencode", "kilo"):
        path = folder / "ses_x.json"
        path.write_text(json.dumps({"info": {"id": "--help"}, "messages": []}))
        return path, None
    if harness == "gemini_cli":
        path = folder / "session-2026-01-02T03-04-0d0d0d0d.jsonl"
        path.write_text(json.dumps({"sessionId": "--help", "projectHash": "0" * 64, "startTime": "x"}) + "\n")
        return path, None
    if harness == "droid":  # the id is the file name
        path = folder / "--help.jsonl"
        path.write_text(json.dumps({"type": "session_start", "id": "x", "cwd": "/w"}) + "\n")
        return path, None
    if harness == "kimi_cli":  # the id is the folder name
        path = folder / "--help" / "context.jsonl"
        path.parent.mkdir()
        path.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n")
        return path, None
    if harness == "cline":  # the id is the file name (the messages file holds no id)
        path = folder / "--help.messages.json"
        path.write_text("[]")
        return path, None
    raise AssertionError(harness)


DRIVERS = ["copilot_cli", "continue_cli", "opencode", "kilo", "gemini_cli", "droid", "kimi_cli", "cline"]


@pytest.mark.parametrize("harness", DRIVERS)
def test_a_hostile_id_is_refused_before_anything_is_written_or_run(harness, tmp_path, monkeypatch):
    path, outside = _hostile(harness, tmp_path)
    started: list = []
    # no client may start (on the old code, none is run for real either)
    from txcodec.resume_check import chat_cli
    from txcodec.resume_check import process

    for module in (chat_cli, process):
        monkeypatch.setattr(module, "run_client", lambda *a, **k: started.append(a) or (1, "", ""))
    try:
        with pytest.raises(UnsafeId, match="session id"):
            registry.get(harness).check_resume(path)
    finally:
        escaped = _cleaned(outside)
    assert not started and not escaped


def _cleaned(outside: Path | None) -> bool:
    """Whether the old code's escape happened (and its file removed again)."""
    if outside is None or not outside.exists():
        return False
    outside.unlink()
    if outside.name == "events.jsonl":
        outside.parent.rmdir()
    return True


@pytest.mark.parametrize("harness", ["copilot_cli", "continue_cli"])
def test_the_cli_says_so_in_one_line(harness, tmp_path):
    path, outside = _hostile(harness, tmp_path)
    try:
        result = CliRunner().invoke(main, ["check-resume", str(path), "--from", harness])
    finally:
        assert not _cleaned(outside)
    assert result.exit_code != 0 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.strip()]
    assert len(errors) == 1 and "session id" in errors[0] and "cannot name a file" in errors[0], result.output
