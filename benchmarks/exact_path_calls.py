"""How many training-row entries one call of the exact batched paths should take
(``budget.CALL_ENTRIES``): TPCE's (or K&K's, ``--method kk``) 10-fold CV, one fit per fold
and every fold from one engine (``predict_held_out``), for several bounds, interleaved in
one process.

Run from the repository root::

    python benchmarks/exact_path_calls.py --case num1500 --bounds 22,20,18 --repeats 2
    python benchmarks/exact_path_calls.py --case credit-g-blank2 --bounds 22,20 --repeats 3
    python benchmarks/exact_path_calls.py --case vote --method kk --bounds 20 --repeats 3

``numN``: N rows, 10 numeric columns (two decimals), 3 classes, 5 % of the values unknown,
fold ids row mod 10 (no ``../shared`` needed); other cases are
:data:`engine_hard_cases.CASES` (``../shared/datasets``). Prints the least and median CPU
seconds per (bound, mode). A bound changes the calls' sizes only, never a result.
"""

from __future__ import annotations

import argparse
import time

import engine_hard_cases as hard
import numpy as np

from treecert.data.schema import Attribute, Dataset, Schema
from treecert.methods import make_method
from treecert.transductive import budget, engine_registry


def numeric_case(n: int, seed: int = 0) -> tuple[Dataset, np.ndarray]:
    """N rows of 10 numeric columns, 3 classes, 5 % unknown values; fold ids row mod 10."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 10)).round(2)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=n) > 0).astype(np.int64)
    y += X[:, 3] > 1
    X[rng.random(X.shape) < 0.05] = np.nan
    schema = Schema(tuple(Attribute(f"a{j}", "numeric") for j in range(10)),
                    Attribute("class", "nominal", ("a", "b", "c")))
    return Dataset(schema, X, y, np.ones(n)), np.arange(n) % 10


def _seconds(data: Dataset, ids: np.ndarray, spec: str, mode: str) -> float:
    engine_registry._SHARED.clear()  # every measurement builds its engines
    if mode == "one fit per fold":
        return hard._cv_seconds(data, ids, spec)
    folds = [np.flatnonzero(ids == f) for f in range(10)]
    t0 = time.process_time()
    make_method(spec).fit(data).predict_held_out(folds)
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="num1500")
    ap.add_argument("--bounds", default="22,20,18", help="log2 of CALL_ENTRIES, comma-separated")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--method", default="tpce", choices=["tpce", "kk"])
    args = ap.parse_args()
    if args.case.startswith("num"):
        (data, ids), spec = numeric_case(int(args.case[3:])), args.method
    else:
        data, ids = hard._case_data(args.case)
        spec = f"{args.method}:criterion={hard.CASES[args.case][1]}"
    bounds = [int(b) for b in args.bounds.split(",")]
    times: dict[tuple[int, str], list[float]] = {}
    for _ in range(args.repeats):
        for b in bounds:
            budget.CALL_ENTRIES = 1 << b
            for mode in ("one fit per fold", "one engine"):
                times.setdefault((b, mode), []).append(_seconds(data, ids, spec, mode))
    print(f"| {args.case}, {args.method}: CALL_ENTRIES | mode | CPU s, min | median |")
    print("|---|---|---:|---:|")
    for (b, mode), t in times.items():
        print(f"| 2^{b} | {mode} | {min(t):.3f} | {float(np.median(t)):.3f} |")


if __name__ == "__main__":
    main()
