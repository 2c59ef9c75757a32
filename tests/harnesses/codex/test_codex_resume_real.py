"""The real ``codex`` CLI (0.171.0, offline against the mock Responses API) resumes the
rollouts we write with the history we meant, and writes rollouts our reader understands."""

from __future__ import annotations

import json

import pytest
from support.paths import CORPUS
from support.paths import GOLDEN
from test_codex_read_write import claude_like

from txcodec import api
from txcodec.harnesses.codex.write import write
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.resume_check.codex import Sandbox
from txcodec.resume_check.codex import canonical_relpath
from txcodec.resume_check.codex import check_resume
from txcodec.resume_check.codex import codex_binary
from txcodec.resume_check.codex import history_items
from txcodec.resume_check.codex import install
from txcodec.resume_check.codex import normalize
from txcodec.resume_check.codex import picker_screen
from txcodec.resume_check.codex import resume
from txcodec.resume_check.mock import responses as mock

pytestmark = pytest.mark.real_client


@pytest.fixture(scope="module", autouse=True)
def _client():
    codex_binary()  # fails with a clear message when the CLI is missing; never skips


def resumed_history(data: bytes) -> list:
    with Sandbox() as box:
        _, run = resume(box, data)
        assert run.exit_code == 0 and run.requests, run.stderr[-2000:]
        return normalize(history_items(run.inputs[0], "continue"))


ROUND_TRIP = [
    CORPUS / "codex/generated/codex_exec_2turns.jsonl",
    CORPUS / "codex/session-migrate/codex-0.144.4/basic.jsonl",
    GOLDEN / "codex/hand_built/rollout.jsonl",
    GOLDEN / "codex/compaction_remote/rollout.jsonl",
]


@pytest.mark.parametrize("path", ROUND_TRIP, ids=lambda p: p.name)
def test_codex_common_codex_resumes_with_the_same_input(path):
    original = path.read_bytes()
    written = write(api.to_common(api.load(original)), LossReport(), WriteOptions())
    ours = written.files[written.main]
    before, after = resumed_history(original), resumed_history(ours)
    assert len(before) > 1
    assert after == before


def test_written_from_claude_like_conversation_resumes():
    written = write(claude_like(), LossReport(), WriteOptions())
    with Sandbox() as box:
        _, run = resume(box, written.files[written.main])
        assert run.exit_code == 0, run.stderr[-2000:]
        items = history_items(run.inputs[0], "continue")
    texts = json.dumps(items)
    assert "Fix it, nonce OMEGA-3" in texts and "Done." in texts
    kinds = [i["type"] for i in items]
    assert kinds.count("function_call") == 1 and kinds.count("custom_tool_call") == 1
    assert kinds.count("function_call_output") == 1 and kinds.count("custom_tool_call_output") == 1


def test_check_resume_report(tmp_path):
    written = write(claude_like(), LossReport(), WriteOptions())
    path = tmp_path / "x.jsonl"
    path.write_bytes(written.files[written.main])
    report = check_resume(path)
    assert report.resumed and report.client.startswith("codex 0.171"), report
    assert report.session_id == written.session_id
    first = [b.text for m in report.sent if not m.meta for b in m.content if isinstance(b, Text)]
    assert "Fix it, nonce OMEGA-3" in first


def test_check_resume_catches_the_silent_new_session(tmp_path):
    """A non-UUID thread id makes codex start a new session and exit 0."""
    data = (
        (GOLDEN / "codex/hand_built/rollout.jsonl")
        .read_bytes()
        .replace(b"01990000-0000-7000-8000-000000000001", b"not-a-uuid-session")
    )
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    report = check_resume(path)
    assert not report.resumed
    assert report.exit_code != 0 or report.rejected


def test_genuine_rollout_reads():
    script = [
        [
            mock.reasoning("Need to look."),
            mock.text("Checking."),
            mock.function_call("exec_command", {"cmd": "cat notes.txt"}, "call_a"),
        ],
        [mock.custom_tool_call("apply_patch", "*** Begin Patch\n*** Add File: out.txt\n+42\n*** End Patch", "call_b")],
        [mock.text("All done.")],
    ]
    with Sandbox() as box:
        (box.cwd / "notes.txt").write_text("hello world\n")
        run = box.run(["Show notes and write out.txt"], script)
        assert run.exit_code == 0, run.stderr[-2000:]
        (path,) = run.rollouts()
        data = path.read_bytes()
    session = api.load(data)
    assert session.harness == "codex" and session.dump() == data and not session.diagnostics
    loss = LossReport()
    conv = api.to_common(session, loss)
    prompts = [m for m in conv.messages if m.role == "user" and not m.meta and m.origin == "human"]
    assert [p.content[0].text for p in prompts] == ["Show notes and write out.txt"]
    uses = [b for m in conv.messages for b in m.content if isinstance(b, ToolUse)]
    assert [(u.name, u.kind) for u in uses] == [("exec_command", "shell_exec"), ("apply_patch", "modify_file")]
    assert uses[0].input == {"cmd": "cat notes.txt"}
    results = {b.tool_use_id: b for m in conv.messages for b in m.content if isinstance(b, ToolResult)}
    assert "hello world" in results["call_a"].content and "call_b" in results
    assert sum(1 for m in conv.messages if m.usage) == 3  # one token_count per model call
    assert conv.meta.models == ["gpt-5.1-codex"] and conv.meta.client_version == "0.171.0"


def test_written_rollout_is_listed_in_the_resume_picker():
    """``codex resume`` (the TUI picker, cwd filter on) lists a converted session under its
    first prompt. It lists a rollout only when it has a ``user_message`` event: the same
    file without them shows "No sessions yet", which is why the writer emits the UI events
    next to the response items."""
    with Sandbox() as box:
        cwd = str(box.cwd)
    conv = claude_like()
    written = write(conv, LossReport(), WriteOptions(cwd=cwd))
    data = written.files[written.main].replace(cwd.encode(), b"@CWD@")

    def listed(data: bytes) -> str:
        with Sandbox() as box:
            data = data.replace(b"@CWD@", str(box.cwd).encode())
            install(box.home, data, canonical_relpath(data)[1])
            return picker_screen(box, until="OMEGA-3")

    assert "Fix it, nonce OMEGA-3" in listed(data)
    lines = [l for l in data.splitlines() if b'"type":"user_message"' not in l]
    assert len(lines) < len(data.splitlines())
    renumbered = b"\n".join(json.dumps({**json.loads(l), "ordinal": n}).encode() for n, l in enumerate(lines)) + b"\n"
    screen = listed(renumbered)
    assert "OMEGA-3" not in screen and "0 / 0 ·" in screen
