"""Generate docs/cli.md from the commands' own help: ``python -m txcodec.cli.reference``.

tests/features/test_docs.py fails when the committed page differs from what this prints.
"""

from __future__ import annotations

import click

from . import main

HEADER = """# CLI reference

Generated from the commands' help by `python -m txcodec.cli.reference > docs/cli.md`;
a test fails when this page and the code disagree.
"""


def render() -> str:
    parts = [HEADER]
    settings = {"terminal_width": 100, "max_content_width": 100, "help_option_names": ["-h", "--help"]}
    root = click.Context(main, info_name="txcodec", **settings)
    parts.append(f"```text\n{main.get_help(root)}\n```\n")
    from ..core import dates  # the one date grammar, written once: its module's docstring

    parts.append(f"## Dates\n\n{dates.__doc__.replace('``', '`').strip()}\n")
    for name in sorted(main.list_commands(root)):
        command = main.get_command(root, name)
        ctx = click.Context(command, info_name=name, parent=root, **settings)
        parts.append(f"## txcodec {name}\n\n```text\n{command.get_help(ctx)}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    print(render(), end="")
