"""Shared by the cline tests: making a genuine session with the real client."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

from txcodec.resume_check import cline
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

TIMEOUT = 180
FIRST, SECOND = "read a.txt", "count the words"
FINAL = "Two words."


def make_genuine(out: Path) -> Path:
    """Two prompts, a tool call each: the first ``cline --json``, the second typed into the
    TUI of ``cline --id``. The session folder (messages file and record) is copied to ``out``."""
    with cline.Cline() as box:
        (box.cwd / "a.txt").write_text("hello world\n")
        first = box.prompt(
            FIRST,
            [tool_call("read_files", {"files": [{"path": "a.txt"}]}, say="Reading."), text("It says hello world.")],
            timeout=TIMEOUT,
        )
        assert first.exit_code == 0, first.stderr[-2000:]
        (messages,) = box.sessions()
        session_id = messages.parent.name
        first_record = (messages.parent / f"{session_id}.json").read_bytes()
        first_row = db_row(box.store / "db" / "sessions.db", session_id)
        second = box.tui(
            session_id,
            SECOND,
            [tool_call("run_commands", {"commands": ["wc -w a.txt"]}, id="call_mock_2"), text(FINAL)],
            timeout=TIMEOUT,
            done=lambda n: n >= 2 and FINAL.encode() in messages.read_bytes(),
        )
        assert second.exit_code == 0, second.stdout[-3000:]
        assert box.sessions() == [messages]  # the TUI continued the same session
        out.mkdir(parents=True, exist_ok=True)
        for path in messages.parent.iterdir():
            (out / path.name).write_bytes(path.read_bytes())
        # the record and the client's own row after the first run, for tests/harnesses/cline/test_cline.py
        (out / "first_run").mkdir(exist_ok=True)
        (out / "first_run" / "record.json").write_bytes(first_record)
        (out / "first_run" / "row.json").write_text(json.dumps(first_row, indent=1) + "\n")
        return out / messages.name


def db_row(db: Path, session_id: str) -> dict:
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.row_factory = sqlite3.Row
        row = con.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        return dict(row) if row is not None else {}
