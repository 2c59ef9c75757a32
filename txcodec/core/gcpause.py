"""A pause of Python's cycle collector around work that allocates many objects and no cycles, and
a freeze of the objects alive now that live to the end of a long piece of work."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

# The collector's switch is the process's, not the thread's: pauses are counted under a lock,
# and the last one to end restores the state the first one found. (Each pause restoring what
# it found let one thread's convert turn collection back on while another's still ran.)
_pause_lock = threading.Lock()
_pauses = 0
_collecting_before = False


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Decoding allocates objects by the hundred thousand and none of them can be part
    of a cycle yet: the cycle collector would only re-scan them again and again."""
    global _pauses, _collecting_before
    with _pause_lock:
        if _pauses == 0:
            _collecting_before = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _collecting_before:
                gc.enable()


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """The objects alive now left alone by the cycle collector until the block ends
    (``gc.freeze``): objects by the ten thousand that live through it (a listing's items, its
    rows) are not walked again at each full collection the block's own objects set off, nor
    by a worker forked in it (which would write to each page it walks, copied then from the
    parent page by page). Within someone else's freeze they join it, theirs to end."""
    held = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not held:
            gc.unfreeze()
