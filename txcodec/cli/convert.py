"""``txcodec convert`` and ``txcodec resume``: Common-mediated conversion between harnesses."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click

from .. import api, registry
from ..atomic import TargetExists, install_files, write_atomic
from ..loss import LossReport
from .common import echo_json, user_errors


def _summary(loss: LossReport) -> None:
    counts = loss.counts()
    if not counts:
        click.echo("loss: nothing", err=True)
        return
    click.echo(f"loss: {sum(counts.values())} entries", err=True)
    for kind, n in counts.items():
        click.echo(f"  {n:6d}  {kind}", err=True)


def _write_out(written: registry.Written, out: Path) -> list[Path]:
    """One file to ``out``; several files beneath ``out`` as a folder (paths kept)."""
    if len(written.files) == 1 and not out.is_dir():
        data = written.files[written.main]
        if out.name.endswith(".zst"):  # named compressed: written compressed (read back by every command)
            import zstandard

            data = zstandard.ZstdCompressor().compress(data)
        return [write_atomic(out, data)]
    return install_files(out, written.files)


def _resume_line(harness: str, written: registry.Written) -> str:
    sid = written.session_id
    lines = {"claude_code": f"claude --resume {sid}", "codex": f"codex resume {sid}", "gemini_cli": f"gemini --resume {sid}",
             "qwen_code": f"qwen --resume {sid}", "pi": f"pi --session {sid}",
             "copilot_cli": f"copilot --resume {sid}", "continue_cli": f"cn --fork {sid}",
             "opencode": f"opencode --session {sid}", "kilo": f"kilo --session {sid}"}
    return lines.get(harness, f"(resume session {sid})")


def _project_dir(cwd: str | None) -> str:
    """The absolute project folder: the store's folder name and every record's ``cwd``
    are made from it, so a relative ``--cwd`` would name the wrong folder."""
    return os.path.abspath(cwd) if cwd is not None else os.getcwd()


def _install(written: registry.Written, harness: str) -> None:
    try:
        paths = api.install(written, harness)
    except TargetExists as exc:
        raise click.ClickException(f"{exc} (choose a new id with --session-id)") from exc
    for path in paths:
        click.echo(f"installed {path}", err=True)


def _run_from(cwd: str) -> None:
    """Claude Code, Gemini CLI, Qwen Code, pi, opencode and Kilo find a session by the
    folder they run in: say so when that is not here."""
    if os.path.abspath(os.getcwd()) != cwd:
        click.echo(f"run it from {cwd}:  cd {shlex.quote(cwd)}", err=True)


def register(group: click.Group) -> None:
    @group.command("convert")
    @click.argument("src", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--from", "from_", type=str, help="Source harness (detected when left out; 'common' for Common JSON).")
    @click.option("--to", "to", type=str, required=True, help="Target harness (claude_code, codex, ...).")
    @click.option("-o", "--output", "out", type=click.Path(path_type=Path), help="Output file, or a folder for several files.")
    @click.option("--install", is_flag=True, help="Install into the target's store (never overwrites).")
    @click.option("--cwd", type=str, help="The project folder the target client will resume from.")
    @click.option("--session-id", type=str, help="The new session's id (a UUID for Claude Code).")
    @click.option("--loss", "show_loss", is_flag=True, help="Print the whole loss report as JSON on stdout.")
    @click.option("--prompt", "prompts", multiple=True,
                  help="The prompt of one run, for a stream_json capture that lacks it (repeat: one per run, in order).")
    @click.option("--input", "input_side", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                  help="The stdin side of a stream_json capture (the lines sent to --input-format stream-json), "
                       "kept in a file of its own: it gives the prompts.")
    @click.option("--stdin-side", is_flag=True,
                  help="With --to stream_json: write the user turns as stdin lines for "
                       "'claude -p --input-format stream-json', instead of the output capture.")
    def convert(src: Path, from_: str | None, to: str, out: Path | None, install: bool, cwd: str | None,
                session_id: str | None, show_loss: bool, prompts: tuple[str, ...], input_side: Path | None,
                stdin_side: bool) -> None:
        """Convert SRC to another harness's native format."""
        if out is not None and install:
            raise click.UsageError("-o and --install exclude each other")
        with user_errors():
            if install or cwd is not None:
                cwd = _project_dir(cwd)
            written, loss = api.convert(src, to, from_=from_, session_id=session_id, cwd=cwd,
                                        prompts=list(prompts) if prompts else None, input_side=input_side,
                                        stdin_side=stdin_side)
            if install:
                _install(written, to)
                click.echo(_resume_line(to, written))
                if to in ("claude_code", "gemini_cli", "qwen_code", "pi", "opencode", "kilo"):
                    _run_from(cwd)
            elif out is not None:
                for path in _write_out(written, out):
                    click.echo(f"wrote {path}", err=True)
            elif not show_loss:
                sys.stdout.buffer.write(written.files[written.main])
                if len(written.files) > 1:
                    click.echo(f"note: {len(written.files) - 1} side files not shown; use -o DIR or --install", err=True)
            _summary(loss)
            if show_loss:
                echo_json(loss.to_dict())

    @group.command("resume")
    @click.argument("src", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--from", "from_", type=str, help="Source harness (detected when left out).")
    @click.option("--cwd", type=str, help="Project folder (default: the current folder).")
    @click.option("--session-id", type=str, help="The new session's id (a UUID).")
    def resume(src: Path, from_: str | None, cwd: str | None, session_id: str | None) -> None:
        """Convert SRC to Claude Code, install it, and run ``claude --resume`` on it.

        The client runs in the project folder (--cwd) when ``claude`` is on PATH;
        otherwise the command to run is printed."""
        with user_errors():
            cwd = _project_dir(cwd)
            if not os.path.isdir(cwd):  # checked before installing: claude would run there
                raise click.ClickException(f"{cwd}: not a folder (--cwd)")
            written, loss = api.convert(src, "claude_code", from_=from_, session_id=session_id, cwd=cwd)
            _install(written, "claude_code")
            _summary(loss)
            line = _resume_line("claude_code", written)
            claude = shutil.which("claude")
            if claude is None:
                click.echo(f"claude is not on PATH; run: {line}")
                _run_from(cwd)
                return
            click.echo(f"+ {line}", err=True)
            raise SystemExit(subprocess.call([claude, "--resume", written.session_id], cwd=cwd))
