"""Recall of ``txcodec redact`` per family of planted secret, against detect-secrets alone
(docs/redact.md#measured-recall), and what each flags in files that hold no planted secret.

For every family of tests/support/planted_secrets.py and every session file given (default:
the golden sessions of Claude Code, Codex, Gemini CLI, Qwen Code, pi and opencode, and the
corpus's Claude Code and Codex sessions), the family's text is planted in up to 20 of the file's
prose strings, the file is redacted, and a planting counts as found when neither its value nor
any 12-character fragment of it is left on its line. detect-secrets alone (its default plugins,
``scan_line`` on each planted string) counts when one of its findings overlaps the value.
"Flagged in clean files" runs both over the same files before planting.

    python benchmarks/redact_recall.py [FILE ...] [--limit 40]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import ahocorasick_rs  # noqa: E402
from support.planted_secrets import FAMILIES  # noqa: E402

from txcodec.kit import registry  # noqa: E402
from txcodec.redact import Redactor  # noqa: E402
from txcodec.redact import Report  # noqa: E402
from txcodec.redact import _harness_of  # noqa: E402

GOLDEN = ROOT / "golden"
CORPUS = ROOT.parent / "shared" / "corpus"


def default_files(limit: int) -> list[Path]:
    files = []
    for pattern in (
        "claude_code/*/*.jsonl",
        "codex/scenarios/*/rollout.jsonl",
        "gemini_cli/scenarios/*/session-*.jsonl",
        "qwen_code/scenarios/*/*.jsonl",
        "pi/scenarios/*/session.jsonl",
        "opencode/scenarios/*/export.json",
    ):
        files += sorted(GOLDEN.glob(pattern))[:limit]
    for harness in ("claude_code", "codex"):
        files += sorted((CORPUS / harness).rglob("*.jsonl"))[:limit]
    return files


def _plant_one(value, text: str, keep: frozenset, budget: list[int]):
    if isinstance(value, dict):
        return {k: v if k in keep else _plant_one(v, text, keep, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_plant_one(v, text, keep, budget) for v in value]
    if isinstance(value, str) and " " in value and len(value) >= 10 and budget[0] > 0:
        budget[0] -= 1
        return f"{value} {text}"
    return value


def plant_family(data: bytes, harness: str | None, text: str) -> tuple[bytes, int]:
    keep = frozenset(registry.get(harness).redact_keep if harness else ()) | {"type", "role", "id"}
    budget = [20]
    if data.lstrip()[:1] == b"{" and not data.split(b"\n", 1)[0].rstrip().endswith(b"}"):
        value = _plant_one(json.loads(data), text, keep, budget)
        return json.dumps(value, indent=2, ensure_ascii=False).encode(), 20 - budget[0]
    out = []
    for line in data.split(b"\n"):
        try:
            value = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        out.append(json.dumps(_plant_one(value, text, keep, budget), ensure_ascii=False).encode())
    return b"\n".join(out), 20 - budget[0]


def detect_secrets_scan(data: bytes, suffix: str) -> list[tuple[str, str]]:
    """What detect-secrets, as its CLI scans a file (default plugins and filters), finds in
    ``data``: (type, value) pairs."""
    import tempfile

    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"session{suffix}"
        path.write_bytes(data)
        secrets = SecretsCollection()
        with default_settings():
            secrets.scan_file(str(path))
        return [(s.type, s.secret_value or "") for _, s in secrets]


def detect_secrets_finds(data: bytes, suffix: str, values: list[str]) -> bool:
    """Whether detect-secrets finds every value planted in ``data`` (a finding of 3 characters
    or more overlapping it)."""
    found = [value for _, value in detect_secrets_scan(data, suffix) if len(value) >= 3]
    forms = [(v, json.dumps(v)[1:-1]) for v in values]
    return all(any(f in v or v in f or f in e or e in f for f in found) for v, e in forms)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=40)
    args = parser.parse_args()
    files = args.files or default_files(args.limit)
    datas = [(path, path.read_bytes()) for path in files]
    harnesses = {path: _harness_of(path, data) for path, data in datas}
    print(f"{len(datas)} files")
    detector = Redactor().detector  # compiled once, shared by each file's fresh run
    rows = []
    for family, text, values in FAMILIES:
        planted = found = 0
        fragments = {
            form[i : i + 12].encode()
            for value in values
            for form in (value, json.dumps(value)[1:-1], json.dumps(json.dumps(value)[1:-1])[1:-1])
            for i in range(max(1, len(form) - 11))
        }
        automaton = ahocorasick_rs.BytesAhoCorasick(list(fragments))
        for path, data in datas:
            source, n = plant_family(data, harnesses[path], text)
            if not n:
                continue
            out = Redactor(detector=detector).redact_bytes(source, path.name, Report(), harnesses[path])
            planted += n
            # count the plantings still holding a 12-character fragment of a value (each lies in
            # a string of its own: the strings, as their line and place, still holding one)
            left = {
                (out.rfind(b"\n", 0, start), out.rfind(b'"', 0, start))
                for _, start, _ in automaton.find_matches_as_indexes(out)
            }
            found += n - min(n, len(left))
        ours = found / planted if planted else 0.0
        first, data = datas[0]
        theirs = detect_secrets_finds(plant_family(data, harnesses[first], text)[0], first.suffix, values)
        rows.append((family, planted, ours, theirs))
    print("| family | planted | txcodec redact | detect-secrets alone |")
    print("| --- | ---: | ---: | :---: |")
    for family, planted, ours, theirs in rows:
        print(f"| {family} | {planted} | {ours:.0%} | {'found' if theirs else 'missed'} |")
    # what each flags in the files before planting
    ours_clean = Counter()
    report = Report()
    for path, data in datas:
        Redactor(detector=detector).redact_bytes(data, path.name, report, harnesses[path])
    ours_clean.update(f.kind for f in report.findings)
    theirs_clean = Counter()
    for path, data in datas:
        theirs_clean.update(kind for kind, _ in detect_secrets_scan(data, path.suffix))
    print(f"flagged in the clean files: txcodec redact {sum(ours_clean.values())} {dict(ours_clean.most_common())}")
    print(f"flagged in the clean files: detect-secrets {sum(theirs_clean.values())} {dict(theirs_clean.most_common())}")


if __name__ == "__main__":
    main()
