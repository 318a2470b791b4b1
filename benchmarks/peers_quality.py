"""treecert's certainty methods against the peers, with one set of metric definitions.

The peers (Weka J48 / bagged J48, rpart, scikit-learn trees; ``benchmarks/peers/README.md``)
left their per-instance class probabilities for the shared datasets' fixed 10 folds in
``benchmarks/peers/preds/<peer>/<dataset>.csv.gz``. This script scores those and
treecert's own per-instance predictions (``treecert evaluate --folds-file NAME.folds.csv``,
the same folds) with **treecert's** metric functions (:mod:`treecert.evaluation`), pooled
over the ten test folds, so every column is measured the same way:

* ``brier``: ``mean_i sum_c (p_ic - y_ic)^2`` (0..2); ``log_loss``: ``mean -ln clip(p_true,
  1e-15, 1)``; ``auc``: macro one-vs-rest ROC AUC over the classes present (class 1's AUC for
  two classes — the same number); ``accuracy``;
* ``auc_reliability``: ROC AUC of "prediction correct" (prediction = argmax, ties to the
  first class) scored by the method's ``certainty`` column — for the peers and for methods
  without a certainty of their own, the predicted class's probability.

Then, per metric, every column's mean over the datasets and its average rank (1 = best,
ties share; :func:`treecert.evaluation.stats.average_ranks`) over the shared suite.

Every (dataset, method) is one ``treecert evaluate`` call, printed as it starts; its output
directory under ``benchmarks/results/tmp/peers_quality/<dataset>/<method>/`` is reused when it
holds ``predictions.csv`` (delete it to recompute). Run from the repository root, niced (the
machine is shared); one evaluate process at a time::

    nice -n 10 python benchmarks/peers_quality.py --timeout 2400  # run what is missing, print
    nice -n 10 python benchmarks/peers_quality.py --summary-only  # tables from cached runs
    nice -n 10 python benchmarks/peers_quality.py --methods laplace 'bagging:trees=30'

Output: markdown tables on stdout (they are ``docs/certainty-quality.md``) and
``benchmarks/results/peers_quality.csv`` (one row per dataset x column x metric).
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing treecert

from treecert.data.loading import load_dataset  # noqa: E402
from treecert.evaluation.point_metrics import accuracy, auc, brier, log_loss  # noqa: E402
from treecert.evaluation.reliability import auc_reliability  # noqa: E402
from treecert.evaluation.stats import average_ranks  # noqa: E402

#: The shared datasets and their fixed folds.
DATA_DIR = REPO / "tests" / "data"
#: The peers' per-instance predictions (a copy of the peers' results: benchmarks/peers/).
PEER_DIR = REPO / "benchmarks" / "peers" / "preds"
WORK = REPO / "benchmarks" / "results" / "tmp" / "peers_quality"
OUT_CSV = REPO / "benchmarks" / "results" / "peers_quality.csv"

#: The shared suite: the datasets every peer was run on (run_peers.py leaves out
#: segment-test and the two 14-row weather sets).
DATASETS = ("breast-cancer", "contact-lenses", "credit-g", "diabetes", "glass", "ionosphere",
            "iris", "labor", "segment-challenge", "soybean", "unbalanced", "vote", "wdbc",
            "wine")
#: Datasets with missing values, where the transductive methods use the slow path engine:
#: run last.
SLOW = ("soybean", "vote", "breast-cancer")
PEERS = ("weka_j48", "weka_j48_U", "weka_j48_UA", "weka_bag_j48UA", "rpart_cp0",
         "rpart_default", "rpart_pruned", "sk_tree", "sk_tree_iso", "sk_bag", "sk_rf",
         "sk_rf_iso", "sk_hgb")
#: treecert's columns: every registered method at its defaults.
METHODS = ("frequency", "laplace", "m_estimate", "tpce", "tpce_batch", "kk", "bagging",
           "naive_bayes", "binning", "venn", "empirical_bayes", "calibrated_bagging", "forest")
METRICS = ("log_loss", "brier", "auc", "auc_reliability", "accuracy")
HIGHER = {"log_loss": False, "brier": False, "auc": True, "auc_reliability": True,
          "accuracy": True}


def slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", spec.replace(":", "__").replace(",", "+"))


def run_dir(dataset: str, spec: str) -> Path:
    return WORK / dataset / slug(spec)


def ensure_run(dataset: str, spec: str, timeout: float | None) -> bool:
    """``treecert evaluate`` of one method on one dataset unless cached; False on failure."""
    out = run_dir(dataset, spec)
    if (out / "predictions.csv").exists():
        return True
    cmd = [sys.executable, "-m", "treecert", "evaluate", str(DATA_DIR / f"{dataset}.arff"),
           "--folds-file", str(DATA_DIR / f"{dataset}.folds.csv"), "--method", spec,
           "--no-timing", "-q", "-o", str(out)]
    print("$", shlex.join(cmd), file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    try:
        subprocess.run(cmd, cwd=REPO, check=True, timeout=timeout)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        print(f"  failed: {exc}", file=sys.stderr, flush=True)
        return False
    print(f"  {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return True


def _labels(dataset: str) -> tuple[np.ndarray, tuple[str, ...]]:
    data = load_dataset(DATA_DIR / f"{dataset}.arff")
    return data.y.astype(np.int64), tuple(data.schema.classes)


def score(y: np.ndarray, proba: np.ndarray, certainty: np.ndarray | None) -> dict[str, float]:
    """The five metrics of one column on one dataset, pooled over the folds."""
    return {"log_loss": log_loss(y, proba), "brier": brier(y, proba), "auc": auc(y, proba),
            "auc_reliability": auc_reliability(y, proba, certainty),
            "accuracy": accuracy(y, proba)}


def peer_scores(peer: str, dataset: str, y: np.ndarray) -> dict[str, float] | None:
    path = PEER_DIR / peer / f"{dataset}.csv.gz"
    if not path.exists():
        return None
    with gzip.open(path, "rt") as fh:
        frame = pd.read_csv(fh)
    if not np.array_equal(frame["y"].to_numpy(), y):
        raise SystemExit(f"{path}: the rows are not the dataset's rows in file order.")
    p = frame[[c for c in frame.columns if re.fullmatch(r"p\d+", c)]].to_numpy(float)
    # As stored (6 significant digits; rows sum to 1 within 2e-6, inside the metrics'
    # tolerance): renormalising would break the ties between equal stored values.
    return score(y, p, None)


def method_scores(spec: str, dataset: str, y: np.ndarray,
                  classes: tuple[str, ...]) -> dict[str, float] | None:
    path = run_dir(dataset, spec) / "predictions.csv"
    if not path.exists():
        return None
    frame = pd.read_csv(path, keep_default_na=False).sort_values("row", kind="stable")
    if frame.shape[0] != y.shape[0] or not np.array_equal(frame["row"].to_numpy(),
                                                          np.arange(y.shape[0])):
        raise SystemExit(f"{path}: expected one prediction per row of {dataset}.")
    p = frame[[f"p_{c}" for c in classes]].to_numpy(float)
    return score(y, p, frame["certainty"].to_numpy(float))


def collect(methods: list[str], datasets: list[str]) -> pd.DataFrame:
    rows = []
    for ds in datasets:
        y, classes = _labels(ds)
        columns = [(p, "peer", peer_scores(p, ds, y)) for p in PEERS]
        columns += [(m, "treecert", method_scores(m, ds, y, classes)) for m in methods]
        for name, kind, vals in columns:
            if vals is None:
                continue
            for metric, v in vals.items():
                rows.append({"dataset": ds, "column": name, "kind": kind, "metric": metric,
                             "value": v})
    return pd.DataFrame(rows)


def summary(long: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean and average rank per column over the datasets every column has."""
    wide = long[long.metric == metric].pivot(index="dataset", columns="column", values="value")
    order = list(dict.fromkeys(long.column))
    wide = wide[[c for c in order if c in wide.columns]].dropna(axis=0)
    ranks = average_ranks(wide, HIGHER[metric])
    kind = long.drop_duplicates("column").set_index("column")["kind"]
    out = pd.DataFrame({"column": wide.columns, "kind": kind[wide.columns].to_numpy(),
                        "mean": wide.mean(axis=0).to_numpy(), "avg_rank": ranks})
    return out.sort_values(["avg_rank", "column"]).reset_index(drop=True), wide.shape[0]


def overview(long: pd.DataFrame) -> str:
    """One row per column: average rank (mean) on each metric, sorted by the mean of the
    four quality ranks (log_loss, brier, auc, auc_reliability)."""
    tables = {m: summary(long, m)[0].set_index("column") for m in METRICS}
    cols = list(tables["log_loss"].index)
    key = {c: np.mean([tables[m].loc[c, "avg_rank"] for m in METRICS[:4]]) for c in cols}
    lines = ["| column | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
    for c in sorted(cols, key=lambda c: (key[c], c)):
        name = f"**{c}**" if tables["log_loss"].loc[c, "kind"] == "treecert" else c
        cells = [f"{tables[m].loc[c, 'avg_rank']:.2f} ({tables[m].loc[c, 'mean']:.4f})"
                 for m in METRICS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def markdown(long: pd.DataFrame) -> str:
    n = summary(long, "log_loss")[1]
    lines = [f"### Overview: average rank (mean) over {n} datasets; treecert in bold", "",
             overview(long)]
    for metric in METRICS:
        table, n = summary(long, metric)
        better = "higher" if HIGHER[metric] else "lower"
        lines += [f"### {metric} ({better} is better; {n} datasets, "
                  f"{table.shape[0]} columns)", "",
                  "| rank | column | kind | mean | average rank |", "|---:|---|---|---:|---:|"]
        for i, r in table.iterrows():
            name = f"**{r.column}**" if r.kind == "treecert" else r.column
            lines.append(f"| {i + 1} | {name} | {r.kind} | {r['mean']:.4f} | "
                         f"{r.avg_rank:.2f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=list(METHODS),
                    help="treecert method specs (default: every method at its defaults).")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--summary-only", action="store_true", help="Only score cached runs.")
    ap.add_argument("--timeout", type=float, default=None,
                    help="Seconds allowed per evaluate call (slow datasets).")
    ap.add_argument("--csv", default=str(OUT_CSV))
    ap.add_argument("--quick", action="store_true",
                    help="Smoke size: iris, laplace and forest:trees=5 (TREECERT_QUICK=1).")
    args = ap.parse_args(argv)
    if args.quick or os.environ.get("TREECERT_QUICK") == "1":
        args.datasets, args.methods = ["iris"], ["laplace", "forest:trees=5"]
    if not args.summary_only:
        order = [d for d in args.datasets if d not in SLOW] + [
            d for d in args.datasets if d in SLOW]
        for ds in order:
            for spec in args.methods:
                ensure_run(ds, spec, args.timeout)
    long = collect(args.methods, args.datasets)
    if long.empty:
        print("nothing to score: no run finished.", file=sys.stderr)
        return 1
    missing = [(d, m) for d in args.datasets for m in args.methods
               if not ((long.dataset == d) & (long.column == m)).any()]
    if missing:
        print("not run yet (left out of the ranks):",
              ", ".join(f"{m} on {d}" for d, m in missing), file=sys.stderr)
    Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
    long.to_csv(args.csv, index=False, float_format="%.6f")
    print(markdown(long))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
