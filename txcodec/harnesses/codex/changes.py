"""Which files a Codex ``apply_patch`` call changed (``model.changes``; docs/changes.md):
derived from the patch text when its output says it applied, or, from a native session,
the runtime's own ``patch_apply_end`` events (which Common does not carry)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from msgspec import UNSET

from ...kit.registry import ChangesReader
from ...model.changes import SHELL_TOOLS
from ...model.changes import Call
from ...model.changes import diff_hunks
from ...model.changes import parse_unified
from ...model.changes import relative
from ...model.changes import result_text
from ...model.changes import sha256
from ...model.changes import shell_change
from ...model.common import Change
from ...model.common import Conversation
from ...model.common import Hunk

# the text Codex's apply_patch answers with when the patch applied (in the codex 0.171 binary)
CODEX_PATCH_OK = "Success. Updated the following files"


def extract(call: Call, cwd: Any, harness: str) -> Iterator[Change]:
    if call.use.name in SHELL_TOOLS:
        yield shell_change(call, harness)
        return
    if call.use.name != "apply_patch" or not isinstance(call.use.input, str):
        return
    if call.result is None or CODEX_PATCH_OK not in result_text(call.result):
        return  # a failed (or unanswered) patch changed nothing we can name
    for path, op, moved, hunks, added in parse_codex_patch(call.use.input):
        change = Change(
            call.use.id,
            "apply_patch",
            op,
            harness,
            "derived",
            relative(path, cwd),
            relative(moved, cwd) if moved else UNSET,
            hunks,
        )
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
        for marker, op in (
            ("*** Add File: ", "create"),
            ("*** Update File: ", "modify"),
            ("*** Delete File: ", "delete"),
        ):
            if line.startswith(marker):
                current = [line[len(marker) :].strip(), op, None, [], []]
                out.append(current)  # type: ignore[arg-type]
                break
        else:
            if current is None or line.startswith("*** End"):
                continue
            if line.startswith("*** Move to: "):
                current[2] = line[len("*** Move to: ") :].strip()
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


def from_session(session: Any, conv: Conversation, changes: list[Change]) -> list[Change]:
    """``changes``, where the rollout's ``patch_apply_end`` events replace the changes
    derived from the patch text: they are the runtime's own account, with its unified
    diff, and a failed one changed nothing."""
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
        if (
            isinstance(payload, dict)
            and payload.get("type") == "patch_apply_end"
            and isinstance(payload.get("call_id"), str)
        ):
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
        change = Change(call_id, "apply_patch", op, "codex", "runtime_reported", relative(path, cwd))
        if isinstance(body.get("move_path"), str):
            change.moved_to = relative(body["move_path"], cwd)
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


CHANGES = ChangesReader(extract=extract, from_session=from_session)
