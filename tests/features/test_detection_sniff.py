"""Detection decodes nothing twice (issue 12): a file whose first line carries a harness's
signature (``registry.SIGNATURES``) is that harness's without decoding a line or importing
another harness. Each signature must agree with what every harness's detector says of the
same file, on every real and golden file there is."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from support.paths import CORPUS
from support.paths import GOLDEN
from support.paths import ROOT
from support.paths import corpus_files

from txcodec import api
from txcodec.kit import detect as detection
from txcodec.kit import registry


def _head(path):
    """The bytes detection looks at, as ``usage`` reads them: whole lines of the first MB."""
    data = api.read_bytes(path)[: 1 << 20]
    return data if len(data) < 1 << 20 else data[: data.rfind(b"\n") + 1] or data


def _files():
    yield from (p for p in corpus_files(suffixes=(".jsonl", ".json", ".zst")) if p.is_file())
    for root in (GOLDEN, ROOT / "txcodec" / "samples"):
        yield from (p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in (".jsonl", ".json"))


def _first_line(head: bytes) -> bytes | None:
    return next((line for line in head.split(b"\n") if line.strip()), None)


def test_every_signature_agrees_with_the_detectors():
    """Where a signature names a harness, scoring the leading lines with every detector
    (what detection did before, and still does for any other file) names the same one.
    And every signature names at least one real or golden file: none is a guess."""
    used = {pattern: 0 for pattern, _ in registry.SIGNATURES}
    checked = 0
    for path in _files():
        head = _head(path)
        first = _first_line(head)
        if first is None or (sniffed := registry.sniff(first)) is None:
            continue
        scored = detection._scored(line for line in head.split(b"\n") if line.strip())
        assert scored == sniffed, f"{path}: the signature says {sniffed}, the detectors {scored}"
        assert api.detect(head) == sniffed
        used[next(p for p, n in registry.SIGNATURES if re.match(p, first[:256]))] += 1
        checked += 1
    assert checked > 0
    assert all(used.values()), f"signatures matching no file: {[p for p, n in used.items() if not n]}"


@pytest.mark.parametrize(
    "line",
    [
        b'{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hi"}}',
        b'{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00Z","sessionId":"s"}',
    ],
)
def test_a_claude_code_first_line_names_it_without_decoding(line, monkeypatch):
    def no_decode(*args):
        raise AssertionError("detection decoded a line")

    monkeypatch.setattr(detection, "_shallow", no_decode)
    assert api.detect(line + b"\nnot json at all\n") == "claude_code"


@pytest.mark.parametrize(
    "line",
    [
        b'{"uuid":"u1","parentUuid":null,"sessionId":"s","type":"user",'
        b'"message":{"role":"user","parts":[{"text":"hi"}]}}',  # Qwen Code
        b'{"parentUuid" : null, "isSidechain": false}',  # not the client's own layout: scored as before
        b'\xef\xbb\xbf{"parentUuid":null,"isSidechain":false,"type":"user"}',  # a BOM: scored as before
        b'{"type":"system","subtype":"init","session_id":"s","cwd":"/tmp"}',  # stream-json
    ],
)
def test_other_first_lines_are_scored_by_every_detector(line):
    assert registry.sniff(line) is None
    assert api.detect(line + b"\n") == detection._scored([line])


def test_usage_of_a_claude_code_file_imports_no_other_harness(tmp_path):
    if not (CORPUS / "MANIFEST.tsv").exists():
        pytest.skip("corpus not available")
    path = next(
        p for p in corpus_files("claude_code", suffixes=(".jsonl",)) if registry.sniff(_first_line(_head(p)) or b"")
    )
    probe = (
        f"import sys\nfrom txcodec.cli import main\ntry:\n    main(['usage', {str(path)!r}])\n"
        "except SystemExit:\n    pass\n"
        "print('MODULES', *sorted(m for m in sys.modules "
        "if m.startswith('txcodec.harnesses.') or m == 'importlib.metadata'))"
    )
    # a price cache of the test's own, warmed by a first run: a model the cache does not
    # know yet imports the price table (and its importlib.metadata), whatever the harness
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, check=True, env=env)
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, env=env
    ).stdout
    modules = out.rsplit("MODULES", 1)[1].split()
    assert modules and all(m.startswith("txcodec.harnesses.claude_code") for m in modules), modules
    assert "txcodec.harnesses.claude_code.codec" not in modules  # usage's lean pass has no use for it


def test_file_names_table_is_the_stores_own():
    """``registry.FILE_NAMES`` (looked up without importing a harness) lists exactly the
    built-in stores' ``file_names``."""
    declared = {
        file_name: name
        for name in registry.BUILTIN
        if (store := registry.get(name).store) is not None
        for file_name in store.file_names
    }
    assert declared == registry.FILE_NAMES


def test_convert_imports_only_the_two_harnesses_it_uses(tmp_path):
    sample = registry.get("claude_code") and api.sample("claude_code")
    probe = (
        f"import sys\nfrom txcodec.cli import main\ntry:\n    main(['convert', {str(sample)!r}, '--to', 'codex', "
        f"'-o', {str(tmp_path / 'x')!r}])\n"
        "except SystemExit:\n    pass\n"
        "print('MODULES', *sorted(m.split('.')[2] for m in sys.modules if m.startswith('txcodec.harnesses.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert set(out.rsplit("MODULES", 1)[1].split()) == {"claude_code", "codex"}
