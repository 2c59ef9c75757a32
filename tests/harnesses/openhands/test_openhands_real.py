"""OpenHands CLI 1.16.0, run for real against the loopback Chat Completions mock.

A genuine conversation (two prompts, each a ``terminal`` call and a ``finish`` call, the
second a ``--resume``) is generated; it and the golden ones are converted and resumed.
"Same history" compares the first request of each resume. A conversation the client
refuses or starts afresh (exit 0, no history sent) must be reported as not resumed.

CI cost: about eight openhands runs of 15-40 s each (the CLI imports a lot), one claude run.
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
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.resume_check import openhands as oh
from txcodec.resume_check.mock.openai_chat import tool_call

pytestmark = pytest.mark.real_client

GOLDEN_FOLDER = GOLDEN / "openhands" / "tool_call_resumed" / "1124e205b2e047d19cd605c88100e9ff"
HANDWRITTEN = GOLDEN / "openhands" / "handwritten" / "5e5510110000400080000000000c4a03"
TIMEOUT = 400


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    try:
        oh.openhands_binary()
    except oh.ClientMissing as exc:
        pytest.fail(str(exc))
    out = tmp_path_factory.mktemp("openhands")
    with oh.OpenHands() as box:
        (box.cwd / "hello.txt").write_text("hello world\n")
        first = box.openhands(
            "read hello.txt",
            [
                tool_call("terminal", {"command": "cat hello.txt", "security_risk": "LOW"}, say="Reading."),
                tool_call("finish", {"message": "It says hello world."}, id="call_mock_2"),
            ],
            timeout=TIMEOUT,
        )
        assert first.exit_code == 0, first.stderr[-3000:]
        (folder,) = box.conversations()
        printed = oh.RESUME_LINE.search(first.stdout)
        assert printed and printed.group(1).replace("-", "") == folder.name  # the folder is the uuid's hex
        second = box.openhands(
            "count the words",
            [
                tool_call("terminal", {"command": "wc -w hello.txt", "security_risk": "LOW"}, id="call_mock_3"),
                tool_call("finish", {"message": "Two."}, id="call_mock_4"),
            ],
            resume=printed.group(1),
            timeout=TIMEOUT,
        )
        assert second.exit_code == 0, second.stderr[-3000:]
        assert box.conversations() == [folder]  # --resume continued the same conversation
        sent = oh.history_sent(second.bodies[0], "count the words")
        assert sent and sent[0].content == [Text("read hello.txt")]
        shutil.copytree(folder, out / folder.name, ignore=shutil.ignore_patterns(".eventlog.lock"))
        return out / folder.name


def _convert(path: Path, source: str, target: str, tmp: Path) -> Path:
    """The written session: a file, or for OpenHands the conversation folder."""
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    for name, data in written.files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_bytes(data)
    main = tmp / written.main
    return main.parent.parent if target == "openhands" else main


def _texts(messages) -> list[tuple[str, list[tuple]]]:
    """The view, with each tool result cut to its first line: OpenHands renders a terminal
    observation with its exit code and folder appended, which only its own files keep."""
    return [
        (role, [(b[0], b[1], b[2].split("\n")[0]) if b[0] == "tool_result" else b for b in blocks])
        for role, blocks in view(messages)
    ]


def test_genuine_conversation_reads_with_both_tool_calls(genuine):
    session = api.load(genuine)
    assert session.harness == "openhands" and not session.diagnostics
    assert session.files() == {p.relative_to(genuine).as_posix(): p.read_bytes() for p in genuine.rglob("*.json")}
    c = api.to_common(session)
    results = [b for m in c.messages for b in m.content if isinstance(b, ToolResult)]
    assert [r.content for r in results] == ["hello world", "It says hello world.", "2 hello.txt", "Two."]
    assert c.messages[0].content == [Text("read hello.txt")]


def test_roundtrip_resumes_with_the_same_history(genuine, tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "h").mkdir()
    copies = [
        _convert(genuine, "openhands", "openhands", tmp_path / "g"),
        _convert(GOLDEN_FOLDER, "openhands", "openhands", tmp_path / "h"),
    ]
    with ThreadPoolExecutor(2) as pool:
        reports = list(
            pool.map(lambda p: oh.check_resume(p, timeout=TIMEOUT), [genuine, copies[0], GOLDEN_FOLDER, copies[1]])
        )
    for report in reports:
        assert report.resumed, (report.rejected, report.stderr)
    assert view(reports[1].sent) == view(reports[0].sent)
    assert view(reports[3].sent) == view(reports[2].sent)
    assert _texts(reports[0].sent) == _texts(api.to_common(api.load(genuine)).messages)
    assert _texts(reports[2].sent) == _texts(api.to_common(api.load(GOLDEN_FOLDER)).messages)


def test_to_claude_and_back_resume_with_the_history_sent(genuine, tmp_path):
    from txcodec.resume_check import claude_code as claude

    expected = view(api.to_common(api.load(genuine)).messages)
    claude_file = _convert(genuine, "openhands", "claude_code", tmp_path)
    report = claude.check_resume(claude_file)
    assert report.resumed, report.stderr
    sent = report.sent
    if sent and sent[-1].role == "user" and getattr(sent[-1].content[-1], "text", None) == claude.RESUME_PROMPT:
        sent[-1].content.pop()
    claude_view = [
        (r, [b for b in blocks if not (b[0] == "text" and b[1].startswith("<system-reminder>"))])
        for r, blocks in view(sent)
    ]
    claude_view = [m for m in claude_view if m[1]]
    # OpenHands ends a turn with a finish call and its result, a user turn: resuming after
    # one, Claude Code puts its own placeholder answer in between (observed)
    if claude_view and claude_view[-1] == ("assistant", [("text", "No response requested.")]):
        claude_view.pop()
    assert claude_view == expected
    (tmp_path / "back").mkdir()
    back = _convert(claude_file, "claude_code", "openhands", tmp_path / "back")
    report = oh.check_resume(back, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    assert view(report.sent) == expected


def test_installed_conversation_resumes_with_the_printed_command():
    """``--install`` puts the folder in ``~/.openhands/conversations`` and prints
    ``openhands --resume <uuid>``, which the client takes as it is."""
    with oh.OpenHands() as box:
        env = {"HOME": str(box.home), "OPENHANDS_CONVERSATIONS_DIR": None, "OPENHANDS_PERSISTENCE_DIR": None}
        sample = api.sample("claude_code")
        result = CliRunner().invoke(main, ["convert", "--to", "openhands", "--install", str(sample)], env=env)
        assert result.exit_code == 0, result.output
        command = result.stdout.strip().split(" && ")[-1]  # after a cd to the session's project folder
        assert command.startswith("openhands --resume ")
        session = command.split()[-1]
        assert (box.store / session.replace("-", "") / "events").is_dir()
        expected = view(api.to_common(api.load(box.store / session.replace("-", ""))).messages)
        run = box.openhands("continue", [tool_call("finish", {"message": "ok"})], resume=session, timeout=TIMEOUT)
        assert run.exit_code == 0, run.stderr[-3000:]
        sent = oh.history_sent(run.bodies[0], "continue")
        assert view(sent) == expected and expected[0][1][0][1].startswith("Checkout returns 500")
        assert box.conversations() == [box.store / session.replace("-", "")]


def test_client_facts_and_a_silent_refusal(tmp_path):
    """The guide's hand-written folder resumes without ``base_state.json``, its stored
    system prompt sent verbatim; without its ``SystemPromptEvent`` the client refuses the
    conversation (an AssertionError) with exit 0 and sends nothing: NOT resumed."""
    without = tmp_path / "without" / HANDWRITTEN.name
    shutil.copytree(HANDWRITTEN, without)
    next((without / "events").glob("event-00000-*.json")).unlink()
    assert not (HANDWRITTEN / "base_state.json").exists()
    with ThreadPoolExecutor(2) as pool:
        bad = pool.submit(oh.check_resume, without, timeout=TIMEOUT)
        with oh.OpenHands() as box:
            shutil.copytree(HANDWRITTEN, box.store / HANDWRITTEN.name)
            run = box.openhands(
                "continue",
                [tool_call("finish", {"message": "ok"})],
                resume="5e551011-0000-4000-8000-0000000c4a03",
                timeout=TIMEOUT,
            )
        bad = bad.result()
    assert run.exit_code == 0 and run.bodies, run.stderr[-3000:]
    system = run.bodies[0]["messages"][0]
    assert system["role"] == "system" and "HW-SYSTEM: you are a hand-written agent." in json.dumps(system["content"])
    # the event's empty tool list is not what the client offers: its own tools are
    assert {"terminal", "finish"} <= {t["function"]["name"] for t in run.bodies[0]["tools"]}
    assert view(oh.history_sent(run.bodies[0], "continue")) == view(api.to_common(api.load(HANDWRITTEN)).messages)
    assert not bad.resumed and bad.exit_code == 0 and bad.requests == 0, bad
    assert "sent no history" in " ".join(bad.rejected)
