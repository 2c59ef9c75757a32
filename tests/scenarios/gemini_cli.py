"""Gemini CLI scenarios: ``gemini -p`` (later turns ``--resume``) against the mock
Gemini API; the session file with the whole conversation is recorded (see
tests/test_gemini_real.py for why a run can leave a second, startup-only file)."""

from __future__ import annotations

from pathlib import Path

from txcodec.clients import gemini as g

from . import Scenario


def gemini(name: str, about: str, turns, *, files=None, facts=(), covers=()) -> Scenario:
    def produce(tmp: Path) -> dict[str, bytes]:
        with g.Sandbox(root=tmp / "gemini") as box:
            for rel, data in (files or {}).items():
                (box.cwd / rel).parent.mkdir(parents=True, exist_ok=True)
                (box.cwd / rel).write_bytes(data)
            session = None
            for prompt, script in turns:
                args = ("--resume", session) if session else ()
                run = box.run(prompt, *args, script=script, timeout=120)
                if run.exit_code != 0:
                    raise RuntimeError(f"{name}: exit {run.exit_code}: {run.stderr[-1500:]}")
                session = session or run.session_id
            last = turns[-1][1][-1].parts[-1].get("text", "")
            (path,) = [p for p in run.sessions() if last in p.read_text(encoding="utf-8")]
            return {path.name: path.read_bytes()}

    return Scenario(name, "gemini_cli", about, produce, [p for p, _ in turns], list(facts), list(covers))


def has_key(key: str):
    def fact(lines):
        import json

        assert any(key in json.dumps(v) for v in lines), key
    fact.__doc__ = f"the file mentions {key}"
    return fact


SCENARIOS = [
    gemini("read_and_think", "a thought, a read_file call, then a resumed turn",
           [("read hello.txt", [g.call("read_file", {"file_path": "hello.txt"}, say="Reading it.", thought="Use read_file."),
                                g.text("It says hi there.")]),
            ("thanks", [g.text("You're welcome.")])],
           files={"hello.txt": b"hi there\n"}, facts=[has_key("functionCall"), has_key("thoughts")],
           covers=["thinking", "tool calls"]),
    gemini("parallel_calls", "one reply with two read_file calls",
           [("read both", [g.Reply([{"text": "Reading both."},
                                    {"functionCall": {"name": "read_file", "args": {"file_path": "a.txt"}}},
                                    {"functionCall": {"name": "read_file", "args": {"file_path": "b.txt"}}}]),
                           g.text("Both read.")])],
           files={"a.txt": b"alpha\n", "b.txt": b"beta\n"}, facts=[has_key("b.txt")],
           covers=["parallel tool calls"]),
    gemini("three_turns", "three plain turns, each resuming the session",
           [("first", [g.text("One.")]), ("second", [g.text("Two.")]), ("third", [g.text("Three.")])],
           covers=["resumed turns"]),
]

