"""The single-tree table: average ranks of single-tree columns, treecert's and peers'.

Which single tree gives the best probabilities and the best reliability scores? treecert's
single-tree methods (``frequency``, ``laplace``, ``m_estimate``, ``tpce``, ``kk``, ``venn``,
``binning``, ``empirical_bayes``, ``certified_tree``) each run by ``treecert evaluate
tests/data/NAME.arff --folds-file tests/data/NAME.folds.csv`` — the shared suite's fixed 10
folds — and the single-tree peers (Weka J48 three ways, rpart three ways, scikit-learn's
tree and its isotonic-calibrated tree) from their stored per-instance probabilities in
``benchmarks/peers/preds/``, all scored by the same functions as
``benchmarks/peers_quality.py`` (its metric definitions; AUC-reliability by each method's
certainty column, the peers' by their top probability). Ranks: per dataset, 1 = best, ties
share; averaged over the datasets every column has.

    nice -n 10 python benchmarks/single_tree_quality.py           # run what is missing, print
    nice -n 10 python benchmarks/single_tree_quality.py --quick   # iris, three methods
    python benchmarks/single_tree_quality.py --summary-only      # tables from cached runs

Each (dataset, method) run is cached in
``benchmarks/results/tmp/single_tree_quality[_quick]/<dataset>/<method>/`` (delete it to
recompute). Output: markdown on stdout, the per-dataset values in
``benchmarks/results/single_tree_quality.csv`` (quick: ``scores.csv`` in the quick
directory). Exits 1 when nothing was scored.
"""

from __future__ import annotations

import argparse
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

from peers_quality import HIGHER, peer_scores, score, slug  # noqa: E402
from run import add_quick, quick  # noqa: E402

from treecert.data.loading import load_dataset  # noqa: E402
from treecert.evaluation.stats import average_ranks  # noqa: E402

DATA = REPO / "tests" / "data"
WORK = REPO / "benchmarks" / "results" / "tmp" / "single_tree_quality"
OUT_CSV = REPO / "benchmarks" / "results" / "single_tree_quality.csv"
#: The shared suite (the peers' datasets: tests/data without segment-test and the weather sets).
DATASETS = ("breast-cancer", "contact-lenses", "credit-g", "diabetes", "glass", "ionosphere",
            "iris", "labor", "segment-challenge", "soybean", "unbalanced", "vote", "wdbc",
            "wine")
PEERS = ("weka_j48", "weka_j48_U", "weka_j48_UA", "rpart_cp0", "rpart_default",
         "rpart_pruned", "sk_tree", "sk_tree_iso")
METHODS = ("certified_tree", "frequency", "laplace", "m_estimate", "tpce", "kk", "venn",
           "binning", "empirical_bayes")
QUICK_DATASETS = ("iris",)
QUICK_METHODS = ("certified_tree", "laplace", "tpce")
#: Order of the metrics in the table: the two the single-tree aim names first.
ORDER = ("auc_reliability", "log_loss", "brier", "auc", "accuracy")


def ensure_run(work: Path, dataset: str, spec: str, timeout: float | None,
               run: bool = True) -> Path | None:
    """``treecert evaluate`` of one method on one dataset unless cached: its predictions."""
    out = work / dataset / slug(spec)
    if (out / "predictions.csv").exists():
        return out / "predictions.csv"
    if not run:
        return None
    cmd = [sys.executable, "-m", "treecert", "evaluate", str(DATA / f"{dataset}.arff"),
           "--folds-file", str(DATA / f"{dataset}.folds.csv"), "--method", spec,
           "--no-timing", "-q", "-o", str(out)]
    print("$", shlex.join(cmd), file=sys.stderr, flush=True)
    t0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        subprocess.run(cmd, cwd=REPO, check=True, timeout=timeout)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        print(f"  failed: {exc}", file=sys.stderr, flush=True)
        return None
    t1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = t1.ru_utime + t1.ru_stime - t0.ru_utime - t0.ru_stime
    print(f"  done ({cpu:.1f} CPU-s)", file=sys.stderr, flush=True)
    return out / "predictions.csv"


def method_scores(path: Path, y: np.ndarray, classes: tuple[str, ...]) -> dict[str, float]:
    frame = pd.read_csv(path, keep_default_na=False).sort_values("row", kind="stable")
    if not np.array_equal(frame["row"].to_numpy(), np.arange(y.shape[0])):
        raise SystemExit(f"{path}: expected one prediction per row.")
    p = frame[[f"p_{c}" for c in classes]].to_numpy(float)
    return score(y, p, frame["certainty"].to_numpy(float))


def collect(work: Path, datasets: list[str], methods: list[str],
            timeout: float | None, run: bool = True) -> pd.DataFrame:
    rows = []
    for ds in datasets:
        data = load_dataset(DATA / f"{ds}.arff")
        y, classes = data.y.astype(np.int64), tuple(data.schema.classes)
        columns = [(p, "peer", peer_scores(p, ds, y)) for p in PEERS]
        for m in methods:
            path = ensure_run(work, ds, m, timeout, run)
            columns.append((m, "treecert", None if path is None
                            else method_scores(path, y, classes)))
        rows += [{"dataset": ds, "column": name, "kind": kind, "metric": k, "value": v}
                 for name, kind, vals in columns if vals is not None for k, v in vals.items()]
    return pd.DataFrame(rows, columns=["dataset", "column", "kind", "metric", "value"])


def wide(long: pd.DataFrame, metric: str) -> pd.DataFrame:
    """dataset x column values of ``metric``, datasets where every column has a value."""
    w = long[long.metric == metric].pivot(index="dataset", columns="column", values="value")
    return w[[c for c in dict.fromkeys(long.column) if c in w.columns]].dropna(axis=0)


def markdown(long: pd.DataFrame, focus: str) -> str:
    tables = {m: wide(long, m) for m in ORDER}
    ranks = {m: pd.Series(average_ranks(t, HIGHER[m]), index=t.columns)
             for m, t in tables.items()}
    n = tables["log_loss"].shape[0]
    cols = sorted(ranks["log_loss"].index, key=lambda c: (
        ranks["auc_reliability"][c] + ranks["log_loss"][c], c))
    out = [f"### Single trees: average rank (mean) over {n} datasets "
           f"({', '.join(tables['log_loss'].index)}); treecert in bold", "",
           "| column | " + " | ".join(ORDER) + " |", "|---|" + "---:|" * len(ORDER)]
    kind = long.drop_duplicates("column").set_index("column")["kind"]
    for c in cols:
        name = f"**{c}**" if kind[c] == "treecert" else c
        out.append(f"| {name} | " + " | ".join(
            f"{ranks[m][c]:.2f} ({tables[m][c].mean():.4f})" for m in ORDER) + " |")
    out += ["", "Columns sorted by the sum of their AUC-reliability and log-loss ranks.", ""]
    if focus in tables["log_loss"].columns:
        out += [f"### `{focus}` against the best other single-tree column, per dataset", "",
                "| dataset | " + " | ".join(
                    f"{m} {focus} | best other" for m in ("auc_reliability", "log_loss"))
                + " |", "|---|" + "---:|---|" * 2]
        for ds in tables["log_loss"].index:
            cells = []
            for m in ("auc_reliability", "log_loss"):
                row = tables[m].loc[ds].drop(focus)
                best = row.idxmax() if HIGHER[m] else row.idxmin()
                cells.append(f"{tables[m].loc[ds, focus]:.4f} | {best} {row[best]:.4f}")
            out.append(f"| {ds} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=None)
    ap.add_argument("--methods", nargs="*", default=None, help="treecert method specs.")
    ap.add_argument("--timeout", type=float, default=None,
                    help="Seconds allowed per evaluate call.")
    ap.add_argument("--summary-only", action="store_true", help="Only score cached runs.")
    add_quick(ap)
    args = ap.parse_args(argv)
    small = quick(args)
    datasets = args.datasets if args.datasets is not None else list(
        QUICK_DATASETS if small else DATASETS)
    methods = args.methods if args.methods is not None else list(
        QUICK_METHODS if small else METHODS)
    work = WORK.with_name(WORK.name + "_quick") if small else WORK
    long = collect(work, datasets, methods, args.timeout, not args.summary_only)
    if long.empty or long[long.kind == "treecert"].empty:
        print("error: nothing was scored (no dataset or no method ran).", file=sys.stderr)
        return 1
    out = work / "scores.csv" if small else OUT_CSV
    out.parent.mkdir(parents=True, exist_ok=True)
    long.to_csv(out, index=False, float_format="%.6f")
    print(markdown(long, methods[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
