"""Short one-line views of blocks, shared by the renderers."""

from __future__ import annotations

import re

import msgspec
from msgspec import UNSET

from ..model.common import Artifact
from ..model.common import Child
from ..model.common import Command
from ..model.common import Context
from ..model.common import Conversation
from ..model.common import Document
from ..model.common import Image
from ..model.common import RawBlock
from ..model.common import RedactedThinking
from ..model.common import ServerToolUse
from ..model.common import Text
from ..model.common import Thinking
from ..model.common import ToolResult
from ..model.common import ToolUse
from ..model.common import WebFetchToolResult
from ..model.common import WebSearchToolResult

# every C0 control but LF and TAB, DEL, and the C1 controls (U+0080-U+009F, which some
# terminals take as ESC + a letter): what starts an escape sequence or moves the cursor
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _caret(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return "M-^" + chr(code - 0x80 + 0x40)


def safe_text(text: str) -> str:
    """``text`` with its control characters made visible as ``cat -v`` shows them (ESC as
    ``^[``, CR as ``^M``): session text cannot set the window title, make a link, clear
    the screen or move the cursor of the terminal it is shown in. LF and TAB stay."""
    return _CONTROL.sub(_caret, text)


def compact_json(value) -> str:
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return repr(value)


def result_text(block: ToolResult) -> str:
    if isinstance(block.content, str):
        return block.content
    return "\n".join(b.text if type(b) is Text else f"[{type(b).__name__.lower()}]" for b in block.content)


def status(block: ToolResult) -> str:
    return {True: "error", False: "ok", None: "outcome unknown"}[block.is_error]


def command_line(block: Command) -> str:
    args = f" {block.args}" if isinstance(block.args, str) and block.args else ""
    return f"{block.name}{args}"


def tool_names(conv: Conversation) -> dict[str, str]:
    """tool_use id -> tool name, so a result can say which tool it answers."""
    return {b.id: b.name for m in conv.messages for b in m.content if type(b) is ToolUse}


def children_by_call(conv: Conversation) -> tuple[dict[str, list[Child]], list[Child]]:
    """Children keyed by the tool call that spawned them (when that call is in ``conv``),
    and the rest (no recorded call, or a call in another file)."""
    calls = tool_names(conv)
    by_call: dict[str, list[Child]] = {}
    rest: list[Child] = []
    for child in conv.children:
        tid = child.link.tool_use_id
        if isinstance(tid, str) and tid in calls:
            by_call.setdefault(tid, []).append(child)
        else:
            rest.append(child)
    return by_call, rest


def child_title(child: Child, call: ToolUse | None = None) -> str:
    """``subagent a1b2 (Explore): what it was asked to do``."""
    kind = child.agent_type if isinstance(child.agent_type, str) else ""
    if (
        not kind
        and call is not None
        and isinstance(call.input, dict)
        and isinstance(call.input.get("subagent_type"), str)
    ):
        kind = call.input["subagent_type"]
    desc = child.description if isinstance(child.description, str) else ""
    if (
        not desc
        and call is not None
        and isinstance(call.input, dict)
        and isinstance(call.input.get("description"), str)
    ):
        desc = call.input["description"]
    agent = child.link.agent_id if isinstance(child.link.agent_id, str) else "?"
    title = f"subagent {agent}" + (f" ({kind})" if kind else "") + (f": {desc}" if desc else "")
    if child.link.via == "none":
        title += " [no recorded parent call]"
    return title


# the inputs that say what a call was about, most telling first (a path, a command, a query)
_KEY_INPUTS = (
    "file_path",
    "path",
    "absolute_path",
    "notebook_path",
    "command",
    "cmd",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
)
_PATCH_FILE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")


def key_input(use: ToolUse, width: int = 80) -> str:
    """The one input that says what a call did, on one line (``/src/app.py``, ``ls -la``);
    empty when none does. A freeform patch (Codex ``apply_patch``) gives the files it names."""
    value = use.input
    if isinstance(value, str):
        files = [line[len(p) :] for line in value.splitlines() for p in _PATCH_FILE if line.startswith(p)]
        text = ", ".join(files)
    else:
        found = next(
            (value[k] for k in _KEY_INPUTS if isinstance(value, dict) and value.get(k) not in (None, "", [])), None
        )
        if isinstance(found, list) and all(isinstance(x, str) for x in found):
            found = " ".join(found)  # an argv (Codex's exec_command ``cmd``)
        text = found if isinstance(found, str) else ""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def label(block, names: dict[str, str] | None = None) -> str:
    """A one-line title for a non-text block."""
    t = type(block)
    if t is ToolUse:
        return f"tool call {block.name} [{block.kind}] {block.id}"
    if t is ToolResult:
        name = (names or {}).get(block.tool_use_id) or "tool"
        # an absent is_error is unknown: no status is shown rather than a guessed "ok"
        return f"{name} result" if block.is_error is None else f"{name} result ({status(block)})"
    if t is Thinking:
        return "thinking" + ("" if block.thinking else " (signature only)")
    if t is RedactedThinking:
        return "thinking (redacted)"
    if t is Image:
        return f"image {block.media_type if block.media_type is not UNSET else ''}".rstrip()
    if t is Document:
        return f"document {block.title if block.title is not UNSET else ''}".rstrip()
    if t is Artifact:
        return f"artifact {block.path}"
    if t is Command:
        return f"command {command_line(block)}"
    if t is RawBlock:
        return f"raw {block.source_type} block"
    if t is ServerToolUse:
        return f"server_tool_use {block.name} {block.id}"
    if t is WebSearchToolResult or t is WebFetchToolResult:
        return f"{t.__struct_config__.tag} for {block.tool_use_id}"
    if t is Context:
        return f"context {block.kind}"
    return t.__name__
