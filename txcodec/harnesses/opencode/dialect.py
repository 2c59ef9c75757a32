"""What differs between opencode and its fork Kilo: names, paths, and Kilo's extra tables.

Kilo (``@kilocode/cli`` 7.7.7) is opencode with ``kilo`` for ``opencode`` everywhere the
two were observed to differ (docs/opencode.md#format-facts): the binary, the ``KILO_`` environment
variables, ``$XDG_DATA_HOME/kilo/kilo.db``, and two more tables (``kilo_board``,
``kilo_board_message``). Its export and import are opencode's, and it imports an opencode
1.18.33 export unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    harness: str  # the txcodec harness id
    title: str
    binary: str  # the CLI on PATH / in clients/node_modules/.bin
    package: str  # its npm package (pinned in clients/package.json)
    env_prefix: str  # OPENCODE_ / KILO_: config content and switches
    app: str  # the folder under $XDG_DATA_HOME (and the other XDG homes)
    database: str  # the SQLite file in that folder
    version: str  # the client version written into sessions
    agent: str  # the primary agent a written session names
    extra_tables: tuple[str, ...] = ()  # tables the fork adds to opencode's schema

    def env(self, name: str) -> str:
        return self.env_prefix + name


OPENCODE = Dialect(
    "opencode", "opencode", "opencode", "opencode-ai", "OPENCODE_", "opencode", "opencode.db", "1.18.33", "build"
)
KILO = Dialect(
    "kilo",
    "Kilo",
    "kilo",
    "@kilocode/cli",
    "KILO_",
    "kilo",
    "kilo.db",
    "7.7.7",
    "code",
    extra_tables=("kilo_board", "kilo_board_message"),
)
