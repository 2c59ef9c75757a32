"""opencode and its dialect Kilo without the real clients: export codec, detection, reader,
writer, and the database read without writing. Each client fact relied on is pinned here
(test_opencode_real.py proves the writer's output imports and resumes)."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import REGEN
from support.chat_views import pretty
from support.paths import GOLDEN

from txcodec import api
from txcodec.core.errors import InputError
from txcodec.core.errors import StoreError
from txcodec.core.errors import UnsafeId
from txcodec.harnesses import kilo
from txcodec.harnesses import opencode
from txcodec.harnesses.opencode import store
from txcodec.harnesses.opencode.dialect import KILO
from txcodec.harnesses.opencode.dialect import OPENCODE
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

CASES = [
    (h, p) for h in ("opencode", "kilo") for p in sorted((GOLDEN / h).iterdir()) if p.is_dir() and p.name != "scenarios"
]  # scenarios: test_scenarios.py
GENUINE = GOLDEN / "opencode" / "tool_call_resumed" / "export.json"
KILO_GENUINE = GOLDEN / "kilo" / "tool_call_resumed" / "export.json"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert decode_document(data, opencode.CODEC, "opencode").dump() == data


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.dictionaries(st.sampled_from(["info", "parts", "zz"]), st.text(max_size=5), max_size=3), max_size=3),
    st.sampled_from([None, 2]),
    st.booleans(),
)
def test_documents_roundtrip(messages, indent, final_newline):
    data = json.dumps(
        {"info": {"id": "ses_x", "k": 1}, "messages": messages}, indent=indent, ensure_ascii=False
    ).encode()
    data += b"\n" if final_newline else b""
    assert decode_document(data, kilo.CODEC, "kilo").dump() == data


@pytest.mark.parametrize("harness,case", CASES, ids=lambda v: v if isinstance(v, str) else v.name)
def test_golden(harness, case):
    """``export.json`` round-trips byte for byte (it is what ``opencode export`` printed, or
    the guide's hand-written export), reads to ``common.json``, which writes to
    ``written.jsonl`` (one line; TXCODEC_REGEN_GOLDEN=1 to update the last two)."""
    path = case / "export.json"
    session = api.load(path)
    assert session.harness == harness and not session.diagnostics
    assert session.dump() == path.read_bytes()
    conversation = api.to_common(session)
    target = registry.get(harness)
    written = target.write(conversation, LossReport(), WriteOptions())
    for name, data in {"common.json": pretty(conversation), "written.jsonl": written.files[written.main]}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_exports_are_pretty_printed_and_the_version_tells_the_dialect():
    for path, harness, version in ((GENUINE, "opencode", "1.18.33"), (KILO_GENUINE, "kilo", "7.7.7")):
        data = path.read_bytes()
        assert data.startswith(b'{\n  "info": {\n    "id": "ses_') and data.endswith(b"}\n")
        value = json.loads(data)
        assert value["info"]["version"] == version
        assert api.load(path).harness == harness
        assert opencode.HARNESS.detect([value]) != kilo.HARNESS.detect([value])
    # a foreign version still reads as opencode, never as Kilo
    value = json.loads(GENUINE.read_bytes())
    value["info"]["version"] = "9.0.0"
    assert opencode.HARNESS.detect([value]) == 10 and kilo.HARNESS.detect([value]) == 0


def test_genuine_export_reads_as_the_client_sends_it():
    loss = LossReport()
    c = opencode.HARNESS.read(api.load(GENUINE), loss)
    assert c.meta.id.startswith("ses_") and c.meta.client_version == "1.18.33" and c.meta.title == "Mock title"
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2
    call = c.messages[1].content[1]
    assert isinstance(call, ToolUse) and call.name == "read" and set(call.input) == {"filePath"}
    result = c.messages[2].content[0]
    assert isinstance(result, ToolResult) and result.is_error is False and "1: hello world" in result.content
    assert [m.usage for m in c.messages if m.role == "assistant"] == [Usage(20, 5, reasoning_output_tokens=0)] * 4
    assert [m.stop_reason for m in c.messages if m.role == "assistant"] == ["tool_use", "end_turn"] * 2
    assert c.messages[0].extra["model"] == {"providerID": "mock", "modelID": "mock-model"}
    assert not loss.counts()


def _conversation(**meta) -> Conversation:
    return Conversation(
        meta=Meta(**meta),
        messages=[
            Message("user", [Text("hi")]),
            Message(
                "assistant",
                [
                    Thinking("hmm"),
                    Text("let me look"),
                    ToolUse("c1", "bash", {"command": "ls"}),
                    ToolUse("c2", "read", {"filePath": "x"}),
                ],
                usage=Usage(input_tokens=5, output_tokens=2, cache_read_input_tokens=10),
                model="m",
                stop_reason="tool_use",
            ),
            Message("user", [ToolResult("c1", "a.txt", is_error=True)]),
            Message("assistant", [Text("done")]),
        ],
    )


@pytest.mark.parametrize("dialect", [OPENCODE, KILO], ids=lambda d: d.harness)
def test_writer_has_what_import_requires(dialect):
    loss = LossReport()
    written = registry.get(dialect.harness).write(_conversation(id="other-id"), loss, WriteOptions(cwd="/p"))
    sid = written.session_id
    assert re.match(r"^ses_[A-Za-z0-9]{26}$", sid) and written.main == f"{sid}.json"
    doc = json.loads(written.files[written.main])
    info = doc["info"]
    assert (
        {"slug", "title", "version", "time"} <= set(info)
        and info["version"] == dialect.version
        and info["directory"] == "/p"
    )
    user, first, second = (m["info"] for m in doc["messages"])
    assert {"sessionID", "time", "agent", "model"} <= set(user) and user["agent"] == dialect.agent
    for a in (first, second):
        assert {"parentID", "time", "modelID", "providerID", "mode", "agent", "path", "cost", "tokens"} <= set(a)
        assert a["parentID"] == user["id"]
    ids = [m["info"]["id"] for m in doc["messages"]]
    assert ids == sorted(ids) and all(re.match(r"^msg_[A-Za-z0-9]{26}$", i) for i in ids)
    parts = doc["messages"][1]["parts"]
    assert [p["type"] for p in parts] == ["step-start", "reasoning", "text", "tool", "tool", "step-finish"]
    assert [p["id"] for p in parts] == sorted(p["id"] for p in parts)
    tools = [p for p in parts if p["type"] == "tool"]
    assert tools[0]["state"]["status"] == "error" and tools[0]["state"]["error"] == "a.txt"
    assert tools[1]["state"]["status"] == "error"  # no result: answered, as the client would send it unanswered
    assert {"status", "input", "time", "metadata"} <= set(tools[0]["state"])
    assert first["tokens"] == {"input": 5, "output": 2, "reasoning": 0, "cache": {"read": 10, "write": 0}}
    assert "write:synthetic-result" in loss.counts()
    back = api.to_common(api.load(written.files[written.main], dialect.harness))
    assert back.messages[2].content[0] == ToolResult("c1", "a.txt", is_error=True)
    assert back.messages[1].usage == Usage(5, 2, cache_read_input_tokens=10, reasoning_output_tokens=0)


def test_writer_ids():
    sid = "ses_0000000000001AAAAAAAAAAAAA"
    assert opencode.HARNESS.write(_conversation(id=sid), LossReport(), WriteOptions()).session_id == sid
    with pytest.raises(UnsafeId):
        opencode.HARNESS.write(_conversation(), LossReport(), WriteOptions(session_id="ses_../x"))


def _database(path, export: dict, extra_tables=(), create=True) -> None:
    """A database with the columns opencode 1.18.33 reads a session from (its schema's
    ``session`` / ``message`` / ``part`` tables, docs/opencode.md#format-facts);
    ``create=False`` adds the session to one made before."""
    con = sqlite3.connect(path)
    con.executescript(
        ""
        if not create
        else """
        create table session (id text primary key, project_id text, parent_id text, slug text,
          directory text, path text,
          title text, version text, summary_additions integer, summary_deletions integer, summary_files integer,
          cost real, tokens_input integer, tokens_output integer, tokens_reasoning integer, tokens_cache_read integer,
          tokens_cache_write integer, permission text, agent text, model text, time_created integer,
          time_updated integer);
        create table message (id text primary key, session_id text, time_created integer, time_updated integer,
          data text);
        create table part (id text primary key, message_id text, session_id text, time_created integer,
          time_updated integer, data text);
    """
    )
    for table in extra_tables if create else ():
        con.execute(f"create table {table} (id text)")
    info = export["info"]
    con.execute(
        "insert into session (id, project_id, slug, directory, title, version, time_created, time_updated) "
        "values (?,?,?,?,?,?,?,?)",
        (
            info["id"],
            info.get("projectID"),
            info["slug"],
            info["directory"],
            info["title"],
            info["version"],
            info["time"]["created"],
            info["time"]["updated"],
        ),
    )
    for m in export["messages"]:
        data = {k: v for k, v in m["info"].items() if k not in ("id", "sessionID")}
        con.execute(
            "insert into message values (?,?,?,?,?)",
            (m["info"]["id"], info["id"], m["info"]["time"]["created"], 0, json.dumps(data)),
        )
        for p in m["parts"]:
            pdata = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
            con.execute(
                "insert into part values (?,?,?,?,?,?)", (p["id"], m["info"]["id"], info["id"], 0, 0, json.dumps(pdata))
            )
    con.commit()
    con.close()


def test_the_database_reads_like_the_export_and_stays_unchanged(tmp_path, monkeypatch):
    export = json.loads(GENUINE.read_bytes())
    root = tmp_path / "data" / "opencode"
    root.mkdir(parents=True)
    db = root / "opencode.db"
    _database(db, export)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert opencode.STORE.default_root() == root and kilo.STORE.default_root() == tmp_path / "data" / "kilo"
    (info,) = opencode.STORE.discover()
    assert info.id == export["info"]["id"] and info.messages == 6 and info.path == str(db)
    session = opencode.STORE.load(info.id)
    assert session.harness == "opencode" and session.path == db
    assert api.to_common(session).messages == api.to_common(api.load(GENUINE)).messages
    from click.testing import CliRunner

    from txcodec.cli import main

    listed = CliRunner().invoke(
        main, ["list", "--harness", "opencode", "--full-id"], env={"XDG_DATA_HOME": str(tmp_path / "data")}
    )
    assert listed.exit_code == 0 and info.id in listed.output and "Mock title" in listed.output, listed.output
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in root.iterdir()) == ["opencode.db"]  # no journal, no -wal / -shm left
    assert kilo.STORE.discover() == []
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert opencode.STORE.default_root() == tmp_path / "home" / ".local" / "share" / "opencode"


def test_a_database_that_is_not_opencodes_is_a_store_error(tmp_path):
    db = tmp_path / "opencode.db"
    sqlite3.connect(db).execute("create table session (id text)").connection.close()
    with pytest.raises(StoreError, match="lacks"):
        store.session_ids(db)
    (tmp_path / "x.db").write_bytes(b"not sqlite at all, no header here")
    with pytest.raises(StoreError):
        store.session_ids(tmp_path / "x.db")


def test_kilo_is_a_dialect_not_a_copy():
    assert kilo.HARNESS.read is opencode.HARNESS.read  # one reader
    assert kilo.STORE.dialect is KILO and KILO.extra_tables == ("kilo_board", "kilo_board_message")
    assert (KILO.database, KILO.app, KILO.env("CONFIG_CONTENT")) == ("kilo.db", "kilo", "KILO_CONFIG_CONTENT")
    assert registry.get("kilo") is kilo.HARNESS and registry.get("opencode") is opencode.HARNESS


def _second(export: dict) -> dict:
    """The same session under other ids (a second session for the same database)."""
    text = (
        json.dumps(export)
        .replace(export["info"]["id"], "ses_" + "b" * 26)
        .replace('"msg_', '"msg_b')
        .replace('"prt_', '"prt_b')
    )
    return json.loads(text.replace('"Mock title"', '"Second one"'))


def test_a_database_path_is_its_session_or_names_the_candidates(tmp_path, monkeypatch):
    """``show path/to/opencode.db``: its only session; with several, one error line naming
    them and how to pick one (``<database>#<id>``, or a unique prefix), never a silent pick."""
    from click.testing import CliRunner

    from txcodec.cli import main

    export = json.loads(GENUINE.read_bytes())
    sid = export["info"]["id"]
    db = tmp_path / "copy.db"  # any name, any folder
    _database(db, export)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    session = api.load(db)
    assert session.harness == "opencode" and session.path == db
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert api.to_common(session).messages == api.to_common(api.load(GENUINE)).messages
    shown = CliRunner().invoke(main, ["show", "--no-color", str(db)])
    assert shown.exit_code == 0 and shown.output.strip(), shown.output

    _database(db, _second(export), create=False)
    several = CliRunner().invoke(main, ["show", "--no-color", str(db)])
    assert several.exit_code == 1, several.output
    assert sid in several.output and "ses_" + "b" * 26 in several.output and f"{db}#<id>" in several.output
    assert api.load(f"{db}#{sid}").dump() == session.dump()
    picked = CliRunner().invoke(main, ["show", "--no-color", f"{db}#ses_bbb"])  # a unique prefix
    assert picked.exit_code == 0, picked.output
    assert api.to_common(api.load(f"{db}#ses_bbb")).meta.title == "Second one"
    missing = CliRunner().invoke(main, ["show", f"{db}#ses_nope"])
    assert missing.exit_code == 1 and "no session 'ses_nope'" in missing.output, missing.output
    with pytest.raises(InputError, match="2 sessions in this database"):
        api.load(db)
    after = hashlib.sha256(db.read_bytes()).hexdigest()
    api.load(f"{db}#{sid}")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == after  # reading writes nothing

    # an id alone is looked up in the store's own database, and read from it
    root = tmp_path / "data" / "opencode"
    root.mkdir(parents=True)
    (root / "opencode.db").write_bytes(db.read_bytes())
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    by_id = CliRunner().invoke(
        main, ["export", "ses_bbb", "--to", "markdown"], env={"XDG_DATA_HOME": str(tmp_path / "data")}
    )
    assert by_id.exit_code == 0 and "Second one" in by_id.output, by_id.output


def test_a_kilo_database_reads_as_kilo(tmp_path):
    db = tmp_path / "kilo.db"
    _database(db, json.loads(GENUINE.read_bytes()), extra_tables=KILO.extra_tables)
    assert api.load(db).harness == "kilo"
    assert api.load(db, "opencode").harness == "opencode"  # named, the dialect is the one asked for
    with pytest.raises(InputError, match="not a codex session"):
        api.load(db, "codex")
