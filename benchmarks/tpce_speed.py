"""BENCHMARKS.md table "tpce_speed": TPCE against the naive engine and a scikit-learn loop.

    python benchmarks/tpce_speed.py --sample 40      # the page's table
    python benchmarks/tpce_speed.py --quick          # diabetes 10-fold, 10 sampled rows

What is timed on ``tests/data`` (in-process CPU time, ``time.process_time``, one run each;
every engine is single-threaded):

* ``fast``: treecert's TPCE with the default engine
  (:mod:`treecert.transductive.batch_engine`) over *every* test row of the protocol
  (10-fold CV with the fixed folds files, or leave-one-out through the LOO fast path),
  fit and predict;
* ``path``: ``engine=path`` (x's path grown one (x, c) at a time), on ``--sample`` test
  rows, scaled to all rows;
* ``naive``: ``engine=naive`` (a whole tree per label per row), on the same sample, scaled;
* ``sklearn``: what a user would write with scikit-learn: refit
  ``DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2)`` on the training data
  plus the row for each label (nominal attributes one-hot, missing values imputed), on the
  same sample, scaled.

The fast, path and naive engines are checked to give identical probabilities (bit for bit)
on the sample. A second table shows how the cost per row grows with n on synthetic data.
``--csv PATH`` also writes the first table's rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from run import add_quick, quick

from treecert.data.folds import read_fold_ids
from treecert.data.loading import load_dataset
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.methods import make_method

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def _sklearn_matrix(data: Dataset) -> np.ndarray:
    cols = []
    for j, attr in enumerate(data.schema.attributes):
        col = data.X[:, j]
        if attr.is_nominal:
            codes = np.nan_to_num(col, nan=-1).astype(int)
            cols.append(np.eye(len(attr.values) + 1)[codes + 1][:, 1:])
        else:
            fill = np.nanmean(col) if np.isfinite(col).any() else 0.0
            cols.append(np.where(np.isnan(col), fill, col)[:, None])
    return np.hstack(cols)


def sklearn_tpce_seconds(train: Dataset, test: Dataset) -> float:
    """Seconds for the refit-per-label loop on all rows of ``test``."""
    from sklearn.tree import DecisionTreeClassifier

    both = Dataset(train.schema, np.vstack([train.X, test.X]),
                   np.r_[train.y, test.y], np.r_[train.weights, test.weights])
    M = _sklearn_matrix(both)
    Xtr, Xte = M[: train.n_samples], M[train.n_samples:]
    K = train.schema.n_classes
    t0 = time.process_time()
    for i in range(Xte.shape[0]):
        X_aug = np.vstack([Xtr, Xte[i : i + 1]])
        for c in range(K):
            clf = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2)
            clf.fit(X_aug, np.r_[train.y, c])
            clf.predict_proba(Xte[i : i + 1])
    return time.process_time() - t0


def _time(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def fast_seconds_in(code: str, name: str) -> float:
    """CPU seconds of the fast engine's 10-fold TPCE on ``name`` with the treecert of the
    directory ``code`` (e.g. ``git archive <commit> | tar -x -C code``), in a fresh
    process: the before of a before/after pair measured in one run."""
    import subprocess

    snippet = (
        "import sys, time; sys.path.insert(0, '.')\n"
        "from treecert.data.folds import read_fold_ids\n"
        "from treecert.data.loading import load_dataset\n"
        "from treecert.methods import make_method\n"
        f"d = load_dataset('{DATA / name}.arff')\n"
        f"ids = read_fold_ids(open('{DATA / name}.folds.csv').read(), d.n_samples, '{name}')\n"
        "t0 = time.process_time()\n"
        "for f in range(10):\n"
        "    make_method('tpce').fit(d.subset(ids != f)).predict(d.subset(ids == f))\n"
        "print(time.process_time() - t0)\n")
    out = subprocess.run([sys.executable, "-c", snippet], cwd=code, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.split()[-1])


def cv_row(name: str, sample: int, engines: tuple[str, ...] = ("path", "naive")) -> dict:
    data = load_dataset(DATA / f"{name}.arff")
    ids = read_fold_ids((DATA / f"{name}.folds.csv").read_text(), data.n_samples, name)
    fast_s = path_s = naive_s = sk_s = 0.0
    n_sampled = 0
    per_fold = max(1, sample // 10)
    for f in range(10):
        train, test = data.subset(ids != f), data.subset(ids == f)
        t0 = time.process_time()
        p_fast = make_method("tpce").fit(train).predict(test).proba
        fast_s += time.process_time() - t0
        sub = test.subset(np.arange(min(per_fold, test.n_samples)))
        for engine in engines:
            t0 = time.process_time()
            p_other = make_method(f"tpce:engine={engine}").fit(train).predict(sub).proba
            if engine == "path":
                path_s += time.process_time() - t0
            else:
                naive_s += time.process_time() - t0
            np.testing.assert_array_equal(p_fast[: sub.n_samples], p_other)
        sk_s += sklearn_tpce_seconds(train, sub)
        n_sampled += sub.n_samples
    scale = data.n_samples / n_sampled
    return {"dataset": name, "protocol": "10-fold", "n": data.n_samples,
            "fast_s": fast_s, "path_s": path_s * scale, "naive_s": naive_s * scale,
            "sklearn_s": sk_s * scale, "sampled": n_sampled}


def loo_row(name: str, sample: int) -> dict:
    data = load_dataset(DATA / f"{name}.arff")
    n = data.n_samples
    t0 = time.process_time()
    p_fast = make_method("tpce").fit(data).predict_loo(np.arange(n)).proba
    fast_s = time.process_time() - t0
    rows = np.linspace(0, n - 1, sample).astype(int)
    t0 = time.process_time()
    p_path = make_method("tpce:engine=path").fit(data).predict_loo(rows).proba
    path_s = time.process_time() - t0
    np.testing.assert_array_equal(p_fast[rows], p_path)
    naive_s = sk_s = 0.0
    for i in rows:
        keep = np.delete(np.arange(n), i)
        train, test = data.subset(keep), data.subset(np.array([i]))
        t0 = time.process_time()
        p_naive = make_method("tpce:engine=naive").fit(train).predict(test).proba
        naive_s += time.process_time() - t0
        np.testing.assert_array_equal(p_fast[i : i + 1], p_naive)
        sk_s += sklearn_tpce_seconds(train, test)
    scale = n / rows.size
    return {"dataset": name, "protocol": "LOO", "n": n, "fast_s": fast_s,
            "path_s": path_s * scale, "naive_s": naive_s * scale,
            "sklearn_s": sk_s * scale, "sampled": rows.size}


def synthetic(n: int, seed: int = 0) -> Dataset:
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 20)
    score = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.5 * X[:, 3] + 0.8 * rng.randn(n)
    schema = Schema(tuple(Attribute(f"a{j}", "numeric") for j in range(20)),
                    Attribute("class", "nominal", ("n", "p")))
    return Dataset(schema, X, (score > 0).astype(np.int64), np.ones(n))


def scaling_rows(sizes, n_test: int = 200, k: int = 3) -> list[dict]:
    """Per test instance: fast on ``n_test`` instances (fit included), naive and sklearn on
    ``k`` of them."""
    out = []
    for n in sizes:
        data = synthetic(n + n_test)
        train, test = data.subset(np.arange(n)), data.subset(np.arange(n, n + n_test))
        fast_s = _time(lambda train=train, test=test: make_method("tpce").fit(train).predict(
            test)) / n_test
        few = test.subset(np.arange(k))
        naive_s = _time(lambda train=train, few=few: make_method("tpce:engine=naive").fit(
            train).predict(few)) / k
        sk_s = sklearn_tpce_seconds(train, few) / k
        out.append({"n": n, "fast_ms": 1e3 * fast_s, "naive_ms": 1e3 * naive_s,
                    "sklearn_ms": 1e3 * sk_s})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=60)
    ap.add_argument("--datasets", default="credit-g,diabetes,segment-challenge")
    ap.add_argument("--sizes", default="1000,5000,20000")
    ap.add_argument("--csv", type=Path, help="also write the first table's rows here")
    ap.add_argument("--protocols", default="10-fold,LOO")
    ap.add_argument("--no-path", action="store_true", help="skip the path engine (10-fold)")
    ap.add_argument("--before", help="directory holding an earlier treecert: its fast "
                    "10-fold time too, in the same run (fresh process)")
    add_quick(ap)
    args = ap.parse_args()
    if quick(args):
        args.datasets, args.protocols, args.sample, args.sizes = "diabetes", "10-fold", 10, "500"
    if not [d for d in args.datasets.split(",") if d] and not args.sizes:
        sys.exit("tpce_speed.py: nothing to run (no --datasets and no --sizes)")
    rows = []
    for name in [d for d in args.datasets.split(",") if d]:
        if "10-fold" in args.protocols:
            rows.append(cv_row(name, args.sample,
                               ("naive",) if args.no_path else ("path", "naive")))
            if args.before:
                before = fast_seconds_in(args.before, name)
                print(f"{name} 10-fold fast: before {before:.2f} s, after "
                      f"{rows[-1]['fast_s']:.2f} s ({before / rows[-1]['fast_s']:.2f}x)",
                      file=sys.stderr, flush=True)
        if "LOO" in args.protocols:
            rows.append(loo_row(name, max(10, args.sample // 2)))
    print("| dataset | protocol | n | fast (s) | path (s, est.) | naive (s, est.) |"
          " sklearn refit (s, est.) | naive/fast | sklearn/fast | path/fast |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['dataset']} | {r['protocol']} | {r['n']} | {r['fast_s']:.2f} | "
              f"{r['path_s']:.1f} | {r['naive_s']:.1f} | {r['sklearn_s']:.1f} | "
              f"{r['naive_s'] / r['fast_s']:.1f}x | {r['sklearn_s'] / r['fast_s']:.1f}x | "
              + (f"{r['path_s'] / r['fast_s']:.1f}x |" if r["path_s"] else "– |"), flush=True)
    print()
    print("| n (synthetic, 20 numeric, 2 classes) | fast ms/instance | naive ms/instance |"
          " sklearn ms/instance | naive/fast | sklearn/fast |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in scaling_rows([int(s) for s in args.sizes.split(",") if s]):
        print(f"| {r['n']} | {r['fast_ms']:.2f} | {r['naive_ms']:.0f} | {r['sklearn_ms']:.0f} |"
              f" {r['naive_ms'] / r['fast_ms']:.0f}x | {r['sklearn_ms'] / r['fast_ms']:.0f}x |",
              flush=True)
    if args.csv and rows:
        import csv

        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with args.csv.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
