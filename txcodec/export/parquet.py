"""The Parquet dataset export as a command runs it: its writer started early (a forked child
that imports pyarrow while this process lists and reads the sessions), pyarrow kept from
importing NumPy, and the writer ended whatever happens (:mod:`txcodec.export.dataset` does
the work)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def arrow_without_numpy() -> Iterator[None]:
    """pyarrow imports NumPy when it finds it, and NumPy takes longer to import than
    pyarrow itself; the export never hands Arrow a NumPy array. So in a process that has
    loaded neither (the command run on its own), pyarrow is loaded without it: while the
    export runs, ``import numpy`` fails, which pyarrow takes as NumPy not installed."""
    if "numpy" in sys.modules or "pyarrow" in sys.modules:
        yield
        return
    # cloudpickle too: pyarrow takes it for its pickling when it is there (cloudpickle imports
    # logging, a tenth of pyarrow's import time), and the export pickles no Arrow object
    blocked = [name for name in ("numpy", "cloudpickle") if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def start_writer(waiting: Callable[[], None] | None = None) -> Any:
    """Where the dataset's files are written: a forked child, which imports pyarrow while
    this process lists and reads (``dataset.ForkedWriter``), where the platform forks.
    ``waiting`` runs while the child finishes its files (a caller imports what it shows next)."""
    from . import dataset

    if not hasattr(os, "fork"):
        return dataset.Writer()
    with arrow_without_numpy():  # the child inherits the blocks, and imports pyarrow under them
        return dataset.ForkedWriter(waiting=waiting)


def export(
    paths: list[Path] | list[str],
    out: str,
    *,
    jobs: int | None = None,
    harnesses: dict[str, str] | None = None,
    on_outcome: Callable[[Any], None] | None = None,
    writer: Any = None,
) -> Any:
    """``dataset.export_parquet`` with ``writer`` (one :func:`start_writer` starts when it is
    None), aborted at the end: a child the export never took over ends, a closed one is left
    alone."""
    from .dataset import export_parquet

    writer = writer or start_writer()
    try:
        with arrow_without_numpy():
            return export_parquet(paths, out, jobs=jobs, harnesses=harnesses, on_outcome=on_outcome, writer=writer)
    finally:
        writer.abort()
