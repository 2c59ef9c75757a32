"""stream-json scenarios: the stdout of ``claude -p --output-format stream-json --verbose``
(2.1.332) for runs the CLI's own session file cannot show the same way: ``/compact``,
local commands (printed as ``<synthetic>`` assistant lines) and a background agent."""

from __future__ import annotations

from txcodec.resume_check.mock.anthropic import Reply
from txcodec.resume_check.mock.anthropic import text
from txcodec.resume_check.mock.anthropic import tool_use

from ..stream_json_scenarios import STREAM_INPUT
from ..stream_json_scenarios import Invocation
from .claude_code import BACKGROUND
from .claude_code import HOOK_TEXTS
from .claude_code import REDACTED
from .claude_code import claude
from .claude_code import has_text
from .claude_code import hook_settings
from .claude_code import lacks_text


def _line(kind: str, subtype: str | None = None):
    def fact(lines):
        assert any(v.get("type") == kind and (subtype is None or v.get("subtype") == subtype) for v in lines), (
            kind,
            subtype,
        )

    fact.__doc__ = f"the capture has a {kind}/{subtype} line"
    return fact


def synthetic_commands(lines):
    """Local commands print as assistant lines whose model is ``<synthetic>`` (class 5)."""
    assert any(v.get("type") == "assistant" and (v.get("message") or {}).get("model") == "<synthetic>" for v in lines)


def results(n: int):
    def fact(lines):
        found = [v for v in lines if v.get("type") == "result" or ("result" in v and "duration_api_ms" in v)]
        assert len(found) == n, len(found)

    fact.__doc__ = f"{n} result lines"
    return fact


SCENARIOS = [
    claude(
        "compact",
        "two turns, /compact, a turn after: compact_boundary then the replayed summary",
        [text("one"), text("two"), text("Summary: we said one and two."), text("Summary."), text("three")],
        ["first", "second", "/compact", "third"],
        facts=[_line("system", "compact_boundary")],
        covers=["manual /compact", "class 5"],
        harness="stream_json",
    ),
    claude(
        "local_commands",
        "/cost and /context in a capture: <synthetic> assistant lines",
        [text("First answer."), text("Second answer.")],
        ["hello", "/cost", "/context", "after the commands"],
        facts=[synthetic_commands],
        covers=["local slash commands", "class 5"],
        harness="stream_json",
    ),
    claude(
        "local_commands_compact",
        "/context and /cost, then /compact and a turn after (issue 31 item 8)",
        [text("First answer."), text("Summary: said hello."), text("Summary."), text("After the compaction.")],
        # one process fed on stdin, as an SDK host runs it
        [Invocation(["hello", "/context", "/cost", "/compact", "after the commands"], flags=STREAM_INPUT, stdin=True)],
        facts=[synthetic_commands, _line("system", "compact_boundary")],
        covers=["local slash commands", "manual /compact", "class 5"],
        harness="stream_json",
    ),
    claude(
        "redacted_thinking",
        "redacted thinking before the final text of a turn",
        [Reply([{"type": "redacted_thinking", "data": REDACTED}, {"type": "text", "text": "Answer after redacted."}])],
        ["think about it"],
        facts=[has_text("redacted_thinking")],
        covers=["redacted thinking", "class 1"],
        harness="stream_json",
    ),
    claude(
        "tool_then_text",
        "a Bash call and the answer",
        [tool_use("Bash", {"command": "echo hi"}, "toolu_sj1", say="Running."), text("It printed hi.")],
        ["say hi with bash"],
        facts=[_line("user")],
        covers=["tool calls"],
        harness="stream_json",
    ),
    claude(
        "background_subagent",
        "a background Agent call, its <task-notification> turn: two result lines",
        BACKGROUND["script"],
        BACKGROUND["prompts"],
        files=BACKGROUND["files"],
        routes=BACKGROUND["routes"],
        facts=[_line("system", "task_notification"), results(2)],
        covers=["background subagents with task notifications", "class 5"],
        harness="stream_json",
    ),
    claude(
        "hooks",
        "SessionStart, UserPromptSubmit, PreToolUse and PostToolUse hooks giving additionalContext "
        "around a Bash call, in a capture",
        [
            tool_use("Bash", {"command": "echo hooked"}, "toolu_sjh1", say="Running it."),
            text("It printed hooked."),
            text("Still here."),
        ],
        ["run echo hooked", "and now?"],
        files={".claude/settings.json": hook_settings(HOOK_TEXTS)},
        # -p prints a SessionStart hook's output (a hook_response line), no other event's
        facts=[has_text(HOOK_TEXTS["SessionStart"]), lacks_text(HOOK_TEXTS["PostToolUse"])],
        covers=["hooks", "class 3"],
        # (claude itself sends it after the first prompt, the other clients before it)
        seen=[HOOK_TEXTS["SessionStart"], "Running it."],
        harness="stream_json",
    ),
]
