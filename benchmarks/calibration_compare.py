"""docs/calibration.md tables: the calibration papers' comparisons, and Venn's speed.

Run from the repository root (``--quick``: one or two small datasets, one repeat, results
in a temporary directory instead of ``benchmarks/results``)::

    python benchmarks/calibration_compare.py lindsay-cox   # Table 1 of Lindsay & Cox
    python benchmarks/calibration_compare.py eb            # EB paper's before/after tables
    python benchmarks/calibration_compare.py speed         # Venn vs a plain tree, credit-g
    python benchmarks/calibration_compare.py lindsay-cox --resume   # run only what is missing
    python benchmarks/calibration_compare.py eb --from-csv # tables from the recorded CSV only

Every run is ``treecert.evaluation.experiment.evaluate`` (what ``treecert evaluate`` runs) with the
``tests/data/NAME.folds.csv`` folds. Times are **CPU seconds of this process**
(``time.process_time``) for the whole 10-fold run of one method — fit and predict — so
other load on the machine does not distort the ratios. Results go to
``benchmarks/results/calibration_*.csv``; the markdown tables to stdout.

* ``lindsay-cox [--min-leaf M]``: tree with frequency leaves (the paper's C4.5), Laplace
  leaves, binning and the Venn machine on it; Naive Bayes, binned and Venn Naive Bayes.
  Metrics: error, ERC deviation with MDL bins (``--bins mdl``, as the paper's ERC) and with
  10 equal-width bins, AUC, Brier, log-loss, time; the summary is the paper's Table 1, the
  mean over datasets of the percentage change from the base learner.
* ``eb``: binary datasets, rpart-like trees (Gini, ``min_leaf`` 7 ≈ rpart's minbucket) at
  several ``cp``: frequency leaves (before) against ``empirical_bayes:interval=paper``
  (after), with the interval-valued metrics (exact, and the paper code's endpoint AUC).
* ``speed``: CPU time of 10-fold CV on credit-g: plain tree, the Venn machine (both
  taxonomies) with the batched engine and, on a sample of test rows scaled to all, with the
  engine one (x, j) at a time (``engine=naive``), and Venn Naive Bayes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from run import add_quick, quick

from treecert.data.folds import read_fold_ids
from treecert.data.loading import load_dataset
from treecert.evaluation.experiment import Protocol, evaluate
from treecert.methods import make_method

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
RESULTS = ROOT / "benchmarks" / "results"

# soybean is left out: with missing values the tree Venn machine falls back to the engine
# one (x, j) at a time, 12.8 CPU-seconds per test row with 19 classes (~2.4 hours).
LC_DATASETS = ("breast-cancer", "credit-g", "diabetes", "glass", "ionosphere", "iris",
               "labor", "segment-challenge", "unbalanced", "vote", "wdbc", "wine")
LC_METHODS = {  # label -> (spec, base label)
    "C4.5 (frequency)": ("frequency", None),
    "C4.5 Laplace": ("laplace", "C4.5 (frequency)"),
    "Binned C4.5": ("binning", "C4.5 (frequency)"),
    "VPM C4.5": ("venn", "C4.5 (frequency)"),
    "Naive Bayes": ("naive_bayes", None),
    "Binned Naive Bayes": ("binning:base=naive_bayes", "Naive Bayes"),
    "VPM Naive Bayes": ("venn:base=naive_bayes", "Naive Bayes"),
}
EB_DATASETS = ("breast-cancer", "credit-g", "diabetes", "ionosphere", "labor", "unbalanced",
               "vote", "wdbc")
EB_CPS = (0.0, 0.001, 0.005, 0.01, 0.05)
#: The paper's "pruned" trees: grown at cp = 0, pruned at the cp of minimal 10-fold
#: cross-validated error (rpart's cptable, no 1-SE rule).
EB_PRUNED = "prune=ccp,cv=10"
EB_TREES = (*(f"cp={cp:g}" for cp in EB_CPS), "pruned")


def _protocol(name: str, data) -> Protocol:
    folds = DATA / f"{name}.folds.csv"
    ids = read_fold_ids(folds.read_text(), data.n_samples, str(folds))
    return Protocol(kind="folds", fold_ids=ids)


def _run(data, name: str, spec: str, tree_params: dict | None = None, **kw) -> dict:
    from treecert.evaluation.reliability import erc_deviation

    t0 = time.process_time()
    res = evaluate(data, [spec], protocol=_protocol(name, data), tree_params=tree_params,
                   dataset_name=name, **kw)
    cpu = time.process_time() - t0
    row = res.metrics.iloc[0].to_dict()
    row["cpu_seconds"] = cpu
    pred = res.predictions
    proba = pred[[f"p_{c}" for c in data.schema.classes]].to_numpy()
    y = data.y[pred["row"].to_numpy()]
    row["erc_equal_width"] = erc_deviation(y, proba)  # the 10-bin ERC, for comparison
    return row


def _lc_path(min_leaf: float) -> Path:
    suffix = "" if min_leaf == 2 else f"_min_leaf{min_leaf:g}"
    return RESULTS / f"calibration_lindsay_cox{suffix}.csv"


def lindsay_cox(datasets, min_leaf: float, resume: bool = False) -> None:
    """Run the Lindsay & Cox comparison on ``datasets``; with ``resume``, keep the rows of
    datasets already complete in the CSV (all learners present) and run only the others."""
    path = _lc_path(min_leaf)
    rows: list[dict] = []
    if resume and path.exists():
        old = pd.read_csv(path)
        have = old.groupby("dataset")["learner"].nunique()
        done = set(have[have == len(LC_METHODS)].index)
        rows = old[old.dataset.isin(done)].drop(columns="error").to_dict("records")
        datasets = [d for d in datasets if d not in done]
        print(f"resume: {len(done)} datasets already in {path.name}; running "
              f"{', '.join(datasets) or 'none'}", file=sys.stderr, flush=True)
    frame = pd.DataFrame(rows)
    for name in datasets:
        data = load_dataset(DATA / f"{name}.arff")
        for label, (spec, _) in LC_METHODS.items():
            r = _run(data, name, spec, tree_params={"min_leaf": min_leaf}, bins="mdl")
            r["learner"] = label
            rows.append(r)
            print(f"{name:18s} {label:20s} acc {r['accuracy']:.4f} erc {r['erc_deviation']:.4f}"
                  f" cpu {r['cpu_seconds']:.2f}s", file=sys.stderr, flush=True)
        frame = pd.DataFrame(rows)  # written after every dataset: partial results survive
        frame["error"] = 1.0 - frame["accuracy"]
        RESULTS.mkdir(parents=True, exist_ok=True)
        frame.to_csv(path, index=False)
    if not frame.empty:
        frame["error"] = 1.0 - frame["accuracy"]
        print(lindsay_cox_tables(frame))


LC_METRICS = {"error": "Error", "erc_deviation": "ERC Dev", "erc_equal_width": "ERC (10 bins)",
              "auc": "ROC Area", "brier": "Sqr Loss", "log_loss": "Log Loss",
              "cpu_seconds": "Time"}


def _lc_changes(frame: pd.DataFrame, label: str, base: str, metric: str) -> pd.Series:
    """Per-dataset percentage change of ``metric`` from ``base`` to ``label``."""
    mine = frame[frame.learner == label].set_index("dataset")[metric]
    ref = frame[frame.learner == base].set_index("dataset")[metric]
    with np.errstate(divide="ignore", invalid="ignore"):
        change = 100.0 * (mine - ref) / ref
    return change.replace([np.inf, -np.inf], np.nan)


def lindsay_cox_tables(frame: pd.DataFrame) -> str:
    out = []
    for how in ("mean", "median"):
        title = ("Mean percentage change from the base learner" if how == "mean" else
                 "Median percentage change (a small base value cannot dominate it)")
        out += [f"{title} over {frame['dataset'].nunique()} datasets "
                "(Lindsay & Cox, Table 1 layout):", ""]
        out.append("| learner | " + " | ".join(LC_METRICS.values()) + " |")
        out.append("|---" * (len(LC_METRICS) + 1) + "|")
        for label, (_, base) in LC_METHODS.items():
            if base is None:
                continue
            cells = [f"{getattr(_lc_changes(frame, label, base, m), how)():+.1f}"
                     for m in LC_METRICS]
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        out.append("")
    out += ["Per dataset:", ""]
    cols = list(LC_METRICS)
    out.append("| dataset | learner | " + " | ".join(LC_METRICS[c] for c in cols) + " |")
    out.append("|---" * (len(cols) + 2) + "|")
    for r in frame.itertuples():
        out.append(f"| {r.dataset} | {r.learner} | " + " | ".join(
            f"{getattr(r, c):.4f}" if c != "cpu_seconds" else f"{r.cpu_seconds:.2f}"
            for c in cols) + " |")
    return "\n".join(out) + "\n"


def empirical_bayes(datasets, repeats: int) -> None:
    rows = []
    params = {"criterion": "gini", "min_leaf": 7.0}
    for name in datasets:
        data = load_dataset(DATA / f"{name}.arff")
        for tree in EB_TREES:
            cp = 0.0 if tree == "pruned" else float(tree[3:])
            prune = "," + EB_PRUNED if tree == "pruned" else ""
            for label, spec in (("before", "frequency:" + prune[1:]),
                                ("after", "empirical_bayes:interval=paper" + prune)):
                kw = {"interval_auc": "endpoints"} if label == "after" else {}
                t0 = time.process_time()
                res = evaluate(data, [spec.rstrip(":")],
                               protocol=Protocol(kind="cv", repeats=repeats),
                               tree_params={**params, "cp": cp}, dataset_name=name, **kw)
                r = res.metrics.iloc[0].to_dict()
                r.update(tree=tree, cp=cp, when=label, cpu_seconds=time.process_time() - t0)
                rows.append(r)
            print(f"{name:14s} {tree:9s} done", file=sys.stderr, flush=True)
    frame = pd.DataFrame(rows)
    RESULTS.mkdir(parents=True, exist_ok=True)
    frame.to_csv(RESULTS / "calibration_eb.csv", index=False)
    print(eb_tables(frame))


def eb_tables(frame: pd.DataFrame) -> str:
    if "tree" not in frame:  # a CSV recorded before the pruned column existed
        frame = frame.assign(tree=[f"cp={cp:g}" for cp in frame.cp])
    trees = [t for t in EB_TREES if t in set(frame.tree)]
    head = ["| dataset | " + " | ".join(trees) + " |", "|---" * (len(trees) + 1) + "|"]
    out = []
    specs = [("log_loss", "Log-loss"), ("brier_norm", "Brier score (mean (p - y)^2)"),
             ("auc", "AUC")]
    for metric, title in specs:
        out += [f"### {title}", "", *head]
        for name in frame["dataset"].unique():
            cells = []
            for tree in trees:
                sel = frame[(frame.dataset == name) & (frame.tree == tree)].set_index("when")
                b, a = sel.loc["before", metric], sel.loc["after", metric]
                if metric == "brier_norm":
                    lo, hi = sel.loc["after", "brier_low"] / 2, sel.loc["after", "brier_high"] / 2
                else:
                    lo, hi = sel.loc["after", f"{metric}_low"], sel.loc["after", f"{metric}_high"]
                cell = f"{b:.3f} → {a:.3f} [{lo:.3f}, {hi:.3f}]"
                if metric == "auc":
                    cell += (f" ⟨{sel.loc['after', 'auc_low_endpoints']:.3f}, "
                             f"{sel.loc['after', 'auc_high_endpoints']:.3f}⟩")
                cells.append(cell)
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
    leaves = frame[frame.when == "before"].pivot(index="dataset", columns="tree",
                                                 values="leaves")
    out += ["### Mean leaves per tree", "", *head]
    for name, r in leaves.iterrows():
        out.append(f"| {name} | " + " | ".join(f"{r[t]:.1f}" for t in trees) + " |")
    return "\n".join(out) + "\n"


def speed(sample: int) -> None:
    name = "credit-g"
    data = load_dataset(DATA / f"{name}.arff")
    rows = []
    for spec in ("frequency", "venn", "venn:taxonomy=leaf", "naive_bayes",
                 "venn:base=naive_bayes"):
        r = _run(data, name, spec)
        rows.append({"method": spec, "cpu_seconds": r["cpu_seconds"], "scaled": False})
        print(f"{spec:28s} {r['cpu_seconds']:.2f}s", file=sys.stderr, flush=True)
    # one (x, j) at a time: a sample of test rows per fold, scaled to all 1000
    ids = _protocol(name, data).fold_ids
    for spec in ("venn:engine=naive", "venn:taxonomy=leaf,engine=naive"):
        total = 0.0
        for f in range(10):
            train = data.subset(np.flatnonzero(ids != f))
            test_rows = np.flatnonzero(ids == f)
            pick = test_rows[:: max(1, test_rows.size // max(1, sample // 10))][: sample // 10]
            t0 = time.process_time()
            method = make_method(spec).fit(train)
            method.predict(data.subset(pick))
            total += (time.process_time() - t0) * test_rows.size / pick.size
        rows.append({"method": spec, "cpu_seconds": total, "scaled": True})
        print(f"{spec:28s} {total:.2f}s (scaled from {sample} rows)", file=sys.stderr,
              flush=True)
    frame = pd.DataFrame(rows)
    base = frame.loc[frame.method == "frequency", "cpu_seconds"].iloc[0]
    nb = frame.loc[frame.method == "naive_bayes", "cpu_seconds"].iloc[0]
    frame["x_plain_tree_cv"] = frame["cpu_seconds"] / base
    frame["x_naive_bayes_cv"] = frame["cpu_seconds"] / nb
    RESULTS.mkdir(parents=True, exist_ok=True)
    frame.to_csv(RESULTS / "calibration_speed.csv", index=False)
    print(speed_table(frame))


def speed_table(frame: pd.DataFrame) -> str:
    out = ["| method (10-fold CV, credit-g) | CPU s | × plain tree CV | × NB CV |",
           "|---|---|---|---|"]
    for r in frame.itertuples():
        note = " (sampled, scaled)" if r.scaled else ""
        out.append(f"| `{r.method}`{note} | {r.cpu_seconds:.2f} | {r.x_plain_tree_cv:.1f} | "
                   f"{r.x_naive_bayes_cv:.0f} |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("part", choices=["lindsay-cox", "eb", "speed"])
    ap.add_argument("--datasets", nargs="*", help="subset of the datasets of tests/data")
    ap.add_argument("--repeats", type=int, default=5, help="eb: repeated 10-fold CV")
    ap.add_argument("--sample", type=int, default=100, help="speed: rows for engine=naive")
    ap.add_argument("--min-leaf", type=float, default=2.0, help="lindsay-cox: tree min_leaf")
    ap.add_argument("--resume", action="store_true",
                    help="lindsay-cox: skip datasets already complete in the CSV, append the rest")
    ap.add_argument("--from-csv", action="store_true",
                    help="run nothing: print the tables from the CSV in benchmarks/results")
    add_quick(ap)
    args = ap.parse_args()
    global RESULTS
    if quick(args) and not args.from_csv:
        import tempfile

        RESULTS = Path(tempfile.mkdtemp(prefix="treecert-calibration-"))
        print(f"quick: results in {RESULTS}", file=sys.stderr)
        args.datasets = args.datasets or (["breast-cancer"] if args.part == "eb" else ["iris"])
        args.repeats, args.sample = 1, 10
    if args.datasets == []:
        sys.exit("calibration_compare.py: nothing to run (--datasets is empty)")
    if args.from_csv:
        for path in (_lc_path(args.min_leaf), RESULTS / "calibration_eb.csv",
                     RESULTS / "calibration_speed.csv"):
            if args.part in path.name.replace("lindsay_cox", "lindsay-cox") and not path.exists():
                sys.exit(f"calibration_compare.py: no recorded run: {path} is missing")
        if args.part == "lindsay-cox":
            frame = pd.read_csv(_lc_path(args.min_leaf))
            if args.datasets:
                frame = frame[frame.dataset.isin(args.datasets)]
            if frame.empty:
                sys.exit("calibration_compare.py: none of --datasets in the recorded run")
            print(lindsay_cox_tables(frame))
        elif args.part == "eb":
            print(eb_tables(pd.read_csv(RESULTS / "calibration_eb.csv")))
        else:
            print(speed_table(pd.read_csv(RESULTS / "calibration_speed.csv")))
    elif args.part == "lindsay-cox":
        lindsay_cox(args.datasets or LC_DATASETS, args.min_leaf, args.resume)
    elif args.part == "eb":
        empirical_bayes(args.datasets or EB_DATASETS, args.repeats)
    else:
        speed(args.sample)


if __name__ == "__main__":
    main()
