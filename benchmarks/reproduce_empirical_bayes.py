"""The EB paper's before/after tables (log-loss, Brier, AUC) and its EB-vs-Laplace remark.

Sutton-Charani (IPMU 2020), section 6: binary datasets, 10-fold cross-validation repeated
150 times, trees of several complexities (rpart's ``cp``; "pruned" = grown at cp = 0, pruned
at the cp of minimal cross-validated error), each evaluated before (leaf frequencies) and
after empirical-Bayes smoothing, with log-loss, Brier score and AUC. The paper also says
that Laplace smoothing gave "no significant differences" from EB; this script tests that
remark with ``laplace`` leaves on the same trees, and on treecert's default tree (the
ablation: information gain, ``min_leaf`` 2).

Each tree setting is one ``treecert compare`` (``--repeat 150``: repeat 0 on the shared
fold files, repeats 1-149 on new stratified folds; ``--resume`` finishes a stopped run):

    python benchmarks/reproduce_empirical_bayes.py                 # full: 150 repetitions
    python benchmarks/reproduce_empirical_bayes.py --quick         # 2 datasets, 2 repetitions

``TREECERT_QUICK=1`` is ``--quick``. Runs into ``benchmarks/results/tmp/empirical_bayes/`` (or
``--out``) and the tables between the markers of docs/reproduction/empirical-bayes.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a clone: this repository's treecert
    sys.path.insert(0, str(ROOT))
from run import write_page  # noqa: E402  (benchmarks/ is the script's folder)

DATA = ROOT / "tests" / "data"
PAGE = ROOT / "docs" / "reproduction" / "empirical-bayes.md"
DATASETS = ("breast-cancer", "credit-g", "diabetes", "ionosphere", "labor", "unbalanced",
            "vote", "wdbc")
QUICK = ("labor", "vote")
RPART = ("--criterion", "gini", "--min-leaf", "7")  # rpart: Gini, minbucket 7
#: label -> (tree options, pruning option added to every method)
SETTINGS = {
    "cp=0": ((*RPART, "--cp", "0"), ""),
    "cp=0.001": ((*RPART, "--cp", "0.001"), ""),
    "cp=0.005": ((*RPART, "--cp", "0.005"), ""),
    "cp=0.01": ((*RPART, "--cp", "0.01"), ""),
    "cp=0.05": ((*RPART, "--cp", "0.05"), ""),
    "pruned": ((*RPART, "--cp", "0"), "prune=ccp,cv=10"),
    "treecert default": ((), ""),  # the ablation: information gain, min_leaf 2, cp 0
}
QUICK_SETTINGS = ("cp=0", "treecert default")
METHODS = ("frequency", "laplace", "empirical_bayes")
METRICS = (("log_loss", "Log-loss"), ("brier_norm", "Brier score, mean (p - y)²"),
           ("auc", "AUC"))


def treecert(*args: object) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    print("+ treecert " + " ".join(map(str, args)), file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "treecert", *map(str, args)], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def run(out: Path, label: str, datasets, repeats: int) -> None:
    tree, prune = SETTINGS[label]
    specs = [m + (":" + prune if prune else "") for m in METHODS]
    data = [a for d in datasets for a in ("--data", DATA / f"{d}.arff")]
    methods = [a for m in specs for a in ("--method", m)]
    metrics = [a for m, _ in METRICS for a in ("--metric", m)]
    treecert("compare", *data, *methods, *metrics, *tree, "--repeat", repeats, "--no-timing",
             "--resume", "-q", "-o", _target(out, label))


def _target(out: Path, label: str) -> Path:
    return out / label.replace(" ", "_").replace("=", "")


def read(out: Path, label: str) -> pd.DataFrame:
    frame = pd.read_csv(_target(out, label) / "metrics.csv")
    frame["method"] = frame["method"].str.split(":").str[0]
    return frame.assign(tree=label)


def _wtl(frame: pd.DataFrame, metric: str, a: str, b: str) -> str:
    from treecert.evaluation import stats

    table = frame.pivot_table(index="dataset", columns="method", values=metric)
    r = stats.wins_ties_losses(table[a], table[b],
                               higher_is_better=stats.higher_is_better(metric), tol=1e-4)
    p = stats.wilcoxon_p(table[a], table[b])
    return f"{r.wins}/{r.ties}/{r.losses} (p {p:.3f})"


def tables(frame: pd.DataFrame) -> str:
    trees = list(dict.fromkeys(frame["tree"]))
    out = []
    for metric, title in METRICS:
        out += [f"### {title}: before (frequency) → after (EB), and Laplace", "",
                "| dataset | " + " | ".join(trees) + " |", "|---" * (len(trees) + 1) + "|"]
        for name in dict.fromkeys(frame["dataset"]):
            cells = []
            for tree in trees:
                sel = frame[(frame.dataset == name) & (frame.tree == tree)].set_index("method")
                cells.append(f"{sel.loc['frequency', metric]:.3f} → "
                             f"{sel.loc['empirical_bayes', metric]:.3f} "
                             f"(L {sel.loc['laplace', metric]:.3f})")
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
    out += ["### EB against its baselines, over the datasets", "",
            "EB's wins/ties/losses (two-sided Wilcoxon p) against frequency leaves "
            "(the paper's before/after) and against Laplace leaves (the paper's remark).", "",
            "| tree | repetitions | leaves (mean) | metric | EB vs frequency | "
            "mean EB − frequency | EB vs Laplace | mean EB − Laplace |",
            "|---|---:|---:|---|---|---:|---|---:|"]
    for tree in trees:
        sub = frame[frame.tree == tree]
        leaves = sub[sub.method == "frequency"]["leaves"].mean()
        for metric, _ in METRICS:
            t = sub.pivot_table(index="dataset", columns="method", values=metric)
            d_freq = (t["empirical_bayes"] - t["frequency"]).mean()
            d_lap = (t["empirical_bayes"] - t["laplace"]).mean()
            out.append(f"| {tree} | {sub['repeats'].iloc[0]} | {leaves:.1f} | {metric} | "
                       f"{_wtl(sub, metric, 'empirical_bayes', 'frequency')} | "
                       f"{d_freq:+.4f} | {_wtl(sub, metric, 'empirical_bayes', 'laplace')} | "
                       f"{d_lap:+.4f} |")
    return "\n".join(out) + "\n"


def main() -> int:
    import resource

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 datasets, 2 repetitions")
    ap.add_argument("--repeats", type=int, help="repetitions of 10-fold CV (default 150)")
    ap.add_argument("--trees", nargs="+", choices=list(SETTINGS), help="a subset")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "tmp"
                    / "empirical_bayes", help="the runs' directories (resumable)")
    ap.add_argument("--page", type=Path, default=PAGE)
    args = ap.parse_args()
    quick = args.quick or os.environ.get("TREECERT_QUICK") == "1"
    repeats = 2 if quick else args.repeats or 150  # quick: always smoke-sized
    datasets = QUICK if quick else DATASETS
    trees = args.trees or (QUICK_SETTINGS if quick else list(SETTINGS))
    t0 = time.process_time()
    for label in trees:
        run(args.out, label, datasets, repeats)
    # the page: every setting with a finished run here (a setting run with --trees and a
    # different --repeats keeps its own count, shown in the tables)
    frames = [read(args.out, label) for label in SETTINGS if _target(args.out, label)
              .joinpath("metrics.csv").exists()]
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - t0 + kids.ru_utime + kids.ru_stime
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        print("nothing ran", file=sys.stderr)
        return 1
    text = tables(frame) + (
        f"\nCPU time of this invocation: {cpu / 60:.1f} minutes (units resumed from an "
        "earlier run are not counted).\n")
    write_page(args.page, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
