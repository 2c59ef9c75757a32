"""Qwen Code 0.24.4 and pi 0.73.1, run for real against the loopback Chat Completions mock.

Genuine sessions (with a tool call the CLI really runs) are generated, converted, and
resumed; "same history" compares the first request of each resume. A file that makes
the client silently start over (exit 0) must be reported as not resumed.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.chat_views import view
from support.paths import corpus_files

from txcodec import api
from txcodec.resume_check import pi as pi_client
from txcodec.resume_check import qwen_code as qwen_client
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

pytestmark = pytest.mark.real_client


def _require(find) -> None:
    try:
        find()
    except pi_client.ClientMissing as exc:  # the same class for both
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def qwen_session(tmp_path_factory) -> Path:
    _require(qwen_client.qwen_binary)
    out = tmp_path_factory.mktemp("qwen") / "genuine.jsonl"
    with qwen_client.Qwen() as box:
        (box.cwd / "hello.txt").write_text("hello world\n")
        script = [
            tool_call("read_file", {"file_path": str(box.cwd / "hello.txt")}, say="Reading."),
            text("It says hello world."),
        ]
        run = box.qwen("read hello.txt", script)
        assert run.exit_code == 0, run.stderr
        (path,) = box.sessions()
        out.write_bytes(path.read_bytes())
    return out


@pytest.fixture(scope="module")
def pi_session(tmp_path_factory) -> Path:
    _require(pi_client.pi_binary)
    out = tmp_path_factory.mktemp("pi") / "genuine.jsonl"
    with pi_client.Pi() as box:
        (box.cwd / "hello.txt").write_text("hello world\n")
        run = box.pi(
            "read hello.txt", [tool_call("read", {"path": "hello.txt"}, say="Reading."), text("It says hello world.")]
        )
        assert run.exit_code == 0, run.stderr
        (path,) = box.sessions()
        out.write_bytes(path.read_bytes())
    return out


def _convert(path: Path, source: str, target: str, tmp: Path) -> Path:
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    out = tmp / f"{target}-{Path(written.main).name}"
    out.write_bytes(written.files[written.main])
    return out


def test_genuine_qwen_session_has_the_tool_call_and_reads(qwen_session):
    session = api.load(qwen_session)
    assert session.harness == "qwen_code" and session.dump() == qwen_session.read_bytes()
    c = api.to_common(session)
    tool = [b for m in c.messages for b in m.content if type(b).__name__ == "ToolResult"]
    assert tool and tool[0].content == "hello world\n" and tool[0].is_error is False


def test_qwen_roundtrip_resumes_with_the_same_history(qwen_session, tmp_path):
    copy = _convert(qwen_session, "qwen_code", "qwen_code", tmp_path)
    with ThreadPoolExecutor(2) as pool:
        original, converted = pool.map(qwen_client.check_resume, [qwen_session, copy])
    assert original.resumed and converted.resumed, (original.stderr, converted.stderr)
    assert view(converted.sent) == view(original.sent)
    assert [r for r, _ in view(original.sent)] == ["user", "assistant", "user", "assistant"]


def test_pi_roundtrip_resumes_with_the_same_history(pi_session, tmp_path):
    copy = _convert(pi_session, "pi", "pi", tmp_path)
    with ThreadPoolExecutor(2) as pool:
        original, converted = pool.map(pi_client.check_resume, [pi_session, copy])
    assert original.resumed and converted.resumed, (original.stderr, converted.stderr)
    assert view(converted.sent) == view(original.sent)
    assert ("tool_result", "call_mock_1", "hello world\n") in view(original.sent)[2][1]


@pytest.mark.parametrize("path", corpus_files("pi"), ids=lambda p: p.parent.name)
def test_pi_corpus_resumes(path):
    report = pi_client.check_resume(path)
    assert report.resumed, report.stderr
    expected = api.to_common(api.load(path, "pi")).messages
    assert view(report.sent) == view(expected)


def test_silent_new_sessions_are_failures(qwen_session, pi_session, tmp_path):
    # Qwen: "content" instead of "parts" resumes an empty history with exit 0
    broken_qwen = tmp_path / "content.jsonl"
    records = [json.loads(line) for line in qwen_session.read_bytes().splitlines()]
    for r in records:
        if isinstance(r.get("message"), dict):
            r["message"] = {"role": r["message"]["role"], "content": r["message"].pop("parts")}
    broken_qwen.write_text("".join(json.dumps(r) + "\n" for r in records))
    # pi: a first line that is not a header makes pi start over inside the same file
    broken_pi = tmp_path / "noheader.jsonl"
    broken_pi.write_bytes(b"\n".join(pi_session.read_bytes().split(b"\n")[1:]))
    with ThreadPoolExecutor(2) as pool:
        q = pool.submit(qwen_client.check_resume, broken_qwen)
        p = pool.submit(pi_client.check_resume, broken_pi)
        q, p = q.result(), p.result()
    assert not q.resumed and not p.resumed
    assert (q.exit_code != 0 or q.rejected) and (p.exit_code != 0 or p.rejected)


def _claude_check(path: Path):
    from txcodec.resume_check import claude_code as claude

    return claude.check_resume(path)


@pytest.mark.parametrize("source", ["qwen_code", "pi"])
def test_to_claude_and_back_resume_with_the_history_sent(source, qwen_session, pi_session, tmp_path):
    from txcodec.resume_check.claude_code import RESUME_PROMPT

    path = qwen_session if source == "qwen_code" else pi_session
    check = qwen_client.check_resume if source == "qwen_code" else pi_client.check_resume
    expected = view(api.to_common(api.load(path, source)).messages)
    claude_file = _convert(path, source, "claude_code", tmp_path)
    claude_report = _claude_check(claude_file)
    assert claude_report.resumed, claude_report.stderr
    sent = claude_report.sent
    if sent and sent[-1].role == "user" and getattr(sent[-1].content[-1], "text", None) == RESUME_PROMPT:
        sent[-1].content.pop()
    claude_view = [
        (r, [b for b in blocks if not (b[0] == "text" and b[1].startswith("<system-reminder>"))])
        for r, blocks in view(sent)
    ]
    assert [m for m in claude_view if m[1]] == expected
    # Claude Code -> X: the Claude file we just made, written back as X, resumes in X
    back = _convert(claude_file, "claude_code", source, tmp_path)
    report = check(back)
    assert report.resumed, report.stderr
    assert view(report.sent) == expected
