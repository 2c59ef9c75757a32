"""``txcodec redact`` against ``convert`` on the same sessions (issue 35: "keep the speed near
convert's"). Both run in-process over the corpus's Claude Code sessions (or the files given):
``api.convert(path, "codex")`` and one :class:`~txcodec.redact.Redactor` redacting each
file's bytes (both passes: learning the values, then rewriting). Prints MB/s of each and the
ratio redact / convert; the target is a ratio of at least 0.5.

    python benchmarks/bench_redact.py [FILE ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from txcodec import api  # noqa: E402
from txcodec.redact import Redactor  # noqa: E402
from txcodec.redact import Report  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "claude_code"


def best(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = args.files or sorted(CORPUS.rglob("*.jsonl"))[:40]
    datas = [(path, path.read_bytes()) for path in files]
    size = sum(len(data) for _, data in datas) / 1e6

    def convert() -> None:
        for path, _ in datas:
            api.convert(path, "codex")

    def redact() -> None:
        redactor, report = Redactor(), Report()
        for _, data in datas:
            redactor.learn(data)
        for path, data in datas:
            redactor.redact_bytes(data, str(path), report, "claude_code")

    t_convert = best(convert, args.repeat)
    t_redact = best(redact, args.repeat)
    print(f"{len(datas)} files, {size:.1f} MB")
    print(f"convert -> codex  {t_convert:7.2f} s  {size / t_convert:6.1f} MB/s")
    ratio = t_convert / t_redact
    print(f"redact            {t_redact:7.2f} s  {size / t_redact:6.1f} MB/s  ratio {ratio:.2f} (target >= 0.5)")


if __name__ == "__main__":
    main()
