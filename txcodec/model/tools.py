"""Typed tools: the known Claude Code tool inputs, each with a normalized kind.

The kinds follow docs/common.md#tool-kinds (read_file, modify_file, shell_exec,
code_search, http_request, subagent_task, manage_todos, generic). A call whose input does
not fit its tool's struct (or whose tool is unknown) is :class:`RawTool`, which keeps
the input untouched.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
from msgspec import UNSET, UnsetType


class _Tool(msgspec.Struct, omit_defaults=True):
    kind: ClassVar[str] = "generic"


class Read(_Tool):
    """Read a file (``offset``/``limit`` in lines)."""

    kind: ClassVar[str] = "read_file"
    file_path: str
    offset: int | UnsetType = UNSET
    limit: int | UnsetType = UNSET


class Write(_Tool):
    """Write a whole file."""

    kind: ClassVar[str] = "modify_file"
    file_path: str
    content: str


class Edit(_Tool):
    """Replace ``old_string`` by ``new_string`` in a file (every occurrence with ``replace_all``)."""

    kind: ClassVar[str] = "modify_file"
    file_path: str
    old_string: str
    new_string: str
    replace_all: bool | UnsetType = UNSET


class EditOp(msgspec.Struct, omit_defaults=True):
    """One replacement of a :class:`MultiEdit`."""

    old_string: str
    new_string: str
    replace_all: bool | UnsetType = UNSET


class MultiEdit(_Tool):
    """Several replacements in one file, in order."""

    kind: ClassVar[str] = "modify_file"
    file_path: str
    edits: list[EditOp]


class NotebookEdit(_Tool):
    """Change one cell of a Jupyter notebook."""

    kind: ClassVar[str] = "modify_file"
    notebook_path: str
    new_source: str = ""
    cell_id: str | UnsetType = UNSET
    edit_mode: str | UnsetType = UNSET


class Patch(_Tool):
    """A freeform patch (Codex ``apply_patch``)."""

    kind: ClassVar[str] = "modify_file"
    patch: str


class Bash(_Tool):
    """Run a shell command."""

    kind: ClassVar[str] = "shell_exec"
    command: str
    description: str | UnsetType = UNSET
    timeout: int | UnsetType = UNSET
    run_in_background: bool | UnsetType = UNSET


class Glob(_Tool):
    """Find files by name pattern."""

    kind: ClassVar[str] = "code_search"
    pattern: str
    path: str | UnsetType = UNSET


class Grep(_Tool):
    """Search file contents."""

    kind: ClassVar[str] = "code_search"
    pattern: str
    path: str | UnsetType = UNSET
    glob: str | UnsetType = UNSET


class WebFetch(_Tool):
    """Fetch a URL (and ask ``prompt`` of it)."""

    kind: ClassVar[str] = "http_request"
    url: str
    prompt: str | UnsetType = UNSET


class WebSearch(_Tool):
    """Search the web."""

    kind: ClassVar[str] = "http_request"
    query: str


class Agent(_Tool):
    """Start a subagent with ``prompt``."""

    kind: ClassVar[str] = "subagent_task"
    prompt: str
    description: str | UnsetType = UNSET
    subagent_type: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    run_in_background: bool | UnsetType = UNSET


class Todo(msgspec.Struct, omit_defaults=True):
    """One item of a todo list."""

    content: str
    status: str
    id: str | UnsetType = UNSET
    active_form: str | UnsetType = msgspec.field(default=UNSET, name="activeForm")


class TodoWrite(_Tool):
    """Replace the todo list."""

    kind: ClassVar[str] = "manage_todos"
    todos: list[Todo]


class SlashCommand(_Tool):
    """Run a slash command."""

    kind: ClassVar[str] = "generic"
    command: str


class RawTool(_Tool):
    """An unknown tool, or a known one whose input does not fit: input untouched."""

    name: str
    input: Any = None


TOOLS: dict[str, type[_Tool]] = {
    "Read": Read,
    "Write": Write,
    "Edit": Edit,
    "MultiEdit": MultiEdit,
    "NotebookEdit": NotebookEdit,
    "Bash": Bash,
    "Glob": Glob,
    "Grep": Grep,
    "WebFetch": WebFetch,
    "WebSearch": WebSearch,
    "Agent": Agent,
    "Task": Agent,
    "TodoWrite": TodoWrite,
    "SlashCommand": SlashCommand,
    "apply_patch": Patch,
}

# Tools whose kind is known although their input is not typed here.
EXTRA_KINDS: dict[str, str] = {
    "TaskCreate": "create_task",
    "TaskUpdate": "manage_todos",
    "TaskList": "manage_todos",
    "exec_command": "shell_exec",
    "shell": "shell_exec",
    "local_shell": "shell_exec",
    "web_search": "http_request",
    "update_plan": "manage_todos",
}


# The tools of the harnesses whose names mean something else elsewhere (Vibe's ``edit`` is
# not pi's, OpenHands' ``task`` is a subagent): the readers of these harnesses pass their
# name. Each name as the client defines it, in the pinned version: Kimi CLI 1.51.0
# (``kimi_cli/tools``), Mistral Vibe 3.0.2 (``vibe/core/tools/builtins``: the class name in
# snake case), cline 3.0.65 (``@cline/core``), OpenHands SDK 1.21.0 (``openhands/tools``:
# the class name in snake case without ``_tool``), droid 0.225.2 (the tools its first request
# offered). Names the table above already knows (droid's ``Read``, Kimi's ``Grep``) keep their kind.
HARNESS_KINDS: dict[str, dict[str, str]] = {
    "kimi_cli": {
        "Shell": "shell_exec", "ReadFile": "read_file", "ReadMediaFile": "read_file", "WriteFile": "modify_file",
        "StrReplaceFile": "modify_file", "SearchWeb": "http_request", "FetchURL": "http_request",
        "SetTodoList": "manage_todos",
    },
    "mistral_vibe": {
        "bash": "shell_exec", "read_file": "read_file", "write_file": "modify_file", "edit": "modify_file",
        "grep": "code_search", "todo": "manage_todos", "task": "subagent_task", "web_fetch": "http_request",
        "web_search": "http_request",
    },
    "cline": {
        "run_commands": "shell_exec", "read_files": "read_file", "editor": "modify_file", "apply_patch": "modify_file",
        "search_codebase": "code_search", "fetch_web_content": "http_request", "spawn_agent": "subagent_task",
    },
    "openhands": {
        "terminal": "shell_exec", "file_editor": "modify_file", "planning_file_editor": "modify_file",
        "apply_patch": "modify_file", "edit": "modify_file", "write_file": "modify_file", "read_file": "read_file",
        "glob": "code_search", "grep": "code_search", "task_tracker": "manage_todos", "task": "subagent_task",
        "delegate": "subagent_task",
    },
    "droid": {"Execute": "shell_exec", "Create": "modify_file"},
}


def typed_tool(name: str, input: Any) -> _Tool:
    if name == "apply_patch" and isinstance(input, str):
        return Patch(patch=input)
    cls = TOOLS.get(name) if isinstance(name, str) else None
    if cls is not None and isinstance(input, dict):
        try:
            return msgspec.convert(input, cls)
        except msgspec.ValidationError:
            pass
    return RawTool(name=name, input=input)


def tool_kind(name: str, harness: str | None = None) -> str:
    """The normalized kind of a tool; ``harness`` for a name only that harness's table knows."""
    if not isinstance(name, str):  # a name of another shape is no tool we know
        return "generic"
    own = HARNESS_KINDS.get(harness, {}).get(name) if harness else None
    if own is not None:
        return own
    cls = TOOLS.get(name)
    if cls is not None:
        return cls.kind
    return EXTRA_KINDS.get(name, "generic")
