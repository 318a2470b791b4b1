"""Bradford et al.'s pruning comparison (loss, MSE, log-loss, size) and the abstract's claims.

Runs ``benchmarks/prune_compare.py``'s comparison (every pruning method with frequency and
Laplace leaves, 10-fold CV on the shared folds, information gain, ``min_leaf`` 2) on the
binary datasets of tests/data, adds ``kl`` in the paper's unit (0.01 bits per example)
beside the default, checks the four findings of the paper's abstract, and writes the tables
between the markers of docs/reproduction/bradford.md.

    python benchmarks/reproduce_bradford.py            # 8 datasets, minutes
    python benchmarks/reproduce_bradford.py --quick    # 2 datasets (TREECERT_QUICK=1 too)

Per-dataset rows: ``benchmarks/results/bradford.csv`` (``--csv``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "benchmarks"):  # run as a script from a clone
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import prune_compare as pc  # noqa: E402
from run import write_page  # noqa: E402  (benchmarks/ is the script's folder)

DATA = ROOT / "tests" / "data"
PAGE = ROOT / "docs" / "reproduction" / "bradford.md"
QUICK = ("labor", "vote")
pc.PLAIN = {**pc.PLAIN, "kl_paper": "prune=kl,kl_unit=example"}
CRITERIA = (("loss_1:10", "loss 1:10"), ("loss_10:1", "loss 10:1"),
            ("brier_norm", "MSE / 2"), ("log_loss", "log-loss"))


def _loss_rows(df: pd.DataFrame, col: str) -> pd.DataFrame:
    """The rows that have ``col``: loss-free methods, and loss methods for their matrix."""
    return df[df[col].notna()]


def claims(df: pd.DataFrame) -> str:
    """The abstract's four findings, each checked on the table."""
    n = df["dataset"].nunique()
    out = ["| paper (abstract) | treecert | reproduces? | why not |", "|---|---|---|---|"]
    # 1. Laplace leaves help every pruning method, for loss and for probabilities
    wins = worse = total = 0
    lost = set()
    for crit, _ in CRITERIA:
        rows = _loss_rows(df, crit)
        wide = rows.pivot_table(index=["dataset", "pruning", "matrix"], columns="leaf",
                                values=crit)
        wins += int((wide["laplace"] < wide["frequency"] - 1e-9).sum())
        bad = wide[wide["laplace"] > wide["frequency"] + 1e-9]
        worse += len(bad)
        total += len(wide)
        lost |= {f"{d}/{p}" for d, p, _ in bad.index}
    lost_text = ", ".join(sorted(lost)[:6]) + (" …" if len(lost) > 6 else "")
    ok = wins >= 0.8 * total
    out.append(f"| Laplace leaves are beneficial to all pruning methods, for loss and "
               f"probabilities | Laplace better in {wins} of {total} (dataset, method, "
               f"criterion) cells, worse in {worse} ({lost_text}) | "
               f"{'yes' if ok else 'partly'} | "
               f"{'' if ok else 'see the loss tables: small datasets'} |")
    # 2. No pruning is on par with the pruning methods (Laplace leaves): mean rank
    lap = df[df["leaf"] == "laplace"]
    ranks, on_par = [], 0
    for crit, name in CRITERIA:
        rows = _loss_rows(lap, crit).assign(
            method=lambda f: np.where(f["matrix"] == "any", f["pruning"],
                                      f["pruning"] + "[" + f["matrix"] + "]"))
        wide = rows.pivot_table(index="method", columns="dataset", values=crit)
        mean_rank = wide.rank(axis=0).mean(axis=1)
        on_par += mean_rank["none"] <= (len(mean_rank) + 1) / 2
        ranks.append(f"{name} {mean_rank['none']:.1f} of {len(mean_rank)} "
                     f"(best `{mean_rank.idxmin()}` {mean_rank.min():.1f})")
    verdict = "yes" if on_par >= 3 else "partly" if on_par else "no"
    out.append("| No pruning is on par with the other methods | mean rank of `none` among "
               "the Laplace-leaf methods: " + "; ".join(ranks) + f" | {verdict} | "
               + ("" if verdict == "yes" else "`none` ranks in the better half on "
                  f"{on_par} of 4 criteria; treecert's trees are grown to purity with "
                  "`min_leaf` 2") + " |")
    # 3. The main gain is size, sometimes a factor of 10
    plain = df[(df["leaf"] == "laplace") & (df["matrix"] == "any")]
    wide = plain.pivot_table(index="dataset", columns="pruning", values="leaves")
    pruned = wide.drop(columns="none")
    factors = wide["none"].to_numpy()[:, None] / pruned.to_numpy()
    i, j = np.unravel_index(factors.argmax(), factors.shape)
    out.append(f"| Pruning's main advantage is tree size, sometimes a factor of 10 | "
               f"unpruned/pruned leaves, median {np.median(factors):.1f}, largest "
               f"{factors.max():.0f} (`{pruned.columns[j]}` on {wide.index[i]}) | "
               f"{'yes' if factors.max() >= 5 else 'no'} | |")
    # 4. Different pruning methods are best for different loss matrices
    differ = 0
    for _, g in df[df["leaf"] == "laplace"].groupby("dataset"):
        best = [g.loc[g[f"loss_{m}"].idxmin(), "pruning"] for m in pc.MATRICES]
        differ += best[0] != best[1]
    out.append(f"| No method dominates; on the same dataset different methods are best for "
               f"different loss matrices | the best method (Laplace leaves) under 1:10 and "
               f"10:1 differs on {differ} of {n} datasets | "
               f"{'yes' if differ > 0 else 'no'} | |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="two datasets")
    ap.add_argument("--page", type=Path, default=PAGE)
    ap.add_argument("--min-leaf", type=float, default=2.0,
                    help="the grower's min_leaf (the ablation of the no-pruning claim)")
    ap.add_argument("--csv", type=Path, default=ROOT / "benchmarks" / "results" / "bradford.csv")
    args = ap.parse_args()
    quick = args.quick or os.environ.get("TREECERT_QUICK") == "1"
    names = QUICK if quick else pc.BINARY
    pc.TREE["min_leaf"] = args.min_leaf
    t0 = time.perf_counter()
    frames = []
    for name in names:
        frames.append(pc.run_dataset(DATA / f"{name}.arff")[0])
        print(f"{name} done", file=sys.stderr, flush=True)
    if not frames:
        print("nothing ran", file=sys.stderr)
        return 1
    wall = time.perf_counter() - t0
    load = os.getloadavg()[0]
    df = pd.concat(frames, ignore_index=True)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.csv, index=False, lineterminator="\n")
    parts = ["### The paper's findings", "", claims(df)]
    for mname in pc.MATRICES:
        parts += [f"### Average loss, matrix {mname}", "",
                  pc.table(df, f"loss_{mname}", df[df["matrix"].isin(["any", mname])]), ""]
    for value, title, fmt in (("brier_norm", "Normalised MSE (Brier / 2)", "{:.4f}"),
                              ("log_loss", "Log-loss", "{:.3f}"),
                              ("leaves", "Tree size (leaves, mean over folds)", "{:.1f}")):
        parts += [f"### {title}", "", pc.table(df, value, fmt=fmt), ""]
    parts += ["### Lowest loss at each cost ratio r (loss-independent methods)", "",
              pc.winners(df), "",
              f"Wall time of this run: {wall / 60:.1f} minutes (2 jobs; load average "
              f"{load:.1f} at the end).", ""]
    text = "\n".join(parts)
    write_page(args.page, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
