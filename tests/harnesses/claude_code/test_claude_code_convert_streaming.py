"""``convert`` streams a Claude Code session (decoded a batch at a time, each batch
dropped once read): what it writes and reports is what the whole-session path gives."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from support.paths import corpus_files

from txcodec import api
from txcodec.kit.load import streamed
from txcodec.model.loss import LossReport
from txcodec.model.loss import UnreadLoss
from txcodec.model.native import RawLines

CLAUDE_FILES = corpus_files("claude_code", (".jsonl",))
# forks (docs/lineage.md): the streamed reader finds the fork link on the way
FORKS = sorted((Path(__file__).resolve().parents[3] / "golden" / "claude_code").glob("*lineage*/**/*.jsonl"))


def _whole(source, to: str):
    """The conversion without streaming: the session loaded whole, then read and written."""
    loss = LossReport()
    conversation = api.to_common(api.load(source, "claude_code"), loss)
    written, more = api.convert(conversation, to)
    loss.extend(more)
    return written, loss


def _entries(loss: LossReport) -> list[bytes]:
    # in order; the one detail that names the source (a path for one, "the conversation"
    # for the other) left out
    return [
        msgspec.json.encode(msgspec.structs.replace(e, detail="") if e.kind == "write:no-conversation" else e)
        for e in loss.entries
    ]


def _same(streamed, whole) -> None:
    (a, loss_a), (b, loss_b) = streamed, whole
    assert a.files == b.files
    assert _entries(loss_a) == _entries(loss_b)
    assert loss_a.counts() == loss_b.counts()


def _line(n: int, text: str, **extra) -> bytes:
    record = {
        "type": "user",
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "parentUuid": None,
        "sessionId": "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01",
        "timestamp": f"2026-01-01T00:00:{n % 60:02d}Z",
        "message": {"role": "user", "content": text},
        **extra,
    }
    return json.dumps(record).encode()


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch):
    """A session without a single time is written with the time of writing: one clock
    for both conversions compared."""
    from txcodec.harnesses.codex import write

    monkeypatch.setattr(write, "_now", lambda: "2026-01-02T03:04:05.678Z")


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("to", ["codex", "claude_code"])
def test_a_streamed_corpus_session_converts_as_a_whole_one(path, to):
    streamed = api.convert(path, to, from_="claude_code")
    _same(streamed, _whole(path, to))


@pytest.mark.parametrize("path", FORKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_streamed_fork_keeps_its_link(path):
    streamed = api.convert(path, "codex", from_="claude_code")
    _same(streamed, _whole(path, "codex"))
    found = api.to_common(api.load(path, "claude_code")).meta.forked_from
    written = streamed[0].files[streamed[0].main]
    assert (b'"forked_from_id"' in written) == (found is not msgspec.UNSET)


def test_lone_surrogates_cut_off_lines_and_crlf_are_reported_as_for_a_whole_session(tmp_path):
    lines = [_line(n, f"prompt {n}") for n in range(1, 400)]
    lines[150] = lines[150].replace(b"prompt 151", b"a\\ud800b")  # in the middle of a batch
    lines[151] = lines[151].replace(b'"prompt 152"', b'"x\\udc00\\ud83d\\ude00"')
    lines[200] = b"not json"
    lines[300] = lines[300].replace(b'"uuid"', b'"unknownKey": 1, "uuid"')
    data = b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\n" + _line(400, "cut")[:40]
    path = tmp_path / "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01.jsonl"
    path.write_bytes(data)
    streamed = api.convert(path, "codex")
    whole = _whole(path, "codex")
    _same(streamed, whole)
    assert streamed[1].lines("text:lone-surrogate") == [151, 152]
    assert {"opaque", "field:unknown"} <= set(streamed[1].counts())
    _same(api.convert(data, "codex", from_="claude_code"), _whole(data, "codex"))


@pytest.mark.parametrize(
    "escape", [rb"\ud800", rb"\udbff", rb"\udc00", rb"\ud800\u0041", rb"\udc00\ud800", rb"x\udfff"]
)
def test_msgspec_refuses_a_lone_surrogate_even_in_a_value_it_skips(escape):
    """Why a batch decoded in one call needs no lone-surrogate check (native.decode_batches)."""
    from txcodec.harnesses.claude_code.codec import _decoder

    lines = _line(1, "a") + b"\n" + _line(2, "b").replace(b'"uuid"', b'"skipped": "' + escape + b'", "uuid"')
    with pytest.raises(msgspec.DecodeError):
        _decoder.decode_lines(lines)
    assert (
        len(
            _decoder.decode_lines(
                _line(1, "a") + b"\n" + _line(2, "b").replace(b'"uuid"', b'"ok": "\\ud83d\\ude00", "uuid"')
            )
        )
        == 2
    )


@pytest.mark.parametrize("data", [b"", b"\n", b"a", b"a\n", b"a\nb", b"a\n\nb\n", b"\n\na\r\nb\r\n"])
def test_raw_lines_are_the_lines_forwards_and_backwards(data):
    expected = data.split(b"\n")
    if data.endswith(b"\n"):
        expected.pop()
    if not data:
        expected = []
    assert [bytes(v) for v in RawLines(data)] == expected
    assert [bytes(v) for v in reversed(RawLines(data))] == expected[::-1]


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=lambda p: p.name)
def test_the_unknown_key_probe_finds_what_the_full_check_finds(path, monkeypatch):
    """readkit's probe only skips a line in which every key is declared."""
    from txcodec.harnesses.claude_code.read import _HANDLERS
    from txcodec.kit import read as readkit

    session = api.load(path, "claude_code")
    probed, full = LossReport(), LossReport()
    readkit.report_unknown_keys(session, probed, "f", _HANDLERS)
    monkeypatch.setattr(readkit, "_probe", lambda cls, nested: None)
    readkit.report_unknown_keys(session, full, "f", _HANDLERS)
    assert probed.to_dict() == full.to_dict()


@pytest.mark.parametrize(
    "value",
    [
        {"stdout": "ok", "agentId": "a1", "status": "completed", "n": 1.5},
        "Error: bare",
        '{"json": "in a string"}',
        [1, {"a": None}],
        None,
        12345678901234567890123,
        "1e999",
    ],
)
def test_a_streamed_read_decodes_tool_use_result_with_its_line_as_a_whole_read_does(value, tmp_path):
    # the streamed read decodes toolUseResult with its line; a value it refuses (a number
    # past a float's range, spelled in the line's bytes) sends its batch back to the
    # whole-session decoder, which keeps it as bytes
    sid = "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01"
    result = b"1e999" if value == "1e999" else msgspec.json.encode(value)
    lines = []
    for k in range(1, 40):
        call = {
            "type": "assistant",
            "uuid": f"a-{k}",
            "sessionId": sid,
            "timestamp": f"2026-01-01T00:00:{k:02d}Z",
            "message": {
                "id": f"msg_{k}",
                "role": "assistant",
                "model": "m",
                "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": f"t{k}", "name": "Bash", "input": {"command": "ls"}}],
            },
        }
        lines.append(json.dumps(call).encode())
        block = f'"content": [{{"type": "tool_result", "tool_use_id": "t{k}", "content": "out"}}]'.encode()
        user = _line(1000 + k, "x").replace(b'"content": "x"', block)
        lines.append(user.replace(b'"uuid"', b'"toolUseResult": ' + result + b', "uuid"'))
    path = tmp_path / f"{sid}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    _same(api.convert(path, "codex"), _whole(path, "codex"))
    whole = msgspec.json.encode(api.to_common(api.load(path, "claude_code"), LossReport()))
    assert msgspec.json.encode(api.to_common(streamed(path, None), LossReport())) == whole
    assert msgspec.json.encode(api.to_common(streamed(path, None), UnreadLoss())) == whole
