from __future__ import annotations

import os
from pathlib import Path

import pytest

# The paths live in tests/support/paths.py; the hooks below use some, and all stay importable
# from here for a test that still takes them from conftest.
from support.paths import CORPUS  # noqa: F401
from support.paths import GOLDEN  # noqa: F401
from support.paths import MISSING  # noqa: F401
from support.paths import REQUIRE_CORPUS  # noqa: F401
from support.paths import ROOT  # noqa: F401
from support.paths import SEEDS  # noqa: F401
from support.paths import corpus_files  # noqa: F401
from support.paths import manifest_sha256  # noqa: F401
from support.paths import sha256  # noqa: F401

# Reaching txcodec's last-resort guards (an unexpected exception turned into "internal
# error, please report", exit 70) is a bug: in the tests they re-raise instead.
os.environ["TXCODEC_STRICT"] = "1"


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False, help="(re)write golden expected files")
    parser.addoption(
        "--fuzz-seconds", type=float, default=0.0, help="run the fuzz tests (-m fuzz) for this long per codec"
    )


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


# -- which tests read the corpus or the seeds ------------------------------------------------------
# A test needs them when one of its parameters is a path inside them, or when its code, a
# fixture it uses, or a function of its module that it calls names a module global that is
# (or holds) such a path, or the corpus helpers above. Static and conservative: a test that
# only might touch the corpus is skipped in a fresh clone, never failed.

_HELPERS = {"corpus_files", "manifest_sha256"}


def _inside(value, roots: tuple[Path, ...], depth: int = 0) -> bool:
    if isinstance(value, Path):
        return any(value == root or root in value.parents for root in roots)
    if isinstance(value, str):
        return any(value.startswith(str(root)) for root in roots)
    if isinstance(value, (list, tuple, set, frozenset)) and depth < 3:
        return any(_inside(v, roots, depth + 1) for v in value)
    if isinstance(value, dict) and depth < 3:
        return any(_inside(v, roots, depth + 1) for v in value.values())
    return False


def _code_needs(func, roots: tuple[Path, ...], seen: set) -> bool:
    code = getattr(func, "__code__", None)
    glob = getattr(func, "__globals__", None)
    if code is None or glob is None or code in seen:
        return False
    seen.add(code)
    stack = [code]
    while stack:
        c = stack.pop()
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
        for name in c.co_names:
            if name not in glob:
                continue
            value = glob[name]
            if name in _HELPERS and value is globals().get(name):
                return True
            if _inside(value, roots):
                return True
            if getattr(value, "__globals__", None) is glob and _code_needs(value, roots, seen):
                return True
    return False


def _needs(item, roots: tuple[Path, ...]) -> bool:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and _inside(list(callspec.params.values()), roots):
        return True
    seen: set = set()
    if _code_needs(getattr(item, "obj", None), roots, seen):
        return True
    for defs in item._fixtureinfo.name2fixturedefs.values():
        for fixturedef in defs:
            func = getattr(fixturedef, "func", None)
            if getattr(func, "__module__", "").startswith(("test_", "conftest")) and _code_needs(func, roots, seen):
                return True
    return False


def _missing_names() -> str:
    return " and ".join(f"the {name} ({path})" for name, path in MISSING.items())


def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: long fuzzing runs, budget from --fuzz-seconds (skipped without it)")
    if MISSING and REQUIRE_CORPUS:
        raise pytest.UsageError(f"TXCODEC_REQUIRE_CORPUS=1 but {_missing_names()} not found (set TXCODEC_CORPUS)")


def pytest_collection_modifyitems(config, items):
    if not MISSING:
        return
    roots = tuple(MISSING.values())
    reason = f"needs {_missing_names()}: not found (set TXCODEC_CORPUS, TXCODEC_SEEDS)"
    for item in items:
        module_globals = getattr(getattr(item, "module", None), "__dict__", {})
        empty = any("empty parameter set" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skip"))
        if _needs(item, roots) or (empty and ("CORPUS" in module_globals or "corpus_files" in module_globals)):
            # prepended, so this reason wins over pytest's own "empty parameter set" skip
            item.add_marker(pytest.mark.skip(reason=reason), append=False)
