"""``txcodec usage``: the lean per-harness decode gives the Common path's numbers, and the
report selects, groups, totals and prices as docs/usage.md says."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from support.paths import CORPUS
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.cli import main
from txcodec.usage import ModelUsage
from txcodec.usage import _lean
from txcodec.usage import file_usage
from txcodec.usage import lean_reader
from txcodec.usage import message_usage
from txcodec.usage import session_usage
from txcodec.usage import total_usage
from txcodec.usage import usage
from txcodec.usage import with_unverified

SPOTTER = CORPUS / "claude_code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"  # 2.1.39, with subagents
MODERN = CORPUS / "claude_code" / "generated" / "claude_write_edit_2turns.jsonl"  # 2.1.332: verified usage


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the price cache stays in the test


def _session_files() -> list[Path]:
    files = [p for p in corpus_files() if "subagents" not in p.parts]
    files += sorted(p for p in GOLDEN.rglob("*.jsonl") if "subagents" not in p.parts)
    return files


def _rows(path: Path) -> list[ModelUsage]:
    """The report's per-model rows for one file, shaped like session_usage's."""
    report = usage([path], by=["model"], prices=False)
    assert not report.errors, report.errors
    fields = ModelUsage.__struct_fields__[2:]
    return [ModelUsage("", r.model, **{f: getattr(r, f) for f in fields}) for r in report.rows]


def test_lean_usage_equals_the_common_path_on_every_session_file():
    compared = lean = 0
    for path in _session_files():
        session = api.load(path)
        if session.harness == "jsonl":
            continue
        conv = api.to_common(session)
        want = [msgspec.structs.replace(r, session="") for r in session_usage(conv)]
        got = _rows(path)
        # reasoning tokens are the report's addition; session_usage counts them too
        assert got == want, path
        fu = file_usage(path)
        sid = conv.meta.id if isinstance(conv.meta.id, str) else "?"
        assert fu.session == sid, path
        compared += 1
        if (
            lean_reader(session.harness) is not None
            and _lean(path, api.read_bytes(path), session.harness, True) is not None
        ):
            lean += 1
    assert compared >= 30 and lean >= 25  # the fast path is the one taken on real files


def test_a_line_the_lean_shape_refuses_falls_back_to_the_full_reader(tmp_path):
    path = tmp_path / "s.jsonl"
    good = MODERN.read_bytes()
    # a valid record whose message is not an object: the lean decode refuses the file
    path.write_bytes(good + b'{"type":"assistant","uuid":"zz","message":"odd"}\n')
    assert _lean(path, path.read_bytes(), "claude_code", True) is None
    assert _rows(path) == [msgspec.structs.replace(r, session="") for r in session_usage(api.to_common(api.load(path)))]


def test_an_assistant_record_spelled_with_escapes_is_still_counted(tmp_path):
    """The lean Claude Code pass skips lines without ``"assistant"`` in their bytes; a
    writer may escape letters, and such a record still counts, as the reader counts it."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(MODERN.read_bytes().replace(b'"type":"assistant"', b'"type":"\\u0061ssistant"'))
    want = [msgspec.structs.replace(r, session="") for r in session_usage(api.to_common(api.load(path, "claude_code")))]
    assert want and want[0].calls > 0
    assert _rows(path) == want


@pytest.mark.parametrize(
    "source, harness",
    [(MODERN, "claude_code"), (CORPUS / "codex" / "generated" / "codex_exec_2turns.jsonl", "codex")],
    ids=["claude_code", "codex"],
)
def test_a_few_lone_surrogate_lines_stay_on_the_lean_path(tmp_path, source, harness):
    """issue 37: JavaScript writes half an emoji as a lone ``\\udXXX`` escape, which msgspec
    refuses; that line alone is decoded from a repaired copy, the file stays on the lean
    pass (it used to go whole to the full reader), and the numbers are the reader's."""
    lines = source.read_bytes().split(b"\n")
    texts = [i for i, x in enumerate(lines) if b'"text":"' in x]
    assert len(texts) >= 3
    for i in (texts[0], texts[len(texts) // 2], texts[-1]):  # head, middle, an assistant line or two
        lines[i] = lines[i].replace(b'"text":"', b'"text":"cut \\ud83d emoji ', 1)
    path = tmp_path / source.name
    path.write_bytes(b"\n".join(lines))
    assert _lean(path, None, harness, True) is not None
    want = [msgspec.structs.replace(r, session="") for r in session_usage(api.to_common(api.load(path, harness)))]
    assert want and want[0].calls > 0
    assert _rows(path) == want


def test_with_unverified_folds_old_sessions_counts_in():
    [row, *_] = session_usage(api.to_common(api.load(SPOTTER)))
    assert row.total_tokens == 0 and row.unverified_total_tokens > 0
    folded = with_unverified(row)
    assert (
        folded.total_tokens == row.unverified_total_tokens
        and folded.calls_unverified == 0
        and folded.calls == row.calls
    )
    conv = api.to_common(api.load(SPOTTER))
    calls = [m for m in conv.messages if m.role == "assistant" and not m.synthetic]
    assert all(message_usage(m, unverified=False) is None for m in calls)  # what summing Message.usage sees
    assert any(message_usage(m) is m.usage_unverified for m in calls)
    everything = total_usage(conv)
    rows = session_usage(conv)
    assert everything.cache_read_input_tokens == sum(r.unverified_cache_read_input_tokens for r in rows) > 0
    assert total_usage(conv, unverified=False).cache_read_input_tokens == 0


def _store(tmp_path: Path) -> dict[str, str]:
    """A home with a Claude Code store (one project, one session with subagents, one
    2.1.332 session) and a Codex store."""
    claude = tmp_path / "claude" / "projects" / "-home-u-proj"
    claude.mkdir(parents=True)
    for p in (SPOTTER, MODERN):
        (claude / p.name).write_bytes(p.read_bytes())
    side = SPOTTER.parent / SPOTTER.stem
    for f in side.rglob("*"):
        if f.is_file():
            target = claude / SPOTTER.stem / f.relative_to(side)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.read_bytes())
    codex_src = next(p for p in corpus_files("codex") if p.name.startswith("rollout-") and "localpush" in p.parts)
    day = tmp_path / "codex" / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    (day / codex_src.name).write_bytes(codex_src.read_bytes())
    return {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "GEMINI_CLI_HOME": str(tmp_path / "none"),
        "QWEN_HOME": str(tmp_path / "none"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "none"),
        "HOME": str(tmp_path / "home"),
    }


def test_no_paths_reads_every_store_and_totals_both_kinds(tmp_path, monkeypatch):
    env = _store(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    report = usage(by=["harness"], prices=False)
    assert [r.harness for r in report.rows] == ["claude_code", "codex"] and not report.errors
    # the same numbers as the files read one by one (subagents come with their session)
    claude = [
        usage([p], by=["harness"], prices=False).totals
        for p in sorted(Path(env["CLAUDE_CONFIG_DIR"]).glob("projects/*/*.jsonl"))
    ]
    assert report.rows[0].calls == sum(t.calls for t in claude)
    assert (
        report.rows[0].unverified_cache_read_input_tokens
        == sum(t.unverified_cache_read_input_tokens for t in claude)
        > 0
    )
    t = report.totals
    assert t.calls == sum(r.calls for r in report.rows) and t.calls_unverified > 0 and t.input_tokens > 0
    assert report.rows[1].reasoning_output_tokens > 0  # Codex records reasoning tokens

    # a folder reads recursively, subagent transcripts with their session, not on their own
    folder = usage([Path(env["CLAUDE_CONFIG_DIR"])], by=["session"], prices=False)
    assert sorted(r.session for r in folder.rows) == sorted([SPOTTER.stem, _sid(MODERN)])
    assert folder.totals.calls == report.rows[0].calls

    out = CliRunner().invoke(main, ["usage", "--by", "harness,model", "--no-cost"], env=env)
    assert out.exit_code == 0, out.output
    assert "claude-opus-4-6 (unverified)" in out.output and "total*" in out.output and "reasoning" in out.output


def _first(path: Path, key: str) -> str:
    for line in path.read_bytes().splitlines():
        value = json.loads(line)
        if value.get(key):
            return value[key]
    raise AssertionError(path)


def _sid(path: Path) -> str:
    return _first(path, "sessionId")


def test_select_by_day_project_and_harness(tmp_path, monkeypatch):
    for k, v in _store(tmp_path).items():
        monkeypatch.setenv(k, v)
    days = usage(by=["day"], prices=False)
    assert len(days.rows) >= 2 and all(len(r.day) == 10 for r in days.rows)
    first, last = days.rows[0].day, days.rows[-1].day
    only = usage(by=["day"], since=last, until=last, prices=False)
    assert [r.day for r in only.rows] == [last] and only.totals.calls == days.rows[-1].calls
    assert usage(by=["day"], until=first, prices=False).rows[-1].day == first
    assert usage(by=["month"], prices=False).totals.calls == days.totals.calls
    project = _first(SPOTTER, "cwd").rsplit("/", 1)[-1]  # the project is the recorded cwd's folder
    assert project in {r.project for r in usage(by=["project"], prices=False).rows}
    mine = usage(project=project, by=["session"], prices=False)
    assert {r.session for r in mine.rows} == {SPOTTER.stem}
    assert mine.totals.calls == usage([SPOTTER], prices=False).totals.calls
    assert usage(harness="codex", by=["harness"], prices=False).rows[0].harness == "codex"
    assert usage(project="no-such-project", prices=False).rows == []
    with pytest.raises(ValueError, match="not a date"):
        usage(since="last tuesday")


def test_cost_comes_from_genai_prices_and_unpriced_models_are_named(tmp_path):
    pytest.importorskip("genai_prices", reason="the prices extra is not installed")
    report = usage([MODERN, SPOTTER], by=["model"])
    priced = [r for r in report.rows if r.cost_usd is not None]
    assert priced and all(r.cost_usd > 0 for r in priced if r.total_tokens + r.unverified_total_tokens)
    assert report.prices.startswith("genai-prices ")
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(MODERN.read_bytes().replace(b'"model":"claude-opus-5-5"', b'"model":"house-model-9"'))
    assert "house-model-9" in usage([odd]).unpriced
    # a second report reads the rates kept from the first, the same dollars
    assert usage([MODERN, SPOTTER], by=["model"]) == report
    out = CliRunner().invoke(main, ["usage", str(odd)])
    assert out.exit_code == 0 and "no price known for: house-model-9" in out.output
    data = json.loads(CliRunner().invoke(main, ["usage", "--json", "--by", "model", str(MODERN)]).stdout)
    assert data["totals"]["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in data["rows"]))


def test_the_price_cache_names_its_table(tmp_path):
    """The table's name and version are kept with its rates: a report that finds them in
    the cache names the table from there (listing site-packages for its dist-info costs
    more than a small session's whole report), and a cache written before it named the
    table still serves its rates and gains the name."""
    pytest.importorskip("genai_prices", reason="the prices extra is not installed")
    report = usage([MODERN], by=["model"])
    cache = tmp_path / "cache" / "txcodec" / "prices.json"
    kept = json.loads(cache.read_bytes())
    assert kept["source"] == report.prices and kept["rates"]
    cache.write_text(json.dumps({**kept, "source": "genai-prices 0.0.test"}))
    assert usage([MODERN], by=["model"]).prices == "genai-prices 0.0.test"
    del kept["source"]
    cache.write_text(json.dumps(kept))
    again = usage([MODERN], by=["model"])
    assert again.prices == report.prices and again.rows == report.rows
    assert json.loads(cache.read_bytes())["source"] == report.prices


def test_a_page_s_prices_are_kept_for_the_next_export(tmp_path, monkeypatch):
    """model_cost (the HTML pages' price) keeps the rates it found, so that the next
    process prices the same models without importing genai-prices."""
    pytest.importorskip("genai_prices", reason="the prices extra is not installed")
    from txcodec import usage as module

    row = ModelUsage("", "claude-opus-4-6", calls=1, input_tokens=1000, output_tokens=200, cache_read_input_tokens=5000)
    monkeypatch.setattr(module, "_table", None)
    first = module.model_cost(row)
    assert first is not None and first > 0
    kept = json.loads((tmp_path / "cache" / "txcodec" / "prices.json").read_bytes())
    assert "claude-opus-4-6" in kept["rates"]
    monkeypatch.setattr(module, "_table", None)  # a new process, as it were
    assert module.model_cost(row) == first
    assert module._table.calc is None  # the table was not imported: the rate came from the cache


def test_bad_by_and_bad_file_are_one_line(tmp_path):
    out = CliRunner().invoke(main, ["usage", "--by", "weekday", str(MODERN)])
    assert out.exit_code == 2 and "choose from session, day" in out.output
    bad = tmp_path / "s.jsonl"
    bad.write_bytes(b"garbage\n")
    both = CliRunner().invoke(main, ["usage", str(MODERN), str(bad)])
    assert (
        both.exit_code == 1
        and f"Error: {bad}: no known session format" in both.output
        and "claude-opus-5-5" in both.output
    )


def test_parallel_and_serial_reports_agree(tmp_path, monkeypatch):
    monkeypatch.setattr("txcodec.usage._PARALLEL_BYTES", 0)
    files = [p for p in corpus_files("claude_code") if "subagents" not in p.parts]
    assert usage(files, jobs=2, prices=False) == usage(files, jobs=1, prices=False)


def test_folders_read_subagent_files_with_their_session_only(tmp_path):
    from txcodec.usage import folder_files

    chats = tmp_path / "gemini" / "tmp" / "proj" / "chats"
    (chats / "abcdef12-0000-4000-8000-000000000000").mkdir(parents=True)
    main = chats / "session-2026-01-01T00-00-abcdef12.jsonl"
    child = chats / "abcdef12-0000-4000-8000-000000000000" / "child.jsonl"
    orphan_dir = chats / "99999999-0000-4000-8000-000000000000"
    orphan_dir.mkdir()
    orphan = orphan_dir / "child.jsonl"
    claude = tmp_path / "claude" / "p"
    (claude / "s1" / "subagents").mkdir(parents=True)
    side = [
        claude / "s1.jsonl",
        claude / "s1" / "subagents" / "agent-a.jsonl",
        claude / "s1" / "subagents" / "agent-a.meta.json",
    ]
    lost = tmp_path / "claude" / "q" / "s2" / "subagents" / "agent-b.jsonl"  # its main transcript was pruned
    lost.parent.mkdir(parents=True)
    for p in [main, child, orphan, *side, lost]:
        p.write_bytes(b"{}\n")
    assert folder_files(tmp_path) == sorted([claude / "s1.jsonl", lost, main, orphan])


def test_a_large_file_read_in_parts_gives_the_same_calls(monkeypatch):
    """Above a size a Claude Code file is cut at line ends and read by several processes;
    the rules run over the parts' lines in order, so nothing changes."""
    from txcodec.harnesses.claude_code.usage import file_calls
    from txcodec.usage import _line_ranges
    from txcodec.usage import _split

    monkeypatch.setattr("os.cpu_count", lambda: 3)
    for path in [SPOTTER, MODERN, *[p for p in corpus_files("claude_code") if p.suffix == ".jsonl"][:12]]:
        ranges = _line_ranges(path, 3)
        assert ranges[0][0] == 0 and ranges[-1][1] == path.stat().st_size
        assert all(a < b for a, b in ranges) and all(r[1] == s[0] for r, s in zip(ranges, ranges[1:]))
        data = path.read_bytes()
        assert all(a == 0 or data[a - 1 : a] == b"\n" for a, _ in ranges)
        assert _split(path, lean_reader("claude_code")) == file_calls(data), path


def _lean_files(harness: str) -> list[Path]:
    """Every corpus and golden (scenarios included) file of ``harness``, subagents too."""
    files = corpus_files(harness, (".jsonl",)) + sorted((GOLDEN / harness).rglob("*.jsonl"))
    return [p for p in files if p.name != "journal.jsonl"]


def _blocks_of(path: Path, reader):
    from txcodec.usage import line_blocks

    with open(path, "rb", buffering=0) as f:
        return reader(line_blocks(f))


def test_every_way_the_lean_claude_pass_reads_a_file_gives_the_same_calls(monkeypatch):
    """The whole-piece decode, the careful substring search it falls back to, the file
    read in blocks (a buffer smaller than most lines included) and in parts by several
    processes: the same calls on every corpus, golden and scenario file."""
    from txcodec.harnesses.claude_code import usage as lean
    from txcodec.usage import _split

    files = _lean_files("claude_code")
    assert len(files) > 40
    for path in files:
        data = path.read_bytes()
        try:
            careful = lean._calls(lean._searched(data, None, None))
        except (msgspec.DecodeError, msgspec.ValidationError):
            careful = None
        assert lean.file_calls(data) == careful, path
        assert _blocks_of(path, lean.file_calls) == careful, path
    monkeypatch.setattr("txcodec.usage._BLOCK", 256)
    monkeypatch.setattr("txcodec.usage._spare", [])
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    for path in files[:: max(1, len(files) // 30)]:
        want = lean.file_calls(path.read_bytes())
        assert _blocks_of(path, lean.file_calls) == want, path
        if want is not None:
            assert _split(path, lean.USAGE) == want, path


def test_the_lean_codex_pass_reads_a_file_the_same_in_blocks(monkeypatch):
    from txcodec.harnesses.codex import usage as lean

    files = _lean_files("codex")
    assert len(files) > 20
    monkeypatch.setattr("txcodec.usage._BLOCK", 512)
    monkeypatch.setattr("txcodec.usage._spare", [])
    read = 0
    for path in files:
        want = lean.file_calls(path.read_bytes())
        assert _blocks_of(path, lean.file_calls) == want, path
        read += want is not None
    assert read > 10


def test_a_user_line_the_lean_shape_refuses_costs_speed_not_numbers(tmp_path):
    """A line usage does not read (here a user record whose message is a string) makes
    its piece be read the careful way; the file stays on the lean path and its numbers
    are the full reader's."""
    lines = MODERN.read_bytes().split(b"\n")
    odd = b'{"type":"user","uuid":"zz","sessionId":"x","message":"odd"}'
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([*lines[:3], odd, *lines[3:]]))
    assert _lean(path, None, "claude_code", True) is not None
    want = [msgspec.structs.replace(r, session="") for r in session_usage(api.to_common(api.load(path)))]
    assert want and want[0].calls > 0 and _rows(path) == want


def test_line_blocks_gives_whole_lines_and_every_byte(monkeypatch):
    import io
    import random

    from txcodec import usage as usage_module

    rng = random.Random(5)
    for _ in range(400):
        monkeypatch.setattr(usage_module, "_BLOCK", rng.randint(1, 64))
        if rng.random() < 0.3:
            usage_module._spare.clear()
        lines = [b"x" * rng.choice([0, 1, 5, 30, 100]) for _ in range(rng.randint(0, 30))]
        data = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")
        start = rng.randint(0, len(data))
        end = rng.randint(start, len(data))
        for a, b in ((0, None), (start, end)):
            blocks = [bytes(v) for v in usage_module.line_blocks(io.BytesIO(data), a, b)]
            assert b"".join(blocks) == data[a:b]
            assert all(block.endswith(b"\n") for block in blocks[:-1]) and all(blocks)
    usage_module._spare.clear()


def test_read_chunks_gives_whole_lines_and_every_byte():
    import io
    import random

    from txcodec.core.jsonl import read_chunks

    rng = random.Random(3)
    for _ in range(300):
        lines = [b"x" * rng.choice([0, 1, 5, 30, 100]) for _ in range(rng.randint(0, 30))]
        data = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")
        pieces = list(read_chunks(io.BytesIO(data), rng.randint(1, 64)))
        assert b"".join(pieces) == data
        assert all(p.endswith(b"\n") for p in pieces[:-1])


def test_the_codex_store_lists_what_rglob_lists(tmp_path):
    """``rollout_files`` walks the store by the entries' own types (usage lists it on
    every run); it finds what ``rglob("rollout-*")`` and ``is_file()`` find, in the order
    paths compare (``2026/...`` before ``2026-x/...``, which strings put the other way)."""
    import os

    from txcodec.harnesses.codex.store import SUFFIXES
    from txcodec.harnesses.codex.store import rollout_files

    names = [
        "sessions/2026/01/02/rollout-a.jsonl",
        "sessions/2026/01/02/rollout-b.jsonl.zst",
        "sessions/rollout-c.json",
        "sessions/2026/x-rollout-d.jsonl",
        "archived_sessions/.h/rollout-e.jsonl",
        "sessions/2026/01/Rollout-f.jsonl",
        "sessions/2026/rollout-dir.jsonl/rollout-g.jsonl",
        "sessions/2026-x/rollout-h.jsonl",
    ]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    os.symlink(tmp_path / "sessions/2026/01", tmp_path / "sessions/linked")  # a symlinked folder is not entered
    os.symlink(tmp_path / names[0], tmp_path / "archived_sessions/rollout-link.jsonl")
    os.symlink(tmp_path / "nowhere", tmp_path / "archived_sessions/rollout-broken.jsonl")
    want = sorted(
        (p, sub == "archived_sessions")
        for sub in ("sessions", "archived_sessions")
        for p in (tmp_path / sub).rglob("rollout-*")
        if p.name.endswith(SUFFIXES) and p.is_file()
    )
    assert rollout_files(tmp_path) == want and len(want) == 7  # rollout-c.json: a 0.1.x rollout
    assert want[-2][0].name == "rollout-h.jsonl"  # as a string, it would come before the 2026/ ones


def _claude_line(kind: str, n: int, tokens: int = 5) -> bytes:
    message: dict = {"role": kind, "content": [{"type": "text", "text": f"{kind} {n}"}]}
    if kind == "assistant":
        message |= {"id": f"msg_{n}", "model": "claude-x", "stop_reason": "end_turn"}
        message["usage"] = {"input_tokens": tokens, "output_tokens": 1}
    record = {"type": kind, "uuid": f"u{n}", "sessionId": "s", "timestamp": f"2030-01-01T00:00:0{n}Z"}
    return msgspec.json.encode(record | {"message": message})


def test_a_token_count_past_64_bits_is_one_error_line_not_a_traceback(tmp_path):
    """Counts are kept as 64-bit integers (the session index, the copies' marks): a count of
    2**63 or more is no real one, and the file is refused in one line (it used to stop
    ``usage`` with an OverflowError)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([_claude_line("user", 1), _claude_line("assistant", 2, tokens=2**63)]) + b"\n")
    report = usage([path], prices=False)
    assert report.rows == [] and report.errors == [f"{path}: a token count past 2**63, which is no count of tokens"]
    out = CliRunner().invoke(main, ["usage", str(path)])
    assert out.exit_code == 1 and "a token count past 2**63" in out.output and "Traceback" not in out.output
    path.write_bytes(b"\n".join([_claude_line("user", 1), _claude_line("assistant", 2, tokens=2**63 - 1)]) + b"\n")
    assert usage([path], by=["model"], prices=False).rows[0].input_tokens == 2**63 - 1  # the largest that fits


def _rollout(*odd: bytes) -> bytes:
    meta = {"id": "01990000-0000-7000-8000-0000000000c1", "cwd": "/w", "cli_version": "0.171.0"}
    lines = [
        {"type": "session_meta", "timestamp": "2030-01-01T00:00:00Z", "payload": meta},
        {"type": "turn_context", "timestamp": "2030-01-01T00:00:00Z", "payload": {"model": "gpt-x", "cwd": "/w"}},
        {
            "type": "response_item",
            "timestamp": "2030-01-01T00:00:01Z",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        },
        {
            "type": "response_item",
            "timestamp": "2030-01-01T00:00:02Z",
            "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "yo"}]},
        },
    ]
    usage_ = {
        "input_tokens": 9,
        "cached_input_tokens": 0,
        "output_tokens": 2,
        "reasoning_output_tokens": 0,
        "total_tokens": 11,
    }
    count = {
        "type": "event_msg",
        "timestamp": "2030-01-01T00:00:02Z",
        "payload": {"type": "token_count", "info": {"total_token_usage": usage_, "last_token_usage": usage_}},
    }
    return b"\n".join([msgspec.json.encode(v) for v in lines] + list(odd) + [msgspec.json.encode(count)]) + b"\n"


@pytest.mark.parametrize(
    "odd",
    [
        b'{"type":"response_item","payload":{"type":"message","content":' + b"[" * 5000 + b"]" * 5000 + b"}}",
        b'{"type":"response_item","timestamp":"2030-01-01T00:00:01Z","payload":{"type":{"a":1},"role":"user"}}',
        b'{"type":"response_item","timestamp":"2030-01-01T00:00:01Z","payload":{"type":["message"],"role":"user"}}',
    ],
    ids=["nested too deeply", "an object for a type", "a list for a type"],
)
def test_a_codex_line_the_lean_pass_cannot_type_is_read_the_full_way(tmp_path, odd):
    """It used to stop ``usage`` with a RecursionError or a TypeError; the file is now read
    through Common, and its numbers are the full read's."""
    from txcodec.harnesses.codex.usage import file_calls

    data = _rollout(odd)
    assert file_calls(_rollout()) is not None and file_calls(data) is None
    path = tmp_path / "rollout-2030-01-01T00-00-00-01990000-0000-7000-8000-0000000000c1.jsonl"
    path.write_bytes(data)
    want = [msgspec.structs.replace(r, session="") for r in session_usage(api.to_common(api.load(path, "codex")))]
    assert want and want[0].input_tokens == 9
    assert _rows(path) == want


def test_a_claude_code_line_nested_too_deeply_is_read_the_full_way(tmp_path, monkeypatch):
    """...by one process or, cut in parts, by several (it used to stop ``usage`` with a
    RecursionError either way)."""
    from txcodec.harnesses.claude_code.usage import file_calls
    from txcodec.usage import _split

    deep = msgspec.json.decode(_claude_line("assistant", 3))
    deep["message"]["content"] = "HOLE"
    lines = [_claude_line("user", 1), _claude_line("assistant", 2), *[_claude_line("user", n) for n in range(4, 40)]]
    lines.insert(2, msgspec.json.encode(deep).replace(b'"HOLE"', b"[" * 5000 + b"]" * 5000))
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert file_calls(path.read_bytes()) is None
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    assert _split(path, lean_reader("claude_code")) is None
    want = [msgspec.structs.replace(r, session="") for r in session_usage(api.to_common(api.load(path, "claude_code")))]
    assert want and want[0].calls == 1  # the full read passes over the deep line, and counts the other call
    assert _rows(path) == want
