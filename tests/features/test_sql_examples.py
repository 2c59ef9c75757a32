"""Every SQL example in README.md and docs/ runs against a dataset whose answers are known
(issue 34.2): two sessions built here, one Claude Code (which flags failed results and
leaves successes unflagged) and one Codex (which records no outcome), exported to
Parquet. A new example needs its answer here, or this test fails."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from support.paths import ROOT

pytest.importorskip("duckdb", reason="the sql extra is not installed")

from txcodec import api  # noqa: E402
from txcodec.cli import main  # noqa: E402
from txcodec.model.common import Conversation  # noqa: E402
from txcodec.model.common import Message  # noqa: E402
from txcodec.model.common import Meta  # noqa: E402
from txcodec.model.common import Text  # noqa: E402
from txcodec.model.common import ToolResult  # noqa: E402
from txcodec.model.common import ToolUse  # noqa: E402
from txcodec.model.common import Usage  # noqa: E402

CLAUDE_ID = "5b0e3f0a-0000-4000-8000-000000000001"
CODEX_ID = "5b0e3f0a-0000-4000-8000-000000000002"

# each example's answer, found by a fragment of its text (rows as DuckDB returns them)
ANSWERS = {
    # README: failure rate per tool over the calls whose outcome is known, and how many are not
    "avg(is_error::int) AS failure_rate, count(*) FILTER": [
        ["Read", 0.25, 0],
        ["Write", 0.5, 0],
        ["shell", None, 2],
    ],
    # docs/dataset.md: sessions per harness
    "SELECT harness, count(*) FROM sessions": [["claude_code", 1], ["codex", 1]],
    # docs/dataset.md: tokens per project per week (both sessions in the week of 2026-03-02)
    "date_trunc('week'": [["shop", "2026-03-02T00:00:00", 10 + 20 + 7 + 5 + 30, 5 + 6 + 4 + 9]],
    # docs/dataset.md: failure rate by tool and model
    "t.tool_name, m.model, count(*) AS calls": [
        ["Read", "claude-opus-5", 4, 0.25, 0],
        ["Write", "claude-opus-5", 2, 0.5, 0],
        ["shell", "gpt-6", 2, None, 2],
    ],
    # docs/dataset.md: the .py files changed
    "c.path LIKE '%.py'": [
        ["claude_code", CLAUDE_ID, "a.py", "write", "unknown"],  # no toolUseResult: what it did is unknown
    ],
}


def _examples() -> list[str]:
    """Every SQL example: ``sql`` blocks, and the query of each ``txcodec sql`` line."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        found += [q.strip() for q in re.findall(r"```sql\n(.*?)```", text, flags=re.S)]
        found += [q for q in re.findall(r'txcodec sql (?:-d \S+ )?"([^"]+)"', text) if q != "…"]
    return found


def _claude() -> Conversation:
    def read(n: int) -> ToolUse:
        return ToolUse(id=f"toolu_r{n}", name="Read", input={"file_path": f"/home/u/shop/r{n}.txt"})

    uses = [read(n) for n in range(4)]
    uses += [
        ToolUse(id="toolu_w0", name="Write", input={"file_path": "/home/u/shop/a.py", "content": "x = 1\n"}),
        ToolUse(id="toolu_w1", name="Write", input={"file_path": "/etc/nope.txt", "content": "no"}),
    ]
    results = [ToolResult(tool_use_id="toolu_r0", content="no such file", is_error=True)]
    results += [ToolResult(tool_use_id=f"toolu_r{n}", content="text") for n in (1, 2, 3)]  # unflagged: success
    results += [
        ToolResult(tool_use_id="toolu_w0", content="File created successfully at: /home/u/shop/a.py"),
        ToolResult(tool_use_id="toolu_w1", content="permission denied", is_error=True),
    ]
    return _conversation(CLAUDE_ID, "claude_code", "claude-opus-5", uses, results)


def _codex() -> Conversation:
    uses = [ToolUse(id=f"call_s{n}", name="shell", input={"command": ["ls"]}) for n in range(2)]
    results = [ToolResult(tool_use_id=f"call_s{n}", content="a.py") for n in range(2)]
    return _conversation(CODEX_ID, "codex", "gpt-6", uses, results)


def _conversation(sid: str, harness: str, model: str, uses: list, results: list) -> Conversation:
    claude = harness == "claude_code"
    first = Usage(10, 5, 20, 7) if claude else Usage(5, 4, 0, 30)
    last = Usage(0, 6, 0, 0) if claude else Usage(0, 9, 0, 0)
    day = "2026-03-03" if claude else "2026-03-05"
    return Conversation(
        meta=Meta(id=sid, cwd="/home/u/shop", source_harness=harness),
        messages=[
            Message("user", [Text("go")], timestamp=f"{day}T10:00:00.000Z"),
            Message(
                "assistant",
                [*uses],
                id=f"msg_{harness}_1",
                timestamp=f"{day}T10:00:01.000Z",
                model=model,
                stop_reason="tool_use",
                usage=first,
            ),
            Message("user", [*results], timestamp=f"{day}T10:00:02.000Z"),
            Message(
                "assistant",
                [Text("done")],
                id=f"msg_{harness}_2",
                timestamp=f"{day}T10:00:03.000Z",
                model=model,
                stop_reason="end_turn",
                usage=last,
            ),
        ],
    )


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("sql")
    files = []
    for conversation, harness in ((_claude(), "claude_code"), (_codex(), "codex")):
        written, _ = api.convert(conversation, harness)
        path = root / f"{harness}.jsonl"
        path.write_bytes(written.files[written.main])
        files.append(str(path))
    out = CliRunner().invoke(main, ["export", *files, "--to", "parquet", "-o", str(root / "sessions")])
    assert out.exit_code == 0, out.output
    return root / "sessions"


def _run(folder, query: str) -> list[list]:
    out = CliRunner().invoke(main, ["sql", "-d", str(folder), "--json", query])
    assert out.exit_code == 0, out.output
    rows = [list(row.values()) for row in json.loads(out.stdout)]
    return sorted(rows, key=lambda r: [str(v) for v in r])


def _rounded(rows: list[list]) -> list[list]:
    return [[round(v, 9) if isinstance(v, float) else v for v in row] for row in rows]


def test_every_sql_example_gives_its_known_answer(dataset_dir):
    examples = _examples()
    assert len(examples) >= 5
    for query in examples:
        keys = [k for k in ANSWERS if k in query]
        assert len(keys) == 1, f"no known answer for the example: {query}"
        got = _run(dataset_dir, query)
        want = sorted(ANSWERS[keys[0]], key=lambda r: [str(v) for v in r])
        assert _rounded(got) == _rounded(want), (query, got)
    assert {k for k in ANSWERS if any(k in q for q in examples)} == set(ANSWERS)  # no answer without its example


def test_is_error_is_known_where_the_source_says_it(dataset_dir):
    rows = _run(dataset_dir, "SELECT tool_use_id, is_error, error_unknown FROM tool_calls")
    assert rows == [
        ["call_s0", None, True],
        ["call_s1", None, True],
        ["toolu_r0", True, False],
        ["toolu_r1", False, False],
        ["toolu_r2", False, False],
        ["toolu_r3", False, False],
        ["toolu_w0", False, False],
        ["toolu_w1", True, False],
    ]
