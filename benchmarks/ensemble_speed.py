"""BENCHMARKS.md table "ensembles": forest and calibrated_bagging against sk's forest.

CPU per tree of 10-fold CV with ``forest`` and ``calibrated_bagging`` against
scikit-learn's RandomForestClassifier, and peak memory.

    nice -n 5 python benchmarks/ensemble_speed.py            # the table (full mode)
    nice -n 5 python benchmarks/ensemble_speed.py --quick    # smoke size (TREECERT_QUICK=1)
    nice -n 5 python benchmarks/ensemble_speed.py --trees 20 --max-folds 2  # extrapolated
    nice -n 5 python benchmarks/ensemble_speed.py --synthetic-folds 3  # letter, shuttle: 3

Cases: ``credit-g`` (``tests/data/credit-g.arff`` and its fixed folds, 1000 × 20, 2
classes) and the synthetic ``letter`` (20 000 × 16 numeric, 26 classes) and ``shuttle``
(58 000 × 9 numeric, 7 classes) of :mod:`engine_scale`, with its seeded permutation folds.
Every (case, column) runs in a fresh process: ``fit`` on nine folds and ``predict`` on the
tenth for each fold, the same number of trees for every column (``--trees``, default 100),
scikit-learn with ``n_jobs=1``, ``criterion="entropy"`` and nominal attributes one-hot coded
(missing values as 0). CPU is ``time.process_time`` of the folds (not the imports or the
data loading), divided by folds × trees; ``--max-folds k`` runs k folds and scales the
total (marked ``*``; ``--synthetic-folds k``: on letter and shuttle only). Peak memory is
the process's ``ru_maxrss``.

Output: a markdown table on stdout and ``benchmarks/results/ensemble_speed.csv``. Quick mode
runs credit-g with 5 trees on 2 folds and writes the CSV to a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

CASES = ("credit-g", "letter", "shuttle")
COLUMNS = ("forest", "calibrated_bagging", "sk_rf")
OUT_CSV = REPO / "benchmarks" / "results" / "ensemble_speed.csv"


def load_case(case: str):
    """(Dataset, fold id per row)."""
    if case == "credit-g":
        from treecert.data.folds import read_fold_ids
        from treecert.data.loading import load_dataset

        data = load_dataset(REPO / "tests" / "data" / "credit-g.arff")
        path = REPO / "tests" / "data" / "credit-g.folds.csv"
        return data, np.asarray(read_fold_ids(path.read_text(), data.n_samples, str(path)))
    from engine_scale import fold_ids, synthetic

    data = synthetic(case)
    return data, fold_ids(data.n_samples)


def one_hot(data) -> np.ndarray:
    """scikit-learn's input: numeric columns as they are (missing as 0), nominal one-hot."""
    cols = []
    for j, attr in enumerate(data.schema.attributes):
        x = data.X[:, j]
        if attr.kind == "nominal":
            codes = np.where(np.isnan(x), -1, x).astype(int)
            cols.append((codes[:, None] == np.arange(len(attr.values))[None, :]).astype(float))
        else:
            cols.append(np.nan_to_num(x)[:, None])
    return np.hstack(cols)


def run_one(case: str, column: str, trees: int, max_folds: int | None) -> dict:
    """Time one column's CV on one case in this process."""
    data, fold = load_case(case)
    folds = sorted(set(fold.tolist()))
    chosen = folds if max_folds is None else folds[:max_folds]
    if column == "sk_rf":
        from sklearn.ensemble import RandomForestClassifier

        X = one_hot(data)
    else:
        from treecert.methods import make_method
    cpu = 0.0
    for f in chosen:
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        t0 = time.process_time()
        if column == "sk_rf":
            rf = RandomForestClassifier(n_estimators=trees, criterion="entropy", n_jobs=1,
                                        random_state=0)
            rf.fit(X[train], data.y[train])
            rf.predict_proba(X[test])
        else:
            m = make_method(f"{column}:trees={trees}").fit(data.subset(train))
            m.predict(data.subset(test))
        cpu += time.process_time() - t0
    total = cpu * len(folds) / len(chosen)
    return {"case": case, "column": column, "trees": trees, "folds": len(folds),
            "folds_run": len(chosen), "cpu_s": round(total, 2),
            "ms_per_tree": round(1000 * total / (len(folds) * trees), 2),
            "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def table(rows: list[dict]) -> str:
    lines = ["| case | column | trees | CPU s (10-fold CV) | ms per tree | × sk_rf per tree "
             "| peak MiB |", "|---|---|---:|---:|---:|---:|---:|"]
    sk = {r["case"]: r["ms_per_tree"] for r in rows if r["column"] == "sk_rf"}
    for r in rows:
        mark = "*" if r["folds_run"] < r["folds"] else ""
        ratio = f"{r['ms_per_tree'] / sk[r['case']]:.1f}" if sk.get(r["case"]) else "—"
        lines.append(f"| {r['case']} | {r['column']} | {r['trees']} | {r['cpu_s']}{mark} | "
                     f"{r['ms_per_tree']} | {ratio} | {r['peak_mib']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="credit-g, 5 trees, 2 folds.")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    ap.add_argument("--columns", nargs="+", default=list(COLUMNS), choices=COLUMNS)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--max-folds", type=int, default=None)
    ap.add_argument("--synthetic-folds", type=int, default=None,
                    help="folds run on letter and shuttle (default: --max-folds)")
    ap.add_argument("--one", nargs=2, metavar=("CASE", "COLUMN"), help=argparse.SUPPRESS)
    ap.add_argument("--csv", default=None, help="default: benchmarks/results/ensemble_speed.csv "
                    "(quick: a temporary directory)")
    args = ap.parse_args(argv)
    quick_run = args.quick or os.environ.get("TREECERT_QUICK") == "1"
    if quick_run:
        args.cases, args.trees, args.max_folds = ["credit-g"], 5, 2
    if args.one:
        print(json.dumps(run_one(args.one[0], args.one[1], args.trees, args.max_folds)))
        return 0
    rows = []
    load_start = os.getloadavg()[0]
    for case in args.cases:
        for column in args.columns:
            cmd = [sys.executable, __file__, "--one", case, column, "--trees", str(args.trees)]
            folds = args.max_folds
            if case != "credit-g" and args.synthetic_folds is not None:
                folds = args.synthetic_folds
            if folds is not None:
                cmd += ["--max-folds", str(folds)]
            print("$", " ".join(cmd[1:]), file=sys.stderr, flush=True)
            out = subprocess.run(cmd, check=True, capture_output=True, text=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(" ", rows[-1], file=sys.stderr, flush=True)
    if not rows:
        return 1
    if args.csv is None:
        args.csv = OUT_CSV if not quick_run else (
            Path(tempfile.mkdtemp(prefix="treecert-ensemble-speed-")) / "ensemble_speed.csv")
    Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
    keys = list(rows[0])
    Path(args.csv).write_text("\n".join([",".join(keys)] + [
        ",".join(str(r[k]) for k in keys) for r in rows]) + "\n")
    print(f"Load: {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end "
          "(1-minute averages).\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
