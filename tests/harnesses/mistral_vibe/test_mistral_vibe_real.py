"""Mistral Vibe 3.0.2, run for real against the loopback Chat Completions mock.

A genuine unified session (two prompts, each with a ``bash`` call the CLI really runs,
the second a ``--resume``) is generated; it, the golden ones and their conversions are
written in the legacy form and resumed. "Same history" compares the first request of each
resume. A legacy session the client imports with no history (exit 0) must be reported as
not resumed.

CI cost: about ten vibe runs of 10-25 s each (one claude run besides).
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.chat_views import view
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.core.atomic import install_files
from txcodec.harnesses.mistral_vibe.store import journal_errors
from txcodec.model.loss import LossReport
from txcodec.resume_check import mistral_vibe as vibe
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

pytestmark = pytest.mark.real_client

UNIFIED = GOLDEN / "mistral_vibe" / "unified_resumed" / "CURRENT"
LEGACY = GOLDEN / "mistral_vibe" / "handwritten_legacy" / "messages.jsonl"
TIMEOUT = 300


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    """The unified session folder the client wrote (its files as they are)."""
    try:
        vibe.vibe_binary()
    except vibe.ClientMissing as exc:
        pytest.fail(str(exc))
    out = tmp_path_factory.mktemp("vibe") / "genuine"
    with vibe.Vibe() as box:
        (box.cwd / "hello.txt").write_text("hello world\n")
        first = box.vibe(
            "read hello.txt",
            [tool_call("bash", {"command": "cat hello.txt"}, say="Reading."), text("It says hello world.")],
            timeout=TIMEOUT,
        )
        assert first.exit_code == 0, first.stderr
        (folder,) = box.sessions()
        # --output json prints the entries, each naming the session
        assert {e["sessionId"] for e in json.loads(first.stdout)} == {folder.name}
        second = box.vibe(
            "count the words",
            [tool_call("bash", {"command": "wc -w hello.txt"}, id="call_mock_2"), text("Two.")],
            resume=folder.name,
            timeout=TIMEOUT,
        )
        assert second.exit_code == 0, second.stderr
        # the resume sent the first prompt's history; tool results as the tool's JSON output
        sent = vibe.history_sent(second.bodies[0], "count the words")
        assert view(sent) == view(api.to_common(api.load(folder)).messages[:4])
        assert json.loads(sent[2].content[0].content)["stdout"] == "hello world\n"
        assert box.sessions() == [folder]  # resumed in place, no new session
        shutil.copytree(folder, out)
    return out


def _legacy(path: Path, source: str, tmp: Path) -> Path:
    """``path`` converted to the legacy form in ``tmp``: its ``messages.jsonl``."""
    written, _ = api.convert(path, "mistral_vibe", from_=source, cwd="/tmp")
    (main_file, *_) = install_files(tmp, written.files)
    return main_file


def test_genuine_session_reads_with_its_digest_chain_intact(genuine):
    session = api.load(genuine)
    assert session.harness == "mistral_vibe" and session.dump() == (genuine / "CURRENT").read_bytes()
    report = LossReport()
    c = api.to_common(session, report)
    assert report.counts() == {}  # every digest recomputed matches
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2
    assert journal_errors(genuine) == []  # each journal segment is an unbroken chain


def test_roundtrip_resumes_with_the_same_history(genuine, tmp_path):
    copies = [
        _legacy(genuine, "mistral_vibe", tmp_path / "g"),
        _legacy(UNIFIED, "mistral_vibe", tmp_path / "u"),
        _legacy(LEGACY, "mistral_vibe", tmp_path / "l"),
    ]
    with ThreadPoolExecutor(2) as pool:
        reports = list(
            pool.map(lambda p: vibe.check_resume(p, timeout=TIMEOUT), [copies[0], LEGACY, copies[2], copies[1]])
        )
    for report in reports:
        assert report.resumed, (report.rejected, report.stderr)
    assert view(reports[0].sent) == view(api.to_common(api.load(genuine)).messages)
    assert view(reports[1].sent) == view(reports[2].sent) == view(api.to_common(api.load(LEGACY)).messages)
    assert view(reports[3].sent) == view(api.to_common(api.load(UNIFIED)).messages)
    assert [r for r, _ in view(reports[0].sent)] == ["user", "assistant", "user", "assistant"] * 2
    assert reports[0].client == "vibe 3.0.2"


def test_to_claude_and_back_resume_with_the_history_sent(genuine, tmp_path):
    from txcodec.resume_check import claude_code as claude

    expected = view(api.to_common(api.load(genuine)).messages)
    written, _ = api.convert(genuine, "claude_code", cwd="/tmp")
    claude_file = tmp_path / "claude.jsonl"
    claude_file.write_bytes(written.files[written.main])
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
    # Claude Code -> Mistral Vibe: the Claude file just made, written back, resumes in vibe
    back = _legacy(claude_file, "claude_code", tmp_path / "back")
    report = vibe.check_resume(back, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    assert view(report.sent) == expected


def test_installed_session_resumes_with_the_printed_command():
    expected = view(api.to_common(api.load(UNIFIED)).messages)
    with vibe.Vibe() as box:
        result = CliRunner().invoke(
            main,
            ["convert", "--to", "mistral_vibe", "--install", str(UNIFIED.parent)],
            env={"HOME": str(box.home), "VIBE_HOME": None},
        )
        assert result.exit_code == 0, result.output
        command = result.stdout.strip()
        assert command.split(" && ")[-1] == "vibe --resume ada8c86e-ac76-a171-408d-14f4d3389705"
        run = box.vibe("continue", resume=command.split()[-1], timeout=TIMEOUT)
        assert run.exit_code == 0, run.stderr
        assert view(vibe.history_sent(run.bodies[0], "continue")) == expected


def test_a_silent_empty_import_is_not_a_resume(tmp_path):
    """A legacy folder whose lines are all ``system`` passes the client's checks (both
    files, messages not empty) and is imported with no history, exit 0: check_resume must
    say NOT resumed. Without ``meta.json`` the client refuses the folder (exit 2)."""
    folder = tmp_path / "session_x_5e551011"
    folder.mkdir()
    lines = [json.loads(x) for x in LEGACY.read_bytes().splitlines()]
    (folder / "messages.jsonl").write_text("".join(json.dumps({**x, "role": "system"}) + "\n" for x in lines))
    (folder / "meta.json").write_bytes((LEGACY.parent / "meta.json").read_bytes())
    report = vibe.check_resume(folder / "messages.jsonl", timeout=TIMEOUT)
    assert report.exit_code == 0 and report.requests >= 1 and not report.sent and not report.resumed
    assert any("new session" in r for r in report.rejected)
    with vibe.Vibe() as box:
        install_files(box.store, {"logs/session/session_x_5e551011/messages.jsonl": LEGACY.read_bytes()})
        run = box.vibe("continue", resume="5e551011-0000-4000-8000-0000000c2a01", timeout=TIMEOUT)
        assert run.exit_code != 0 and not run.requests and "cannot be loaded" in run.stderr + run.stdout
