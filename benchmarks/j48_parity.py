"""docs/j48-parity.md table: treecert against Weka J48 (``-U -M 2 -A``), 10-fold.

For every ``*.arff`` with a ``*.folds.csv`` beside it (default: ``tests/data``),
and every fold id in the folds file, J48 is trained/tested on fold files written by
``peers.weka_fold_files`` and treecert (if importable) on the same rows through its Python API
(``DecisionTree(criterion="gain_ratio", min_leaf=2, leaf="laplace", threshold="lower",
collapse=True)``).
Per-fold rows go to ``benchmarks/results/j48_parity.csv``; a markdown summary goes to stdout.
On fold 0 of a few datasets the per-instance class distributions of J48 are compared with
``predict_proba``: both Weka's printed ``-distribution`` (3 decimals, so differences up to
0.0005 are rounding) and, when ``javac`` is available, full float64 values.

Run from the repo root (needs ``apt-get install weka``; see ``peers.py``)::

    python benchmarks/j48_parity.py                         # all datasets, J48 + treecert
    python benchmarks/j48_parity.py --datasets iris labor   # a subset
    python benchmarks/j48_parity.py --no-treecert           # J48 only
    python benchmarks/j48_parity.py --dist-datasets all     # distribution check everywhere
    python benchmarks/j48_parity.py --quick                 # iris, CSV to a temporary file

Columns of the CSV: dataset, fold, tool, accuracy (% correct on the test fold), leaves, size
(number of nodes), seconds (J48: wall time of the whole java process incl. JVM start and ARFF
parsing; treecert: in-process fit + predict_proba, excluding data loading).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import peers
from run import add_quick, quick

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO / "tests" / "data"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "j48_parity.csv"
DEFAULT_DIST = ("iris", "labor", "credit-g", "vote", "glass", "soybean", "weather.numeric")
FIELDS = ("dataset", "fold", "tool", "accuracy", "leaves", "size", "seconds")
ROUNDING_TOL = 5e-4 + 1e-9  # Weka prints distributions with 3 decimals


def note(msg: str) -> None:
    print(f"note: {msg}", file=sys.stderr, flush=True)


def find_datasets(data_dir: Path, names: list[str] | None) -> list[tuple[str, Path, Path]]:
    found = []
    for arff in sorted(data_dir.glob("*.arff")):
        folds = arff.with_suffix(".folds.csv")
        if folds.exists() and (not names or arff.stem in names):
            found.append((arff.stem, arff, folds))
    if names:
        missing = sorted(set(names) - {n for n, _, _ in found})
        if missing:
            note(f"no such dataset (with folds file) in {data_dir}: {', '.join(missing)}")
    return found


class TreecertRunner:
    """Runs treecert through its Python API; ``None`` from ``load`` if it is not importable."""

    def __init__(self, load_dataset, decision_tree):
        self.load_dataset = load_dataset
        self.DecisionTree = decision_tree
        self._cache: dict[Path, object] = {}

    @classmethod
    def load(cls) -> TreecertRunner | None:
        if str(REPO) not in sys.path:  # fallback: an installed treecert comes first
            sys.path.append(str(REPO))
        try:
            load_dataset = importlib.import_module("treecert.data.loading").load_dataset
            decision_tree = importlib.import_module("treecert.tree.classifier").DecisionTree
        except ImportError as exc:
            note(f"treecert API not importable ({exc}); reporting J48 only")
            return None
        except Exception as exc:  # a module mid-edit may fail in other ways
            note(f"importing treecert failed ({type(exc).__name__}: {exc}); J48 only")
            return None
        return cls(load_dataset, decision_tree)

    def dataset(self, path: Path):
        if path not in self._cache:
            self._cache[path] = self.load_dataset(str(path))
        return self._cache[path]

    def run_fold(self, path: Path, folds: np.ndarray, fold: int) -> dict:
        ds = self.dataset(path)
        train_idx, test_idx = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        train, test = ds.subset(train_idx), ds.subset(test_idx)
        t0 = time.perf_counter()
        model = self.DecisionTree(
            criterion="gain_ratio", min_leaf=2, leaf="laplace", threshold="lower",
            collapse=True,  # J48 collapses subtrees even with -U
        ).fit(train)
        proba = np.asarray(model.predict_proba(test), dtype=float)
        secs = time.perf_counter() - t0
        y = np.asarray(test.y)
        w = getattr(test, "weights", None)
        w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
        known = y >= 0  # Weka skips test instances with a missing class
        hit = (proba.argmax(axis=1) == y) & known
        total = w[known].sum()
        return {
            "accuracy": 100.0 * w[hit].sum() / total if total else float("nan"),
            "correct": float(w[hit].sum()),
            "total": float(total),
            "leaves": int(model.tree_.n_leaves),
            "size": int(model.tree_.n_nodes),
            "seconds": secs,
            "proba": proba,
        }


def fmt(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "n/a"
    return f"{x:.{digits}f}"


def summarize(rows: list[dict], datasets: list[str], sizes: dict[str, int]) -> str:
    """Markdown table: per dataset, mean over folds of accuracy / leaves / size per tool and
    the pooled accuracy (all folds' correct / all folds' instances, what Weka's CV reports)."""
    out = [
        "| dataset | n | J48 acc % | treecert acc % | Δ acc | J48 pooled % | "
        "treecert pooled % | J48 leaves | treecert leaves | J48 size | treecert size | "
        "J48 s/fold |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def mean(name, tool, key):
        v = [
            r[key]
            for r in rows
            if r["dataset"] == name and r["tool"] == tool and r.get(key) is not None
        ]
        return float(np.mean(v)) if v else None

    def pooled(name, tool):
        sel = [r for r in rows if r["dataset"] == name and r["tool"] == tool]
        total = sum(r["total"] for r in sel)
        return 100.0 * sum(r["correct"] for r in sel) / total if total else None

    for name in datasets:
        if not any(r["dataset"] == name and r["tool"] == "j48" for r in rows):
            continue
        ja, ta = mean(name, "j48", "accuracy"), mean(name, "treecert", "accuracy")
        out.append(
            "| "
            + " | ".join(
                [
                    name,
                    str(sizes[name]),
                    fmt(ja),
                    fmt(ta),
                    fmt(ta - ja) if ta is not None else "n/a",
                    fmt(pooled(name, "j48")),
                    fmt(pooled(name, "treecert")),
                    fmt(mean(name, "j48", "leaves"), 1),
                    fmt(mean(name, "treecert", "leaves"), 1),
                    fmt(mean(name, "j48", "size"), 1),
                    fmt(mean(name, "treecert", "size"), 1),
                    fmt(mean(name, "j48", "seconds"), 3),
                ]
            )
            + " |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    ap.add_argument("--datasets", nargs="*", help="dataset stems (default: all)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="per-fold CSV")
    ap.add_argument("--no-treecert", action="store_true", help="run J48 only")
    ap.add_argument(
        "--dist-datasets",
        nargs="*",
        default=list(DEFAULT_DIST),
        help="datasets for the fold-0 distribution check ('all', or none to skip)",
    )
    ap.add_argument("--options", default="-U -M 2 -A", help="J48 options")
    add_quick(ap)
    args = ap.parse_args(argv)
    if quick(args):
        args.datasets, args.dist_datasets = ["iris"], ["iris"]
        args.out = Path(tempfile.mkdtemp(prefix="treecert-j48-parity-")) / "j48_parity.csv"

    if not peers.weka_available():
        print(f"error: java or {peers.WEKA_JAR} missing (apt-get install weka)", file=sys.stderr)
        return 2
    options = tuple(args.options.split())
    datasets = find_datasets(args.data_dir, args.datasets)
    if not datasets:
        print(f"error: no datasets found in {args.data_dir}", file=sys.stderr)
        return 2
    tc = None if args.no_treecert else TreecertRunner.load()
    dist_names = (
        {n for n, _, _ in datasets} if args.dist_datasets == ["all"] else set(args.dist_datasets)
    )

    rows: list[dict] = []
    sizes: dict[str, int] = {}
    dist_report: list[str] = []
    print(
        f"Weka {peers.weka_version()} J48 {' '.join(options)}; treecert: {'API' if tc else 'n/a'}",
        file=sys.stderr,
    )
    with tempfile.TemporaryDirectory(prefix="j48parity-") as tmp:
        for name, arff, folds_csv in datasets:
            folds = peers.read_folds(folds_csv)
            sizes[name] = len(folds)
            tc_ok = tc is not None
            t0 = time.perf_counter()
            for fold in sorted(set(folds.tolist())):
                train, test = peers.weka_fold_files(arff, folds_csv, fold, tmp)
                j = peers.run_j48(train, test, options)
                rows.append({"dataset": name, "fold": fold, "tool": "j48", **j})
                if tc_ok:
                    try:
                        r = tc.run_fold(arff, folds, fold)
                    except Exception as exc:
                        note(f"treecert failed on {name} fold {fold}: {type(exc).__name__}: {exc}")
                        traceback.print_exc(limit=3, file=sys.stderr)
                        tc_ok = False
                    else:
                        rows.append({"dataset": name, "fold": fold, "tool": "treecert", **r})
                if fold == 0 and name in dist_names:
                    dist_report.append(
                        compare_distributions(
                            name, train, test, options, rows[-1] if tc_ok else None
                        )
                    )
            print(
                f"  {name}: {len(set(folds.tolist()))} folds in {time.perf_counter() - t0:.1f}s",
                file=sys.stderr,
                flush=True,
            )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            wr.writerow({k: (f"{r[k]:.6g}" if isinstance(r[k], float) else r[k]) for k in FIELDS})

    print(f"## J48 ({' '.join(options)}) vs treecert, 10-fold (fixed folds)\n")
    print(summarize(rows, [n for n, _, _ in datasets], sizes))
    print(
        "\nacc = mean of per-fold test accuracy; pooled = total correct / total instances "
        "over the folds; size = number of nodes."
    )
    if dist_report:
        print("\n## Fold 0: J48 class distributions vs treecert predict_proba\n")
        print(
            "| dataset | n test | K | max abs Δ (printed, 3 dp) | max abs Δ (exact) | "
            "argmax agree | verdict |"
        )
        print("|---|---:|---:|---:|---:|---:|---|")
        print("\n".join(dist_report))
        print(
            f"\n'printed' uses Weka's -distribution output, rounded to 3 decimals (match = "
            f"Δ ≤ {ROUNDING_TOL:.4f}); 'exact' uses a compiled helper printing float64."
        )
    print(f"\nper-fold CSV: {args.out}")
    return 0


def compare_distributions(
    name: str, train: Path, test: Path, options: tuple[str, ...], tc_row: dict | None
) -> str:
    printed = peers.j48_distributions(train, test, options)
    try:
        exact = peers.j48_distributions_exact(train, test, options)
    except Exception as exc:  # no javac, etc.
        note(f"exact distributions unavailable: {exc}")
        exact = None
    n, k = printed.shape
    if exact is not None and np.abs(exact - printed).max() > ROUNDING_TOL:
        note(f"{name}: printed and exact J48 distributions disagree beyond rounding")
    if tc_row is None or "proba" not in tc_row:
        return f"| {name} | {n} | {k} | n/a | n/a | n/a | treecert n/a |"
    proba = tc_row["proba"]
    if proba.shape != printed.shape:
        return (
            f"| {name} | {n} | {k} | shape {proba.shape} vs {printed.shape} | n/a | n/a "
            f"| MISMATCH |"
        )
    d_printed = float(np.abs(proba - printed).max())
    ref = exact if exact is not None else printed
    d_exact = float(np.abs(proba - exact).max()) if exact is not None else None
    agree = float(np.mean(proba.argmax(1) == ref.argmax(1)))
    ok = (d_exact <= 1e-9) if d_exact is not None else (d_printed <= ROUNDING_TOL)
    return (
        f"| {name} | {n} | {k} | {d_printed:.4g} | "
        f"{'n/a' if d_exact is None else f'{d_exact:.3g}'} | {agree:.3f} | "
        f"{'match' if ok else 'DIFFER'} |"
    )


if __name__ == "__main__":
    sys.exit(main())
