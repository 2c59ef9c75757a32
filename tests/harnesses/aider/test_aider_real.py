"""aider 0.86.2, run for real against the loopback Chat Completions mock.

A genuine history (a prompt answered with a SEARCH/REPLACE edit that aider applies, then a
``--restore-chat-history`` prompt) is generated; it and the golden ones are converted and
restored. "Same history" compares the restored turns of the first request, whitespace
aside (aider sends a user line with its two-space Markdown break and a reply with the blank
lines around it). A history aider starts afresh from (exit 0, nothing restored) must be
reported as not resumed.

CI cost: about seven aider runs of 5-15 s each, one claude run.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.chat_views import view
from support.paths import GOLDEN

from txcodec import api
from txcodec.model.common import Text
from txcodec.resume_check import aider as ai
from txcodec.resume_check.mock.openai_chat import text

pytestmark = pytest.mark.real_client

GOLDEN_FILE = GOLDEN / "aider" / "tool_call_resumed" / ".aider.chat.history.md"
HANDWRITTEN = GOLDEN / "aider" / "handwritten" / ".aider.chat.history.md"
TIMEOUT = 300
EDIT = "I'll change it.\n\nnotes.txt\n```\n<<<<<<< SEARCH\nhello world\n=======\nhello there\n>>>>>>> REPLACE\n```\n"


def plain(messages) -> list[tuple[str, list[tuple]]]:
    """The view with each text's trailing Markdown line breaks and surrounding blank lines
    removed: what differs between what aider sends and what the turn says."""
    return [
        (
            role,
            [
                ("text", "\n".join(line.rstrip() for line in b[1].strip().splitlines())) if b[0] == "text" else b
                for b in blocks
            ],
        )
        for role, blocks in view(messages)
    ]


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    try:
        ai.aider_binary()
    except ai.ClientMissing as exc:
        pytest.fail(str(exc))
    out = tmp_path_factory.mktemp("aider") / ".aider.chat.history.md"
    with ai.Aider() as box:
        (box.cwd / "notes.txt").write_text("hello world\n")
        first = box.aider("change world to there in notes.txt", [text(EDIT)], files=["notes.txt"], timeout=TIMEOUT)
        assert first.exit_code == 0, first.stderr[-3000:]
        assert (box.cwd / "notes.txt").read_text() == "hello there\n"  # the edit block was applied
        assert "tools" not in first.bodies[0]  # aider sends no tools: its edits are text
        second = box.aider("what does it say now?", [text("It says hello there.")], restore=True, timeout=TIMEOUT)
        assert second.exit_code == 0, second.stderr[-3000:]
        sent = ai.history_sent(second.bodies[0], "what does it say now?")
        assert plain(sent) == plain(api.to_common(api.load(box.history)).messages[:2])
        out.write_bytes(box.history.read_bytes())
    return out


def _convert(path: Path, source: str, target: str, tmp: Path) -> Path:
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    out = tmp / f"{target}-{Path(written.main).name}"
    out.write_bytes(written.files[written.main])
    return out


def test_genuine_history_reads_as_text_turns(genuine):
    session = api.load(genuine)
    assert session.harness == "aider" and session.dump() == genuine.read_bytes() and not session.diagnostics
    c = api.to_common(session)
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"]
    assert c.messages[1].content == [Text(EDIT.strip())] and c.messages[3].content == [Text("It says hello there.")]


def test_roundtrip_restores_the_same_history(genuine, tmp_path):
    (tmp_path / "g").mkdir()
    copies = [_convert(genuine, "aider", "aider", tmp_path / "g"), _convert(GOLDEN_FILE, "aider", "aider", tmp_path)]
    with ThreadPoolExecutor(2) as pool:
        reports = list(
            pool.map(lambda p: ai.check_resume(p, timeout=TIMEOUT), [genuine, copies[0], GOLDEN_FILE, copies[1]])
        )
    for report in reports:
        assert report.resumed, (report.rejected, report.stderr)
    assert plain(reports[1].sent) == plain(reports[0].sent)
    assert plain(reports[3].sent) == plain(reports[2].sent)
    assert plain(reports[0].sent) == plain(api.to_common(api.load(genuine)).messages)


def test_to_claude_and_back_restore_with_the_history_sent(genuine, tmp_path):
    from txcodec.resume_check import claude_code as claude

    expected = plain(api.to_common(api.load(genuine)).messages)
    claude_file = _convert(genuine, "aider", "claude_code", tmp_path)
    report = claude.check_resume(claude_file)
    assert report.resumed, report.stderr
    sent = report.sent
    if sent and sent[-1].role == "user" and getattr(sent[-1].content[-1], "text", None) == claude.RESUME_PROMPT:
        sent[-1].content.pop()
    claude_view = [
        (r, [b for b in blocks if not (b[0] == "text" and b[1].startswith("<system-reminder>"))])
        for r, blocks in plain(sent)
    ]
    assert [m for m in claude_view if m[1]] == expected
    back = _convert(claude_file, "claude_code", "aider", tmp_path)
    report = ai.check_resume(back, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    assert plain(report.sent) == expected


def test_claude_tool_calls_restore_as_text(tmp_path):
    """Claude Code's sample (tool calls and results) written for aider: restored, the calls
    and results as text turns."""
    sample = api.sample("claude_code")
    history = _convert(sample, "claude_code", "aider", tmp_path)
    report = ai.check_resume(history, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    sent = " ".join(b.text for m in report.sent for b in m.content if isinstance(b, Text))
    assert '"type": "tool_use"' in sent and '"type": "tool_result"' in sent
    assert plain(report.sent) == plain(api.to_common(api.load(history, "aider")).messages)


def test_client_facts_and_a_silent_new_start(tmp_path):
    """The guide's hand-written history is restored (the two ``####`` lines as one user
    message, the ``> `` note not sent); a history of ``> `` lines and headings alone is
    accepted with exit 0 and nothing restored: NOT resumed."""
    silent = tmp_path / ".aider.chat.history.md"
    silent.write_text("\n# aider chat started at 2026-11-01 00:00:00\n\n> only a note  \n# a heading\n")
    with ThreadPoolExecutor(2) as pool:
        good, bad = pool.map(lambda p: ai.check_resume(p, timeout=TIMEOUT), [HANDWRITTEN, silent])
    assert good.resumed, (good.rejected, good.stderr)
    assert plain(good.sent) == plain(api.to_common(api.load(HANDWRITTEN)).messages)
    assert [b.text for b in good.sent[2].content] == ["HW second question  \nspanning two lines  \n"]
    assert "tool-ish" not in str(good.sent)
    assert not bad.resumed and bad.exit_code == 0 and bad.requests == 1, bad
    assert "sent no history" in " ".join(bad.rejected)
