"""Claude Code native codec: bytes in, the same bytes out; typed records in between.

The facts are those of docs/claude_code.md#what-is-typed, docs/claude_code.md#tool-results,
docs/claude_code.md#lines and
docs/claude_code.md#what-rides-along.
"""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.paths import corpus_files
from support.paths import sha256

import txcodec
from txcodec.harnesses.claude_code import records as r
from txcodec.model.native import Opaque

SID = "4f6c1d2e-8a3b-4c5d-9e7f-0a1b2c3d4e5f"


def load(data: bytes):
    return txcodec.load(data, harness="claude_code")


def touched_dump(session) -> bytes:
    """dump() with every record handed out, so each is re-checked against its bytes."""
    for _ in session:
        pass
    return session.dump()


# --- any bytes --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_round_trip(data):
    assert load(data).dump() == data
    assert touched_dump(load(data)) == data
    assert txcodec.load(data).dump() == data  # whatever harness is detected


_json_ish = st.lists(
    st.sampled_from(
        [
            b"{",
            b"}",
            b'"type":',
            b'"user"',
            b'"assistant"',
            b"\n",
            b"\r\n",
            b"\r",
            b",",
            b":",
            b"[",
            b"]",
            b'"message":{"role":"user","content":',
            b"\xe2\x80\xa8",
            b"\x00",
            b"\xff",
            b"\xef\xbb\xbf",
            b'"x"',
            b"1",
            b"null",
            b" ",
        ]
    ),
    max_size=60,
).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(_json_ish)
def test_json_shaped_bytes_round_trip(data):
    assert load(data).dump() == data
    assert touched_dump(load(data)) == data


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"\n")), st.integers(1, 40))
def test_streamed_lines_are_the_split_lines(data, block_size):
    """verify's line reader (a block at a time, lines as views) splits exactly as
    split_lines does, whatever the block size."""
    import io

    from txcodec.core.jsonl import iter_lines
    from txcodec.core.jsonl import split_lines

    got = [(bytes(line), lf) for line, lf in iter_lines(io.BytesIO(data), block_size)]
    lines, final_newline = split_lines(data)
    assert [line for line, _ in got] == lines
    assert all(lf for _, lf in got[:-1]) and (not got or got[-1][1] == final_newline)


# --- generated valid sessions ------------------------------------------------------------

_text = st.text(
    alphabet=st.sampled_from(list('ab z{}"\\/é😀') + ["\u2028", "\u2029", "\r", "\n", "\t", "\x00", "\x7f"]),
    max_size=30,
)


def _record(kind: str, i: int, text: str, extra: dict) -> dict:
    uid = f"00000000-0000-4000-8000-{i:012d}"
    if kind == "user":
        rec = {
            "parentUuid": None,
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": text},
            "uuid": uid,
            "sessionId": SID,
        }
    elif kind == "assistant":
        rec = {
            "parentUuid": None,
            "type": "assistant",
            "uuid": uid,
            "sessionId": SID,
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-opus-5",
                "content": [
                    {"type": "thinking", "thinking": text, "signature": "sig"},
                    {"type": "text", "text": text},
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"c": text}},
                ],
                "stop_reason": None,
                "usage": {"input_tokens": 1, "output_tokens": 2},
            },
        }
    elif kind == "result":
        rec = {
            "type": "user",
            "uuid": uid,
            "sessionId": SID,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": text, "is_error": False}],
            },
            "toolUseResult": {"stdout": text},
        }
    elif kind == "system":
        rec = {"type": "system", "subtype": "local_command", "content": text, "uuid": uid, "sessionId": SID}
    else:
        rec = {"type": kind, "sessionId": SID, "customTitle": text, "summary": text}
    rec.update(extra)
    return rec


@st.composite
def sessions(draw):
    kinds = draw(
        st.lists(
            st.sampled_from(["user", "assistant", "result", "system", "custom-title", "summary", "mode"]),
            min_size=1,
            max_size=8,
        )
    )
    lines = []
    for i, kind in enumerate(kinds):
        extra = draw(
            st.dictionaries(
                st.sampled_from(["zz", "futureKey", "nested"]),
                st.one_of(st.integers(), _text, st.just({"a": [1, 2.5, None]})),
                max_size=2,
            )
        )
        rec = _record(kind, i, draw(_text), extra)
        style = draw(st.sampled_from(["compact", "spaced", "ascii"]))
        if style == "compact":
            line = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
        elif style == "spaced":
            line = json.dumps(rec, ensure_ascii=False)
        else:
            line = json.dumps(rec)
        raw = line.encode("utf-8", "surrogatepass")
        if draw(st.booleans()) and draw(st.booleans()):
            raw += b"\r"  # CRLF line ending
        lines.append(raw)
    data = b"\n".join(lines)
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    ending = draw(st.sampled_from(["lf", "none", "cut", "blank"]))
    if ending == "lf":
        data += b"\n"
    elif ending == "cut":
        data += b'\n{"type":"user","message":{"role":"us'
    elif ending == "blank":
        data += b"\n\n"
    return data, len(kinds), ending


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_generated_sessions_round_trip_and_type(case):
    data, n, ending = case
    session = load(data)
    assert session.dump() == data
    assert touched_dump(load(data)) == data
    typed = [rec for rec in session.records[:n]]
    assert not any(isinstance(rec, Opaque) for rec in typed), [d for _, d in session.diagnostics]
    if ending == "cut":
        assert session.records[-1].partial
        assert "cut off" in session.records[-1].diagnostic
    assert txcodec.load(data).harness == "claude_code"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.data())
def test_generated_sessions_edit_one_record(case, data):
    """Edit one record in place (through iteration): that line, and only it, changes, and
    it reads back as the edited record."""
    raw, n, _ = case
    session = load(raw)
    editable = [
        i for i, rec in enumerate(session.lines[:n]) if isinstance(rec._record, (r.UserRecord, r.AssistantRecord))
    ]
    if not editable:
        return
    target = data.draw(st.sampled_from(editable))
    record = [rec for rec in session][target]
    content = record.message.content
    if isinstance(content, str):
        record.message.content = content + "!"
    else:
        block = content[-1]
        if isinstance(block, r.ToolUseBlock):
            block.name += "!"
        else:
            block.content = (block.content if isinstance(block.content, str) else "") + "!"
    out = session.dump()
    before, after = raw.split(b"\n"), out.split(b"\n")
    assert len(before) == len(after)
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [target]
    assert load(after[target]).records[0] == record
    assert after[target].startswith(b"\xef\xbb\xbf") == before[target].startswith(b"\xef\xbb\xbf")
    assert after[target].endswith(b"\r") == before[target].endswith(b"\r")


def test_line_splitting_guard():
    """U+2028 / U+2029 and CR inside strings are not line boundaries (docs/claude_code.md#lines)."""
    text = "a\u2028b\u2029c\rd"
    line = json.dumps(
        {"type": "user", "uuid": "u", "message": {"role": "user", "content": text}}, ensure_ascii=False
    ).encode()
    data = line + b"\r\n" + line + b"\n"
    session = load(data)
    assert len(session) == 2
    assert session[0].message.content == text
    assert session.dump() == data


def test_one_megabyte_lines():
    big = "x" * 1_100_000 + "\u2028é"
    lines = [
        json.dumps(
            {"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": big}}, ensure_ascii=False
        ).encode()
        for i in range(3)
    ]
    data = b"\n".join(lines)  # and no final newline
    session = load(data)
    assert [type(rec) for rec in session] == [r.UserRecord] * 3
    assert session[2].message.content == big
    assert session.dump() == data
    assert touched_dump(load(data)) == data
    # the harness is detected from whole lines, however long the first one is
    assert txcodec.load(data).harness == "claude_code"
    assert txcodec.api.detect_lines(lines[:1]) == "claude_code"


def test_verify_streams_a_long_first_line(tmp_path):
    from txcodec.verify import verify_file

    line = json.dumps(
        {
            "type": "user",
            "uuid": "u",
            "sessionId": SID,
            "message": {"role": "user", "content": "hi"},
            "toolUseResult": {"stdout": "y" * 3_000_000},
        }
    ).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(line + b"\n" + line)
    result = verify_file(path)
    assert (result.ok, result.harness, result.lines, result.bytes, result.opaque) == (
        True,
        "claude_code",
        2,
        2 * len(line) + 1,
        0,
    )


def test_bom_nul_invalid_utf8_blank_lines():
    data = (
        b'\xef\xbb\xbf{"type":"mode","mode":"normal","sessionId":"s"}\n\n'
        b'{"type":"user","uuid":"\x00"}\n\xff\xfe garbage\n   \n{"type":"user","uuid":"a"}'
    )
    session = load(data)
    assert isinstance(session[0], r.ModeRecord)
    diagnostics = {n: o.diagnostic for n, o in session.diagnostics}
    assert diagnostics[2].startswith("not JSON: blank")
    assert 3 in diagnostics  # a raw NUL inside a JSON string is invalid JSON
    assert diagnostics[4] == "not JSON: invalid UTF-8"
    assert isinstance(session[5], r.UserRecord)
    assert session.dump() == data


# --- typed records ------------------------------------------------------------------------


def test_tool_use_result_shapes():
    """Read as raw JSON and shape-checked: object, bare string, array, JSON in a string."""
    cases = {
        b'{"stdout":"ok"}': "object",
        b'"Error: Exit code 1"': "string",
        b'[{"type":"text","text":"a"}]': "array",
        b'"{\\"files\\":2}"': "json-string",
    }
    for raw, shape in cases.items():
        line = b'{"type":"user","uuid":"u","message":{"role":"user","content":"x"},"toolUseResult":' + raw + b"}"
        rec = load(line)[0]
        assert isinstance(rec, r.UserRecord)
        assert bytes(rec.tool_use_result) == raw
        assert r.tool_use_result_shape(rec.tool_use_result)[0] == shape
    assert r.tool_use_result_shape(msgspec.UNSET) == ("absent", None)


def test_unknown_block_kept_record_typed():
    line = (
        b'{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"fallback",'
        b'"from":{"model":"a"}},{"type":"text","text":"hi"}]},"toolUseResult":{"a":1}}'
    )
    rec = load(line)[0]
    assert isinstance(rec, r.UserRecord)
    assert isinstance(rec.message.content[0], msgspec.Raw)
    assert json.loads(bytes(rec.message.content[0])) == {"type": "fallback", "from": {"model": "a"}}
    assert rec.message.content[1] == r.TextBlock(text="hi")
    assert bytes(rec.tool_use_result) == b'{"a":1}'


def test_unknown_type_and_bad_body_are_opaque_with_reason():
    data = b'{"type":"brand-new-thing","x":1}\n{"type":"user","message":"not an object"}\n[1]\n'
    session = load(data)
    (n1, o1), (n2, o2), (n3, o3) = session.diagnostics
    assert (n1, o1.type, o1.diagnostic) == (1, "brand-new-thing", "unknown record type 'brand-new-thing'")
    assert n2 == 2 and o2.type == "user" and "$.message" in o2.diagnostic
    assert n3 == 3 and o3.diagnostic == "not a JSON object: list"
    assert session.dump() == data


@pytest.mark.parametrize("kind, cls", sorted(r.RECORD_TYPES.items()))
def test_every_record_type_decodes(kind, cls):
    rec = load(json.dumps({"type": kind, "sessionId": SID}).encode())[0]
    assert type(rec) is cls


def test_taxonomy_is_covered():
    """Every type docs/claude_code.md#what-is-typed and docs/claude_code.md#what-is-typed name has a struct."""
    named = {
        "attachment",
        "assistant",
        "user",
        "last-prompt",
        "atis-latch",
        "mode",
        "permission-mode",
        "ai-title",
        "queue-operation",
        "bridge-session",
        "pr-link",
        "cost-state",
        "system",
        "file-history-snapshot",
        "custom-title",
        "agent-name",
        "file-history-delta",
        "frame-link",
        "started",
        "result",
        "artifact-autoreact-ledger",
        "artifact-comment-monitor",
        "summary",
        "progress",
    }
    assert named <= set(r.RECORD_TYPES)


def test_side_files_are_typed():
    meta = txcodec.load(b'{"agentType":"general-purpose","toolUseId":"toolu_1","parentAgentId":"a1"}')
    assert meta.harness == "claude_code"
    assert meta[0] == r.AgentMeta(agent_type="general-purpose", tool_use_id="toolu_1", parent_agent_id="a1")
    assert meta[0].depth == 1  # spawnDepth absent reads as 1 (docs/claude_code.md#what-is-typed)
    journal = txcodec.load(
        b'{"type":"started","key":"v2:k","agentId":"a1"}\n'
        b'{"type":"result","key":"v2:k","agentId":"a1","result":"done"}\n'
    )
    assert journal.harness == "claude_code"
    assert journal.records == [
        r.JournalStarted(key="v2:k", agent_id="a1"),
        r.JournalResult(key="v2:k", agent_id="a1", result=msgspec.Raw(b'"done"')),
    ]


def test_pretty_printed_json_side_file(tmp_path):
    data = b'{\n  "agentType": "workflow-subagent",\n  "spawnDepth": 2\n}'
    path = tmp_path / "agent-a1.meta.json"
    path.write_bytes(data)
    session = txcodec.load(path)
    assert session.harness == "claude_code" and len(session) == 1
    assert session[0] == r.AgentMeta(agent_type="workflow-subagent", spawn_depth=2)
    assert session.dump() == data
    run = tmp_path / "wf_1.json"
    run.write_bytes(b'{\n  "runId": "wf_1",\n  "status": "completed",\n  "script": "x"\n}\n')
    loaded = txcodec.load(run)
    assert loaded[0].run_id == "wf_1" and loaded.dump() == run.read_bytes()


# --- modification -------------------------------------------------------------------------

BASE = (
    b'{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","futureKey":{"a":[1,2]}}\n'
    b'{"type":"assistant","uuid":"a1","message":{"role":"assistant","content":[{"type":"text","text":"yo",'
    b'"citations":null}],"usage":{"input_tokens":1,"service_tier":"standard"}},"zz":1.0e0}\n'
    b"not json\n"
    b'{"type":"custom-title","customTitle":"t","sessionId":"s"}\n'
)


def test_edit_in_place_changes_only_that_line():
    session = load(BASE)
    session[1].message.content[0].text = "hello"
    out = session.dump().split(b"\n")
    base = BASE.split(b"\n")
    assert [i for i, (a, b) in enumerate(zip(out, base)) if a != b] == [1]
    edited = json.loads(out[1])
    assert edited["message"]["content"][0]["text"] == "hello"
    assert edited["zz"] == 1.0  # unknown keys kept
    assert edited["message"]["usage"]["service_tier"] == "standard"
    assert edited["message"]["content"][0]["citations"] is None
    assert list(edited) == list(json.loads(base[1]))  # key order kept


def test_edit_keeps_unknown_keys_and_absent_fields_absent():
    session = load(BASE)
    session[0].uuid = "u9"
    line = session.dump().split(b"\n")[0]
    assert json.loads(line) == {
        "parentUuid": None,
        "type": "user",
        "message": {"role": "user", "content": "hi"},
        "uuid": "u9",
        "futureKey": {"a": [1, 2]},
    }


def test_replace_append_and_untouched_reads():
    session = load(BASE)
    for _ in session:  # reading everything changes nothing
        pass
    assert session.dump() == BASE
    session[3] = r.CustomTitleRecord(custom_title="new", session_id="s")
    session.append(r.ModeRecord(mode="plan", session_id="s"))
    out = session.dump()
    assert out.startswith(b"\n".join(BASE.split(b"\n")[:3]) + b"\n")
    assert out.split(b"\n")[3:] == [
        b'{"type":"custom-title","customTitle":"new","sessionId":"s"}',
        b'{"type":"mode","mode":"plan","sessionId":"s"}',
        b"",
    ]


def test_editing_a_line_object_directly():
    session = load(BASE)
    session.lines[0].record.message.content = "changed"
    assert json.loads(session.dump().split(b"\n")[0])["message"]["content"] == "changed"
    session = load(BASE)
    del session.lines[2]  # dropping a line: the rest stays byte-identical
    assert session.dump() == BASE.replace(b"not json\n", b"")


BLOCKS = (
    b'{"type":"user","uuid":"u0","message":{"role":"user","content":"q"}}\n'
    b'{"type":"assistant","uuid":"a1","zz":1,"message":{"role":"assistant","extra":5,"content":['
    b'{"type":"text","text":"one","cache_control":{"type":"ephemeral"}},'
    b'{"type":"text","text":"two","k":2},'
    b'{"type":"tool_use","id":"t","name":"Bash","input":{"c":"ls"},"weird":[1]}]}}\n'
    b"not json\n"
)


def _content(session, line: int = 1) -> list:
    return json.loads(session.dump().split(b"\n")[line])["message"]["content"]


@pytest.mark.parametrize("reach", ["iteration", "records", "index", "slice", "line"])
def test_nested_edit_through_any_handle_is_re_encoded(reach):
    """However a record was reached, an in-place edit of a nested block re-encodes that
    line (and only it), and every block keeps its unknown keys."""
    session = load(BLOCKS)
    record = {
        "iteration": lambda: [r for r in session][1],
        "records": lambda: session.records[1],
        "index": lambda: session[-2],
        "slice": lambda: session[1:2][0],
        "line": lambda: session.lines[1].record,
    }[reach]()
    record.message.content[0].text = "ONE"
    out = session.dump().split(b"\n")
    assert [i for i, (a, b) in enumerate(zip(out, BLOCKS.split(b"\n"))) if a != b] == [1]
    assert _content(session) == [
        {"type": "text", "text": "ONE", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "two", "k": 2},
        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"c": "ls"}, "weird": [1]},
    ]


def test_blocks_added_or_removed_keep_the_others_unknown_keys():
    session = load(BLOCKS)
    session[1].message.content.insert(0, r.ThinkingBlock(thinking="hm"))
    assert [b.get("cache_control") or b.get("k") or b.get("weird") for b in _content(session)] == [
        None,
        {"type": "ephemeral"},
        2,
        [1],
    ]
    session = load(BLOCKS)
    session[1].message.content.append(r.TextBlock(text="three"))
    assert _content(session)[-1] == {"type": "text", "text": "three"}
    assert _content(session)[2]["weird"] == [1]
    session = load(BLOCKS)
    del session[1].message.content[0]
    assert _content(session) == [
        {"type": "text", "text": "two", "k": 2},
        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"c": "ls"}, "weird": [1]},
    ]


def test_a_file_that_is_only_a_cut_off_line_is_flagged():
    data = b'{"type":"user","sessionId":"s","message":{"ro'
    session = txcodec.load(data)  # no harness recognizes it: generic JSONL
    assert session.harness == "jsonl" and session.dump() == data
    ((n, opaque),) = session.diagnostics
    assert n == 1 and opaque.partial and opaque.diagnostic.startswith("cut off")
    complete = txcodec.load(b'{"a":1}')  # complete JSON without LF: not cut off
    assert not complete.diagnostics[0][1].partial


DEEP = b"[" * 3000 + b"]" * 3000  # msgspec raises RecursionError, not DecodeError, on this


@pytest.mark.parametrize("harness", [None, "claude_code", "codex", "gemini_cli", "qwen_code", "pi", "stream_json"])
def test_json_nested_too_deeply_is_kept_as_bytes(harness):
    good = b'{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}\n'
    for data in (good + DEEP + b"\n" + good, DEEP, b"[" * 100_000):
        session = txcodec.load(data, harness)
        assert session.dump() == data and touched_dump(txcodec.load(data, harness)) == data
        deep = [n for n, o in session.diagnostics if o.diagnostic == "not decoded: JSON nested too deeply"]
        assert deep == ([2] if data.startswith(good) else [1]) or session.harness == "jsonl"


def test_edited_lines_keep_bom_and_crlf():
    data = (
        b'\xef\xbb\xbf{"type":"user","message":{"role":"user","content":"a"}}\r\n'
        b'{"type":"user","message":{"role":"user","content":"b"}}\r\n'
    )
    session = load(data)
    for record in session:
        record.message.content += "!"
    assert session.dump() == data.replace(b'a"', b'a!"').replace(b'b"', b'b!"')


def test_edited_opaque_line_from_diagnostics_is_dumped():
    session = load(BLOCKS)
    ((n, opaque),) = session.diagnostics
    assert n == 3
    opaque.raw = b"still not json"
    assert session.dump() == BLOCKS.replace(b"not json", b"still not json")


# --- the public corpus ----------------------------------------------------------------------


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: "/".join(p.parts[-3:]))
def test_corpus_round_trips(path):
    data = path.read_bytes()
    session = txcodec.load(path)
    assert sha256(session.dump()) == sha256(data)
    assert sha256(touched_dump(txcodec.load(path))) == sha256(data)


@pytest.mark.parametrize(
    "path", corpus_files("claude_code", suffixes=(".jsonl",)), ids=lambda p: "/".join(p.parts[-3:])
)
def test_corpus_claude_lines_are_typed(path):
    """Only lines that are not a Claude Code record stay opaque: non-objects, typeless
    objects, a legacy message string, the synthetic drift fixture's tool_use lines."""
    session = txcodec.load(path)
    assert session.harness == "claude_code"
    allowed = {
        "not a JSON object",
        "no 'type' field",
        "unknown record type 'tool_use'",
        "unknown record type 'tool_result'",
        "unknown or invalid 'user' record: Expected `object`, got `str`",
    }
    for n, opaque in session.diagnostics:
        assert any(opaque.diagnostic.startswith(a) for a in allowed), (n, opaque.diagnostic)
