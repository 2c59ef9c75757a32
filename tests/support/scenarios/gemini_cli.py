"""Gemini CLI scenarios: ``gemini -p`` (later turns ``--resume``) against the mock
Gemini API; the session file with the whole conversation is recorded (see
tests/harnesses/gemini_cli/test_gemini_cli_real.py for why a run can leave a second, startup-only file)."""

from __future__ import annotations

import json
from pathlib import Path

from txcodec.resume_check import gemini_cli as g

from . import Scenario


def gemini(name: str, about: str, turns, *, files=None, facts=(), covers=(), summary=None) -> Scenario:
    """``summary``: the mock's answer to every chat-compression call, however many the
    CLI makes (:func:`txcodec.resume_check.gemini_cli.is_compression`); the turns' scripts get only
    the turn calls."""

    def produce(tmp: Path) -> dict[str, bytes]:
        with g.Sandbox(root=tmp / "gemini") as box:
            for rel, data in (files or {}).items():
                (box.cwd / rel).parent.mkdir(parents=True, exist_ok=True)
                (box.cwd / rel).write_bytes(data)
            session = None
            for prompt, script in turns:
                args = ("--resume", session) if session else ()
                run = box.run(prompt, *args, script=script, timeout=120, summary=summary)
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


def long_answer(n: int) -> g.Reply:
    """A reply long enough that compressing the history before it pays off: 0.61.0 keeps
    a compression only when the new history's estimated tokens are fewer than the old
    (``COMPRESSION_FAILED_INFLATED_TOKEN_COUNT`` otherwise), and the new one carries the
    session context again. Varied words, or the CLI's loop detection stops the turn."""
    return g.text(f"Answer {n}. " + " ".join(f"fact{i}={i * 7919 % 10007}" for i in range(700)))


# model.compressionThreshold: the fraction of the model's token limit over which the CLI
# compresses the history before sending a turn (ChatCompressionService.compress, 0.61.0;
# the history's tokens are estimated from its text on a resumed run): tiny, so before
# every later turn. A project .gemini/settings.json; the resume check runs without it.
COMPRESS_SETTINGS = json.dumps({"model": {"compressionThreshold": 0.00001}}).encode()
SNAPSHOT = "<state_snapshot>Summary: the user asked for turns 1 and 2; each answer listed facts.</state_snapshot>"
ACK = "Got it. Thanks for the additional context!"  # the model turn 0.61.0 puts after the summary


def compressed_history(n: int):
    def fact(lines):
        """Each compression rewrites the file's history with a ``$set`` of ``messages``:
        the session context, the summary as a user message, the CLI's fixed model
        acknowledgement, then the part of the history it kept; the last one holds no
        turn from before it."""
        sets = [v["$set"]["messages"] for v in lines if isinstance((v.get("$set") or {}).get("messages"), list)]
        found = [
            m for m in sets if any(x.get("type") == "user" and SNAPSHOT in json.dumps(x.get("content")) for x in m)
        ]
        assert len(found) >= n, f"{len(found)} compressed histories"
        for messages in found:
            at = next(i for i, x in enumerate(messages) if SNAPSHOT in json.dumps(x.get("content")))
            assert messages[at + 1]["type"] == "gemini" and ACK in json.dumps(messages[at + 1]["content"])
        assert "Answer 1." not in json.dumps(found[-1]) and "Answer 2." not in json.dumps(found[-1])

    fact.__doc__ = f"{n}+ compressions, each a $set.messages led by the summary and the CLI's acknowledgement"
    return fact


SCENARIOS = [
    gemini(
        "read_and_think",
        "a thought, a read_file call, then a resumed turn",
        [
            (
                "read hello.txt",
                [
                    g.call("read_file", {"file_path": "hello.txt"}, say="Reading it.", thought="Use read_file."),
                    g.text("It says hi there."),
                ],
            ),
            ("thanks", [g.text("You're welcome.")]),
        ],
        files={"hello.txt": b"hi there\n"},
        facts=[has_key("functionCall"), has_key("thoughts")],
        covers=["thinking", "tool calls"],
    ),
    gemini(
        "parallel_calls",
        "one reply with two read_file calls",
        [
            (
                "read both",
                [
                    g.Reply(
                        [
                            {"text": "Reading both."},
                            {"functionCall": {"name": "read_file", "args": {"file_path": "a.txt"}}},
                            {"functionCall": {"name": "read_file", "args": {"file_path": "b.txt"}}},
                        ]
                    ),
                    g.text("Both read."),
                ],
            )
        ],
        files={"a.txt": b"alpha\n", "b.txt": b"beta\n"},
        facts=[has_key("b.txt")],
        covers=["parallel tool calls"],
    ),
    gemini(
        "three_turns",
        "three plain turns, each resuming the session",
        [("first", [g.text("One.")]), ("second", [g.text("Two.")]), ("third", [g.text("Three.")])],
        covers=["resumed turns"],
    ),
    gemini(
        "compression",
        "three resumed turns with a tiny model.compressionThreshold: the CLI compresses the "
        "history before turns 2 and 3 (a summary call and a verification call, answered by what they are)",
        [("turn 1", [long_answer(1)]), ("turn 2", [long_answer(2)]), ("turn 3", [g.text("Answer 3.")])],
        files={".gemini/settings.json": COMPRESS_SETTINGS},
        summary=g.text(SNAPSHOT),
        facts=[compressed_history(2)],
        covers=["compression", "autocompaction"],
    ),
]
