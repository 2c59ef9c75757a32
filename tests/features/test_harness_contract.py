"""The harness contract is declared: every built-in harness registers its store as a
:class:`~txcodec.kit.registry.Store` (or None), its flags as typed :class:`Harness` fields,
and no feature outside ``harnesses/`` probes a store or a harness's functions with
``getattr``/``hasattr`` (what it may ask is what the contract declares)."""

from __future__ import annotations

import re

import msgspec
import pytest
from support.paths import ROOT

from txcodec.kit import registry
from txcodec.kit.registry import Harness
from txcodec.kit.registry import Store

PACKAGE = ROOT / "txcodec"
# getattr/hasattr on a store or a harness's read/write (``getattr(x.store, ...)``,
# ``getattr(store, ...)``, ``getattr(h.read, "streams", ...)``), or asking a harness for
# one of them by name (``getattr(h, "store")``)
PROBE = re.compile(
    r"\b(?:get|has)attr\(\s*(?:[\w.\[\]()]*\.)?(?:store|read|write|check_resume)\s*,"
    r"|\b(?:get|has)attr\([^,()]+,\s*[\"'](?:store|read|write|check_resume)[\"']"
)


def test_every_built_in_store_is_declared():
    for name in registry.BUILTIN:
        harness = registry.get(name)
        assert isinstance(harness, Harness), name
        store = harness.store
        assert store is None or type(store) is Store, (name, type(store))
        assert (store is None) == (name in registry.STORELESS), name
        if store is None:
            continue
        assert callable(store.default_root) and callable(store.discover), name
        for field in msgspec.structs.fields(Store):
            value = getattr(store, field.name)
            if field.name == "file_names":
                assert isinstance(value, tuple) and all(isinstance(n, str) for n in value), name
            else:
                assert value is None or callable(value), (name, field.name)
        # a database store says how well a database fits it, to choose among several
        assert (store.open is None) == (store.database_fit is None), name
        assert (store.session_folder is None) == (store.load_folder is None), name


def test_every_harness_flag_is_typed():
    for name in registry.BUILTIN:
        harness = registry.get(name)
        for flag in (harness.read_streams, harness.read_unshared, harness.reads_prompts, harness.writes_stdin_side):
            assert type(flag) is bool, name
        assert harness.fork_slot is None or isinstance(harness.fork_slot, str), name
        assert harness.token_metric is None or isinstance(harness.token_metric, str), name
        for source, fast in harness.fast_paths.items():
            assert source in registry.BUILTIN and callable(fast), (name, source)
        assert not harness.read_streams or harness.read is not None, name


def _features() -> list:
    return sorted(p for p in PACKAGE.rglob("*.py") if "harnesses" not in p.relative_to(PACKAGE).parts)


def test_no_feature_probes_a_store_or_a_harness_function():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _features()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PROBE.search(line)
    ]
    assert not found, "probed with getattr/hasattr: declare the hook on kit.registry.Store or Harness\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    "line",
    [
        'find = getattr(harness.store, "session_file", None)',
        'loader = getattr(store, "load", None)',
        'if hasattr(found.store, "open"):',
        'return getattr(registry.get(harness).read, "streams", False)',
        'streams = getattr(harness.read,"streams", False)',
        'store = getattr(harness, "store", None)',
    ],
)
def test_the_scan_finds_a_probe(line):
    assert PROBE.search(line)


@pytest.mark.parametrize(
    "line",
    [
        "value = getattr(item, name, None)",
        'errors.extend(getattr(found, "errors", []))',
        'if getattr(codec, "accepts_buffers", False):',
        'release = getattr(data, "madvise", None)',
    ],
)
def test_the_scan_passes_other_getattrs(line):
    assert not PROBE.search(line)


def test_the_api_and_the_session_index_import_no_harness():
    for module in ("api.py", "sessions.py", "metrics.py"):
        text = (PACKAGE / module).read_text(encoding="utf-8")
        assert not re.search(r"from \.harnesses\b|import txcodec\.harnesses\b|from txcodec\.harnesses\b", text), module
