"""Workspace changes: which files each tool call changed, in one shape whatever the
harness (:class:`~txcodec.model.common.Change`; docs/changes.md says what each source records).

Everything is derived from the raw results a reader kept (Claude Code's ``toolUseResult``,
Gemini CLI's ``resultDisplay``, Qwen Code's ``toolCallResult``, pi's ``details``, Codex's
``apply_patch`` calls and outputs): each harness reads its own in its package's
``changes.py`` (declared as ``Harness.changes``), with the helpers here; :mod:`txcodec.kit.changes`
finds it through the registry. Nothing is
written back into a native file. What a transcript cannot tell is said, never guessed:

* a shell command may change any file and its record names none: one ``unknown`` record;
* a subagent's Claude Code transcript carries no patch (docs/changes.md#subagent-patches): an edit
  there is ``unknown`` with its path, never an invented diff;
* a failed call changed nothing and yields no record.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

from msgspec import UNSET

from .common import Change
from .common import Conversation
from .common import Hunk
from .common import Message
from .common import Text
from .common import ToolResult
from .common import ToolUse

SHELL_TOOLS = {"Bash", "exec_command", "shell", "local_shell", "shell_command", "run_shell_command", "bash"}
SHELL_NOTE = "a shell command: the transcript holds the command and its output, not which files it changed"
SUBAGENT_NOTE = "the transcript of a subagent carries no patch (docs/changes.md#subagent-patches)"


def sha256(text: str | None) -> str | None:
    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# --- diffs -----------------------------------------------------------------------------

_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_unified(text: str) -> list[Hunk]:
    """The hunks of a unified diff (file headers and ``\\ No newline`` markers skipped)."""
    hunks: list[Hunk] = []
    for line in text.split("\n"):
        m = _HEADER.match(line)
        if m:
            a, b, c, d = m.groups()
            hunks.append(Hunk([], int(a), int(b or 1), int(c), int(d or 1)))
        elif hunks and line[:1] in (" ", "-", "+") and not line.startswith(("--- ", "+++ ")):
            hunks[-1].lines.append(line)
        elif hunks and line == "":
            continue
    return hunks


# difflib's matching can take quadratic time: past this many lines on both sides together,
# two versions are not diffed (the hashes still tell them apart; the change says so)
DIFF_LINES = 20_000


def diff_hunks(before: str | None, after: str | None) -> list[Hunk]:
    """Hunks computed from two versions (``None`` is an absent file); none when both are
    there and too long to diff (:data:`DIFF_LINES`)."""
    a = (before or "").split("\n")
    b = (after or "").split("\n")
    if a[-1:] == [""]:
        a.pop()
    if b[-1:] == [""]:
        b.pop()
    if not a or not b:  # a file made or removed whole: one hunk, in linear time
        lines = [f"+{line}" for line in b] or [f"-{line}" for line in a]
        return [Hunk(lines, 0 if not a else 1, len(a), 0 if not b else 1, len(b))] if lines else []
    if len(a) + len(b) > DIFF_LINES:
        return []
    return parse_unified("\n".join(difflib.unified_diff(a, b, lineterm="", n=3)))


def apply_hunks(before: str, hunks: list[Hunk]) -> str | None:
    """``before`` with ``hunks`` applied, or ``None`` when a context or removed line does
    not match (the result would be a guess)."""
    old = before.split("\n")
    out: list[str] = []
    pos = 0
    for h in hunks:
        if h.old_start is UNSET or h.old_lines is UNSET:
            return None
        start = h.old_start if h.old_lines == 0 else h.old_start - 1
        if start < pos or start > len(old):
            return None
        out.extend(old[pos:start])
        pos = start
        for line in h.lines:
            tag, body = line[:1], line[1:]
            if tag == "+":
                out.append(body)
            elif tag in (" ", "-"):
                if pos >= len(old) or old[pos] != body:
                    return None
                if tag == " ":
                    out.append(body)
                pos += 1
    out.extend(old[pos:])
    return "\n".join(out)


def unified_diff(change: Change) -> str:
    """The change as unified diff text (``--- a/…``/``+++ b/…``, then its hunks)."""
    path = change.path if isinstance(change.path, str) else "?"
    old = "/dev/null" if change.operation == "create" else f"a/{path}"
    new = (
        "/dev/null"
        if change.operation == "delete"
        else f"b/{change.moved_to if isinstance(change.moved_to, str) else path}"
    )
    out = [f"--- {old}", f"+++ {new}"]
    for h in change.hunks:
        if h.old_start is UNSET:
            out.append("@@")
        else:
            out.append(f"@@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@")
        out.extend(h.lines)
    return "\n".join(out)


def by_call(changes: list[Change]) -> dict[str, list[Change]]:
    """Changes keyed by tool-use id, for a view that shows each under its call."""
    out: dict[str, list[Change]] = {}
    for c in changes:
        out.setdefault(c.tool_use_id, []).append(c)
    return out


# --- from a conversation -----------------------------------------------------------------


class Call:
    """One tool call of a conversation: its use, its result and the message holding the
    result (what a harness's ``Harness.changes`` extractor reads)."""

    __slots__ = ("use", "result", "message")

    def __init__(self, use: ToolUse) -> None:
        self.use = use
        self.result: ToolResult | None = None
        self.message: Message | None = None  # the message holding the result


def _calls(conv: Conversation) -> list[Call]:
    calls: dict[str, Call] = {}
    for m in conv.messages:
        for b in m.content:
            if type(b) is ToolUse:
                calls.setdefault(b.id, Call(b))
            elif type(b) is ToolResult and b.tool_use_id in calls and calls[b.tool_use_id].result is None:
                calls[b.tool_use_id].result = b
                calls[b.tool_use_id].message = m
    return list(calls.values())


def relative(path: Any, cwd: Any) -> str | Any:
    """``path`` relative to ``cwd`` when it lies under it; UNSET when it is no string."""
    if not isinstance(path, str):
        return UNSET
    if isinstance(cwd, str) and cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def result_text(result: ToolResult | None) -> str:
    if result is None:
        return ""
    if isinstance(result.content, str):
        return result.content
    return "\n".join(b.text for b in result.content if type(b) is Text)


def from_versions(
    tool: str,
    call: Call,
    harness: str,
    cwd: Any,
    path: Any,
    before: Any,
    after: Any,
    hunks: list[Hunk] | None,
    operation: str | None = None,
) -> Change:
    """A runtime-reported change from the versions (and the hunks, when it wrote them)."""
    before = before if isinstance(before, str) else None
    after = after if isinstance(after, str) else None
    if not hunks:
        hunks = diff_hunks(before, after)
    if operation is None:
        operation = "create" if before is None else ("delete" if after is None else "modify")
    change = Change(
        call.use.id,
        tool,
        operation,
        harness,
        "runtime_reported",
        relative(path, cwd),
        hunks=hunks,
        before_sha256=sha256(before),
        after_sha256=sha256(after),
    )
    if not hunks and before is not None and after is not None and before != after:
        change.note = f"the versions are too long to diff here (over {DIFF_LINES:,} lines); their hashes differ"
    return change


def shell_change(call: Call, harness: str) -> Change:
    return Change(call.use.id, call.use.name, "unknown", harness, "unknown", note=SHELL_NOTE)


def failed(call: Call) -> bool:
    return call.result is not None and call.result.is_error is True


def shell_only(call: Call, cwd: Any, harness: str) -> Iterator[Change]:
    """The extractor of a harness that declares none: its shell calls, each ``unknown``."""
    # a harness's own shell tool (Kimi's Shell, OpenHands' terminal) is known by its kind
    if call.use.name in SHELL_TOOLS or call.use.kind == "shell_exec":
        yield shell_change(call, harness)


def derive(
    conv: Conversation, extractor_of: Callable[[str], Any], *, subagents: bool = True, agent_id: Any = UNSET
) -> list[Change]:
    """Every change of ``conv`` in call order, each call read by the extractor that
    ``extractor_of(harness)`` gives (a ``ChangesReader``; None: its shell calls only); its
    subagents' after it, each marked with its ``agent_id``, unless ``subagents=False``.
    The model knows no harness: :mod:`txcodec.kit.changes` passes the registry's lookup."""
    harness = conv.meta.source_harness if isinstance(conv.meta.source_harness, str) else "unknown"
    declared = extractor_of(harness)
    extract = declared.extract if declared is not None else shell_only
    out: list[Change] = []
    for call in _calls(conv):
        for change in extract(call, conv.meta.cwd, harness):
            change.agent_id = agent_id
            out.append(change)
    if subagents:
        for child in conv.children:
            aid = child.link.agent_id if isinstance(child.link.agent_id, str) else "?"
            out.extend(derive(child.conversation, extractor_of, agent_id=aid))
    return out
