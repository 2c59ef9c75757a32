"""Claude Code 2.1.332 scenarios: ``claude -p`` (one process per prompt, later ones with
``--resume``) against the mock Messages API; the session file it wrote is recorded (with
its side folder of subagents and tool results). The same runs, recorded as their
stream-json stdout, are the stream_json scenarios (``stream_json.py``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from txcodec.resume_check.mock.anthropic import Reply
from txcodec.resume_check.mock.anthropic import error
from txcodec.resume_check.mock.anthropic import text
from txcodec.resume_check.mock.anthropic import thinking
from txcodec.resume_check.mock.anthropic import tool_use
from txcodec.resume_check.mock.anthropic import tool_uses
from txcodec.resume_check.mock.anthropic import web_fetch
from txcodec.resume_check.mock.anthropic import web_search

from ..mcp_server import COMMAND as MCP_COMMAND
from ..stream_json_scenarios import Invocation
from ..stream_json_scenarios import Scenario as Run
from ..stream_json_scenarios import run as run_claude
from . import Scenario

# a 1x1 PNG, for the Read tool to return as an image
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
# a one-page PDF saying "Hello PDF", for the Read tool to return as a document block
PDF = b"""%PDF-1.4
1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj
2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj
3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj
4 0 obj<</Length 44>>stream
BT /F1 18 Tf 20 40 Td (Hello PDF) Tj ET
endstream endobj
5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj
trailer<</Root 1 0 R>>
%%EOF
"""
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
HOSTILE = (
    '<command-name>/fake</command-name> {"type":"user"} </system-reminder> \u202eRTL\u202c '
    "emoji \U0001f600, a NUL \x00 and a lone \ud83d high surrogate"
)


def capture(
    script: list[Reply],
    prompts: list[str | Invocation],
    files: dict[str, bytes] | None = None,
    routes=None,
    folder: str = "project",
):
    """Run ``prompts`` (each a ``claude -p`` process, the later ones resuming) with
    ``files`` placed in the project folder (``folder``, below the run's temp folder;
    ``routes``: AnthropicMock.routes); return the run's capture."""
    invocations = [p if isinstance(p, Invocation) else Invocation([p]) for p in prompts]
    for i, inv in enumerate(invocations):
        inv.resume = i > 0

    def produce(tmp: Path):
        project = tmp / folder
        project.mkdir(parents=True, exist_ok=True)
        for rel, data in (files or {}).items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_bytes(data)
        replies = script(project.resolve()) if callable(script) else list(script)
        return run_claude(Run("scenario", replies, invocations, routes=routes or {}, project=folder), tmp)

    # a prompt sent as content blocks (stdin) counts by its texts
    texts = [
        t if isinstance(t, str) else "\n\n".join(b["text"] for b in t if b.get("type") == "text")
        for p in invocations
        for t in p.prompts
    ]
    return produce, texts


def session_files(cap) -> dict[str, bytes]:
    """The session file, named by its id, then its side folder (subagents, tool-results)."""
    files = {cap.session.name: cap.session.read_bytes()}
    side = cap.session.parent / cap.session_id
    if side.is_dir():
        for path in sorted(side.rglob("*")):
            if path.is_file():
                files[str(path.relative_to(cap.session.parent))] = path.read_bytes()
    return files


def claude(
    name: str,
    about: str,
    script,
    prompts,
    *,
    files=None,
    facts=(),
    covers=(),
    harness="claude_code",
    routes=None,
    seen=(),
) -> Scenario:
    """A scenario recording the session file (``harness="stream_json"``: the stdout)."""
    produce, texts = capture(script, prompts, files, routes)
    if harness == "stream_json":

        def record(tmp):
            cap = produce(tmp)
            files = {"capture.jsonl": cap.stdout, **({"input.jsonl": cap.stdin} if cap.stdin else {})}
            # the CLI's own session file of the same run: what a conversion must resume like
            return files | {f"cli_session/{k}": v for k, v in session_files(cap).items()}
    else:

        def record(tmp):
            return session_files(produce(tmp))

    return Scenario(name, harness, about, record, texts, list(facts), list(covers), list(seen))


# --- facts about the native file -------------------------------------------------------


def _blocks(lines, role, kind):
    return [
        b
        for v in lines
        if v.get("type") == role
        for b in (v.get("message") or {}).get("content") or []
        if isinstance(b, dict) and b.get("type") == kind
    ]


def has_block(role: str, kind: str, n: int = 1):
    def fact(lines):
        assert len(_blocks(lines, role, kind)) >= n, f"fewer than {n} {role} {kind} blocks"

    fact.__doc__ = f"the file holds {n}+ {role} {kind} block(s)"
    return fact


def has_errors(n: int):
    def fact(lines):
        errors = [b for b in _blocks(lines, "user", "tool_result") if b.get("is_error") is True]
        assert len(errors) >= n, f"fewer than {n} error results"

    fact.__doc__ = f"the file holds {n}+ tool results marked is_error"
    return fact


def has_text(fragment: str):
    def fact(lines):
        # ASCII-escaped, so a lone surrogate is found as its escape
        assert any(fragment in json.dumps(v) for v in lines), f"{fragment!r} not in the file"

    fact.__doc__ = f"the file holds {fragment!r}"
    return fact


def lacks_text(fragment: str):
    def fact(lines):
        assert not any(fragment in json.dumps(v) for v in lines), f"{fragment!r} is in the file"

    fact.__doc__ = f"the file does not hold {fragment!r}"
    return fact


NEW_CAVEAT = (
    "The command below was run directly in Claude Code, not sent to you as a request, and its output "
    "goes straight to the user. It's recorded here as context for later messages."
)


def caveat_wording(lines):
    """2.1.332 writes the newer local-command caveat (class 2)."""
    caveats = [
        v["message"]["content"]
        for v in lines
        if v.get("type") == "user"
        and v.get("isMeta")
        and isinstance((v.get("message") or {}).get("content"), str)
        and "local-command-caveat" in v["message"]["content"]
    ]
    assert caveats and all(NEW_CAVEAT in c for c in caveats), caveats


def compacted(trigger: str, preserved: bool):
    def fact(lines):
        boundaries = [v for v in lines if v.get("subtype") == "compact_boundary"]
        assert boundaries and boundaries[-1]["compactMetadata"]["trigger"] == trigger
        assert bool(boundaries[-1]["compactMetadata"].get("preservedSegment")) == preserved

    fact.__doc__ = f"a {trigger} compact_boundary, preservedSegment {'present' if preserved else 'absent'}"
    return fact


# a background Agent call: the subagent's model calls (their first message holds its
# prompt) run beside the parent's, so they are answered from a script of their own
BACKGROUND_TASK = "Count the files here (background task)"
BACKGROUND = {
    "script": [
        tool_use(
            "Agent",
            {
                "description": "count files",
                "prompt": BACKGROUND_TASK,
                "subagent_type": "general-purpose",
                "run_in_background": True,
            },
            "toolu_bg_1",
            say="Starting a background agent.",
        ),
        text("The agent is running in the background."),
        text("The background agent reports 1 file."),
    ],
    "routes": {
        BACKGROUND_TASK: [
            tool_use("Bash", {"command": "sleep 2; ls | wc -l"}, "toolu_bgsub_1", say="sub: counting"),
            text("sub: there is 1 file"),
        ]
    },
    "prompts": ["count the files with a background agent"],
    "files": {"a.txt": b"a\n"},
}
DOCUMENT_PROMPT = [
    {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "hello from a text document"},
        "title": "greeting.txt",
    },
    {"type": "text", "text": "what does the document say?"},
]

SCENARIOS = [
    claude(
        "redacted_thinking",
        "a turn whose reply is redacted thinking then text, then a signed thinking turn",
        [
            Reply(
                [{"type": "redacted_thinking", "data": REDACTED}, {"type": "text", "text": "Answer after redacted."}]
            ),
            thinking("the user wants more", then="More, after signed thinking.", signature="sig-scenario-1"),
        ],
        ["think about it", "and more?"],
        facts=[has_block("assistant", "redacted_thinking"), has_block("assistant", "thinking")],
        covers=["thinking", "redacted thinking", "class 1"],
    ),
    claude(
        "local_commands",
        "local slash commands (/cost runs as /usage, /context) between model turns",
        [text("First answer."), text("Second answer.")],
        ["hello", "/cost", "/context", "after the commands"],
        # 2.1.332 runs /cost as /usage and records it under that name
        facts=[caveat_wording, has_text("<local-command-stdout>"), has_text("<command-name>/usage</command-name>")],
        covers=["local slash commands", "class 2"],
    ),
    claude(
        "parallel_tools",
        "one reply calls two Bash commands; both results come back",
        [
            tool_uses(
                ("toolu_p1", "Bash", {"command": "sleep 1; echo slow"}),
                ("toolu_p2", "Bash", {"command": "echo fast"}),
                say="Running both.",
            ),
            text("Both done."),
        ],
        ["run two commands"],
        facts=[has_block("assistant", "tool_use", 2), has_block("user", "tool_result", 2)],
        covers=["parallel tool calls"],
    ),
    claude(
        "manual_compact",
        "two turns with a tool call, /compact with instructions, a turn after",
        [
            tool_use("Bash", {"command": "echo before"}, "toolu_c1", say="Checking."),
            text("Checked."),
            text("Second answer."),
            text("Summary: the user ran echo before and asked twice."),
            text("Summary."),
            text("After compaction."),
        ],
        ["first question", "second question", "/compact keep the commands", "question after compaction"],
        facts=[compacted("manual", True)],
        covers=["manual /compact with a preserved tail", "class 4"],
    ),
    claude(
        "foreground_subagent",
        "an Agent call whose subagent runs a Bash command and answers",
        [
            tool_use(
                "Agent",
                {"description": "count files", "prompt": "Count the files here", "subagent_type": "general-purpose"},
                "toolu_agent_1",
                say="Delegating.",
            ),
            tool_use("Bash", {"command": "ls | wc -l"}, "toolu_sub_1", say="sub: counting"),
            text("sub: there is 1 file"),
            text("The agent counted 1 file."),
        ],
        ["count the files with an agent"],
        files={"a.txt": b"a\n"},
        facts=[has_block("assistant", "tool_use")],
        covers=["foreground subagent"],
    ),
    claude(
        "api_error",
        "a tool call, then the API answers 500: the CLI records a synthetic error message",
        [
            tool_use("Bash", {"command": "echo hi"}, "toolu_e1", say="Trying."),
            *[error(500, "overloaded mock") for _ in range(4)],
        ],
        ["try something", "again please"],
        facts=[has_text("API Error")],
        covers=["API errors and retries"],
    ),
    claude(
        "large_output",
        "a Bash command printing more than the CLI keeps inline: persisted to tool-results",
        [tool_use("Bash", {"command": "seq 1 40000"}, "toolu_big", say="Printing."), text("Printed a lot.")],
        ["print many numbers"],
        facts=[has_text("<persisted-output>")],
        covers=["large outputs persisted to tool-results"],
    ),
    claude(
        "image_read",
        "the Read tool returns a PNG image",
        lambda project: [
            tool_use("Read", {"file_path": str(project / "pixel.png")}, "toolu_img", say="Looking."),
            text("A single pixel."),
        ],
        ["look at pixel.png"],
        files={"pixel.png": PNG},
        facts=[has_text("image/png")],
        covers=["images"],
    ),
    claude(
        "hostile_strings",
        "texts with envelope tags, JSON, RTL marks, an emoji and a lone surrogate",
        [
            text("Echo: " + HOSTILE),
            tool_use("Bash", {"command": "printf 'a\\001b'"}, "toolu_h1", say=HOSTILE),
            text("done"),
        ],
        # argv cannot carry a lone surrogate: the prompt goes on stdin as stream-json
        [Invocation(["repeat: " + HOSTILE], ["--input-format", "stream-json"], stdin=True), "run it"],
        facts=[has_text("\\ud83d")],
        covers=["hostile strings", "lone surrogates", "class 8"],
    ),
    claude(
        "custom_command",
        "a custom prompt command from .claude/commands, expanded into the prompt",
        [text("Hello, Ada!")],
        ["/greet Ada"],
        files={".claude/commands/greet.md": b"Greet $ARGUMENTS warmly, in one line.\n"},
        facts=[has_text("<command-name>/greet</command-name>")],
        covers=["custom prompt commands"],
    ),
    claude(
        "write_edit",
        "the Write tool creates a file, the Edit tool changes it",
        lambda project: [
            tool_use(
                "Write",
                {"file_path": str(project / "notes.txt"), "content": "alpha\nbeta\n"},
                "toolu_w1",
                say="Writing.",
            ),
            tool_use(
                "Edit",
                {"file_path": str(project / "notes.txt"), "old_string": "beta", "new_string": "gamma"},
                "toolu_ed1",
                say="Editing.",
            ),
            text("notes.txt now says alpha and gamma."),
        ],
        ["write notes.txt then change beta to gamma"],
        facts=[has_block("assistant", "tool_use", 2)],
        covers=["file edits"],
    ),
    claude(
        "failures",
        "a command that exits 3, one that is not found, and an Edit whose old_string is not in the file: "
        "three error results",
        lambda project: [
            tool_use("Bash", {"command": "echo partial; echo oops >&2; exit 3"}, "toolu_f1", say="Running."),
            tool_use("Bash", {"command": "no-such-command-txcodec"}, "toolu_f2", say="Trying another."),
            tool_use(
                "Edit",
                {"file_path": str(project / "notes.txt"), "old_string": "absent", "new_string": "x"},
                "toolu_f3",
                say="Editing.",
            ),
            text("All three failed."),
        ],
        ["run the failing steps"],
        files={"notes.txt": b"alpha\n"},
        facts=[has_errors(3)],
        covers=["failing commands", "a failed edit"],
    ),
    claude(
        "denied_tool",
        "Bash is disallowed: the call is refused and the model answers without it",
        [tool_use("Bash", {"command": "echo hi"}, "toolu_d1", say="Trying Bash."), text("I could not run Bash.")],
        [Invocation(["run echo hi"], ["--disallowedTools=Bash"])],
        facts=[has_block("user", "tool_result")],
        covers=["permission denials"],
    ),
    claude(
        "background_subagent",
        "a background Agent call: the turn ends, the subagent finishes, its "
        "<task-notification> starts a turn of its own",
        BACKGROUND["script"],
        BACKGROUND["prompts"],
        files=BACKGROUND["files"],
        routes=BACKGROUND["routes"],
        facts=[has_text("<task-notification>"), has_text('"run_in_background": true')],
        covers=["background subagents with task notifications"],
    ),
    claude(
        "documents",
        "a text document block in the prompt (stream-json on stdin), then the Read tool returns a PDF "
        "as a document block",
        lambda project: [
            text("The document says hello."),
            tool_use("Read", {"file_path": str(project / "doc.pdf")}, "toolu_pdf", say="Reading."),
            text("It says Hello PDF."),
        ],
        [Invocation([DOCUMENT_PROMPT], ["--input-format", "stream-json"], stdin=True), "read doc.pdf"],
        files={"doc.pdf": PDF},
        facts=[has_block("user", "document"), has_text("application/pdf")],
        covers=["documents"],
    ),
    claude(
        "interrupted_tool",
        "an SDK host interrupts while a Bash call runs; a resumed turn after",
        [
            tool_use(
                "Bash", {"command": "python3 -c 'import time; time.sleep(20); print(1)'"}, "toolu_slow", say="Sleeping."
            ),
            text("After the interruption."),
        ],
        [Invocation(["sleep a while"], ["--input-format", "stream-json"], stdin=True, interrupt=True), "go on"],
        facts=[has_text("[Request interrupted by user for tool use]")],
        covers=["interruptions"],
    ),
    claude(
        "bang_prompt",
        "'!echo ...' given to claude -p: print mode has no shell mode, so 2.1.332 sends the text to "
        "the model as a plain prompt and records no <bash-input> (the ! shell command is an interactive-only feature)",
        [text("That looks like a shell command.")],
        ["!echo hi from bang"],
        facts=[has_text('"content": "!echo hi from bang"'), lacks_text("<bash-input>"), lacks_text("<bash-stdout>")],
        covers=["! shell commands (print mode: a plain prompt)"],
    ),
]


# --- issue 31, machinery part B: skills, compactions and resumes, non-ASCII, size, length ----

SKILL_MD = b"""---
name: changelog
description: Write the changelog entry for a version. Use when asked for a changelog.
---
Write the changelog entry for version $ARGUMENTS in one line.
"""
NON_ASCII_FOLDER = "w\u00f6rk-\u00fcn\u00ef-\u65e5\u672c-\U0001f680"  # an astral character too (two UTF-16 units)
HUGE_LINES = 300_000
LONG_PROMPTS, LONG_CALLS = 40, 5  # 40 prompts of 5 calls each: 200 calls


def _long_script() -> list[Reply]:
    """Per prompt: two parallel calls, three single ones, then the answer."""
    replies = []
    for i in range(1, LONG_PROMPTS + 1):
        replies.append(
            tool_uses(
                (f"toolu_long_{i}_1", "Bash", {"command": f"echo {i}-1"}),
                (f"toolu_long_{i}_2", "Bash", {"command": f"echo {i}-2"}),
                say=f"Turn {i}: two at once.",
            )
        )
        replies += [tool_use("Bash", {"command": f"echo {i}-{j}"}, f"toolu_long_{i}_{j}") for j in (3, 4, 5)]
        replies.append(text(f"Turn {i} done."))
    return replies


def calls(n: int):
    def fact(lines):
        found = len({b["id"] for b in _blocks(lines, "assistant", "tool_use")})
        assert found == n, found

    fact.__doc__ = f"the file holds {n} distinct tool calls"
    return fact


def typed_prompts(n: int):
    def fact(lines):
        prompts = [
            v
            for v in lines
            if v.get("type") == "user"
            and not v.get("isMeta")
            and isinstance((v.get("message") or {}).get("content"), str)
        ]
        assert len(prompts) >= n, len(prompts)

    fact.__doc__ = f"the file holds {n}+ typed prompts"
    return fact


def boundaries(n: int):
    def fact(lines):
        found = [v for v in lines if v.get("subtype") == "compact_boundary"]
        assert len(found) == n, len(found)

    fact.__doc__ = f"the file holds {n} compact_boundary records"
    return fact


def cwd_has(fragment: str):
    def fact(lines):
        cwds = {v["cwd"] for v in lines if isinstance(v.get("cwd"), str)}
        assert cwds and all(fragment in c for c in cwds), cwds

    fact.__doc__ = f"every record's cwd holds {fragment!r}"
    return fact


def claude_in(folder: str, name: str, about: str, script, prompts, *, files=None, facts=(), covers=()) -> Scenario:
    """A Claude Code scenario whose work folder is named ``folder`` (not ``project``)."""
    produce, texts = capture(script, prompts, files, None, folder)
    return Scenario(
        name, "claude_code", about, lambda tmp: session_files(produce(tmp)), texts, list(facts), list(covers)
    )


def part_b_scenarios() -> list[Scenario]:
    return [
        claude(
            "skill",
            "a project skill (.claude/skills/changelog/SKILL.md) invoked by the model with the Skill tool, "
            "then typed by the user as /changelog 2.1",
            [
                tool_use("Skill", {"skill": "changelog", "args": "2.0"}, "toolu_skill_1", say="Using the skill."),
                text("2.0: the first changelog entry."),
                text("2.1: the second changelog entry."),
            ],
            ["write the changelog entry for 2.0", "/changelog 2.1"],
            files={".claude/skills/changelog/SKILL.md": SKILL_MD},
            facts=[
                has_text('"name": "Skill"'),
                # message, name, args, unindented (a built-in such as /compact: name first, indented)
                has_text(
                    "<command-message>changelog</command-message>\\n<command-name>/changelog</command-name>\\n"
                    "<command-args>2.1</command-args>"
                ),
                has_text("Launching skill: changelog"),
            ],
            covers=["skills (Skill tool)", "/skill typed with arguments", "class 4"],
        ),
        claude(
            "compact_twice",
            "six claude -p processes (five --resume): a tool call, /compact, a turn, /compact with "
            "instructions, a turn after",
            [
                tool_use("Bash", {"command": "echo one"}, "toolu_ct1", say="Checking."),
                text("First answer."),
                text("Second answer."),
                # each /compact makes two requests (as in manual_compact): the summary, then one more
                text("Summary one: the user ran echo one."),
                text("Summary."),
                text("Third answer."),
                text("Summary two: echo one, then three answers."),
                text("Summary."),
                text("Fourth answer."),
            ],
            [
                "first question",
                "second question",
                "/compact",
                "third question",
                "/compact keep the answers",
                "fourth question",
            ],
            facts=[boundaries(2), typed_prompts(4)],
            covers=["two compactions in one session", "a session resumed five times"],
        ),
        claude_in(
            NON_ASCII_FOLDER,
            "non_ascii",
            "a work folder with umlauts, CJK and an astral emoji (Claude's project folder name counts "
            "UTF-16 units), prompts and a command output that are not ASCII, then a command printing "
            f"{HUGE_LINES} lines (persisted to tool-results under that folder, a preview inline)",
            [
                tool_use("Bash", {"command": "cat \u65e5\u672c\u8a9e.txt; pwd"}, "toolu_na1", say="Lese."),
                text("Es steht \u201e\u00fcn\u00efcode \u2713\u201c darin."),
                tool_use(
                    "Bash", {"command": f"yes line | head -n {HUGE_LINES}; echo end"}, "toolu_huge", say="Drucke."
                ),
                text("Gern geschehen \u2014 \u3055\u3088\u3046\u306a\u3089 \U0001f44b"),
            ],
            [
                "Gr\u00fc\u00dfe aus K\u00f6ln \u2014 was steht in \u65e5\u672c\u8a9e.txt?",
                f"Danke sch\u00f6n \u2713 \U0001f680 \u2014 jetzt {HUGE_LINES} Zeilen, bitte",
            ],
            files={"\u65e5\u672c\u8a9e.txt": "\u00fcn\u00efcode \u2713\n".encode()},
            facts=[cwd_has("\u65e5\u672c-\U0001f680"), has_text("Gr\\u00fc\\u00dfe"), has_text("<persisted-output>")],
            covers=["non-ASCII work folder", "non-ASCII prompts", "a 300k-line tool output"],
        ),
        claude(
            "long_session",
            f"{LONG_PROMPTS} prompts, a claude -p process each (the later ones --resume), each answered after "
            f"{LONG_CALLS} Bash calls (two parallel, three single): {LONG_PROMPTS * LONG_CALLS} calls",
            _long_script(),
            # (prompts queued on one process's stream-json stdin are merged into fewer turns)
            [f"prompt {i}: run the commands" for i in range(1, LONG_PROMPTS + 1)],
            facts=[calls(LONG_PROMPTS * LONG_CALLS), typed_prompts(LONG_PROMPTS)],
            covers=["a long session (40 prompts, 200 calls)"],
        ),
    ]


SCENARIOS += part_b_scenarios()


# --- issue 31: the API's server tools (web search, web fetch) -------------------------------


def server_tool_scenarios() -> list[Scenario]:
    """Replies holding the Messages API's server tools, streamed by the mock as the API does
    (the call's input as input_json_delta, its result block whole): claude records the
    blocks in the assistant message and sends them back on resume."""
    return [
        claude(
            "server_tools",
            "a reply with a server-side web search (server_tool_use + web_search_tool_result), "
            "then one with a web fetch (server_tool_use + web_fetch_tool_result), each before the answer",
            [
                web_search("txcodec release", [("https://example.com/txcodec", "txcodec 1.0")], "Found the release."),
                web_fetch("https://example.com/txcodec", "txcodec 1.0 is out.", "The page says it is out."),
            ],
            ["search the web for the txcodec release", "fetch that page"],
            facts=[
                has_block("assistant", "server_tool_use", 2),
                has_block("assistant", "web_search_tool_result"),
                has_block("assistant", "web_fetch_tool_result"),
            ],
            covers=["web search", "web fetch", "server tools", "class 2"],
        )
    ]


SCENARIOS += server_tool_scenarios()


# --- issue 31, machinery: MCP behind ToolSearch, hooks, plan mode, skills, resumes --------------

# the notes server (tests/support/mcp_server.py), started by claude from --mcp-config
# (--mcp-config takes several values: a flag after it ends the list before the prompt)
MCP_CONFIG = json.dumps({"mcpServers": {"notes": {"command": MCP_COMMAND[0], "args": MCP_COMMAND[1:]}}})
# ToolSearch on for every model (the mock's base URL would leave it off): the MCP tool is
# deferred, announced by a deferred_tools_delta attachment and loaded by a tool_reference
TOOL_SEARCH_SETTINGS = json.dumps({"env": {"ENABLE_TOOL_SEARCH": "true"}}).encode()


def machinery_scenarios() -> list[Scenario]:
    return [
        claude(
            "mcp_tool_search",
            "a stdio MCP server (tests/support/mcp_server.py, --mcp-config) whose tool is deferred: "
            "the model loads it with ToolSearch (a tool_reference result), calls it, and calls it "
            "again after a resume",
            [
                tool_use(
                    "ToolSearch",
                    {"query": "select:mcp__notes__lookup", "max_results": 1},
                    "toolu_ts1",
                    say="Finding the tool.",
                ),
                tool_use("mcp__notes__lookup", {"key": "alpha"}, "toolu_mcp1", say="Looking it up."),
                text("The note says Alpha is the first note."),
                tool_use("mcp__notes__lookup", {"key": "ünïcode"}, "toolu_mcp2", say="Again."),
                text("It keeps non-ASCII text."),
            ],
            [
                Invocation(
                    ["what does the alpha note say? ask the notes server"],
                    ["--mcp-config", MCP_CONFIG, "--strict-mcp-config"],
                ),
                Invocation(["and the ünïcode note?"], ["--mcp-config", MCP_CONFIG, "--strict-mcp-config"]),
            ],
            files={".claude/settings.json": TOOL_SEARCH_SETTINGS},
            facts=[
                has_text('"type": "tool_reference"'),
                has_text("deferred_tools_delta"),
                has_text("Alpha is the first note."),
            ],
            covers=["MCP tools (stdio server)", "ToolSearch", "deferred tools"],
        ),
    ]


SCENARIOS += machinery_scenarios()


# --- issue 31, machinery: hooks that give the model context ------------------------------------

HOOK_TEXTS = {
    "SessionStart": "HOOK-SESSION-START: the repo uses tabs",
    "UserPromptSubmit": "HOOK-PROMPT: the user is on call today",
    "PreToolUse": "HOOK-PRE-TOOL: commands run in a sandbox",
    "PostToolUse": "HOOK-POST-TOOL: the output was checked",
}


def hook_settings(texts: dict[str, str]) -> bytes:
    """A project's .claude/settings.json whose hooks (a command each) print ``additionalContext``
    for their event; the tool hooks match every tool."""

    def entry(event: str, text: str) -> dict:
        out = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
        hook = {"hooks": [{"type": "command", "command": f"printf '%s' '{out}'"}]}
        return {"matcher": "*", **hook} if event in ("PreToolUse", "PostToolUse") else hook

    return json.dumps({"hooks": {event: [entry(event, text)] for event, text in texts.items()}}).encode()


def hook_scenarios() -> list[Scenario]:
    return [
        claude(
            "hooks",
            "SessionStart, UserPromptSubmit, PreToolUse and PostToolUse hooks (the project's "
            ".claude/settings.json) each give additionalContext around a Bash call; a second prompt "
            "after a resume",
            [
                tool_use("Bash", {"command": "echo hooked"}, "toolu_hk1", say="Running it."),
                text("It printed hooked."),
                text("Still here."),
            ],
            ["run echo hooked", "and now?"],
            files={".claude/settings.json": hook_settings(HOOK_TEXTS)},
            facts=[has_text(text) for text in HOOK_TEXTS.values()],
            seen=[
                HOOK_TEXTS["SessionStart"],
                "run echo hooked",
                HOOK_TEXTS["UserPromptSubmit"],
                "Running it.",
                HOOK_TEXTS["PreToolUse"],
                HOOK_TEXTS["PostToolUse"],
                "It printed hooked.",
                "and now?",
                HOOK_TEXTS["UserPromptSubmit"],
            ],
            covers=["hooks: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse additionalContext", "class 3"],
        ),
    ]


SCENARIOS += hook_scenarios()


# --- issue 31, machinery: plan mode -------------------------------------------------------------

PLAN = "1. Write hello.txt saying hi.\n2. Check it."


def plan_scenarios() -> list[Scenario]:
    return [
        claude(
            "plan_mode",
            "claude -p --permission-mode plan: the model reads in plan mode, calls ExitPlanMode with its "
            "plan, then works; a second prompt after a resume",
            lambda project: [
                tool_use("Bash", {"command": "ls"}, "toolu_pl1", say="Looking around first."),
                tool_use("ToolSearch", {"query": "select:ExitPlanMode", "max_results": 1}, "toolu_pl2"),
                tool_use("ExitPlanMode", {"plan": PLAN}, "toolu_pl3", say="Here is the plan."),
                tool_use(
                    "Write", {"file_path": str(project / "hello.txt"), "content": "hi\n"}, "toolu_pl4", say="Writing."
                ),
                text("hello.txt says hi."),
                text("Done, nothing else to do."),
            ],
            [
                Invocation(
                    ["plan then write hello.txt"],
                    ["--permission-mode", "plan", "--input-format", "stream-json"],
                    stdin=True,
                    approve=True,
                ),
                "anything else?",
            ],
            facts=[
                has_text('"type": "plan_mode"'),
                has_text('"type": "plan_mode_exit"'),
                has_text("User has approved exiting plan mode"),
                has_text('"permissionMode": "plan"'),
            ],
            # the plan_mode and plan_mode_exit attachments as 2.1.332 renders them
            seen=[
                "plan then write hello.txt",
                "Plan mode is active.",
                "Looking around first.",
                "User has approved exiting plan mode",
                "You have exited plan mode.",
                "Writing.",
                "anything else?",
            ],
            covers=["plan mode (--permission-mode plan, ExitPlanMode)", "class 3"],
        ),
    ]


SCENARIOS += plan_scenarios()
