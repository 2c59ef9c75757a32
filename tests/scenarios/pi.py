"""pi scenarios: ``pi -p`` (later turns ``--session``) against the mock Chat Completions
API; the session file it wrote is recorded."""

from __future__ import annotations

from txcodec.clients.openai_chat import Call, Reply, text, thinking, tool_call

from .qwen_code import chat_cli


def entries(kind: str, n: int = 1):
    def fact(lines):
        assert sum(1 for v in lines if v.get("type") == kind) >= n, f"fewer than {n} {kind} entries"
    fact.__doc__ = f"{n}+ {kind} entries"
    return fact


SCENARIOS = [
    chat_cli("pi", "parallel_calls", "one reply calls bash twice",
             [("run both", [Reply("Running both.", [Call("call_pi_1", "bash", {"command": "sleep 1; echo slow"}),
                                                    Call("call_pi_2", "bash", {"command": "echo fast"})]),
                            text("Both ran.")])],
             facts=[entries("message", 4)], covers=["parallel tool calls"]),
    chat_cli("pi", "read_and_think", "reasoning, a read call, then a second turn",
             [("read hello.txt", [tool_call("read", {"path": "hello.txt"}, say="Reading."),
                                  thinking("A greeting.", then="It says hello world.")]),
              ("thanks", [text("You're welcome.")])],
             files={"hello.txt": b"hello world\n"},
             facts=[entries("message", 5)], covers=["thinking", "tool calls"]),
    chat_cli("pi", "two_turns", "two plain turns, the second resuming the first",
             [("hello", [text("Hi there.")]), ("and again", [text("Hi again.")])],
             facts=[], covers=["resumed turns"]),
]

