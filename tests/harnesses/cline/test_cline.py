"""cline harness without the real client: codec, detection, reader, writer, store and its
``sessions.db`` row. Each client fact the harness relies on is pinned here
(test_cline_real.py proves the writer's output resumes in the TUI)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import REGEN
from support.chat_views import pretty
from support.paths import GOLDEN

from txcodec import api
from txcodec.core.errors import StoreError
from txcodec.core.errors import TxcodecError
from txcodec.core.errors import UnsafeId
from txcodec.harnesses.cline import CODEC
from txcodec.harnesses.cline import HARNESS
from txcodec.harnesses.cline import detect
from txcodec.harnesses.cline import store
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common import Usage
from txcodec.model.loss import LossReport
from txcodec.model.native import decode_document
from txcodec.model.native import decode_session

CASES = sorted(p for p in (GOLDEN / "cline").iterdir() if p.is_dir())
GENUINE_DIR = GOLDEN / "cline" / "tool_call_resumed"
(GENUINE,) = GENUINE_DIR.glob("*.messages.json")
(HANDWRITTEN,) = (GOLDEN / "cline" / "handwritten").glob("*.messages.json")


def _main(case):
    (path,) = case.glob("*.messages.json")
    return path


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert decode_session(data, CODEC, "cline").dump() == data
    assert decode_document(data, CODEC, "cline").dump() == data


_message = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "x"]),
        "content": st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)}), max_size=2),
    },
    optional={"zz": st.integers(), "ts": st.integers()},
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_message, max_size=4), st.sampled_from([None, 2]), st.booleans())
def test_documents_roundtrip(messages, indent, final_newline):
    data = json.dumps(
        {"version": 1, "sessionId": "s", "messages": messages, "extra": 1}, indent=indent, ensure_ascii=False
    ).encode()
    data += b"\n" if final_newline else b""
    assert decode_document(data, CODEC, "cline").dump() == data


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    """The messages file round-trips byte for byte, reads to ``common.json``, which writes
    to ``written.jsonl`` (the messages file, one line) (TXCODEC_REGEN_GOLDEN=1 to update)."""
    path = _main(case)
    session = api.load(path)
    assert session.harness == "cline" and not session.diagnostics
    assert session.dump() == path.read_bytes()
    conversation = api.to_common(session)
    written = HARNESS.write(conversation, LossReport(), WriteOptions())
    for name, data in {"common.json": pretty(conversation), "written.jsonl": written.files[written.main]}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_the_client_pretty_prints_its_files():
    data = GENUINE.read_bytes()
    assert data.startswith(b'{\n  "version": 1,\n') and data.endswith(
        b"\n}\n"
    )  # JSON.stringify(value, null, 2) + "\\n"
    assert api.load(data).harness == "cline" and api.load(GENUINE).harness == "cline"


def test_a_pretty_printed_document_given_as_bytes_is_one_document():
    """Bytes of a messages file are read whole whether the harness is named or detected: as
    lines, each would be a fragment (all kept as bytes), and the hand-written file's last
    message line alone looked like a Kimi CLI context line."""
    for data in (GENUINE.read_bytes(), HANDWRITTEN.read_bytes()):
        for named in ("cline", None):
            session = api.load(data, named)
            assert session.harness == "cline" and len(session.lines) == 1 and not session.diagnostics
            assert session.dump() == data
    assert api.to_common(api.load(HANDWRITTEN.read_bytes(), "cline")).messages


def test_detection():
    assert detect([json.loads(GENUINE.read_bytes())]) == 30
    assert detect([json.loads(HANDWRITTEN.read_bytes())]) == 30
    assert detect([{"sessionId": "s", "messages": [{"role": "user", "content": []}]}]) == 0  # no version
    for path in (GOLDEN / "gemini_cli" / "legacy_json").glob("*.json"):
        assert detect([json.loads(path.read_bytes())]) == 0
    for path in (GOLDEN / "continue_cli").glob("*/session.json"):
        assert detect([json.loads(path.read_bytes())]) == 0


def test_genuine_session_reads_as_the_client_sends_it():
    loss = LossReport()
    c = HARNESS.read(api.load(GENUINE), loss)
    record = json.loads(store.record_of(GENUINE).read_bytes())
    assert c.meta.id == GENUINE.parent.joinpath(GENUINE.name).name.removesuffix(".messages.json")
    assert c.meta.cwd == record["cwd"] and c.meta.title == "read a.txt"
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2
    # the stored text is wrapped <user_input mode="act">…</user_input>; the client sends it bare
    raw = json.loads(GENUINE.read_bytes())["messages"][0]["content"][0]["text"]
    assert raw == '<user_input mode="act">read a.txt</user_input>'
    assert c.messages[0].content == [Text("read a.txt")]
    call = c.messages[1].content[1]
    assert isinstance(call, ToolUse) and call.name == "read_files" and call.input == {"files": [{"path": "a.txt"}]}
    # a result's content is a list of {query, result, success}: sent as its compact JSON
    (result,) = c.messages[2].content
    assert (
        isinstance(result, ToolResult)
        and result.content == '[{"query":"a.txt","result":"1 | hello world","success":true}]'
    )
    assert result.structured == [{"query": "a.txt", "result": "1 | hello world", "success": True}]
    assert [m.usage for m in c.messages if m.role == "assistant"] == [Usage(input_tokens=20, output_tokens=5)] * 4
    assert c.meta.models == ["mock-model"] and loss.counts() == {"field:system_prompt": 1}


def _conversation(**meta) -> Conversation:
    return Conversation(
        meta=Meta(**meta),
        messages=[
            Message("user", [Text("hi")], timestamp="2026-12-01T03:00:00.000Z"),
            Message(
                "assistant",
                [
                    Thinking("hmm"),
                    Text("let me look"),
                    ToolUse("c1", "Bash", {"command": "ls"}),
                    ToolUse("c2", "Read", "x"),
                ],
                usage=Usage(input_tokens=5, output_tokens=2, cache_read_input_tokens=10),
                model="m",
            ),
            Message("user", [ToolResult("c1", "a.txt", is_error=True), ToolResult("zz", "stray"), Text("and?")]),
            Message("assistant", [Text("done")]),
        ],
    )


def test_writer_messages_are_what_the_client_needs():
    loss = LossReport()
    written = HARNESS.write(_conversation(id="../bad id", title="T"), loss, WriteOptions(cwd="/p"))
    sid = written.session_id
    assert store.NATIVE_ID.match(sid) and list(written.files) == [store.session_relpath(sid), store.record_relpath(sid)]
    doc = json.loads(written.files[written.main])
    assert doc["version"] == 1 and doc["sessionId"] == sid
    messages = doc["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user", "assistant"]
    assert messages[0]["content"] == [{"type": "text", "text": '<user_input mode="act">hi</user_input>'}]
    assert messages[0]["ts"] == 1796094000000
    assert messages[1]["content"][1:] == [
        {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "c2", "name": "Read", "input": {"input": "x"}},
    ]
    assert messages[1]["metrics"] == {"inputTokens": 5, "outputTokens": 2, "cacheReadTokens": 10, "cacheWriteTokens": 0}
    # every result names its tool (without name the TUI refuses the file); c2 had none: answered
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "name": "Bash", "content": "a.txt"},
        {
            "type": "tool_result",
            "tool_use_id": "c2",
            "name": "Read",
            "content": "[Tool call interrupted: no result was recorded]",
        },
    ]
    assert messages[3]["content"][0]["text"].startswith("[tool result zz]")
    record = json.loads(written.files[store.record_relpath(sid)])
    assert (
        record["cwd"] == record["workspace_root"] == "/p"
        and record["metadata"]["title"] == "T"
        and record["model"] == "m"
    )
    assert {
        "write:session-id",
        "write:thinking",
        "write:wrapped-input",
        "write:is_error",
        "write:orphan-result",
        "write:missing-tool-result",
    } <= set(loss.counts())


def test_writer_ids():
    conversation = _conversation(id="1796000000000_abcde")
    assert HARNESS.write(conversation, LossReport(), WriteOptions()).session_id == "1796000000000_abcde"
    derived = {HARNESS.write(_conversation(id="x"), LossReport(), WriteOptions()).session_id for _ in range(2)}
    assert len(derived) == 1  # deterministic
    with pytest.raises(UnsafeId):
        HARNESS.write(conversation, LossReport(), WriteOptions(session_id="../x"))


def test_roundtrip_through_common_keeps_the_conversation():
    first = api.to_common(api.load(GENUINE))
    written, _ = api.convert(GENUINE, "cline")
    again = api.to_common(api.load(written.files[written.main]))
    assert [(m.role, m.content) for m in again.messages] == [(m.role, m.content) for m in first.messages]


def test_the_row_made_from_a_record_is_the_clients_own_row():
    """What "identical" means for the database row: made from the record the client wrote
    (after its first run), it equals the row the client wrote, column for column."""
    record = json.loads((GENUINE_DIR / "first_run" / "record.json").read_bytes())
    client_row = json.loads((GENUINE_DIR / "first_run" / "row.json").read_bytes())
    ours = store.row_for(record, record["session_id"], record["messages_path"])
    assert set(ours) == set(client_row)
    # status_lock counts the client's later status updates (optimistic locking; create writes 0)
    later = ("updated_at", "status_lock")
    assert {k: v for k, v in ours.items() if k not in later} == {k: v for k, v in client_row.items() if k not in later}
    assert ours["status_lock"] == 0 and client_row["status_lock"] > 0
    assert [name for name, *_ in store.COLUMNS] == list(client_row)  # the table's columns, in order


def _install(root, conversation=None):
    written = HARNESS.write(conversation or _conversation(), LossReport(), WriteOptions(cwd="/p"))
    return written, api.install(written, "cline", root)


def test_install_writes_the_folder_and_the_row_and_discover_finds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINE_DATA_DIR", str(tmp_path / "data"))
    written, paths = _install(None)
    sid = written.session_id
    assert paths[0] == tmp_path / "data" / store.session_relpath(sid) and paths[0].is_file()
    with sqlite3.connect(tmp_path / "data" / "db" / "sessions.db") as con:
        rows = con.execute("SELECT session_id, cwd, messages_path, status FROM sessions").fetchall()
    assert rows == [(sid, "/p", str(paths[0]), "completed")]
    (info,) = store.discover()
    assert info.id == sid and info.path == str(paths[0]) and info.cwd == "/p" and info.messages == 5
    with pytest.raises(TxcodecError, match="already"):  # never overwrites: the files exist
        api.install(written, "cline")


def test_install_refuses_a_registered_id_and_a_foreign_table(tmp_path):
    root = tmp_path / "data"
    (root / "db").mkdir(parents=True)
    with sqlite3.connect(root / "db" / "sessions.db") as con:
        con.execute("CREATE TABLE sessions (session_id TEXT PRIMARY KEY, brand_new TEXT NOT NULL)")
    with pytest.raises(StoreError, match="another shape"):
        _install(root)
    assert not (root / "sessions").exists() or not any((root / "sessions").rglob("*.json"))  # nothing left behind
    other = tmp_path / "other"
    written, _ = _install(other)
    for path in (other / "sessions").rglob("*.json"):
        path.unlink()
    with pytest.raises(StoreError, match="already registered"):
        api.install(written, "cline", other)
    assert not any((other / "sessions").rglob("*.json"))


def test_hostile_input_is_reported_not_raised():
    for data in (
        b'{"version":1,"sessionId":"s","messages":[1,{"role":"tool"},{"role":"user","content":7},'
        b'{"role":"assistant","content":[{"type":"weird"},{"type":"tool_use","name":"x","id":"1"}],"ts":"no","metrics":{"inputTokens":-1}}]}',
        b'{"version":1,"sessionId":"s","messages":"nope"}',
        b"[1,2]",
        b"\xff\xfe",
    ):
        loss = LossReport()
        session = api.load(data, "cline")
        conversation = HARNESS.read(session, loss)
        assert session.dump() == data
        assert isinstance(conversation, Conversation)
    loss = LossReport()
    c = HARNESS.read(
        api.load(
            b'{"version":1,"sessionId":"s","messages":[1,{"role":"tool"},{"role":"user","content":7},'
            b'{"role":"assistant","content":[{"type":"weird"}]}]}',
            "cline",
        ),
        loss,
    )
    assert {"read:malformed", "message:tool", "block:weird"} <= set(loss.counts())
    assert [m.role for m in c.messages] == ["assistant"]


def test_registered():
    assert registry.get("cline") is HARNESS


def test_the_folder_the_file_and_the_id_name_one_session(tmp_path, monkeypatch):
    """``list`` shows an installed session once (folder, record and row are one session);
    ``show`` and ``convert`` take its folder, its messages file or its id alike."""
    from click.testing import CliRunner

    from txcodec.cli import main

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_DB_DATA_DIR", "CLINE_SESSION_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(main, ["convert", "--to", "cline", "--install", "--cwd", str(tmp_path), str(GENUINE)])
    assert result.exit_code == 0, result.output
    sid = result.stdout.split()[-1]
    folder = tmp_path / ".cline" / "data" / "sessions" / sid
    listed = CliRunner().invoke(main, ["list", "--from", "cline", "--json"])
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.count(sid) >= 1 and listed.stdout.count(f'"{sid}"') == 1
    shown = {
        CliRunner().invoke(main, ["show", name]).stdout
        for name in (str(folder), str(folder / f"{sid}.messages.json"), sid)
    }
    assert len(shown) == 1 and "count the words" in shown.pop()
    out = tmp_path / "out.jsonl"
    converted = CliRunner().invoke(main, ["convert", str(folder), "--to", "claude_code", "-o", str(out)])
    assert converted.exit_code == 0 and api.load(out).harness == "claude_code", converted.output
