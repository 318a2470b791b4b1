"""Exact batched paths: the leaves x reaches in the tree grown on D ∪ {(x, c)}, for many
jobs (x, c[, dropped row]) at once and in every learner setting.

This is the path engine (:meth:`treecert.transductive.engine.TransductiveEngine.leaves`)
run for a whole batch of jobs together: every round takes the nodes holding x of all jobs
— all at the same depth — computes their class counts and stopping rules in one pass,
searches their tests in one batched call of the grower's split finder
(:func:`~treecert.transductive.node_search.evaluate_nodes`) and routes their rows with the
grower's own routing (:func:`~treecert.tree.grow.route_batch`), keeping the children that
hold x. Nothing is certified, so it covers what the certificates do not: C4.5's fractional
instances (missing values in D and in x: x then follows every branch of a test on an
attribute it lacks), ``gain_ratio`` with its average-gain filter and MDL correction, and any
stopping rule. The batched engine (:mod:`treecert.transductive.batch_engine`) sends here
every job its certificates do not serve. The nominal part of every search is tallied once
per distinct set of training rows among the round's nodes and x added to it
(:mod:`treecert.transductive.shared_tallies`): the K labels of one x, and every x entering a
branch the same way, hold the same training rows with the same C4.5 weights.

Bit-for-bit equality with growing the whole tree and routing x through it
(``engine=naive``): each node's rows and weights are the grower's, in the grower's order, so
every search, count and stop is the same; x's share of a leaf is the product of the
prediction-time branch fractions (a child's total weight over its siblings', summed in
branch order, as :meth:`treecert.tree.arrays.TreeArrays.branch_fraction`), and x's leaves
are listed in the order :meth:`~treecert.tree.arrays.TreeArrays.apply_weighted` reaches
them, so that their mixture (:func:`mix_laplace`) adds the same numbers in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treecert.transductive.node_search import (
    _segments,
    branch_fractions,
    counts_and_stops,
)
from treecert.transductive.shared_tallies import SharedTallies
from treecert.tree.grow import route_batch
from treecert.tree.impurity import _lastsum


@dataclass
class ReachedLeaves:
    """Every leaf reached by every job, jobs in order and each job's leaves in the order of
    :meth:`~treecert.tree.arrays.TreeArrays.apply_weighted`: ``job`` (L,), x's ``share``
    (L,), the leaf's class ``counts`` (L, K) with x's weight ``x_weight`` (L,) included, and
    its number of examples ``n_inst`` (L,)."""

    job: np.ndarray
    share: np.ndarray
    counts: np.ndarray
    x_weight: np.ndarray
    n_inst: np.ndarray


def reach_leaves(finder, roots: list[tuple[np.ndarray, np.ndarray]],
                 rank: np.ndarray | None = None, depth0: int = 0,
                 probe: np.ndarray | None = None) -> ReachedLeaves:
    """Leaves that x reaches, for every job i whose root holds training rows and x as
    ``roots[i] = (rows, weights)`` — rows in increasing order, x (an ineligible row of
    ``finder.X``) the last — in the tree grown from that root at depth ``depth0``.

    ``rank`` (:func:`~treecert.transductive.node_search.value_ranks` of the finder) replaces
    the per-node value sorts by one integer sort per column.

    ``probe`` (J, p): x is not grown with but only routed — its values are ``probe[i]``
    and the roots hold training rows only — as prediction routes a row through the tree
    grown on them (:meth:`~treecert.tree.arrays.TreeArrays.apply_weighted`): x with an
    unknown value follows every branch of positive weight, and enters an empty branch
    when its value leads there; such an empty leaf's ``counts`` are its nearest non-empty
    ancestor's (:attr:`~treecert.tree.arrays.TreeArrays.estimate_counts`). ``x_weight`` is
    x's share. Leave-one-out of the inductive tree (Kukar & Kononenko) uses it."""
    K = finder.n_classes
    X = finder.X
    finder = SharedTallies.of(finder)  # one nominal tally per distinct set of rows
    is_nominal = np.zeros(X.shape[1], dtype=bool)
    is_nominal[finder.nominal_idx] = True
    J = len(roots)
    lens = np.array([r.size for r, _ in roots], dtype=np.int64)
    rows = np.concatenate([r for r, _ in roots]) if J else np.empty(0, np.int64)
    w = np.concatenate([v for _, v in roots]) if J else np.empty(0)
    job = np.arange(J, dtype=np.int64)
    order = np.zeros(J, dtype=np.int64)  # rank among the job's nodes of this round
    share = np.ones(J)
    # how the previous round made each node: its parent, the branch, x unknown there
    parent = branch = xmiss = None
    est_up = None  # probe: estimate counts of each node's parent (empty leaves borrow them)
    found: list[tuple] = []
    depth = depth0
    while job.size:
        seg, ne = _segments(lens)
        G = lens.size
        counts, stop = counts_and_stops(finder, rows, w, seg, ne, np.full(G, depth))
        if parent is not None and xmiss.any():  # x's share: branch_fraction's product
            frac = np.ones(xmiss.size)
            frac[xmiss] = branch_fractions(parent[xmiss], branch[xmiss],
                                           _lastsum(counts)[xmiss], parent.max() + 1)
            share = np.where(xmiss, share * frac, share)
        x_entry = seg[1:] - 1
        if probe is not None:  # an empty node's estimate is its ancestor's (J48)
            est = counts if est_up is None else np.where(
                (counts.sum(axis=1) > 0)[:, None], counts, est_up)
        feature = np.full(G, -1, dtype=np.int64)
        threshold = np.full(G, np.nan)
        n_branches = np.zeros(G, dtype=np.int64)
        value_branch: dict[int, np.ndarray] = {}
        open_g = np.flatnonzero(~stop & (share > 0))
        splits = finder.search([(rows[seg[g]:seg[g + 1]], w[seg[g]:seg[g + 1]])
                                for g in open_g], rank)
        for g, sp in zip(open_g.tolist(), splits, strict=True):
            if sp is not None:
                feature[g], threshold[g], n_branches[g] = sp.feature, sp.threshold, \
                    sp.n_branches
                if sp.value_branch is not None:
                    value_branch[g] = sp.value_branch
        leaf = (feature < 0) & (share > 0)
        if leaf.any():
            found.append((job[leaf], np.full(int(leaf.sum()), depth), order[leaf], share[leaf],
                          (counts if probe is None else est)[leaf],
                          share[leaf] if probe is not None else w[x_entry[leaf]],
                          lens[leaf].astype(float)))
        routed = route_batch(X, is_nominal, rows, w, ne, G, feature, threshold, n_branches,
                             value_branch)
        if probe is None:
            x_vals = X[rows[x_entry], np.maximum(feature, 0)]
        else:
            x_vals = probe[job, np.maximum(feature, 0)]
            x_branch = _probe_branches(x_vals, feature, threshold, value_branch)
        x_missing = (feature >= 0) & np.isnan(x_vals)
        c_parts, c_node = [], []
        for b, (ent, cw_b) in enumerate(routed):
            if probe is None:
                in_b = np.zeros(rows.size, dtype=bool)
                in_b[ent] = True
                holds_x = (n_branches > b) & in_b[x_entry]
            else:
                holds_x = (n_branches > b) & (x_missing | (x_branch == b))
            keep = holds_x[ne[ent]]
            c_parts.append((rows[ent[keep]], cw_b[keep], ne[ent[keep]]))
            c_node.append(np.flatnonzero(holds_x))
        if not sum(k.size for k in c_node):
            break
        # children in (parent, branch) order, each a contiguous run of entries
        width = len(routed)
        p_key = np.concatenate([kids * width + b for b, kids in enumerate(c_node)])
        e_key = np.concatenate([nd * width + b for b, (_, _, nd) in enumerate(c_parts)])
        e_order = np.argsort(e_key, kind="stable")  # rows keep their order in a child
        rows = np.concatenate([r for r, _, _ in c_parts])[e_order]
        w = np.concatenate([v for _, v, _ in c_parts])[e_order]
        p_key = np.sort(p_key)
        parent, branch = p_key // width, p_key % width
        lens = np.bincount(e_key, minlength=G * width)[p_key]
        xmiss = x_missing[parent]
        # apply_weighted's order: x's known-valued moves first, then the unknown ones'
        # expansions, each in the order of their parents, branches in order
        job_new = job[parent]
        rank_key = np.lexsort((branch, order[parent], xmiss, job_new))
        order_new = np.empty(parent.size, dtype=np.int64)
        first = np.searchsorted(job_new[rank_key], job_new[rank_key], side="left")
        order_new[rank_key] = np.arange(parent.size) - first
        job, order, share = job_new, order_new, share[parent]
        if probe is not None:
            est_up = est[parent]
        depth += 1
    return _collect(found, K)


def _probe_branches(x_vals: np.ndarray, feature: np.ndarray, threshold: np.ndarray,
                    value_branch: dict[int, np.ndarray]) -> np.ndarray:
    """The branch a probed x with known values takes at each node (-1: no test or x's
    value unknown)."""
    out = np.full(feature.size, -1, dtype=np.int64)
    known = (feature >= 0) & ~np.isnan(x_vals)
    num = known & ~np.isnan(threshold)
    out[num] = x_vals[num] > threshold[num]
    for g in np.flatnonzero(known & np.isnan(threshold)):
        out[g] = value_branch[g][int(x_vals[g])]
    return out


def _collect(found: list[tuple], K: int) -> ReachedLeaves:
    if not found:
        return ReachedLeaves(np.empty(0, np.int64), np.empty(0), np.empty((0, K)),
                             np.empty(0), np.empty(0))
    job, level, order, share, counts, x_w, n_inst = (
        np.concatenate(a) for a in zip(*found, strict=True))
    by = np.lexsort((order, level, job))
    return ReachedLeaves(job[by], share[by], counts[by].reshape(-1, K), x_w[by], n_inst[by])


def mix_laplace(leaves: ReachedLeaves, labels: np.ndarray, J: int, K: int, *,
                count_x: bool = True, alpha: float = 1.0,
                as_predicted: bool = False) -> np.ndarray:
    """Per job: the Laplace estimates (n_c + α)/(n + Kα) of its leaves mixed by x's shares
    and normalised — :func:`treecert.transductive.engine.leaf_estimate`, the same operations
    in the same order, for all jobs at once (without x's own weight when not ``count_x``).
    ``as_predicted``: each leaf's estimate first, then times x's share, as
    :meth:`~treecert.tree.arrays.Tree.predict_proba` rounds it."""
    cnt = leaves.counts
    if not count_x:
        cnt = cnt.copy()
        rows = np.arange(cnt.shape[0])
        lab = labels[leaves.job]
        cnt[rows, lab] = np.maximum(cnt[rows, lab] - leaves.x_weight, 0.0)
    if as_predicted:
        est = leaves.share[:, None] * ((cnt + alpha) / (_lastsum(cnt) + K * alpha)[:, None])
    else:
        est = leaves.share[:, None] * (cnt + alpha) / (_lastsum(cnt) + K * alpha)[:, None]
    out = _sum_by_job(leaves.job, est, J)
    return out / _lastsum(out)[:, None]


def _sum_by_job(job: np.ndarray, terms: np.ndarray, J: int) -> np.ndarray:
    """Per job, the sum of its rows of ``terms`` (jobs sorted), added one after the other
    from 0 in their order — the l-th term of every job in turn."""
    out = np.zeros((J, terms.shape[1]))
    nth = np.arange(job.size) - np.searchsorted(job, job, side="left")
    for i in range(int(nth.max()) + 1 if nth.size else 0):
        at = nth == i
        out[job[at]] = out[job[at]] + terms[at]
    return out
