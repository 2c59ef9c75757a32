"""Qwen Code scenarios: ``qwen -p`` (later turns ``--resume``) against the mock Chat
Completions API; the session file it wrote is recorded."""

from __future__ import annotations

import json
from pathlib import Path

from txcodec.resume_check.mock.openai_chat import Call
from txcodec.resume_check.mock.openai_chat import Reply
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import thinking
from txcodec.resume_check.mock.openai_chat import tool_call

from . import Scenario


def chat_cli(harness: str, name: str, about: str, turns, *, files=None, facts=(), covers=()) -> Scenario:
    """``turns``: (prompt, replies, or a function of the project folder giving them)."""

    def produce(tmp: Path) -> dict[str, bytes]:
        if harness == "qwen_code":
            from txcodec.resume_check.qwen_code import Qwen as Box
        else:
            from txcodec.resume_check.pi import Pi as Box
        with Box() as box:
            for rel, data in (files or {}).items():
                (box.cwd / rel).parent.mkdir(parents=True, exist_ok=True)
                (box.cwd / rel).write_bytes(data)
            session = None
            for prompt, script in turns:
                script = script(box.cwd) if callable(script) else script
                if harness == "qwen_code":
                    run = box.qwen(prompt, script, resume=session, timeout=120)
                else:
                    run = box.pi(prompt, script, session=session, timeout=120)
                if run.exit_code != 0:
                    raise RuntimeError(f"{name}: exit {run.exit_code}: {run.stderr[-1500:]}")
                (path,) = box.sessions()
                session = path.stem if harness == "qwen_code" else str(path)
            return {"session.jsonl": path.read_bytes()}

    return Scenario(name, harness, about, produce, [p for p, _ in turns], list(facts), list(covers))


def records(kind: str, n: int = 1):
    def fact(lines):
        assert sum(1 for v in lines if v.get("type") == kind) >= n, f"fewer than {n} {kind} records"

    fact.__doc__ = f"{n}+ {kind} records"
    return fact


def results_in_records_of_their_own(lines):
    """Each result of the parallel calls is a tool_result record of its own (class 6).
    0.24.4 runs a reply's calls one after the other unless they are "concurrency safe"
    (``isToolCallConcurrencySafe``: an agent call, a read/search/fetch tool, or a shell
    command made only of read-only commands, ``READ_ONLY_ROOT_COMMANDS``: cat, echo, head,
    wc, ...). ``python3`` is not one, so here the calls ran in turn: completion order is
    call order (``concurrent_calls`` has the concurrent case)."""
    ids = [v["toolCallResult"]["callId"] for v in lines if v.get("type") == "tool_result" and v.get("toolCallResult")]
    assert sorted(ids) == ["call_par_1", "call_par_2"], ids
    records = [v for v in lines if v.get("type") == "tool_result"]
    assert all(len(v["message"]["parts"]) == 1 for v in records)


# qwen compacts before sending a turn when the last prompt's tokens are over
# context.autoCompactThreshold of the context window (settings.md; a project
# .qwen/settings.json): with a tiny threshold, before every later turn; the compression
# is a model call of its own, first in that turn's script
COMPRESS_SETTINGS = json.dumps({"context": {"autoCompactThreshold": 0.00001}}).encode()


def compressions(n: int):
    def fact(lines):
        found = [v for v in lines if v.get("type") == "system" and v.get("subtype") == "chat_compression"]
        assert len(found) >= n and all(
            isinstance((v.get("systemPayload") or {}).get("compressedHistory"), list) for v in found
        )

    fact.__doc__ = f"{n}+ system/chat_compression records with a compressedHistory"
    return fact


PARALLEL = Reply(
    "Running both.",
    [
        Call("call_par_1", "run_shell_command", {"command": "python3 -c 'import time; time.sleep(3); print(1)'"}),
        Call("call_par_2", "run_shell_command", {"command": "echo fast"}),
    ],
)


def results_in_call_order(lines):
    """Two read-only shell calls, which 0.24.4 runs concurrently (``runConcurrently``),
    the first much slower: the result records still come in call order, one each.
    0.24.4 records a batch's results only once every call of it is done
    (``checkAndNotifyCompletion`` -> ``recordToolResults`` over the batch's calls, in
    order): no completion order reaches the file."""
    ids = [v["toolCallResult"]["callId"] for v in lines if v.get("type") == "tool_result" and v.get("toolCallResult")]
    assert ids == ["call_co_1", "call_co_2"], ids
    assert all(len(v["message"]["parts"]) == 1 for v in lines if v.get("type") == "tool_result")


# both commands are made only of read-only commands (head, wc, echo), so 0.24.4 runs them
# at once; the first reads 300 MB of random bytes, the second prints at once
CONCURRENT = Reply(
    "Running both at once.",
    [
        Call("call_co_1", "run_shell_command", {"command": "head -c 300000000 /dev/urandom | wc -c"}),
        Call("call_co_2", "run_shell_command", {"command": "echo fast"}),
    ],
)

SCENARIOS = [
    chat_cli(
        "qwen_code",
        "parallel_results",
        "one reply calls two shell commands; the fast one finishes first",
        [("run both commands", [PARALLEL, text("Both finished.")])],
        facts=[results_in_records_of_their_own],
        covers=["parallel tool calls, one result record each", "class 6"],
    ),
    chat_cli(
        "qwen_code",
        "read_and_think",
        "reasoning, a read_file call, then a second turn",
        [
            (
                "read hello.txt",
                lambda cwd: [
                    tool_call("read_file", {"file_path": str(cwd / "hello.txt")}, say="Reading."),
                    thinking("It is a greeting.", then="It says hello world."),
                ],
            ),
            ("thanks", [text("You're welcome.")]),
        ],
        files={"hello.txt": b"hello world\n"},
        facts=[records("tool_result")],
        covers=["thinking", "tool calls"],
    ),
    chat_cli(
        "qwen_code",
        "two_turns",
        "two plain turns, the second resuming the first",
        [("hello", [text("Hi there.")]), ("and again", [text("Hi again.")])],
        facts=[],
        covers=["resumed turns"],
    ),
    chat_cli(
        "qwen_code",
        "compression",
        "three turns, auto-compression before each later turn (a tiny threshold)",
        [
            ("turn 1", [text("Answer 1.")]),
            ("turn 2", [text("<state_snapshot>Summary: turn 1 was answered.</state_snapshot>"), text("Answer 2.")]),
            (
                "turn 3",
                [text("<state_snapshot>Summary: turns 1 and 2 were answered.</state_snapshot>"), text("Answer 3.")],
            ),
        ],
        files={".qwen/settings.json": COMPRESS_SETTINGS},
        facts=[compressions(2)],
        covers=["compression", "autocompaction"],
    ),
    chat_cli(
        "qwen_code",
        "concurrent_calls",
        "one reply calls two read-only shell commands, the first slow: qwen runs "
        "them at once and records both results, in call order, when the batch is done",
        [("run both commands at once", [CONCURRENT, text("Both finished.")])],
        facts=[results_in_call_order],
        covers=["parallel tool calls (results in call order, not completion order)", "class 6"],
    ),
]
