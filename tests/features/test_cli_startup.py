"""Start-up stays lean (issue 12): ``txcodec --help`` imports no command module, msgspec
or harness, and a command imports only what it runs. Pinned by what a fresh interpreter
has imported, never by a timing."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from support.paths import ROOT

from txcodec.cli import COMMANDS
from txcodec.cli import main

# modules a start-up must not pay for unless the command needs them
HEAVY = (
    "msgspec",
    "rich",
    "jinja2",
    "pyarrow",
    "duckdb",
    "importlib.metadata",
    "sqlite3",
    "json",
    "difflib",
    "subprocess",
)


def imported_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, env=env
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def run_cli(*args: str) -> str:
    return f"from txcodec.cli import main\ntry:\n    main({list(args)!r})\nexcept SystemExit:\n    pass"


def test_help_imports_no_command_module_and_nothing_heavy():
    # json is imported by the probe itself, after the command ran: check it separately
    modules = imported_after(run_cli("--help") + "\nimport sys\nassert 'json' not in sys.modules, 'json'")
    assert not {m for m in modules if m.startswith(("txcodec.cli.", "txcodec.harnesses"))}
    assert {"txcodec.api", "txcodec.usage", "txcodec.kit.registry"}.isdisjoint(modules)
    assert set(HEAVY).isdisjoint(modules - {"json"})


def test_import_txcodec_is_lazy_and_its_api_still_there():
    import txcodec

    assert "msgspec" not in imported_after("import txcodec")
    for name in txcodec.__all__:
        assert getattr(txcodec, name) is not None, name
    assert txcodec.load is txcodec.api.load and txcodec.usage.total_usage is txcodec.total_usage
    assert set(txcodec.__all__) <= set(dir(txcodec))
    with pytest.raises(AttributeError):
        txcodec.no_such_name  # noqa: B018


def test_submodules_stay_reachable_from_the_package():
    """``import txcodec`` used to import the API's modules: ``txcodec.api.load`` after a
    bare ``import txcodec`` still works."""
    code = (
        "import txcodec\nassert txcodec.api.load is txcodec.load and txcodec.kit.registry.get('codex').name == 'codex'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_command_table_matches_the_commands():
    """Each command in :data:`COMMANDS` is registered by the module the table names, and
    its one-line help is the command's own: ``--help`` lists what ``<cmd> --help`` says."""
    registered: dict[str, click.Command] = {}
    for module in sorted({module for module, _ in COMMANDS.values()}):
        group = click.Group()
        __import__(f"txcodec.cli.{module}", fromlist=["register"]).register(group)
        for name, command in group.commands.items():
            assert COMMANDS[name][0] == module, name
            registered[name] = command
    assert sorted(registered) == sorted(COMMANDS)
    for name, command in registered.items():
        listed = click.Command(name, help=COMMANDS[name][1])
        assert listed.get_short_help_str(10_000) == command.get_short_help_str(10_000), name


def test_help_lists_every_command_as_click_would():
    """The listing from the table is the one click prints from the commands themselves."""
    ctx = click.Context(main, info_name="txcodec")
    eager = click.Group(
        name="txcodec",
        help=main.help,
        params=main.params,
        context_settings=main.context_settings,
        commands={name: main.get_command(ctx, name) for name in COMMANDS},
    )
    for width in (60, 80, 120):
        settings = {**main.context_settings, "terminal_width": width}
        lazy = main.get_help(click.Context(main, info_name="txcodec", **settings))
        full = eager.get_help(click.Context(eager, info_name="txcodec", **settings))
        assert "Commands:" in lazy and "check-resume" in lazy
        assert lazy == full


# what ``usage FILE`` of a Claude Code or Codex file must not pay for: the Common path (api,
# the full readers and codecs, native sessions), the entry-point lookup (no plugin is asked
# about a file a built-in harness's signature names), side files of a session with no
# folder, and dataclasses (each compiles its methods when defined)
USAGE_NEVER = (
    "txcodec.api",
    "txcodec.model.common",
    "txcodec.model.native",
    "txcodec.model.loss",
    "txcodec.kit.read",
    "dataclasses",
    "txcodec.harnesses.claude_code.sidefiles",
    "txcodec.harnesses.claude_code.read",
    "txcodec.harnesses.claude_code.records",
    "txcodec.harnesses.claude_code.codec",
    "txcodec.harnesses.codex.read",
    "txcodec.harnesses.codex.records",
    "txcodec.harnesses.codex.codec",
)


@pytest.mark.parametrize("harness", ["claude_code", "codex"])
def test_usage_of_a_file_imports_its_lean_reader_alone(harness, tmp_path):
    import os

    import txcodec

    path = txcodec.sample(harness)
    # the price cache warmed first (a model not in it yet imports the price table, which
    # uses importlib.metadata): the second run is what a user's every run is
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code = run_cli("usage", str(path))
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, check=True, env=env)
    modules = imported_after(code + "\nimport sys\nassert 'json' not in sys.modules, 'json'", env)
    assert f"txcodec.harnesses.{harness}.usage" in modules
    assert {m for m in modules if m.startswith("txcodec.harnesses.")} == {
        f"txcodec.harnesses.{harness}",
        f"txcodec.harnesses.{harness}.usage",
    }
    assert set(USAGE_NEVER).isdisjoint(modules)
    assert set(HEAVY).isdisjoint(modules - {"msgspec", "json"})


def test_the_program_is_run_and_keeps_mains_exit_status():
    """The console script and ``python -m txcodec`` call :func:`txcodec.cli.run`: main's
    exit status and output as they are, the objects then frozen out of the exit-time
    cycle collections."""
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["txcodec"] == "txcodec.cli:run"
    ok = subprocess.run([sys.executable, "-m", "txcodec", "--version"], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout == "txcodec, version 0.1.0\n"
    bad = subprocess.run(
        [sys.executable, "-m", "txcodec", "usage", "--by", "weekday"], cwd=ROOT, capture_output=True, text=True
    )
    assert bad.returncode == 2 and "choose from session" in bad.stderr
    code = (
        "import gc, sys\nfrom txcodec.cli import run\nsys.argv = ['txcodec', '--version']\n"
        "try:\n    run()\nexcept SystemExit as exc:\n    print(exc.code, gc.get_freeze_count() > 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "0 True"
