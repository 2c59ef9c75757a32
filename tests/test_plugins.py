"""Harness plugins: a package installed under the ``txcodec.harnesses`` entry-point group
is found by name, by its detector and by its store's file names, and the entry points are
looked up only when a built-in harness does not claim the file (importing
importlib.metadata and reading every installed distribution costs more than a small
command's whole run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from conftest import ROOT

PLUGIN = '''
from txcodec.harnesses.jsonl import HARNESS as GENERIC
from txcodec.registry import Harness


class store:
    FILE_NAMES = ("acme.history",)


def detect(sample):
    # greedy on purpose: it claims any JSON object, so it would outscore a built-in
    return 100 if any(isinstance(v, dict) for v in sample) else 0


HARNESS = Harness(name="acme", title="Acme", codec=GENERIC.codec, detect=detect, store=store)
'''

PROBE = '''
import json, sys
from pathlib import Path
import txcodec
from txcodec import api, registry

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
'''


def test_a_plugin_is_found_and_looked_up_only_when_no_built_in_claims_the_file(tmp_path):
    site = tmp_path / "site"
    (site / "acme_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "acme_plugin-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-plugin\nVersion: 1.0\n")
    (site / "acme_plugin-1.0.dist-info" / "entry_points.txt").write_text("[txcodec.harnesses]\nacme = acme_plugin:HARNESS\n")
    (site / "acme_plugin.py").write_text(textwrap.dedent(PLUGIN))
    named = tmp_path / "acme.history"
    named.write_bytes(b"plain text no detector reads\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", PROBE, str(named)], cwd=tmp_path, env=env, capture_output=True, text=True)
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
