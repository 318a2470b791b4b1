"""BENCHMARKS.md table "explain": the CPU cost of ``predict --explain``.

    python benchmarks/explain_overhead.py --rows 200000 --repeat 3   # the page's table
    python benchmarks/explain_overhead.py --quick                    # 2,000 rows, 20 for tpce

Data: credit-g of ``sample_data`` (1000 rows, 20 attributes) tiled to ``--rows`` rows with
5 % of the values set missing (so that rows reach several leaves and paths carry ``(?)``).
The model is the unpruned credit-g Laplace tree. Each figure is the minimum over
``--repeat`` runs of ``time.process_time`` around the library calls ``predict_with`` (the
part ``--explain`` changes; reading and writing files are the same with and without it),
in chunks of 50,000 rows as the command line scores them. ``tpce`` and ``kk`` score the
first ``--transductive-rows`` tiled rows, ``venn`` a fifth of them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from run import add_quick, quick

from treecert import api
from treecert.data.loading import load_dataset
from treecert.data.schema import Dataset

DATA = Path(__file__).resolve().parents[1] / "sample_data" / "credit-g.arff"


def tiled(data: Dataset, rows: int, seed: int = 1) -> Dataset:
    idx = np.arange(rows) % data.n_samples
    X = data.X[idx].copy()
    X[np.random.RandomState(seed).random_sample(X.shape) < 0.05] = np.nan
    return Dataset(data.schema, X, data.y[idx], np.ones(rows), source="tiled")


def cpu(model, data: Dataset, method: str, explain: bool, repeat: int) -> float:
    runner = api.predictor(model, method=method, explain=explain)
    best = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        for lo in range(0, data.n_samples, 50_000):
            api.predict_with(runner, model, data.subset(np.arange(lo, min(lo + 50_000,
                                                                          data.n_samples))))
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--transductive-rows", type=int, default=1000)
    add_quick(ap)
    args = ap.parse_args()
    if quick(args):
        args.rows, args.repeat, args.transductive_rows = 2000, 1, 20
    if args.rows < 1 or args.repeat < 1:
        sys.exit("explain_overhead.py: nothing to run (--rows and --repeat must be >= 1)")
    train = load_dataset(DATA)
    model = api.train(train, leaf="laplace")
    big = tiled(train, args.rows)
    print("| method | rows | CPU s | CPU s with --explain | ratio |")
    print("|---|---:|---:|---:|---:|")
    few = args.transductive_rows
    for method, data in [("laplace", big), ("tpce", big.subset(np.arange(few))),
                         ("kk", big.subset(np.arange(few))),
                         ("venn", big.subset(np.arange(few // 5)))]:
        plain = cpu(model, data, method, False, args.repeat)
        explained = cpu(model, data, method, True, args.repeat)
        print(f"| {method} | {data.n_samples} | {plain:.2f} | {explained:.2f} | "
              f"{explained / plain:.2f} |", flush=True)


if __name__ == "__main__":
    main()
