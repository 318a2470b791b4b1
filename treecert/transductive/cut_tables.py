"""Tables of a node's training rows R alone, whatever x and its class (the label search of
:mod:`treecert.transductive.batch_engine`, :mod:`.label_search` and :mod:`.sided_search`):
every valid cut of every numeric column — its threshold, R's class counts and weight left of
it and their N·impurities — and R's class counts per nominal value.

A column's cuts come from R sorted by the column's value ranks (:func:`sorted_cuts`) or,
for a node of many rows over columns of few distinct values, from R's class weights per
(column, distinct value) (:func:`tallied_cuts`): a cut lies between two consecutive values
present in R either way, and every sum is of integer weights (:func:`label_search.covers`),
so exact in any order. The two give the same arrays bit for bit
(``tests/test_label_search.py``); the tallies need no sort (shuttle-shaped data: 58 000
rows, integer attributes of ~120 values).
"""

from __future__ import annotations

import numpy as np

from treecert.transductive.node_search import numeric_columns, rank_orders, sorted_values
from treecert.tree.impurity import _LN2, _SEQ_SUM, _impurity_last, _lastsum
from treecert.tree.numeric_search import _TABLE_MAX
from treecert.tree.segments import flat_nonzero, offsets, run_lengths, run_starts


class NodeTable:
    """What a node's search needs of its training rows R alone, whatever x and its class:
    every valid cut of every numeric column (its column, threshold, R's class counts
    left and right of it and their N·impurities), R's class counts per nominal value, R's
    class totals and weight. Kept per R between searches (``label_search.search_groups``):
    many test rows change the same base test, or to the same competitor, and so search
    nodes of the very same rows."""

    __slots__ = ("N", "T", "cnt", "col", "e_left", "e_right", "elig", "gain_span", "left",
                 "n_gain", "right", "skip", "thr", "w_left")

    def nbytes(self) -> int:
        return sum(getattr(self, a).nbytes for a in self.__slots__
                   if isinstance(getattr(self, a), np.ndarray))


def nimp(counts: np.ndarray, gini: bool, table: np.ndarray | None) -> np.ndarray:
    """N·impurity of integer count rows (..., K), as the grower's cut search computes it:
    x ln x from its table (entropy, integer totals) or :func:`_impurity_last`."""
    if table is None:
        return _impurity_last(counts, gini)
    c = counts.astype(np.intp)
    total = np.einsum("...k->...", c)  # integers: any order (4x numpy's sum of short rows)
    return (table[total] - _lastsum(table[c])) / _LN2


def nimp_plus_each(counts: np.ndarray, gini: bool, table: np.ndarray | None) -> np.ndarray:
    """:func:`nimp` of ``counts[i] + e_c`` for every row i (n, K) and class c: (n, K).
    With x ln x from a table and fewer classes than numpy's pairwise block, the class
    terms of all K changed rows are summed side by side — term k added to every running
    sum, the changed class's own term x ln x(count + 1) — the additions of each row one
    after the other as :func:`nimp` makes them (``_lastsum``), without the (n·K, K)
    copy; elsewhere the copy."""
    n, K = counts.shape
    if table is None or K >= _SEQ_SUM:
        rows = np.repeat(np.arange(n), K)
        xs = counts[rows].copy()
        xs[np.arange(n * K), np.tile(np.arange(K), n)] += 1.0
        return nimp(xs, gini, table).reshape(n, K)
    c = counts.astype(np.intp)
    terms, plus = table[c], table[c + 1]  # (n, K): x ln x of each count, and of count + 1
    run = np.repeat(terms[:, :1], K, axis=1)  # the first term of every changed row ...
    run[:, 0] = plus[:, 0]  # ... but the row whose class 0 changed
    for k in range(1, K):
        own = run[:, k] + plus[:, k]
        run += terms[:, k:k + 1]
        run[:, k] = own
    total = np.einsum("...k->...", c) + 1  # integers: any order
    return (table[total][:, None] - run) / _LN2


def xlogx_of(finder, total: float):
    """The grower's table of x ln x for integer counts up to ``total``, or None where its
    cut search computes x ln x directly (Gini; totals from 2^22)."""
    if finder.params.criterion == "gini" or total >= _TABLE_MAX:
        return None
    return finder._xlogx_table(int(total))


def node_tables(finder, nodes: list, rank: np.ndarray, with_x: bool = True) -> list[NodeTable]:
    """:class:`NodeTable` of every node ``(rows, w)``, laid end to end and built together:
    of R for nodes R ∪ {x} (x ineligible, ``with_x``), or of nodes of R alone."""
    params = finder.params
    gini = params.criterion == "gini"
    K, G = finder.n_classes, len(nodes)
    lens = np.array([r.size for r, _ in nodes], dtype=np.int64)
    seg = offsets(lens)
    node = np.repeat(np.arange(G), lens)
    rows = np.concatenate([r for r, _ in nodes]).astype(np.int64)
    w = np.concatenate([v for _, v in nodes]).astype(float)
    M = rows.size
    yr = finder.y[rows].astype(np.int64)
    # (floats even for empty nodes: bincount of nothing gives integers)
    T = np.bincount(node * K + yr, weights=w, minlength=G * K).reshape(G, K).astype(float)
    N = np.bincount(node, weights=w, minlength=G).astype(float)
    def own(a: np.ndarray) -> np.ndarray:  # a cached table must not hold the batch's arrays
        return a.copy() if G > 1 else a

    out = []
    for g in range(G):
        t = NodeTable()
        t.T, t.N = own(T[g]), float(N[g])
        out.append(t)
    cols = finder.numeric_idx
    p = cols.size
    ncut = np.zeros(G, dtype=np.int64)
    col, thr, left = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros((0, K))
    w_left, skip = np.zeros(0), np.zeros(0, dtype=bool)
    if p and M:
        col, thr, left, w_left, cg, skip = valid_cuts(finder, rows, w, seg, node, rank, N,
                                                      with_x)
        ncut = np.bincount(cg, minlength=G)
    right = T[np.repeat(np.arange(G), ncut)] - left
    table = xlogx_of(finder, float(N.max(initial=0.0)) + 1.0)
    e_left, e_right = nimp(left, gini, table), nimp(right, gini, table)
    n_gain = _impurity_last(T, gini)[np.repeat(np.arange(G), ncut)] - e_left - e_right
    bounds = offsets(ncut)
    for g, t in enumerate(out):
        s = slice(bounds[g], bounds[g + 1])
        t.col, t.thr, t.left, t.right, t.skip, t.w_left = (
            own(a[s]) for a in (col, thr, left, right, skip, w_left))
        t.e_left, t.e_right, t.n_gain = (own(a[s]) for a in (e_left, e_right, n_gain))
        t.gain_span = float(np.ptp(t.n_gain)) if t.n_gain.size else 0.0
    q = finder.nominal_idx.size
    if q:
        V = max(finder.max_values, 1)
        codes = finder.X[np.ix_(rows, finder.nominal_idx)].astype(np.int64)
        cell = (node[:, None] * q + np.arange(q)[None, :]) * V + codes
        wb = np.broadcast_to(w[:, None], cell.shape)
        cnt = np.bincount((cell * K + yr[:, None]).ravel(), weights=wb.ravel(),
                          minlength=G * q * V * K).reshape(G, q, V, K).astype(float)
        elig = np.bincount(cell.ravel(), weights=wb.ravel(),
                           minlength=G * q * V).reshape(G, q, V).astype(float)
        for g, t in enumerate(out):
            t.cnt, t.elig = own(cnt[g]), own(elig[g])
    else:
        for t in out:
            t.cnt = t.elig = None
    return out


def valid_cuts(finder, rows, w, seg, node, rank, N, with_x: bool = True):
    """Every valid cut of every (node, numeric column) of nodes laid end to end, ordered by
    (node, column, position): its column (local index), threshold, the node's class counts
    and weight left of it, its node, and whether the Fayyad–Irani rule skips it. Nodes of
    many rows over columns of few distinct values are tallied per value
    (:func:`tallied_cuts`), the others sorted (:func:`sorted_cuts`): the same arrays.
    ``with_x``: the cuts of R ∪ {x}, x ineligible (:func:`_thresholds`), else of R alone."""
    lens = np.diff(seg)
    tallied = tallies_pay(finder, rank, lens, w)
    if not tallied.any():
        return sorted_cuts(finder, rows, w, seg, node, rank, N, with_x)
    pieces = []
    for chosen in (flat_nonzero(tallied), flat_nonzero(~tallied)):
        if not lens[chosen].sum():  # no rows (or no nodes): no cuts
            continue
        sub = np.repeat(tallied[chosen[0]] == tallied, lens)  # the entries of those nodes
        sub_seg = offsets(lens[chosen])
        sub_node = np.repeat(np.arange(chosen.size), lens[chosen])
        cut = (tallied_cuts if tallied[chosen[0]] else sorted_cuts)(
            finder, rows[sub], w[sub], sub_seg, sub_node, rank, N[chosen], with_x)
        pieces.append((*cut[:4], chosen[cut[4]], cut[5]))
    ck, thr, left, w_left, cg, skip = (np.concatenate(a) for a in zip(*pieces, strict=True))
    order = np.argsort(cg * finder.numeric_idx.size + ck, kind="stable")
    return ck[order], thr[order], left[order], w_left[order], cg[order], skip[order]


#: A node is tallied per value (:func:`tallied_cuts`) when its rows number at least this
#: share of its (value, class) cells per column (the most distinct values of a column ×
#: classes): a tally cell costs a few passes, a sorted row a sort and a dozen passes
#: (shuttle-shaped data, 0.05–1.0 measured alike). A tallied node's cells are then at most
#: twice its sorted entries, so ``SEARCH_CELLS`` bounds the tallies' memory too.
TALLY_ROWS_PER_CELL = 0.5


def tallies_pay(finder, rank, lens: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per node of ``lens`` rows: whether :func:`tallied_cuts` builds its cuts. Only with
    positive weights: a row of weight 0 has a value (a sorted neighbour) but no tally."""
    if not lens.size or not bool(np.all(w > 0)):
        return np.zeros(lens.size, dtype=bool)
    cells = value_codes(finder, rank)[1].shape[1] * finder.n_classes
    return lens >= TALLY_ROWS_PER_CELL * cells


def value_codes(finder, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per numeric column of the finder's X: each row's dense code (the position of its
    value among the column's distinct values) and those values ascending, padded with NaN
    to the most distinct values of a column: (p, n), (p, D). From the value ranks, without
    sorting again; kept on the finder (its rows do not change while it searches)."""
    got = finder.__dict__.get("_value_codes")
    if got is not None:
        return got
    columns = numeric_columns(finder)
    p, n = columns.shape
    codes = np.empty((p, n), dtype=np.int64)
    distinct = []
    for k in range(p):
        in_order = np.empty(n)
        in_order[rank[k]] = columns[k]
        new = run_starts(in_order)
        codes[k] = (new.cumsum() - 1)[rank[k]]
        distinct.append(in_order[new])
    D = max((d.size for d in distinct), default=0)
    values = np.full((p, D), np.nan)
    for k, d in enumerate(distinct):
        values[k, :d.size] = d
    finder._value_codes = codes, values
    return finder._value_codes


def _cell_codes(finder, rank: np.ndarray) -> np.ndarray:
    """Per numeric column k and row: (k·D + the row's value code)·K, its tally cell in
    a node's (column, value, class) block (:func:`tallied_cuts`); kept on the finder."""
    got = finder.__dict__.get("_cell_codes")
    if got is None:
        codes, values = value_codes(finder, rank)
        p, D = values.shape
        K = finder.n_classes
        got = finder._cell_codes = (codes + (np.arange(p) * D)[:, None]) * K
    return got


def tallied_cuts(finder, rows, w, seg, node, rank, N, with_x: bool = True):
    """:func:`sorted_cuts` (the same arrays, in the same order) from the nodes' class
    weights per (column, distinct value) instead of their sorted columns: a column's cuts
    lie between consecutive values present in the node, and every sum is of integer
    weights, so exact in any order. Positive weights: a present value has weight."""
    K, G = finder.n_classes, seg.size - 1
    _, values = value_codes(finder, rank)
    p, D = values.shape
    # ((node, column, value), class) = node·pDK + (column·D + value)·K + class
    first = node * (p * D * K) + finder.y.take(rows)
    cells = _cell_codes(finder, rank)
    cell = np.empty((p, rows.size), dtype=np.int64)
    for k in range(p):
        np.add(cells[k].take(rows), first, out=cell[k])
    H = np.bincount(cell.ravel(), weights=np.tile(w, p), minlength=G * p * D * K)
    H = H.reshape(G * p * D, K)
    at = flat_nonzero(_lastsum(H) > 0)  # present (node, column, value)s, in that order
    H = H[at]
    gk, code = at // D, at % D
    cg, ck = gk // p, gk % p
    new = run_starts(gk)
    first = flat_nonzero(new)
    cum = H.cumsum(axis=0)  # exact: integer weights
    base = (cum[first] - H[first]).repeat(run_lengths(first, at.size), axis=0)
    left_all = cum - base  # class weights up to and including each value
    w_left_all = _lastsum(left_all)
    nxt = np.concatenate((~new[1:], [False]))  # a next value in the same (node, column)
    a = values[ck, code]
    b = np.concatenate((a[1:], [np.nan]))  # the next present value (read only where ``nxt``)
    ml = min_branch(finder, N)[cg]
    with np.errstate(invalid="ignore"):
        valid = nxt & (w_left_all >= ml) & (N[cg] - w_left_all >= ml)
        t, valid = _thresholds(finder, a, b, valid, with_x)
    # Fayyad & Irani as in :func:`sorted_cuts`, over blocks of values ending at valid cuts
    stop = valid | ~nxt
    blk = np.cumsum(stop) - stop
    classes = np.add.reduceat(H > 0, flat_nonzero(np.concatenate(([True], stop[:-1]))), axis=0) > 0
    fc = flat_nonzero(valid)
    skip = _skipped(classes, np.concatenate((valid[stop], [False])), blk[fc])
    return ck[fc], t[fc], left_all[fc], w_left_all[fc], cg[fc], skip


def _thresholds(finder, a: np.ndarray, b: np.ndarray, valid: np.ndarray, with_x: bool):
    """The grower's threshold of a cut between neighbours a < b, and ``valid`` less the cuts
    it does not offer. With an ineligible x in the node (``with_x``) its ineligible-cut
    rule: thresholds from finite neighbours only, and a midpoint that rounds onto b is no
    cut. Without: any neighbours, and such a midpoint becomes a."""
    if with_x:
        valid = valid & np.isfinite(a) & np.isfinite(b)
    if finder.params.threshold == "lower":
        return a, valid
    with np.errstate(invalid="ignore", over="ignore"):
        t = (a + b) / 2.0
    if with_x:
        return t, valid & (a <= t) & (t < b)
    return np.where(t < b, t, a), valid


def sorted_cuts(finder, rows, w, seg, node, rank, N, with_x: bool = True):
    """:func:`valid_cuts` of nodes whose columns are sorted (by their ranks)."""
    K, M = finder.n_classes, rows.size
    cols = finder.numeric_idx
    p = cols.size
    S = rank_orders(rank, rows, seg, node)
    V, Y, W = sorted_values(finder, rows, S, w)
    Y = Y.astype(np.int64, copy=False)
    cw = np.cumsum(W, axis=1)  # exact: integer weights
    start = seg[:-1]
    before = np.where(start > 0, cw[:, np.maximum(start - 1, 0)], 0.0)  # (p, G)
    left = cw[:, :-1] - before[:, node[:-1]]  # weight left of cut i (eligible: all of R)
    a, b = V[:, :-1], V[:, 1:]
    ml = min_branch(finder, N)[node[:-1]]
    cut = (node[:-1] == node[1:]) & (a < b) & (left >= ml) & (N[node[:-1]] - left >= ml)
    t, cut = _thresholds(finder, a, b, cut, with_x)  # with x: its ineligible-cut rule
    valid = np.zeros((p, M), dtype=bool)
    valid[:, :-1] = cut
    # class counts left of every valid cut: entries summed in blocks ending at the valid
    # cuts and at node ends, cumulated, less the node's start
    stop = valid.copy()
    stop[:, seg[1:] - 1] = True
    flat = stop.ravel()
    blk = np.cumsum(flat) - flat
    B = int(flat.sum())
    cum = np.cumsum(np.bincount(blk * K + Y.ravel(), weights=W.ravel(), minlength=B * K)
                    .reshape(B, K), axis=0)
    cum0 = np.vstack([np.zeros((1, K)), cum])
    base = cum0[blk.reshape(p, M)[:, np.minimum(start, M - 1)]]  # (p, G, K): before a node
    fc = flat_nonzero(valid)
    ck, ci = fc // M, fc % M
    cg = node[ci]
    order = np.argsort(cg * p + ck, kind="stable")  # cuts by (node, column, position)
    fc, ck, ci, cg = fc[order], ck[order], ci[order], cg[order]
    classes = np.bincount(blk * K + Y.ravel(), minlength=B * K).reshape(B, K) > 0
    b = blk[fc]
    skip = _skipped(classes, np.concatenate((valid.ravel()[flat_nonzero(flat)], [False])), b)
    return ck, t[ck, ci], cum[b] - base[ck, cg], left[ck, ci], cg, skip


def _skipped(classes: np.ndarray, ends_cut: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fayyad & Irani (``label_search._best_cuts``), for the cuts ending blocks ``b`` of a
    column's entries (blocks end at valid cuts and at node ends; ``classes`` (blocks, K):
    the classes present in each; ``ends_cut``: whether each block ends at a valid cut,
    False appended): a cut is skipped where its neighbouring valid cuts exist (the blocks
    before and after it end at cuts) and the rows between them, its block and the next,
    are of one class."""
    pure = classes.sum(axis=1) == 1
    cls = np.argmax(classes, axis=1)
    after = np.minimum(b + 1, classes.shape[0] - 1)
    skip = (b > 0) & ends_cut[np.maximum(b - 1, 0)] & ends_cut[b + 1] & pure[b]
    return skip & pure[after] & (cls[b] == cls[after])


def min_branch(finder, N: np.ndarray) -> np.ndarray:
    """Per node of R's weight ``N``: the least eligible weight on each side of a numeric
    cut, as the grower computes it (x's weight is not eligible): ``min_leaf``, or J48's
    ``clamp(0.1 N / K, min_leaf, 25)`` under gain ratio (its check that N is at least
    twice that follows from both sides' checks: integer sums are exact)."""
    params = finder.params
    ml = float(params.min_leaf)
    if params.criterion != "gain_ratio":
        return np.full(N.shape, ml)
    return np.clip(0.1 * N / finder.n_classes, ml, 25.0)
