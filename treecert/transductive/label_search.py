"""Exact split searches shared by the labels of one test row (device 4 of
:mod:`treecert.transductive.batch_engine`).

Below a test that x changed, the batched engine searches x's node exactly for every job
(x, c). The jobs of one x that reach the same node hold the same training rows R and
differ only in x's class, yet the grower's search of R ∪ {(x, c)} sorts R, cumulates its
class weights along every column and scores every cut K times over (26 times on a
letter-shaped problem). Here R is sorted and counted once per node, and only the
arithmetic that depends on c is done per label:

* **Numeric cuts.** x is ineligible (:mod:`treecert.tree.split_search`): its value never
  becomes a threshold and its weight never makes a test admissible. Between two
  consecutive distinct values a < b of R the grower, on R ∪ {x}, offers exactly one cut:
  its threshold comes from the eligible neighbours a and b (midpoint (a + b)/2 or the
  lower value a), it is admissible iff it is in R (eligible weights), and x lies on the
  side ``x <= threshold``. (If a <= x < b, x sits between a and b in the sorted column and
  of the two positions either side of it the ineligible-cut rule keeps the one on x's side
  of the threshold; elsewhere the cut's neighbours are a and b themselves.) So a cut's
  class counts with x are R's plus ``e_c`` on x's side: R's counts at every cut are
  cumulated once (in blocks ending at the valid cuts), the side without x is scored once
  per cut, and only the side with x once per label.
* **Nominal tests.** R's class counts per value are tallied once and x's class added to
  x's value per label; the grower's own scoring of counts
  (``SplitFinder._nominal_scores``) scores them.
* **The choice.** Per (label, column) the first cut of largest gain rounded to 10
  decimals — what the grower's cut search finds (its Fayyad–Irani pruning loses no such
  cut, ``tests/test_grow_equivalence.py``); then the grower's own selection among columns
  (``SplitFinder._choose``).

Every gain is computed from the same integer class counts with the same operations in
the same order as the grower's (:mod:`treecert.tree.impurity`: x ln x read from the same
table, class sums in numpy's order), so the chosen tests are the grower's bit for bit
(``tests/test_label_search.py`` compares with the per-node search). It covers what those
arguments need (:func:`covers`): complete data, integer weights, every training row
eligible, ``info_gain`` or ``gini``; elsewhere the engine searches job by job
(:func:`~treecert.transductive.node_search.evaluate_nodes`).
"""

from __future__ import annotations

import numpy as np

from treecert.transductive.node_search import SEARCH_CELLS
from treecert.tree.impurity import _LN2, _ROUND, _impurity_last, _lastsum
from treecert.tree.numeric_search import _TABLE_MAX
from treecert.tree.segments import _ranges
from treecert.tree.split_search import _NOMINAL_CELLS

#: (cut, label) pairs × classes scored at once: bounds the per-label arrays (~100 MB).
PAIR_CELLS = 1 << 22


def covers(finder, weights: np.ndarray) -> bool:
    """Whether the shared search equals the grower's on nodes of training rows with these
    ``weights`` plus one ineligible x of weight 1 (module docstring): integer weights
    whose sums stay exact, and a criterion without gain ratio's MDL term and average-gain
    filter (those take the per-job search)."""
    w = np.asarray(weights, dtype=float)
    return (finder.params.criterion in ("info_gain", "gini") and bool(np.all(w >= 0))
            and bool(np.all(w == np.round(w))) and float(w.sum()) + 1.0 < 2.0**31)


def search_groups(finder, groups: list, rank: np.ndarray) -> list[list]:
    """Per group ``(rows, w, x, labels)`` — training rows R (ascending, eligible, no
    missing values) with weights, x's values (no missing value) and x's classes — the
    split the grower's finder chooses for R ∪ {(x, c)} (x ineligible, weight 1) for every
    c in ``labels``, or None. ``rank``: the finder's value ranks (one row per numeric
    column, :func:`~treecert.transductive.node_search.value_ranks`). Groups are searched
    in parts of at most :data:`~treecert.transductive.node_search.SEARCH_CELLS` rows ×
    attributes."""
    if not groups:
        return []
    cells = np.cumsum([g[0].size for g in groups]) * max(1, finder.X.shape[1])
    out, start = [], 0
    while start < len(groups):  # consecutive parts within the budget, one group at least
        before = cells[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(cells, before + SEARCH_CELLS, side="right")))
        out += _search(finder, groups[start:stop], rank)
        start = stop
    return out


def _search(finder, groups: list, rank: np.ndarray) -> list[list]:
    K, G = finder.n_classes, len(groups)
    lens = np.array([g[0].size for g in groups], dtype=np.int64)
    seg = np.zeros(G + 1, dtype=np.int64)
    np.cumsum(lens, out=seg[1:])
    node = np.repeat(np.arange(G), lens)
    rows = np.concatenate([g[0] for g in groups]).astype(np.int64)
    w = np.concatenate([g[1] for g in groups]).astype(float)
    xq = np.array([g[2] for g in groups], dtype=float).reshape(G, -1)
    m = np.array([len(g[3]) for g in groups], dtype=np.int64)
    lab = np.concatenate([np.asarray(g[3], dtype=np.int64) for g in groups])
    gl = np.repeat(np.arange(G), m)  # each label-node's group
    Lg = lab.size
    yr = finder.y[rows].astype(np.int64)
    T = np.bincount(node * K + yr, weights=w, minlength=G * K).reshape(G, K)  # R's counts
    N = np.bincount(node, weights=w, minlength=G)
    tw = N[gl] + 1.0  # the node's total weight, x included (exact: integer weights)
    Tx = T[gl]
    Tx[np.arange(Lg), lab] += 1.0
    gini = finder.params.criterion == "gini"
    p, q = finder.numeric_idx.size, finder.nominal_idx.size
    ok = np.zeros((Lg, p + q), dtype=bool)
    gain = np.zeros((Lg, p + q))
    score = np.zeros((Lg, p + q))
    thr = np.full((Lg, p), np.nan)
    vb = np.full((Lg, q), -1, dtype=np.int64)
    if p and rows.size:
        table = None
        if not gini and float(tw.max()) < _TABLE_MAX:
            table = finder._xlogx_table(int(tw.max()))  # the grower's x ln x of integers
        parent = _impurity_last(Tx, gini)
        _numeric(finder, rows, w, seg, node, xq, rank, T, lab, gl, parent, tw, table,
                 ok, gain, thr)
        score[:, :p] = gain[:, :p]
    if q and rows.size:
        _nominal(finder, rows, w, node, xq, lab, gl, tw, ok, gain, score, vb)
    choice = finder._choose(ok, gain, score, thr, vb)
    splits = [choice.split(i) for i in range(Lg)]
    bounds = np.r_[0, np.cumsum(m)]
    return [splits[bounds[g]:bounds[g + 1]] for g in range(G)]


def _nimp(counts: np.ndarray, gini: bool, table: np.ndarray | None) -> np.ndarray:
    """N·impurity of integer count rows (..., K), as the grower's cut search computes it:
    x ln x from its table (entropy, integer totals) or :func:`_impurity_last`."""
    if table is None:
        return _impurity_last(counts, gini)
    c = counts.astype(np.intp)
    return (table.take(c.sum(axis=-1)) - _lastsum(table.take(c))) / _LN2


def _numeric(finder, rows, w, seg, node, xq, rank, T, lab, gl, parent, tw, table,
             ok, gain, thr):
    """Best cut of every (label-node, numeric column) into ``ok``, ``gain``, ``thr``."""
    params = finder.params
    gini = params.criterion == "gini"
    K, G, M = finder.n_classes, seg.size - 1, rows.size
    cols = finder.numeric_idx
    p = cols.size
    # R sorted along every column: the grower's stable value order (unique ranks)
    offset = node * rank.shape[1]
    S = np.empty((p, M), dtype=np.int64)
    for k in range(p):
        S[k] = np.argsort(offset + rank[k, rows])
    V = np.take_along_axis(finder.X[np.ix_(rows, cols)].T, S, axis=1)
    Y = finder.y[rows].astype(np.int64)[S]
    W = w[S]
    cw = np.cumsum(W, axis=1)  # exact: integer weights
    start = seg[:-1]
    before = np.where(start > 0, cw[:, np.maximum(start - 1, 0)], 0.0)  # (p, G)
    left = cw[:, :-1] - before[:, node[:-1]]  # weight left of cut i (eligible: all of R)
    a, b = V[:, :-1], V[:, 1:]
    ml = float(params.min_leaf)
    valid = np.zeros((p, M), dtype=bool)
    cut = (node[:-1] == node[1:]) & (a < b) & (left >= ml)
    cut &= (np.bincount(node, weights=w, minlength=G)[node[:-1]] - left) >= ml
    # the ineligible-cut rule of the grower (every node here holds x): thresholds from
    # finite eligible neighbours only, a midpoint strictly below the upper value
    cut &= np.isfinite(a) & np.isfinite(b)
    if params.threshold == "lower":
        t = a
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            t = (a + b) / 2.0
        cut &= (a <= t) & (t < b)
    valid[:, :-1] = cut
    # R's class counts left of every valid cut: entries summed in blocks ending at the
    # valid cuts and at group ends, cumulated, less the group's start
    stop = valid.copy()
    stop[:, seg[1:] - 1] = True
    flat = stop.ravel()
    blk = np.cumsum(flat) - flat
    B = int(flat.sum())
    cum = np.cumsum(np.bincount(blk * K + Y.ravel(), weights=W.ravel(), minlength=B * K)
                    .reshape(B, K), axis=0)
    cum0 = np.vstack([np.zeros((1, K)), cum])
    base = cum0[blk.reshape(p, M)[:, np.minimum(start, M - 1)]]  # (p, G, K): before each group
    fc = np.flatnonzero(valid)
    if not fc.size:
        return
    ck, ci = fc // M, fc % M
    cg = node[ci]
    order = np.argsort(cg * p + ck, kind="stable")  # cuts by (group, column, position)
    fc, ck, ci, cg = fc[order], ck[order], ci[order], cg[order]
    L = cum[blk[fc]] - base[ck, cg]
    R = T[cg] - L
    t_cut = t[ck, ci]
    xl = xq[cg, cols[ck]] <= t_cut  # x's side of each cut
    # the side without x, once per cut
    e_other = _nimp(np.where(xl[:, None], R, L), gini, table)
    x_side = np.where(xl[:, None], L, R)
    ncut = np.bincount(cg, minlength=G)
    cstart = np.cumsum(ncut) - ncut
    per = ncut[gl] * K
    lo = 0
    Lg = lab.size
    while lo < Lg:  # label-nodes in parts of at most PAIR_CELLS pairs × classes
        hi = lo + max(1, int(np.searchsorted(np.cumsum(per[lo:]), PAIR_CELLS, side="right")))
        hi = min(hi, Lg)
        ln = np.arange(lo, hi)
        pl = np.repeat(ln, ncut[gl[ln]])
        pc = _ranges(cstart[gl[ln]], ncut[gl[ln]])
        if pc.size:
            xs = x_side[pc]
            xs[np.arange(pc.size), lab[pl]] += 1.0
            e_x = _nimp(xs, gini, table)
            e_o = e_other[pc]
            left_x = xl[pc]
            g = (parent[pl] - np.where(left_x, e_x, e_o) - np.where(left_x, e_o, e_x)) / tw[pl]
            key = pl * p + ck[pc]
            rg = np.round(g, _ROUND)
            n = key.size
            first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            sizes = np.diff(np.r_[first, n])
            gmax = np.maximum.reduceat(rg, first)
            kb = np.minimum.reduceat(np.where(rg == np.repeat(gmax, sizes), np.arange(n), n),
                                     first)
            li, kj = pl[kb], ck[pc[kb]]
            ok[li, kj] = True
            gain[li, kj] = g[kb]
            thr[li, kj] = t_cut[pc[kb]]
        lo = hi


def _nominal(finder, rows, w, node, xq, lab, gl, tw, ok, gain, score, vb):
    """Best test of every (label-node, nominal column) into ``ok``, ``gain``, ``score``
    and ``vb``."""
    cols = finder.nominal_idx
    K, V, q = finder.n_classes, max(finder.max_values, 1), cols.size
    G = xq.shape[0]
    p = finder.numeric_idx.size
    codes = finder.X[np.ix_(rows, cols)].astype(np.int64)
    cell = (node[:, None] * q + np.arange(q)[None, :]) * V + codes
    yr = finder.y[rows].astype(np.int64)
    wb = np.broadcast_to(w[:, None], cell.shape)
    counts = np.bincount((cell * K + yr[:, None]).ravel(), weights=wb.ravel(),
                         minlength=G * q * V * K).reshape(G, q, V, K)
    elig = np.bincount(cell.ravel(), weights=wb.ravel(), minlength=G * q * V).reshape(G, q, V)
    xc = xq[:, cols].astype(np.int64)  # x's value per (group, column)
    step = max(1, _NOMINAL_CELLS // (q * V * K))
    for lo in range(0, lab.size, step):
        ln = np.arange(lo, min(lab.size, lo + step))
        cnt = counts[gl[ln]]
        cnt[np.arange(ln.size)[:, None], np.arange(q)[None, :], xc[gl[ln]],
            lab[ln][:, None]] += 1.0
        ok[ln, p:], gain[ln, p:], score[ln, p:], vb[ln] = finder._nominal_scores(
            cnt, elig[gl[ln]], tw[ln])
