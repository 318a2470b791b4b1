"""How much of the Venn machine's forest repeats the tree on D (issue #13, vote's aim).

With unknown values the Venn machine grows every job's whole tree on D ∪ {(x, j)}
(:mod:`treecert.transductive.venn_forest`): x changes the branch fractions of the rows with
an unknown value at each node of its path, so the subtrees hanging off that path differ
from D's in their weights, though mostly not in their tests. A device that certified D's
tests under such weight changes (as the walk certifies them under x) could skip the
searches of the forest nodes that keep D's test at the same path, and no others. This
counts them, for one fold's test rows::

    python benchmarks/venn_forest_reuse.py vote soybean [--fold 0]

Job-tree nodes: every node of every job's tree (a node shared by several trees counted in
each); forest nodes: the distinct nodes the forest grows (each searched once). A node
"keeps D's test" when D's tree has a node at the same path (the same branches from the
root, every test above it kept too) with the same test, or both are leaves.
"""

from __future__ import annotations

import argparse

import numpy as np
from venn_cost import data_with_folds


def node_test(forest, u: int) -> tuple:
    """Node u's test: (feature, threshold or None); (-1, None) for a leaf."""
    t = forest.threshold[u]
    return int(forest.feature[u]), None if np.isnan(t) else float(t)


def _kids(forest, u: int) -> np.ndarray:
    return forest.kids[forest.kid_ptr[u]:forest.kid_ptr[u + 1]]


def count(name: str, fold: int) -> tuple[int, int, int, int]:
    """(job-tree nodes, of them keeping D's test, forest nodes, of them keeping it)."""
    import treecert.methods.venn_fast as venn_fast
    from treecert.methods import make_method
    from treecert.transductive.venn_forest import grow_forest

    data, ids = data_with_folds(name)
    train = data.subset(np.flatnonzero(ids != fold))
    test = data.subset(np.flatnonzero(ids == fold))
    grown = []

    def keep(finder, roots, rank=None):
        forest = grow_forest(finder, roots, rank)
        grown.append((finder, roots, rank, forest))
        return forest

    venn_fast.grow_forest = keep
    try:
        make_method("venn").fit(train).predict(test)
    finally:
        venn_fast.grow_forest = grow_forest
    n = train.n_samples
    totals = [0, 0, 0, 0]
    for finder, roots, rank, forest in grown:
        base = grow_forest(finder, [(np.arange(n), np.asarray(train.weights, float))], rank)
        jobs = len(roots) - (roots[-1][0].size == n)  # the first batch also grows D's tree
        seen: dict[int, bool] = {}
        for job in range(jobs):
            stack = [(job, 0)]  # (forest node, D's node at the same path or -1)
            while stack:
                u, v = stack.pop()
                same = v >= 0 and node_test(forest, u) == node_test(base, v)
                totals[0] += 1
                totals[1] += same
                seen.setdefault(u, same)
                if forest.feature[u] < 0:
                    continue
                ku = _kids(forest, u)
                kv = _kids(base, v) if same else ()
                stack += [(int(c), int(kv[b]) if len(kv) == len(ku) else -1)
                          for b, c in enumerate(ku)]
        totals[2] += len(seen)
        totals[3] += sum(seen.values())
    return tuple(totals)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--fold", type=int, default=0)
    args = ap.parse_args()
    for name in args.datasets:
        t, ts, f, fs = count(name, args.fold)
        print(f"{name}, fold {args.fold}: job-tree nodes {t}, keeping D's test {ts} "
              f"({ts / t:.1%}); forest nodes {f}, keeping D's test {fs} ({fs / f:.1%})",
              flush=True)


if __name__ == "__main__":
    main()
