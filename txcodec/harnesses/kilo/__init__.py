"""Kilo (``@kilocode/cli``): opencode's dialect with its own name, paths and tables.

Sessions live in ``$XDG_DATA_HOME/kilo/kilo.db`` (opencode's schema plus ``kilo_board`` and
``kilo_board_message``) and go in and out as opencode exports (``kilo export`` / ``kilo
import``). Everything but the names comes from :mod:`txcodec.harnesses.opencode`.
"""

from __future__ import annotations

from ...kit.registry import lazy
from ..opencode import harness
from ..opencode.codec import OpencodeCodec
from ..opencode.dialect import KILO
from ..opencode.store import Database

CODEC = OpencodeCodec("kilo")
STORE = Database(KILO)
HARNESS = harness(KILO, CODEC, STORE, lazy("txcodec.resume_check.opencode", "check_resume_kilo"))
