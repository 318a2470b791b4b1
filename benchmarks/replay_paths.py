"""Replay the exact batched paths of one TPCE 10-fold CV: a steady figure for small changes.

Run from the repository root (needs ../shared/datasets)::

    python benchmarks/replay_paths.py vote 7        # min CPU seconds of 7 replays

The whole CV's CPU time moves by ±10-20 % on a shared machine, more than a change to the
engine's inner loops. This script runs the CV once (``engine_hard_cases``' case, fit and
predict of every fold), records every call of
:func:`~treecert.transductive.exact_paths.reach_leaves` the batched engine makes, and then
replays those calls ``REPS`` times, printing the least CPU time of one replay. With
``REPS`` = 0 it only records, so the instructions of one replay are found by counting both
under valgrind (deterministic, unlike time; about 50x slower)::

    for r in 0 2; do PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/replay_paths.py vote $r 2>&1 | grep Collected; done
    # instructions of one replay: (second - first) / 2
"""

from __future__ import annotations

import sys
import time

import engine_hard_cases as hard

from treecert.transductive import batch_engine, exact_paths


def main(case: str, reps: int) -> None:
    calls = []

    def recording(*args, **kwargs):
        calls.append((args, kwargs))
        return exact_paths.reach_leaves(*args, **kwargs)

    batch_engine.reach_leaves = recording
    data, ids = hard._case_data(case)
    hard._cv_seconds(data, ids, f"tpce:criterion={hard.CASES[case][1]}")
    batch_engine.reach_leaves = exact_paths.reach_leaves
    best = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        for args, kwargs in calls:
            exact_paths.reach_leaves(*args, **kwargs)
        best = min(best, time.process_time() - t0)
    print(f"{case}: {len(calls)} calls, least CPU seconds of {reps} replays: {best:.4f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7)
