"""docs/pruning.md table: tree sizes of Weka J48's error-based pruning against ``ebp``.

For every ``*.arff`` in the datasets directory (default ``tests/data``),
J48 (Weka 3.6, ``/usr/share/java/weka.jar``) is trained on the whole file with
``-U -M 2`` (unpruned, but collapsed), ``-C 0.25 -M 2`` (the default: error-based pruning
with subtree raising) and ``-C 0.25 -M 2 -S`` (no raising), e.g.::

    java -cp /usr/share/java/weka.jar weka.classifiers.trees.J48 -C 0.25 -M 2 -t F.arff -T F.arff

and treecert grows ``--criterion gain_ratio --threshold lower --collapse`` (J48's learner)
and prunes it with ``ebp`` (``--cf 0.25``), with and without raising. Pruning can only agree
where the unpruned trees agree, so the unpruned sizes are reported too.

One more column, ``ebp, J48 thresholds``: treecert's ``--threshold lower`` puts a numeric
threshold at the largest value *at the node* below the cut, J48 at the largest value of the
*whole training set* below the midpoint. Both split the node's rows identically, but subtree
raising sends other rows through the raised tests, and those rows can fall between the two
thresholds. The column re-runs ``ebp`` after moving every threshold to J48's value.

Run from the repo root::

    python benchmarks/prune_j48.py                 # whole files, markdown to stdout
    python benchmarks/prune_j48.py --folds         # also every 10-fold training set
    python benchmarks/prune_j48.py --quick         # iris, CSVs in a temporary directory

Results: ``benchmarks/results/prune_j48.csv`` (and ``prune_j48_folds.csv``).
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import peers
from run import add_quick, quick

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "tests" / "data"
OUT = REPO / "benchmarks" / "results"
J48_OPTIONS = {
    "j48_unpruned": ("-U", "-M", "2"),
    "j48_c25": ("-C", "0.25", "-M", "2"),
    "j48_c25_noraise": ("-C", "0.25", "-M", "2", "-S"),
}
FIELDS = ("dataset", "fold", "j48_unpruned", "treecert_unpruned", "j48_c25", "ebp",
          "ebp_j48_thresholds", "j48_c25_noraise", "ebp_noraise")


def j48_thresholds(tree, data):
    """The tree with every numeric threshold moved to J48's value (see the module doc)."""
    from treecert.pruning.ebp import _build_nodes, _Router

    labelled = np.flatnonzero(data.y >= 0)
    router = _Router(tree, data.X, data.y, tree.n_classes)
    root = _build_nodes(tree, router, (labelled, data.weights[labelled].astype(float)))
    thr = tree.threshold.copy()
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        s = node.src
        if node.children and not np.isnan(tree.threshold[s]):
            f = tree.feature[s]
            vals = data.X[node.idx, f]
            above = vals[vals > tree.threshold[s]]
            mid = (tree.threshold[s] + above.min()) / 2
            column = data.X[labelled, f]
            thr[s] = column[column <= mid].max()
    return replace(tree, threshold=thr, _cache={})


def treecert_sizes(path: Path) -> dict:
    from treecert.data.loading import load_dataset
    from treecert.pruning.ebp import prune_ebp
    from treecert.tree.classifier import DecisionTree

    data = load_dataset(path)
    tree = DecisionTree(criterion="gain_ratio", threshold="lower", collapse=True,
                        min_leaf=2).fit(data).tree_
    return {
        "treecert_unpruned": tree.n_leaves,
        "ebp": prune_ebp(tree, 0.25, data=data)[0].n_leaves,
        "ebp_j48_thresholds": prune_ebp(j48_thresholds(tree, data), 0.25, data=data)[0].n_leaves,
        "ebp_noraise": prune_ebp(tree, 0.25, subtree_raising=False)[0].n_leaves,
    }


def j48_sizes(path: Path) -> dict:
    return {name: peers.run_j48(path, path, opts)["leaves"] for name, opts in J48_OPTIONS.items()}


def markdown(rows: list[dict]) -> str:
    head = ("| dataset | unpruned J48 | unpruned treecert | J48 -C 0.25 | ebp | ebp, J48 "
            "thresholds | J48 -S | ebp --no-raise |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| " + " | ".join(str(r[k]) for k in FIELDS if k != "fold") + " |")
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    same = [r for r in rows if r["j48_unpruned"] == r["treecert_unpruned"]]
    def n_eq(a, b):
        return sum(r[a] == r[b] for r in same)
    return (f"{len(same)} of {len(rows)} trees have the same unpruned size; among them "
            f"J48 -C 0.25 = ebp in {n_eq('j48_c25', 'ebp')}, = ebp with J48 thresholds in "
            f"{n_eq('j48_c25', 'ebp_j48_thresholds')}, J48 -S = ebp --no-raise in "
            f"{n_eq('j48_c25_noraise', 'ebp_noraise')}.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--folds", action="store_true", help="also every 10-fold training set")
    ap.add_argument("--datasets", nargs="*", help="dataset stems (default: all)")
    add_quick(ap)
    args = ap.parse_args()
    global OUT
    if quick(args):
        args.datasets = ["iris"]
        OUT = Path(tempfile.mkdtemp(prefix="treecert-prune-j48-"))
    if not peers.weka_available():
        sys.exit("Weka is not available (apt-get install weka).")
    files = [f for f in sorted(args.data_dir.glob("*.arff"))
             if args.datasets is None or f.stem in args.datasets]
    if not files:
        sys.exit(f"prune_j48.py: no dataset to run in {args.data_dir}")
    rows = []
    for path in files:
        rows.append({"dataset": path.stem, "fold": "all", **j48_sizes(path),
                     **treecert_sizes(path)})
        print(f"note: {path.stem} done", file=sys.stderr)
    write_csv(OUT / "prune_j48.csv", rows)
    print(f"<!-- generated by benchmarks/prune_j48.py; Weka {peers.weka_version()} -->\n")
    print(markdown(rows))
    print()
    print(summary(rows))
    if args.folds:
        fold_rows = []
        with tempfile.TemporaryDirectory() as tmp:
            for path in files:
                folds_csv = path.with_suffix(".folds.csv")
                if not folds_csv.exists():
                    continue
                for k in np.unique(peers.read_folds(folds_csv)):
                    train, _ = peers.weka_fold_files(path, folds_csv, int(k), tmp)
                    fold_rows.append({"dataset": path.stem, "fold": int(k), **j48_sizes(train),
                                      **treecert_sizes(train)})
                print(f"note: {path.stem} folds done", file=sys.stderr)
        write_csv(OUT / "prune_j48_folds.csv", fold_rows)
        print()
        print("10-fold training sets: " + summary(fold_rows))


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
