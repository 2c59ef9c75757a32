"""Forked reading workers (``txcodec.core.forking``): a worker killed from outside does not
hang the command (``multiprocessing.Pool.map`` waited forever for its lost chunk); the work is
done again here and the answer is whole."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from txcodec.core.forking import forked_map
from txcodec.core.forking import shut

MARK = "TXCODEC_TEST_FORKING_MARK"


def _square_dying_once(job: int) -> int:
    """Job 7 kills its own worker the first time it is run anywhere (a mark file says so)."""
    mark = Path(os.environ[MARK])
    if job == 7 and not mark.exists():
        mark.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return job * job


def _refuse(job: int) -> int:
    if job == 3:
        raise ValueError("three")
    return job


@pytest.fixture
def mark(tmp_path, monkeypatch):
    monkeypatch.setenv(MARK, str(tmp_path / "died"))
    return tmp_path / "died"


def test_a_killed_worker_leaves_the_answer_whole(mark):
    jobs = list(range(40))
    assert forked_map(_square_dying_once, jobs, 2, chunksize=4) == [j * j for j in jobs]
    assert mark.exists()  # a worker did die


def test_a_kept_pool_is_let_go_when_a_worker_dies_and_made_again(mark):
    kept: list = []
    jobs = list(range(20))
    try:
        assert forked_map(_square_dying_once, jobs, 2, kept=kept) == [j * j for j in jobs]
        assert mark.exists() and kept == []  # the broken pool is not reused
        assert forked_map(_square_dying_once, jobs, 2, kept=kept) == [j * j for j in jobs]
        assert len(kept) == 1
        first = kept[0]
        assert forked_map(_square_dying_once, jobs, 2, kept=kept) == [j * j for j in jobs]
        assert kept == [first]  # reused while whole
    finally:
        shut(kept)
    assert kept == []


def test_what_the_work_raises_is_raised_here():
    with pytest.raises(ValueError, match="three"):
        forked_map(_refuse, list(range(10)), 2)


class _Unpicklable:
    """A job that cannot cross a pipe: only a worker forked with it in memory can do it."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __reduce__(self):
        raise TypeError("not to be pickled")


def _double(job: _Unpicklable) -> int:
    return job.n * 2


def test_workers_forked_for_a_map_take_its_jobs_from_memory():
    """The workers of a pool made for one map have its jobs as they were when forked: each is
    handed its place in the list, not the job pickled (a listing's items cost more to unpickle
    than to describe). A pool kept from an earlier map was forked before these jobs: they are
    pickled to it."""
    jobs = [_Unpicklable(n) for n in range(30)]
    assert forked_map(_double, jobs, 2, chunksize=3) == [n * 2 for n in range(30)]
    kept: list = []
    try:
        assert forked_map(_double, jobs, 2, kept=kept) == [n * 2 for n in range(30)]  # forked for these
        with pytest.raises(TypeError, match="not to be pickled"):
            forked_map(_double, jobs, 2, kept=kept)  # the same pool, forked before: pickled
    finally:
        shut(kept)


def _triple(job: _Unpicklable) -> int:
    return job.n * 3


def test_maps_in_two_threads_each_fork_with_their_own_jobs():
    """Two threads mapping at once (a listing beside an early grep): neither's workers may be
    forked holding the other's jobs."""
    from concurrent.futures import ThreadPoolExecutor

    for _ in range(5):
        with ThreadPoolExecutor(2) as threads:
            doubled = threads.submit(forked_map, _double, [_Unpicklable(n) for n in range(40)], 2)
            tripled = threads.submit(forked_map, _triple, [_Unpicklable(n) for n in range(7)], 2)
            assert doubled.result() == [n * 2 for n in range(40)]
            assert tripled.result() == [n * 3 for n in range(7)]
