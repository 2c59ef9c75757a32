"""A fresh clone has no ../shared/corpus: the README's test command must still pass there.

This copies the checkout's files (what `git ls-files` lists, as they are now) into a temporary
folder with no shared/ beside it and runs the README's pytest command twice, cheaply: a full
`--collect-only` (every module imports and collects), then the modules that read the corpus or
the seeds with the real-client tests deselected, which must pass with the corpus tests skipped
for the one stated reason.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

from support.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_pytest_command() -> list[str]:
    block = re.search(r"^```(?:sh|bash|shell)\n(.*?)^```", README, re.M | re.S)
    assert block, "README.md has no shell block"
    second = block.group(1).splitlines()[1]
    pytest_part = second.split("&&")[-1].strip()
    assert pytest_part.startswith("python -m pytest"), second
    return [sys.executable, *shlex.split(pytest_part)[1:]]


def _tracked_files() -> list[str]:
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        return [name for name in out.decode().split("\0") if name]
    skip = {".git", "node_modules", "__pycache__", ".pytest_cache"}
    return [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*")
        if p.is_file() and not skip.intersection(p.relative_to(ROOT).parts)
    ]


def test_readme_test_command_passes_in_a_clone_without_the_corpus(tmp_path):
    clone = tmp_path / "clone"
    for name in _tracked_files():
        if name.startswith("clients/node_modules/") or not (ROOT / name).is_file():
            continue
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    assert not (clone.parent / "shared").exists()
    env = {
        k: v for k, v in os.environ.items() if k not in ("TXCODEC_CORPUS", "TXCODEC_SEEDS", "TXCODEC_REQUIRE_CORPUS")
    }
    env["PYTHONPATH"] = str(clone)
    command = _readme_pytest_command() + ["-p", "no:cacheprovider"]

    collected = subprocess.run(
        [*command, "--collect-only"], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]

    readers = sorted(
        str(p.relative_to(clone))
        for p in (clone / "tests").rglob("test_*.py")
        if re.search(
            r"^from support\.paths import .*\b(CORPUS|SEEDS|corpus_files)\b", p.read_text(encoding="utf-8"), re.M
        )
    )
    assert len(readers) >= 5, readers
    ran = subprocess.run(
        [*command, "-m", "not real_client", "-rs", *readers],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    skipped = [line for line in ran.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped, ran.stdout[-3000:]
    assert all("needs the corpus" in line or "needs the seeds" in line for line in skipped), skipped
