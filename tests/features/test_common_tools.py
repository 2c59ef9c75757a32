"""Typed tools and their normalized kinds (docs/common.md#tool-kinds); a RawTool
keeps any input that does not fit, untouched."""

from __future__ import annotations

import pytest

from txcodec.kit import registry
from txcodec.model.common import ToolUse
from txcodec.model.tools import Agent
from txcodec.model.tools import Bash
from txcodec.model.tools import Edit
from txcodec.model.tools import MultiEdit
from txcodec.model.tools import Patch
from txcodec.model.tools import RawTool
from txcodec.model.tools import Read
from txcodec.model.tools import SlashCommand
from txcodec.model.tools import TodoWrite
from txcodec.model.tools import tool_kind
from txcodec.model.tools import typed_tool

# the kinds table of docs/common.md#tool-kinds
KINDS = [
    ("Edit", "modify_file"),
    ("Write", "modify_file"),
    ("NotebookEdit", "modify_file"),
    ("MultiEdit", "modify_file"),
    ("Read", "read_file"),
    ("Glob", "code_search"),
    ("Grep", "code_search"),
    ("Bash", "shell_exec"),
    ("WebFetch", "http_request"),
    ("WebSearch", "http_request"),
    ("Task", "subagent_task"),
    ("Agent", "subagent_task"),
    ("TaskCreate", "create_task"),
    ("TaskUpdate", "manage_todos"),
    ("TaskList", "manage_todos"),
    ("TodoWrite", "manage_todos"),
    ("SlashCommand", "generic"),
    ("mcp__x__y", "generic"),
    ("", "generic"),
]


@pytest.mark.parametrize("name, kind", KINDS)
def test_kind(name, kind):
    assert tool_kind(name) == kind


TYPED = [
    ("Read", {"file_path": "/a", "offset": 3}, Read(file_path="/a", offset=3)),
    (
        "Edit",
        {"file_path": "/a", "old_string": "x", "new_string": "y"},
        Edit(file_path="/a", old_string="x", new_string="y"),
    ),
    ("MultiEdit", {"file_path": "/a", "edits": [{"old_string": "x", "new_string": "y"}]}, None),
    ("Bash", {"command": "ls", "description": "list"}, Bash(command="ls", description="list")),
    ("Task", {"prompt": "p", "subagent_type": "Explore"}, Agent(prompt="p", subagent_type="Explore")),
    ("TodoWrite", {"todos": [{"content": "c", "status": "pending", "activeForm": "doing c"}]}, None),
    ("SlashCommand", {"command": "/model"}, SlashCommand(command="/model")),
    ("apply_patch", "*** Begin Patch", Patch(patch="*** Begin Patch")),
]


@pytest.mark.parametrize("name, value, expected", TYPED)
def test_typed(name, value, expected):
    tool = typed_tool(name, value)
    assert not isinstance(tool, RawTool)
    if expected is not None:
        assert tool == expected
    if name == "MultiEdit":
        assert isinstance(tool, MultiEdit) and tool.edits[0].new_string == "y"
    if name == "TodoWrite":
        assert isinstance(tool, TodoWrite) and tool.todos[0].active_form == "doing c"


@pytest.mark.parametrize(
    "name, value",
    [
        ("Read", {"path": "/a"}),  # wrong field
        ("Bash", {"command": 3}),  # wrong type
        ("Bash", "ls"),  # not an object
        ("Bash", None),
        ("Unknown", {"a": [1, {"b": None}]}),
    ],
)
def test_raw_fallback_keeps_input_untouched(name, value):
    assert typed_tool(name, value) == RawTool(name=name, input=value)


def test_tool_use_gives_the_typed_view():
    block = ToolUse(id="t", name="Read", input={"file_path": "/x"}, kind="read_file")
    assert block.tool == Read(file_path="/x") and block.input == {"file_path": "/x"}


# --- the tools of the harnesses of issue 18, each kind only for its own harness ----------
# each name as the pinned client defines it (its harness's __init__.py says where: Harness.tool_kinds) and, where a
# golden session holds it, as that session calls it
HARNESS_KINDS = [
    ("kimi_cli", "Shell", "shell_exec"),
    ("kimi_cli", "ReadFile", "read_file"),
    ("kimi_cli", "StrReplaceFile", "modify_file"),
    ("kimi_cli", "SetTodoList", "manage_todos"),
    ("kimi_cli", "Grep", "code_search"),
    ("kimi_cli", "Agent", "subagent_task"),
    ("mistral_vibe", "bash", "shell_exec"),
    ("mistral_vibe", "edit", "modify_file"),
    ("mistral_vibe", "grep", "code_search"),
    ("mistral_vibe", "task", "subagent_task"),
    ("mistral_vibe", "web_fetch", "http_request"),
    ("cline", "run_commands", "shell_exec"),
    ("cline", "read_files", "read_file"),
    ("cline", "editor", "modify_file"),
    ("cline", "search_codebase", "code_search"),
    ("cline", "fetch_web_content", "http_request"),
    ("openhands", "terminal", "shell_exec"),
    ("openhands", "file_editor", "modify_file"),
    ("openhands", "task_tracker", "manage_todos"),
    ("openhands", "task", "subagent_task"),
    ("openhands", "finish", "generic"),
    ("droid", "Execute", "shell_exec"),
    ("droid", "Create", "modify_file"),
    ("droid", "Read", "read_file"),
    ("droid", "Edit", "modify_file"),
]


@pytest.mark.parametrize("harness, name, kind", HARNESS_KINDS)
def test_harness_kind(harness, name, kind):
    assert tool_kind(name, registry.get(harness).tool_kinds) == kind


def test_a_harness_name_keeps_its_meaning_elsewhere():
    # Vibe's ``edit`` and OpenHands' ``task`` are theirs: pi's ``edit`` and an unknown ``task`` are not
    assert tool_kind("edit", registry.get("pi").tool_kinds) == tool_kind("edit") == "generic"
    assert tool_kind("task") == "generic" and tool_kind("terminal", registry.get("kimi_cli").tool_kinds) == "generic"


GOLDEN_CALLS = [  # (harness, golden case, the call's tool name, its kind)
    ("kimi_cli", "tool_call_resumed", "Shell", "shell_exec"),
    ("mistral_vibe", "unified_resumed", "bash", "shell_exec"),
    ("cline", "tool_call_resumed", "run_commands", "shell_exec"),
    ("cline", "tool_call_resumed", "read_files", "read_file"),
    ("openhands", "tool_call_resumed", "terminal", "shell_exec"),
    ("droid", "tool_call_resumed", "Execute", "shell_exec"),
    ("droid", "tool_call_resumed", "Read", "read_file"),
]


@pytest.mark.parametrize("harness, case, name, kind", GOLDEN_CALLS)
def test_golden_calls_get_their_kind_and_show_in_changes_and_pages(harness, case, name, kind):
    from support.paths import GOLDEN

    from txcodec import api
    from txcodec.export import html
    from txcodec.kit.changes import conversation_changes

    folder = GOLDEN / harness / case
    session = {
        "kimi_cli": folder / "context.jsonl",
        "mistral_vibe": folder,
        "openhands": next(folder.glob("*/events"), folder).parent,
    }.get(harness) or next(
        p for p in folder.iterdir() if p.name.endswith((".messages.json", ".jsonl")) and p.name != "written.jsonl"
    )
    c = api.to_common(api.load(session, harness))
    calls = [b for m in c.messages for b in m.content if isinstance(b, ToolUse) and b.name == name]
    assert calls and all(b.kind == kind for b in calls)
    shells = [b.id for m in c.messages for b in m.content if isinstance(b, ToolUse) and b.kind == "shell_exec"]
    # a shell call names no file it changed: one ``unknown`` change each, as for Claude's Bash
    assert [ch.tool_use_id for ch in conversation_changes(c) if ch.operation == "unknown"] == shells
    assert all(html.tool_kind(b) == kind for b in calls)  # the label the page gives the call
