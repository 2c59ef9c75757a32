"""Every loss kind the code can emit has a one-line meaning in docs/loss.md."""

from __future__ import annotations

import ast
import re

from support.paths import ROOT

from txcodec.model.loss import summary

DOC = (ROOT / "docs" / "loss.md").read_text(encoding="utf-8")
DOCUMENTED = set(re.findall(r"^\| `([^`]+)` \| \S", DOC, re.M))


def _emitted() -> set[str]:
    """The kinds passed to ``loss.add`` / ``lose`` in the package: literal, or an f-string
    whose holes become ``<...>`` patterns."""
    kinds = set()
    for path in (ROOT / "txcodec").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            arg = node.args[0]
            if name not in ("add", "lose"):
                continue
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                kinds.add(arg.value)
            elif isinstance(arg, ast.JoinedStr):
                kinds.add("".join(v.value if isinstance(v, ast.Constant) else "\0" for v in arg.values))
    return {k for k in kinds if ":" in k or k in ("opaque", "duplicate")}


def _documented(kind: str) -> bool:
    if "\0" not in kind:
        return kind in DOCUMENTED or any(re.fullmatch(_pattern(d), kind) for d in DOCUMENTED if "<" in d)
    return any(
        _pattern(d) == re.escape(kind).replace("\0", "<[^>]+>") or re.sub(r"<[^>]+>", "\0", d) == kind
        for d in DOCUMENTED
    )


def _pattern(documented: str) -> str:
    return re.sub(r"<[^>]+>", "\0", re.escape(documented)).replace("\0", "[^:/]+")


def test_every_emitted_loss_kind_is_explained():
    emitted = _emitted()
    assert len(emitted) > 60  # the scan finds the calls
    missing = sorted(k.replace("\0", "<...>") for k in emitted if not _documented(k))
    assert not missing, f"add these loss kinds to docs/loss.md: {missing}"


def test_the_default_report_is_one_plain_line():
    line = summary({"field:entrypoint": 40, "record:last-prompt": 8, "write:tool-mapped": 3}, "codex")
    assert line == "48 metadata fields/records not carried, 3 changes to fit codex (details: --loss)"
    assert summary({}) == "no loss"
