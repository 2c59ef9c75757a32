"""Typed tools and their normalized kinds (seed 002 "Tool -> Kind Mapping"); a RawTool
keeps any input that does not fit, untouched."""

from __future__ import annotations

import pytest

from txcodec.common import ToolUse
from txcodec.tools import (
    Agent,
    Bash,
    Edit,
    MultiEdit,
    Patch,
    RawTool,
    Read,
    SlashCommand,
    TodoWrite,
    tool_kind,
    typed_tool,
)

# seed 002: "Edit, Write, NotebookEdit | modify_file", "Read | read_file", "Glob, Grep |
# code_search", "Bash | shell_exec", "WebFetch, WebSearch | http_request", "Task |
# subagent_task", "TaskCreate | create_task", "TaskUpdate, TaskList, TodoWrite |
# manage_todos", "(unknown) | generic"
KINDS = [
    ("Edit", "modify_file"), ("Write", "modify_file"), ("NotebookEdit", "modify_file"), ("MultiEdit", "modify_file"),
    ("Read", "read_file"), ("Glob", "code_search"), ("Grep", "code_search"), ("Bash", "shell_exec"),
    ("WebFetch", "http_request"), ("WebSearch", "http_request"), ("Task", "subagent_task"), ("Agent", "subagent_task"),
    ("TaskCreate", "create_task"), ("TaskUpdate", "manage_todos"), ("TaskList", "manage_todos"), ("TodoWrite", "manage_todos"),
    ("SlashCommand", "generic"), ("mcp__x__y", "generic"), ("", "generic"),
]


@pytest.mark.parametrize("name, kind", KINDS)
def test_kind(name, kind):
    assert tool_kind(name) == kind


TYPED = [
    ("Read", {"file_path": "/a", "offset": 3}, Read(file_path="/a", offset=3)),
    ("Edit", {"file_path": "/a", "old_string": "x", "new_string": "y"}, Edit(file_path="/a", old_string="x", new_string="y")),
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


@pytest.mark.parametrize("name, value", [
    ("Read", {"path": "/a"}),  # wrong field
    ("Bash", {"command": 3}),  # wrong type
    ("Bash", "ls"),  # not an object
    ("Bash", None),
    ("Unknown", {"a": [1, {"b": None}]}),
])
def test_raw_fallback_keeps_input_untouched(name, value):
    assert typed_tool(name, value) == RawTool(name=name, input=value)


def test_tool_use_gives_the_typed_view():
    block = ToolUse(id="t", name="Read", input={"file_path": "/x"}, kind="read_file")
    assert block.tool == Read(file_path="/x") and block.input == {"file_path": "/x"}
