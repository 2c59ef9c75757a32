"""aider harness without the real client: codec, reader, writer, store, hostile input. Each
client fact the harness relies on is pinned here (test_aider_real.py proves the writer's
output is restored)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import REGEN
from support.chat_views import pretty
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.core.errors import InputError
from txcodec.harnesses.aider import CODEC
from txcodec.harnesses.aider import HARNESS
from txcodec.harnesses.aider import store
from txcodec.harnesses.aider.read import parse
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.model.native import decode_session

CASES = sorted(p for p in (GOLDEN / "aider").iterdir() if p.is_dir())
GENUINE = GOLDEN / "aider" / "tool_call_resumed" / ".aider.chat.history.md"
HANDWRITTEN = GOLDEN / "aider" / "handwritten" / ".aider.chat.history.md"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert decode_session(data, CODEC, "aider").dump() == data


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    """The history round-trips byte for byte, reads to ``common.json``, which writes to
    ``written.md`` (TXCODEC_REGEN_GOLDEN=1 to update the last two)."""
    path = case / ".aider.chat.history.md"
    session = api.load(path)
    assert session.harness == "aider" and not session.diagnostics
    assert session.dump() == path.read_bytes()
    conversation = api.to_common(session)
    conversation.meta.cwd = "/project"  # where the golden folder is checked out is not part of it
    written = HARNESS.write(conversation, LossReport(), WriteOptions())
    for name, data in {"common.json": pretty(conversation), "written.md": written.files[written.main]}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_found_by_its_name_not_its_bytes(tmp_path):
    assert api.detect(GENUINE.read_bytes()) == "jsonl"  # Markdown: nothing to sniff
    assert api.load(GENUINE).harness == "aider"
    other = tmp_path / "notes.md"
    other.write_bytes(GENUINE.read_bytes())
    assert api.load(other, "aider").harness == "aider"


def test_the_split_is_aiders():
    """``split_chat_history_markdown`` (aider/utils.py): ``# `` skipped, ``#### `` user,
    ``> `` tool (never sent), anything else assistant; whitespace-only messages dropped;
    the content keeps aider's own whitespace."""
    text = HANDWRITTEN.read_text()
    assert [(role, content) for role, content, _ in parse(text)] == [
        ("user", "HW question: what is in a.txt?  \n"),
        ("assistant", "\nHW-ANSWER: a.txt contains the letter a.\n\n"),
        ("tool", "a tool-ish note that aider should ignore  \n"),
        ("user", "HW second question  \nspanning two lines  \n"),
        ("assistant", "\nHW second answer.\n"),
    ]
    assert [r for r, _, _ in parse("x\u2028> y\n")] == ["assistant", "tool"]  # str.splitlines, as aider


def test_genuine_history_reads_as_text_turns():
    loss = LossReport()
    c = HARNESS.read(api.load(GENUINE), loss)
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"]
    assert c.messages[0].content == [Text("change world to there in notes.txt")]
    edit = c.messages[1].content[0].text
    assert (
        edit.startswith("I'll change it.")
        and "<<<<<<< SEARCH\nhello world\n=======\nhello there\n>>>>>>> REPLACE" in edit
    )
    assert c.messages[3].content == [Text("It says hello there.")]
    assert c.meta.started_at == "2026-12-01T03:51:48" and set(loss.counts()) == {"record:tool-output"}


def _conversation() -> Conversation:
    return Conversation(
        meta=Meta(id="s1", started_at="2026-11-01T10:00:00"),
        messages=[
            Message("user", [Text("first line\nsecond line")]),
            Message(
                "assistant",
                [
                    Thinking("hmm"),
                    Text("# Title\nsome text\n> quoted\n#### not a user"),
                    ToolUse("c1", "Bash", {"command": "ls"}),
                ],
            ),
            Message("user", [ToolResult("c1", "a.txt")]),
            Message("assistant", [Text("done")]),
            Message("assistant", [Thinking("only thinking")]),
        ],
    )


def test_writer_writes_what_aider_writes_and_declares_the_rest():
    loss = LossReport()
    written = HARNESS.write(_conversation(), loss, WriteOptions())
    assert written.session_id == "s1" and list(written.files) == [".aider.chat.history.md"]
    text = written.files[written.main].decode()
    assert text.startswith(
        "\n# aider chat started at 2026-11-01 10:00:00\n\n\n#### first line  \n#### second line  \n\n"
    )
    assert "\n # Title\nsome text\n > quoted\n #### not a user\n" in text
    assert set(loss.counts()) >= {
        "write:thinking",
        "write:block:tool_use",
        "write:block:tool_result",
        "write:markdown-line",
        "write:empty-message",
    }
    back = api.to_common(api.load(written.files[written.main], "aider"))
    assert [m.role for m in back.messages] == ["user", "assistant", "user", "assistant"]
    assert back.messages[0].content == [Text("first line\nsecond line")]
    assert back.messages[1].content[0].text.startswith("# Title\nsome text\n > quoted")  # stripped, as aider sends it
    assert '"tool_use"' in back.messages[1].content[0].text and '"a.txt"' in back.messages[2].content[0].text


def test_store_is_the_project_folder(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / ".git").mkdir()
    monkeypatch.chdir(project / "sub")
    assert store.default_root() == project  # the git root, as aider's --chat-history-file default
    monkeypatch.setenv("AIDER_CHAT_HISTORY_FILE", str(tmp_path / "else" / "h.md"))
    assert store.default_root() == tmp_path / "else"
    monkeypatch.delenv("AIDER_CHAT_HISTORY_FILE")
    written = api.convert(HANDWRITTEN, "aider", cwd=str(project / "sub"))[0]
    (path,) = api.install(written, "aider")  # into the project folder's git root, as aider run there reads it
    assert path == project / ".aider.chat.history.md"
    (info,) = store.discover()
    assert info.path == str(path) and info.messages == 4 and info.id == "proj"
    result = CliRunner().invoke(main, ["list", "--harness", "aider", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)[0]["session_id"] == "proj", result.output
    result = CliRunner().invoke(
        main, ["convert", "--to", "aider", "--install", "--cwd", str(project / "sub"), str(HANDWRITTEN)]
    )
    assert result.exit_code != 0 and "exists" in result.output  # never over an existing history


def test_hostile_bytes(tmp_path):
    path = tmp_path / ".aider.chat.history.md"
    path.write_bytes(b"#### caf\xe9 \xff\n\nreply\r\n> note\n")
    session = api.load(path)
    assert session.dump() == path.read_bytes() and len(session.diagnostics) == 1
    loss = LossReport()
    c = api.to_common(session, loss)
    assert [m.role for m in c.messages] == ["user", "assistant"] and "opaque" in loss.counts()
    result = CliRunner().invoke(main, ["show", str(path)])
    assert result.exit_code == 0, result.output


def test_registered():
    assert registry.get("aider") is HARNESS and HARNESS.check_resume is not None


def test_exports_as_html(tmp_path):
    """The history renders like any session (its turns are text: no tool calls to link)."""
    out = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["export", str(GENUINE), "--to", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "It says hello there." in page and 'data-role="tool_use"' not in page


def test_install_never_makes_up_the_project_folder(tmp_path, monkeypatch):
    """aider's store is the project folder itself: a session whose recorded folder is not on
    this machine is refused, not installed into a folder made up for it."""
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "home" / "dev" / "shop"
    written = api.convert(api.sample("claude_code"), "aider", cwd=str(missing))[0]
    with pytest.raises(InputError, match="does not exist here"):
        api.install(written, "aider")
    assert not (tmp_path / "home").exists()
    result = CliRunner().invoke(main, ["convert", "--to", "aider", "--install", str(api.sample("claude_code"))])
    assert result.exit_code == 1 and "does not exist here" in result.output and "Traceback" not in result.output
    assert not list(tmp_path.rglob(".aider.chat.history.md"))
