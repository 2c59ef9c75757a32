"""Native Claude Code codec throughput, measured against msgspec's own untyped decoder.

Builds a ~60 MB session shaped like a real one (as docs/claude_code.md#what-is-typed describes:
assistant records one per
content block, tool results with ``toolUseResult`` carriers, attachments and bookkeeping,
Read results up to ~1 MB per line) in a temp dir and prints, from one run, MB/s for

  raw read      reading the file's bytes
  R             ``msgspec.json.Decoder().decode_lines`` of the same bytes (the yardstick)
  load          ``txcodec.load`` (every line decoded eagerly into its typed record)
  load+dump     ``load`` then ``dump``, asserted byte-identical

with each figure's ratio to R (targets: load >= 1.2 R, load+dump >= 0.6 R), and the peak
RSS of ``txcodec verify`` on the file and on a session with one ~32 MB line, run in a
subprocess (target: <= 64 MB plus the largest line).
Absolute speeds drift on shared machines; the ratios are the figures.

    python benchmarks/bench_native.py [--mb 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

import txcodec

SID = "5d0c3a9e-7b1f-4c2a-9e3d-1f2a3b4c5d6e"
WORDS = "the parser reads each line and keeps its bytes so that nothing is lost when it is written back".split()


def _text(rng: random.Random, n: int) -> str:
    out, size = [], 0
    while size < n:
        w = rng.choice(WORDS)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)


def _code(rng: random.Random, n: int) -> str:
    lines, size = [], 0
    i = 0
    while size < n:
        i += 1
        line = f'{i:>6}\tdef f_{i}(x):  # {_text(rng, 40)} "quoted" \\ tab\there é ü'
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


class _Builder:
    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.n = 0
        self.parent: str | None = None
        self.lines: list[bytes] = []

    def uid(self) -> str:
        self.n += 1
        return f"{self.n:08x}-1111-4222-8333-{self.n:012x}"

    def stamp(self) -> str:
        s = self.n
        return f"2026-09-18T{(s // 3600) % 24:02d}:{(s // 60) % 60:02d}:{s % 60:02d}.{s % 1000:03d}Z"

    def envelope(self, kind: str) -> dict:
        uid = self.uid()
        rec = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/src/project",
            "sessionId": SID,
            "version": "2.1.276",
            "gitBranch": "main",
            "type": kind,
            "uuid": uid,
            "timestamp": self.stamp(),
        }
        self.parent = uid
        return rec

    def add(self, rec: dict) -> None:
        self.lines.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode())

    def prompt(self) -> None:
        rec = self.envelope("user")
        rec["message"] = {"role": "user", "content": _text(self.rng, 300)}
        rec["promptId"] = self.uid()
        rec["permissionMode"] = "default"
        self.add(rec)

    def assistant_call(self, tools: list[tuple[str, str, dict, str, object]]) -> None:
        mid = f"msg_{self.n:020d}"
        usage = {
            "input_tokens": 12,
            "output_tokens": 340,
            "cache_creation_input_tokens": 1200,
            "cache_read_input_tokens": 90000,
            "service_tier": "standard",
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1200},
        }
        blocks: list[dict] = [
            {"type": "thinking", "thinking": "", "signature": "Eq" + "A" * 1200},
            {"type": "text", "text": _text(self.rng, self.rng.randint(300, 2500))},
        ]
        for tid, name, inp, _, _ in tools:
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        for i, block in enumerate(blocks):
            rec = self.envelope("assistant")
            rec["message"] = {
                "model": "claude-opus-5",
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": usage,
            }
            rec["requestId"] = f"req_{self.n:024d}"
            rec["apiBlockIndex"] = i
            rec["effort"] = "high"
            self.add(rec)
        for tid, _, _, text, carrier in tools:
            rec = self.envelope("user")
            rec["message"] = {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": False}],
            }
            rec["toolUseResult"] = carrier
            rec["sourceToolAssistantUUID"] = self.parent
            self.add(rec)

    def bash(self, size: int) -> tuple:
        out = _code(self.rng, size)
        return (
            f"toolu_{self.uid()[:8]}",
            "Bash",
            {"command": "make test", "description": "run tests"},
            out,
            {"stdout": out, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False},
        )

    def read(self, size: int) -> tuple:
        body = _code(self.rng, size)
        # the model sees line-numbered text; the carrier keeps the file's own text
        numbered = "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(body.split("\n"), 1))
        return (
            f"toolu_{self.uid()[:8]}",
            "Read",
            {"file_path": "/home/dev/src/project/big.py"},
            numbered,
            {
                "type": "text",
                "file": {
                    "filePath": "/home/dev/src/project/big.py",
                    "content": body,
                    "numLines": body.count("\n") + 1,
                    "startLine": 1,
                    "totalLines": 9999,
                },
            },
        )

    def edit(self, size: int) -> tuple:
        original = _code(self.rng, size)
        old, new = original[:60], original[:60] + "  # fixed"
        path = "/home/dev/src/project/mod.py"
        return (
            f"toolu_{self.uid()[:8]}",
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new},
            f"The file {path} has been updated.",
            {
                "filePath": path,
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": [
                    {"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-" + old, "+" + new]}
                ],
                "userModified": False,
                "replaceAll": False,
            },
        )

    def bookkeeping(self) -> None:
        for hook in (
            "PostToolUse",
            "Stop",
        ):  # attachments: the largest class by count (docs/claude_code.md#what-is-typed)
            rec = self.envelope("attachment")
            out = _text(self.rng, self.rng.randint(500, 3000))
            rec["attachment"] = {
                "type": "hook_success",
                "hookName": hook,
                "content": out,
                "stdout": out,
                "stderr": "",
                "exitCode": 0,
            }
            self.add(rec)
        self.add(
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": self.stamp(),
                "sessionId": SID,
                "content": _text(self.rng, 80),
            }
        )
        self.add({"type": "last-prompt", "sessionId": SID, "leafUuid": self.parent})
        rec = self.envelope("system")
        rec.update(subtype="turn_duration", durationMs=5123, isMeta=False)
        self.add(rec)


def build_session(target_bytes: int, seed: int = 7) -> bytes:
    """A session of about ``target_bytes``: ordinary turns (Bash; Read and Edit results
    whose carriers hold the file again, as real ones do), with a ~1 MB Read result every
    ~10 MB."""
    b = _Builder(seed)
    size = 0
    turn = 0
    while size < target_bytes:
        turn += 1
        b.prompt()
        tools = [b.bash(b.rng.randint(300, 4000))]
        if turn % 3 == 0:
            tools.append(b.read(b.rng.randint(3_000, 30_000)))  # a parallel pair
        if turn % 2 == 0:
            tools.append(b.edit(b.rng.randint(5_000, 30_000)))
        if turn % 120 == 0:
            tools = [b.read(480_000)]  # body + carrier copy: a ~1 MB line
        b.assistant_call(tools)
        b.bookkeeping()
        size = sum(len(x) + 1 for x in b.lines)
    return b"\n".join(b.lines) + b"\n"


def _best_of(fns: dict[str, object], repeat: int) -> dict[str, float]:
    """Best CPU time of each function over ``repeat`` interleaved rounds. CPU time of
    this process (not wall time) and interleaving keep other jobs on a shared machine
    out of the ratios; freeing a result is not counted."""
    best = {name: float("inf") for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            t = time.process_time()
            result = fn()
            best[name] = min(best[name], time.process_time() - t)
            del result
    return best


def _corpus_sample() -> bytes | None:
    """The public corpus's Claude Code transcripts, concatenated: real shapes, when the
    corpus is beside the checkout."""
    corpus = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "claude_code"
    files = sorted(p for p in corpus.rglob("*.jsonl") if p.stat().st_size > 100_000) if corpus.is_dir() else []
    return b"".join(p.read_bytes() for p in files) or None


def _verify_rss(path: Path) -> tuple[int, int]:
    """Run ``txcodec verify`` in a child; return (exit code, its peak RSS in bytes).

    The peak is the child's VmHWM: ``ru_maxrss`` would survive the fork+exec and report
    this (large) parent's RSS instead.
    """
    code = (
        "import sys\n"
        "from txcodec.cli import main\n"
        "try:\n"
        f"    main(['verify', {str(path)!r}], standalone_mode=False)\n"
        "    rc = 0\n"
        "except SystemExit as e:\n"
        "    rc = e.code or 0\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
        "print(rc, int(hwm) * 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rc, rss = out.stdout.split()[-2:]
    return int(rc), int(rss)


def _shape(data: bytes) -> str:
    """Share of the bytes by record type, and of the two tool-output carriers."""
    decoder, shares, total = msgspec.json.Decoder(), {}, 0
    for line in data.split(b"\n"):
        if not line:
            continue
        value = decoder.decode(line)
        total += len(line)
        shares[value.get("type")] = shares.get(value.get("type"), 0) + len(line)
        if "toolUseResult" in value:
            shares["  toolUseResult"] = shares.get("  toolUseResult", 0) + len(
                msgspec.json.encode(value["toolUseResult"])
            )
    top = sorted(shares.items(), key=lambda kv: -kv[1])[:6]
    return ", ".join(f"{k.strip()} {v / total:.0%}" for k, v in top)


def _print(times: dict[str, float], mb: float) -> None:
    t_r = times["R = msgspec decode_lines"]
    for name, t in times.items():
        print(f"{name:30s} {mb / t:9.1f} MB/s   {t_r / t:5.2f} x R")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=60)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    data = build_session(int(args.mb * 1e6))
    lines = data.split(b"\n")
    largest = max(len(x) for x in lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{SID}.jsonl"
        path.write_bytes(data)
        mb = len(data) / 1e6
        print(f"session: {mb:.1f} MB, {len(lines) - 1} lines, largest line {largest / 1e6:.2f} MB")
        print(f"  bytes by type: {_shape(data)}")

        decoder = msgspec.json.Decoder()
        session = txcodec.load(data, harness="claude_code")
        assert not session.diagnostics, session.diagnostics[:3]
        assert session.dump() == data

        def load_dump() -> object:
            loaded = txcodec.load(data, harness="claude_code")
            assert loaded.dump() == data
            return loaded

        def load_read_dump() -> object:
            # every record handed out, so dump re-checks each one against its bytes
            loaded = txcodec.load(data, harness="claude_code")
            for _ in loaded:
                pass
            assert loaded.dump() == data
            return loaded

        times = _best_of(
            {
                "raw read": path.read_bytes,
                "R = msgspec decode_lines": lambda: decoder.decode_lines(data),
                "typed load": lambda: txcodec.load(data, harness="claude_code"),
                "load + dump (byte-identical)": load_dump,
                "load + iterate + dump": load_read_dump,
            },
            args.repeat,
        )
        _print(times, mb)
        print("targets: typed load >= 1.20 x R; load + dump >= 0.60 x R")
        real = _corpus_sample()
        if real is not None:
            print(f"\nthe public corpus's Claude Code transcripts ({len(real) / 1e6:.1f} MB, real shapes):")
            print(f"  bytes by type: {_shape(real)}")
            _print(
                _best_of(
                    {
                        "R = msgspec decode_lines": lambda: decoder.decode_lines(real),
                        "typed load": lambda: txcodec.load(real, harness="claude_code"),
                    },
                    args.repeat,
                ),
                len(real) / 1e6,
            )

        over = False
        for label, file, longest in [("the session", path, largest), *_long_line_file(Path(tmp))]:
            rc, rss = _verify_rss(file)
            budget = 64 * 2**20 + longest
            print(
                f"verify {label}: exit {rc}, peak RSS {rss / 2**20:.1f} MB "
                f"(budget {budget / 2**20:.1f} MB: 64 MB + largest line)"
            )
            over |= rc != 0 or rss > budget
        if over:
            sys.exit(1)


def _long_line_file(tmp: Path) -> list[tuple[str, Path, int]]:
    """A short session with one ~32 MB Read result (the file's text twice: the numbered
    tool_result and the carrier), to show that verify holds a long line only once."""
    b = _Builder(seed=11)
    b.prompt()
    b.assistant_call([b.read(16_000_000)])
    b.bookkeeping()
    data = b"\n".join(b.lines) + b"\n"
    path = tmp / "long-line.jsonl"
    path.write_bytes(data)
    longest = max(map(len, b.lines))
    return [(f"a session with a {longest / 1e6:.0f} MB line", path, longest)]


if __name__ == "__main__":
    main()
