"""Issue 37: the count across copies (``usage._drop_copies``) works on each file's marks as
integer arrays with set operations, and takes a file's copies off its cells (few copies) or
builds its cells again from what it keeps (mostly copies). Random files of shared, ambiguous
and unmarked calls are compared with a plain per-call rendering of the rule in
docs/usage.md#converted-sessions: each (instant, model) mark counts in the oldest file
holding it, unless that file holds it twice in one millisecond."""

from __future__ import annotations

import os
import random

import pytest

from txcodec import usage as U
from txcodec.core import dates

MODELS = ("claude-a", "gpt-b")
DAYS = ("2026-02-23", "2026-02-24")


def _ts(day: str, ms: int) -> str:
    return f"{day}T10:00:{ms // 1000:02d}.{ms % 1000:03d}Z"


def _random_calls(rng: random.Random, pool: list[tuple], n: int) -> list[list]:
    calls = []
    for _k in range(n):
        if rng.random() < 0.7:
            model, day, ms = rng.choice(pool)  # a call another file may hold
        else:
            model, day, ms = rng.choice(MODELS), rng.choice(DAYS), rng.randrange(60_000)
        kind = rng.choice(["verified", "verified", "unverified", "none"])
        tokens = None if kind == "none" else tuple(rng.randrange(1, 500) for _ in range(4))
        ts = _ts(day, ms) if rng.random() < 0.95 else None  # now and then no time: never marked
        mid = f"m{rng.randrange(1 << 30)}" if rng.random() < 0.9 else None
        reasoning = rng.randrange(50) if kind == "verified" and rng.random() < 0.3 else None
        calls.append([mid, model if rng.random() < 0.97 else None, ts, tokens, kind != "unverified", reasoning])
        if rng.random() < 0.05:
            calls.append([None, *calls[-1][1:]])  # the same mark twice in this file: ambiguous
    return calls


def _reference(files: list[tuple[str, list[list]]]) -> tuple[list[dict], list[str]]:
    """The rule, call by call, with nothing clever."""
    per_file = []
    for _path, calls in files:
        seen, counted, marks = set(), [], {}
        for call in calls:
            if call[0] is not None:
                if call[0] in seen:
                    continue
                seen.add(call[0])
            counted.append(call)
            if call[1] and call[2]:
                mark = (U.call_instant(call[2]), call[1])
                marks[mark] = marks.get(mark, 0) + 1
        per_file.append((counted, marks))

    def age(i: int) -> tuple:
        return (os.stat(files[i][0]).st_mtime, files[i][0], i)

    holders: dict[tuple, list[int]] = {}
    for i, (_counted, marks) in enumerate(per_file):
        for mark in marks:
            holders.setdefault(mark, []).append(i)
    dropped: dict[int, set] = {}
    origins: dict[int, set] = {}
    for mark, who in holders.items():
        if len(who) < 2:
            continue
        first = min(who, key=age)
        if per_file[first][1][mark] > 1:
            continue
        for i in who:
            if i != first and per_file[i][1][mark] == 1:
                dropped.setdefault(i, set()).add(mark)
                origins.setdefault(i, set()).add(first)
    out = []
    for i, (counted, _marks) in enumerate(per_file):
        cells: dict = {}
        for _mid, model, ts, tokens, verified, reasoning in counted:
            if model and ts and (U.call_instant(ts), model) in dropped.get(i, ()):
                continue
            key = (model or "?", U.local_day(ts))
            c = cells.setdefault(key, [0] * U._N)
            c[0] += 1
            if tokens is None:
                c[2] += 1
            elif verified:
                c[3:7] = [a + b for a, b in zip(c[3:7], tokens)]
                c[11] += reasoning or 0
            else:
                c[1] += 1
                c[7:11] = [a + b for a, b in zip(c[7:11], tokens)]
        out.append(cells)
    lines = []
    for i in sorted(dropped):
        n = len(dropped[i])
        where = ", ".join(sorted(files[j][0] for j in origins[i]))
        lines.append(f"{files[i][0]}: {n} call{'s' if n != 1 else ''} already counted in {where}")
    return out, lines


@pytest.mark.parametrize("seed", range(12))
def test_the_copy_count_follows_the_rule_call_by_call(tmp_path, seed):
    rng = random.Random(seed)
    U._use_zone(dates.zone("UTC"))
    pool = [(rng.choice(MODELS), rng.choice(DAYS), rng.randrange(60_000)) for _ in range(rng.choice([5, 40, 200]))]
    files = []
    for k in range(rng.randrange(2, 9)):
        path = tmp_path / f"{rng.randrange(100):02d}-{k}.jsonl"  # the path order is not the list order
        path.write_bytes(b"")
        when = 1_700_000_000 + rng.randrange(4)  # ties: the path decides
        os.utime(path, (when, when))
        files.append((str(path), _random_calls(rng, pool, rng.randrange(0, 120))))
    results = []
    for path, calls in files:
        fu = U.FileUsage(path, "claude_code", path, None, [list(c) for c in calls])
        results.append((path, ("claude_code", path, None), *U._cells(fu)))
    lines = U._drop_copies(results)
    cells, expected_lines = _reference(files)
    assert [r[2] for r in results] == cells
    assert lines == expected_lines


def test_both_ways_of_taking_copies_off_give_the_same_cells(tmp_path):
    """A file with a few copies has them taken off; a file of nearly only copies is made
    again from the calls it keeps: the same cells, in the same order."""
    U._use_zone(dates.zone("UTC"))
    calls = [[f"m{k}", MODELS[k % 2], _ts(DAYS[k % 2], 10 * k), (k, 1, 2, 3), True, k % 3] for k in range(40)]
    paths = []
    for name, when in (("old.jsonl", 1), ("few.jsonl", 2), ("most.jsonl", 3)):
        path = tmp_path / name
        path.write_bytes(b"")
        os.utime(path, (when, when))
        paths.append(str(path))
    shares = {"few.jsonl": range(0, 40, 10), "most.jsonl": range(0, 38)}
    old = [list(c) for c in calls if int(c[0][1:]) in set(shares["few.jsonl"]) | set(shares["most.jsonl"])]
    own = [[f"x{k}", MODELS[k % 2], _ts(DAYS[k % 2], 10 * k + 1), (1, 1, 1, 1), True, None] for k in range(40)]
    contents = {
        paths[0]: old,
        paths[1]: [list(calls[k]) for k in shares["few.jsonl"]] + [list(c) for c in own],
        paths[2]: [list(calls[k]) for k in shares["most.jsonl"]]
        + [[f"y{k}", MODELS[0], _ts(DAYS[0], k), None, True, None] for k in (3, 5)],
    }
    results = []
    for path in paths:
        fu = U.FileUsage(path, "codex", path, None, contents[path])
        results.append((path, ("codex", path, None), *U._cells(fu)))
    U._drop_copies(results)
    expected, _ = _reference([(p, contents[p]) for p in paths])
    assert [r[2] for r in results] == expected
    assert [list(r[2]) for r in results] == [list(e) for e in expected]  # key order too
    assert sum(c[0] for c in results[1][2].values()) == 40  # "few" keeps its own calls
    assert sum(c[0] for c in results[2][2].values()) == 2  # "most" keeps only its own two calls
