"""cline 3.0.65, run for real against the loopback Chat Completions mock.

A genuine session (two prompts with a tool call each: the first ``cline --json``, the
second typed into the TUI of ``cline --id``) is generated; it, the golden one and the
guide's hand-written one are converted and resumed in the TUI. "Same history" compares
the first request of each resume with what the file reads to. A session installed without
its ``sessions.db`` row opens empty (the TUI starts anew and sends only the new prompt):
check_resume must report that as not resumed.

CI cost: about ten cline runs of 20-90 s each (the TUI is slow to draw under load), one
claude run. The runs are sequential: every cline run starts a hub daemon on one fixed
port, and two at once would meet there.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.chat_views import view
from support.cline_genuine import FIRST
from support.cline_genuine import SECOND
from support.cline_genuine import TIMEOUT
from support.cline_genuine import make_genuine
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.core.atomic import install_files
from txcodec.harnesses.cline import store
from txcodec.resume_check import cline

pytestmark = pytest.mark.real_client

(GOLDEN_FILE,) = (GOLDEN / "cline" / "tool_call_resumed").glob("*.messages.json")
(HANDWRITTEN,) = (GOLDEN / "cline" / "handwritten").glob("*.messages.json")


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    try:
        cline.cline_binary()
    except cline.ClientMissing as exc:
        pytest.fail(str(exc))
    return make_genuine(tmp_path_factory.mktemp("cline"))


def _expected(path: Path):
    return view(api.to_common(api.load(path)).messages)


def _convert(path: Path, target: str, tmp: Path, source: str | None = None) -> Path:
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    folder = tmp / f"{target}-out"
    install_files(folder, written.files)
    return folder / written.main


def test_genuine_session_reads_with_both_tool_calls(genuine):
    session = api.load(genuine)
    assert session.harness == "cline" and session.dump() == genuine.read_bytes() and not session.diagnostics
    c = api.to_common(session)
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2
    assert [c.messages[0].content[0].text, c.messages[4].content[0].text] == [FIRST, SECOND]
    results = [b for m in c.messages for b in m.content if type(b).__name__ == "ToolResult"]
    assert [json.loads(r.content)[0]["result"] for r in results] == ["1 | hello world", "2 a.txt\n"]


def test_roundtrip_resumes_with_the_same_history(genuine, tmp_path):
    """The genuine session, its cline -> cline conversion and the hand-written one resume
    in the TUI, each sending the history the file reads to (texts, calls, results)."""
    for path in (genuine, _convert(genuine, "cline", tmp_path), HANDWRITTEN):
        report = cline.check_resume(path, timeout=TIMEOUT)
        assert report.resumed, (path, report.rejected, report.stderr[-3000:])
        assert view(report.sent) == _expected(path) == _expected(genuine if path != HANDWRITTEN else HANDWRITTEN)
    assert ("tool_result", "call_h1", "HW a.txt") in _expected(HANDWRITTEN)[2][1]


def test_to_claude_and_back_resume_with_the_history_sent(genuine, tmp_path):
    from txcodec.resume_check import claude_code as claude

    expected = _expected(genuine)
    claude_file = _convert(genuine, "claude_code", tmp_path)
    report = claude.check_resume(claude_file)
    assert report.resumed, report.stderr
    sent = report.sent
    if sent and sent[-1].role == "user" and getattr(sent[-1].content[-1], "text", None) == claude.RESUME_PROMPT:
        sent[-1].content.pop()
    claude_view = [
        (r, [b for b in blocks if not (b[0] == "text" and b[1].startswith("<system-reminder>"))])
        for r, blocks in view(sent)
    ]
    assert [m for m in claude_view if m[1]] == expected
    back = _convert(claude_file, "cline", tmp_path, source="claude_code")
    report = cline.check_resume(back, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr[-3000:])
    assert view(report.sent) == expected


def test_claude_session_resumes_in_cline(tmp_path):
    """A Claude Code session (the bundled sample) resumes in cline with its texts, tool
    calls and results."""
    target = _convert(api.sample("claude_code"), "cline", tmp_path)
    report = cline.check_resume(target, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr[-3000:])
    sent = view(report.sent)
    assert sent == _expected(target)
    assert {"text", "tool_use", "tool_result"} <= {b[0] for _, blocks in sent for b in blocks}


def test_without_the_database_row_the_resume_is_silent_and_reported(monkeypatch):
    """The folder alone (no sessions.db row): cline opens an empty session and sends only
    the new prompt, with no error; check_resume must say NOT resumed."""
    monkeypatch.setattr(store, "install", lambda files, root=None: install_files(root, files))
    report = cline.check_resume(HANDWRITTEN, timeout=TIMEOUT)
    assert report.requests >= 1 and report.sent == []
    assert not report.resumed and "new session" in " ".join(report.rejected)


def test_installed_session_resumes_with_the_printed_command():
    """``convert --install`` writes the folder and the row into the store HOME names and
    prints ``cline --id <id>``; that TUI resumes it."""
    expected = _expected(GOLDEN_FILE)
    with cline.Cline() as box:
        env = {
            "HOME": str(box.home),
            "CLINE_DIR": None,
            "CLINE_DATA_DIR": None,
            "CLINE_DB_DATA_DIR": None,
            "CLINE_SESSION_DATA_DIR": None,
        }
        result = CliRunner().invoke(
            main, ["convert", "--to", "cline", "--install", "--cwd", str(box.cwd), str(GOLDEN_FILE)], env=env
        )
        assert result.exit_code == 0, result.output
        command = result.stdout.strip()
        session = command.split()[-1]
        assert command == f"cd {shlex.quote(str(box.cwd))} && cline --id {session}"
        assert (box.store / store.session_relpath(session)).is_file()
        run = box.tui(session, "continue", timeout=TIMEOUT)
        assert run.exit_code == 0, run.stdout[-3000:]
        assert view(cline.history_sent(run.bodies[0], "continue")) == expected


def test_a_result_without_its_tool_name_is_refused(tmp_path):
    """Why the writer names every result after its call: without ``name`` the TUI refuses
    the history (a zod error on screen) and never asks the model."""
    value = json.loads(HANDWRITTEN.read_bytes())
    del value["messages"][2]["content"][0]["name"]
    folder = tmp_path / value["sessionId"]
    folder.mkdir()
    path = folder / HANDWRITTEN.name
    path.write_text(json.dumps(value))
    report = cline.check_resume(path, timeout=90)
    assert report.requests == 0 and not report.resumed
