"""Claude Code: ``~/.claude/projects/<munged cwd>/<session id>.jsonl`` and side files."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import lazy
from ...kit.registry import package_harness

_ID_KEYS = ("sessionId", "uuid", "leafUuid", "parentUuid")
_JOURNAL = ("started", "result")


def _score(value: Any, record_types: dict, untagged: dict) -> int:
    if not isinstance(value, dict) or "payload" in value or "session_id" in value:
        return 0
    if "type" in value and not isinstance(value["type"], str):
        return 0  # a tag that is not a string names no record
    kind = value.get("type")
    if kind is None:  # a side file: agent-*.meta.json, workflows/wf_*.json
        return 2 if any(key in value for key in untagged) else 0
    if kind not in record_types:
        return 0
    if kind in _JOURNAL:  # journal lines carry agentId and key, nothing else
        return 2 if "agentId" in value and "key" in value else 0
    return 2 if any(k in value for k in _ID_KEYS) else 1


def detect(sample: list[Any]) -> int:
    # the record structs are imported when a file is scored, not for every use of the
    # package (a file opening with Claude Code's signature is never scored)
    from .records import RECORD_TYPES
    from .records import UNTAGGED

    return sum(_score(value, RECORD_TYPES, UNTAGGED) for value in sample)


# codec, read, write, store and its resume check (what the real ``claude --resume`` sends for
# this file) by the standard names, each imported on first use: usage reads without the codec
HARNESS = package_harness(
    __name__,
    append_only=True,  # the client only appends to its JSONL files (txcodec.live)
    carry_on=lazy(f"{__name__}.stream", "carry_on"),  # and a follow's reader carries on from its last line
    title="Claude Code",
    detect=detect,
    read_streams=True,  # it reads a NativeSession.pending as it decodes it
    # every block, list and tool input is built or decoded anew for the one place it goes
    # (tests/harnesses/claude_code/test_claude_code_read_unshared.py): conform may keep its messages that fit
    read_unshared=True,
    # show reads a session a message at a time (docs/claude_code_reader.md#streamed-reading)
    read_messages=lazy(f"{__name__}.stream", "read_messages"),
    fork_slot="forkedFrom",
    # a Codex rollout straight to Claude Code lines, for the rollouts it knows
    fast_paths={"codex": lazy(f"{__name__}.from_codex", "fast")},
    token_metric="claude_code.token.usage",  # what Claude Code's own exporter sends
    flags_failed_results=True,  # the Messages API\'s is_error (docs/dataset.md#tool-failures)
    writes_persisted_output=True,  # <sid>/tool-results/ (docs/claude_code.md#persisted-output)
    resume=("claude", "--resume", "{id}"),
    origin=Later(f"{__name__}.origin", "ORIGIN"),
    usage=Later(f"{__name__}.usage", "USAGE"),  # the lean pass imports this module alone
    changes=Later(f"{__name__}.changes", "CHANGES"),
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: the checklist's shapes
    # the keys whose values are ids, hashes or signatures: never redacted (docs/redact.md)
    redact_keep=(
        "sessionId",
        "uuid",
        "parentUuid",
        "leafUuid",
        "id",
        "promptId",
        "tool_use_id",
        "requestId",
        "messageId",
        "sourceToolAssistantUUID",
        "signature",
        "shapeHash",
        "requestRef",
        "requestDigest",
        "hash",
        "agentId",
        "toolUseID",
        "parentToolUseID",
        "backupFileName",
        "messageUuid",
    ),
)
