"""How much split searching the Venn machine's job trees hold beyond a plain tree's
(issue #13, the aim "the Venn machine ≤ 5× a plain tree's CV").

The Venn machine needs every job's whole tree on D ∪ {(x, j)} (all n + 1 forecasts), so a
job tree's node whose training rows are not a node of D's tree must be searched, or its test
proved by a certificate. This grows every job's tree one at a time (the naive reference,
``grow`` on D ∪ {x}) for one fold's test rows, records each searched node — its training
rows and weights without x ("D-part") and whether it holds x — and counts, in rows searched
(each searched node costs its D-part's rows × the attributes in a search; the attributes are
the same for every node, so rows are the unit):

- ``plain``: the rows of the searched nodes of D's tree — a plain tree's search work;
- ``new``: the rows of the *distinct* D-parts (per fold) that D's tree does not search,
  summed once each — perfect memoisation across every job of the fold;
- ``new, test changed``: the same, only for nodes whose chosen test differs from that of D's
  node at the same path (the same branches from the root, every test above kept) or that
  have no such node: what remains if a certificate proved every other test for free;
- ``x on D's rows``: searched nodes holding x whose D-part *is* a node of D's tree, per job
  (not shared: x differs), with the test changed — the engine scans their cuts per job
  (D's table shared, x added; a bound might skip some cuts, so this is not a floor).

The floor ``(plain + new) / plain`` is the search work of an engine that searches each new
row set exactly once and serves every node holding x for free; ``(plain + new changed) /
plain`` the same with a free, perfect certificate; the last column adds the per-job scans of
``x on D's rows`` to the second. None counts the walk, the rows'
forecasts, the MDL discretisation or any per-call cost. Rows are a model of cost, not a
time: a search's cost per row differs between nodes (numeric columns sort, nominal ones
tally, and the engine's searches share tallies and tables between jobs), so a measured time
ratio can fall below these floors. What they say is how much *new* searching the method
holds: where the second is above 5, meeting the aim needs each new row searched for less
than a plain tree's row costs, not only fewer searches::

    python benchmarks/venn_work_floor.py segment-challenge credit-g vote [--fold all] [--rows 0]

``--tpce``: the same for TPCE, which grows only the nodes holding x (x's path).
``--rows N``: the first N test rows of the fold only (0: all; the counts then cover fewer
jobs and are printed as they are, not scaled).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from venn_cost import data_with_folds
from venn_forest_reuse import node_test as _test


def _key(rows: np.ndarray, w: np.ndarray) -> bytes:
    return rows.tobytes() + b"|" + w.tobytes()


def _kids(tree, u: int) -> np.ndarray:
    return tree.children[tree.children_ptr[u]:tree.children_ptr[u + 1]]


class _Recorder:
    """Wraps a finder's batched evaluation to record the keys of the nodes it searches."""

    def __init__(self, finder) -> None:
        self.inner, self.searched = finder._evaluate, set()
        finder._evaluate = self

    def __call__(self, batch):
        seg = np.asarray(batch.seg)
        for g in range(seg.size - 1):
            lo, hi = int(seg[g]), int(seg[g + 1])
            self.searched.add(_key(batch.rows[lo:hi], batch.w[lo:hi]))
        return self.inner(batch)


def _nodes(grown, searched: set, n: int):
    """Per node: (searched, D-part key, D-part rows, holds x)."""
    out = []
    for u in range(grown.feature.size):
        lo, hi = grown.rows_ptr[u], grown.rows_ptr[u + 1]
        rows, w = grown.rows_idx[lo:hi], grown.rows_w[lo:hi]
        d = rows != n
        out.append((_key(rows, w) in searched, _key(rows[d], w[d]), int(d.sum()),
                    bool((~d).any())))
    return out


def count(name: str, fold: str, n_rows: int, path_only: bool = False) -> dict:
    """The counts of fold ``fold`` of ``name``, or of every fold summed (``all``)."""
    data, ids = data_with_folds(name)
    folds = np.unique(ids) if fold == "all" else [int(fold)]
    totals: dict[str, int] = {}
    for f in folds:
        for k, v in _count_fold(data, ids, int(f), n_rows, path_only).items():
            totals[k] = totals.get(k, 0) + v
    return totals


def _count_fold(data, ids, fold: int, n_rows: int, path_only: bool) -> dict:
    from treecert.methods import make_method
    from treecert.transductive.engine import TransductiveEngine
    from treecert.tree.grow import grow

    train = data.subset(np.flatnonzero(ids != fold))
    test = data.subset(np.flatnonzero(ids == fold))
    learner = make_method("tpce" if path_only else "venn").new_tree()
    eng = TransductiveEngine(train, learner)
    rec = _Recorder(eng.finder)
    n, K = eng.n, eng.n_classes
    base = grow(eng.finder, np.arange(n), eng.w[:n])
    base_nodes = _nodes(base, rec.searched, n)
    base_keys = {k for s, k, _r, _x in base_nodes if s}
    plain = sum(r for s, _k, r, _x in base_nodes if s)
    new: dict[bytes, int] = {}
    new_changed: dict[bytes, int] = {}
    x_changed = jobs = 0
    X = test.X if not n_rows else test.X[:n_rows]
    for x in X:
        for j in range(K):
            jobs += 1
            rec.searched = set()
            eng._set_instance(x, j, 1.0)
            grown = grow(eng.finder, np.arange(n + 1), eng.w)
            nodes = _nodes(grown, rec.searched, n)
            stack = [(0, 0)]  # (job-tree node, D's node at the same path or -1)
            while stack:
                u, v = stack.pop()
                searched, key, rows, has_x = nodes[u]
                same = v >= 0 and _test(grown, u) == _test(base, v)
                if searched and key not in base_keys:
                    new[key] = rows
                    if not same:
                        new_changed[key] = rows
                elif searched and has_x and not same:
                    x_changed += rows
                ku = _kids(grown, u)
                if path_only:  # TPCE: x's leaves only, so only the nodes holding x
                    keep = [b for b, c in enumerate(ku) if nodes[int(c)][3]]
                else:
                    keep = range(len(ku))
                kv = _kids(base, v) if same else ()
                stack += [(int(ku[b]), int(kv[b]) if len(kv) == len(ku) else -1)
                          for b in keep]
    return {"jobs": jobs, "plain": plain, "new": sum(new.values()), "new_sets": len(new),
            "new_changed": sum(new_changed.values()), "x_changed": x_changed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--fold", default="0", help="a fold id, or 'all' (the ten summed)")
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--tpce", action="store_true",
                    help="x's path only (TPCE needs x's leaves, not every forecast)")
    args = ap.parse_args()
    print(f"{'TPCE' if args.tpce else 'Venn machine'}, fold {args.fold}, "
          f"{f'first {args.rows} test rows' if args.rows else 'every test row'}:")
    print("| dataset | fold | jobs | plain rows | new rows (sets) | new, test changed | "
          "x on D's rows, test changed | floor | floor, perfect certificate | "
          "the same + x on D's rows |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.datasets:
        t0 = time.process_time()
        c = count(name, args.fold, args.rows, args.tpce)
        p, changed = c["plain"], c["plain"] + c["new_changed"]
        print(f"| {name} | {args.fold} | {c['jobs']} | {p} | {c['new']} ({c['new_sets']}) | "
              f"{c['new_changed']} | {c['x_changed']} | {(p + c['new']) / p:.1f}x | "
              f"{changed / p:.1f}x | {(changed + c['x_changed']) / p:.1f}x |  <!-- "
              f"{time.process_time() - t0:.0f} CPU-s -->", flush=True)


if __name__ == "__main__":
    main()
