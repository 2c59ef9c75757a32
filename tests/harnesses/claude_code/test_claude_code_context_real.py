"""Issue 31, pinned with the real ``claude`` (2.1.332) against the strict mock: a session
it records with SessionStart and UserPromptSubmit hooks (``additionalContext``), the
scenario library's sessions and the 2.1.332 sessions of the corpus resume from Claude -> Common -> Claude with the same
context as the original: the ``role:"system"`` entries and ``<system-reminder>`` texts
of the first request are equal (dates and the throw-away home masked). Another target's model gets the hooks' text."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.resume_check.claude_code import place_session
from txcodec.resume_check.claude_code import run_claude
from txcodec.resume_check.claude_code import session_id_for
from txcodec.resume_check.mock.anthropic import AnthropicMock
from txcodec.resume_check.mock.server import MockServer
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client

TIMEOUT = 60
START, PROMPT = "SESSION-START-MARKER", "PROMPT-MARKER"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@pytest.fixture(scope="module", autouse=True)
def _claude_installed():
    if find_client("claude") is None:
        pytest.fail("the claude CLI is missing: npm install --prefix clients (see clients/package.json)")


def _hook(event: str, text: str) -> list[dict]:
    out = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
    return [{"hooks": [{"type": "command", "command": f"printf '%s' '{out}'"}]}]


def _run(home: Path, work: Path, args: list[str]) -> list[dict]:
    mock = AnthropicMock(strict=True)
    with MockServer(mock) as server:
        run = run_claude(args, work, home, server, TIMEOUT)
        bodies = [r.json() for r in server.requests if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"]
    assert run.exit_code == 0 and not mock.rejected, (run.stderr, mock.rejected)
    return bodies


def _context(body: dict, home: Path | None = None) -> list[tuple[str, str]]:
    """The context of a request: its system entries and <system-reminder> texts, dates and
    the throw-away home masked."""
    out = []
    for message in body["messages"]:
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and (message["role"] == "system" or "<system-reminder>" in text):
                if home is not None:
                    text = text.replace(str(home), "<home>")
                out.append((message["role"], _DATE.sub("<date>", text)))
    return out


def _resume(path: Path, tmp: Path, work: Path) -> list[tuple[str, str]]:
    home = tmp / "home"
    home.mkdir()
    sid = session_id_for(path)
    place_session(path, home, work, sid)
    return _context(_run(home, work, ["-p", "--resume", sid, "go on"])[0], home)


def _both(source: Path, tmp: Path) -> tuple[list, list]:
    """The context resuming the original sends, and resuming its Claude -> Common -> Claude copy."""
    written, _ = api.convert(source, "claude_code")
    for rel, data in written.files.items():  # the side folder too (subagents, tool results)
        (tmp / "written" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "written" / rel).write_bytes(data)
    mine = tmp / "written" / written.main
    work = tmp / "work"
    work.mkdir()
    return _resume(source, tmp / "a", work), _resume(mine, tmp / "b", work)


@pytest.fixture(scope="module")
def hooked(tmp_path_factory) -> Path:
    """A session the real client records with a SessionStart and a UserPromptSubmit hook."""
    tmp = tmp_path_factory.mktemp("hooked")
    home, work = tmp / "home", tmp / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    hooks = {"SessionStart": _hook("SessionStart", START), "UserPromptSubmit": _hook("UserPromptSubmit", PROMPT)}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    _run(home, work, ["-p", "hello there"])
    [path] = (home / ".claude" / "projects").rglob("*.jsonl")
    return Path(shutil.copy(path, tmp / path.name))


def test_hook_context_resumes_as_in_the_original(hooked, tmp_path):
    for tmp in ("a", "b"):
        (tmp_path / tmp).mkdir()
    original, mine = _both(hooked, tmp_path)
    assert any(START in text for _, text in original)  # the client resends the hook's context
    assert mine == original


@pytest.mark.parametrize(
    "source", [p for p in corpus_files("claude_code", (".jsonl",)) if "/generated/" in str(p)], ids=lambda p: p.name
)
def test_recorded_attachments_resume_as_in_the_original(source, tmp_path):
    for tmp in ("a", "b"):
        (tmp_path / tmp).mkdir()
    original, mine = _both(source, tmp_path)
    assert original and mine == original


@pytest.mark.parametrize(
    "source", sorted((GOLDEN / "claude_code" / "scenarios").glob("*/*.jsonl")), ids=lambda p: p.parent.name
)
def test_scenarios_resume_with_the_same_context(source, tmp_path):
    """The scenario library's sessions (recorded by the real client): Claude -> Common ->
    Claude resumes with the reminders and system entries the original resumes with."""
    for tmp in ("a", "b"):
        (tmp_path / tmp).mkdir()
    original, mine = _both(source, tmp_path)
    assert original and mine == original


def test_codex_gets_the_hook_context_as_items_of_its_own(hooked):
    # Codex gives context as message items of their own (docs/codex.md): the hook's text is one,
    # in place, and never part of the typed prompt's item or its user_message event
    written, loss = api.convert(hooked, "codex")
    body = b"".join(written.files.values()).decode()
    assert START in body and PROMPT in body
    assert body.index(START) < body.index("hello there") < body.index(PROMPT)
    records = [json.loads(line) for line in body.splitlines()]
    typed = [r["payload"]["message"] for r in records if r.get("payload", {}).get("type") == "user_message"]
    assert typed and not any(START in text for text in typed)
    assert not [e for e in loss.entries if e.kind == "write:context-as-text"]


SKILL = (
    "<command-message>changelog</command-message>\n<command-name>/changelog</command-name>\n"
    "<command-args>2.0</command-args>"
)


def _skill_session(tmp: Path) -> Path:
    sid = "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01"
    first, second = "11111111-1111-4111-8111-111111111111", "11111111-1111-4111-8111-111111111112"
    common = {"isSidechain": False, "timestamp": "2026-01-01T00:00:00.000Z", "sessionId": sid, "version": "2.1.332"}
    reply = {"id": "m1", "type": "message", "role": "assistant", "model": "x", "stop_reason": "end_turn"}
    lines = [
        {"parentUuid": None, "type": "user", "message": {"role": "user", "content": SKILL}, "uuid": first, **common},
        {"parentUuid": first, "type": "assistant", "uuid": second, **common},
    ]
    lines[1]["message"] = {**reply, "content": [{"type": "text", "text": "ok"}]}
    path = tmp / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _sent(path: Path, tmp: Path, work: Path) -> list[dict]:
    home = tmp / "home"
    home.mkdir(parents=True)
    sid = session_id_for(path)
    place_session(path, home, work, sid)
    return [m for m in _run(home, work, ["-p", "--resume", sid, "go on"])[0]["messages"] if m["role"] != "system"]


def test_a_skill_envelope_resumes_with_its_own_order_and_whitespace(tmp_path):
    source = _skill_session(tmp_path)
    written, loss = api.convert(source, "claude_code")
    mine = tmp_path / "written" / written.main
    mine.parent.mkdir(parents=True)
    mine.write_bytes(written.files[written.main])
    work = tmp_path / "work"
    work.mkdir()
    original = _sent(source, tmp_path / "a", work)
    assert original[0] == {"role": "user", "content": SKILL}  # the model sees the envelope as recorded
    assert _sent(mine, tmp_path / "b", work) == original


REMOVED = "[Tool references removed - tools no longer available]"


def _reference_results(path: Path) -> list:
    """The ToolSearch result the real client sends when it resumes ``path``."""
    from txcodec.kit import registry
    from txcodec.resume_check.claude_code import comparable

    report = registry.get("claude_code").check_resume(path)
    assert report.resumed, (report.rejected, report.stderr[-800:])
    return [
        block for _, blocks in comparable(report.sent) for block in blocks if block[:2] == ("tool_result", "toolu_ts1")
    ]


def test_the_deferred_tools_records_keep_toolsearchs_tool_reference(tmp_path):
    """Class 1 (docs/claude_code.md#deferred-tools-and-toolsearch): the mcp_tool_search scenario's
    ``deferred_tools_delta`` and ``deferred_tools_record`` attachments are what let 2.1.332 resend
    the ToolSearch result's ``tool_reference``. Without them it sends a placeholder text; Claude ->
    Common -> Claude keeps both records, so the reference is resent."""
    [source] = (GOLDEN / "claude_code" / "scenarios" / "mcp_tool_search").glob("*.jsonl")
    written, _ = api.convert(source, "claude_code")
    mine = tmp_path / "mine" / written.main
    mine.parent.mkdir(parents=True)
    mine.write_bytes(written.files[written.main])
    kinds = [json.loads(line).get("attachment", {}).get("type") for line in mine.read_bytes().splitlines()]
    assert "deferred_tools_delta" in kinds and "deferred_tools_record" in kinds
    dropped = tmp_path / "dropped" / source.name
    dropped.parent.mkdir()
    dropped.write_bytes(
        b"".join(line + b"\n" for line in source.read_bytes().splitlines() if b'"deferred_tools_' not in line)
    )

    kept = _reference_results(mine)
    assert "tool_reference" in json.dumps(kept) and REMOVED not in json.dumps(kept)  # as the original's
    assert REMOVED in json.dumps(_reference_results(dropped))
