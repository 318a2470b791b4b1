"""docs/reproduction/costa-verwer-blockeel.md tables: TPCE against the tree, matched variants.

The reproduction of Costa, Verwer & Blockeel's comparison
(``docs/reproduction/costa-verwer-blockeel.md``) finds TPCE *worse* than the Laplace tree on
the Brier score (6/0/11), where the paper finds
it better (36/0/12). This script re-runs the comparison under one change at a time — the
counting of x, the minimum leaf weight, binary nominal splits, the threshold rule, the
criterion, the leaf estimate of the reference tree ("Clus-Orig" with frequency leaves) and
the leave-one-out protocol of the paper — always against the single tree grown with the
**same** tree settings, on ``tests/data`` and its fixed folds (``NAME.folds.csv``).

Every (variant, dataset) is one ``treecert evaluate`` call (printed, so each number can be
re-made by hand); its output directory under ``benchmarks/results/tmp/tpce_variants/`` is
reused when it already holds ``metrics.csv`` (delete it to recompute). Run from the repo
root, niced (the machine is shared)::

    nice -n 10 python benchmarks/tpce_variants.py                      # every variant
    nice -n 10 python benchmarks/tpce_variants.py --variants min_leaf_5 count_x_false
    nice -n 10 python benchmarks/tpce_variants.py --summary-only       # tables from runs so far
    python benchmarks/tpce_variants.py --quick          # one variant on iris, in a temp dir

``--summary-only`` prints the tables from the runs under ``benchmarks/results/tmp/``, or,
where there are none (a fresh clone), from the recorded
``benchmarks/results/tpce_variants_metrics.csv``; with neither it exits 1.

Results: ``benchmarks/results/tpce_variants_metrics.csv`` (one row per variant x dataset x
method, with the seconds of its evaluate call) and ``benchmarks/results/tpce_variants.csv``
(wins/ties/losses of TPCE against the reference and the two-sided Wilcoxon p, with
treecert's own ``stats.wins_ties_losses``/``stats.wilcoxon_p``, tie tolerance 1e-4, and the
averages over datasets). Markdown tables go to stdout.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
from run import add_quick, quick

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "tests" / "data"
OUT = REPO / "benchmarks" / "results"
WORK = OUT / "tmp" / "tpce_variants"
METRICS = ("brier", "auc", "auc_reliability", "accuracy", "log_loss")
HIGHER = {"brier": False, "auc": True, "auc_reliability": True, "accuracy": True,
          "log_loss": False}

#: name -> (tree options shared by both methods, tpce-only options, extra evaluate args,
#:          reference leaf methods, datasets or None for all)
VARIANTS: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...] | None]] = {
    "default": ("", "", (), ("laplace", "frequency", "bagging", "bagging:leaf=frequency",
                             "m_estimate:m=1"), None),
    "count_x_false": ("", "count_x=false", (), ("laplace", "frequency"), None),
    "min_leaf_1": ("min_leaf=1", "", (), ("laplace", "frequency"), None),
    "min_leaf_5": ("min_leaf=5", "", (), ("laplace", "frequency"), None),
    "min_leaf_10": ("min_leaf=10", "", (), ("laplace", "frequency"), None),
    "binary_splits": ("binary_splits=true", "", (), ("laplace", "frequency"), None),
    "threshold_lower": ("threshold=lower", "", (), ("laplace", "frequency"), None),
    "gini": ("criterion=gini", "", (), ("laplace", "frequency"), None),
    # the paper's protocol: leave-one-out (served by one engine per dataset)
    "loo": ("", "", ("--loo",), ("laplace", "frequency", "bagging", "bagging:leaf=frequency"),
            None),
    "loo_count_x_false": ("", "count_x=false", ("--loo",), ("laplace", "frequency"), None),
}


def spec(name: str, *opts: str) -> str:
    name, _, own = name.partition(":")
    body = ",".join(o for o in (own, *opts) if o)
    return f"{name}:{body}" if body else name


def datasets() -> list[str]:
    return sorted(p.stem for p in DATA_DIR.glob("*.arff"))


def _command(variant: str, dataset: str, methods: list[str], out: Path) -> list[str]:
    extra = VARIANTS[variant][2]
    data = os.path.relpath(DATA_DIR / dataset, REPO)
    cmd = ["treecert", "evaluate", f"{data}.arff"]
    if "--loo" not in extra:
        cmd += ["--folds-file", f"{data}.folds.csv"]
    cmd += list(extra)
    for m in methods:
        cmd += ["--method", m]
    return [*cmd, "-o", os.path.relpath(out, REPO), "-q"]


def _run(cmd: list[str], out: Path, *, dry: bool) -> None:
    print("$", shlex.join(cmd), file=sys.stderr, flush=True)
    if dry or (out / "metrics.csv").exists():
        return
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", *cmd], check=True, cwd=REPO)  # this checkout's
    (out / "wall_seconds.txt").write_text(f"{time.perf_counter() - t0:.1f}\n")


def run_one(variant: str, dataset: str, *, dry: bool) -> Path:
    """The reference trees and TPCE in one evaluate call; a reference added to VARIANTS
    after a directory was made is run on its own into ``<dir>/refs`` (trees only: cheap)."""
    tree, tpce_opts, _, refs, _ = VARIANTS[variant]
    out = WORK / variant / dataset
    methods = [spec(ref, tree) for ref in refs] + [spec("tpce", tree, tpce_opts)]
    if not (out / "metrics.csv").exists():
        _run(_command(variant, dataset, methods, out), out, dry=dry)
        return out
    have = {m for d in _dirs(out) for m in pd.read_csv(d / "metrics.csv")["method"]}
    missing = [m for m in methods if m not in have]
    if missing:
        extra = out / f"refs{len(_dirs(out))}"
        _run(_command(variant, dataset, missing, extra), extra, dry=dry)
    return out


def _dirs(out: Path) -> list[Path]:
    """The run directory and its ``refs*`` directories that hold results."""
    return [d for d in (out, *sorted(out.glob("refs*"))) if (d / "metrics.csv").exists()]


def method_role(method: str) -> str:
    """``laplace:min_leaf=5`` -> ``laplace``; frequency-leaf bagging -> ``bagging_frequency``."""
    role = method.split(":")[0]
    return "bagging_frequency" if role == "bagging" and "leaf=frequency" in method else role


def n_classes(out: Path) -> int:
    header = (out / "predictions.csv").open().readline().strip().split(",")
    return sum(1 for c in header if c.startswith("p_"))


def diagnostics(out: Path) -> dict[str, dict[str, float]]:
    """Per method, from predictions.csv: the Brier score of the true class only
    (``mean (1 - p_true)^2``), the mean probability of the true class on correctly and on
    wrongly predicted instances, and TPCE's share of instances whose K trees disagree."""
    pred = pd.read_csv(out / "predictions.csv")
    pcols = [c for c in pred.columns if c.startswith("p_")]
    labels = [c[2:] for c in pcols]
    res = {}
    for method, g in pred.groupby("method", sort=False):
        idx = g["actual"].astype(str).map({lab: i for i, lab in enumerate(labels)}).to_numpy()
        p_true = g[pcols].to_numpy()[range(len(g)), idx]
        ok = (g["actual"].astype(str) == g["predicted"].astype(str)).to_numpy()
        res[method_role(method)] = {
            "brier_true_only": float(((1 - p_true) ** 2).mean()),
            "p_true_when_right": float(p_true[ok].mean()) if ok.any() else float("nan"),
            "p_true_when_wrong": float(p_true[~ok].mean()) if (~ok).any() else float("nan"),
            "disagree_rate": float(g["tpce_disagree"].mean())
            if "tpce_disagree" in g and g["tpce_disagree"].notna().any() else float("nan"),
        }
    return res


def collect(variants: list[str]) -> pd.DataFrame:
    rows = []
    for variant in variants:
        only = VARIANTS[variant][4]
        for dataset in only or datasets():
            for out in _dirs(WORK / variant / dataset):
                m = pd.read_csv(out / "metrics.csv")
                wall = out / "wall_seconds.txt"
                k = n_classes(out)
                diag = diagnostics(out)
                for _, r in m.iterrows():
                    role = method_role(r["method"])
                    rows.append({"variant": variant, "dataset": dataset, "method": role,
                                 "spec": r["method"], "n_classes": k,
                                 **{x: r[x] for x in METRICS},
                                 "brier_per_class": r["brier"] / k,
                                 **diag.get(role, {}),
                                 "fit_seconds": r["fit_seconds"],
                                 "predict_seconds": r["predict_seconds"],
                                 "evaluate_wall_seconds": float(wall.read_text())
                                 if wall.exists() else float("nan")})
    return pd.DataFrame(rows)


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    from treecert.evaluation import stats

    rows = []
    for variant, g in table.groupby("variant", sort=False):
        wide = {x: g.pivot(index="dataset", columns="method", values=x)
                for x in (*METRICS, "brier_per_class", "brier_true_only")}
        refs = [m for m in ("laplace", "frequency", "m_estimate", "bagging", "bagging_frequency")
                if m in wide["brier"].columns]
        for ref in refs:
            for x in (*METRICS, "brier_per_class", "brier_true_only"):
                w = wide[x][["tpce", ref]].dropna()
                hib = HIGHER.get(x, False)
                wtl = stats.wins_ties_losses(w["tpce"], w[ref], higher_is_better=hib, tol=1e-4)
                rows.append({"variant": variant, "reference": ref, "metric": x,
                             "n_datasets": len(w), "tpce_wins": wtl.wins, "ties": wtl.ties,
                             "ref_wins": wtl.losses,
                             "p_value": stats.wilcoxon_p(w["tpce"], w[ref]),
                             "mean_tpce": w["tpce"].mean(), "mean_ref": w[ref].mean()})
    return pd.DataFrame(rows)


def markdown(summary: pd.DataFrame, table: pd.DataFrame) -> str:
    lines = ["TPCE against the reference with the same tree settings: wins/ties/losses for TPCE "
             "(two-sided Wilcoxon p), and the averages over datasets (TPCE / reference).", "",
             "| variant | vs | n | brier | auc | auc_reliability | mean brier | mean auc "
             "| mean auc_rel |", "|---|---|---:|---|---|---|---|---|---|"]
    for (variant, ref), g in summary.groupby(["variant", "reference"], sort=False):
        g = g.set_index("metric")
        cells = [f"{g.at[x, 'tpce_wins']}/{g.at[x, 'ties']}/{g.at[x, 'ref_wins']} "
                 f"({g.at[x, 'p_value']:.3f})" for x in ("brier", "auc", "auc_reliability")]
        means = [f"{g.at[x, 'mean_tpce']:.3f} / {g.at[x, 'mean_ref']:.3f}"
                 for x in ("brier", "auc", "auc_reliability")]
        lines.append(f"| {variant} | {ref} | {g.at['brier', 'n_datasets']} | "
                     + " | ".join(cells + means) + " |")
    lines += ["", "Brier per dataset (TPCE / Laplace tree with the same settings):", ""]
    variants = list(dict.fromkeys(table["variant"]))
    lines.append("| dataset | " + " | ".join(variants) + " |")
    lines.append("|---|" + "---:|" * len(variants))
    for d in sorted(set(table["dataset"])):
        cells = []
        for v in variants:
            g = table[(table["variant"] == v) & (table["dataset"] == d)].set_index("method")
            cells.append(f"{g.at['tpce', 'brier']:.3f} / {g.at['laplace', 'brier']:.3f}"
                         if {"tpce", "laplace"} <= set(g.index) else "")
        lines.append(f"| {d} | " + " | ".join(cells) + " |")
    secs = table[table["method"] == "tpce"].groupby("variant", sort=False)[
        "evaluate_wall_seconds"].sum()
    lines += ["", "Wall seconds of the evaluate calls per variant: "
              + ", ".join(f"{v} {s:.0f}" for v, s in secs.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    ap.add_argument("--datasets", nargs="+", help="restrict to these datasets")
    ap.add_argument("--skip", nargs="+", default=[], metavar="VARIANT/DATASET",
                    help="leave these (variant, dataset) pairs out, e.g. min_leaf_1/soybean")
    ap.add_argument("--summary-only", action="store_true", help="no new runs")
    ap.add_argument("--dry-run", action="store_true", help="print the commands only")
    add_quick(ap)
    args = ap.parse_args(argv)
    global OUT, WORK
    recorded = OUT / "tpce_variants_metrics.csv"
    if quick(args) and not args.summary_only:
        import tempfile

        OUT = Path(tempfile.mkdtemp(prefix="treecert-tpce-variants-"))
        WORK = OUT / "tmp" / "tpce_variants"
        args.variants, args.datasets = ["count_x_false"], ["iris"]
        print(f"quick: results in {OUT}", file=sys.stderr)
    if not args.summary_only:
        for variant in args.variants:
            for dataset in VARIANTS[variant][4] or datasets():
                if args.datasets and dataset not in args.datasets:
                    continue
                if f"{variant}/{dataset}" in args.skip:
                    continue
                run_one(variant, dataset, dry=args.dry_run)
    if args.dry_run:
        return 0
    table = collect(list(VARIANTS))
    if table.empty and args.summary_only and recorded.exists():
        table = pd.read_csv(recorded)  # no runs here: the recorded ones
        print(f"no runs under {WORK}: the tables of {recorded}", file=sys.stderr)
        print(markdown(summarise(table), table))
        return 0
    if table.empty:
        print(f"tpce_variants.py: nothing to report: no runs under {WORK}", file=sys.stderr)
        return 1
    summary = summarise(table)
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / "tpce_variants_metrics.csv", index=False)
    summary.to_csv(OUT / "tpce_variants.csv", index=False)
    print(markdown(summary, table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
