"""Build the synthetic Claude Code golden cases: one folder per row of seed 004's fixture
checklist (section 12), each a small session folder shaped like Claude Code writes it
(compact JSON, keys in the client's order, non-ASCII and U+2028 written raw).

    python golden/claude_code/make_cases.py

No private data: paths, ids, signatures and text are made up. Each folder has a
``case.toml`` naming the checklist row it covers; tests/harnesses/claude_code/test_claude_code_golden.py checks
that every shape is really there, that every file round-trips byte for byte, and that
no line decodes as opaque.
"""

from __future__ import annotations

import json
import shutil
import uuid as uuidlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
CWD = "/home/dev/src/shop-api"
VERSION = "2.1.276"
NS = uuidlib.UUID("6f1c2a4e-0b7d-4e8a-9c3f-5a1b2c3d4e5f")


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Session:
    """Appends records with a parentUuid chain, deterministic ids and timestamps."""

    def __init__(self, case: str, sidechain: bool = False, agent_id: str | None = None, sid: str | None = None):
        self.case = case
        self.sid = sid or str(uuidlib.uuid5(NS, case))
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.lines: list[str] = []
        self.parent: str | None = None
        self.n = 0

    def uid(self) -> str:
        self.n += 1
        return str(uuidlib.uuid5(NS, f"{self.case}/{self.agent_id}/{self.n}"))

    def stamp(self) -> str:
        return f"2026-09-18T10:{self.n // 60:02d}:{self.n % 60:02d}.{(self.n * 37) % 1000:03d}Z"

    def raw(self, record: dict) -> dict:
        self.lines.append(dumps(record))
        return record

    def envelope(self, kind: str, body: dict, **extra: object) -> dict:
        uid = self.uid()
        rec: dict = {"parentUuid": self.parent, "isSidechain": self.sidechain}
        if self.agent_id:
            rec["agentId"] = self.agent_id
        rec.update(extra.pop("_head", {}))  # type: ignore[arg-type]
        rec["type"] = kind
        rec.update(body)
        rec["uuid"] = uid
        rec["timestamp"] = self.stamp()
        rec.update(extra)
        rec.update(userType="external", entrypoint="cli", cwd=CWD, sessionId=self.sid, version=VERSION,
                   gitBranch="main")
        self.parent = uid
        return self.raw(rec)

    def prompt(self, text: str, **extra: object) -> dict:
        extra.setdefault("promptId", str(uuidlib.uuid5(NS, f"{self.case}/prompt/{self.n}")))
        if extra["promptId"] is None:  # subagent prompts carry none
            del extra["promptId"]
        return self.envelope("user", {"message": {"role": "user", "content": text}}, permissionMode="default",
                             **extra)

    def assistant(self, blocks: list[dict], model: str = "claude-opus-5", stop: str | None = "tool_use",
                  **extra: object) -> list[dict]:
        """One record per content block, sharing message.id (seed 004 section 8)."""
        mid = f"msg_01{uuidlib.uuid5(NS, f'{self.case}/m/{self.n}').hex[:22]}"
        req = f"req_011{uuidlib.uuid5(NS, f'{self.case}/r/{self.n}').hex[:21]}"
        out = []
        for i, block in enumerate(blocks):
            message = {"model": model, "id": mid, "type": "message", "role": "assistant", "content": [block],
                       "stop_reason": stop, "stop_sequence": None,
                       "usage": {"input_tokens": 6, "cache_creation_input_tokens": 2048,
                                 "cache_read_input_tokens": 18211, "output_tokens": 96 + i,
                                 "service_tier": "standard"}}
            out.append(self.envelope("assistant", {"message": message}, _head={}, requestId=req, apiBlockIndex=i,
                                     **extra))
        return out

    def result(self, tool_id: str, content: object, carrier: object = None, is_error: bool | None = None,
               **extra: object) -> dict:
        block: dict = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        body: dict = {"message": {"role": "user", "content": [block]}}
        if carrier is not None:
            extra["toolUseResult"] = carrier
        extra["sourceToolAssistantUUID"] = self.parent
        return self.envelope("user", body, **extra)

    def write(self, folder: Path, relative: str | None = None) -> Path:
        path = folder / (relative or f"{self.sid}.jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        return path


def tool_id(case: str, n: int) -> str:
    return "toolu_01" + uuidlib.uuid5(NS, f"{case}/tool/{n}").hex[:22]


def sig(case: str, n: int = 0) -> str:
    return "EqQB" + uuidlib.uuid5(NS, f"{case}/sig/{n}").hex * 4


def bash(tid: str, command: str, description: str) -> dict:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command, "description": description}}


def bash_carrier(stdout: str, stderr: str = "", **extra: object) -> dict:
    return {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False, "noOutputExpected": False,
            **extra}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


# --- one builder per checklist row ------------------------------------------------------

CASES: dict[str, tuple[str, list[str]]] = {}


def case(name: str, row: str, shapes: list[str]):
    def register(fn):
        CASES[name] = (row, shapes)
        fn.case = name
        return fn

    return register


@case("streaming_duplication", "Streaming duplication", ["assistant turn split across content blocks (apiBlockIndex > 0)"])
def streaming_duplication(folder: Path) -> None:
    s = Session("streaming_duplication")
    s.prompt("Why does the order service return 500 on empty carts?")
    t = tool_id(s.case, 1)
    s.assistant([{"type": "thinking", "thinking": "", "signature": sig(s.case)},
                 text("Let me look at the handler first."),
                 {"type": "tool_use", "id": t, "name": "Read", "input": {"file_path": f"{CWD}/orders/handler.py"}}])
    body = "     1\tdef checkout(cart):\n     2\t    return sum(i.price for i in cart.items) / len(cart.items)\n"
    s.result(t, body, {"type": "text", "file": {"filePath": f"{CWD}/orders/handler.py", "content": body,
                                                  "numLines": 2, "startLine": 1, "totalLines": 2}})
    s.assistant([text("The handler divides by `len(cart.items)`, which is zero for an empty cart.")], stop="end_turn")
    s.write(folder)


@case("bash_carriers", "Bash carrier variants", ["success with structured carrier", "background task",
                                                "git-operation enrichment"])
def bash_carriers(folder: Path) -> None:
    s = Session("bash_carriers")
    s.prompt("Run the tests, start the dev server and commit the fix.")
    t1, t2, t3 = (tool_id(s.case, i) for i in (1, 2, 3))
    s.assistant([bash(t1, "pytest -q tests/test_orders.py", "Run order tests")])
    s.result(t1, "4 passed in 0.31s", bash_carrier("4 passed in 0.31s"), is_error=False)
    s.assistant([bash(t2, "make dev", "Start dev server") | {"input": {"command": "make dev", "description":
                                                                      "Start dev server", "run_in_background": True}}])
    s.result(t2, "Command running in background with ID: bash_1", bash_carrier("", backgroundTaskId="bash_1"),
             is_error=False)
    s.assistant([bash(t3, "git commit -am 'Guard empty carts'", "Commit the fix")])
    out = "[main 4f2a9c1] Guard empty carts\n 1 file changed, 3 insertions(+)"
    s.result(t3, out, bash_carrier(out, gitOperation={"type": "commit", "sha": "4f2a9c1"}), is_error=False)
    s.write(folder)


@case("failure", "Failure", ["Bash failure (is_error true)", "non-Bash failure"])
def failure(folder: Path) -> None:
    s = Session("failure")
    s.prompt("Build the docs.")
    t1, t2 = tool_id(s.case, 1), tool_id(s.case, 2)
    s.assistant([bash(t1, "make docs", "Build docs")])
    err = "make: *** No rule to make target 'docs'.  Stop."
    s.result(t1, f"Exit code 2\n{err}", "Error: Exit code 2\n" + err, is_error=True)
    s.assistant([{"type": "tool_use", "id": t2, "name": "Read", "input": {"file_path": f"{CWD}/docs/Makefile"}}])
    s.result(t2, "<tool_use_error>File does not exist.</tool_use_error>", "Error: File does not exist.",
             is_error=True)
    s.assistant([text("There is no docs target and no docs/Makefile.")], stop="end_turn")
    s.write(folder)


@case("persisted_output", "Persisted output", ["Bash result externalized to tool-results/"])
def persisted_output(folder: Path) -> None:
    s = Session("persisted_output")
    s.prompt("Show me the full dependency tree.")
    t = tool_id(s.case, 1)
    s.assistant([bash(t, "pip list --format=freeze", "List installed packages")])
    rel = f"{s.sid}/tool-results/b7x2k9q1m.txt"
    full = "".join(f"package-{i:03d}==1.{i}.0\n" for i in range(400))
    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_text(full, encoding="utf-8")
    marker = "<persisted-output>\nOutput too large (7.6KB). Full output saved to: " \
             f"/home/dev/.claude/projects/-home-dev-src-shop-api/{rel}\n\nPreview (first 2KB):\n" + full[:200] + \
             "\n...\n</persisted-output>"
    s.result(t, marker, bash_carrier(full[:200], persistedOutputPath=f"/home/dev/.claude/projects/"
                                                 f"-home-dev-src-shop-api/{rel}", persistedOutputSize=len(full)),
             is_error=False)
    s.write(folder)


@case("carrier_type_mismatch", "Carrier type mismatch", ["toolUseResult as a bare string", "as an array",
                                                        "as a JSON-encoded string"])
def carrier_type_mismatch(folder: Path) -> None:
    s = Session("carrier_type_mismatch")
    s.prompt("Try the three lookups.")
    t1, t2, t3 = (tool_id(s.case, i) for i in (1, 2, 3))
    s.assistant([bash(t1, "false", "Fail on purpose")])
    s.result(t1, "Exit code 1", "Error: Exit code 1", is_error=True)
    s.assistant([{"type": "tool_use", "id": t2, "name": "mcp__search__lookup", "input": {"q": "orders"}}])
    s.result(t2, [text("orders.py"), text("orders_test.py")], [text("orders.py"), text("orders_test.py")])
    s.assistant([{"type": "tool_use", "id": t3, "name": "mcp__search__stats", "input": {}}])
    s.result(t3, '{"files":2}', dumps({"files": 2}))
    s.write(folder)


@case("edit_read_write", "Edit/Read/Write variants", ["Edit with structuredPatch", "Read image", "Read parts",
                                                     "Read file_unchanged", "Write create"])
def edit_read_write(folder: Path) -> None:
    s = Session("edit_read_write")
    s.prompt("Guard the division, then look at the diagram and the spec.")
    t = [tool_id(s.case, i) for i in range(5)]
    path = f"{CWD}/orders/handler.py"
    old, new = "    return sum(i.price for i in cart.items) / len(cart.items)", \
        "    if not cart.items:\n        return 0\n    return sum(i.price for i in cart.items) / len(cart.items)"
    s.assistant([{"type": "tool_use", "id": t[0], "name": "Edit",
                  "input": {"file_path": path, "old_string": old, "new_string": new}}])
    s.result(t[0], f"The file {path} has been updated.",
             {"filePath": path, "oldString": old, "newString": new, "originalFile": "def checkout(cart):\n" + old,
              "structuredPatch": [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 4,
                                   "lines": [" def checkout(cart):", "+    if not cart.items:", "+        return 0",
                                             " " + old.strip("\n")]}],
              "userModified": False, "replaceAll": False})
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    s.assistant([{"type": "tool_use", "id": t[1], "name": "Read", "input": {"file_path": f"{CWD}/docs/flow.png"}}])
    s.result(t[1], [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}],
             {"type": "image", "file": {"base64": png, "type": "image/png", "originalSize": 70,
                                        "dimensions": {"originalWidth": 1, "originalHeight": 1}}})
    s.assistant([{"type": "tool_use", "id": t[2], "name": "Read", "input": {"file_path": f"{CWD}/docs/spec.pdf",
                                                                         "pages": "1-2"}}])
    s.result(t[2], [text("PDF pages 1-2 of spec.pdf")],
             {"type": "parts", "file": {"filePath": f"{CWD}/docs/spec.pdf", "count": 2, "originalSize": 48213}})
    s.assistant([{"type": "tool_use", "id": t[3], "name": "Read", "input": {"file_path": path}}])
    s.result(t[3], "File unchanged since last read.", {"type": "file_unchanged", "file": {"filePath": path}})
    s.assistant([{"type": "tool_use", "id": t[4], "name": "Write",
                  "input": {"file_path": f"{CWD}/CHANGELOG.md", "content": "- Guard empty carts\n"}}])
    s.result(t[4], f"File created successfully at: {CWD}/CHANGELOG.md",
             {"type": "create", "filePath": f"{CWD}/CHANGELOG.md", "content": "- Guard empty carts\n",
              "structuredPatch": [], "originalFile": None})
    s.write(folder)


def _agent_transcript(case_name: str, sid: str, agent_id: str, prompt: str, answer: str) -> Session:
    a = Session(case_name, sidechain=True, agent_id=agent_id, sid=sid)
    a.prompt(prompt, promptId=None)
    a.assistant([text(answer)], model="claude-fable-5", stop="end_turn")
    return a


@case("agent_launch", "Agent launch vs result", ["async launch", "synchronous result with usage and tool stats",
                                                "the parent's Agent call"])
def agent_launch(folder: Path) -> None:
    s = Session("agent_launch")
    s.prompt("Audit the payment module in the background and summarize the README now.")
    t1, t2 = tool_id(s.case, 1), tool_id(s.case, 2)
    a1, a2 = "a1f3c5e7a9b1d3f50", "a2e4d6c8b0a2e4d61"
    s.assistant([{"type": "tool_use", "id": t1, "name": "Agent",
                  "input": {"description": "Audit payments", "prompt": "Audit payments/ for unchecked errors.",
                            "subagent_type": "general-purpose", "model": "sonnet", "run_in_background": True}}])
    s.result(t1, [text("Async agent launched successfully.\nagentId: " + a1)],
             {"isAsync": True, "status": "async_launched", "agentId": a1, "description": "Audit payments",
              "prompt": "Audit payments/ for unchecked errors.", "resolvedModel": "claude-fable-5",
              "outputFile": f"/tmp/claude/tasks/{a1}.output", "canReadOutputFile": True})
    s.assistant([{"type": "tool_use", "id": t2, "name": "Agent",
                  "input": {"description": "Summarize README", "prompt": "Summarize README.md in 3 bullets.",
                            "subagent_type": "Explore"}}])
    s.result(t2, [text("- REST API for orders\n- Postgres\n- Deployed with Docker")],
             {"status": "completed", "agentId": a2, "agentType": "Explore", "prompt": "Summarize README.md in 3 bullets.",
              "content": [text("- REST API for orders\n- Postgres\n- Deployed with Docker")],
              "totalDurationMs": 8123, "totalTokens": 5120, "totalToolUseCount": 1,
              "usage": {"input_tokens": 12, "output_tokens": 88, "cache_read_input_tokens": 5020},
              "toolStats": {"readCount": 1, "searchCount": 0, "bashCount": 0}})
    s.write(folder)
    for agent, tid, kind, prompt, answer in ((a1, t1, "general-purpose", "Audit payments/ for unchecked errors.",
                                              "Two unchecked errors in payments/refund.py."),
                                             (a2, t2, "Explore", "Summarize README.md in 3 bullets.",
                                              "- REST API for orders\n- Postgres\n- Deployed with Docker")):
        _agent_transcript(s.case, s.sid, agent, prompt, answer).write(folder, f"{s.sid}/subagents/agent-{agent}.jsonl")
        meta = {"agentType": kind, "description": prompt[:20], "toolUseId": tid, "spawnDepth": 1}
        (folder / s.sid / "subagents" / f"agent-{agent}.meta.json").write_text(dumps(meta), encoding="utf-8")


@case("subagent_lineage", "Subagent lineage", ["subagent record", "nested subagent (parentAgentId)",
                                              "spawn-metadata join key (toolUseId + agentType)"])
def subagent_lineage(folder: Path) -> None:
    s = Session("subagent_lineage")
    s.prompt("Review the diff with a reviewer agent.")
    t = tool_id(s.case, 1)
    parent, child = "a3b5c7d9e1f3a5b70", "a4c6e8a0c2e4a6c81"
    s.assistant([{"type": "tool_use", "id": t, "name": "Agent",
                  "input": {"description": "Review diff", "prompt": "Review the staged diff.",
                            "subagent_type": "reviewer"}}])
    s.result(t, [text("Looks good; one nit in handler.py.")],
             {"status": "completed", "agentId": parent, "content": [text("Looks good; one nit in handler.py.")],
              "totalDurationMs": 9000, "totalTokens": 4000, "totalToolUseCount": 1})
    s.write(folder)
    sub = folder / s.sid / "subagents"
    a = Session(s.case, sidechain=True, agent_id=parent, sid=s.sid)
    a.prompt("Review the staged diff.", promptId=None)
    nt = tool_id(s.case, 2)
    a.assistant([{"type": "tool_use", "id": nt, "name": "Agent",
                  "input": {"description": "Check style", "prompt": "Check style of handler.py.",
                            "subagent_type": "linter"}}], model="claude-fable-5")
    a.result(nt, [text("One line too long.")], is_error=None)
    a.assistant([text("Looks good; one nit in handler.py.")], model="claude-fable-5", stop="end_turn")
    a.write(folder, f"{s.sid}/subagents/agent-{parent}.jsonl")
    _agent_transcript(s.case, s.sid, child, "Check style of handler.py.", "One line too long.").write(
        folder, f"{s.sid}/subagents/agent-{child}.jsonl")
    (sub / f"agent-{parent}.meta.json").write_text(
        dumps({"agentType": "reviewer", "description": "Review diff", "toolUseId": t, "spawnDepth": 1}), "utf-8")
    (sub / f"agent-{child}.meta.json").write_text(
        dumps({"agentType": "linter", "description": "Check style", "toolUseId": nt, "parentAgentId": parent,
               "spawnDepth": 2}), "utf-8")


@case("task_notification", "Subagent result delivery", ["task-notification user record"])
def task_notification(folder: Path) -> None:
    s = Session("task_notification")
    s.prompt("Start the audit in the background.")
    body = ("<task-notification>\n<task-id>a1f3c5e7a9b1d3f50</task-id>\n<tool-use-id>toolu_01abc</tool-use-id>\n"
            "<status>completed</status>\n<summary>Agent \"Audit payments\" completed</summary>\n"
            "<result>Two unchecked errors in payments/refund.py.</result>\n</task-notification>")
    s.envelope("user", {"message": {"role": "user", "content": body}}, isMeta=True,
               origin={"kind": "task-notification"}, promptSource="system")
    s.assistant([text("The audit found two unchecked errors in payments/refund.py.")], stop="end_turn")
    s.write(folder)


@case("session_lineage", "Session lineage", ["fork/resume link (forkedFrom)", "resume leaf pointer (last-prompt)",
                                            "mid-session model change"])
def session_lineage(folder: Path) -> None:
    s = Session("session_lineage")
    origin = {"sessionId": "0d5e2b8c-3f4a-4b6c-9d1e-7a8b9c0d1e2f", "messageUuid": "9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4"}
    s.prompt("Continue from where we left off.", forkedFrom=origin)
    s.assistant([text("Picking up the refactor of the pricing module.")], stop="end_turn", forkedFrom=origin)
    s.raw({"type": "last-prompt", "lastPrompt": "Continue from where we left off.", "sessionId": s.sid,
           "leafUuid": s.parent})
    s.prompt("/model claude-sonnet-5 and go on")
    s.assistant([text("Now on Sonnet; continuing.")], model="claude-sonnet-5", stop="end_turn")
    s.raw({"type": "last-prompt", "lastPrompt": "/model claude-sonnet-5 and go on", "sessionId": s.sid,
           "leafUuid": s.parent})
    s.write(folder)


@case("interruption_denial", "Interruption and denial", ["user tool denial (toolDenialKind)",
                                                        "interrupted turn (interruptedMessageId)"])
def interruption_denial(folder: Path) -> None:
    s = Session("interruption_denial")
    s.prompt("Delete the build folder.")
    t = tool_id(s.case, 1)
    calls = s.assistant([bash(t, "rm -rf build", "Remove build folder")])
    s.result(t, "The user doesn't want to proceed with this tool use. The tool use was rejected.",
             "User rejected tool use", is_error=True, toolDenialKind="user-rejected")
    s.assistant([text("Understood, I won't delete it. Shall I")], stop=None)
    s.envelope("user", {"message": {"role": "user", "content": [text("[Request interrupted by user]")]}},
               interruptedMessageId=calls[0]["message"]["id"])
    s.write(folder)


@case("assistant_errors", "Assistant-level errors", ["aborted mid-stream / truncated", "API error record"])
def assistant_errors(folder: Path) -> None:
    s = Session("assistant_errors")
    s.prompt("Write the migration.")
    s.assistant([text("Here is the migration:\n\n```sql\nALTER TABLE orders ADD")], stop=None,
                isAbortedMidStream=True)
    s.assistant([text("…output truncated")], stop=None, truncatedAfterOutput=True)
    s.envelope("assistant", {"message": {"id": "msg_synthetic0001", "model": "<synthetic>", "role": "assistant",
                                         "stop_reason": "stop_sequence", "stop_sequence": "", "type": "message",
                                         "usage": {"input_tokens": 0, "output_tokens": 0,
                                                   "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
                                         "content": [text("API Error: 529 Overloaded")]}},
               isApiErrorMessage=True, apiErrorStatus=529, error="overloaded")
    s.write(folder)


@case("compaction", "Compaction", ["summary record (isCompactSummary)", "its compact_boundary"])
def compaction(folder: Path) -> None:
    s = Session("compaction")
    s.prompt("Keep going with the refactor.")
    s.assistant([text("Done with pricing.py.")], stop="end_turn")
    last = s.parent
    s.parent = None  # a boundary starts a new root; logicalParentUuid keeps the link
    s.envelope("system", {"subtype": "compact_boundary", "content": "Conversation compacted",
                          "isMeta": False, "level": "info",
                          "compactMetadata": {"trigger": "auto", "preTokens": 167012, "postTokens": 9120,
                                              "durationMs": 41200,
                                              "preservedMessages": {"allUuids": [last]}}},
               logicalParentUuid=last)
    s.envelope("user", {"message": {"role": "user", "content": "This session is being continued from a previous "
                                    "conversation that ran out of context. Summary:\n1. Refactored pricing.py."}},
               isCompactSummary=True, isVisibleInTranscriptOnly=True)
    s.write(folder)


@case("attachment_signals", "Attachment signals", ["hook blocking error", "read truncation notice"])
def attachment_signals(folder: Path) -> None:
    s = Session("attachment_signals")
    s.prompt("Format and read the big log.")
    s.envelope("attachment", {"attachment": {"type": "hook_blocking_error", "hookName": "PreToolUse:Bash",
                                             "toolUseID": tool_id(s.case, 1),
                                             "blockingError": {"blockingError": "black is not installed",
                                                               "command": "./hooks/fmt.sh"}}})
    # the client's own shape: a banner and the Read call's id (claude 2.1.332 pushes
    # {type:"read_truncation_notice",banner,toolUseID} after a Read; it crashes resuming one without a banner)
    s.envelope("attachment", {"attachment": {"type": "read_truncation_notice",
                                             "banner": "logs/app.log: 18000 more lines not shown",
                                             "toolUseID": tool_id(s.case, 2)}})
    s.write(folder)


@case("mcp", "MCP", ["MCP call (mcp__server__tool)", "structured content (mcpMeta)"])
def mcp(folder: Path) -> None:
    s = Session("mcp")
    s.prompt("What does the issue tracker say about ticket 42?")
    t = tool_id(s.case, 1)
    s.assistant([{"type": "tool_use", "id": t, "name": "mcp__tracker__get_issue", "input": {"id": 42}}])
    payload = {"id": 42, "title": "Empty cart 500", "state": "open"}
    s.result(t, [text(dumps(payload))], [text(dumps(payload))],
             mcpMeta={"structuredContent": payload, "_meta": {"tracker/version": "3"}})
    s.write(folder)


@case("block_array_results", "Block-array results", ["tool_result with text / image / tool_reference blocks"])
def block_array_results(folder: Path) -> None:
    s = Session("block_array_results")
    s.prompt("Find a tool for screenshots and take one.")
    t1, t2 = tool_id(s.case, 1), tool_id(s.case, 2)
    s.assistant([{"type": "tool_use", "id": t1, "name": "ToolSearch", "input": {"query": "screenshot"}}])
    s.result(t1, [{"type": "tool_reference", "tool_name": "mcp__browser__screenshot"}],
             {"matches": ["mcp__browser__screenshot"], "query": "screenshot", "total_deferred_tools": 12})
    s.assistant([{"type": "tool_use", "id": t2, "name": "mcp__browser__screenshot", "input": {"url": "http://localhost:8000"}}])
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                       "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="}}
    s.result(t2, [text("Screenshot of http://localhost:8000"), img], [text("Screenshot of http://localhost:8000")])
    s.write(folder)


@case("thinking", "Thinking", ["signature-only block", "block with text"])
def thinking(folder: Path) -> None:
    s = Session("thinking")
    s.prompt("Is the rounding in pricing.py right?")
    s.assistant([{"type": "thinking", "thinking": "", "signature": sig(s.case, 1)},
                 text("Yes for positive totals.")], stop="end_turn")
    s.prompt("And for refunds?")
    s.assistant([{"type": "thinking", "thinking": "Refunds are negative; round() uses banker's rounding, so -2.5 "
                                                  "becomes -2 rather than -3.", "signature": sig(s.case, 2)},
                 text("No: negative halves round toward even. Use Decimal with ROUND_HALF_UP.")], stop="end_turn")
    s.write(folder)


@case("host_ui", "Host/UI records", ["slash-command turn (<command-name>)", "queue-operation lifecycle (dequeue)"])
def host_ui(folder: Path) -> None:
    s = Session("host_ui")
    s.raw({"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-09-18T10:00:00.001Z",
           "sessionId": s.sid, "content": "/compact"})
    s.raw({"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-09-18T10:00:00.004Z",
           "sessionId": s.sid})
    s.envelope("user", {"message": {"role": "user", "content": "<local-command-caveat>Caveat: The messages below "
                                    "were generated by the user while running local commands. DO NOT respond to "
                                    "these messages or otherwise consider them in your response unless the user "
                                    "explicitly asks you to.</local-command-caveat>"}}, isMeta=True)
    s.envelope("user", {"message": {"role": "user", "content": "<command-name>/cost</command-name>\n"
                                    "            <command-message>cost</command-message>\n"
                                    "            <command-args></command-args>"}})
    s.envelope("system", {"subtype": "local_command", "content": "<local-command-stdout>Total cost: $0.42"
                                                                 "</local-command-stdout>", "level": "info"},
               isMeta=False)
    s.write(folder)


@case("workflow", "Workflow", ["Workflow tool result (workflowName)", "journal started / result",
                              "workflow subagent, run record and script"])
def workflow(folder: Path) -> None:
    s = Session("workflow")
    s.prompt("Sweep the docs for stale links with the docs-sweep workflow.")
    t = tool_id(s.case, 1)
    run = "wf_3f9a1c2e-7b4d"
    s.assistant([{"type": "tool_use", "id": t, "name": "Workflow",
                  "input": {"workflow": "docs-sweep", "args": {"target": "docs/"}}}])
    s.result(t, [text(f"Workflow docs-sweep launched (run {run}).")],
             {"workflowName": "docs-sweep", "runId": run, "taskId": "task_91", "taskType": "workflow",
              "scriptPath": f"{CWD}/.claude/workflows/docs-sweep.js", "status": "async_launched",
              "summary": "", "transcriptDir": f"{s.sid}/subagents/workflows/{run}"}, is_error=False)
    s.write(folder)
    agent = "a5d7f9b1d3f5a7c92"
    wf = folder / s.sid / "subagents" / "workflows" / run
    a = _agent_transcript(s.case, s.sid, agent, "Sweep docs batch a for stale links.", "2 stale links in docs/a.md.")
    a.write(folder, f"{s.sid}/subagents/workflows/{run}/agent-{agent}.jsonl")
    (wf / f"agent-{agent}.meta.json").write_text(dumps({"agentType": "workflow-subagent", "spawnDepth": 1}), "utf-8")
    (wf / "journal.jsonl").write_text(
        dumps({"type": "started", "key": "v2:sweep-a", "agentId": agent}) + "\n"
        + dumps({"type": "result", "key": "v2:sweep-a", "agentId": agent,
                 "result": "2 stale links in docs/a.md."}) + "\n", "utf-8")
    runs = folder / s.sid / "workflows"
    runs.mkdir(parents=True, exist_ok=True)
    script = "export const meta = { name: 'docs-sweep' }\nreturn await agent('Sweep docs batch a for stale links.')\n"
    (runs / f"{run}.json").write_text(json.dumps(
        {"runId": run, "taskId": "task_91", "status": "completed", "workflowName": "docs-sweep",
         "timestamp": "2026-09-18T10:00:09.000Z", "durationMs": 21000, "agentCount": 1, "script": script,
         "scriptPath": f"{CWD}/.claude/workflows/docs-sweep.js", "args": {"target": "docs/"}}, indent=2), "utf-8")
    (runs / "scripts").mkdir(exist_ok=True)
    (runs / "scripts" / f"docs-sweep-{run}.js").write_text(script, "utf-8")


@case("line_splitting_guard", "Line-splitting guard", ["string values holding U+2028 / U+2029 / \\r"])
def line_splitting_guard(folder: Path) -> None:
    s = Session("line_splitting_guard")
    s.prompt("Paste:\u2028line two\u2029paragraph two\r\nwindows line")
    t = tool_id(s.case, 1)
    s.assistant([bash(t, "printf 'a\\r\\nb'", "Print CRLF")])
    s.result(t, "a\r\nb\u2028c", bash_carrier("a\r\nb\u2028c"), is_error=False)
    s.assistant([text("The output has a CR LF pair, then U+2028\u2028and U+2029\u2029inside one string.")],
                stop="end_turn")
    s.write(folder)


@case("private_key_shapes", "Private-key shapes (sanitized)", ["file-history snapshot (absolute-path keys)",
                                                              "AskUserQuestion answers (question-text keys)"])
def private_key_shapes(folder: Path) -> None:
    s = Session("private_key_shapes")
    first = s.prompt("Pick a database for the cache.")
    s.raw({"type": "file-history-snapshot", "messageId": first["uuid"],
           "snapshot": {"messageId": first["uuid"], "trackedFileBackups": {
               f"{CWD}/orders/handler.py": {"backupFileName": "3c1d9e2a7b4f@v1", "version": 1,
                                           "backupTime": "2026-09-18T10:00:01.000Z"}},
                        "timestamp": "2026-09-18T10:00:01.000Z"}, "isSnapshotUpdate": False})
    t = tool_id(s.case, 1)
    q = "Which store should the cache use?"
    s.assistant([{"type": "tool_use", "id": t, "name": "AskUserQuestion",
                  "input": {"questions": [{"question": q, "header": "Cache", "multiSelect": False,
                                           "options": [{"label": "Redis", "description": "in-memory"},
                                                       {"label": "Postgres", "description": "existing DB"}]}]}}])
    s.result(t, f'User has answered your questions: "{q}"="Redis".',
             {"questions": [{"question": q, "header": "Cache", "multiSelect": False,
                             "options": [{"label": "Redis", "description": "in-memory"},
                                         {"label": "Postgres", "description": "existing DB"}]}],
              "answers": {q: "Redis"}})
    s.write(folder)


@case("metadata_records", "Session metadata (seed 003 table, seed 004 section 4)",
      ["custom-title / agent-name / ai-title / summary", "mode / permission-mode", "file-history-delta",
       "host records (atis-latch, bridge-session, pr-link, cost-state, frame-link, artifact-*)"])
def metadata_records(folder: Path) -> None:
    s = Session("metadata_records")
    s.raw({"type": "summary", "summary": "Empty-cart checkout fix", "leafUuid": "9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4"})
    s.raw({"type": "custom-title", "customTitle": "cart fix", "sessionId": s.sid})
    s.raw({"type": "agent-name", "agentName": "cart-fixer", "sessionId": s.sid})
    s.raw({"type": "ai-title", "aiTitle": "Fix 500 on empty cart checkout", "sessionId": s.sid})
    s.raw({"type": "mode", "mode": "normal", "sessionId": s.sid})
    s.raw({"type": "permission-mode", "permissionMode": "acceptEdits", "sessionId": s.sid})
    s.raw({"type": "file-history-delta", "messageId": "9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4", "sessionId": s.sid,
           "changes": []})
    s.raw({"type": "atis-latch", "sessionId": s.sid, "latched": True})
    s.raw({"type": "bridge-session", "sessionId": s.sid, "bridgeSessionId": ""})
    s.raw({"type": "pr-link", "sessionId": s.sid, "prUrl": "https://git.example.test/shop-api/pull/7"})
    s.raw({"type": "cost-state", "sessionId": s.sid, "totalCostUSD": 0.42})
    s.raw({"type": "frame-link", "sessionId": s.sid, "frameId": "f-1"})
    s.raw({"type": "artifact-autoreact-ledger", "sessionId": s.sid, "entries": []})
    s.raw({"type": "artifact-comment-monitor", "sessionId": s.sid, "watching": []})
    s.raw({"type": "last-prompt", "sessionId": s.sid, "leafUuid": None})
    s.write(folder)


SAMPLE = HERE.parent.parent / "txcodec" / "samples" / "claude_code"


def write_sample() -> Path:
    """The session bundled with the package (``txcodec sample``): a prompt, thinking with
    a signature, a parallel pair of tool calls, a slash command and a custom title."""
    s = Session("sample", sid="4f6c1d2e-8a3b-4c5d-9e7f-0a1b2c3d4e5f")
    s.raw({"type": "custom-title", "customTitle": "Fix empty-cart checkout", "sessionId": s.sid})
    s.raw({"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-09-18T10:00:00.001Z",
           "sessionId": s.sid, "content": "Checkout returns 500 for an empty cart. Find out why and fix it."})
    s.raw({"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-09-18T10:00:00.004Z",
           "sessionId": s.sid})
    s.prompt("Checkout returns 500 for an empty cart. Find out why and fix it.")
    t1, t2, t3, t4 = (tool_id(s.case, i) for i in range(1, 5))
    path = f"{CWD}/orders/handler.py"
    body = ("def checkout(cart):\n    total = sum(i.price for i in cart.items)\n"
            "    return total / len(cart.items)\n")
    numbered = "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(body.splitlines(), 1))
    # thinking + text + two tool calls in one API response: one record per block
    first = s.assistant([{"type": "thinking", "thinking": "", "signature": sig(s.case, 1)},
                         text("I'll read the handler and run its tests at the same time.")])
    read = s.assistant([{"type": "tool_use", "id": t1, "name": "Read", "input": {"file_path": path}}])[0]
    s.parent = read["uuid"]
    run = s.assistant([bash(t2, "pytest -q tests/test_orders.py", "Run order tests")])[0]
    mid = first[0]["message"]["id"]
    for rec in (read, run):  # the same response: same message.id and requestId, next block index
        rec["message"]["id"] = mid
        rec["requestId"] = first[0]["requestId"]
    read["apiBlockIndex"], run["apiBlockIndex"] = 2, 3
    s.lines[-2:] = [dumps(read), dumps(run)]
    s.parent = read["uuid"]
    s.result(t1, numbered, {"type": "text", "file": {"filePath": path, "content": body, "numLines": 3,
                                                        "startLine": 1, "totalLines": 3}})
    s.parent = run["uuid"]
    out = "F.\nFAILED tests/test_orders.py::test_empty_cart - ZeroDivisionError: division by zero\n1 failed, 1 passed"
    s.result(t2, f"Exit code 1\n{out}", f"Error: Exit code 1\n{out}", is_error=True)
    old = "    return total / len(cart.items)"
    new = "    if not cart.items:\n        return 0\n    return total / len(cart.items)"
    s.assistant([text("`len(cart.items)` is zero for an empty cart. Guarding it:"),
                 {"type": "tool_use", "id": t3, "name": "Edit",
                  "input": {"file_path": path, "old_string": old, "new_string": new}}])
    s.result(t3, f"The file {path} has been updated.",
             {"filePath": path, "oldString": old, "newString": new, "originalFile": body,
              "structuredPatch": [{"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 3,
                                   "lines": ["+    if not cart.items:", "+        return 0", " " + old]}],
              "userModified": False, "replaceAll": False})
    s.assistant([bash(t4, "pytest -q tests/test_orders.py", "Run order tests")])
    s.result(t4, "..\n2 passed in 0.12s", bash_carrier("..\n2 passed in 0.12s"), is_error=False)
    s.assistant([text("Fixed: `checkout` returns 0 for an empty cart, and both order tests pass.")], stop="end_turn")
    s.envelope("user", {"message": {"role": "user", "content": "<command-name>/cost</command-name>\n"
                                    "            <command-message>cost</command-message>\n"
                                    "            <command-args></command-args>"}})
    s.envelope("system", {"subtype": "local_command", "content": "<local-command-stdout>Total cost: $0.08"
                                                                 "</local-command-stdout>", "level": "info"},
               isMeta=False)
    s.raw({"type": "last-prompt", "lastPrompt": "Checkout returns 500 for an empty cart. Find out why and fix it.",
           "sessionId": s.sid, "leafUuid": s.parent})
    SAMPLE.mkdir(parents=True, exist_ok=True)
    return s.write(SAMPLE)


def main() -> None:
    write_sample()
    for fn in list(globals().values()):
        name = getattr(fn, "case", None)
        if name is None:
            continue
        folder = HERE / name
        keep = {p.name: p.read_bytes() for p in folder.glob("expected*")} if folder.is_dir() else {}
        if folder.is_dir():
            shutil.rmtree(folder)
        folder.mkdir()
        fn(folder)
        for file, data in keep.items():  # other tests' expectations survive a rebuild
            (folder / file).write_bytes(data)
        row, shapes = CASES[name]
        shape_list = ", ".join(dumps(x) for x in shapes)
        (folder / "case.toml").write_text(
            f'# built by golden/claude_code/make_cases.py: synthetic, no private data\n'
            f'row = {dumps(row)}  # seed 004 section 12, fixture checklist\nshapes = [{shape_list}]\n', "utf-8")


if __name__ == "__main__":
    main()
