"""Where work is fanned out: local processes (joblib) or a Dask cluster, results in order.

Every parallel loop in treecert goes through :func:`map_chunks` (per-instance work of the
transductive methods) or :func:`run_calls` (evaluate's (fold, method) units). Chunks are
contiguous and results are put back in input order, so the output is identical for any
number of workers and any backend.

:func:`backend` switches both to a Dask distributed cluster (``--scheduler ADDRESS``): the
chunks are submitted as Dask futures; :func:`reporting` installs a callback told how many rows each
finished chunk held, for progress bars.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from treecert.errors import ConfigError

T = TypeVar("T")

#: The active backend: ``workers`` is the Dask cluster's thread count (0 = local joblib);
#: ``progress`` is called with the number of rows of every finished chunk.
_active: dict[str, Any] = {"workers": 0, "progress": None, "client": None}

#: Seconds to wait for the Dask scheduler to answer.
CONNECT_TIMEOUT = 30.0


def chunk_bounds(n: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split range(n) into ``n_chunks`` contiguous, nearly equal (lo, hi) pieces."""
    n_chunks = max(1, min(n_chunks, n))
    edges = [round(k * n / n_chunks) for k in range(n_chunks + 1)]
    return [(edges[k], edges[k + 1]) for k in range(n_chunks) if edges[k + 1] > edges[k]]


def shard_bounds(n: int, index: int, count: int) -> tuple[int, int]:
    """Rows [lo, hi) of shard ``index`` (0-based) of ``count``: contiguous, sizes differ by
    at most one, and the shards in order cover range(n) exactly once."""
    return n * index // count, n * (index + 1) // count


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``'I/N'`` -> (I, N) with 0 <= I < N; None stays None."""
    if text is None:
        return None
    i, sep, n = text.partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        index, count = -1, 0
    if not sep or count < 1 or not 0 <= index < count:
        raise ConfigError(f"--shard {text!r} is not I/N with 0 <= I < N.",
                          "Write e.g. --shard 0/4 for the first of four shards.")
    return index, count


def effective_jobs(jobs: int) -> int:
    if jobs is None or jobs == 0:
        return 1
    if jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + jobs)
    return jobs


@contextlib.contextmanager
def backend(scheduler: str | None = None) -> Iterator[None]:
    """Run the parallel work inside the block on the Dask scheduler at ``scheduler``
    (``tcp://host:8786`` or a ``Client``-accepted address); None keeps local joblib.

    Needs ``pip install 'treecert[dask]'``; the client is closed (the cluster is not) when
    the block ends.
    """
    if scheduler is None:
        yield
        return
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError(
            "--scheduler needs Dask distributed, which is not installed.",
            "Install it with: pip install 'treecert[dask]'",
        ) from None
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {exc}.",
                          "Check the address (e.g. tcp://127.0.0.1:8786).") from None
    previous = _active["workers"], _active["client"]
    try:
        _active["workers"] = max(1, sum(client.nthreads().values()))
        _active["client"] = client
        yield
    finally:
        _active["workers"], _active["client"] = previous
        client.close()


@contextlib.contextmanager
def reporting(progress: Callable[[int], None] | None) -> Iterator[None]:
    """Call ``progress(rows)`` as each chunk of :func:`map_chunks` finishes."""
    previous = _active["progress"]
    _active["progress"] = progress
    try:
        yield
    finally:
        _active["progress"] = previous


def _workers(jobs: int) -> int:
    """How many workers a map may use: the cluster's threads, or ``--jobs``."""
    return _active["workers"] or effective_jobs(jobs)


def map_chunks(work: Callable[[int, int], T], n: int, jobs: int = 1) -> list[T]:
    """``[work(lo, hi) for each chunk]`` in order; chunks run in parallel processes when
    jobs > 1, on the Dask cluster inside :func:`backend`."""
    if n == 0:
        return []
    workers = _workers(jobs)
    progress = _active["progress"]
    if workers == 1:
        # Several pieces only to report progress; the concatenated result is the same.
        bounds = chunk_bounds(n, 100 if progress is not None else 1)
        out = []
        for lo, hi in bounds:
            out.append(work(lo, hi))
            if progress is not None:
                progress(hi - lo)
        return out
    # More, smaller pieces while a progress bar is shown, so that it moves.
    pieces = 4 * workers if progress is None else max(4 * workers, min(256, n // 20))
    bounds = chunk_bounds(n, pieces)
    out = []
    for (lo, hi), part in zip(bounds, run_calls(work, bounds, jobs), strict=True):
        out.append(part)
        if progress is not None:
            progress(hi - lo)
    return out


def _in_dask_worker() -> bool:
    """Whether this code runs inside a task on a Dask worker (then it must not submit
    more tasks and wait for them: with in-process workers that deadlocks)."""
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True


def run_calls(fn: Callable[..., T], args: Iterable[tuple], jobs: int = 1) -> Iterator[T]:
    """``fn(*a)`` for every ``a`` in ``args``, yielded in order as they finish in order:
    inline when one worker, else joblib processes or the Dask cluster (:func:`backend`)."""
    workers = _workers(jobs)
    if workers == 1 or (_active["client"] is not None and _in_dask_worker()):
        return (fn(*a) for a in args)  # nested inside a Dask task: run inline
    client = _active["client"]
    if client is not None:
        # Dask futures directly: waiting on them costs no CPU, whereas joblib's Dask
        # backend kept a core of this process busy polling (2x the CPU of the work).
        args = list(args)
        if not args:
            return iter(())
        futures = client.map(fn, *[list(col) for col in zip(*args, strict=True)], pure=False)
        return (future.result() for future in futures)
    from joblib import Parallel, delayed

    return iter(Parallel(n_jobs=workers, return_as="generator")(delayed(fn)(*a) for a in args))
