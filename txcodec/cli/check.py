"""``txcodec check-resume``: what the real client sends when it resumes a file."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from .. import api
from ..kit import registry
from .options import SessionParam
from .options import echo_json
from .options import from_option
from .options import user_errors


def _line(message) -> str:
    parts = []
    for block in message.content:
        tag = block.__struct_config__.tag
        if tag == "text":
            text = block.text.replace("\n", " ")
            parts.append(repr(text[:60] + ("..." if len(text) > 60 else "")))
        elif tag == "tool_use":
            parts.append(f"tool_use {block.name} {block.id}")
        elif tag == "tool_result":
            parts.append(f"tool_result {block.tool_use_id}{' (error)' if block.is_error else ''}")
        else:
            parts.append(tag)
    return f"{message.role:9s} " + ", ".join(parts)


class CannotCheck(click.ClickException):
    """The check did not run (not a resumable file, no client, no check for the
    harness): exit status 2, so a script can tell it from "ran and was not resumed"."""

    exit_code = 2


def register(group: click.Group) -> None:
    @group.command("check-resume")
    @click.argument("file", type=SessionParam())
    @from_option()
    @click.option("--cwd", type=str, help="Project folder to resume from (default: a throw-away folder).")
    @click.option("--json", "as_json", is_flag=True, help="The whole report as JSON.")
    def check_resume(file: Path, harness: str | None, cwd: str | None, as_json: bool) -> None:
        """Resume FILE (a path, a session id or prefix, or latest[:HARNESS]) with the
        real client against a strict local mock model and report what it sent. Exit
        status: 0 resumed; 1 the client failed, made no request, or sent something the
        real API would reject (400); 2 the check could not run (FILE is not a session the client can
        look up, or the client is not
        installed)."""
        try:
            with user_errors():
                name = harness or api.load(file).harness
                target = registry.get(name)
                if target.check_resume is None:
                    raise click.ClickException(
                        f"{file}: read as {target.title}, which has no resume check (name the harness with --from)"
                    )
                options = {"cwd": cwd} if cwd else {}
                report = target.check_resume(file, **options)
        except click.ClickException as exc:
            raise CannotCheck(exc.message) from exc
        except RuntimeError as exc:  # each client module's ClientMissing
            raise CannotCheck(str(exc)) from exc
        # the client retries a rejected request: one line per distinct reason
        report.rejected = list(dict.fromkeys(report.rejected))
        if as_json:
            echo_json(msgspec.to_builtins(report) | {"resumed": report.resumed})
        else:
            click.echo(
                f"{report.client}: session {report.session_id}, exit {report.exit_code}, {report.requests} request(s)"
            )
            for message in report.sent:
                click.echo("  " + _line(message))
            for why in report.rejected:
                click.echo(f"  REJECTED {why}")
            if not report.resumed and report.stderr.strip():
                click.echo(report.stderr.strip()[-1500:], err=True)
            click.echo("resumed" if report.resumed else "NOT resumed")
        if not report.resumed:
            raise SystemExit(1)
