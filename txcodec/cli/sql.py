"""``txcodec sql``: DuckDB over a dataset written by ``txcodec export --to parquet``."""

from __future__ import annotations

from pathlib import Path

import click

from .options import echo_json
from .options import user_errors


def register(group: click.Group) -> None:
    @group.command("sql")
    @click.argument("query")
    @click.option(
        "-d",
        "--dataset",
        "folder",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=".",
        show_default=True,
        help="The folder `export --to parquet -o` wrote.",
    )
    @click.option("--json", "as_json", is_flag=True, help="Rows as a JSON array of objects.")
    def sql(query: str, folder: Path, as_json: bool) -> None:
        """Run QUERY with DuckDB over an exported dataset.

        The tables sessions, messages, blocks, tool_calls, usage and changes are views
        of the Parquet files (docs/dataset.md lists their columns and example queries).
        Needs the `sql` extra: pip install 'txcodec[sql]'.
        """
        from ..export.dataset import query as run_query

        with user_errors():
            relation = run_query(folder, query)
            if relation is None:  # a statement that returns no rows
                return
            columns, rows = relation.columns, relation.fetchall()
        if as_json:
            echo_json([dict(zip(columns, row)) for row in rows])
            return
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        from ..export.text import safe_text

        # session data is text, never Rich markup: "[/x]" would raise and "[link=...]" make a
        # live terminal link; terminal escapes in it are shown, not run (as `show` shows them)
        table = Table(show_lines=False)
        for column in columns:
            table.add_column(Text(safe_text(column)))
        for row in rows:
            table.add_row(*(Text("" if v is None else safe_text(str(v))) for v in row))
        Console().print(table)
