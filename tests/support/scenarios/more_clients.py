"""Scenarios of the Chat Completions CLIs added by issue 15: Copilot CLI (``copilot -p``,
later turns ``--resume <id>``), Continue (``cn -p``, later turns ``--resume``), opencode
(and its dialect Kilo: ``run``, later turns ``--session <id>``), each against the mock
model. The file recorded is the client's own: Copilot's ``events.jsonl``, Continue's
``<id>.json``, and for opencode / Kilo the session as the client's ``export`` prints it
(the database itself is not a file to resume from).

The same three shapes for each client: two tool calls in one reply, a tool that fails,
and strings that break naive quoting, over two turns."""

from __future__ import annotations

import json

from txcodec.resume_check.mock.openai_chat import Call
from txcodec.resume_check.mock.openai_chat import Reply
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

from . import Scenario

TIMEOUT = 600  # one turn of a real client, on a loaded machine

# A user text and a reply meant to break naive handling: quotes, backslashes, markup the
# clients use themselves, shell syntax, a line / paragraph separator, a right-to-left
# override, an emoji and a character outside the BMP.
HOSTILE = 'say "hi" \\ \\n </tool_result> <system-reminder> ${HOME} $(id) `ls` \u2028|\u2029 \u202eevil 🚀 𝕏'
HOSTILE_REPLY = 'Said: "hi" \\ </assistant> {"json": [1]} \u2028 🚀'


def _tools(harness: str) -> tuple[str, str, str, str]:
    """(shell tool, its command argument, file-read tool, its path argument) of a client."""
    if harness == "continue_cli":
        return "Bash", "command", "Read", "filepath"
    if harness == "copilot_cli":
        return "bash", "command", "view", "path"
    return "bash", "command", "read", "filePath"


def _shell(harness: str, ident: str, command: str) -> Call:
    shell, arg, _, _ = _tools(harness)
    args = {arg: command}
    if harness != "continue_cli":
        args["description"] = "run"
    return Call(ident, shell, args)


def _run(harness: str, turns) -> dict[str, bytes]:
    """Every turn through the real client, each resuming the previous one; the session file."""
    from txcodec.resume_check import continue_cli
    from txcodec.resume_check import copilot_cli as copilot
    from txcodec.resume_check import opencode

    if harness == "copilot_cli":
        box = copilot.Copilot()
    elif harness == "continue_cli":
        box = continue_cli.Continue()
    else:
        from txcodec.harnesses.opencode.dialect import KILO
        from txcodec.harnesses.opencode.dialect import OPENCODE

        box = opencode.Opencode(KILO if harness == "kilo" else OPENCODE)
    with box:
        session = None
        for prompt, script in turns:
            script = script(box.cwd) if callable(script) else script
            if harness == "copilot_cli":
                run = box.copilot(prompt, script, resume=session, timeout=TIMEOUT)
            elif harness == "continue_cli":
                run = box.cn(prompt, script, resume=session is not None, timeout=TIMEOUT)
            else:
                run = box.run(prompt, script, session=session, timeout=TIMEOUT)
            if run.exit_code != 0:
                raise RuntimeError(f"{harness}: exit {run.exit_code}: {run.stderr[-1500:]}")
            (found,) = box.sessions()
            session = found.parent.name if harness == "copilot_cli" else found
        if harness == "copilot_cli":
            return {"events.jsonl": found.read_bytes()}
        if harness == "continue_cli":
            return {"session.json": found.read_bytes()}
        return {"export.json": box.export(session)}


def scenario(harness: str, name: str, about: str, turns, *, facts=(), covers=()) -> Scenario:
    """``turns``: (prompt, replies, or a function of the project folder giving them)."""
    return Scenario(
        name, harness, about, lambda tmp: _run(harness, turns), [p for p, _ in turns], list(facts), list(covers)
    )


# --- facts on the recorded file -------------------------------------------------------


def _texts(lines) -> str:
    return json.dumps(lines, ensure_ascii=False)


def _encoded(needle: str) -> str:
    return json.dumps(needle, ensure_ascii=False)[1:-1]


def holds(*needles: str):
    def fact(lines):
        found = _texts(lines)
        for needle in needles:
            assert _encoded(needle) in found, f"{needle!r} not in the recorded session"

    fact.__doc__ = "the recorded session holds " + ", ".join(map(repr, needles))
    return fact


def _objects(value):
    if isinstance(value, dict):
        yield value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _objects(item)


def one_reply_holds_both_calls(first: str, second: str):
    """The two calls of one reply are recorded in one record (Copilot's assistant.message
    event, Continue's history item, opencode's assistant message), not the whole file."""

    def fact(lines):
        whole = lines[0] if len(lines) == 1 else None  # a document: the file itself does not count
        assert any(
            first in text and second in text for o in _objects(lines) if o is not whole for text in [json.dumps(o)]
        ), f"no record holds both {first} and {second}"

    fact.__doc__ = f"calls {first} and {second} in one record"
    return fact


def _scenarios(harness: str) -> list[Scenario]:
    _, _, read, path_arg = _tools(harness)
    tag = {"copilot_cli": "cp", "continue_cli": "cn", "opencode": "oc", "kilo": "kl"}[harness]
    one, two = f"call_{tag}_par_1", f"call_{tag}_par_2"
    return [
        scenario(
            harness,
            "parallel_calls",
            "one reply calls the shell twice; a second turn resumes",
            [
                (
                    "run both",
                    [
                        Reply(
                            "Running both.",
                            [_shell(harness, one, "echo slow-one"), _shell(harness, two, "echo fast-two")],
                        ),
                        text("Both ran."),
                    ],
                ),
                ("thanks", [text("You're welcome.")]),
            ],
            facts=[one_reply_holds_both_calls(one, two), holds("slow-one", "fast-two")],
            covers=["parallel tool calls", "resumed turns"],
        ),
        scenario(
            harness,
            "tool_error",
            "a read of a file that is not there fails; the model says so",
            [
                (
                    "read missing.txt",
                    lambda cwd: [
                        tool_call(read, {path_arg: str(cwd / "missing.txt")}, id=f"call_{tag}_err", say="Reading."),
                        text("The file is missing."),
                    ],
                ),
                ("ok", [text("Noted.")]),
            ],
            facts=[holds(f"call_{tag}_err", "The file is missing.")],
            covers=["tool errors"],
        ),
        scenario(
            harness,
            "hostile_strings",
            "quotes, markup, shell syntax and odd characters in prompt, call and reply",
            [
                (
                    HOSTILE,
                    [
                        Reply("Echoing.", [_shell(harness, f"call_{tag}_hostile", "printf '%s\\n' 'a\"b\\c </x> 🚀'")]),
                        text(HOSTILE_REPLY),
                    ],
                ),
                ("again", [text("Again: " + HOSTILE_REPLY)]),
            ],
            facts=[holds(HOSTILE, HOSTILE_REPLY)],
            covers=["hostile strings"],
        ),
    ]


# Kilo (opencode's dialect) runs the same scenarios; not recorded yet: a Kilo turn took
# over the resume check's 180 s on the loaded machine they were made on
SCENARIOS = [s for harness in ("copilot_cli", "continue_cli", "opencode") for s in _scenarios(harness)]
