"""Growing C4.5-family decision trees: stopping rules, routing and the tree builders.

This is the engine the transductive and Venn methods re-run thousands of times, so no
Python loop runs per row or per threshold, and growing a whole tree costs a few dozen array
operations per tree level rather than per node. The test of every node of a level is chosen
by :class:`~treecert.tree.split_search.SplitFinder` (the rules are in
:mod:`treecert.tree.split_search`); here live the stopping rules every builder and engine
uses (:func:`stops`), the routing of rows to children (:func:`route_rows`) and the builders:

* :func:`grow` grows level by level: the root's columns are sorted once, and each level's
  per-column orders come from its parents' by stable partitioning (O(rows) per level, no
  sorting); a row with a missing value goes to several children with a fraction of its
  weight and stays last (as NaN) in their orders. Node ids are then assigned in the
  depth-first order of the straightforward builder (kept as ``_grow_nodewise``, used for
  rows not given in increasing order).

Bit-for-bit equality with the straightforward node-by-node computation (sort the node,
``cumsum`` its class weights, score every cut, as treecert first did) is a hard
requirement: tie-breaking rounds scores to 10 decimals, so one ulp could change a tree.
Every floating-point sum is therefore taken in the same order as there
(:mod:`treecert.tree.segments`, :mod:`treecert.tree.impurity`): segmented
cumulative sums are exact when the weights are dyadic (integer weights: always), and are
otherwise re-done node by node; sums over a small last axis (classes, branches) are
replicated as numpy computes them (one term after the other below 8 terms); where sums are
exact, ties in a column may be sorted in any order. ``tests/test_grow_equivalence.py``
holds golden trees grown by the original grower and property tests against a plain
node-by-node grower, a full (unpruned) cut search and a brute-force enumeration.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field

import numpy as np

from treecert.tree.arrays import TreeArrays
from treecert.tree.impurity import _SEQ_SUM, _lastsum
from treecert.tree.segments import (
    _Batch,
    _exact_any_order,
    _exact_segments,
    _index_dtype,
    _ragged_sums,
    _ranges,
    flat_nonzero,
    offsets,
)
from treecert.tree.split_search import GrowParams, Split, SplitFinder


def stops(params: GrowParams, counts: np.ndarray, eligible_weight, depth) -> np.ndarray:
    """The grower's stopping rules for count rows (..., K), vectorised: no weight, too
    little eligible weight for two branches of ``min_leaf``, one class only, or
    ``max_depth`` reached. The one definition every builder and engine uses."""
    return light_stops(params, counts, np.asarray(eligible_weight) < 2 * params.min_leaf,
                       depth)


def light_stops(params: GrowParams, counts: np.ndarray, light, depth) -> np.ndarray:
    """:func:`stops` given, per row, whether its eligible weight is below ``2 min_leaf``
    (``light``: :func:`too_light`, which decides it without every node's own sum)."""
    total = _lastsum(counts)
    out = ~(total > 0) | np.asarray(light)
    out |= counts.max(axis=-1) >= total - 1e-9 * np.maximum(total, 1.0)
    if params.max_depth is not None:
        out |= np.asarray(depth) >= params.max_depth
    return out


def segment_stops(finder: SplitFinder, rows: np.ndarray, w: np.ndarray, seg: np.ndarray,
                  counts: np.ndarray, depth) -> np.ndarray:
    """:func:`node_stops` of many nodes at once — node g holds ``rows[seg[g]:seg[g+1]]``
    — with the eligible weights met with ``2 min_leaf`` as ``.sum()`` would sum them, node
    by node (:func:`too_light`)."""
    ew = eligible_weights(finder.eligible, rows, w)
    light = too_light(w if ew is None else ew, w, seg, 2 * finder.params.min_leaf)
    return light_stops(finder.params, counts, light, depth)


def too_light(ew: np.ndarray, w: np.ndarray, seg: np.ndarray, limit: float) -> np.ndarray:
    """Per segment: the sum of its eligible weights ``ew``, as :func:`stops` reads it
    (summed as ``.sum()`` sums it: exactly where the weights ``w`` are dyadic, else node by
    node), is below ``limit``. One cumsum decides every segment whose sum is further from
    the limit than both sums' rounding errors (each within n·eps·Σ|w| of the true sum, n
    the number of terms; weights are never negative, so Σ|w| is the cumsum's last, to within
    its own rounding, which the factor 4 covers); only the others are summed the grower's
    way. (The node-by-node sums of fractional nodes were one ``sum`` call each: 12 730 in
    a 10-fold Venn machine on vote, of which one lies within rounding of the limit.)"""
    cs = np.zeros(ew.size + 1)
    ew.cumsum(out=cs[1:])
    approx = cs[seg[1:]] - cs[seg[:-1]]
    error = 4.0 * (ew.size + 1) * np.finfo(float).eps * float(cs[-1])
    close = flat_nonzero(np.abs(approx - limit) <= error)
    if close.size:  # the grower's sums of these segments (exact ones in any order)
        lens = seg[close + 1] - seg[close]
        sub = offsets(lens)
        take = _ranges(seg[close], lens)
        node = np.repeat(np.arange(close.size), lens)
        approx[close] = _ragged_sums(ew[take], sub, _exact_segments(w[take], node, close.size))
    return approx < limit


def eligible_weights(eligible: np.ndarray | None, rows: np.ndarray,
                     w: np.ndarray) -> np.ndarray | None:
    """The eligible weight of every entry (row ``rows[e]``, weight ``w[e]``) of a batch of
    nodes, or None where every entry is eligible: the weight itself, which lets the numeric
    search read eligible weights as positions and derive the last class's sums (the same
    numbers)."""
    if eligible is None:
        return None
    el = eligible[rows]
    return None if el.all() else w * el


def node_stops(finder: SplitFinder, rows: np.ndarray, w: np.ndarray, counts: np.ndarray,
               depth: int) -> bool:
    """:func:`stops` for one node given by its rows (x's rows may be ineligible)."""
    elig_w = w.sum() if finder.eligible is None else (w * finder.eligible[rows]).sum()
    return bool(stops(finder.params, counts, elig_w, depth))


@dataclass
class GrownNodes(TreeArrays):
    """Flat arrays of a grown tree plus each node's training rows (CSR by node)."""

    depth: np.ndarray
    rows_ptr: np.ndarray
    rows_idx: np.ndarray
    rows_w: np.ndarray


def route_rows(
    X: np.ndarray, idx: np.ndarray, w: np.ndarray, split: Split, child_weight: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Send a node's rows to its children; unknown values go everywhere, weighted (C4.5).

    ``child_weight`` is the known weight per branch; an unknown row's weight is shared in
    proportion to it.
    """
    vals = X[idx, split.feature]
    missing = np.isnan(vals)
    if split.value_branch is None:
        branch = (vals > split.threshold).astype(np.int64)
    else:
        branch = split.value_branch[np.where(missing, 0, vals).astype(np.int64)]
    branch[missing] = -1
    known_total = child_weight.sum()
    out = []
    for b in range(split.n_branches):
        sel = branch == b
        if missing.any() and known_total > 0 and child_weight[b] > 0:
            frac = child_weight[b] / known_total
            sel_m = missing
            ci = np.concatenate([idx[sel], idx[sel_m]])
            cw = np.concatenate([w[sel], w[sel_m] * frac])
            order = np.argsort(ci, kind="stable")
            out.append((ci[order], cw[order]))
        else:
            out.append((idx[sel], w[sel]))
    return out


def branch_known_weights(X, idx, w, split: Split) -> np.ndarray:
    """Weight of rows with a known value in each branch of ``split``."""
    vals = X[idx, split.feature]
    known = ~np.isnan(vals)
    if split.value_branch is None:
        branch = (vals[known] > split.threshold).astype(np.int64)
    else:
        branch = split.value_branch[vals[known].astype(np.int64)]
    return np.bincount(branch, weights=w[known], minlength=split.n_branches)


def grow(
    finder: SplitFinder,
    idx: np.ndarray,
    w: np.ndarray,
    *,
    depth: int = 0,
) -> GrownNodes:
    """Grow a (sub)tree from rows ``idx`` with weights ``w``; node 0 is its root.

    Nodes are numbered in creation order of the depth-first builder (pop a node, create its
    children, push them in reverse), so every child's id is larger than its parent's. Each
    node's rows keep the order of ``idx``; an unknown-valued row sent to several children
    takes its place among them by row index (as :func:`route_rows` does).
    """
    idx = np.asarray(idx, dtype=np.int64)
    w = np.asarray(w, dtype=float)
    if idx.size > 1 and not bool(np.all(idx[1:] >= idx[:-1])):
        # Children of unsorted rows are re-sorted where unknown values join them; the
        # partitioned orders of the level-wise builder assume rows in increasing order.
        return _grow_nodewise(finder, idx, w, depth=depth)
    return _grow_levels(finder, idx, w, depth)


@dataclass(eq=False)
class _Level:
    """All nodes created at one depth: their rows (CSR), class counts and chosen tests."""

    base: int
    rows: np.ndarray
    w: np.ndarray
    lens: np.ndarray
    parent: np.ndarray
    branch: np.ndarray
    K: InitVar[int]
    y: InitVar[np.ndarray]
    seg: np.ndarray = field(init=False)
    node: np.ndarray = field(init=False)
    counts: np.ndarray = field(init=False)
    feature: np.ndarray = field(init=False)
    threshold: np.ndarray = field(init=False)

    def __post_init__(self, K: int, y: np.ndarray) -> None:
        n = self.lens.size
        self.seg = offsets(self.lens)
        self.node = np.repeat(np.arange(n), self.lens)
        self.counts = np.bincount(self.node * K + y[self.rows], weights=self.w,
                                  minlength=n * K).reshape(n, K).astype(float)
        self.feature = np.full(n, -1, dtype=np.int64)
        self.threshold = np.full(n, np.nan)


def _grow_levels(finder: SplitFinder, idx: np.ndarray, w: np.ndarray, depth0: int) -> GrownNodes:
    X, y, K = finder.X, finder.y, finder.n_classes
    eligible = finder.eligible
    p = finder.numeric_idx.size
    is_nominal = np.zeros(X.shape[1], dtype=bool)
    is_nominal[finder.nominal_idx] = True
    levels: list[_Level] = []
    value_branch: dict[int, np.ndarray] = {}
    lvl = _Level(0, idx, w, np.array([idx.size]), np.array([-1]), np.array([0]), K, y)
    pending = None  # how the previous batch's entries were sent to this level's nodes
    while True:
        levels.append(lvl)
        counts = lvl.counts
        active = ~segment_stops(finder, lvl.rows, lvl.w, lvl.seg, counts,
                                depth0 + len(levels) - 1)
        if not active.any():
            break
        # ------------------------------------------------ the batch of active nodes
        act = flat_nonzero(active)
        keep = active[lvl.node]
        b_rows, b_w = lvl.rows[keep], lvl.w[keep]
        b_seg = offsets(lvl.lens[act])
        b_we = eligible_weights(eligible, b_rows, b_w)
        if pending is None:
            # The root: sorted once. Rows with missing values (numeric or nominal) get
            # fractional weights in children, whose sums depend on the order of ties.
            any_order = not np.isnan(X[b_rows]).any() and _exact_any_order(
                b_w, X[np.ix_(b_rows, finder.numeric_idx)].T, missing_ok=False)
            batch = finder._single_batch(b_rows, b_w, b_we, any_order=any_order)
        else:
            S = V = Y = None
            if p:
                new_id = keep.cumsum() - 1
                prev_S, prev_V, prev_Y, sent = pending
                parts_S, parts_V, parts_Y = [], [], []
                for ent, lo in sent:
                    kept = keep[lo : lo + ent.size]
                    mark = np.zeros(prev_S.shape[1], dtype=bool)
                    mark[ent[kept]] = True
                    nid = np.zeros(prev_S.shape[1], dtype=_index_dtype(b_rows.size))
                    nid[ent[kept]] = new_id[lo : lo + ent.size][kept]
                    sel = flat_nonzero(mark[prev_S])
                    parts_S.append(nid[prev_S.ravel()[sel]].reshape(p, -1))
                    parts_V.append(prev_V.ravel()[sel].reshape(p, -1))
                    parts_Y.append(prev_Y.ravel()[sel].reshape(p, -1))
                S = np.concatenate(parts_S, axis=1)
                V = np.concatenate(parts_V, axis=1)
                Y = np.concatenate(parts_Y, axis=1)
            batch = _Batch(b_seg, b_rows, b_w, b_we, S, V, Y)
        choice = finder._evaluate(batch)
        split = record_choice(lvl, act, choice, value_branch)
        if split is None:
            break
        lvl, sent = next_level(lvl, act, split, choice, batch, X, is_nominal, K, y)
        pending = (batch.S, batch.V, batch.Y, sent)
    return _assemble(levels, value_branch, depth0, K)


def record_choice(lvl: _Level, act: np.ndarray, choice, value_branch: dict[int, np.ndarray]
                  ) -> np.ndarray | None:
    """Write the level's chosen tests (``choice`` for its active nodes ``act``) into
    ``lvl`` and the nominal tests' value-to-branch maps into ``value_branch``; the mask of
    the nodes that split, or None when none does."""
    split = choice.feature >= 0
    if not split.any():
        return None
    sp = act[split]
    lvl.feature[sp] = choice.feature[split]
    lvl.threshold[sp] = choice.threshold[split]
    for g in sorted(choice.value_branch):  # the chosen nominal tests only, in node order
        value_branch[lvl.base + int(act[g])] = choice.value_branch[g]
    return split


def next_level(lvl: _Level, act: np.ndarray, split: np.ndarray, choice, batch, X: np.ndarray,
               is_nominal: np.ndarray, K: int, y: np.ndarray
               ) -> tuple[_Level, list[tuple[np.ndarray, int]]]:
    """The children of the split nodes as the next level (rows routed by
    :func:`route_batch`), with, per branch b, the batch entries sent there and where they
    start (``sent``)."""
    nbr = np.where(split, choice.n_branches, 0)
    c_rows, c_w, c_lens, c_parent, c_branch, sent = [], [], [], [], [], []
    lo = 0
    routed = route_batch(X, is_nominal, batch.rows, batch.w, batch.node, batch.G,
                         np.where(split, choice.feature, -1), choice.threshold, nbr,
                         choice.value_branch)
    for b, (ent, cw_b) in enumerate(routed):
        exists = nbr > b
        c_rows.append(batch.rows[ent])
        c_w.append(cw_b)
        c_lens.append(np.bincount(batch.node[ent], minlength=batch.G)[exists])
        c_parent.append(lvl.base + act[exists])
        c_branch.append(np.full(int(exists.sum()), b))
        sent.append((ent, lo))
        lo += ent.size
    child = _Level(lvl.base + lvl.lens.size, np.concatenate(c_rows), np.concatenate(c_w),
                   np.concatenate(c_lens), np.concatenate(c_parent), np.concatenate(c_branch),
                   K, y)
    return child, sent


def route_batch(X: np.ndarray, is_nominal: np.ndarray, rows: np.ndarray, w: np.ndarray,
                ne: np.ndarray, G: int, feature: np.ndarray, threshold: np.ndarray,
                n_branches: np.ndarray, value_branch: dict[int, np.ndarray]
                ) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`route_rows` for G nodes laid end to end (entry e holds row ``rows[e]`` of node
    ``ne[e]``, nodes in increasing row order) with tests ``feature`` (-1: not split),
    ``threshold``, ``n_branches`` and nominal ``value_branch`` per node: per branch b, the
    entries sent to branch b of every node that has one (in entry order) and their weights,
    an unknown value's weight shared in proportion to the known weight of each branch,
    summed exactly as :func:`route_rows` sums it."""
    parts = _branches(X, is_nominal, rows, w, ne, G, feature, threshold, n_branches,
                      value_branch)
    if parts is None:
        return []
    branch, missing, to_all, frac = parts
    has_missing = missing.any()
    out = []
    for b in range(frac.shape[1]):  # an unknown value goes to every branch of positive weight
        sel = (branch == b) | (missing & to_all[ne, b]) if has_missing else branch == b
        ent = flat_nonzero(sel)
        cw_b = w[ent]
        m = missing[ent]
        if m.any():
            cw_b[m] = cw_b[m] * frac[ne[ent[m]], b]
        out.append((ent, cw_b))
    return out


def route_entries(X: np.ndarray, is_nominal: np.ndarray, rows: np.ndarray, w: np.ndarray,
                  ne: np.ndarray, G: int, feature: np.ndarray, threshold: np.ndarray,
                  n_branches: np.ndarray, value_branch: dict[int, np.ndarray]):
    """:func:`route_batch`'s routes as flat pairs, for callers that keep a few branches of
    many nodes: ``entry``, ``branch`` and ``weight`` of every (entry, branch it is sent
    to) — a known value's one branch, an unknown value's every branch of positive known
    weight, its weight times that branch's fraction (the same products) — by branch, then
    entry, as :func:`route_batch` lists them; each entry's own branch (-1: its value
    unknown or its node not split); and per node, the branches an unknown value is sent to
    (G, width). None when no node is split."""
    parts = _branches(X, is_nominal, rows, w, ne, G, feature, threshold, n_branches,
                      value_branch)
    if parts is None:
        return None
    branch, missing, to_all, frac = parts
    sent = branch == np.arange(frac.shape[1])[:, None]  # (width, entries)
    unknown = flat_nonzero(missing)
    if unknown.size:  # their branch is -1: nothing to keep of the known values' test
        sent[:, unknown] = to_all.take(ne[unknown], axis=0).T
    at = flat_nonzero(sent)
    to, entry = np.divmod(at, ne.size)
    weight = w.take(entry)
    if unknown.size:  # an unknown value's weight times its branch's fraction
        pair = flat_nonzero(missing.take(entry))
        weight[pair] *= frac.reshape(-1).take(ne.take(entry[pair]) * frac.shape[1] + to[pair])
    return entry, to, weight, branch, to_all


def split_arrays(G: int, nodes, splits: list) -> tuple:
    """``(feature, threshold, n_branches, value_branch)`` of ``G`` nodes, as
    :func:`route_batch` and :func:`entry_branches` take them, from the splits (or None) of
    the nodes numbered ``nodes``; every other node unsplit (feature -1)."""
    feature = np.full(G, -1, dtype=np.int64)
    threshold = np.full(G, np.nan)
    n_branches = np.zeros(G, dtype=np.int64)
    value_branch: dict[int, np.ndarray] = {}
    for g, sp in zip(nodes, splits, strict=True):
        if sp is not None:
            feature[g], threshold[g], n_branches[g] = sp.feature, sp.threshold, sp.n_branches
            if sp.value_branch is not None:
                value_branch[g] = sp.value_branch
    return feature, threshold, n_branches, value_branch


def entry_branches(X: np.ndarray, is_nominal: np.ndarray, rows: np.ndarray, ne: np.ndarray,
                   G: int, feature: np.ndarray, threshold: np.ndarray, n_branches: np.ndarray,
                   value_branch: dict[int, np.ndarray]) -> tuple[np.ndarray, ...]:
    """Each entry's branch under its node's test (-1: the node is not split — no branches,
    ``n_branches`` 0 — or the value is unknown), and whether its value is unknown, or
    known, at a split node; entries as :func:`route_batch`'s."""
    # (gathers index 1-D arrays with integer arrays, X flat: ``take`` costs about twice as
    # much in numpy 2, 2-D indexing several times)
    sp_e = n_branches[ne] > 0
    f_e = np.where(sp_e, feature[ne], 0)
    vals = (X.reshape(-1)[rows * X.shape[1] + f_e] if X.flags.c_contiguous
            else X[rows, f_e])
    missing = sp_e & np.isnan(vals)
    known = sp_e & ~missing
    branch = np.full(ne.size, -1, dtype=np.int64)
    nominal_e = is_nominal[f_e]
    nom_e = known & nominal_e
    num_e = known & ~nominal_e
    branch[num_e] = vals[num_e] > threshold[ne[num_e]]
    if nom_e.any():
        vb_nodes = sorted(value_branch)
        vb_off = np.zeros(G, dtype=np.int64)
        sizes = [value_branch[g].size for g in vb_nodes]
        vb_off[vb_nodes] = np.cumsum([0, *sizes[:-1]])
        vb_flat = np.concatenate([value_branch[g] for g in vb_nodes])
        branch[nom_e] = vb_flat[vb_off[ne[nom_e]] + vals[nom_e].astype(np.int64)]
    return branch, missing, known


def _branches(X: np.ndarray, is_nominal: np.ndarray, rows: np.ndarray, w: np.ndarray,
              ne: np.ndarray, G: int, feature: np.ndarray, threshold: np.ndarray,
              n_branches: np.ndarray, value_branch: dict[int, np.ndarray]):
    """What :func:`route_batch` routes by: each entry's branch (-1: not split or unknown),
    its value unknown at a split node, the branches (G, width) an unknown value goes to
    (those of positive known weight, where the node has unknown values) and their known
    weight fractions; None when no node is split."""
    nbr = np.where(feature >= 0, n_branches, 0)
    branch, missing, known = entry_branches(X, is_nominal, rows, ne, G, feature, threshold,
                                            nbr, value_branch)
    maxnb = int(nbr.max()) if G else 0
    if maxnb == 0:
        return None
    cw = np.bincount(ne[known] * maxnb + branch[known], weights=w[known],
                     minlength=G * maxnb).reshape(G, maxnb)
    known_total = cw[:, 0].copy()
    for b in range(1, maxnb):  # child_weight.sum(): sequential below 8 branches
        known_total = known_total + cw[:, b]
    many = nbr[nbr >= _SEQ_SUM]
    for n in np.unique(many) if many.size else ():  # each node's row summed as numpy does
        at = flat_nonzero(nbr == n)
        known_total[at] = _lastsum(cw[at, :n])
    has_missing = np.bincount(ne[missing], minlength=G) > 0
    to_all = has_missing[:, None] & (known_total > 0)[:, None] & (cw > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = cw / known_total[:, None]
    return branch, missing, to_all, frac


def _assemble(levels: list[_Level], value_branch: dict[int, np.ndarray], depth0: int,
              K: int) -> GrownNodes:
    """Flat arrays with the node ids of the depth-first builder."""
    parent = np.concatenate([lv.parent for lv in levels])
    branch = np.concatenate([lv.branch for lv in levels])
    T = parent.size
    has_parent = flat_nonzero(parent >= 0)
    kids = has_parent[np.lexsort((branch[has_parent], parent[has_parent]))]
    n_kids = np.bincount(parent[has_parent], minlength=T)
    kid_ptr = offsets(n_kids)
    # Depth-first numbering: pop a node, number its children, push them in reverse.
    new = [0] * T
    kid_list, ptr_list = kids.tolist(), kid_ptr.tolist()
    nxt, stack = 1, [0]
    while stack:
        t = stack.pop()
        lo, hi = ptr_list[t], ptr_list[t + 1]
        if hi > lo:
            ks = kid_list[lo:hi]
            for i, k in enumerate(ks):
                new[k] = nxt + i
            nxt += hi - lo
            stack.extend(reversed(ks))
    new_id = np.array(new, dtype=np.int64)
    perm = np.empty(T, dtype=np.int64)
    perm[new_id] = np.arange(T)
    depth = np.concatenate([np.full(lv.lens.size, depth0 + d) for d, lv in enumerate(levels)])
    lens = np.concatenate([lv.lens for lv in levels])
    ent_ptr = offsets(lens)
    rows = np.concatenate([lv.rows for lv in levels]).astype(np.int64)
    w = np.concatenate([lv.w for lv in levels]).astype(float)
    take = _ranges(ent_ptr[perm], lens[perm])
    r_ptr = offsets(lens[perm])
    ch_ptr = offsets(n_kids[perm])
    children = new_id[kids[_ranges(kid_ptr[perm], n_kids[perm])]]
    vb_sizes = np.zeros(T, dtype=np.int64)
    for t, v in value_branch.items():
        vb_sizes[t] = v.size
    vb_ptr = offsets(vb_sizes[perm])
    vb_order = sorted(value_branch, key=lambda t: new[t])
    return GrownNodes(
        feature=np.concatenate([lv.feature for lv in levels])[perm],
        threshold=np.concatenate([lv.threshold for lv in levels])[perm],
        children_ptr=ch_ptr,
        children=children.astype(np.int64),
        value_branch_ptr=vb_ptr,
        value_branch=np.concatenate(
            [np.empty(0, np.int64)] + [value_branch[t] for t in vb_order]
        ).astype(np.int64),
        counts=np.concatenate([lv.counts for lv in levels]).reshape(T, K)[perm],
        depth=depth[perm],
        rows_ptr=r_ptr,
        rows_idx=rows[take],
        rows_w=w[take],
    )


def _grow_nodewise(
    finder: SplitFinder, idx: np.ndarray, w: np.ndarray, *, depth: int = 0
) -> GrownNodes:
    """The straightforward builder: one :meth:`SplitFinder.best_split` per node."""
    X, y, K = finder.X, finder.y, finder.n_classes
    feature: list[int] = []
    threshold: list[float] = []
    children: list[list[int]] = []
    value_branch: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    depths: list[int] = []
    rows: list[tuple[np.ndarray, np.ndarray]] = []

    def new_node(nidx, nw, d) -> int:
        feature.append(-1)
        threshold.append(np.nan)
        children.append([])
        value_branch.append(np.empty(0, dtype=np.int64))
        counts.append(np.bincount(y[nidx], weights=nw, minlength=K).astype(float))
        depths.append(d)
        rows.append((nidx, nw))
        return len(feature) - 1

    stack = [new_node(idx, w, depth)]
    while stack:
        node = stack.pop()
        nidx, nw = rows[node]
        if node_stops(finder, nidx, nw, counts[node], depths[node]):
            continue
        split = finder.best_split(nidx, nw)
        if split is None:
            continue
        feature[node] = split.feature
        threshold[node] = split.threshold
        if split.value_branch is not None:
            value_branch[node] = split.value_branch
        child_known = branch_known_weights(X, nidx, nw, split)
        kids = [
            new_node(ci, cw, depths[node] + 1)
            for ci, cw in route_rows(X, nidx, nw, split, child_known)
        ]
        children[node] = kids
        stack.extend(reversed(kids))

    n = len(feature)
    ch_ptr = np.zeros(n + 1, dtype=np.int64)
    ch_ptr[1:] = np.cumsum([len(c) for c in children])
    vb_ptr = np.zeros(n + 1, dtype=np.int64)
    vb_ptr[1:] = np.cumsum([v.size for v in value_branch])
    r_ptr = np.zeros(n + 1, dtype=np.int64)
    r_ptr[1:] = np.cumsum([r[0].size for r in rows])
    return GrownNodes(
        feature=np.array(feature, dtype=np.int64),
        threshold=np.array(threshold, dtype=float),
        children_ptr=ch_ptr,
        children=np.array([c for cs in children for c in cs], dtype=np.int64),
        value_branch_ptr=vb_ptr,
        value_branch=(
            np.concatenate(value_branch).astype(np.int64) if n else np.empty(0, np.int64)
        ),
        counts=np.array(counts, dtype=float).reshape(n, K),
        depth=np.array(depths, dtype=np.int64),
        rows_ptr=r_ptr,
        rows_idx=np.concatenate([r[0] for r in rows]).astype(np.int64),
        rows_w=np.concatenate([r[1] for r in rows]).astype(float),
    )
