"""Issue 34.5: on a base install (no extras) every command works, or says in one line which
extra to install. The extras' modules are blocked by an import finder in a fresh process,
so the test needs no second environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest
from support.paths import ROOT

from txcodec import api
from txcodec.cli import main

# the top-level modules the extras (and only they) bring (pyproject.toml)
OPTIONAL = (
    "opentelemetry",
    "google",
    "pyarrow",
    "duckdb",
    "ray",
    "genai_prices",
    "numpy",
    "pandas",
    "playwright",
    "starlette",
    "uvicorn",
    "watchfiles",
    "detect_secrets",
    "ahocorasick_rs",
)

RUNNER = """
import sys, json
BLOCKED = set(json.loads(sys.argv[1]))

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Block())
import importlib.util

real_find_spec = importlib.util.find_spec

def find_spec(name, package=None):  # asked whether a module is there: as on an install without it
    if name.partition(".")[0] in BLOCKED:
        return None
    return real_find_spec(name, package)

importlib.util.find_spec = find_spec
from txcodec.cli import main
main(json.loads(sys.argv[2]), prog_name="txcodec")
"""


def _commands(tmp) -> dict[str, list[list[str]]]:
    sample = str(api.sample())
    return {
        "changes": [[sample]],
        "check-resume": [[sample]],
        "convert": [[sample, "--to", "codex", "-o", f"{tmp}/x.jsonl"]],
        "export": [
            [sample, "--to", "html", "-o", f"{tmp}/x.html"],
            [sample, "--to", "parquet", "-o", f"{tmp}/ds"],
            [sample, "--to", "markdown", "--redact", "-o", f"{tmp}/x.md"],
        ],
        "fixtures": [[str(tmp), "-o", f"{tmp}/fixtures"]],
        "index": [[]],
        "inspect": [[sample]],
        "lineage": [[sample]],
        "redact": [[sample, "-o", f"{tmp}/redacted"]],
        "list": [[]],
        "metrics": [
            [sample],
            [sample, "--format", "otlp-proto"],
            [sample, "--endpoint", "http://127.0.0.1:9/v1/metrics"],
        ],
        "resume": [[sample, "--to", "codex", "--cwd", str(tmp)]],
        "sample": [[]],
        "serve": [["--port", "0"]],
        "show": [[sample], ["--follow", "--idle", "0.2", sample]],
        "sql": [["select 1"]],
        "usage": [[sample]],
        "verify": [[sample]],
        "watch": [["--once"]],
    }


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(OPTIONAL), json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_blocker_blocks():
    out = _run(["sql", "select 1"], {**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode != 0 and "txcodec[sql]" in out.stderr


def test_every_command_runs_or_names_its_extra_on_a_base_install(tmp_path):
    commands = _commands(tmp_path)
    assert set(commands) == set(main.list_commands(click.Context(main))), "a new command needs its case here"
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        "PATH": os.path.dirname(sys.executable),  # no real client: resume prints its command
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    failures = []
    for name, cases in commands.items():
        for args in cases:
            out = _run([name, *args], env)
            lines = out.stderr.strip().splitlines()
            if out.returncode == 0 and "Traceback" not in out.stderr:
                continue
            if len(lines) == 1 and "pip install 'txcodec[" in lines[0] and out.returncode in (1, 2):
                continue
            failures.append(f"txcodec {name} {' '.join(args)} -> {out.returncode}: {out.stderr.strip()[-300:]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("args", [["--format", "otlp-proto"], ["--endpoint", "http://127.0.0.1:9/v1/metrics"]])
def test_metrics_without_its_extra_names_it(args):
    out = _run(["metrics", str(api.sample()), *args], {**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 1 and out.stderr.strip() == (
        "Error: OTLP output needs opentelemetry-proto: pip install 'txcodec[metrics]'"
    )


def test_metrics_json_needs_no_extra():
    out = _run(["metrics", str(api.sample())], {**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["sum"]["dataPoints"]
