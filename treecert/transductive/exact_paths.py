"""Exact batched paths: the leaves x reaches in the tree grown on D ∪ {(x, c)}, for many
jobs (x, c[, dropped row]) at once and in every learner setting.

This is the path engine (:meth:`treecert.transductive.engine.TransductiveEngine.leaves`)
run for a whole batch of jobs together: every round takes the nodes holding x of all jobs
— all at the same depth — computes their class counts and stopping rules in one pass,
searches their tests in one batched call of the grower's split finder
(:func:`~treecert.transductive.node_search.choose_tests`) and routes their rows with the
grower's own routing (:func:`~treecert.tree.grow.route_entries`), keeping the children that
hold x. No certificate of the base tree is used, so it covers what they do not: C4.5's
fractional instances (missing values in D and in x: x then follows every branch of a test on
an attribute it lacks), ``gain_ratio`` with its average-gain filter and MDL correction, and
any stopping rule. The batched engine (:mod:`treecert.transductive.batch_engine`) sends here
every job its certificates do not serve. Only the nodes of a round that share their training
rows with many others may skip the search, where a test of those rows provably stays the
grower's choice whatever their x (:mod:`treecert.transductive.settled_tests`).

The K labels of one x hold nodes of the same *content* — training rows, weights, x's values
and weight; only x's class differs — until their tests part (x's class moves no row: C4.5's
branch fractions come from the branches' known weights, which x's value sets). A round keeps
each content once: its training rows' class tally (each node adds its x, last, as the
grower's ``bincount`` does), its eligible weight (x's is 0: every node's of that content)
and, for the nodes of a content that chose the same test, one routing, whose branches holding
x are the children's contents. Only the search sees each node's own x, and the nominal part
of it is tallied once per distinct set of training rows and x added to it
(:mod:`treecert.transductive.shared_tallies`). The eligible weight only meets the stopping
rule's ``2 min_leaf``: one cumsum decides every content whose weight is further from it than
any rounding of the sum, the others are summed the grower's way
(:func:`~treecert.tree.grow.too_light`).

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

from treecert.transductive import settled_tests
from treecert.transductive.node_search import (
    _groups,
    _segments,
    branch_fractions,
    choose_tests,
)
from treecert.transductive.shared_tallies import SharedTallies
from treecert.tree.grow import light_stops, route_entries, too_light
from treecert.tree.impurity import _lastsum
from treecert.tree.segments import _ranges, flat_nonzero
from treecert.tree.split_search import Split


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
                 probe: np.ndarray | None = None,
                 root_keys: np.ndarray | None = None) -> ReachedLeaves:
    """Leaves that x reaches, for every job i whose root holds training rows and x as
    ``roots[i] = (rows, weights)`` — rows in increasing order, x (an ineligible row of
    ``finder.X``) the last — in the tree grown from that root at depth ``depth0``.

    ``rank`` (:func:`~treecert.transductive.node_search.value_ranks` of the finder) replaces
    the per-node value sorts by one integer sort per column.

    ``root_keys`` (J,), optional: jobs of equal key hold the same training rows and
    weights (all but x) — the caller's knowledge, which spares comparing them.

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
    has_x = probe is None
    J = len(roots)
    # x's row of every job (grown with: the root's last row), then the nodes' contents
    x_row = np.array([r[-1] if has_x and r.size else -1 for r, _ in roots], dtype=np.int64)
    shape, reps = _root_shapes(roots, X, has_x, root_keys)
    lens = np.array([roots[i][0].size for i in reps], dtype=np.int64)
    rows = np.concatenate([roots[i][0] for i in reps]) if J else np.empty(0, np.int64)
    w = np.concatenate([roots[i][1] for i in reps]) if J else np.empty(0)
    job = np.arange(J, dtype=np.int64)
    order = np.zeros(J, dtype=np.int64)  # rank among the job's nodes of this round
    share = np.ones(J)
    # how the previous round made each node: its parent, the branch, x unknown there
    parent = branch = xmiss = None
    est_up = None  # probe: estimate counts of each node's parent (empty leaves borrow them)
    found: list[tuple] = []
    depth = depth0
    while job.size:
        G = job.size
        seg, ne = _segments(lens)
        counts, light = _shape_counts(finder, rows, w, seg, ne, has_x)
        counts = counts.take(shape, axis=0)
        x_w = w[seg[1:] - 1].take(shape) if has_x else None
        if has_x:  # x, last in every cell it enters (bincount's order)
            counts[np.arange(G), finder.y[x_row]] += x_w
        stop = light_stops(finder.params, counts, light[shape], depth)
        if parent is not None and xmiss.any():  # x's share: branch_fraction's product
            frac = np.ones(xmiss.size)
            frac[xmiss] = branch_fractions(parent[xmiss], branch[xmiss],
                                           _lastsum(counts)[xmiss], parent.max() + 1)
            share = np.where(xmiss, share * frac, share)
        if probe is not None:  # an empty node's estimate is its ancestor's (J48)
            est = counts if est_up is None else np.where(
                (counts.sum(axis=1) > 0)[:, None], counts, est_up)
        feature, threshold, n_branches, value_branch = _search(
            finder, flat_nonzero(~stop & (share > 0)), shape, x_row if has_x else None,
            lens, seg, rows, w, rank, G)
        leaf = (feature < 0) & (share > 0)
        if leaf.any():
            found.append((job[leaf], np.full(int(leaf.sum()), depth), order[leaf], share[leaf],
                          (counts if probe is None else est)[leaf],
                          share[leaf] if probe is not None else x_w[leaf],
                          lens[shape[leaf]].astype(float)))
        split_g = flat_nonzero(feature >= 0)
        if not split_g.size:
            break
        # nodes of one content that chose the same test route alike: routed once
        rep_of, reps = _same_tests(shape, feature, threshold, value_branch, split_g)
        r_lens = lens[shape[reps]]
        take = _ranges(seg[shape[reps]], r_lens)
        r_rows, r_w = rows.take(take), w.take(take)
        r_ne = np.repeat(np.arange(reps.size), r_lens)
        entry, to, weight, r_branch, to_all = route_entries(
            X, is_nominal, r_rows, r_w, r_ne, reps.size, feature[reps], threshold[reps],
            n_branches[reps], {i: value_branch[g] for i, g in enumerate(reps.tolist())
                               if g in value_branch})
        width = to_all.shape[1]
        b_all = np.arange(width)
        if has_x:
            x_vals = X[x_row, np.maximum(feature, 0)]
        else:
            x_vals = probe[job, np.maximum(feature, 0)]
            x_branch = _probe_branches(x_vals, feature, threshold, value_branch)
        x_missing = (feature >= 0) & np.isnan(x_vals)
        holds_x = np.zeros((G, width), dtype=bool)
        if has_x:  # a representative's x entry (grown with x, its last): its branches
            x_e = (np.cumsum(r_lens) - 1)[rep_of]
            x_b = r_branch[x_e][:, None]  # -1: x's value unknown there
            holds_x[split_g] = (n_branches[split_g][:, None] > b_all) & np.where(
                x_b < 0, to_all[rep_of], x_b == b_all)
        else:
            holds_x[:] = (n_branches[:, None] > b_all) & (
                x_missing[:, None] | (x_branch[:, None] == b_all))
        if not holds_x.any():
            break
        # the children's contents: a representative's branches that hold some node's x
        needed = np.zeros((reps.size, width), dtype=bool)
        np.logical_or.at(needed, rep_of, holds_x[split_g])
        node_rep = np.zeros(G, dtype=np.int64)
        node_rep[split_g] = rep_of
        e_key = r_ne.take(entry) * width + to
        keep = needed.reshape(-1).take(e_key)
        entry, e_key = entry[keep], e_key[keep]
        e_order = np.argsort(e_key, kind="stable")  # rows keep their order in a child
        rows = r_rows.take(entry.take(e_order))
        w = weight[keep].take(e_order)
        s_key = flat_nonzero(needed.ravel())
        lens = np.bincount(e_key, minlength=needed.size)[s_key]
        # children in (parent, branch) order
        p_key = flat_nonzero(holds_x.ravel())
        parent, branch = p_key // width, p_key % width
        shape = np.searchsorted(s_key, node_rep[parent] * width + branch)
        xmiss = x_missing[parent]
        # apply_weighted's order: x's known-valued moves first, then the unknown ones'
        # expansions, each in the order of their parents, branches in order
        job_new = job[parent]
        rank_key = np.lexsort((branch, order[parent], xmiss, job_new))
        order_new = np.empty(parent.size, dtype=np.int64)
        first = np.searchsorted(job_new[rank_key], job_new[rank_key], side="left")
        order_new[rank_key] = np.arange(parent.size) - first
        job, order, share, x_row = job_new, order_new, share[parent], x_row[parent]
        if probe is not None:
            est_up = est[parent]
        depth += 1
    return _collect(found, K)


def _root_shapes(roots, X: np.ndarray, has_x: bool,
                 root_keys: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each job's root content (its index among the distinct ones) and the first job of
    each: jobs whose training rows, weights and x's values are equal — the K labels of one
    x — hold nodes that differ only in x's class until their tests part. With
    ``root_keys``, a key stands for the training rows and weights."""
    if root_keys is not None and has_x:
        return _groups([(k, v[-1], X[r[-1]].tobytes())
                        for k, (r, v) in zip(root_keys.tolist(), roots, strict=True)])
    return _groups([(r[:-1].tobytes(), v.tobytes(), X[r[-1]].tobytes()) if has_x and r.size
                    else (r.tobytes(), v.tobytes()) for r, v in roots])


def _shape_counts(finder, rows: np.ndarray, w: np.ndarray, seg: np.ndarray, ne: np.ndarray,
                  has_x: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per content (S of them, laid end to end): the class counts of its training rows (x,
    its last row when ``has_x``, left out: each node adds its own) and whether its eligible
    weight — x's is 0, so it is that of every node of the content — is below
    ``2 min_leaf``, the stopping rule that reads it
    (:func:`~treecert.tree.grow.too_light`)."""
    S, K = seg.size - 1, finder.n_classes
    tw = w
    if has_x:  # x's weight 0 in its own cell: fl(sum + 0.0) is the sum (weights >= 0)
        tw = w.copy()
        tw[seg[1:][seg[1:] > seg[:-1]] - 1] = 0.0
    counts = np.bincount(ne * K + finder.y.take(rows), weights=tw,
                         minlength=S * K).reshape(S, K).astype(float, copy=False)  # none: int
    ew = w if finder.eligible is None else w * finder.eligible.take(rows)
    return counts, too_light(ew, w, seg, 2 * finder.params.min_leaf)


def _search(finder, open_g: np.ndarray, shape: np.ndarray, x_row: np.ndarray | None,
            lens: np.ndarray, seg: np.ndarray, rows: np.ndarray, w: np.ndarray, rank, G: int):
    """The grower's test (feature, threshold, n_branches, value_branch; feature -1: none)
    of G nodes, the ``open_g`` ones searched in one batched call (one per set of
    contenders, :func:`~treecert.transductive.settled_tests.search_groups`): each node's rows
    are its content's, with its own x (``x_row``; None: no x grown with) last in place of
    the content's."""
    feature = np.full(G, -1, dtype=np.int64)
    threshold = np.full(G, np.nan)
    n_branches = np.zeros(G, dtype=np.int64)
    value_branch: dict[int, np.ndarray] = {}
    big = held = None
    if x_row is not None and settled_tests.covers(finder):  # contents that may settle
        held = np.bincount(shape[open_g], minlength=lens.size)
        big = flat_nonzero((held > 0) & (lens > settled_tests.SETTLE_ROWS + 1))
    if big is not None and big.size and held[big].sum() >= settled_tests.SETTLE_NODES:
        # tests no x can change: one search per set of training rows (x is a content's last)
        found: list = [None] * lens.size
        for s, split in zip(big.tolist(), settled_tests.settled_groups(
                finder, [(rows[seg[s]:seg[s + 1] - 1], w[seg[s]:seg[s + 1] - 1])
                         for s in big.tolist()], held[big], rank), strict=True):
            found[s] = split
        of_node = [found[s] for s in shape[open_g].tolist()]
        for g, split in zip(open_g.tolist(), of_node, strict=True):
            if isinstance(split, Split):
                feature[g], threshold[g], n_branches[g] = (split.feature, split.threshold,
                                                           split.n_branches)
                if split.value_branch is not None:
                    value_branch[g] = split.value_branch
        searches = [(f, open_g[at]) for f, at in settled_tests.search_groups(finder, of_node)]
    else:
        searches = [(finder, open_g)] if open_g.size else []
    for searcher, part in searches:  # the whole finder, or one set of contenders
        o_lens = lens[shape[part]]
        take = _ranges(seg[shape[part]], o_lens)
        o_rows = rows.take(take)
        if x_row is not None:
            o_rows[np.cumsum(o_lens) - 1] = x_row[part]
        choice = choose_tests(searcher, o_lens, o_rows, w.take(take), rank, shape[part])
        feature[part] = choice.feature
        threshold[part] = choice.threshold
        n_branches[part] = choice.n_branches
        value_branch.update((int(part[g]), vb) for g, vb in choice.value_branch.items())
    return feature, threshold, n_branches, value_branch


def _same_tests(shape: np.ndarray, feature: np.ndarray, threshold: np.ndarray,
                value_branch: dict[int, np.ndarray],
                split_g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``split_g`` of one content with the same test — feature, threshold, and a
    nominal test's partition, which the position of its one branch-0 value names — route
    their rows alike: each node's representative (index into the second array, the
    representatives' node numbers)."""
    zero_at = np.full(shape.size, -1, dtype=np.int64)
    if value_branch:
        nodes = np.fromiter(value_branch, dtype=np.int64, count=len(value_branch))
        sizes = np.fromiter((v.size for v in value_branch.values()), dtype=np.int64,
                            count=nodes.size)
        flat = np.concatenate(list(value_branch.values()))
        zero_at[nodes] = flat_nonzero(flat == 0) - (np.cumsum(sizes) - sizes)
    keys = (zero_at[split_g], threshold[split_g].view(np.int64), feature[split_g],
            shape[split_g])
    by = np.lexsort(keys)
    differs = np.zeros(by.size, dtype=bool)
    differs[0] = True
    for k in keys:
        differs[1:] |= k[by][1:] != k[by][:-1]
    rep_of = np.empty(by.size, dtype=np.int64)
    rep_of[by] = np.cumsum(differs) - 1
    return rep_of, split_g[by[differs]]


def _probe_branches(x_vals: np.ndarray, feature: np.ndarray, threshold: np.ndarray,
                    value_branch: dict[int, np.ndarray]) -> np.ndarray:
    """The branch a probed x with known values takes at each node (-1: no test or x's
    value unknown)."""
    out = np.full(feature.size, -1, dtype=np.int64)
    known = (feature >= 0) & ~np.isnan(x_vals)
    num = known & ~np.isnan(threshold)
    out[num] = x_vals[num] > threshold[num]
    for g in flat_nonzero(known & np.isnan(threshold)):
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
