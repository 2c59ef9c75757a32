"""Regenerate golden/claude_code/lineage_genuine/ with the real ``claude`` (the pinned
client) against the mock model on 127.0.0.1:

    TXCODEC_CLIENTS=clients python golden/claude_code/make_lineage_genuine.py

It runs, in a throw-away HOME with the project at /tmp/txcodec-lineage/work:

1. ``claude -p first``                                  -> the source session S
2. ``claude -p --resume S second``                      -> appends to S (same file)
3. ``claude -p --resume S --fork-session third``        -> a new session F (copies S)
4. ``claude -p --resume S /clear``                      -> a new session C (the /clear chain)

and keeps the store under ``lineage_genuine/store/`` and C, the case's main file, at the
top of the folder. Session ids are new on every run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from txcodec.clients.anthropic import AnthropicMock
from txcodec.clients.claude import munge_cwd, run_claude
from txcodec.clients.mockserver import MockServer

CASE = Path(__file__).resolve().parent / "lineage_genuine"
WORK = Path("/tmp/txcodec-lineage/work")


def main() -> None:
    shutil.rmtree(WORK.parent, ignore_errors=True)
    WORK.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="txcodec-lineage-home-") as tmp:
        home = Path(tmp)
        project = home / ".claude" / "projects" / munge_cwd(str(WORK))
        with MockServer(AnthropicMock([], strict=True)) as server:
            def claude(*args: str) -> set[Path]:
                before = set(project.glob("*.jsonl"))
                run = run_claude(["-p", *args], WORK, home, server, timeout=180)
                if run.exit_code != 0:
                    raise SystemExit(f"claude {' '.join(args)}: exit {run.exit_code}\n{run.stdout}{run.stderr}")
                return set(project.glob("*.jsonl")) - before

            (source,) = claude("first")
            assert not claude("--resume", source.stem, "second"), "a resume appends to its own file"
            (fork,) = claude("--resume", source.stem, "--fork-session", "third")
            (clear,) = claude("--resume", source.stem, "/clear")
        shutil.rmtree(CASE / "store", ignore_errors=True)
        for old in CASE.glob("*.jsonl"):
            old.unlink()
        store = CASE / "store" / project.name
        store.mkdir(parents=True)
        for path in (source, fork, clear):
            shutil.copyfile(path, store / path.name)
        shutil.copyfile(clear, CASE / clear.name)
        (CASE / "ids.txt").write_text(f"source {source.stem}\nfork-session {fork.stem}\nclear {clear.stem}\n")
    shutil.rmtree(WORK.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
