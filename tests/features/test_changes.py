"""Workspace changes (docs/changes.md): one shape from every harness's recorded results,
checked against what the real client did to the files on disk."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from tests.conftest import CORPUS
from tests.conftest import GOLDEN
from txcodec import api
from txcodec.cli import main
from txcodec.export import markdown
from txcodec.kit.changes import conversation_changes
from txcodec.kit.changes import session_changes
from txcodec.kit.changes import to_json
from txcodec.model.changes import apply_hunks
from txcodec.model.changes import diff_hunks
from txcodec.model.changes import unified_diff
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Conversation
from txcodec.model.common import Hunk
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common_json import from_json

EDIT_GOLDEN = next((GOLDEN / "claude_code" / "edit_read_write").glob("*.jsonl"))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def conv(harness: str, *messages: Message, cwd: str = "/w") -> Conversation:
    return Conversation(meta=Meta(source_harness=harness, cwd=cwd), messages=list(messages))


def call(tool_id: str, name: str, input, result: ToolResult, **extra) -> list[Message]:
    return [Message("assistant", [ToolUse(tool_id, name, input)]), Message("user", [result], extra=extra)]


# --- Claude Code ----------------------------------------------------------------------


def test_claude_edit_and_write_from_the_runtime_patch():
    session = api.load(EDIT_GOLDEN)
    changes = conversation_changes(api.to_common(session))
    assert [(c.tool, c.operation, c.path, c.basis, c.captured_by) for c in changes] == [
        ("Edit", "modify", "orders/handler.py", "runtime_reported", "claude_code"),
        ("Write", "create", "CHANGELOG.md", "runtime_reported", "claude_code"),
    ]
    edit, write = changes
    raw = [json.loads(line) for line in EDIT_GOLDEN.read_text().splitlines()]
    result = next(
        r["toolUseResult"]
        for r in raw
        if isinstance(r.get("toolUseResult"), dict) and "oldString" in r["toolUseResult"]
    )
    assert edit.before_sha256 == sha(result["originalFile"])
    after = result["originalFile"].replace(result["oldString"], result["newString"])
    assert edit.after_sha256 == sha(after)  # the patch applied to the original is the tool's own edit
    assert [h.lines for h in edit.hunks] == [h["lines"] for h in result["structuredPatch"]]
    # Write wrote an empty structuredPatch: the hunks come from the two versions
    assert write.before_sha256 is None and write.hunks == [Hunk(["+- Guard empty carts"], 0, 0, 1, 1)]


def test_common_json_carries_changes_next_to_messages_and_conversion_does_not():
    c = api.to_common(api.load(EDIT_GOLDEN))
    data = json.loads(to_json(c))
    assert list(data)[:4] == ["version", "meta", "messages", "changes"]
    ids = {b["id"] for m in data["messages"] for b in m["content"] if b["type"] == "tool_use"}
    assert {x["tool_use_id"] for x in data["changes"]} <= ids  # joined to tool calls by id
    assert from_json(to_json(c)).derived_changes is msgspec.UNSET  # derived again, never trusted
    for target in ("claude_code", "codex", "pi"):
        written, _ = api.convert(EDIT_GOLDEN, target)
        assert all(b"captured_by" not in body and b"runtime_reported" not in body for body in written.files.values())
    # the raw result rides along unchanged: a Claude -> Claude conversion keeps toolUseResult
    written, _ = api.convert(EDIT_GOLDEN, "claude_code")
    assert b'"structuredPatch"' in written.files[written.main]


def test_a_subagent_edit_has_no_patch_and_says_so():
    child = conv(
        "claude_code",
        *call("t1", "Edit", {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}, ToolResult("t1", "ok")),
    )
    parent = conv("claude_code", Message("user", [Text("go")]))
    parent.children.append(Child(ChildLink("meta.toolUseId", agent_id="a0123456789abcdef"), child))
    [change] = conversation_changes(parent)
    assert (change.operation, change.path, change.basis, change.agent_id) == (
        "modify",
        "a.py",
        "unknown",
        "a0123456789abcdef",
    )
    assert "no patch" in change.note and change.hunks == []
    assert conversation_changes(parent, subagents=False) == []


def test_shell_is_unknown_and_a_failed_edit_is_nothing():
    c = conv(
        "claude_code",
        *call("t1", "Bash", {"command": "sed -i s/a/b/ x"}, ToolResult("t1", "", is_error=False)),
        *call(
            "t2",
            "Edit",
            {"file_path": "/w/a"},
            ToolResult("t2", "Error: no match", is_error=True, structured="Error: no match"),
        ),
    )
    [shell] = conversation_changes(c)
    assert (shell.tool_use_id, shell.operation, shell.basis) == ("t1", "unknown", "unknown")
    assert shell.path is msgspec.UNSET and shell.hunks == []


def test_notebook_edit_hunks_are_computed_from_both_versions():
    before, after = '{"cells": [1]}\n', '{"cells": [2]}\n'
    structured = {"notebook_path": "/w/n.ipynb", "original_file": before, "updated_file": after, "new_source": "2"}
    [c] = conversation_changes(
        conv("claude_code", *call("t", "NotebookEdit", {}, ToolResult("t", "ok", structured=structured)))
    )
    assert (c.before_sha256, c.after_sha256, c.basis) == (sha(before), sha(after), "runtime_reported")
    assert c.hunks[0].lines == ['-{"cells": [1]}', '+{"cells": [2]}']


def test_a_patch_that_does_not_fit_its_original_leaves_the_after_hash_unknown():
    structured = {
        "filePath": "/w/a",
        "originalFile": "x\n",
        "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-y", "+z"]}],
    }
    [c] = conversation_changes(
        conv("claude_code", *call("t", "Edit", {}, ToolResult("t", "ok", structured=structured)))
    )
    assert c.before_sha256 == sha("x\n") and c.after_sha256 is msgspec.UNSET
    assert c.hunks == [Hunk(["-y", "+z"], 1, 1, 1, 1)]  # the runtime's own, not a computed deletion


def test_apply_and_diff_hunks_round_trip():
    a, b = "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n"
    assert apply_hunks(a, diff_hunks(a, b)) == b


# --- Codex ----------------------------------------------------------------------------


def test_codex_apply_patch_derived_from_the_patch_and_its_success():
    session = api.load(GOLDEN / "codex" / "hand_built" / "rollout.jsonl")
    changes = session_changes(session, api.to_common(session))
    shell, patch = changes
    assert (shell.tool, shell.operation) == ("exec_command", "unknown")
    assert (patch.tool, patch.operation, patch.path, patch.basis) == ("apply_patch", "modify", "hello.py", "derived")
    assert unified_diff(patch).endswith("@@\n-print('helo')\n+print('hello')")


def test_codex_failed_patch_changed_nothing():
    patch = "*** Begin Patch\n*** Add File: n.txt\n+hi\n*** End Patch"
    ok = conv(
        "codex", *call("c1", "apply_patch", patch, ToolResult("c1", "Success. Updated the following files:\nA n.txt\n"))
    )
    [c] = conversation_changes(ok)
    assert (c.operation, c.path, c.before_sha256, c.after_sha256) == ("create", "n.txt", None, sha("hi\n"))
    failed = conv("codex", *call("c1", "apply_patch", patch, ToolResult("c1", "apply_patch verification failed: ...")))
    assert conversation_changes(failed) == []


def test_codex_patch_apply_end_is_the_runtime_account():
    path = CORPUS / "codex" / "agent-sessions" / "stage0" / "codex" / "small.jsonl"
    if not path.exists():
        pytest.skip("the public corpus is not beside this checkout")
    session = api.load(path)
    changes = session_changes(session, api.to_common(session))
    [patch] = [c for c in changes if c.tool == "apply_patch"]
    assert (patch.tool_use_id, patch.operation, patch.basis, patch.path) == (
        "call-6",
        "modify",
        "runtime_reported",
        "a.txt",
    )


def test_codex_a_failed_patch_apply_end_event_drops_the_derived_change(tmp_path):
    lines = [
        {
            "type": "session_meta",
            "payload": {"id": "01990000-0000-7000-8000-00000000000a", "cwd": "/w", "cli_version": "0.171.0"},
        },
        {
            "type": "response_item",
            "payload": {
                "type": "custom_tool_call",
                "call_id": "c1",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch",
            },
        },
        {"type": "event_msg", "payload": {"type": "patch_apply_end", "call_id": "c1", "success": False, "changes": {}}},
        {
            "type": "response_item",
            "payload": {
                "type": "custom_tool_call_output",
                "call_id": "c1",
                "output": "Success. Updated the following files:\nM a\n",
            },
        },
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    session = api.load(path)
    assert len(conversation_changes(api.to_common(session))) == 1  # from Common alone: the output said Success
    assert session_changes(session, api.to_common(session)) == []  # the runtime says it failed


# --- Gemini CLI, Qwen Code, pi ---------------------------------------------------------

# resultDisplay of Gemini CLI's edit and write_file tools (the FileDiff object in the
# bundled client: fileDiff, fileName, filePath, originalContent, newContent, diffStat,
# isNewFile); Qwen Code writes the same object into its toolCallResult record.
DISPLAY = {
    "fileDiff": "Index: a.py\n===\n--- a.py\tCurrent\n+++ a.py\tProposed\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n",
    "fileName": "a.py",
    "filePath": "/w/a.py",
    "originalContent": "x = 1\n",
    "newContent": "x = 2\n",
    "diffStat": {},
    "isNewFile": False,
}


def test_gemini_and_qwen_edit_from_the_result_display():
    gem = conv("gemini_cli", *call("g1", "replace", {}, ToolResult("g1", "ok", structured=DISPLAY)))
    qwen = conv(
        "qwen_code",
        *call("q1", "edit", {}, ToolResult("q1", "ok"), toolCallResult={"callId": "q1", "resultDisplay": DISPLAY}),
    )
    for c in (gem, qwen):
        [change] = conversation_changes(c)
        assert (change.operation, change.path, change.basis) == ("modify", "a.py", "runtime_reported")
        assert (change.before_sha256, change.after_sha256) == (sha("x = 1\n"), sha("x = 2\n"))
        assert change.hunks == [Hunk(["-x = 1", "+x = 2"], 1, 1, 1, 1)]


def test_pi_edit_diff_and_write_content():
    # pi's edit result details: {diff, firstChangedLine} (pi-coding-agent tools/edit.js)
    details = {"e1": {"diff": " 1 a\n-2 b\n+2 B\n 3 c", "firstChangedLine": 2}}
    c = conv(
        "pi",
        *call("e1", "edit", {"path": "/w/f"}, ToolResult("e1", "ok"), details=details),
        *call("w1", "write", {"path": "/w/g", "content": "new\n"}, ToolResult("w1", "ok")),
    )
    edit, write = conversation_changes(c)
    assert (edit.operation, edit.path, edit.basis, edit.hunks[0].lines) == (
        "modify",
        "f",
        "runtime_reported",
        [" a", "-b", "+B", " c"],
    )
    assert (write.operation, write.basis, write.after_sha256, write.before_sha256) == (
        "write",
        "derived",
        sha("new\n"),
        msgspec.UNSET,
    )


# --- surfaces ---------------------------------------------------------------------------


def test_cli_changes_and_markdown_show_the_diff():
    out = CliRunner().invoke(main, ["changes", str(EDIT_GOLDEN)])
    assert out.exit_code == 0, out.output
    assert "Edit: modify orders/handler.py (runtime_reported, claude_code)" in out.output
    assert "+    if not cart.items:" in out.output
    js = CliRunner().invoke(main, ["changes", str(EDIT_GOLDEN), "--json"])
    assert [x["operation"] for x in json.loads(js.output)] == ["modify", "create"]
    md = markdown.render(api.to_common(api.load(EDIT_GOLDEN)))
    assert "```diff\n--- a/orders/handler.py\n+++ b/orders/handler.py\n@@ -1,2 +1,4 @@" in md


# --- the real client ----------------------------------------------------------------------


@pytest.mark.real_client
def test_real_claude_changes_match_the_files_on_disk():
    """The real claude edits, creates, overwrites, edits a notebook and runs a shell
    command; each derived change's hashes equal the files before and after."""
    from txcodec.resume_check.claude_code import munge_cwd
    from txcodec.resume_check.claude_code import run_claude
    from txcodec.resume_check.mock.anthropic import AnthropicMock
    from txcodec.resume_check.mock.anthropic import text
    from txcodec.resume_check.mock.anthropic import tool_use
    from txcodec.resume_check.mock.anthropic import tool_uses
    from txcodec.resume_check.mock.server import MockServer
    from txcodec.resume_check.report import find_client

    if find_client("claude") is None:
        pytest.fail("claude is not installed (npm install --prefix clients)")
    with tempfile.TemporaryDirectory(prefix="txcodec-changes-") as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        nb = {
            "cells": [
                {
                    "cell_type": "code",
                    "id": "c1",
                    "metadata": {},
                    "source": ["x = 1"],
                    "outputs": [],
                    "execution_count": None,
                }
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        originals = {"a.txt": "one\ntwo\n", "b.txt": "old\n", "n.ipynb": json.dumps(nb, indent=1) + "\n"}
        for name, body in originals.items():
            (work / name).write_text(body)
        script = [
            tool_uses(*((f"toolu_r{i}", "Read", {"file_path": str(work / n)}) for i, n in enumerate(originals))),
            tool_use(
                "Edit", {"file_path": str(work / "a.txt"), "old_string": "two", "new_string": "TWO"}, "toolu_edit"
            ),
            tool_use("Write", {"file_path": str(work / "new.txt"), "content": "fresh\n"}, "toolu_create"),
            tool_use("Write", {"file_path": str(work / "b.txt"), "content": "replaced\n"}, "toolu_over"),
            tool_use(
                "NotebookEdit",
                {"notebook_path": str(work / "n.ipynb"), "cell_id": "c1", "new_source": "x = 2"},
                "toolu_nb",
            ),
            tool_use("Bash", {"command": "echo hi > c.txt"}, "toolu_sh"),
            text("done"),
        ]
        with MockServer(AnthropicMock(script, strict=False)) as server:
            run = run_claude(["-p", "change the files"], work, home, server, timeout=180)
        assert run.exit_code == 0, run.stdout + run.stderr
        [path] = (home / ".claude" / "projects" / munge_cwd(str(work))).glob("*.jsonl")
        changes = {c.tool_use_id: c for c in conversation_changes(api.to_common(api.load(path)))}
        final = {name: (work / name).read_text() for name in ("a.txt", "b.txt", "n.ipynb", "new.txt")}
    assert set(changes) == {"toolu_edit", "toolu_create", "toolu_over", "toolu_nb", "toolu_sh"}
    expect = {
        "toolu_edit": ("a.txt", "modify"),
        "toolu_create": ("new.txt", "create"),
        "toolu_over": ("b.txt", "modify"),
        "toolu_nb": ("n.ipynb", "modify"),
    }
    for tid, (name, op) in expect.items():
        c = changes[tid]
        assert (c.path, c.operation, c.basis) == (name, op, "runtime_reported"), tid
        assert c.before_sha256 == (sha(originals[name]) if name in originals else None), tid
        assert c.after_sha256 == sha(final[name]), tid
        assert c.hunks, tid
    assert (changes["toolu_sh"].operation, changes["toolu_sh"].basis) == ("unknown", "unknown")


def _check_against_disk(changes, originals: dict[str, str], final: dict[str, str], ids: dict[str, tuple[str, str]]):
    """Each expected call's change names its file and operation, and the hashes it
    records are those of the files before and after."""
    by_id = {c.tool_use_id: c for c in changes}
    for tid, (name, op) in ids.items():
        c = by_id[tid]
        assert (c.path, c.operation) == (name, op), (tid, c)
        if c.before_sha256 is not msgspec.UNSET:
            assert c.before_sha256 == (sha(originals[name]) if name in originals else None), tid
        if c.after_sha256 is not msgspec.UNSET:
            assert c.after_sha256 == sha(final[name]), tid
        assert c.hunks, tid


@pytest.mark.real_client
def test_real_gemini_edit_and_write_match_the_files_on_disk(tmp_path):
    from txcodec.resume_check import gemini_cli as g

    with g.Sandbox(root=tmp_path / "box") as box:
        (box.cwd / "a.txt").write_text("one\ntwo\n")
        run = box.run(
            "change the files",
            script=[
                g.call(
                    "replace",
                    {
                        "file_path": str(box.cwd / "a.txt"),
                        "old_string": "two",
                        "new_string": "TWO",
                        "instruction": "capitalise",
                    },
                ),
                g.call("write_file", {"file_path": str(box.cwd / "new.txt"), "content": "fresh\n"}),
                g.text("done"),
            ],
            timeout=180,
        )
        assert run.exit_code == 0, run.stderr[-2000:]
        [path] = [p for p in run.sessions() if "write_file" in p.read_text()]
        conv = api.to_common(api.load(path))
        final = {n: (box.cwd / n).read_text() for n in ("a.txt", "new.txt")}
    calls = {b.name: b.id for m in conv.messages for b in m.content if isinstance(b, ToolUse)}
    changes = conversation_changes(conv)
    assert {c.basis for c in changes} == {"runtime_reported"}
    _check_against_disk(
        changes,
        {"a.txt": "one\ntwo\n"},
        final,
        {calls["replace"]: ("a.txt", "modify"), calls["write_file"]: ("new.txt", "create")},
    )
    assert all(c.before_sha256 is not msgspec.UNSET and c.after_sha256 is not msgspec.UNSET for c in changes)


@pytest.mark.real_client
def test_real_qwen_and_pi_edits_match_the_files_on_disk():
    from txcodec.resume_check import pi as pi_client
    from txcodec.resume_check import qwen_code as qwen_client
    from txcodec.resume_check.mock.openai_chat import text
    from txcodec.resume_check.mock.openai_chat import tool_call

    with qwen_client.Qwen() as box:
        (box.cwd / "a.txt").write_text("one\ntwo\n")
        run = box.qwen(
            "change the files",
            [
                tool_call("read_file", {"file_path": str(box.cwd / "a.txt")}, "call_r"),
                tool_call(
                    "edit", {"file_path": str(box.cwd / "a.txt"), "old_string": "two", "new_string": "TWO"}, "call_e"
                ),
                tool_call("write_file", {"file_path": str(box.cwd / "new.txt"), "content": "fresh\n"}, "call_w"),
                text("done"),
            ],
            timeout=180,
        )
        assert run.exit_code == 0, run.stderr[-2000:]
        [path] = box.sessions()
        qwen = conversation_changes(api.to_common(api.load(path)))
        final = {n: (box.cwd / n).read_text() for n in ("a.txt", "new.txt")}
    # Qwen Code records no isNewFile: a new file's original is "", like an empty file's
    _check_against_disk(
        qwen, {"a.txt": "one\ntwo\n"}, final, {"call_e": ("a.txt", "modify"), "call_w": ("new.txt", "write")}
    )
    assert {c.basis for c in qwen} == {"runtime_reported"}

    with pi_client.Pi() as box:
        (box.cwd / "a.txt").write_text("one\ntwo\nthree\n")
        run = box.pi(
            "change the files",
            [
                tool_call("edit", {"path": "a.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}, "call_e"),
                tool_call("write", {"path": "new.txt", "content": "fresh\n"}, "call_w"),
                text("done"),
            ],
            timeout=180,
        )
        assert run.exit_code == 0, run.stderr[-2000:]
        [path] = box.sessions()
        pi = conversation_changes(api.to_common(api.load(path)))
        final = {n: (box.cwd / n).read_text() for n in ("a.txt", "new.txt")}
    _check_against_disk(
        pi, {"a.txt": "one\ntwo\nthree\n"}, final, {"call_e": ("a.txt", "modify"), "call_w": ("new.txt", "write")}
    )
    edit = next(c for c in pi if c.tool_use_id == "call_e")
    assert [line for h in edit.hunks for line in h.lines if line[:1] in "+-"] == ["-two", "+TWO"]
