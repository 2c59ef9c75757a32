"""Workspace changes: which files each tool call changed, in one shape whatever the
harness (:class:`~txcodec.model.common.Change`; docs/changes.md says what each source records).

Everything here is derived from the raw results a reader kept (Claude Code's
``toolUseResult``, Gemini CLI's ``resultDisplay``, Qwen Code's ``toolCallResult``, pi's
``details``, Codex's ``apply_patch`` calls and outputs); nothing is written back into a
native file. What a transcript cannot tell is said, never guessed:

* a shell command may change any file and its record names none: one ``unknown`` record;
* a subagent's Claude Code transcript carries no patch (docs/changes.md#subagent-patches): an edit
  there is ``unknown`` with its path, never an invented diff;
* a failed call changed nothing and yields no record.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Iterator
from typing import Any

from msgspec import UNSET

from .common import Change, Conversation, Hunk, Message, Text, ToolResult, ToolUse

SHELL_TOOLS = {"Bash", "exec_command", "shell", "local_shell", "shell_command", "run_shell_command", "bash"}
SHELL_NOTE = "a shell command: the transcript holds the command and its output, not which files it changed"
SUBAGENT_NOTE = "the transcript of a subagent carries no patch (docs/changes.md#subagent-patches)"
# the text Codex's apply_patch answers with when the patch applied (in the codex 0.171 binary)
CODEX_PATCH_OK = "Success. Updated the following files"


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
    new = "/dev/null" if change.operation == "delete" else f"b/{change.moved_to if isinstance(change.moved_to, str) else path}"
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


class _Call:
    __slots__ = ("use", "result", "message")

    def __init__(self, use: ToolUse) -> None:
        self.use = use
        self.result: ToolResult | None = None
        self.message: Message | None = None  # the message holding the result


def _calls(conv: Conversation) -> list[_Call]:
    calls: dict[str, _Call] = {}
    for m in conv.messages:
        for b in m.content:
            if type(b) is ToolUse:
                calls.setdefault(b.id, _Call(b))
            elif type(b) is ToolResult and b.tool_use_id in calls and calls[b.tool_use_id].result is None:
                calls[b.tool_use_id].result = b
                calls[b.tool_use_id].message = m
    return list(calls.values())


def _relative(path: Any, cwd: Any) -> str | Any:
    if not isinstance(path, str):
        return UNSET
    if isinstance(cwd, str) and cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def _text(result: ToolResult | None) -> str:
    if result is None:
        return ""
    if isinstance(result.content, str):
        return result.content
    return "\n".join(b.text for b in result.content if type(b) is Text)


def _versions(tool: str, call: _Call, harness: str, cwd: Any, path: Any, before: Any, after: Any,
              hunks: list[Hunk] | None, operation: str | None = None) -> Change:
    """A runtime-reported change from the versions (and the hunks, when it wrote them)."""
    before = before if isinstance(before, str) else None
    after = after if isinstance(after, str) else None
    if not hunks:
        hunks = diff_hunks(before, after)
    if operation is None:
        operation = "create" if before is None else ("delete" if after is None else "modify")
    change = Change(call.use.id, tool, operation, harness, "runtime_reported", _relative(path, cwd), hunks=hunks,
                    before_sha256=sha256(before), after_sha256=sha256(after))
    if not hunks and before is not None and after is not None and before != after:
        change.note = f"the versions are too long to diff here (over {DIFF_LINES:,} lines); their hashes differ"
    return change


def _shell(call: _Call, harness: str) -> Change:
    return Change(call.use.id, call.use.name, "unknown", harness, "unknown", note=SHELL_NOTE)


def _failed(call: _Call) -> bool:
    return call.result is not None and call.result.is_error is True


def _claude_like(harness: str) -> Callable[[_Call, Any], Iterator[Change]]:
    """Claude Code's ``toolUseResult`` (stream-json carries the same object as
    ``tool_use_result``)."""

    def extract(call: _Call, cwd: Any) -> Iterator[Change]:
        name = call.use.name
        if name in SHELL_TOOLS:
            yield _shell(call, harness)
            return
        if name not in ("Edit", "MultiEdit", "Write", "NotebookEdit") or _failed(call):
            return
        s = call.result.structured if call.result is not None else UNSET
        if isinstance(s, dict) and isinstance(s.get("filePath"), str) and "originalFile" in s:
            before = s.get("originalFile")
            hunks = [_claude_hunk(h) for h in s.get("structuredPatch") or () if isinstance(h, dict)]
            after: Any = UNSET
            if name == "Write" and isinstance(s.get("content"), str):
                after = s["content"]
            elif isinstance(before, str) and hunks:
                after = apply_hunks(before, hunks)  # None when the patch does not fit
            operation = "create" if before is None else "modify"
            if isinstance(after, str):
                yield _versions(name, call, harness, cwd, s["filePath"], before, after, hunks, operation)
            else:  # the after-content is not known: neither is its hash, nor a diff to compute
                yield Change(call.use.id, name, operation, harness, "runtime_reported", _relative(s["filePath"], cwd),
                             hunks=hunks, before_sha256=sha256(before if isinstance(before, str) else None))
        elif isinstance(s, dict) and isinstance(s.get("notebook_path"), str):
            yield _versions(name, call, harness, cwd, s["notebook_path"], s.get("original_file"), s.get("updated_file"),
                            None, "modify")
        elif s is UNSET and call.result is not None:
            # a subagent's transcript (or a client that wrote no toolUseResult): no patch
            i = call.use.input if isinstance(call.use.input, dict) else {}
            path = i.get("file_path", i.get("notebook_path"))
            yield Change(call.use.id, name, "write" if name == "Write" else "modify", harness, "unknown",
                         _relative(path, cwd), note=SUBAGENT_NOTE)

    return extract


def _claude_hunk(h: dict) -> Hunk:
    lines = [x for x in h.get("lines") or () if isinstance(x, str) and not x.startswith("\\")]

    def num(key: str) -> Any:
        v = h.get(key)
        return v if isinstance(v, int) else UNSET

    return Hunk(lines, num("oldStart"), num("oldLines"), num("newStart"), num("newLines"))


def _codex(call: _Call, cwd: Any) -> Iterator[Change]:
    if call.use.name in SHELL_TOOLS:
        yield _shell(call, "codex")
        return
    if call.use.name != "apply_patch" or not isinstance(call.use.input, str):
        return
    if call.result is None or CODEX_PATCH_OK not in _text(call.result):
        return  # a failed (or unanswered) patch changed nothing we can name
    for path, op, moved, hunks, added in parse_codex_patch(call.use.input):
        change = Change(call.use.id, "apply_patch", op, "codex", "derived", _relative(path, cwd),
                        _relative(moved, cwd) if moved else UNSET, hunks)
        if op == "create":
            change.before_sha256, change.after_sha256 = None, sha256(added)
        elif op == "delete":
            change.after_sha256 = None
        yield change


def parse_codex_patch(patch: str) -> list[tuple[str, str, str | None, list[Hunk], str | None]]:
    """``(path, operation, moved_to, hunks, added_content)`` per file of an apply_patch
    patch (``*** Add File`` / ``*** Update File`` [``*** Move to``] / ``*** Delete File``)."""
    out: list[tuple[str, str, str | None, list[Hunk], str | None]] = []
    current: list[Any] | None = None
    for line in patch.split("\n"):
        for marker, op in (("*** Add File: ", "create"), ("*** Update File: ", "modify"), ("*** Delete File: ", "delete")):
            if line.startswith(marker):
                current = [line[len(marker):].strip(), op, None, [], []]
                out.append(current)  # type: ignore[arg-type]
                break
        else:
            if current is None or line.startswith("*** End"):
                continue
            if line.startswith("*** Move to: "):
                current[2] = line[len("*** Move to: "):].strip()
            elif current[1] == "create" and line.startswith("+"):
                current[4].append(line[1:])
            elif line.startswith("@@"):
                current[3].append(Hunk([]))
            elif line[:1] in (" ", "-", "+") and current[1] == "modify":
                if not current[3]:
                    current[3].append(Hunk([]))
                current[3][-1].lines.append(line)
    result = []
    for path, op, moved, hunks, added in out:
        content = "\n".join(added) + "\n" if op == "create" else None
        if op == "create":
            hunks = diff_hunks(None, content)
        result.append((path, op, moved, hunks, content))
    return result


def _gemini_like(harness: str) -> Callable[[_Call, Any], Iterator[Change]]:
    def extract(call: _Call, cwd: Any) -> Iterator[Change]:
        if call.use.name in SHELL_TOOLS:
            yield _shell(call, harness)
            return
        if _failed(call) or call.result is None:
            return
        display = call.result.structured
        if display is UNSET and call.message is not None:  # Qwen Code keeps it on the message
            record = call.message.extra.get("toolCallResult")
            if isinstance(record, dict) and record.get("callId") in (None, call.use.id):
                display = record.get("resultDisplay")
        if not isinstance(display, dict) or "newContent" not in display or "fileDiff" not in display:
            return
        before = None if display.get("isNewFile") is True else display.get("originalContent")
        path = display.get("filePath") or display.get("fileName")
        diff = display.get("fileDiff")
        hunks = parse_unified(diff) if isinstance(diff, str) else []
        change = _versions(call.use.name, call, harness, cwd, path, before, display.get("newContent"), hunks)
        if "isNewFile" not in display and before == "":
            # Qwen Code writes no isNewFile: an empty original is a new file or an empty
            # one, which the record does not tell apart
            change.operation, change.before_sha256 = "write", UNSET
        yield change

    return extract


_PI_LINE = re.compile(r"^([ +-])\s*\d+ (.*)$", re.S)


def _pi(call: _Call, cwd: Any) -> Iterator[Change]:
    if call.use.name in SHELL_TOOLS:
        yield _shell(call, "pi")
        return
    if _failed(call) or call.result is None:
        return
    i = call.use.input if isinstance(call.use.input, dict) else {}
    path = i.get("path", i.get("file_path"))
    if call.use.name == "write" and isinstance(i.get("content"), str):
        # pi's write result carries no details: the content is the call's, and whether
        # the file existed before is not recorded
        yield Change(call.use.id, "write", "write", "pi", "derived", _relative(path, cwd),
                     hunks=diff_hunks(None, i["content"]), after_sha256=sha256(i["content"]))
        return
    details = (call.message.extra.get("details") or {}).get(call.use.id) if call.message is not None else None
    if call.use.name == "edit" and isinstance(details, dict) and isinstance(details.get("diff"), str):
        # pi's display diff: "+12 text" / "-12 text" / " 12 text", "..." between hunks
        hunks: list[Hunk] = [Hunk([])]
        for line in details["diff"].split("\n"):
            m = _PI_LINE.match(line)
            if m:
                hunks[-1].lines.append(m.group(1) + m.group(2))
            elif line.strip() == "..." and hunks[-1].lines:
                hunks.append(Hunk([]))
        yield Change(call.use.id, "edit", "modify", "pi", "runtime_reported", _relative(path, cwd),
                     hunks=[h for h in hunks if h.lines])


_EXTRACTORS: dict[str, Callable[[_Call, Any], Iterator[Change]]] = {
    "claude_code": _claude_like("claude_code"),
    "stream_json": _claude_like("stream_json"),
    "codex": _codex,
    "gemini_cli": _gemini_like("gemini_cli"),
    "qwen_code": _gemini_like("qwen_code"),
    "pi": _pi,
}


def _shell_only(harness: str) -> Callable[[_Call, Any], Iterator[Change]]:
    def extract(call: _Call, cwd: Any) -> Iterator[Change]:
        # a harness's own shell tool (Kimi's Shell, OpenHands' terminal) is known by its kind
        if call.use.name in SHELL_TOOLS or call.use.kind == "shell_exec":
            yield _shell(call, harness)

    return extract


def conversation_changes(conv: Conversation, *, subagents: bool = True, agent_id: Any = UNSET) -> list[Change]:
    """Every change of ``conv`` in call order; its subagents' after it, each marked with
    its ``agent_id``, unless ``subagents=False``."""
    harness = conv.meta.source_harness if isinstance(conv.meta.source_harness, str) else "unknown"
    extract = _EXTRACTORS.get(harness) or _shell_only(harness)
    out: list[Change] = []
    for call in _calls(conv):
        for change in extract(call, conv.meta.cwd):
            change.agent_id = agent_id
            out.append(change)
    if subagents:
        for child in conv.children:
            aid = child.link.agent_id if isinstance(child.link.agent_id, str) else "?"
            out.extend(conversation_changes(child.conversation, agent_id=aid))
    return out


# --- from a native session (what Common does not carry) ------------------------------------


def session_changes(session: Any, conv: Conversation) -> list[Change]:
    """:func:`conversation_changes`, where a Codex rollout's ``patch_apply_end`` events
    (which Common does not carry) replace the changes derived from the patch text: they
    are the runtime's own account, with its unified diff, and a failed one changed
    nothing."""
    changes = conversation_changes(conv)
    if session.harness != "codex":
        return changes
    events = _codex_patch_events(session)
    if not events:
        return changes
    out: list[Change] = []
    done: set[str] = set()
    for c in changes:
        event = events.get(c.tool_use_id)
        if event is None:
            out.append(c)
        elif c.tool_use_id not in done:
            done.add(c.tool_use_id)
            out.extend(_from_patch_event(c.tool_use_id, event, conv.meta.cwd))
    derived_ids = {c.tool_use_id for c in changes}
    for call_id, event in events.items():  # an event whose call's output did not say Success
        if call_id not in derived_ids:
            out.extend(_from_patch_event(call_id, event, conv.meta.cwd))
    return out


def _codex_patch_events(session: Any) -> dict[str, dict]:
    import msgspec

    events: dict[str, dict] = {}
    for line in session.lines:
        raw = line.raw if line.raw is not None else b""
        if b'"patch_apply_end"' not in raw:
            continue
        try:
            value = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            continue
        payload = value.get("payload") if isinstance(value, dict) else None
        if isinstance(payload, dict) and payload.get("type") == "patch_apply_end" and isinstance(payload.get("call_id"), str):
            events[payload["call_id"]] = payload
    return events


_CODEX_OPS = {"add": "create", "update": "modify", "delete": "delete"}


def _from_patch_event(call_id: str, event: dict, cwd: Any) -> list[Change]:
    if event.get("success") is not True:
        return []
    out = []
    for path, body in (event.get("changes") or {}).items():
        if not isinstance(body, dict):
            continue
        op = _CODEX_OPS.get(body.get("type"), "modify")
        change = Change(call_id, "apply_patch", op, "codex", "runtime_reported", _relative(path, cwd))
        if isinstance(body.get("move_path"), str):
            change.moved_to = _relative(body["move_path"], cwd)
        if isinstance(body.get("unified_diff"), str):
            change.hunks = parse_unified(body["unified_diff"])
        if op == "create" and isinstance(body.get("content"), str):
            change.before_sha256, change.after_sha256 = None, sha256(body["content"])
            change.hunks = change.hunks or diff_hunks(None, body["content"])
        elif op == "delete":
            change.after_sha256 = None
            if isinstance(body.get("content"), str):
                change.before_sha256 = sha256(body["content"])
        out.append(change)
    return out
