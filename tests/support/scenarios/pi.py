"""pi scenarios: ``pi -p`` (later turns ``--session``) against the mock Chat Completions
API; the session file it wrote is recorded."""

from __future__ import annotations

import json

from txcodec.resume_check.mock.openai_chat import Call
from txcodec.resume_check.mock.openai_chat import Reply
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import thinking
from txcodec.resume_check.mock.openai_chat import tool_call

from .qwen_code import chat_cli


def entries(kind: str, n: int = 1):
    def fact(lines):
        assert sum(1 for v in lines if v.get("type") == kind) >= n, f"fewer than {n} {kind} entries"

    fact.__doc__ = f"{n}+ {kind} entries"
    return fact


# pi compacts after a turn when the context (the last reply's usage) is over the model's
# contextWindow (128000 in the sandbox's models.json) minus reserveTokens: here over 10
# tokens, so after every turn (compaction.js shouldCompact; project .pi/settings.json)
COMPACT_SETTINGS = json.dumps(
    {"compaction": {"enabled": True, "reserveTokens": 127990, "keepRecentTokens": 1}}
).encode()


def compactions(n: int):
    def fact(lines):
        found = [v for v in lines if v.get("type") == "compaction"]
        assert len(found) >= n and all(
            isinstance(v.get("summary"), str) and v.get("firstKeptEntryId") for v in found
        ), found

    fact.__doc__ = f"{n}+ compaction entries with a summary and firstKeptEntryId"
    return fact


SCENARIOS = [
    chat_cli(
        "pi",
        "parallel_calls",
        "one reply calls bash twice",
        [
            (
                "run both",
                [
                    Reply(
                        "Running both.",
                        [
                            Call("call_pi_1", "bash", {"command": "sleep 1; echo slow"}),
                            Call("call_pi_2", "bash", {"command": "echo fast"}),
                        ],
                    ),
                    text("Both ran."),
                ],
            )
        ],
        facts=[entries("message", 4)],
        covers=["parallel tool calls"],
    ),
    chat_cli(
        "pi",
        "read_and_think",
        "reasoning, a read call, then a second turn",
        [
            (
                "read hello.txt",
                [
                    tool_call("read", {"path": "hello.txt"}, say="Reading."),
                    thinking("A greeting.", then="It says hello world."),
                ],
            ),
            ("thanks", [text("You're welcome.")]),
        ],
        files={"hello.txt": b"hello world\n"},
        facts=[entries("message", 5)],
        covers=["thinking", "tool calls"],
    ),
    chat_cli(
        "pi",
        "two_turns",
        "two plain turns, the second resuming the first",
        [("hello", [text("Hi there.")]), ("and again", [text("Hi again.")])],
        facts=[],
        covers=["resumed turns"],
    ),
    # a compaction that splits a turn asks for two summaries at once (the history and the
    # turn's prefix), in no fixed order: both get the same text
    chat_cli(
        "pi",
        "compaction",
        "three turns with auto-compaction after each (a tiny reserve): compaction entries "
        "whose summary the model wrote",
        [
            ("turn 1", [text("Answer 1."), text("Summary A.")]),
            ("turn 2", [text("Answer 2."), text("Summary B."), text("Summary B.")]),
            ("turn 3", [text("Answer 3."), text("Summary C."), text("Summary C.")]),
        ],
        files={".pi/settings.json": COMPACT_SETTINGS},
        facts=[compactions(3)],
        covers=["compression", "autocompaction"],
    ),
]
