"""Whole trees on D ∪ {(x, j)} for many jobs at once, with C4.5's fractional instances,
and every training example's forecast in each of them (the Venn machine's forecast
taxonomy on data with unknown values).

Why whole trees: with unknown values an example's forecast is a mixture over every leaf it
reaches, and x changes more than its own path — where x's value is known, it adds to the
known weight of one branch, so the fraction of every unknown-valued row sent to the other
branches changes too, and the subtrees hanging off x's path are grown on slightly different
weights. What *is* shared is a node's (rows, weights): a subtree depends on nothing else
(x is a row of its own per job, so nodes holding x are never shared). :func:`grow_forest`
grows the trees of all jobs together, a tree level of every job per call of the grower's
batched split search (:func:`~treecert.transductive.node_search.evaluate_nodes`), routing
with the grower's own :func:`~treecert.tree.grow.route_batch`, and grows each distinct node
of a level once: the trees form one DAG, where a node without x is shared by every job whose
tree holds it (the K labels of one x, and every x that takes the same branch at the same
tests, share all the subtrees hanging off their paths).

:class:`Forecasts` then routes every (job, example) pair down its job's tree as
:meth:`treecert.tree.arrays.TreeArrays.apply_weighted` routes a row, and mixes the leaf
estimates as :meth:`~treecert.tree.arrays.Tree.predict_proba` does. Exactness (bit for bit
with growing each tree and calling ``predict_proba``, ``tests/test_venn_missing.py``): every
node's rows and weights are the grower's, in the grower's order, so its counts, stopping
rule and test are the same; a branch fraction is the child's total weight over its
siblings', summed in branch order from zero, as ``branch_fraction`` sums them — per *edge*
here, since a shared node has several parents; an empty node (never shared) borrows its
parent's counts, as ``estimate_counts`` does; and each pair's leaves are listed in the
order ``apply_weighted`` lists a row's (its routing, :func:`~treecert.tree.arrays.route_weighted`,
run on pairs), so
``np.add.at`` adds the same terms in the same order.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from treecert.transductive import settled_tests
from treecert.transductive.node_search import (
    _segments,
    branch_fractions,
    counts_and_stops,
    evaluate_nodes,
)
from treecert.transductive.shared_tallies import SharedTallies
from treecert.tree.arrays import route_weighted
from treecert.tree.grow import route_batch, split_arrays
from treecert.tree.leaf_estimates import leaf_proba
from treecert.tree.segments import flat_nonzero, offsets


@dataclass
class Forest:
    """The trees of J jobs as one DAG of N nodes: job i's tree is rooted at node i.

    ``counts`` (N, K) class counts; ``feature`` (N,) (-1: leaf), ``threshold`` (N,) (NaN:
    nominal); a nominal node's branch of value v is ``vb[vb_ptr[u] + v]``; node u's children
    in branch order are ``kids[kid_ptr[u]:kid_ptr[u + 1]]`` and ``frac`` is the
    prediction-time branch fraction of each of those edges; ``est`` (N, K) the counts each
    node's estimate is read from."""

    counts: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    vb_ptr: np.ndarray
    vb: np.ndarray
    kid_ptr: np.ndarray
    kids: np.ndarray
    frac: np.ndarray
    est: np.ndarray


#: A node without a nominal test's value-branch table (one shared empty array).
_NO_BRANCHES = np.empty(0, np.int64)


def grow_forest(finder, roots: list[tuple[np.ndarray, np.ndarray]],
                rank: np.ndarray | None = None) -> Forest:
    """The trees grown from ``roots[i] = (rows, weights)`` (rows increasing) at depth 0,
    level by level, each distinct non-empty node of a level grown once (module docstring).
    ``rank``: :func:`~treecert.transductive.node_search.value_ranks` of the finder.
    Nodes with the same training rows — every job's root, the K labels of one x until
    their tests part — take their nominal tallies once
    (:class:`~treecert.transductive.shared_tallies.SharedTallies`; x is a root's last,
    ineligible row)."""
    K = finder.n_classes
    search = SharedTallies.of(finder)
    X = finder.X
    is_nominal = np.zeros(X.shape[1], dtype=bool)
    is_nominal[finder.nominal_idx] = True
    lens = np.array([r.size for r, _ in roots], dtype=np.int64)
    rows = np.concatenate([r for r, _ in roots]) if roots else np.empty(0, np.int64)
    w = np.concatenate([v for _, v in roots]) if roots else np.empty(0)
    counts_l, feature_l, threshold_l, vb_parts = [], [], [], []
    edge_parent, edge_branch, edge_child = [], [], []
    empty_parent: dict[int, int] = {}  # an empty node -> its only parent
    base, depth = 0, 0
    while lens.size:
        G = lens.size
        seg, ne = _segments(lens)
        counts, stop = counts_and_stops(finder, rows, w, seg, ne, np.full(G, depth))
        open_g = flat_nonzero(~stop)
        splits = _tests(search, [(rows[seg[g]:seg[g + 1]], w[seg[g]:seg[g + 1]])
                                 for g in open_g.tolist()], rank)
        feature, threshold, n_br, value_branch = split_arrays(G, open_g.tolist(), splits)
        counts_l.append(counts)
        feature_l.append(feature)
        threshold_l.append(threshold)
        vb_parts.extend(value_branch.get(g, _NO_BRANCHES) for g in range(G))
        routed = route_batch(X, is_nominal, rows, w, ne, G, feature, threshold, n_br,
                             value_branch) if (feature >= 0).any() else []
        if not routed:
            break
        # every child, in (parent, branch) order, its rows a contiguous run in row order
        width = len(routed)
        e_key = np.concatenate([ne[ent] * width + b for b, (ent, _) in enumerate(routed)])
        order = np.argsort(e_key, kind="stable")
        c_rows = np.concatenate([rows[ent] for ent, _ in routed])[order]
        c_w = np.concatenate([cw for _, cw in routed])[order]
        slot = (np.arange(G)[:, None] * width + np.arange(width)[None, :])[
            np.arange(width)[None, :] < n_br[:, None]]
        c_lens = np.bincount(e_key, minlength=G * width)[slot]
        c_seg = offsets(c_lens)
        # one node per distinct (rows, weights); a child without weight stays its parent's
        # own (its estimate reads the parent's counts)
        weighty = np.bincount(np.repeat(np.arange(slot.size), c_lens), weights=c_w > 0,
                              minlength=slot.size) > 0
        child = np.empty(slot.size, dtype=np.int64)
        seen: dict[bytes, int] = {}
        keep = []
        nxt = base + G
        bounds, has_weight = c_seg.tolist(), weighty.tolist()  # Python ints: cheap slices
        for c in range(slot.size):
            lo, hi = bounds[c], bounds[c + 1]
            if has_weight[c]:
                key = c_rows[lo:hi].tobytes() + c_w[lo:hi].tobytes()
                got = seen.get(key)
                if got is not None:
                    child[c] = got
                    continue
                seen[key] = nxt
            else:
                empty_parent[nxt] = base + int(slot[c] // width)
            child[c] = nxt
            keep.append(c)
            nxt += 1
        edge_parent.append(base + slot // width)
        edge_branch.append(slot % width)
        edge_child.append(child)
        keep = np.array(keep, dtype=np.int64)
        sel = np.zeros(slot.size, dtype=bool)
        sel[keep] = True
        take = np.repeat(sel, c_lens)
        rows, w, lens = c_rows[take], c_w[take], c_lens[keep]
        base += G
        depth += 1
    return _assemble(counts_l, feature_l, threshold_l, vb_parts, edge_parent, edge_branch,
                     edge_child, empty_parent, K)


def _tests(finder, nodes: list[tuple[np.ndarray, np.ndarray]], rank) -> list:
    """The grower's test (or None) of every node (rows, weights): the nodes holding an x
    (their last row, ineligible) whose training rows settle a test no x can change take it
    (:mod:`~treecert.transductive.settled_tests`), the others are searched (over their
    contenders alone, where proven)."""
    elig = finder.eligible if settled_tests.covers(finder) else None
    xs = [i for i, (r, _) in enumerate(nodes)
          if elig is not None and r.size > settled_tests.SETTLE_ROWS + 1 and not elig[r[-1]]]
    out: list = [None] * len(nodes)
    for i, split in zip(xs, settled_tests.settled_groups(
            finder, [(nodes[i][0][:-1], nodes[i][1][:-1]) for i in xs], np.ones(len(xs)),
            rank), strict=True):
        out[i] = split
    for searcher, searched in settled_tests.search_groups(finder, out):
        for i, split in zip(searched, evaluate_nodes(searcher, [nodes[i] for i in searched],
                                                     rank), strict=True):
            out[i] = split
    return out


def _assemble(counts_l, feature_l, threshold_l, vb_parts, edge_parent, edge_branch,
              edge_child, empty_parent, K) -> Forest:
    counts = np.concatenate(counts_l).reshape(-1, K)
    N = counts.shape[0]
    vb_ptr = offsets([v.size for v in vb_parts])
    vb = np.concatenate([*vb_parts, np.empty(0, np.int64)]).astype(np.int64)
    parent = np.concatenate([*edge_parent, np.empty(0, np.int64)])
    branch = np.concatenate([*edge_branch, np.empty(0, np.int64)])
    child = np.concatenate([*edge_child, np.empty(0, np.int64)])
    by = np.lexsort((branch, parent))  # already so: levels in order, (parent, branch) within
    parent, branch, child = parent[by], branch[by], child[by]
    kid_ptr = offsets(np.bincount(parent, minlength=N))
    # branch_fraction per edge: the child's total over its siblings', summed in branch
    # order from zero (np.add.at over the children's ids, in order)
    totals = counts.sum(axis=1)
    frac = branch_fractions(parent, branch, totals[child], N)
    est = counts.copy()
    for u, p in empty_parent.items():  # an empty node reads its parent's counts
        if totals[u] <= 0:
            est[u] = est[p]
    return Forest(counts, np.concatenate(feature_l), np.concatenate(threshold_l), vb_ptr, vb,
                  kid_ptr, child, frac, est)


def n_leaves(forest: Forest, root: int) -> int:
    """Leaves of the tree rooted at node ``root`` — :attr:`Tree.n_leaves` of that tree grown
    alone: a node shared by several of its paths counts once per path."""
    paths, todo, total = {root: 1}, [root], 0
    while todo:  # children have higher ids than their parents: each node once, all paths in
        u = heapq.heappop(todo)
        k = paths.pop(u)
        if forest.feature[u] < 0:
            total += k
            continue
        for c in forest.kids[forest.kid_ptr[u]:forest.kid_ptr[u + 1]].tolist():
            if c not in paths:
                heapq.heappush(todo, c)
            paths[c] = paths.get(c, 0) + k
    return total


def route_pairs(forest: Forest, X: np.ndarray, pair_row: np.ndarray,
                pair_root: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``apply_weighted`` for pairs: pair k is row ``pair_row[k]`` of ``X`` routed down the
    tree rooted at ``pair_root[k]``. Returns ``(pair, leaf, weight)`` in the order
    ``apply_weighted`` lists each row's leaves."""
    return route_weighted(X, pair_row, pair_root, forest.frac, forest.feature,
                          forest.threshold, forest.kid_ptr, forest.kids, forest.vb_ptr,
                          forest.vb)


#: Pairs routed per call: an unknown value sends a pair down every branch, so a call's
#: entries can be many times its pairs (soybean: ~10× at the widest level).
_ROUTE_PAIRS = 1 << 16


class Forecasts:
    """Every pair's forecast (row ``pair_row[k]`` of ``X`` by job ``pair_job[k]``'s tree) as
    ``predict_proba(kind)`` of that tree gives it, read on demand (:meth:`take`): a pair
    reaching one leaf whole — most pairs — reads its leaf's normalised estimate, so the
    (pairs, K) array is never built. ``leaf`` (P,): that leaf, -1 for a mixture; the pairs
    of a job at one such leaf share their forecast."""

    def __init__(self, forest: Forest, X: np.ndarray, pair_row: np.ndarray,
                 pair_job: np.ndarray, kind: str, alpha: float, m: float) -> None:
        P, K = pair_row.size, forest.counts.shape[1]
        self.forest, self.pair_job, self.kind, self.alpha, self.m = forest, pair_job, kind, \
            alpha, m
        step = _ROUTE_PAIRS  # in parts: unknown values fan the pairs out
        parts = [route_pairs(forest, X, pair_row[a:a + step], pair_job[a:a + step])
                 for a in range(0, P, step)]
        pr = np.concatenate([np.empty(0, np.int64)]
                            + [part[0] + i * step for i, part in enumerate(parts)])
        leaf = np.concatenate([np.empty(0, np.int64)] + [part[1] for part in parts])
        weight = np.concatenate([np.empty(0)] + [part[2] for part in parts])
        # a lone leaf is reached with weight 1 (fractions t / (0 + t) on the way): the
        # pair's forecast is the leaf's normalised estimate, the bits of mixing one term
        one = (np.bincount(pr, minlength=P) == 1)[pr] & (weight == 1.0)
        self.leaf = np.full(P, -1, dtype=np.int64)
        self.leaf[pr[one]] = leaf[one]
        mix_e = ~one
        self.mixed = flat_nonzero(np.bincount(pr[mix_e], minlength=P) > 0)
        where = np.searchsorted(self.mixed, pr[mix_e])
        if kind == "m_estimate":  # the estimates of the (job, leaf) pairs met
            key = pair_job[pr[mix_e]] * forest.counts.shape[0] + leaf[mix_e]
            uniq, idx = np.unique(key, return_inverse=True)
            table = self._estimates(uniq % forest.counts.shape[0],
                                    uniq // forest.counts.shape[0])
            self.per_node = None
        else:
            table = leaf_proba(forest.est, kind, alpha=alpha, m=m)
            idx = leaf[mix_e]
            self.per_node = _normalised(table)
        w_e = weight[mix_e]
        mix = np.empty((self.mixed.size, K))
        for k in range(K):  # each pair's terms added from 0 in routing order (np.add.at's)
            mix[:, k] = np.bincount(where, weights=w_e * table[idx.ravel(), k],
                                    minlength=self.mixed.size)
        self.mix = _normalised(mix)

    def _estimates(self, leaf: np.ndarray, job: np.ndarray) -> np.ndarray:
        """Leaf estimates; m_estimate's prior is the class frequency at the job's root."""
        forest = self.forest
        prior = None
        if self.kind == "m_estimate":
            root = forest.counts[job]
            prior = root / root.sum(axis=1, keepdims=True)
        return leaf_proba(forest.est[leaf], self.kind, alpha=self.alpha, m=self.m, prior=prior)

    def take(self, pairs: np.ndarray) -> np.ndarray:
        """Forecasts (len(pairs), K) of the given pairs."""
        out = np.full((pairs.size, self.forest.counts.shape[1]), np.nan)  # no leaf: 0 / 0
        leaf = self.leaf[pairs]
        lone = leaf >= 0
        if self.per_node is not None:
            out[lone] = self.per_node[leaf[lone]]
        else:
            out[lone] = _normalised(self._estimates(leaf[lone], self.pair_job[pairs[lone]]))
        at = np.searchsorted(self.mixed, pairs[~lone])
        hit = at < self.mixed.size
        hit[hit] = self.mixed[at[hit]] == pairs[~lone][hit]
        rest = flat_nonzero(~lone)
        out[rest[hit]] = self.mix[at[hit]]
        return out


def _normalised(p: np.ndarray) -> np.ndarray:
    """Rows over their sums, as ``predict_proba`` normalises."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return p / p.sum(axis=1, keepdims=True)
