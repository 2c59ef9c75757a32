"""Reading work spread over forked worker processes, safe against a worker that dies.

``multiprocessing.Pool.map`` waits forever for the chunk of a worker killed from outside
(a signal, the out-of-memory killer): the pool starts a new worker but the chunk is lost.
``concurrent.futures`` notices the death instead, and the work is then done here.

A pool forked for one map has its jobs in memory already: its workers are handed each job's
place in the list rather than the job pickled (a listing's items, with their paths, cost more
to unpickle than to describe)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .gcpause import no_cycle_collection


def forked_map(
    work: Callable[[Any], Any], jobs: list[Any], processes: int, chunksize: int = 1, kept: list[Any] | None = None
) -> list[Any]:
    """``[work(job) for job in jobs]``, in ``processes`` forked workers where this process
    may start them (a platform with ``fork``, and not itself a worker), else here. ``work``
    must be a module-level function and each job must pickle; what ``work`` raises is
    raised here. When a worker dies, every job is done again here, in order: the work is
    a read, so doing a job twice changes nothing. ``kept`` holds the pool for later calls
    (made here when it is empty; the caller shuts it down, :func:`shut`)."""
    import multiprocessing

    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # no fork (Windows)
        return [work(job) for job in jobs]
    if multiprocessing.parent_process() is not None:  # a worker starts none of its own
        return [work(job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _INHERITED
    forked_before = bool(kept)
    if kept:
        pool = kept[0]
    else:
        pool = ProcessPoolExecutor(processes, mp_context=context)
        if kept is not None:
            kept.append(pool)
    try:
        if forked_before:  # a kept pool has none of these jobs: each is pickled to it
            answers = pool.map(work, jobs, chunksize=chunksize)
        else:
            # A forking pool starts every worker at its first submit, which ``map`` makes before
            # it returns; the lock keeps another thread's map from forking with these jobs.
            with _FORKING:
                _INHERITED = (work, jobs)
                try:
                    answers = pool.map(_inherited_job, range(len(jobs)), chunksize=chunksize)
                finally:
                    _INHERITED = None
        # the workers are forked, collecting; here the answers come in by the ten thousand, plain
        # data kept whole, which the collector would walk again and again as they grow
        with no_cycle_collection():
            done = list(answers)
    except BrokenProcessPool:
        if kept:
            kept.clear()
        pool.shutdown(wait=False, cancel_futures=True)
        return [work(job) for job in jobs]
    except BaseException:
        if kept is None:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    if kept is None:
        pool.shutdown()
    return done


# the work and jobs of the map whose pool is being forked: a worker has them as they were then
_INHERITED: tuple[Callable[[Any], Any], list[Any]] | None = None
_FORKING = threading.Lock()


def _inherited_job(n: int) -> Any:
    work, jobs = _INHERITED  # type: ignore[misc]
    return work(jobs[n])


def shut(kept: list[Any]) -> None:
    """Shut the pools :func:`forked_map` kept."""
    for pool in kept:
        pool.shutdown(wait=False, cancel_futures=True)
    kept.clear()
