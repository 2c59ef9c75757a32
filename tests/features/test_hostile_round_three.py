"""Issue 33 (hostile input, round three): batch exports that go on past a bad session and
exit 1 with their summary, odd result shapes in ``changes`` and the views, Common JSON
refused in one line, and the Markdown export's pairing of parallel results (issue 34,
item 16). Each input is built here, beside its test.

The suite runs in strict mode (tests/conftest.py): an unexpected exception is raised as
it is, never turned into "internal error", so reaching that guard fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import txcodec
from txcodec import api
from txcodec.cli import main
from txcodec.core.errors import InputError
from txcodec.export import markdown

SID = "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01"
OTHER = "1c7f2e1d-66b9-4f68-8e5f-3f2f2b8e0d12"


def _claude(*records: dict, sid: str = SID) -> bytes:
    base = {"sessionId": sid, "cwd": "/tmp/p", "version": "2.1.0", "timestamp": "2026-01-01T00:00:00Z"}
    lines, parent = [], None
    for n, record in enumerate(records):
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        lines.append(json.dumps({**base, "isSidechain": False, "parentUuid": parent, "uuid": uuid, **record}))
        parent = uuid
    return ("\n".join(lines) + "\n").encode()


def _user(text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}}


def _assistant(*blocks: dict, mid: str = "msg_1") -> dict:
    return {
        "type": "assistant",
        "message": {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": list(blocks),
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }


def _use(tid: str, name: str, inp: object) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def _result(tid: str, text: str, structured: object = None) -> dict:
    record = {"type": "user", "message": {"role": "user", "content": [_tool_result(tid, text)]}}
    if structured is not None:
        record["toolUseResult"] = structured
    return record


def _tool_result(tid: str, text: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": text}


def _store(tmp_path: Path, sessions: dict[str, bytes]) -> Path:
    project = tmp_path / "projects" / "-tmp-p"
    project.mkdir(parents=True)
    for sid, data in sessions.items():
        (project / f"{sid}.jsonl").write_bytes(data)
    return tmp_path / "projects"


# --- item 5 and 17: a batch export goes on, and any failure exits 1 with the summary -----

# a tool call named apply_patch whose input has no string ``patch`` (html.py called
# None.splitlines() and the whole site stopped before index.html)
PATCHLESS = _claude(_user("patch it"), _assistant(_use("t1", "apply_patch", {"path": 3})), _result("t1", "done"))
GOOD = _claude(_user("hello"), _assistant({"type": "text", "text": "hi there"}), sid=OTHER)


def test_a_patch_call_without_a_patch_is_a_page(tmp_path):
    root = _store(tmp_path, {SID: PATCHLESS, OTHER: GOOD})
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["export", "--all", "--to", "html", "--root", str(root), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 pages written" in result.output and (out / "index.html").is_file()
    assert "apply_patch" in (out / "claude_code" / f"{SID}.html").read_text()


def test_a_session_that_fails_never_ends_the_site(tmp_path, monkeypatch):
    """Whatever one session raises (here: a bug, as the renderer would), its page is
    reported, the others and the index are written, and the exit status is 1."""
    from txcodec.export import html

    root = _store(tmp_path, {SID: PATCHLESS, OTHER: GOOD})
    write = html.write

    def failing(conv, stream, **kwargs):
        if conv.meta.id == SID:
            raise AttributeError("'NoneType' object has no attribute 'splitlines'")
        return write(conv, stream, **kwargs)

    monkeypatch.setattr(html, "write", failing)
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["export", "--all", "--to", "html", "--root", str(root), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "1 pages written, 0 unchanged, 1 failed" in result.output
    warning = next(line for line in result.output.splitlines() if "warning" in line)
    assert f"{SID}.jsonl" in warning and "internal error" in warning and "AttributeError" in warning
    index = (out / "index.html").read_text()
    assert f"claude_code/{OTHER}.html" in index and f"claude_code/{SID}.html" not in index


def test_hf_export_goes_on_past_a_session_it_cannot_read(tmp_path):
    pytest.importorskip("pyarrow")
    good = tmp_path / "good.jsonl"
    good.write_bytes(GOOD)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"type":{}}\n')
    out = tmp_path / "chat.parquet"
    result = CliRunner().invoke(main, ["export", "--to", "hf", str(bad), str(good), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "1 sessions written, 1 failed" in result.output and str(bad) in result.output
    import pyarrow.parquet as pq

    assert pq.read_table(out).num_rows == 1


# --- item 6: odd result shapes in changes and the Markdown export ------------------------


def _edit(structured: dict) -> bytes:
    use = _use("e1", "Edit", {"file_path": "/tmp/p/a.py", "old_string": "a", "new_string": "b"})
    return _claude(_user("edit"), _assistant(use), _result("e1", "edited", structured))


ODD_PATCHES = {
    "patch-a-number": {"filePath": "/tmp/p/a.py", "originalFile": "a\n", "structuredPatch": 5},
    "lines-a-number": {
        "filePath": "/tmp/p/a.py",
        "originalFile": "a\n",
        "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": 3}],
    },
}


@pytest.mark.parametrize("structured", ODD_PATCHES.values(), ids=ODD_PATCHES.keys())
@pytest.mark.parametrize("command", [["changes"], ["changes", "--json"], ["export", "--to", "markdown"]])
def test_changes_and_markdown_take_odd_patch_shapes(tmp_path, structured, command):
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(_edit(structured))
    result = CliRunner().invoke(main, [command[0], str(path), *command[1:]])
    assert result.exit_code == 0, result.output
    assert "a.py" in result.output


# --- item 7: Common JSON is decoded strictly, in one line naming the JSON path -----------


def test_common_json_that_does_not_fit_names_the_json_path(tmp_path):
    doc = {"version": "1.0", "meta": {}, "messages": [{"role": "user", "content": [{"type": "text", "text": {}}]}]}
    path = tmp_path / "c.json"
    path.write_bytes(json.dumps(doc).encode())
    with pytest.raises(InputError) as caught:
        api.convert(path, "codex", from_="common")
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and "$.messages[0].content[0].text" in message
    result = CliRunner().invoke(main, ["convert", str(path), "--from", "common", "--to", "codex", "-o", "-"])
    assert result.exit_code == 1 and "$.messages[0].content[0].text" in result.output, result.output


def test_common_json_nested_past_the_limit_is_one_line():
    deep = b'{"version":"1.0","meta":{"extra":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}}}"
    with pytest.raises(InputError, match="Common JSON"):
        api.convert(deep, "codex", from_="common")


# --- issue 34, item 16: each parallel result beside its call, no jargon ------------------


def _parallel() -> bytes:
    uses = [
        _use("r1", "Read", {"file_path": "/tmp/p/one.py"}),
        _use("r2", "Read", {"file_path": "/tmp/p/two.py"}),
        _use("b1", "Bash", {"command": "ls -la"}),
    ]
    return _claude(
        {**_user("read both"), "origin": {"kind": "human"}},
        _assistant(*uses),
        # completion order: the second read answers first
        _result("r2", "TWO"),
        _result("r1", "ONE"),
        _result("b1", "total 0"),
        _assistant({"type": "text", "text": "done"}, mid="msg_2"),
    )


def test_markdown_pairs_each_parallel_result_with_its_call():
    text = markdown.render(api.to_common(txcodec.load(_parallel(), "claude_code")))
    two = text.index("TWO")
    one = text.index("ONE")
    # each result says which call it answers, with the call's key input
    assert "`Read` `/tmp/p/two.py`" in text[:two][-200:], text
    assert "`Read` `/tmp/p/one.py`" in text[:one][-200:], text
    assert "`Bash` `ls -la`" in text[: text.index("total 0")][-200:], text


def test_markdown_says_no_jargon_and_no_note_per_shell_call():
    text = markdown.render(api.to_common(txcodec.load(_parallel(), "claude_code")))
    assert "origin human" not in text and "*(origin" not in text
    assert " result**" not in text  # "**Read result**", "**Exec_command result**"
    assert "files not recorded" not in text and "Change unknown" not in text
