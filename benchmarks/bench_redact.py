"""``txcodec redact`` against ``convert`` on the same sessions (issue 35: "keep the speed near
convert's"). Both run in-process over the corpus's Claude Code sessions (or the files given):
``api.convert(path, "codex")`` and one :class:`~txcodec.redact.Redactor` redacting each
file's bytes as ``redact_paths`` does (every file learned, then each rewritten with the
findings its learning returned). Runs alternate and the best of each is kept (the machine is
shared). Prints MB/s of each and the ratio convert time / redact time; the target is about 1.

    python benchmarks/bench_redact.py [FILE ...] [--repeat 7]

Measured on the corpus's 30 Claude Code files (11.5 MB), best of 9, three runs each
(``convert`` took 0.09 s in every run):

- before (main e692ea6): redact 0.15 s, ratio 0.58-0.59;
- after (branch redact2): redact 0.08 s, ratio 1.04-1.06.

What changed: an email is matched at its ``@`` (its local part read backwards), not searched
in a window around every ``@``; the home folders' prefixes are found by the rules' automaton
(they were three more regular-expression passes); a scan rule is matched at each place the
automaton found its literal, not searched on to the file's end; up to 24 known values are each
searched alone (a one-pattern automaton is a SIMD substring search); the rewrite of a line skips
strings without a hit first, keeps keys raw until a path needs them, and stops after the last hit.
The older figure, 0.35-0.39, also learned every file twice: ``redact_bytes`` was not given the
findings of the first pass, as ``redact_paths`` gives them.
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


def timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    files = args.files or sorted(CORPUS.rglob("*.jsonl"))[:40]
    datas = [(path, path.read_bytes()) for path in files]
    size = sum(len(data) for _, data in datas) / 1e6

    def convert() -> None:
        for path, _ in datas:
            api.convert(path, "codex")

    def redact() -> None:
        redactor, report = Redactor(), Report()
        learned = [redactor.learn(data) for _, data in datas]
        for (path, data), spans in zip(datas, learned):
            redactor.redact_bytes(data, str(path), report, "claude_code", spans)

    convert(), redact()  # imports and caches
    runs = [(timed(convert), timed(redact)) for _ in range(args.repeat)]
    t_convert = min(run[0] for run in runs)
    t_redact = min(run[1] for run in runs)
    print(f"{len(datas)} files, {size:.1f} MB")
    print(f"convert -> codex  {t_convert:7.2f} s  {size / t_convert:6.1f} MB/s")
    ratio = t_convert / t_redact
    print(f"redact            {t_redact:7.2f} s  {size / t_redact:6.1f} MB/s  ratio {ratio:.2f} (target ~1)")


if __name__ == "__main__":
    main()
