"""``txcodec export``: one session as Common JSON, Markdown or chat-fine-tuning JSONL;
many sessions as a Parquet dataset or a Hugging Face dataset file."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from ..atomic import write_atomic
from ..common import to_json
from ..loss import LossReport
from .common import read_common, stdout_binary, user_errors


def _markdown(conv, loss):
    from ..render import markdown

    return markdown.render(conv).encode("utf-8")


def _openai_chat(conv, loss):
    from ..training import openai_chat_lines

    return openai_chat_lines(conv, loss)


# one conversation in, one document out
FORMATS = {
    "common": lambda conv, loss: msgspec.json.format(to_json(conv), indent=2) + b"\n",
    "markdown": _markdown,
    "openai-chat": _openai_chat,
}
# many sessions in, a dataset out (-o names a folder or file)
DATASETS = ("parquet", "hf")


def _echo_loss(loss: LossReport, to_stderr: bool) -> None:
    text = msgspec.json.format(msgspec.json.encode(loss.to_dict()), indent=2).decode()
    click.echo(text, err=to_stderr)


def _export_dataset(fmt: str, paths: tuple[Path, ...], out: str, jobs: int | None, show_loss: bool) -> None:
    if out == "-":
        raise click.UsageError(f"--to {fmt} writes files: name them with -o")
    if fmt == "parquet":
        from ..dataset import export_parquet

        with user_errors():
            result = export_parquet(paths, out, jobs=jobs)
        for source, reason in result.failed.items():
            click.echo(f"txcodec: {reason if reason.startswith(source) else f'{source}: {reason}'}", err=True)
        rows = ", ".join(f"{n} {name}" for name, n in sorted(result.rows.items())) or "no rows"
        click.echo(f"{len(result.written)} written ({rows}), {len(result.unchanged)} unchanged, "
                   f"{len(result.failed)} failed: {out}", err=True)
        if result.failed:
            raise SystemExit(1)
        return
    import pyarrow.parquet as pq

    from ..training import hf_table

    loss, items = LossReport(), []
    for path in paths:
        conv = read_common(path, None, LossReport())
        items.append((conv, conv.meta.source_harness if isinstance(conv.meta.source_harness, str) else None,
                      conv.meta.id if isinstance(conv.meta.id, str) else None))
    with user_errors():
        table = hf_table(items, loss)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(out).with_name(f".{Path(out).name}.tmp")
        pq.write_table(table, tmp)
        tmp.replace(out)
    if show_loss:
        _echo_loss(loss, to_stderr=False)


def register(group: click.Group) -> None:
    @group.command("export")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--to", "fmt", type=click.Choice([*sorted(FORMATS), *DATASETS]), default="common", show_default=True)
    @click.option("-o", "--output", "out", type=str, default="-", show_default=True,
                  help="Output file ('-' for stdout); a folder for --to parquet.")
    @click.option("--from", "harness", type=str, help="The file's harness (detected when left out).")
    @click.option("--jobs", type=click.IntRange(1), help="Processes for --to parquet (default: the CPU count).")
    @click.option("--loss", "show_loss", is_flag=True,
                  help="Print the loss report as JSON (on stderr when the export goes to stdout).")
    def export(paths: tuple[Path, ...], fmt: str, out: str, harness: str | None, jobs: int | None,
               show_loss: bool) -> None:
        """Export sessions: one PATH as Common JSON, Markdown or chat fine-tuning JSONL
        (openai-chat); one or more as a Parquet dataset (parquet, see docs/dataset.md) or
        one Parquet file of chat examples that Hugging Face `datasets` loads (hf)."""
        if fmt in DATASETS:
            _export_dataset(fmt, paths, out, jobs, show_loss)
            return
        if len(paths) != 1:
            raise click.UsageError(f"--to {fmt} exports one session at a time")
        (path,) = paths
        loss = LossReport()
        with user_errors():
            conv = read_common(path, harness, loss)
            data = FORMATS[fmt](conv, loss)
            if out == "-":
                stdout_binary().write(data)
                stdout_binary().flush()
            else:
                write_atomic(out, data)  # never overwrites an existing file
        if show_loss:
            _echo_loss(loss, to_stderr=out == "-")
