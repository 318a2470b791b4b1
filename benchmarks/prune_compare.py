"""docs/pruning.md tables: Bradford et al. (1998)'s comparison of pruning methods.

Every pruning method x {frequency, laplace} leaves, 10-fold cross-validation on the binary
datasets of ``tests/data`` and their fixed folds (``NAME.folds.csv``), each tree grown
with information gain and ``min_leaf`` 2 (the TPCE paper's learner) and pruned inside every
fold through the leaf methods' ``prune`` option. Reported per dataset: the average loss
under two loss matrices, 1:10 and 10:1 (misclassifying the first class costs 1 and the
second 10, and the reverse), the normalised MSE (Brier / 2), the log-loss and the tree size
(leaves), plus — the paper's ROC argument — which method has the lowest loss at each cost
ratio, and ROC curves (PNG).

Methods: ``none``; ``ccp`` (error-based CCP: α on a 20 % holdout, the paper's protocol);
``ccp_loss`` (the same with the loss matrix: loss-based CCP); ``ebp`` (C4.5, CF 0.25);
``laplace_loss`` (Laplace-based pruning with the loss matrix); ``kl`` (threshold 0.01);
``rep`` (reduced-error pruning, a third held out). The loss-dependent methods (``ccp_loss``,
``laplace_loss``) are run once per matrix; their probabilities, size and MSE are reported
per matrix. Every classifier predicts the class of minimum expected loss from its
probabilities.

Run from the repo root (about 3 minutes on 2 cores)::

    python benchmarks/prune_compare.py                       # markdown to stdout
    python benchmarks/prune_compare.py --datasets vote labor --plots
    python benchmarks/prune_compare.py --quick       # labor, CSV in a temporary directory

Results: ``benchmarks/results/prune_compare.csv`` (one row per dataset x method x matrix)
and, with ``--plots``, ``benchmarks/results/prune_compare/<dataset>_roc.png``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from run import add_quick, quick

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "tests" / "data"
OUT = REPO / "benchmarks" / "results"
BINARY = ("breast-cancer", "credit-g", "diabetes", "ionosphere", "labor", "unbalanced",
          "vote", "wdbc")
PLAIN = {"none": "prune=none", "ccp": "prune=ccp", "ebp": "prune=ebp", "kl": "prune=kl",
         "rep": "prune=rep"}
WITH_LOSS = {"ccp_loss": "prune=ccp", "laplace_loss": "prune=laplace_loss"}
MATRICES = {"1:10": np.array([[0.0, 1.0], [10.0, 0.0]]),
            "10:1": np.array([[0.0, 10.0], [1.0, 0.0]])}
RATIOS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
TREE = {"criterion": "info_gain", "min_leaf": 2.0}


def evaluate(data, specs: dict[str, str], loss, fold_ids) -> tuple[pd.DataFrame, pd.DataFrame]:
    from treecert import api
    from treecert.evaluation.experiment import Protocol

    names = {f"{leaf}:{opt}": (name, leaf) for name, opt in specs.items()
             for leaf in ("frequency", "laplace")}
    res = api.evaluate(data, list(names), protocol=Protocol(kind="folds", fold_ids=fold_ids),
                       tree_params=dict(TREE), loss=loss, timing=False, jobs=2)
    metrics = res.metrics.copy()
    metrics["pruning"] = [names[m][0] for m in metrics["method"]]
    metrics["leaf"] = [names[m][1] for m in metrics["method"]]
    preds = res.predictions.copy()
    preds["pruning"] = [names[m][0] for m in preds["method"]]
    preds["leaf"] = [names[m][1] for m in preds["method"]]
    return metrics, preds


def run_dataset(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    from treecert.data.folds import read_fold_ids
    from treecert.data.loading import load_dataset
    from treecert.evaluation.costs import expected_loss

    data = load_dataset(path)
    classes = data.schema.classes
    fold_ids = read_fold_ids(path.with_suffix(".folds.csv").read_text(), data.n_samples,
                             str(path))
    runs = [("any", *evaluate(data, PLAIN, None, fold_ids))]
    for mname, L in MATRICES.items():
        runs.append((mname, *evaluate(data, WITH_LOSS, L, fold_ids)))
    rows, all_preds = [], []
    for matrix, metrics, preds in runs:
        for _, m in metrics.iterrows():
            frame = preds[preds["method"] == m["method"]]
            y = frame["actual"].map({c: i for i, c in enumerate(classes)}).to_numpy()
            p = frame[[f"p_{c}" for c in classes]].to_numpy(dtype=float)
            row = {"dataset": path.stem, "pruning": m["pruning"], "leaf": m["leaf"],
                   "matrix": matrix, "brier_norm": m["brier_norm"], "log_loss": m["log_loss"],
                   "auc": m["auc"], "leaves": m["leaves"]}
            for mname, L in MATRICES.items():
                row[f"loss_{mname}"] = (expected_loss(y, p, L)
                                        if matrix in ("any", mname) else np.nan)
            for r in RATIOS:
                Lr = np.array([[0.0, 1.0], [r, 0.0]])
                row[f"ratio_{r:g}"] = (expected_loss(y, p, Lr) if matrix == "any"
                                       else np.nan)
            rows.append(row)
        preds = preds.assign(matrix=matrix)
        all_preds.append(preds)
    return pd.DataFrame(rows), pd.concat(all_preds, ignore_index=True)


def label(r) -> str:
    name = r["pruning"] if r["matrix"] == "any" else f"{r['pruning']}[{r['matrix']}]"
    return f"{name}, {r['leaf']}"


def table(df: pd.DataFrame, value: str, rows: pd.DataFrame | None = None,
          fmt: str = "{:.3f}") -> str:
    src = df if rows is None else rows
    src = src.assign(method=[label(r) for _, r in src.iterrows()])
    wide = src.pivot_table(index="method", columns="dataset", values=value, sort=False)
    wide["mean rank"] = wide.rank(axis=0, method="average").mean(axis=1)
    head = "| method | " + " | ".join(wide.columns) + " |"
    lines = [head, "|---|" + "---:|" * len(wide.columns)]
    for method, vals in wide.iterrows():
        best = wide.drop(columns="mean rank").min(axis=0)
        cells = []
        for col, v in vals.items():
            text = "n/a" if v != v else (f"{v:.2f}" if col == "mean rank" else fmt.format(v))
            if col != "mean rank" and v == v and np.isclose(v, best[col]):
                text = f"**{text}**"
            cells.append(text)
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def winners(df: pd.DataFrame) -> str:
    """For each cost ratio r (L = [[0, 1], [r, 0]]: calling a second-class case the first
    class costs r, the reverse 1), the method(s) with the lowest average loss among the
    loss-independent methods; a tie of more than two lists the pruning methods involved."""
    plain = df[df["matrix"] == "any"]
    head = "| dataset | " + " | ".join(f"r = {r:g}" for r in RATIOS) + " |"
    lines = [head, "|---|" + "---|" * len(RATIOS)]
    for ds, g in plain.groupby("dataset", sort=False):
        cells = []
        for r in RATIOS:
            col = f"ratio_{r:g}"
            best = g[col].min()
            win = g[np.isclose(g[col], best)]
            names = list(dict.fromkeys(win["pruning"]))
            if len(win) <= 2:
                cells.append(", ".join(label(w).replace(", ", "/") for _, w in win.iterrows()))
            else:
                cells.append("tie: " + ", ".join(names))
        lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def roc_plot(preds: pd.DataFrame, classes, out: Path, name: str) -> Path:
    from treecert.evaluation.plot_curves import roc_figure
    from treecert.evaluation.plots import save_figure

    leafs = preds[(preds["leaf"] == "laplace") & (preds["matrix"].isin(["any", "1:10"]))]
    leafs = leafs.assign(method=[p if m == "any" else f"{p}[{m}]"
                                 for p, m in zip(leafs["pruning"], leafs["matrix"],
                                                 strict=True)])
    out.mkdir(parents=True, exist_ok=True)
    title = (f"{name} — 10-fold CV ({name}.folds.csv), laplace leaves; "
             "pruning methods (loss-based ones for the 1:10 matrix)")
    return save_figure(roc_figure(leafs, classes, title), out / f"{name}_roc.png")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--datasets", nargs="*", default=list(BINARY))
    ap.add_argument("--plots", action="store_true", help="ROC curves (needs matplotlib)")
    add_quick(ap)
    args = ap.parse_args()
    global OUT
    if quick(args):
        import tempfile

        args.datasets = ["labor"]
        OUT = Path(tempfile.mkdtemp(prefix="treecert-prune-compare-"))
        print(f"quick: results in {OUT}", file=sys.stderr)
    if not args.datasets:
        sys.exit("prune_compare.py: nothing to run (--datasets is empty)")
    frames = []
    for name in args.datasets:
        path = args.data_dir / f"{name}.arff"
        df, preds = run_dataset(path)
        frames.append(df)
        if args.plots:
            classes = tuple(c[2:] for c in preds.columns if c.startswith("p_"))
            roc_plot(preds, classes, OUT / "prune_compare", name)
        print(f"note: {name} done", file=sys.stderr)
    df = pd.concat(frames, ignore_index=True)
    OUT.mkdir(parents=True, exist_ok=True)
    df.to_csv(OUT / "prune_compare.csv", index=False, lineterminator="\n")
    print("<!-- generated by benchmarks/prune_compare.py -->\n")
    for mname in MATRICES:
        rows = df[df["matrix"].isin(["any", mname])]
        print(f"#### Average loss, matrix {mname}\n")
        print(table(df, f"loss_{mname}", rows))
        print()
    for value, title, fmt in (("brier_norm", "Normalised MSE (Brier / 2)", "{:.4f}"),
                              ("log_loss", "Log-loss", "{:.3f}"),
                              ("leaves", "Tree size (leaves, mean over folds)", "{:.1f}")):
        print(f"#### {title}\n")
        print(table(df, value, fmt=fmt))
        print()
    print("#### Lowest loss at each cost ratio r (loss-independent methods)\n")
    print(winners(df))


if __name__ == "__main__":
    main()
