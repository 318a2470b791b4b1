"""docs/j48-parity.md tables: treecert ``--j48`` against Weka J48 3.6.14, trees and 10-fold CV.

For every ``*.arff`` with a ``*.folds.csv`` beside it (default: ``tests/data``), in two J48
settings — its defaults ``-C 0.25 -M 2`` and ``-U -M 2 -A`` (unpruned, Laplace leaves) —
against treecert through its Python API with the settings ``--j48`` sets
(``DecisionTree(criterion="gain_ratio", min_leaf=2, threshold="j48", collapse=True)``, then
``prune_ebp(tree, 0.25, data=train)`` for the defaults; ``leaf="laplace"`` and no pruning
for ``-U -A``):

* the tree grown on the whole file: leaves, size and the printed tree line for line
  (J48's printout against treecert's text, thresholds and leaf weights included);
* every fold of ``NAME.folds.csv`` (J48 on fold files written by ``peers.weka_fold_files``):
  accuracy, leaves, size, and whether J48 printed treecert's tree;
* with the defaults, J48's own ``-x 10 -s 1`` cross-validation against treecert in the
  folds :func:`treecert.data.folds.weka_folds` makes (``evaluate --weka-folds``);
* on fold 0 of a few datasets (``-U -A``) the per-instance class distributions of J48 are
  compared with ``predict_proba``: Weka's printed ``-distribution`` (3 decimals, so
  differences up to 0.0005 are rounding) and, when ``javac`` is available, float64 values.

Per-fold rows go to ``benchmarks/results/j48_parity.csv``; markdown to stdout.

Run from the repo root (needs ``apt-get install weka``; see ``peers.py``)::

    python benchmarks/j48_parity.py                         # all datasets
    python benchmarks/j48_parity.py --datasets iris labor   # a subset
    python benchmarks/j48_parity.py --dist-datasets all     # distribution check everywhere
    python benchmarks/j48_parity.py --quick                 # iris, 2 folds, CSV to a temp file

Columns of the CSV: dataset, setting, fold, tool, accuracy (% correct on the test fold),
leaves, size (number of nodes), same_tree (treecert: J48 printed its tree), seconds (J48:
wall time of the whole java process incl. JVM start; treecert: in-process fit, pruning
and predict_proba, excluding data loading).
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
FIELDS = ("dataset", "setting", "fold", "tool", "accuracy", "leaves", "size", "same_tree",
          "seconds")
#: J48's options per setting of the tables.
SETTINGS = {"default": ("-C", "0.25", "-M", "2"), "unpruned": ("-U", "-M", "2", "-A")}
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

    def fit(self, train, setting: str):
        """(tree, leaf estimate) of ``--j48`` on ``train``: J48's defaults, or ``-U -A``."""
        from treecert.pruning.ebp import prune_ebp

        tree = self.DecisionTree(criterion="gain_ratio", min_leaf=2, threshold="j48",
                                 collapse=True).fit(train).tree_
        if setting == "default":
            return prune_ebp(tree, 0.25, data=train)[0], "frequency"
        return tree, "laplace"

    def tree_lines(self, path: Path, setting: str, train=None) -> dict:
        """Leaves, size and printed lines of the tree on ``train`` (default: all of ``path``)."""
        from treecert.tree.render import to_text

        ds = self.dataset(path) if train is None else train
        tree, _ = self.fit(ds, setting)
        return {"leaves": int(tree.n_leaves), "size": int(tree.n_nodes),
                "lines": peers.j48_tree_lines(to_text(tree, ds.schema))}

    def run_fold(self, path: Path, folds: np.ndarray, fold: int, setting: str) -> dict:
        ds = self.dataset(path)
        train_idx, test_idx = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        train, test = ds.subset(train_idx), ds.subset(test_idx)
        t0 = time.perf_counter()
        tree, leaf = self.fit(train, setting)
        proba = np.asarray(tree.predict_proba(test.X, leaf), dtype=float)
        secs = time.perf_counter() - t0
        y = np.asarray(test.y)
        w = np.asarray(test.weights, dtype=float)
        known = y >= 0  # Weka skips test instances with a missing class
        hit = (proba.argmax(axis=1) == y) & known
        total = w[known].sum()
        return {
            "accuracy": 100.0 * w[hit].sum() / total if total else float("nan"),
            "correct": float(w[hit].sum()),
            "total": float(total),
            "leaves": int(tree.n_leaves),
            "size": int(tree.n_nodes),
            "seconds": secs,
            "proba": proba,
            "tree": tree,
        }

    def weka_cv(self, path: Path, n_folds: int = 10, seed: int = 1) -> dict:
        """Correct and total over the folds of Weka's ``-x n_folds -s seed`` (the defaults)."""
        from treecert.data.folds import weka_folds

        folds = weka_folds(self.dataset(path).y, n_folds, seed)
        runs = [self.run_fold(path, folds, k, "default") for k in range(n_folds)]
        correct, total = sum(r["correct"] for r in runs), sum(r["total"] for r in runs)
        return {"correct": correct, "total": total, "accuracy": 100.0 * correct / total}


def fmt(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "n/a"
    return f"{x:.{digits}f}"


def _sel(rows: list[dict], name: str, setting: str, tool: str) -> list[dict]:
    return [r for r in rows
            if r["dataset"] == name and r["setting"] == setting and r["tool"] == tool]


def _mean(rows: list[dict], key: str) -> float | None:
    v = [r[key] for r in rows if r.get(key) is not None]
    return float(np.mean(v)) if v else None


def _pooled(rows: list[dict]) -> float | None:
    """All folds' correct / all folds' instances, what Weka's CV reports."""
    total = sum(r["total"] for r in rows)
    return 100.0 * sum(r["correct"] for r in rows) / total if total else None


def _same(a, b) -> str:
    return "=" if a is not None and a == b else "≠"


def summarize_default(rows: list[dict], full: dict, wekacv: dict, datasets: list[str],
                      sizes: dict[str, int]) -> str:
    """Table of the defaults: the whole file's tree, J48's own CV and the shared folds."""
    out = [
        "| dataset | n | leaves J48 / treecert | size J48 / treecert | printed tree (-C 0.25) "
        "| printed tree (-U) | CV -x 10 -s 1: J48 % / treecert % | shared folds: J48 % / "
        "treecert % | folds with J48's tree |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for name in datasets:
        if (name, "default") not in full:
            continue
        jf, tf = full[name, "default"]
        ju, tu = full[name, "unpruned"]
        jr, tr = _sel(rows, name, "default", "j48"), _sel(rows, name, "default", "treecert")
        jc, tc = wekacv.get(name, (None, None))
        out.append("| " + " | ".join([
            name, str(sizes[name]),
            f"{jf['leaves']} {_same(jf['leaves'], tf.get('leaves'))} {tf.get('leaves', 'n/a')}",
            f"{jf['size']} {_same(jf['size'], tf.get('size'))} {tf.get('size', 'n/a')}",
            _lines_verdict(jf, tf), _lines_verdict(ju, tu),
            f"{fmt(jc and jc['accuracy'])} {_same(jc and jc['correct'], tc and tc['correct'])} "
            f"{fmt(tc and tc['accuracy'])}",
            f"{fmt(_pooled(jr))} {_same(_pooled(jr), _pooled(tr))} {fmt(_pooled(tr))}",
            f"{sum(r['same_tree'] for r in tr)} of {len(jr)}",
        ]) + " |")
    return "\n".join(out)


def _lines_verdict(j48: dict, ours: dict) -> str:
    if "lines" not in ours:
        return "n/a"
    cuts = sum(" <= " in ln for ln in j48["lines"])
    if j48["lines"] == ours["lines"]:
        n = len(j48["lines"])
        return f"identical ({n} line{'s' * (n != 1)}, {cuts} cut{'s' * (cuts != 1)})"
    at = next((i for i, (a, b) in enumerate(zip(j48["lines"], ours["lines"], strict=False))
               if a != b), min(len(j48["lines"]), len(ours["lines"])))
    return f"differs from line {at + 1}"


def summarize(rows: list[dict], datasets: list[str], sizes: dict[str, int]) -> str:
    """Markdown table of ``-U -A``: per dataset, mean over folds of accuracy / leaves / size
    per tool and the pooled accuracy."""
    out = [
        "| dataset | n | J48 acc % | treecert acc % | Δ acc | J48 pooled % | "
        "treecert pooled % | J48 leaves | treecert leaves | J48 size | treecert size | "
        "J48 s/fold |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in datasets:
        jr, tr = _sel(rows, name, "unpruned", "j48"), _sel(rows, name, "unpruned", "treecert")
        if not jr:
            continue
        ja, ta = _mean(jr, "accuracy"), _mean(tr, "accuracy")
        out.append("| " + " | ".join([
            name, str(sizes[name]), fmt(ja), fmt(ta),
            fmt(ta - ja) if ta is not None else "n/a",
            fmt(_pooled(jr)), fmt(_pooled(tr)),
            fmt(_mean(jr, "leaves"), 1), fmt(_mean(tr, "leaves"), 1),
            fmt(_mean(jr, "size"), 1), fmt(_mean(tr, "size"), 1),
            fmt(_mean(jr, "seconds"), 3),
        ]) + " |")
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
    add_quick(ap)
    args = ap.parse_args(argv)
    max_folds = None
    if quick(args):
        args.datasets, args.dist_datasets, max_folds = ["iris"], ["iris"], 2
        args.out = Path(tempfile.mkdtemp(prefix="treecert-j48-parity-")) / "j48_parity.csv"

    if not peers.weka_available():
        print(f"error: java or {peers.WEKA_JAR} missing (apt-get install weka)", file=sys.stderr)
        return 2
    datasets = find_datasets(args.data_dir, args.datasets)
    if not datasets:
        print(f"error: no datasets found in {args.data_dir}", file=sys.stderr)
        return 2
    tc = None if args.no_treecert else TreecertRunner.load()
    dist_names = (
        {n for n, _, _ in datasets} if args.dist_datasets == ["all"] else set(args.dist_datasets)
    )

    rows: list[dict] = []
    full: dict[tuple[str, str], tuple[dict, dict]] = {}
    wekacv: dict[str, tuple[dict, dict | None]] = {}
    sizes: dict[str, int] = {}
    dist_report: list[str] = []
    print(f"Weka {peers.weka_version()} J48; treecert: {'API' if tc else 'n/a'}",
          file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="j48parity-") as tmp:
        for name, arff, folds_csv in datasets:
            folds = peers.read_folds(folds_csv)
            sizes[name] = len(folds)
            t0 = time.perf_counter()
            try:
                for setting, options in SETTINGS.items():
                    full[name, setting] = (peers.run_j48_tree(arff, options),
                                           tc.tree_lines(arff, setting) if tc else {})
                wekacv[name] = (peers.run_j48_cv(arff, SETTINGS["default"]),
                                tc.weka_cv(arff) if tc else None)
                for fold in sorted(set(folds.tolist()))[:max_folds]:
                    train, test = peers.weka_fold_files(arff, folds_csv, fold, tmp)
                    for setting, options in SETTINGS.items():
                        j = peers.run_j48(train, test, options)
                        rows.append({"dataset": name, "setting": setting, "fold": fold,
                                     "tool": "j48", **j})
                        if tc is None:
                            continue
                        r = tc.run_fold(arff, folds, fold, setting)
                        lines = peers.j48_tree_lines(_tree_text(r.pop("tree"), tc, arff))
                        r["same_tree"] = lines == peers.j48_tree_lines(j["output"])
                        rows.append({"dataset": name, "setting": setting, "fold": fold,
                                     "tool": "treecert", **r})
                        if fold == 0 and setting == "unpruned" and name in dist_names:
                            dist_report.append(compare_distributions(
                                name, train, test, options, rows[-1]))
            except Exception as exc:  # report the dataset, keep the others
                note(f"{name} failed: {type(exc).__name__}: {exc}")
                traceback.print_exc(limit=3, file=sys.stderr)
            print(f"  {name}: {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            wr.writerow({k: (f"{r[k]:.6g}" if isinstance(r.get(k), float) else r.get(k, ""))
                         for k in FIELDS})

    names = [n for n, _, _ in datasets]
    print("## J48 -C 0.25 -M 2 (its defaults) vs treecert --j48\n")
    print(summarize_default(rows, full, wekacv, names, sizes))
    print("\n'=' marks equal values, '≠' different ones; CV % = all folds' correct / all "
          "instances. printed tree: J48's printout against treecert's text (`treecert show` "
          "without its probabilities), line for line, on the whole file; -U with -M 2.")
    print("\n## J48 (-U -M 2 -A) vs treecert, 10-fold (shared folds)\n")
    print(summarize(rows, names, sizes))
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
    return 0 if rows else 1


def _tree_text(tree, tc: TreecertRunner, arff: Path) -> str:
    from treecert.tree.render import to_text

    return to_text(tree, tc.dataset(arff).schema)


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
