"""Where work is fanned out: local processes (joblib) or a Dask cluster, results in order.

Every parallel loop in treecert goes through :func:`map_chunks` (per-instance work of the
transductive methods) or :func:`run_unordered` (evaluate's (fold, method) units, slowest
first, results as they finish). Chunks are contiguous and results are put back in input
order, so the output is identical for any number of workers and any backend.

:func:`backend` switches both to a Dask distributed cluster (``--scheduler ADDRESS``): the
work function is scattered to every worker once and the calls are submitted as Dask futures
(:func:`run_unordered` says why, and how a killed worker's calls are rerun);
:func:`reporting` installs a callback told how many rows each finished chunk held, for
progress bars.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from treecert.errors import ConfigError

T = TypeVar("T")

#: The active backend: ``workers`` is the Dask cluster's worker count (0 = local joblib);
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


def shard_tag(index: int, count: int, n: int) -> str:
    """What a ``predict --shard`` part says it is: shard ``index`` of ``count`` of an input of
    ``n`` rows. A CSV part's first column is named ``row (shard I/N of T rows)`` instead of
    ``row`` and an ARFF part opens with the comment ``% treecert predict --shard I/N of T
    rows``; ``treecert merge`` reads the tags (so a missing, repeated or last part is named)
    and writes neither, so the merged file is the unsharded run's, byte for byte."""
    return f"shard {index}/{count} of {n} rows"


_TAG = re.compile(r"shard (\d+)/(\d+) of (\d+) rows")


def parse_shard_tag(text: str) -> tuple[int, int, int] | None:
    """(index, count, n) of a :func:`shard_tag`, or None if ``text`` is none."""
    match = _TAG.fullmatch(text)
    if match is None:
        return None
    index, count, n = map(int, match.groups())
    return (index, count, n) if 0 <= index < count else None


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
        # One task at a time per worker (:data:`_TASK_LOCK`), however many threads it has.
        _active["workers"] = max(1, len(client.nthreads()))
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
    if workers == 1 and _active["client"] is None:
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
    more tasks and wait for them: with in-process workers that deadlocks; it runs its parts
    inline). Outside, inside :func:`backend`, all work goes to the cluster, even with one
    worker: the client may be a login node."""
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True


#: One treecert task at a time per worker process: the methods' engines are shared within
#: a process (:meth:`BatchEngine.shared`, and the scattered work object) and are not
#: thread-safe; a worker's extra threads would only contend for the GIL anyway.
_TASK_LOCK = threading.Lock()
#: Whether :func:`_tune_malloc` has run in this process.
_MALLOC_TUNED = [False]

#: glibc's ``mallopt`` parameters and the values its dynamic thresholds settle at on 64-bit
#: Linux (``mallopt(3)``: the mmap threshold rises to at most 32 MiB, trim is twice it).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_BYTES = 32 * 2**20


def _tune_malloc() -> None:
    """Undo the Dask nanny's ``MALLOC_TRIM_THRESHOLD_=65536`` in this worker process.

    The nanny sets it (``distributed.nanny.pre-spawn-environ``) so that workers hand freed
    memory back to the OS; but setting it also turns off glibc's dynamic mmap threshold, so
    every numpy temporary over 128 KiB is mmap'ed, faulted in page by page and unmapped
    again. The transductive engines allocate such temporaries at a high rate: a 2-worker
    cluster spent 3 s of system time per 9 s of work (a local process 0.6-1.2 s), which is
    most of the "2 Dask workers at 0.90x one process" of BENCHMARKS.md, Scale-out. The
    values set are the ones glibc's dynamic thresholds settle at without the variable.
    Only where the variable is set, and only with glibc (elsewhere it has no effect).
    """
    if _MALLOC_TUNED[0]:
        return
    _MALLOC_TUNED[0] = True
    if "MALLOC_TRIM_THRESHOLD_" in os.environ:
        set_malloc_thresholds(_MMAP_BYTES, 2 * _MMAP_BYTES)


def set_malloc_thresholds(mmap_bytes: int, trim_bytes: int) -> bool:
    """glibc's ``mallopt``: allocations over ``mmap_bytes`` are mmap'ed, freed heap memory
    beyond ``trim_bytes`` is handed back; returns whether glibc took both. The one home of
    this tuning (Dask workers above; every command of the command line, at its entry
    point). Nothing happens off Linux or with another C library (e.g. musl), whose
    allocator has no such parameters."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, mmap_bytes)) & bool(
        mallopt(_M_TRIM_THRESHOLD, trim_bytes))


#: threadpoolctl's controller of the BLAS libraries numpy loaded (found once a process).
_BLAS: list = []


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run a matrix product on one BLAS thread. OpenBLAS spreads a product over every core
    and its helper threads then spin ~0.1 s waiting for more: on letter-shaped data, one
    (rows x vectors) product per Venn chunk made the second core spin ~30 % of the
    library's CPU time, beside no faster a product. The CLI starts numpy with one thread
    (``OPENBLAS_NUM_THREADS``); a notebook user's numpy has one per core."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    with _BLAS[0].limit(limits=1, user_api="blas"):
        yield


def _dask_task(fn: Callable[..., T], index: int, *args) -> tuple[int, T]:
    """What a Dask worker runs for call ``index``: ``fn(*args)``, one at a time per process
    (:data:`_TASK_LOCK`), with the allocator tuned (:func:`_tune_malloc`)."""
    with _TASK_LOCK:
        _tune_malloc()
        return index, fn(*args)


def _indexed(fn: Callable[..., T], index: int, *args) -> tuple[int, T]:
    return index, fn(*args)


def run_unordered(fn: Callable[..., T], args: Iterable[tuple], jobs: int = 1
                  ) -> Iterator[tuple[int, T]]:
    """``(i, fn(*args[i]))`` for every call, yielded as the calls finish.

    Calls start in the order given (put the slowest first, so that no long call starts
    last while the other workers idle): inline when one worker, else in joblib processes or
    on the Dask cluster (:func:`backend`). On Dask, ``fn`` (with whatever it closes over:
    the training data, the method) is scattered to every worker once instead of being sent
    with every task; each task carries only its index and ``args``. A call whose worker dies
    is run again on another (Dask's own rescheduling, up to
    ``distributed.scheduler.allowed-failures`` times), and the copies of ``fn`` on the other
    workers keep it available; should every copy die, the scheduler forgets the calls that
    need it instead, and they are submitted again with ``fn`` scattered anew.
    """
    args = list(args)
    if not args:
        return iter(())
    if _active["client"] is not None and not _in_dask_worker():
        return _dask_unordered(_active["client"], fn, args)
    if _workers(jobs) == 1 or len(args) <= 1 or _active["client"] is not None:
        return ((i, fn(*a)) for i, a in enumerate(args))  # (or nested in a Dask task)
    from joblib import Parallel, delayed

    return iter(Parallel(n_jobs=_workers(jobs), return_as="generator_unordered")(
        delayed(_indexed)(fn, i, *a) for i, a in enumerate(args)))


def _dask_unordered(client, fn, args):
    from distributed import CancelledError, as_completed

    # Waiting on Dask futures costs no CPU, whereas joblib's Dask backend kept a core of
    # this process busy polling (2x the CPU of the work).
    n = len(args)
    shared = [client.scatter(fn, broadcast=True, hash=False)]  # the latest copy last
    held = list(shared)  # every future of this run, cancelled at its end
    index: dict = {}

    def submit(i: int):
        future = client.submit(_dask_task, shared[-1], i, *args[i], pure=False,
                               priority=n - i)
        index[future.key] = i, len(shared)  # and the copy of fn it needs
        held.append(future)
        return future

    queue = as_completed([submit(i) for i in range(n)], loop=client.loop)
    again = 0
    try:
        for future in queue:
            try:
                result = future.result()
            except CancelledError:
                # The scheduler forgets a task whose inputs died with every worker holding
                # them — the scattered fn, if its last copy's worker was killed — rather
                # than rerun it: scatter fn again (once for the calls that needed that
                # copy) and submit the call again (at most n times in all).
                again += 1
                if again > n:
                    raise
                i, copy = index[future.key]
                if copy == len(shared):
                    shared.append(client.scatter(fn, broadcast=True, hash=False))
                    held.append(shared[-1])
                queue.add(submit(i))
                continue
            yield result
    finally:
        client.cancel(held)


def run_calls(fn: Callable[..., T], args: Iterable[tuple], jobs: int = 1) -> Iterator[T]:
    """``fn(*a)`` for every ``a`` in ``args``, yielded in input order (each as soon as it and
    every call before it have finished); where they run: :func:`run_unordered`."""
    done: dict[int, T] = {}
    following = 0
    for i, result in run_unordered(fn, args, jobs):
        done[i] = result
        while following in done:
            yield done.pop(following)
            following += 1
