"""show / export / usage over a real corpus session."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import CORPUS
from support.paths import ROOT

from txcodec.cli import main
from txcodec.resume_check.report import find_client

SESSION = CORPUS / "claude_code" / "spotter" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
GENERATED = CORPUS / "claude_code" / "generated" / "claude_bash_read.jsonl"


def test_show_writes_its_text_as_it_is_made(monkeypatch):
    """issue 37: ``show`` built every line of a session before writing one; it writes in
    pieces as the lines are made, the same text as ``render``."""
    from txcodec import api
    from txcodec.export import terminal

    conv = api.to_common(api.load(SESSION))
    made = 0
    real = terminal.lines

    def counted(*args, **kwargs):
        nonlocal made
        for line in real(*args, **kwargs):
            made += 1
            yield line

    monkeypatch.setattr(terminal, "lines", counted)
    pieces = terminal.chunks(conv, size=2000)
    next(pieces)
    first = made
    rest = list(pieces)
    assert rest and first < made / 4  # the first piece went out with a fraction of the lines made
    monkeypatch.setattr(terminal, "lines", real)
    out = CliRunner().invoke(main, ["show", str(SESSION), "--no-color"])
    assert out.exit_code == 0 and out.output == terminal.render(conv)
    assert terminal.render(conv) == "\n".join([terminal.heading(conv)] + [t for _, t in real(conv)]) + "\n"


def test_show_indents_subagents():
    out = CliRunner().invoke(main, ["show", str(SESSION), "--no-color"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    # each child right under the Task call that spawned it (checked by hand: the child's
    # first prompt is that call's input.prompt), one level deeper
    for agent, description in (
        ("a93ccab", "Explore existing codebase"),
        ("aa84377", "Explore sync and transcript code"),
    ):
        i = next(
            n for n, line in enumerate(lines) if line.startswith(f"    ┌ subagent {agent} (Explore): {description}")
        )
        assert lines[i - 1].startswith("  ▸ Task ") and f'"description":"{description}"' in lines[i - 1]
        assert lines[i + 1] == "    user"
    # the compaction agent's transcript names no parent call: listed last, and said so
    assert any(line.startswith("    ┌ subagent acompact-70d8e7 [no recorded parent call]") for line in lines)
    # a whitespace-only text block ("\n\n", common before thinking) prints nothing
    assert not [
        n for n, line in enumerate(lines[1:], 1) if not line.strip() and lines[n - 1].lstrip().startswith("assistant")
    ]
    assert any(line.startswith("    · injected: <system-reminder>") for line in lines)  # isMeta: one line
    assert "◂ Bash result (ok): ✓ Updated issue: spotter-a0y.1" in out.output  # the tool's name, not its id


def test_markdown_places_subagents_after_their_call():
    out = CliRunner().invoke(main, ["export", str(SESSION), "--to", "markdown"])
    assert out.exit_code == 0
    heads = [line for line in out.stdout.splitlines() if line.startswith("#")]
    i = heads.index("### Subagent a93ccab (Explore): Explore existing codebase")
    assert heads[i - 1] == "## Assistant · claude-opus-4-6" and heads[i + 1] == "#### User"
    # the parent resumes after the child's turns, with the Task result
    j = next(n for n in range(i + 1, len(heads)) if heads[n].startswith(("## User", "## Assistant")))
    assert heads[j] == "## User"


def test_export_common_and_markdown(tmp_path):
    runner = CliRunner()
    out = runner.invoke(main, ["export", str(GENERATED), "--to", "common", "-o", "-"])
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert list(data)[:3] == ["version", "meta", "messages"]
    target = tmp_path / "s.md"
    out = runner.invoke(main, ["export", str(GENERATED), "--to", "markdown", "-o", str(target), "--loss"])
    assert out.exit_code == 0 and target.read_text().startswith("# ")
    assert json.loads(out.stdout)["counts"]["record:api-request"] == 4
    again = runner.invoke(main, ["export", str(GENERATED), "--to", "markdown", "-o", str(target)])
    assert again.exit_code == 1 and "already exists" in again.output  # never overwrites


def test_usage_json_matches_ccusage_on_a_2_1_332_file():
    out = CliRunner().invoke(main, ["usage", "--json", str(GENERATED)])
    assert out.exit_code == 0, out.output
    [row] = json.loads(out.stdout)["rows"]
    # ccusage 20.0.24 on the same file: input 49951, output 20 (docs/usage.md)
    assert (row["model"], row["input_tokens"], row["output_tokens"], row["calls_without_usage"]) == (
        "claude-opus-5-5",
        49951,
        20,
        0,
    )


OLD_CLIENT = CORPUS / "claude_code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"  # 2.1.39
_TOKENS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _last_fragment_usage(paths) -> dict[str, dict[str, int]]:
    """Independently of the reader: per model, the sum over calls (message.id) of the last
    fragment's usage in line order, across the main file and its subagent files."""
    last: dict[str, tuple[str, dict]] = {}
    for path in paths:
        for line in path.read_bytes().splitlines():
            r = json.loads(line)
            m = r.get("message") if r.get("type") == "assistant" else None
            if m and m.get("usage") and m.get("model") != "<synthetic>":
                last[m["id"]] = (m["model"], m["usage"])
    out: dict[str, dict[str, int]] = {}
    for model, usage in last.values():
        row = out.setdefault(model, dict.fromkeys(_TOKENS, 0))
        for k in _TOKENS:
            row[k] += usage.get(k, 0)
    return out


def _session_paths(main_path):
    return [main_path, *sorted((main_path.parent / main_path.stem / "subagents").glob("*.jsonl"))]


def test_usage_on_an_old_client_reports_unverified_not_zero():
    """2.1.39 wrote stop_reason null on every fragment: no call has verified usage, and the
    last fragments' usage is reported apart instead of silently as zero."""
    out = CliRunner().invoke(main, ["usage", "--json", str(OLD_CLIENT)])
    assert out.exit_code == 0, out.output
    rows = {r["model"]: r for r in json.loads(out.stdout)["rows"]}
    expected = _last_fragment_usage(_session_paths(OLD_CLIENT))
    assert set(rows) == set(expected)
    for model, row in rows.items():
        assert row["calls_unverified"] == row["calls"] > 0 and row["total_tokens"] == 0
        assert {k: row["unverified_" + k] for k in _TOKENS} == expected[model]
    table = CliRunner().invoke(main, ["usage", str(OLD_CLIENT)])
    assert (
        "claude-opus-4-6 (unverified)" in table.output
        and "unverified: calls that never reported a stop_reason" in table.output
    )


@pytest.mark.real_client
def test_ccusage_equals_verified_plus_unverified(tmp_path):
    """docs/usage.md: on these files ccusage's totals are txcodec's verified + unverified
    (ccusage keeps one fragment per call, the one with the most tokens; on real files
    that is the last)."""
    ccusage = find_client("ccusage")
    if ccusage is None:
        pytest.fail("ccusage is not installed: npm install in clients/ (clients/package.json pins it)")
    project = tmp_path / "projects" / "p"
    project.mkdir(parents=True)
    for path in (OLD_CLIENT, GENERATED):
        shutil.copy(path, project / path.name)
    shutil.copytree(OLD_CLIENT.parent / OLD_CLIENT.stem, project / OLD_CLIENT.stem)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path)}
    done = subprocess.run(
        [str(ccusage), "session", "--json", "--offline"], env=env, capture_output=True, timeout=120, check=True
    )
    theirs = {}
    for s in json.loads(done.stdout)["session"]:
        for b in s["modelBreakdowns"]:
            theirs[(s["period"], b["modelName"])] = (
                b["inputTokens"],
                b["outputTokens"],
                b["cacheCreationTokens"],
                b["cacheReadTokens"],
            )
    out = CliRunner().invoke(main, ["usage", "--json", str(project)])
    assert out.exit_code == 0, out.output
    ours = {}
    for r in json.loads(out.stdout)["rows"]:
        session = (
            r["session"] if r["path"].endswith(r["session"] + ".jsonl") else Path(r["path"]).stem
        )  # ccusage keys by file name
        ours[(session, r["model"])] = tuple(r[k] + r["unverified_" + k] for k in _TOKENS)
    assert ours == theirs


@pytest.mark.parametrize("body, message", [(b"", "empty file"), (b'garbage\n{"x":\n', "no known session format")])
@pytest.mark.parametrize("command", [["show"], ["export", "--to", "markdown"], ["usage"]])
def test_unrecognized_files_are_one_clear_line(tmp_path, body, message, command):
    path = tmp_path / "s.jsonl"
    path.write_bytes(body)
    out = CliRunner().invoke(main, [*command, str(path)])
    assert out.exit_code == 1 and out.output == f"Error: {path}: {message}" + out.output.split(message, 1)[1]
    assert "Traceback" not in out.output and out.output.count("\n") == 1


def test_export_loss_names_lines_of_bad_input(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b'{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}\nnot json\n{"type":"progress"}\n'
    )
    out = CliRunner().invoke(
        main, ["export", "--from", "claude_code", str(path), "--to", "markdown", "-o", str(tmp_path / "o.md"), "--loss"]
    )
    assert out.exit_code == 0, out.output
    entries = json.loads(out.stdout)["entries"]
    assert [(e["kind"], e["file"], e["line"]) for e in entries] == [
        ("opaque", str(path), 2),
        ("record:progress", str(path), 3),
    ]


def test_show_into_a_reader_that_stops_early_ends_quietly(tmp_path):
    """``txcodec show … | head -1``: the pipe closes long before the session is shown, and
    the command ends without an error line (it printed "Error: [Errno 32] Broken pipe")."""
    sid = "0c0ffee0-0000-4000-8000-000000000000"
    records, parent = [], None
    for i in range(400):  # 400 prompts and answers of 1 KB each
        for kind in ("user", "assistant"):
            uuid = f"{i:08x}-0000-4000-8000-{kind == 'user':012d}"
            message = {"role": kind, "content": [{"type": "text", "text": f"{kind} {i} " + "x" * 1000}]}
            if kind == "assistant":
                message.update(id=f"msg_{i}", model="claude-sonnet-4-5", stop_reason="end_turn")
            records.append(
                {
                    "type": kind,
                    "uuid": uuid,
                    "parentUuid": parent,
                    "sessionId": sid,
                    "message": message,
                    "timestamp": "2026-12-01T00:00:00.000Z",
                    "cwd": "/work/p",
                    "version": "2.1.332",
                }
            )
            parent = uuid
    big = tmp_path / f"{sid}.jsonl"
    big.write_text("".join(json.dumps(r) + "\n" for r in records))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    shown = subprocess.run(
        f"{shlex.quote(sys.executable)} -m txcodec show {shlex.quote(str(big))} | head -c 100 >/dev/null",
        shell=True,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    whole = subprocess.run([sys.executable, "-m", "txcodec", "show", str(big)], env=env, capture_output=True)
    assert len(whole.stdout) > 1 << 17  # more than a pipe holds: the writer meets the closed pipe
    assert shown.stderr == ""
