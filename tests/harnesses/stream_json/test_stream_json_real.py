"""stream-json against the real ``claude`` (2.1.332) and the mock model.

Each scenario runs ``claude -p --output-format stream-json --verbose`` for real, keeps the
capture and the session file the CLI wrote, and checks that:

- both convert to the same Common conversation, modulo what each format lacks (the
  capture lacks argv prompts, supplied here as ``--prompt`` would; it lacks a subagent's
  text, declared in the loss report);
- the Claude Code session written from the capture resumes in the real CLI, which sends
  the intended messages to a strict mock;
- the stdin lines written from Common drive the real CLI.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from support.stream_json_scenarios import SCENARIOS
from support.stream_json_scenarios import Capture
from support.stream_json_scenarios import run

from txcodec import api
from txcodec.harnesses.claude_code.write import write as write_claude
from txcodec.harnesses.stream_json import read
from txcodec.harnesses.stream_json import write_input
from txcodec.harnesses.stream_json.read import MISSING_PROMPT_TEXT
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Context
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.model.native import decode_session
from txcodec.resume_check.claude_code import check_resume
from txcodec.resume_check.claude_code import claude_binary
from txcodec.resume_check.claude_code import claude_env
from txcodec.resume_check.claude_code import comparable
from txcodec.resume_check.claude_code import munge_cwd
from txcodec.resume_check.mock.anthropic import AnthropicMock
from txcodec.resume_check.mock.anthropic import request_messages
from txcodec.resume_check.mock.anthropic import text
from txcodec.resume_check.mock.server import MockServer
from txcodec.resume_check.process import run_bytes
from txcodec.resume_check.process import run_client
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> dict[str, Capture]:
    if find_client("claude") is None:
        pytest.fail("the claude CLI is missing: npm install --prefix clients (see clients/package.json)")
    root = tmp_path_factory.mktemp("stream-json")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(run, s, root / name) for name, s in SCENARIOS.items()}
        return {name: f.result() for name, f in futures.items()}


def _capture_common(capture: Capture, prompts: list[str] | None, loss: LossReport | None = None) -> Conversation:
    session = api.load(capture.stdout, "stream_json")
    return read(session, loss if loss is not None else LossReport(), prompts=prompts)


def _session_common(capture: Capture) -> Conversation:
    return api.to_common(api.load(capture.session, "claude_code"), LossReport())


def _calls(conversation: Conversation) -> list[tuple]:
    """A conversation's tool calls and results, in order (for subagents, whose text the
    capture lacks)."""
    out = []
    for message in conversation.messages:
        for block in message.content:
            if isinstance(block, ToolUse):
                out.append(("tool_use", block.id, block.name, block.input))
            elif isinstance(block, ToolResult):
                out.append(("tool_result", block.tool_use_id, bool(block.is_error)))
    return out


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_capture_and_session_file_give_the_same_conversation(captures, name):
    capture, scenario = captures[name], SCENARIOS[name]
    assert capture.session.is_file(), f"the CLI wrote no session file: {capture.stderr[-2000:]}"
    loss = LossReport()
    from_capture = _capture_common(capture, scenario.prompts, loss)
    from_session = _session_common(capture)
    # comparable leaves Context blocks out: the session file's attachment records (hook
    # output, reminders, the tools loaded) are never streamed, so a capture cannot hold
    # them; what is compared is every message both can hold
    assert any(isinstance(b, Context) for m in from_session.messages for b in m.content)
    assert comparable(from_capture.messages, prompt=None) == comparable(from_session.messages, prompt=None)
    assert from_capture.meta.id == from_session.meta.id == capture.session_id
    assert from_capture.meta.cwd == str(capture.cwd)
    assert "prompt:missing" not in loss.counts()
    # subagents: nested under the calling tool, same calls and results as the side file
    by_tool = {c.link.tool_use_id: c for c in from_session.children}
    assert len(from_capture.children) == len(from_session.children)
    for child in from_capture.children:
        twin = by_tool[child.link.tool_use_id]
        assert _calls(child.conversation) == _calls(twin.conversation)
        assert loss.counts().get("stream:subagent-text-not-streamed") == len(from_capture.children)


def test_subagent_is_nested_under_its_tool_call(captures):
    conversation = _capture_common(captures["subagent"], None)
    [child] = conversation.children
    assert child.link.tool_use_id == "toolu_agent_1" and child.link.status == "completed"
    assert child.agent_type == "general-purpose" and child.description == "count files"
    assert child.conversation.messages[0].content == [Text("Count the files here")]
    assert _calls(child.conversation) == [
        ("tool_use", "toolu_sub_1", "Bash", {"command": "echo sub"}),
        ("tool_result", "toolu_sub_1", False),
    ]
    # the subagent's lines are not in the main conversation
    assert "toolu_sub_1" not in json.dumps([_calls(Conversation(messages=conversation.messages))])


def test_error_run_is_recorded(captures):
    conversation = _capture_common(captures["error"], SCENARIOS["error"].prompts)
    last = conversation.messages[-1]
    assert last.api_error and last.synthetic and last.extra["api_error_status"] == 400
    assert last.extra["turn"]["is_error"] is True
    assert conversation.messages[2].content[0].is_error is True  # the failing tool


def test_two_runs_keep_their_order_and_per_turn_usage(captures):
    conversation = _capture_common(captures["two_runs"], SCENARIOS["two_runs"].prompts)
    runs = conversation.meta.extra["runs"]
    assert [r["prompt"] for r in runs] == ["supplied", "supplied"]
    assert [
        m.content[0].text for m in conversation.messages if m.role == "user" and isinstance(m.content[0], Text)
    ] == ["first prompt", "second prompt"]
    turns = [m.extra["turn"] for m in conversation.messages if "turn" in m.extra]
    assert len(turns) == 2 and all(t["subtype"] == "success" and "turn_cost_usd" in t for t in turns)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_session_written_from_capture_resumes(captures, name, tmp_path):
    capture, scenario = captures[name], SCENARIOS[name]
    conversation = _capture_common(capture, scenario.prompts)
    loss = LossReport()
    written = write_claude(conversation, loss, WriteOptions(cwd=str(tmp_path / "work")))
    path = tmp_path / "out" / written.main
    for rel, data in written.files.items():
        (tmp_path / "out" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "out" / rel).write_bytes(data)
    report = check_resume(path, cwd=str(tmp_path / "work"), timeout=45)
    assert report.resumed, (report.exit_code, report.rejected, report.stderr[-1500:])
    # the CLI never sends its own "API Error" messages back to the model (observed)
    intended = [m for m in conversation.messages if not m.api_error]
    assert comparable(report.sent) == comparable(intended, prompt=None)


def test_capture_without_prompts_marks_them_and_still_resumes(captures, tmp_path):
    loss = LossReport()
    conversation = _capture_common(captures["two_runs"], None, loss)
    missing = [m for m in conversation.messages if m.extra.get("missing_prompt")]
    assert len(missing) == 2 and loss.counts()["prompt:missing"] == 2
    written = write_claude(conversation, LossReport(), WriteOptions(cwd=str(tmp_path / "work")))
    path = tmp_path / written.main
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(written.files[written.main])
    report = check_resume(path, cwd=str(tmp_path / "work"), timeout=45)
    assert report.resumed, (report.exit_code, report.rejected, report.stderr[-1500:])
    sent = comparable(report.sent)
    assert sent == comparable(conversation.messages, prompt=None)
    assert sum(1 for role, blocks in sent if ("text", MISSING_PROMPT_TEXT) in blocks) == 2


def test_input_side_gives_the_prompt(captures):
    capture = captures["subagent"]
    assert b'"isReplay":true' in capture.stdout
    # the same capture without its replayed prompt, plus the stdin side kept apart
    stripped = b"".join(line + b"\n" for line in capture.stdout.splitlines() if b'"isReplay":true' not in line)
    loss = LossReport()
    conversation = read(
        api.load(stripped, "stream_json"),
        loss,
        input_session=decode_session(capture.stdin, api.registry.get("stream_json").codec, "stream_json"),
    )
    assert conversation.messages[0].content == [Text("delegate the count")]
    assert conversation.meta.extra["runs"][0]["prompt"] == "input"
    assert "prompt:missing" not in loss.counts()


def test_written_input_lines_drive_the_real_cli(tmp_path):
    conversation = Conversation(
        messages=[
            Message("user", [Text("first question")]),
            Message("assistant", [Text("first answer")]),
            Message("user", [Text("second question")]),
            Message("assistant", [Text("second answer")]),
        ]
    )
    loss = LossReport()
    stdin = write_input(conversation, loss)
    assert loss.counts() == {"write:input-side": 1}
    mock = AnthropicMock([text("one"), text("two")], strict=True)
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    with MockServer(mock) as server:
        code, out, err = run_bytes(
            [
                str(claude_binary()),
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
            ],
            cwd,
            claude_env(home, server),
            60,
            "claude",
            input=stdin,
        )
        done = SimpleNamespace(returncode=code, stdout=out, stderr=err)
        bodies = [r.json() for r in server.requests if r.path.split("?")[0] == "/v1/messages"]
    assert done.returncode == 0, done.stderr[-1500:]
    assert not mock.rejected
    sent = comparable(request_messages(bodies[-1]), prompt=None)
    assert sent == [
        ("user", [("text", "first question")]),
        ("assistant", [("text", "one")]),
        ("user", [("text", "second question")]),
    ]
    # and the capture of that run reads back with its prompts (replayed? no: taken from stdin)
    back = read(api.load(done.stdout, "stream_json"), LossReport(), input_session=api.load(stdin, "stream_json"))
    assert comparable(back.messages, prompt=None) == [
        ("user", [("text", "first question")]),
        ("assistant", [("text", "one")]),
        ("user", [("text", "second question")]),
        ("assistant", [("text", "two")]),
    ]


def _strip_replays(stdout: bytes) -> bytes:
    return b"".join(line + b"\n" for line in stdout.splitlines() if b'"isReplay":true' not in line)


@pytest.mark.parametrize("name", ["two_runs", "subagent"])
def test_cli_convert_install_then_claude_resumes_it(captures, name, tmp_path):
    """The issue's item 4 as a user runs it: ``txcodec convert capture.jsonl --to
    claude_code --install`` (format detected, prompts supplied with --prompt or from a
    stdin-side file with --input) into a CLAUDE_CONFIG_DIR store, run from another folder:
    the session is filed under the project the capture ran in, and the printed line, run
    by a shell as it is (``cd <project> && claude --resume <id>``, with the flags ``-p``
    needs appended), makes the real ``claude`` send the captured conversation."""
    capture, scenario = captures[name], SCENARIOS[name]
    config, elsewhere, home = tmp_path / "config", tmp_path / "elsewhere", tmp_path / "home"
    for folder in (config, elsewhere, home):
        folder.mkdir()
    src = tmp_path / "capture.jsonl"
    if name == "subagent":  # the prompt only on the stdin side, kept apart
        src.write_bytes(_strip_replays(capture.stdout))
        (tmp_path / "stdin.jsonl").write_bytes(capture.stdin)
        extra = ["--input", str(tmp_path / "stdin.jsonl")]
    else:
        src.write_bytes(capture.stdout)
        extra = [arg for p in scenario.prompts for arg in ("--prompt", p)]
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(config))
    done = subprocess.run(
        [sys.executable, "-m", "txcodec", "convert", str(src), "--to", "claude_code", "--install", *extra],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    project = capture.cwd  # recorded in the capture's init line
    line = done.stdout.strip()
    assert line == f"cd {shlex.quote(str(project))} && claude --resume {capture.session_id}"
    assert "prompt:missing" not in done.stderr
    installed = config / "projects" / munge_cwd(str(project)) / f"{capture.session_id}.jsonl"
    assert installed.is_file(), done.stderr
    if name == "subagent":
        assert list((installed.parent / capture.session_id / "subagents").glob("agent-*.jsonl"))
    # the real CLI, reading the store through CLAUDE_CONFIG_DIR
    mock = AnthropicMock([text("resumed")], strict=True)
    with MockServer(mock) as server:
        run_env = dict(claude_env(home, server), CLAUDE_CONFIG_DIR=str(config))
        run_env["PATH"] = f"{claude_binary().parent}{os.pathsep}{run_env.get('PATH', os.defpath)}"
        code, out, err = run_client(
            ["sh", "-c", f"{line} -p continue --dangerously-skip-permissions"], elsewhere, run_env, 60, "claude"
        )
        resumed = SimpleNamespace(returncode=code, stdout=out, stderr=err)
        bodies = [r.json() for r in server.requests if r.path.split("?")[0] == "/v1/messages"]
    assert resumed.returncode == 0 and not mock.rejected, (resumed.stderr[-1500:], mock.rejected)
    assert resumed.stdout.strip() == "resumed"
    expected = [m for m in _session_common(capture).messages if not m.api_error]
    assert request_messages(bodies[0])[-1].content[-1] == Text("continue")
    assert comparable(request_messages(bodies[0])) == comparable(expected, prompt=None)
