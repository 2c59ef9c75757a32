"""The session index (``list``) and naming a session by id, prefix or ``latest`` in every command."""

from __future__ import annotations

import json
import shutil

import click
import pytest
from click.testing import CliRunner

from txcodec import api
from txcodec import sessions
from txcodec.cli import main
from txcodec.cli.store import sample_path

STORE_ENV = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "QWEN_RUNTIME_DIR",
    "PI_CODING_AGENT_DIR",
)
HARNESSES = ("claude_code", "codex", "gemini_cli", "qwen_code", "pi")
FIELDS = [
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


@pytest.fixture
def home(tmp_path, monkeypatch) -> dict[str, str]:
    """A HOME whose five stores each hold the bundled sample, converted; Gemini CLI's also
    holds a subagent chat of it. Returns each harness's session id."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in STORE_ENV:
        monkeypatch.delenv(name, raising=False)
    ids = {}
    for n, harness in enumerate(HARNESSES):
        # ids sharing the sample's first 8 digits (but codex's)
        sid = {"claude_code": None, "codex": "0199aaaa-0000-7000-8000-000000000001"}.get(
            harness, f"4f6c1d2e-0000-4000-8000-00000000000{n}"
        )
        written, _ = api.convert(sample_path("claude_code"), harness, cwd="/home/dev/shop", session_id=sid)
        paths = api.install(written, harness)
        ids[harness] = written.session_id
        if harness == "gemini_cli":
            main_file = paths[0]
            data = main_file.read_text().replace(written.session_id, "9999aaaa-0000-4000-8000-000000000001", 1)
            first, rest = data.split("\n", 1)
            head = json.loads(first) | {"kind": "subagent"}
            sub = main_file.parent / written.session_id / "9999aaaa-0000-4000-8000-000000000001.jsonl"
            sub.parent.mkdir()
            sub.write_text(json.dumps(head) + "\n" + rest)
    return ids


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_every_harness_gives_the_same_row_schema(home):
    rows = json.loads(run("list", "--json").stdout)
    assert {r["harness"] for r in rows} == set(HARNESSES)
    for row in rows:
        assert list(row)[: len(FIELDS)] == FIELDS
        assert row["cwd"] == "/home/dev/shop" and row["project"] == "shop"
        assert row["first_prompt"] == "Checkout returns 500 for an empty cart. Find out why and fix it."
        assert row["models"] == ["claude-opus-5"] and row["started"].startswith("2026-09-18T10:00")
    (sub,) = [r for r in rows if r["parent"] is not None]
    assert sub["harness"] == "gemini_cli" and sub["parent"] == home["gemini_cli"]


def test_filters_and_content_search(home):
    def ids(*args):
        return sorted(r["harness"] for r in json.loads(run("list", "--json", *args).stdout) if r["parent"] is None)

    assert ids("--harness", "codex") == ["codex"] and ids("--from", "pi") == ["pi"]
    assert len(ids("--project", "shop")) == 5 and ids("--project", "other") == []
    assert ids("--until", "2026-09-17") == []
    assert len(ids("--since", "2026-09-18", "--until", "2026-09-18", "--harness", "claude_code")) == 1
    assert ids("--grep", "no-such-words-anywhere") == []
    assert len(ids("--grep", "EMPTY CART")) == 5  # case-insensitive, every harness's file
    assert len(ids("--limit", "2")) == 2
    bad = run("list", "--since", "last tuesday")
    assert bad.exit_code == 1 and "not a date" in bad.output


def test_table_has_a_header_fits_the_terminal_and_folds_subagents(home, tmp_path):
    sid = home["claude_code"]
    claude_file = next((tmp_path / ".claude/projects").rglob(f"{sid}.jsonl"))
    with claude_file.open("a") as f:  # a multi-line title must not break the layout
        f.write(json.dumps({"type": "custom-title", "customTitle": "line one\nline two", "sessionId": sid}) + "\n")
    out = run("list").stdout
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["harness", "updated", "msgs"]
    assert max(len(line) for line in lines) <= 160
    assert "line one\\nline two" in out
    sub_line = next(i for i, line in enumerate(lines) if "└ 9999aaaa" in line)
    assert home["gemini_cli"][:8] in lines[sub_line - 1] and "gemini_cli" in lines[sub_line - 1]
    # a title-less codex session shows its first prompt
    assert any(line.startswith("codex") and "Checkout returns 500" in line for line in lines)


def test_resolve_by_id_prefix_latest_and_ambiguity(home, tmp_path):
    codex_id = home["codex"]
    path = sessions.resolve(codex_id)
    assert path.is_file() and codex_id in path.name
    assert sessions.resolve(codex_id[:13]) == path
    assert sessions.resolve("latest:codex") == path
    assert sessions.resolve(str(path)) == path
    with pytest.raises(ValueError) as ambiguous:
        sessions.resolve(home["claude_code"][:8])  # four harnesses hold the sample's id
    message = str(ambiguous.value)
    assert "4 sessions match" in message and all(h in message for h in ("claude_code", "gemini_cli", "pi", "qwen_code"))
    with pytest.raises(ValueError, match="no session id starting"):
        sessions.resolve("zzzz")
    assert sessions.resolve(home["claude_code"][:8], "pi").name.endswith(f"{home['pi']}.jsonl")
    assert sessions.resolve(home["qwen_code"]).name == f"{home['qwen_code']}.jsonl"  # an exact id wins


@pytest.mark.parametrize(
    "command", [("show",), ("export", "--to", "markdown"), ("inspect",), ("convert", "--to", "claude_code")]
)
def test_every_command_takes_an_id(home, command):
    result = run(*command, home["codex"][:13])
    assert result.exit_code == 0, result.output
    missing = run(*command, "bf91e0df")
    assert missing.exit_code == 2 and "no session id starting with it" in missing.output
    assert "Traceback" not in missing.output


# every command that takes a session, with what else it needs to run ({out}: a fresh output path)
SESSION_COMMANDS = [
    ("show",),
    ("export", "--to", "markdown"),
    ("inspect",),
    ("convert", "--to", "claude_code", "-o", "{out}"),
    ("changes",),
    ("lineage",),
    ("usage",),
    ("metrics",),
    ("verify",),
]


@pytest.mark.parametrize("command", SESSION_COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("how", ["id", "prefix", "latest", "latest:codex"])
def test_every_session_command_takes_an_id_a_prefix_and_latest(home, command, how, tmp_path):
    """One resolver (txcodec.sessions.resolve) behind every session argument: none of them
    says "File 'latest' does not exist"."""
    codex_file = sessions.resolve(home["codex"])
    name = {"id": home["codex"], "prefix": home["codex"][:13], "latest": "latest", "latest:codex": "latest:codex"}[how]
    args = [a.replace("{out}", str(tmp_path / "out.jsonl")) for a in command]
    result = run(*args, name)
    assert "does not exist" not in result.output
    assert result.exit_code == 0, result.output
    if command[0] in ("inspect", "verify") and how != "latest":  # (latest: the newest of any store)
        assert str(codex_file) in result.output or home["codex"] in result.output


def test_verify_takes_latest(home):
    result = run("verify", "latest:pi")
    assert result.exit_code == 0, result.output
    assert home["pi"] in result.output


def test_show_on_an_ambiguous_prefix_lists_the_candidates(home):
    result = run("show", home["claude_code"][:8])
    assert result.exit_code == 2 and "sessions match" in result.output and "qwen_code" in result.output


def test_a_missing_path_is_still_named_as_a_path(tmp_path):
    result = run("show", str(tmp_path / "gone.jsonl"))
    assert result.exit_code == 2 and "no such file" in result.output


def test_gemini_legacy_and_empty_stores_do_not_break_the_index(home, tmp_path):
    shutil.rmtree(tmp_path / ".qwen")
    rows = sessions.discover()
    assert "qwen_code" not in {r.harness for r in rows} and len(rows) == 5


def test_verify_streams_quiet_failures_only_and_junit(tmp_path):
    import xml.etree.ElementTree as ET

    good = tmp_path / "good.jsonl"
    good.write_bytes(b'{"type":"mode","mode":"a"}\n')
    bad = tmp_path / "bad.jsonl.zst"
    bad.write_bytes(b"not zstd")
    report = tmp_path / "junit.xml"
    result = run("verify", str(good), str(bad), "--failures-only", "--junit", str(report))
    assert result.exit_code == 1
    assert "bad.jsonl.zst" in result.output and "good.jsonl" not in result.output
    suite = ET.parse(report).getroot()
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("2", "1", "0")
    assert [c.get("name").endswith("bad.jsonl.zst") for c in suite if c.find("error") is not None] == [True]
    quiet = run("verify", "-q", str(good))
    assert quiet.exit_code == 0 and quiet.output == ""
    assert run("verify", "-q", str(bad)).exit_code == 1
    (tmp_path / "empty").mkdir()
    empty = run("verify", str(tmp_path / "empty"))
    assert empty.exit_code == 2 and "no .jsonl, .json or .zst files found" in empty.output
    assert "byte-identical" not in empty.output and empty.output.count("\n") == 1


def test_content_search_streams_across_chunk_boundaries(tmp_path):
    import zstandard

    from txcodec.sessions import _contains
    from txcodec.sessions import _needles

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x" * 1000 + b'{"text":"Empty \\"Cart\\" here"}\n' + b"y" * 1000)
    for chunk in (7, 64, 1 << 20):  # the phrase straddles chunk borders
        assert _contains(str(path), _needles('empty "cart"'), chunk=chunk)
        assert not _contains(str(path), _needles("full cart"), chunk=chunk)
    packed = tmp_path / "s.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    assert _contains(str(packed), _needles("EMPTY"), chunk=16)
    assert _contains(str(path), _needles("é")) is False
    (tmp_path / "u.jsonl").write_bytes('{"t":"caf\\u00e9"}\n'.encode())
    assert _contains(str(tmp_path / "u.jsonl"), _needles("café"))  # the JSON-escaped spelling matches too


def test_date_filters_parse_ages_dates_and_times():
    from datetime import UTC
    from datetime import datetime

    from txcodec.core.dates import parse_timestamp
    from txcodec.core.dates import parse_when
    from txcodec.core.dates import within

    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert parse_when("7d", now=now) == datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    assert parse_when("12h", now=now) == datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    assert parse_when("2026-11-30") == datetime(2026, 11, 30, tzinfo=UTC)
    assert parse_when("2026-11-30", end=True).date().isoformat() == "2026-11-30"  # the whole day
    assert parse_when("yesterday", now=now) == datetime(2026, 11, 30, tzinfo=UTC)
    assert parse_when("2026-11-30T10:00:00+02:00") == datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    with pytest.raises(ValueError, match="not a date"):
        parse_when("soon")
    assert parse_timestamp("2026-11-30T08:00:00.123Z") == datetime(2026, 11, 30, 8, 0, 0, 123000, tzinfo=UTC)
    assert within("2026-11-30T08:00:00Z", parse_when("2026-11-30"), parse_when("2026-11-30", end=True))
    assert not within(None, parse_when("2026-11-30"), None) and within(None, None, None)


# -- a listed row's lineage is what the loaded session gives --


def _lineage_files() -> list:
    from support.paths import GOLDEN
    from support.paths import corpus_files

    golden = [p for h in ("claude_code", "codex", "pi") for p in sorted((GOLDEN / h).rglob("*.jsonl"))]
    return golden + [p for h in ("claude_code", "codex", "pi") for p in corpus_files(h, (".jsonl",))]


@pytest.mark.parametrize("path", _lineage_files(), ids=str)
def test_row_lineage_is_what_the_loaded_session_gives(path):
    from txcodec import lineage

    harness = next(h for h in ("claude_code", "codex", "pi") if h in path.parts or f"/{h}/" in str(path))
    row = sessions.SessionRow(harness=harness, session_id="", path=str(path))
    sessions.describe_row(row)
    try:
        expected = lineage.origin(path, harness)
    except (OSError, ValueError):
        expected = None
    forked = expected.forked_from.session_id if expected and expected.forked_from else None
    assert (row.started_by, row.forked_from) == ((expected.started_by, forked) if expected else (None, None))


def test_the_stores_are_every_harness_s_without_importing_the_storeless():
    """``stores()`` (every listing) skips the built-ins named as keeping no store: they
    have none, and the stores are those every registered harness gives."""
    from txcodec.kit import registry

    every = registry.harnesses()
    assert all(every[name].store is None for name in registry.STORELESS)
    assert sessions.stores() == {name: h.store for name, h in sorted(every.items()) if h.store is not None}


def test_list_shows_the_shortest_unique_id_prefix_and_full_ids_on_request(home):
    from txcodec.cli.store import short_ids

    assert short_ids(
        ["0199aaaa-0000-7000-8000-000000000001", "0199aaaa-0000-7000-8000-000000000002", "4f6c1d2e-1"]
    ) == {
        "0199aaaa-0000-7000-8000-000000000001": "0199aaaa-0000-7000-8000-000000000001",
        "0199aaaa-0000-7000-8000-000000000002": "0199aaaa-0000-7000-8000-000000000002",
        "4f6c1d2e-1": "4f6c1d2e",
    }
    assert short_ids(["abcdef0123", "abcdef0456"]) == {"abcdef0123": "abcdef01", "abcdef0456": "abcdef04"}
    many = [f"{n:04x}{m:04x}-{n}" for n in range(40) for m in range(3)] + ["00000000-7", "0000000a"]
    whole = short_ids(many)
    for wanted in (many[:1], many[5:9], many[-2:], many):  # a few of many (list --grep): the same prefixes
        assert short_ids(many, wanted=wanted) == {sid: whole[sid] for sid in wanted}
    lines = run("list", "--harness", "codex").stdout.splitlines()
    shown = lines[1].split()[4]  # harness, date, time, messages, id
    assert shown == home["codex"][:8] and home["codex"] not in lines[1]  # the only codex id: 8 digits name it
    assert sessions.resolve(shown).name.endswith(f"{home['codex']}.jsonl")
    assert home["codex"] in run("list", "--harness", "codex", "--full-id").stdout


def _completions(args: list[str], incomplete: str) -> list[tuple[str, str]]:
    from click.shell_completion import ShellComplete

    found = ShellComplete(main, {}, "txcodec", "_TXCODEC_COMPLETE").get_completions(args, incomplete)
    return [(item.value, item.type) for item in found]


@pytest.mark.parametrize("command", ["show", "export", "convert", "inspect", "changes", "lineage", "usage", "verify"])
def test_the_shell_completes_session_ids_then_files(home, command):
    found = _completions([command], home["codex"][:6])
    assert (home["codex"], "plain") in found
    assert (home["codex"][:6], "file") in found  # the shell's own file names too
    assert ("latest:codex", "plain") in _completions([command], "latest:c")
    assert _completions([command], "./x") == [("./x", "file")]  # a path: files only, no store read


def test_the_shell_completes_every_choice_option():
    """Every option with a fixed set of values completes them (harness names, --by keys,
    --to formats): the test walks every command's options."""
    from click.shell_completion import ShellComplete

    from txcodec.cli import COMMANDS

    ctx = click.Context(main)
    missing = []
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        for param in command.params:
            if not isinstance(param, click.Option) or param.is_flag or param.count:
                continue
            choice = isinstance(param.type, click.Choice) or param.name in ("harness", "from_", "by")
            if choice and not param.shell_complete(click.Context(command), ""):
                missing.append(f"{name} {param.opts[0]}")
    assert not missing
    assert ("day,model", "plain") in _completions(["usage", "--by"], "day,m")
    assert ("codex", "plain") in _completions(["list", "--harness"], "co")
    assert ("gemini_cli", "plain") in _completions(["convert", "--from"], "gem")
    _ = ShellComplete
