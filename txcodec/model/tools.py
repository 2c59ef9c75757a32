"""Typed tools: the known Claude Code tool inputs, each with a normalized kind.

The kinds follow docs/common.md#tool-kinds (read_file, modify_file, shell_exec,
code_search, http_request, subagent_task, manage_todos, generic). A call whose input does
not fit its tool's struct (or whose tool is unknown) is :class:`RawTool`, which keeps
the input untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import ClassVar

import msgspec
from msgspec import UNSET
from msgspec import UnsetType


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


def tool_kind(name: str, own_kinds: Mapping[str, str] | None = None) -> str:
    """The normalized kind of a tool. ``own_kinds`` is the harness's own table
    (``Harness.tool_kinds``), for the tools whose names mean something else elsewhere
    (Vibe's ``edit`` is not pi's, OpenHands' ``task`` is a subagent): its reader passes it."""
    if not isinstance(name, str):  # a name of another shape is no tool we know
        return "generic"
    own = own_kinds.get(name) if own_kinds else None
    if own is not None:
        return own
    cls = TOOLS.get(name)
    if cls is not None:
        return cls.kind
    return EXTRA_KINDS.get(name, "generic")
