"""A cut-off or corrupt ``.zst`` is an error naming the file, and ``verify`` reports a
folder it may not search in one line (issue 10, items 8 and 9)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from txcodec import api
from txcodec.cli import main
from txcodec.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SESSION = b"".join(
    b'{"type":"user","sessionId":"5e5e5e5e-1111-4222-8333-444444444444","uuid":"u%d","parentUuid":null,'
    b'"message":{"role":"user","content":"line %d of a session"}}\n' % (n, n)
    for n in range(400)
)


def _zst(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.fixture
def damaged(tmp_path) -> dict[str, Path]:
    whole = zstandard.ZstdCompressor().compress(SESSION)
    two = whole + zstandard.ZstdCompressor().compress(SESSION)
    return {
        "truncated": _zst(tmp_path, "truncated.jsonl.zst", whole[: len(whole) // 2]),
        "cut-in-the-last-bytes": _zst(tmp_path, "tail.jsonl.zst", whole[:-3]),
        "second-frame-cut": _zst(tmp_path, "second.jsonl.zst", two[:-10]),
        "garbage": _zst(tmp_path, "garbage.jsonl.zst", b"this is not zstd at all\n" * 10),
        "empty": _zst(tmp_path, "empty.jsonl.zst", b""),
        "trailing-garbage": _zst(tmp_path, "trailing.jsonl.zst", whole + b"junk"),
    }


def test_a_whole_zst_still_reads_and_verifies(tmp_path):
    two_frames = _zst(
        tmp_path,
        "ok.jsonl.zst",
        zstandard.ZstdCompressor().compress(SESSION) + zstandard.ZstdCompressor().compress(SESSION),
    )
    assert api.read_bytes(two_frames) == SESSION + SESSION
    result = CliRunner().invoke(main, ["verify", str(two_frames)])
    assert result.exit_code == 0 and "800 lines" in result.output, result.output


@pytest.mark.parametrize(
    "kind", ["truncated", "cut-in-the-last-bytes", "second-frame-cut", "garbage", "empty", "trailing-garbage"]
)
def test_a_damaged_zst_is_an_error_naming_the_file(damaged, kind):
    path = damaged[kind]
    with pytest.raises(InputError, match="zstd") as caught:
        api.load(path)
    assert str(path) in str(caught.value)
    verify = CliRunner().invoke(main, ["verify", str(path)])
    assert verify.exit_code == 1 and "identical" not in verify.stdout, verify.output
    assert verify.stdout.startswith(f"ERROR  {path}: not a readable zstd file"), verify.output
    for command in ("show", "inspect", "export"):
        result = CliRunner().invoke(main, [command, str(path)])
        assert result.exit_code == 1, (command, result.output)
        assert "empty file" not in result.output and str(path) in result.output, (command, result.output)
        assert "Traceback" not in result.output


def _without_root_powers() -> list[str]:
    """As root, permissions are not checked: drop the two capabilities that skip them."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root without setpriv (util-linux): cannot make a folder unsearchable")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


@pytest.mark.parametrize("mode", [0o000, 0o644, 0o311], ids=["no-access", "no-search", "no-listing"])
def test_verify_reports_a_folder_it_may_not_search_in_one_line(tmp_path, mode):
    top = tmp_path / "top"
    inner = top / "locked" / "deeper"
    inner.mkdir(parents=True)
    (inner / "x.jsonl").write_bytes(SESSION)
    (top / "fine.jsonl").write_bytes(SESSION)
    (top / "locked").chmod(mode)
    try:
        done = subprocess.run(
            [
                *_without_root_powers(),
                sys.executable,
                "-m",
                "txcodec",
                "verify",
                str(top),
                str(inner),
                str(inner / "x.jsonl"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        (top / "locked").chmod(0o755)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert f"ok     {top / 'fine.jsonl'}" in done.stdout
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR")]
    assert errors and all("Permission denied" in line for line in errors), done.stdout
