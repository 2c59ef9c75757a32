"""Harness plugins: a package installed under the ``txcodec.harnesses`` entry-point group
is found by name, by its detector and by its store's file names, and the entry points are
looked up only when a built-in harness does not claim the file (importing
importlib.metadata and reading every installed distribution costs more than a small
command's whole run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

from support.paths import ROOT

PLUGIN = """
from txcodec.harnesses.jsonl import HARNESS as GENERIC
from pathlib import Path

from txcodec.kit.registry import Harness, Store

# a store found by its file names (the listing finds nothing)
store = Store(default_root=lambda: Path("acme-store"), discover=lambda root=None: [], file_names=("acme.history",))


def detect(sample):
    # greedy on purpose: it claims any JSON object, so it would outscore a built-in
    return 100 if any(isinstance(v, dict) for v in sample) else 0


HARNESS = Harness(name="acme", title="Acme", codec=GENERIC.codec, detect=detect, store=store)
"""

PROBE = """
import json, sys
from pathlib import Path
import txcodec
from txcodec import api
from txcodec.kit import registry

out = {}
claude = txcodec.sample("claude_code")
out["claude"] = txcodec.load(claude).harness
out["claude_looked_up_plugins"] = "importlib.metadata" in sys.modules
lines = claude.read_bytes().splitlines(keepends=True)
unsigned = b'{"type":"no-signature"}\\n' + b"".join(lines)  # opens with no client's signature
out["unsigned_claude"] = api.detect(unsigned)
out["acme_lines"] = api.detect(b'{"acme":1}\\n{"acme":2}\\n')
out["acme_named"] = txcodec.load(Path(sys.argv[1])).harness
out["title"] = registry.get("acme").title
out["listed"] = "acme" in registry.harnesses()
print(json.dumps(out))
"""


def test_a_plugin_is_found_and_looked_up_only_when_no_built_in_claims_the_file(tmp_path):
    site = tmp_path / "site"
    (site / "acme_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "acme_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acme-plugin\nVersion: 1.0\n"
    )
    (site / "acme_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[txcodec.harnesses]\nacme = acme_plugin:HARNESS\n"
    )
    (site / "acme_plugin.py").write_text(textwrap.dedent(PLUGIN))
    named = tmp_path / "acme.history"
    named.write_bytes(b"plain text no detector reads\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(named)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out == {
        "claude": "claude_code",
        "claude_looked_up_plugins": False,  # its first line is Claude Code's own signature
        "unsigned_claude": "claude_code",  # a built-in detector claims it: the greedy plugin is not asked
        "acme_lines": "acme",  # no built-in claims these lines: the plugin's detector does
        "acme_named": "acme",  # by its store's file name
        "title": "Acme",
        "listed": True,
    }


LISTED = """
import json, sys
from txcodec.kit import registry
names = sorted(registry.plugins())
print(json.dumps([names, "importlib.metadata" in sys.modules]))
"""


def test_the_entry_points_are_kept_until_the_installed_packages_change(tmp_path):
    """The entry points are looked up once and kept in the cache folder; installing a
    plugin, changing one's entry points in place or removing one is seen at once."""
    site = tmp_path / "site"

    def install(name: str, points: str) -> None:
        info = site / f"{name}_plugin-1.0.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-plugin\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[txcodec.harnesses]\n{points}\n")
        (site / f"{name}_plugin.py").write_text(textwrap.dedent(PLUGIN))

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }

    def listed() -> list:
        done = subprocess.run([sys.executable, "-c", LISTED], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    install("acme", "acme = acme_plugin:HARNESS")
    assert listed() == [["acme"], True]
    assert listed() == [["acme"], False]  # kept: importlib.metadata not even imported
    assert (tmp_path / "cache" / "txcodec" / "entry-points.json").is_file()
    install("beta", "beta = beta_plugin:HARNESS")  # a plugin installed since
    assert listed() == [["acme", "beta"], True]
    assert listed() == [["acme", "beta"], False]
    install("beta", "gamma = beta_plugin:HARNESS")  # its entry points rewritten in place
    assert listed() == [["acme", "gamma"], True]
    shutil.rmtree(site / "acme_plugin-1.0.dist-info")  # and one removed
    assert listed() == [["gamma"], True]
    (tmp_path / "cache" / "txcodec" / "entry-points.json").write_text("not json")  # a broken cache is looked past
    assert listed() == [["gamma"], True]
    # two paths taking turns (two checkouts, say) each keep their own: neither is looked up again
    other = env["PYTHONPATH"]
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), other])
    assert listed() == [["gamma"], True]
    for path in (other, env["PYTHONPATH"]) * 2:
        env["PYTHONPATH"] = path
        assert listed() == [["gamma"], False]


def test_an_entry_point_value_is_loaded_as_importlib_metadata_loads_it():
    from importlib.metadata import EntryPoint

    from txcodec.kit import registry

    for value in (
        "txcodec.kit.registry:Harness",
        "txcodec.kit.registry",
        "txcodec.kit.registry : Harness.resume_argv",
        "txcodec.kit.registry:Harness [extra]",
    ):
        assert registry._load(value) is EntryPoint("x", value, "g").load()


def test_a_plugin_giving_its_store_module_gets_a_declared_store(tmp_path):
    """A plugin written for 0.1 passed its store module as ``Harness.store``: the
    registry turns it into a declared Store once, with a DeprecationWarning, so features
    never ask a module which hooks it has."""
    import types

    import pytest

    from txcodec.harnesses.jsonl import HARNESS as GENERIC
    from txcodec.kit.registry import Harness
    from txcodec.kit.registry import Store
    from txcodec.kit.registry import _with_declared_store

    module = types.ModuleType("old_store")
    module.default_root = lambda: tmp_path
    module.discover = lambda root=None: []
    module.session_file = lambda folder: None
    module.FILE_NAMES = ("old.history",)
    old = Harness(name="old", title="Old", codec=GENERIC.codec, detect=lambda sample: 0, store=module)
    with pytest.warns(DeprecationWarning, match="store module"):
        new = _with_declared_store(old)
    assert isinstance(new.store, Store)
    assert new.store.default_root() == tmp_path and new.store.session_file is module.session_file
    assert new.store.file_names == ("old.history",) and new.store.install is None
    declared = Harness(
        name="new",
        title="New",
        codec=GENERIC.codec,
        detect=lambda sample: 0,
        store=Store(default_root=lambda: tmp_path, discover=lambda root=None: []),
    )
    assert _with_declared_store(declared) is declared  # a declared store is left as it is
