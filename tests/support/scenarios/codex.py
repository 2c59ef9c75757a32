"""Codex 0.171.0 scenarios: ``codex exec`` (later turns ``codex exec resume <id>``) against
the mock Responses API; the rollout it wrote is recorded."""

from __future__ import annotations

import json
from pathlib import Path

from txcodec.resume_check.codex import MODEL
from txcodec.resume_check.codex import Sandbox
from txcodec.resume_check.mock import responses as r

from ..mcp_server import COMMAND as MCP_COMMAND
from . import Scenario
from .claude_code import PNG


def reasoning(*parts: str) -> dict:
    return {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": p} for p in parts],
        "encrypted_content": None,
    }


def codex(
    name: str,
    about: str,
    turns: list[tuple[str, list[list[dict]]]],
    *,
    config: str = "",
    files=None,
    facts=(),
    covers=(),
    provider: str = "mock",
    model: str = MODEL,
    features: str = "",
    tables: str = "",
    folder: str = "codex",
) -> Scenario:
    """``turns``: (prompt, the replies its model calls get), one codex process each; ``folder``
    names the sandbox below the scenario's temp folder (the work folder is ``<folder>/project``)."""

    def produce(tmp: Path) -> dict[str, bytes]:
        box = Sandbox(
            root=tmp / folder, config=config, provider=provider, model=model, features=features, tables=tables
        )
        with box:
            for rel, data in (files or {}).items():
                (box.cwd / rel).write_bytes(data)
            session = None
            for prompt, script in turns:
                args = ["resume", session, prompt] if session else [prompt]
                run = box.run(args, script, timeout=120)
                if run.exit_code != 0:
                    raise RuntimeError(f"{name}: codex exited {run.exit_code}: {run.stderr[-1500:]}")
                if session is None:
                    for line in run.stdout.splitlines():
                        if line.startswith("{") and json.loads(line).get("type") == "thread.started":
                            session = json.loads(line)["thread_id"]
            (rollout,) = run.rollouts()
            return {"rollout.jsonl": rollout.read_bytes()}

    return Scenario(name, "codex", about, produce, [p for p, _ in turns], list(facts), list(covers))


def item_count(kind: str, n: int = 1, where=lambda item: True):
    def fact(lines):
        items = [v["payload"] for v in lines if v.get("type") == "response_item" and v["payload"].get("type") == kind]
        assert len([i for i in items if where(i)]) >= n, f"fewer than {n} {kind} items"

    fact.__doc__ = f"the rollout holds {n}+ {kind} item(s)"
    return fact


def patch_applied(lines) -> None:
    """codex applied the patch (its output says so), not refused the tool (0.171 records no
    patch_apply_end event in exec mode)"""
    items = [v["payload"] for v in lines if v.get("type") == "response_item"]
    outputs = [str(i.get("output")) for i in items if i.get("type") == "custom_tool_call_output"]
    assert any("Success. Updated the following files" in o for o in outputs), outputs


def remote_compactions(n: int):
    def fact(lines):
        compacted = [v["payload"] for v in lines if v.get("type") == "compacted"]
        held = [i for c in compacted for i in c.get("replacement_history") or [] if i.get("type") == "compaction"]
        assert len(compacted) >= n and len(held) >= n, (len(compacted), len(held))

    fact.__doc__ = f"{n}+ compacted lines whose replacement_history holds the server's compaction item"
    return fact


def compactions(n: int):
    def fact(lines):
        assert sum(1 for v in lines if v.get("type") == "compacted") >= n

    fact.__doc__ = f"{n}+ compacted lines"
    return fact


SCENARIOS = [
    codex(
        "reasoning_summaries",
        "reasoning with two summary_text parts, then an answer whose output_text has annotations: []",
        [
            ("think twice", [[reasoning("First part of the plan.", "Second part of the plan."), r.text("Planned.")]]),
            ("and then?", [[r.text("Then done.")]]),
        ],
        facts=[
            item_count("reasoning", 1, lambda i: len(i.get("summary") or []) == 2),
            item_count("message", 1, lambda i: any(p.get("annotations") == [] for p in i.get("content") or [])),
        ],
        covers=["reasoning with several summary parts", "class 3"],
    ),
    codex(
        "exec_command",
        "an exec_command call and its output, then the answer",
        [
            (
                "list the folder",
                [
                    [r.function_call("exec_command", {"cmd": "echo hello"}, "call_exec_1")],
                    [r.text("It printed hello.")],
                ],
            )
        ],
        facts=[item_count("function_call"), item_count("function_call_output")],
        covers=["tool calls"],
    ),
    codex(
        "parallel_calls",
        "one reply with two exec_command calls",
        [
            (
                "run both",
                [
                    [
                        r.function_call("exec_command", {"cmd": "sleep 1; echo slow"}, "call_par_1"),
                        r.function_call("exec_command", {"cmd": "echo fast"}, "call_par_2"),
                    ],
                    [r.text("Both ran.")],
                ],
            )
        ],
        facts=[item_count("function_call_output", 2)],
        covers=["parallel tool calls"],
    ),
    codex(
        "apply_patch",
        "an apply_patch custom tool call creating a file",
        [
            (
                "create hello.txt",
                [
                    [
                        r.custom_tool_call(
                            "apply_patch",
                            "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n",
                            "call_patch_1",
                        )
                    ],
                    [r.text("Created hello.txt.")],
                ],
            )
        ],
        model="gpt-5.5",  # gpt-5.1-codex's tools have no apply_patch: 0.171 answered "unsupported custom tool call"
        facts=[item_count("custom_tool_call"), item_count("custom_tool_call_output"), patch_applied],
        covers=["apply_patch"],
    ),
    codex(
        "auto_compact",
        "three turns past model_auto_compact_token_limit = 100: codex compacts before each later "
        "turn (a model call of its own, local: the provider is not OpenAI)",
        [
            ("turn 1", [[r.text("Answer 1.")]]),
            ("turn 2", [[r.text("Summary one.")], [r.text("Answer 2.")]]),
            ("turn 3", [[r.text("Summary two.")], [r.text("Answer 3.")]]),
        ],
        config="model_auto_compact_token_limit = 100\n",
        facts=[compactions(2)],
        covers=["autocompaction", "local compaction", "class 7"],
    ),
    codex(
        "view_image",
        "the view_image tool attaches a PNG from the project",
        [
            (
                "look at pixel.png",
                [[r.function_call("view_image", {"path": "pixel.png"}, "call_img_1")], [r.text("One pixel.")]],
            )
        ],
        files={"pixel.png": PNG},
        facts=[item_count("function_call_output")],
        covers=["view_image", "images"],
    ),
    codex(
        "web_search",
        "a provider-side web search item, then the answer",
        [
            (
                "search the web for txcodec",
                [
                    [
                        {
                            "type": "web_search_call",
                            "status": "completed",
                            "action": {"type": "search", "query": "txcodec"},
                        },
                        r.text("Found nothing new."),
                    ]
                ],
            )
        ],
        facts=[item_count("web_search_call")],
        covers=["web search"],
    ),
    codex(
        "three_turns",
        "three plain turns (two resumes of the same thread)",
        [("first", [[r.text("One.")]]), ("second", [[r.text("Two.")]]), ("third", [[r.text("Three.")]])],
        facts=[item_count("message", 3, lambda i: i.get("role") == "assistant")],
        covers=["resumed turns"],
    ),
    codex(
        "remote_compact",
        "the built-in openai provider: codex compacts remotely before each later turn (a Responses "
        "call whose input ends with a compaction_trigger item; its reply is one opaque compaction item)",
        [
            ("turn 1", [[r.text("Answer 1.")]]),
            ("turn 2", [[{"type": "compaction", "encrypted_content": "ENC-COMPACTION-1"}], [r.text("Answer 2.")]]),
            ("turn 3", [[{"type": "compaction", "encrypted_content": "ENC-COMPACTION-2"}], [r.text("Answer 3.")]]),
        ],
        config="model_auto_compact_token_limit = 100\n",
        provider="openai",
        facts=[remote_compactions(2)],
        covers=["remote compaction", "autocompaction"],
    ),
]


# --- issue 31: MCP behind tool_search, failures, non-ASCII ---------------------------------

# the notes server (tests/support/mcp_server.py) as codex starts it; 0.171 defers MCP tools
# behind its client-side tool_search for a model that supports it (gpt-5.5 in its catalog)
MCP_TABLES = f"[mcp_servers.notes]\ncommand = {json.dumps(MCP_COMMAND[0])}\nargs = {json.dumps(MCP_COMMAND[1:])}\n"
TOOL_SEARCH = "tool_search = true\ntool_search_always_defer_mcp_tools = true\n"


def mcp_call(name: str, arguments: dict, call_id: str) -> dict:
    return {**r.function_call(name, arguments, call_id), "namespace": "mcp__notes"}


def tool_search_call(query: str, call_id: str) -> dict:
    return {"type": "tool_search_call", "call_id": call_id, "execution": "client", "arguments": {"query": query}}


def mcp_namespaced(lines) -> None:
    """codex searched its deferred tools (a tool_search_call and its output), then called
    the notes server's tools by namespace; the unknown key's call failed"""
    items = [v["payload"] for v in lines if v.get("type") == "response_item"]
    kinds = [i.get("type") for i in items]
    assert "tool_search_call" in kinds and "tool_search_output" in kinds, kinds
    calls = [i for i in items if i.get("type") == "function_call" and i.get("namespace") == "mcp__notes"]
    assert [c["name"] for c in calls] == ["lookup", "lookup"], calls
    outputs = {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}
    assert "Alpha is the first note." in json.dumps(outputs["call_mcp_1"], ensure_ascii=False)
    assert "no note named" in json.dumps(outputs["call_mcp_2"], ensure_ascii=False)


def failures(lines) -> None:
    """a command exited 3, a command that does not exist (127), and an apply_patch of a missing
    file that codex refused before applying (no patch_apply_end event)"""
    items = [v["payload"] for v in lines if v.get("type") == "response_item"]
    outputs = {i.get("call_id"): json.dumps(i.get("output"), ensure_ascii=False) for i in items if "output" in i}
    assert "Process exited with code 3" in outputs["call_fail_1"], outputs
    assert "exited with code 127" in outputs["call_fail_2"] and "not found" in outputs["call_fail_2"], outputs
    assert "apply_patch verification failed" in outputs["call_fail_3"], outputs


def non_ascii_folder(lines) -> None:
    """the work folder and the prompts are not ASCII, and so is a command's output"""
    meta = lines[0]["payload"]
    assert "ünï" in meta["cwd"] and "日本" in meta["cwd"], meta["cwd"]
    assert any("Grüße" in json.dumps(v, ensure_ascii=False) for v in lines)


MORE_SCENARIOS = [
    codex(
        "mcp_tool_search",
        "an MCP server (tests/support/mcp_server.py) behind codex's client-side tool_search: the model "
        "searches, then calls the server's lookup by namespace twice (the second key is unknown: an error)",
        [
            (
                "look up alpha and beta in the notes",
                [
                    [tool_search_call("notes lookup", "call_search_1")],
                    [mcp_call("lookup", {"key": "alpha"}, "call_mcp_1")],
                    [mcp_call("lookup", {"key": "beta"}, "call_mcp_2")],
                    [r.text("Alpha is the first note; there is no note named beta.")],
                ],
            )
        ],
        model="gpt-5.5",
        features=TOOL_SEARCH,
        tables=MCP_TABLES,
        facts=[mcp_namespaced],
        covers=["MCP", "tool_search", "class 5"],
    ),
    codex(
        "failures",
        "a command that exits 3, a command that does not exist, and a patch of a file that is not there",
        [
            (
                "try the risky things",
                [
                    [r.function_call("exec_command", {"cmd": "echo partial; exit 3"}, "call_fail_1")],
                    [r.function_call("exec_command", {"cmd": "no-such-command-txcodec"}, "call_fail_2")],
                    [
                        r.custom_tool_call(
                            "apply_patch",
                            "*** Begin Patch\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch\n",
                            "call_fail_3",
                        )
                    ],
                    [r.text("All three failed.")],
                ],
            )
        ],
        model="gpt-5.5",  # its tools include apply_patch (gpt-5.1-codex's do not: "unsupported custom tool call")
        facts=[failures],
        covers=["failing commands", "failed patch"],
    ),
    codex(
        "non_ascii",
        "a work folder and prompts that are not ASCII, and a command printing them",
        [
            (
                "Grüße aus Köln — was steht in 日本語.txt?",
                [
                    [r.function_call("exec_command", {"cmd": "cat 日本語.txt; pwd"}, "call_na_1")],
                    [r.text("Es steht „ünïcode ✓“ darin.")],
                ],
            ),
            ("Danke schön ✓", [[r.text("Gern geschehen — さようなら.")]]),
        ],
        files={"日本語.txt": "ünïcode ✓\n".encode()},
        folder="wörk-ünï-日本",
        facts=[non_ascii_folder],
        covers=["non-ASCII work folder", "non-ASCII prompts"],
    ),
]
SCENARIOS += MORE_SCENARIOS
