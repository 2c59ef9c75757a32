"""docs/api.md runs as written, and the library's public classes explain themselves."""

from __future__ import annotations

import ast
import re

from support.paths import ROOT
from test_sessions import home  # noqa: F401  (the fixture: a HOME whose stores hold the sample)

import txcodec

DOC = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")


def test_api_examples_run(home, capsys):  # noqa: F811
    blocks = re.findall(r"^```python\n(.*?)^```", DOC, re.M | re.S)
    assert len(blocks) >= 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "Read -> ok" in out and "sessions match" in out and "converted" in out


def test_top_level_names():
    for name in ("convert", "install", "discover", "resolve", "SessionRow", "messages", "tool_calls", "total_usage"):
        assert name in txcodec.__all__ and callable(getattr(txcodec, name))
    assert hasattr(txcodec.usage, "session_usage")
    fields = list(txcodec.SessionRow.__struct_fields__)
    assert fields[:12] == [
        "harness",
        "session_id",
        "path",
        "cwd",
        "project",
        "title",
        "first_prompt",
        "started",
        "updated",
        "messages",
        "models",
        "parent",
    ]
    assert all(f"`{f}`" in DOC for f in fields)  # every row field is documented


def test_every_public_class_of_the_library_has_a_docstring():
    missing = []
    for path in sorted((ROOT / "txcodec").glob("*.py")):
        if path.name == "usage.py":  # being rewritten for the usage report (its own change)
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and not ast.get_docstring(node):
                missing.append(f"{path.name}:{node.name}")
    assert not missing, missing


def test_usage_folds_unverified_counts():
    from txcodec.model.common import Conversation
    from txcodec.model.common import Message
    from txcodec.model.common import Text
    from txcodec.model.common import Usage

    old = Message("assistant", [Text("hi")], id="m1", usage_unverified=Usage(10, 5))
    new = Message("assistant", [Text("ok")], id="m2", stop_reason="end_turn", usage=Usage(1, 2))
    again = Message("assistant", [Text("ok")], id="m2", stop_reason="end_turn", usage=Usage(1, 2))  # same call
    conversation = Conversation(messages=[Message("user", [Text("q")]), old, new, again])
    assert txcodec.total_usage(conversation) == Usage(11, 7)
    assert txcodec.total_usage(conversation, unverified=False) == Usage(1, 2)


def test_messages_and_tool_calls_include_subagents_after_their_call():
    from txcodec.model.common import Child
    from txcodec.model.common import ChildLink
    from txcodec.model.common import Conversation
    from txcodec.model.common import Message
    from txcodec.model.common import Text
    from txcodec.model.common import ToolResult
    from txcodec.model.common import ToolUse

    sub = Conversation(
        messages=[
            Message("user", [Text("count files")]),
            Message("assistant", [ToolUse("t2", "Bash", {"command": "ls | wc -l"})]),
            Message("user", [ToolResult("t2", "3")]),
        ]
    )
    main = Conversation(
        messages=[
            Message("user", [Text("delegate")]),
            Message("assistant", [ToolUse("t1", "Agent", {"prompt": "count"})]),
            Message("user", [ToolResult("t1", "3 files", is_error=False)]),
            Message("assistant", [Text("3")]),
        ],
        children=[Child(ChildLink("meta.toolUseId", tool_use_id="t1"), sub)],
    )
    walked = [(d, m.role, type(m.content[0]).__name__) for d, m in txcodec.messages(main)]
    assert walked == [
        (0, "user", "Text"),
        (0, "assistant", "ToolUse"),
        (1, "user", "Text"),
        (1, "assistant", "ToolUse"),
        (1, "user", "ToolResult"),
        (0, "user", "ToolResult"),
        (0, "assistant", "Text"),
    ]
    assert len(list(txcodec.messages(main, subagents=False))) == 4
    calls = [(c.use.name, c.depth, c.result.content) for c in txcodec.tool_calls(main)]
    assert calls == [("Agent", 0, "3 files"), ("Bash", 1, "3")]
