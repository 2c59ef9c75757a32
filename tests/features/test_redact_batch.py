"""``--redact`` on the batch commands: ``convert --all`` (sessions converted in worker processes)
and ``export --all --to html`` (a site). One placeholder table a run: every session is learned
before any is written, and a value has the same placeholder in every output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import GOLDEN
from support.planted_secrets import FAMILIES
from support.planted_secrets import USER
from support.planted_secrets import leaks
from support.planted_secrets import plant

from txcodec.cli import main
from txcodec.verify import verify_file

PLANTED = ("edit_read_write", "subagent_lineage", "bash_carriers", "compaction")
# a value only its context shows to be a secret (``DB_PASSWORD=…``), planted bare in a session
# that holds no such context: only the run's table redacts it there
(BARE,) = next(values for family, _, values in FAMILIES if family == "env-password")


def _copy(source: Path, folder: Path, data: bytes) -> None:
    (folder / source.name).write_bytes(data)
    side = source.with_suffix("")
    if side.is_dir():
        for file in side.rglob("*"):
            if file.is_file():
                dest = folder / side.name / file.relative_to(side)
                dest.parent.mkdir(parents=True, exist_ok=True)
                raw = file.read_bytes()
                dest.write_bytes(plant(raw, "claude_code") if file.suffix == ".jsonl" else raw)


def _with_text(data: bytes, text: str) -> bytes:
    """The session with ``text`` appended to its first prompt (every line still JSON)."""
    lines = data.split(b"\n")
    for n, line in enumerate(lines):
        record = json.loads(line) if line.strip() else {}
        content = record.get("message", {}).get("content") if record.get("type") == "user" else None
        if isinstance(content, str):
            record["message"]["content"] = f"{content} {text}"
            lines[n] = json.dumps(record, separators=(",", ":")).encode()
            return b"\n".join(lines)
    raise AssertionError("no prompt to plant in")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A Claude Code projects folder: planted sessions (side folders too) under the user's
    munged home, and one unplanted session holding only the bare value."""
    root = tmp_path_factory.mktemp("store")
    folder = root / f"-home-{USER}-work"
    folder.mkdir()
    for case in PLANTED:
        for source in (GOLDEN / "claude_code" / case).glob("*.jsonl"):
            data = plant(source.read_bytes(), "claude_code")
            _copy(source, folder, _with_text(data, f"DB_PASSWORD={BARE} in .env") if case == PLANTED[0] else data)
    (source,) = (GOLDEN / "claude_code" / "thinking").glob("*.jsonl")
    _copy(source, folder, _with_text(source.read_bytes(), f"The old one was {BARE} until Monday."))
    text = "\n".join(p.read_text() for p in folder.rglob("*.jsonl"))
    assert BARE in text and USER in text and len(list(folder.glob("*.jsonl"))) == len(PLANTED) + 1
    return root


def _outputs(out: Path) -> list[Path]:
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files
    return files


def _leaked(out: Path) -> dict[str, list[str]]:
    leaked = {}
    for path in _outputs(out):
        found = leaks(path.read_text(errors="replace")) + leaks(str(path.relative_to(out)))
        if found:
            leaked[str(path.relative_to(out))] = found
    return leaked


def _placeholders(out: Path, kind: str) -> dict[str, set[str]]:
    """Each output file's placeholders of one kind."""
    found = {}
    for path in _outputs(out):
        names = set(re.findall(rf"«redacted:{kind}:[^»]+»", path.read_text(errors="replace")))
        if names:
            found[path.name] = names
    return found


@pytest.mark.parametrize("to", ["codex", "pi"])
def test_convert_all_redact_leaves_no_planted_value(store: Path, tmp_path: Path, to: str) -> None:
    out = tmp_path / "out"
    args = ["convert", "--all", "--from", "claude_code", "--root", str(store), "--to", to, "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "--redact", "--loss", "-j", "2"])
    assert result.exit_code == 0, result.output
    assert re.search(r"redacted: \d+ ", result.stderr) and not leaks(result.output)
    sessions = [p for p in _outputs(out) if p.parent.name != "loss"]
    assert len(sessions) >= len(PLANTED) + 1
    assert list((out / "loss").glob("*.loss.json"))  # the loss reports are redacted too
    assert not _leaked(out)
    for path in sessions:
        assert verify_file(path).ok, path
    # one table for the run: the key in every session has one placeholder, and so has the user
    aws = _placeholders(out, "ds-aws-access-key")
    assert len(aws) >= 2 and len(set().union(*aws.values())) == 1
    users = {name for p in sessions for name in re.findall(r"redacted-user-[0-9a-f]+", p.read_text())}
    assert len(users) == 1
    plain = CliRunner().invoke(main, [*args[:-1], str(tmp_path / "plain")])
    assert plain.exit_code == 0 and _leaked(tmp_path / "plain")  # what --redact hid was there


def test_export_all_html_redact_leaves_no_planted_value(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    args = ["export", "--all", "--to", "html", "--from", "claude_code", "--root", str(store), "-o"]
    result = CliRunner().invoke(main, [*args, str(out), "--redact"])
    assert result.exit_code == 0, result.output
    assert "redacted: " in result.stderr and not leaks(result.output)
    pages = sorted((out / "claude_code").glob("*.html"))
    assert len(pages) == len(PLANTED) + 1
    assert not _leaked(out)  # the pages, index.html and the manifest (no source path in it)
    aws = _placeholders(out, "ds-aws-access-key")
    assert len([name for name in aws if name.endswith(".html") and name != "index.html"]) >= 2
    assert len(set().union(*aws.values())) == 1
    # again: every page made anew with the run's table, the same pages
    again = CliRunner().invoke(main, [*args, str(out), "--redact"])
    assert again.exit_code == 0 and f"{len(pages)} pages written, 0 unchanged" in again.stderr
    assert not _leaked(out)
    # a folder of pages not redacted is not mixed with redacted ones
    plain = tmp_path / "plain"
    assert CliRunner().invoke(main, [*args, str(plain)]).exit_code == 0
    assert _leaked(plain)
    refused = CliRunner().invoke(main, [*args, str(plain), "--redact"])
    assert refused.exit_code == 1 and "without --redact" in refused.output
    assert "Traceback" not in refused.output
