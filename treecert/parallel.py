"""Parallel map over contiguous chunks of rows (joblib), with results in input order.

Chunks are contiguous and put back in order, so the output is identical for any number of
workers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def chunk_bounds(n: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split range(n) into ``n_chunks`` contiguous, nearly equal (lo, hi) pieces."""
    n_chunks = max(1, min(n_chunks, n))
    edges = [round(k * n / n_chunks) for k in range(n_chunks + 1)]
    return [(edges[k], edges[k + 1]) for k in range(n_chunks) if edges[k + 1] > edges[k]]


def effective_jobs(jobs: int) -> int:
    import os

    if jobs is None or jobs == 0:
        return 1
    if jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + jobs)
    return jobs


def map_chunks(work: Callable[[int, int], T], n: int, jobs: int = 1) -> list[T]:
    """``[work(lo, hi) for each chunk]``; chunks run in parallel processes when jobs > 1."""
    jobs = effective_jobs(jobs)
    if n == 0:
        return []
    if jobs == 1:
        return [work(0, n)]
    from joblib import Parallel, delayed

    bounds = chunk_bounds(n, 4 * jobs)
    return list(Parallel(n_jobs=jobs)(delayed(work)(lo, hi) for lo, hi in bounds))
