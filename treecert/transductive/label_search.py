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
  cut, ``tests/test_grow_equivalence.py``), found here with the same pruning
  (:func:`_best_cuts`); then the grower's own selection among columns
  (``SplitFinder._choose``).
* **Gain ratio** (J48's selection). x's weight is not eligible, so the least branch
  weight ``clamp(0.1 N / K, min_leaf, 25)`` is R's and decides R's valid cuts, and the
  number of cuts in the MDL term (log2(#cuts) / (N + 1)) is R's: of the two positions
  either side of x exactly one cut survives, as above. The column's best cut by gain is
  corrected and divided by its split information — its branch weights R's plus x's 1 on
  x's side (:func:`_ratio_cuts`); nominal tests and the average-gain filter are the
  grower's own code (``SplitFinder._nominal_scores``, ``SplitFinder._choose``).
* **Kept between searches.** R's tables (:class:`NodeTable`) do not depend on x, and many
  x search the same R (a base node's rows, then the same competitor), so they are kept
  per R in a byte-bounded LRU (:data:`~treecert.transductive.budget.TABLE_BYTES`), named
  by R's derivation (``BatchEngine._child_key``: no hashing of R's rows).
* **Cuts out of x's reach.** One unit of weight moves n·impurity by at most δ(n)
  (:func:`_within_reach`): only cuts near their column's best on R are scored per label.
* **Pairs far from the best** (four classes or more). A pair's gain has an O(1) shortcut
  (four x ln x lookups); only pairs within 1e-8 of the best are scored (:func:`_near_best`).
* **Runs beside the best.** The skipped cuts next to a near-best cut are scored only as
  far as the chord bound of a convex gain lets them tie it (:func:`_rising_runs`).

Every gain is computed from the same integer class counts with the same operations in
the same order as the grower's (:mod:`treecert.tree.impurity`: x ln x read from the same
table, class sums in numpy's order), so the chosen tests are the grower's bit for bit
(``tests/test_label_search.py`` compares with the per-node search). It covers what those
arguments need (:func:`covers`): complete data, integer weights, every training row
eligible, any criterion; elsewhere, and for two classes on nodes where a table does not
pay (:func:`shares`), the engine searches job by job (``node_search.evaluate_nodes``).
"""

from __future__ import annotations

import numpy as np

from treecert.transductive.budget import key_bytes
from treecert.transductive.node_search import (
    SEARCH_CELLS,
    evaluate_nodes,
    numeric_columns,
    parts,
    rank_orders,
    row_keys,
    sorted_values,
)
from treecert.tree.impurity import _LN2, _ROUND, _impurity_last, _lastsum, _split_info, unit_rise
from treecert.tree.numeric_search import _TABLE_MAX, MIN_NUMERIC_GAIN
from treecert.tree.segments import _ranges

#: (cut, label) pairs × classes scored at once: bounds the per-label arrays (~100 MB).
PAIR_CELLS = 1 << 22
#: With two classes a table pays only on nodes of more than this many training rows; on
#: smaller ones the grower's batched search of both labels costs less (BENCHMARKS.md).
TWO_CLASS_ROWS = 1024


def covers(finder, weights: np.ndarray) -> bool:
    """Whether the shared search equals the grower's on nodes of training rows with these
    ``weights`` plus one ineligible x of weight 1: integer weights, exact sums."""
    w = np.asarray(weights, dtype=float)
    return (bool(np.all(w >= 0)) and bool(np.all(w == np.round(w)))
            and float(w.sum()) + 1.0 < 2.0**31)


def shares(finder, n_rows: int) -> bool:
    """Whether a covered node of ``n_rows`` training rows is searched through its table."""
    return finder.n_classes > 2 or n_rows > TWO_CLASS_ROWS


class NodeTable:
    """What a node's search needs of its training rows R alone, whatever x and its class:
    every valid cut of every numeric column (its column, threshold, R's class counts
    left and right of it and their N·impurities), R's class counts per nominal value, R's
    class totals and weight. Kept per R between searches (:func:`search_groups`): many
    test rows change the same base test, or to the same competitor, and so search nodes
    of the very same rows."""

    __slots__ = ("N", "T", "cnt", "col", "e_left", "e_right", "elig", "gain_span", "left",
                 "n_gain", "right", "skip", "thr", "w_left")

    def nbytes(self) -> int:
        return sum(getattr(self, a).nbytes for a in self.__slots__
                   if isinstance(getattr(self, a), np.ndarray))


def search_nodes(finder, nodes: list, rank: np.ndarray, cache=None,
                 keys: list | None = None) -> list:
    """The grower's split (or None) of every node ``(rows, w, x, c)``: training rows with
    x's appended row last in ``rows`` (weight 1, ineligible), x's values and class. Nodes
    of one x with the same training rows are one group of :func:`search_groups`; a node
    whose x has an unknown value (not covered), or whose table would not pay
    (:func:`shares`), is searched alone (``node_search.evaluate_nodes``). ``keys`` name each
    node's training rows and weights — equal keys, equal rows — for grouping and the
    cache (default :func:`row_keys`; the engine passes the rows' derivation, which
    costs nothing to hash)."""
    out: list = [None] * len(nodes)
    if keys is None:
        keys = row_keys(nodes)
    alone = [i for i, nd in enumerate(nodes)
             if np.isnan(nd[2]).any() or not shares(finder, nd[0].size - 1)]
    for i, split in zip(alone, evaluate_nodes(finder, [nodes[i][:2] for i in alone], rank),
                        strict=True):
        out[i] = split
    skip = set(alone)
    where: dict[tuple, int] = {}
    groups: list = []
    group_keys: list = []
    members: list[list[int]] = []
    for i, (rows, w, x, c) in enumerate(nodes):
        if i in skip:
            continue
        key = (x.tobytes(), keys[i])
        g = where.get(key)
        if g is None:
            g = where[key] = len(groups)
            groups.append((rows[:-1], w[:-1], x, []))
            group_keys.append(keys[i])
            members.append([])
        groups[g][3].append(c)
        members[g].append(i)
    for idx, splits in zip(members, search_groups(finder, groups, rank, cache, group_keys),
                           strict=True):
        for i, split in zip(idx, splits, strict=True):
            out[i] = split
    return out


def search_groups(finder, groups: list, rank: np.ndarray, cache=None,
                  keys: list | None = None) -> list[list]:
    """Per group ``(rows, w, x, labels)`` — training rows R (ascending, eligible, no
    missing values) with weights, x's values (no missing value) and x's classes — the
    split the grower's finder chooses for R ∪ {(x, c)} (x ineligible, weight 1) for every
    c in ``labels``, or None. ``rank``: the finder's value ranks (one row per numeric
    column, :func:`~treecert.transductive.node_search.value_ranks`). ``cache``: a
    :class:`~treecert.transductive.budget.ByteLRU` of :class:`NodeTable` by R (the
    finder's training rows must not change while it is used). Tables are built in parts
    of at most :data:`~treecert.transductive.node_search.SEARCH_CELLS` rows ×
    attributes, and scored in parts of at most :data:`PAIR_CELLS`. ``keys``: as
    :func:`search_nodes`'."""
    if not groups:
        return []
    if keys is None:
        keys = row_keys(groups, x_last=False)
    tables: dict = {}
    missing = []
    for key, g in zip(keys, groups, strict=True):
        if key not in tables:
            tables[key] = None if cache is None else cache.get(key)
            if tables[key] is None:
                missing.append((key, g[0], g[1]))
    cells = np.cumsum([r.size for _, r, _ in missing]) * max(1, finder.X.shape[1])
    for start, stop in parts(cells, SEARCH_CELLS):
        part = missing[start:stop]
        for (key, _, _), table in zip(part, _tables(finder, [(r, w) for _, r, w in part], rank),
                                      strict=True):
            tables[key] = table
            if cache is not None:
                cache.put(key, table, table.nbytes() + key_bytes(key) + 200)
    tabs = [tables[key] for key in keys]
    nominal = finder.nominal_idx.size * max(finder.max_values, 1)
    size = np.cumsum([(t.col.size + nominal + 1) * len(g[3]) * finder.n_classes
                      for t, g in zip(tabs, groups, strict=True)])
    out = []
    for start, stop in parts(size, PAIR_CELLS):
        out += _choose(finder, tabs[start:stop], groups[start:stop])
    return out


def _nimp(counts: np.ndarray, gini: bool, table: np.ndarray | None) -> np.ndarray:
    """N·impurity of integer count rows (..., K), as the grower's cut search computes it:
    x ln x from its table (entropy, integer totals) or :func:`_impurity_last`."""
    if table is None:
        return _impurity_last(counts, gini)
    c = counts.astype(np.intp)
    total = np.einsum("...k->...", c)  # integers: any order (4x numpy's sum of short rows)
    return (table.take(total) - _lastsum(table.take(c))) / _LN2


def _xlogx_table(finder, total: float):
    """The grower's table of x ln x for integer counts up to ``total``, or None where its
    cut search computes x ln x directly (Gini; totals from 2^22)."""
    if finder.params.criterion == "gini" or total >= _TABLE_MAX:
        return None
    return finder._xlogx_table(int(total))


def _tables(finder, nodes: list, rank: np.ndarray) -> list[NodeTable]:
    """:class:`NodeTable` of every node ``(rows, w)``, laid end to end and built together."""
    params = finder.params
    gini = params.criterion == "gini"
    K, G = finder.n_classes, len(nodes)
    lens = np.array([r.size for r, _ in nodes], dtype=np.int64)
    seg = np.zeros(G + 1, dtype=np.int64)
    np.cumsum(lens, out=seg[1:])
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
        col, thr, left, w_left, cg, skip = _cuts(finder, rows, w, seg, node, rank, N)
        ncut = np.bincount(cg, minlength=G)
    right = T[np.repeat(np.arange(G), ncut)] - left
    table = _xlogx_table(finder, float(N.max(initial=0.0)) + 1.0)
    e_left, e_right = _nimp(left, gini, table), _nimp(right, gini, table)
    n_gain = _impurity_last(T, gini)[np.repeat(np.arange(G), ncut)] - e_left - e_right
    bounds = np.r_[0, np.cumsum(ncut)]
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


def _cuts(finder, rows, w, seg, node, rank, N):
    """Every valid cut of every (node, numeric column) of nodes laid end to end, ordered by
    (node, column, position): its column (local index), threshold, the node's class counts
    and weight left of it, its node, and whether the Fayyad–Irani rule skips it. Nodes of
    many rows over columns of few distinct values are tallied per value
    (:func:`_tallied_cuts`), the others sorted (:func:`_sorted_cuts`): the same arrays."""
    lens = np.diff(seg)
    tallied = _tallies_pay(finder, rank, lens, w)
    if not tallied.any():
        return _sorted_cuts(finder, rows, w, seg, node, rank, N)
    parts_ = []
    for chosen in (np.flatnonzero(tallied), np.flatnonzero(~tallied)):
        if not chosen.size:
            continue
        sub = np.repeat(tallied[chosen[0]] == tallied, lens)  # the entries of those nodes
        sub_seg = np.r_[0, np.cumsum(lens[chosen])]
        sub_node = np.repeat(np.arange(chosen.size), lens[chosen])
        cut = (_tallied_cuts if tallied[chosen[0]] else _sorted_cuts)(
            finder, rows[sub], w[sub], sub_seg, sub_node, rank, N[chosen])
        parts_.append((*cut[:4], chosen[cut[4]], cut[5]))
    ck, thr, left, w_left, cg, skip = (np.concatenate(a) for a in zip(*parts_, strict=True))
    order = np.argsort(cg * finder.numeric_idx.size + ck, kind="stable")
    return ck[order], thr[order], left[order], w_left[order], cg[order], skip[order]


#: A node is tallied per value (:func:`_tallied_cuts`) when its rows number at least this
#: share of its (value, class) cells per column (the most distinct values of a column ×
#: classes): a tally cell costs a few passes, a sorted row a sort and a dozen passes.
TALLY_ROWS_PER_CELL = 0.5


def _tallies_pay(finder, rank, lens: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per node of ``lens`` rows: whether :func:`_tallied_cuts` builds its cuts. Only with
    positive weights: a row of weight 0 has a value (a sorted neighbour) but no tally."""
    if not lens.size or not bool(np.all(w > 0)):
        return np.zeros(lens.size, dtype=bool)
    cells = _value_codes(finder, rank)[1].shape[1] * finder.n_classes
    return lens >= TALLY_ROWS_PER_CELL * cells


def _value_codes(finder, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
        new = np.r_[True, in_order[1:] != in_order[:-1]]
        codes[k] = (np.cumsum(new) - 1)[rank[k]]
        distinct.append(in_order[new])
    D = max((d.size for d in distinct), default=0)
    values = np.full((p, D), np.nan)
    for k, d in enumerate(distinct):
        values[k, :d.size] = d
    finder._value_codes = codes, values
    return finder._value_codes


def _tallied_cuts(finder, rows, w, seg, node, rank, N):
    """:func:`_sorted_cuts` (the same arrays, in the same order) from the nodes' class
    weights per (column, distinct value) instead of their sorted columns: a column's cuts
    lie between consecutive values present in the node, and every sum is of integer
    weights, so exact in any order. Positive weights: a present value has weight."""
    K, G = finder.n_classes, seg.size - 1
    codes, values = _value_codes(finder, rank)
    p, D = values.shape
    yr = finder.y.take(rows).astype(np.int64)
    cell = np.empty((p, rows.size), dtype=np.int64)
    for k in range(p):  # ((node, column, value), class)
        np.add(((node * p + k) * D + codes[k].take(rows)) * K, yr, out=cell[k])
    H = np.bincount(cell.ravel(), weights=np.tile(w, p), minlength=G * p * D * K)
    H = H.reshape(G * p * D, K)
    at = np.flatnonzero(_lastsum(H) > 0)  # present (node, column, value)s, in that order
    H = H[at]
    gk, code = at // D, at % D
    cg, ck = gk // p, gk % p
    new = np.r_[True, gk[1:] != gk[:-1]]
    first = np.flatnonzero(new)
    cum = np.cumsum(H, axis=0)  # exact: integer weights
    base = np.repeat(cum[first] - H[first], np.diff(np.r_[first, at.size]), axis=0)
    left_all = cum - base  # class weights up to and including each value
    w_left_all = _lastsum(left_all)
    nxt = np.r_[~new[1:], False]  # a next value in the same (node, column)
    a = values[ck, code]
    b = np.r_[a[1:], np.nan]  # the next present value (read only where ``nxt``)
    ml = _min_branch(finder, N)[cg]
    with np.errstate(invalid="ignore"):
        valid = nxt & (w_left_all >= ml) & (N[cg] - w_left_all >= ml)
        valid &= np.isfinite(a) & np.isfinite(b)
        t, valid = _thresholds(finder, a, b, valid)
    # Fayyad & Irani as in :func:`_sorted_cuts`, over blocks of values ending at valid cuts
    stop = valid | ~nxt
    blk = np.cumsum(stop) - stop
    B = int(stop.sum())
    classes = np.add.reduceat(H > 0, np.flatnonzero(np.r_[True, stop[:-1]]), axis=0) > 0
    pure = classes.sum(axis=1) == 1
    cls = np.argmax(classes, axis=1)
    ends_cut = np.r_[valid[stop], False]
    fc = np.flatnonzero(valid)
    b_ = blk[fc]
    skip = (b_ > 0) & ends_cut[np.maximum(b_ - 1, 0)] & ends_cut[b_ + 1] & pure[b_]
    skip &= pure[np.minimum(b_ + 1, B - 1)] & (cls[b_] == cls[np.minimum(b_ + 1, B - 1)])
    return ck[fc], t[fc], left_all[fc], w_left_all[fc], cg[fc], skip


def _thresholds(finder, a: np.ndarray, b: np.ndarray, valid: np.ndarray):
    """The grower's threshold of a cut between eligible neighbours a < b, and ``valid``
    less the midpoints that round onto b (as the grower's ineligible-cut rule)."""
    if finder.params.threshold == "lower":
        return a, valid
    with np.errstate(invalid="ignore", over="ignore"):
        t = (a + b) / 2.0
    return t, valid & (a <= t) & (t < b)


def _sorted_cuts(finder, rows, w, seg, node, rank, N):
    """:func:`_cuts` of nodes whose columns are sorted (by their ranks)."""
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
    ml = _min_branch(finder, N)[node[:-1]]
    cut = (node[:-1] == node[1:]) & (a < b) & (left >= ml) & (N[node[:-1]] - left >= ml)
    # the ineligible-cut rule of the grower (every node here holds x): thresholds from
    # finite eligible neighbours only, a midpoint strictly below the upper value
    cut &= np.isfinite(a) & np.isfinite(b)
    t, cut = _thresholds(finder, a, b, cut)
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
    fc = np.flatnonzero(valid)
    ck, ci = fc // M, fc % M
    cg = node[ci]
    order = np.argsort(cg * p + ck, kind="stable")  # cuts by (node, column, position)
    fc, ck, ci, cg = fc[order], ck[order], ci[order], cg[order]
    # Fayyad & Irani (:func:`_best_cuts`): the rows between a cut's neighbouring valid
    # cuts (its block and the next) are of one class; block b ends at a valid cut iff
    # ``ends_cut[b]``, so a cut's neighbours exist iff the blocks around it end at cuts
    classes = np.bincount(blk * K + Y.ravel(), minlength=B * K).reshape(B, K) > 0
    pure = classes.sum(axis=1) == 1
    cls = np.argmax(classes, axis=1)
    ends_cut = np.r_[valid.ravel()[np.flatnonzero(flat)], False]
    b = blk[fc]
    skip = (b > 0) & ends_cut[np.maximum(b - 1, 0)] & ends_cut[b + 1] & pure[b]
    skip &= pure[np.minimum(b + 1, B - 1)] & (cls[b] == cls[np.minimum(b + 1, B - 1)])
    return ck, t[ck, ci], cum[b] - base[ck, cg], left[ck, ci], cg, skip


def _min_branch(finder, N: np.ndarray) -> np.ndarray:
    """Per node of R's weight ``N``: the least eligible weight on each side of a numeric
    cut, as the grower computes it (x's weight is not eligible): ``min_leaf``, or J48's
    ``clamp(0.1 N / K, min_leaf, 25)`` under gain ratio (its check that N is at least
    twice that follows from both sides' checks: integer sums are exact)."""
    params = finder.params
    ml = float(params.min_leaf)
    if params.criterion != "gain_ratio":
        return np.full(N.shape, ml)
    return np.clip(0.1 * N / finder.n_classes, ml, 25.0)


def _choose(finder, tabs: list[NodeTable], groups: list) -> list[list]:
    """The grower's split for every label of every group, from its node's table."""
    K, G = finder.n_classes, len(groups)
    p, q = finder.numeric_idx.size, finder.nominal_idx.size
    m = np.array([len(g[3]) for g in groups], dtype=np.int64)
    lab = np.concatenate([np.asarray(g[3], dtype=np.int64) for g in groups])
    gl = np.repeat(np.arange(G), m)  # each label-node's group
    Lg = lab.size
    N = np.array([t.N for t in tabs])
    tw = N[gl] + 1.0  # the node's total weight, x included (exact: integer weights)
    Tx = np.array([t.T for t in tabs]).reshape(G, K)[gl]
    Tx[np.arange(Lg), lab] += 1.0
    ok = np.zeros((Lg, p + q), dtype=bool)
    gain = np.zeros((Lg, p + q))
    score = np.zeros((Lg, p + q))
    thr = np.full((Lg, p), np.nan)
    vb = np.full((Lg, q), -1, dtype=np.int64)
    if p:
        _best_cuts(finder, tabs, groups, lab, gl, Tx, tw, ok, gain, score, thr)
    if q:
        cnt = np.array([t.cnt for t in tabs])[gl]
        xc = np.array([g[2][finder.nominal_idx] for g in groups]).astype(np.int64)[gl]
        cnt[np.arange(Lg)[:, None], np.arange(q)[None, :], xc, lab[:, None]] += 1.0
        ok[:, p:], gain[:, p:], score[:, p:], vb[:] = finder._nominal_scores(
            cnt, np.array([t.elig for t in tabs])[gl], tw)
    choice = finder._choose(ok, gain, score, thr, vb)
    splits = [choice.split(i) for i in range(Lg)]
    bounds = np.r_[0, np.cumsum(m)]
    return [splits[bounds[g]:bounds[g + 1]] for g in range(G)]


def _run_max(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The maximum of ``values`` over each run starting at ``first`` (from 0), repeated."""
    return np.repeat(np.maximum.reduceat(values, first), np.diff(np.r_[first, values.size]))


def _column_runs(cut_group: np.ndarray, col: np.ndarray) -> np.ndarray:
    """Where each (node, column) run of cuts laid end to end starts (indices)."""
    return np.flatnonzero(np.r_[True, (cut_group[1:] != cut_group[:-1])
                                | (col[1:] != col[:-1])])


def _first_best(g: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run of equal ``key`` (consecutive): the index of the first entry of largest
    ``g`` rounded to 10 decimals (the grower's choice of a column's cut), and that
    rounded maximum repeated over the run."""
    rg = np.round(g, _ROUND)
    n = key.size
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    gmax = _run_max(rg, first)
    return np.minimum.reduceat(np.where(rg == gmax, np.arange(n), n), first), gmax


def _best_cuts(finder, tabs, groups, lab, gl, Tx, tw, ok, gain, score, thr) -> None:
    """Best cut of every (label-node, numeric column) into ``ok``, ``gain``, ``score``,
    ``thr`` (gain ratio: J48's candidate, :func:`_ratio_cuts`).

    Fayyad & Irani, as in the grower: moving rows of one class across a cut changes the
    gain convexly (N·entropy and N·Gini are concave in the counts), so a cut whose
    neighbouring valid cuts of its column move rows of a single class between them, with
    x on one side of all three, never beats both neighbours and is not scored at first
    (``NodeTable.skip``, and x's side here). The runs of skipped cuts next to a cut within
    2e-10 of its column's best are scored afterwards (rounding to 10 decimals could make
    them tie); a run next to no such cut stays below the best even rounded."""
    p = finder.numeric_idx.size
    gini = finder.params.criterion == "gini"
    G, Lg = len(groups), lab.size
    ncut = np.array([t.col.size for t in tabs], dtype=np.int64)
    if not ncut.any():
        return
    # per cut, x's side (x <= threshold: left) and the N·impurity of the other side
    xl = np.concatenate([g[2][finder.numeric_idx[t.col]] <= t.thr
                         for t, g in zip(tabs, groups, strict=True)])
    col = np.concatenate([t.col for t in tabs])
    t_cut = np.concatenate([t.thr for t in tabs])
    e_left, e_right = (np.concatenate([getattr(t, a) for t in tabs])
                       for a in ("e_left", "e_right"))
    e_other = np.where(xl, e_right, e_left)
    left = np.concatenate([t.left for t in tabs])
    right = np.concatenate([t.right for t in tabs])
    # a skipped cut has both neighbours in its (node, column): x on the same side of all
    skip = np.concatenate([t.skip for t in tabs])
    skip &= (xl == np.r_[xl[:1], xl[:-1]]) & (xl == np.r_[xl[1:], xl[-1:]])
    beside = np.r_[skip[1:], False] | np.r_[False, skip[:-1]]  # a skipped neighbour
    table = _xlogx_table(finder, float(tw.max()))
    parent = _impurity_last(Tx, gini)

    def gains(pl, pc):  # the grower's gain of cut pc for label-node pl
        left_x = xl[pc]
        xs = np.where(left_x[:, None], left[pc], right[pc])
        xs[np.arange(pc.size), lab[pl]] += 1.0
        e_x, e_o = _nimp(xs, gini, table), e_other[pc]
        return (parent[pl] - np.where(left_x, e_x, e_o) - np.where(left_x, e_o, e_x)) / tw[pl]

    kept = np.flatnonzero(~skip)
    cut_group = np.repeat(np.arange(G), ncut)
    runs = _column_runs(cut_group, col)
    # the reach test pays where each table serves several labels (not for two classes)
    scored = (kept[_within_reach(tabs, col, cut_group, gini, runs)[kept]] if Lg >= 4 * G
              else kept)
    kcount = np.bincount(cut_group[scored], minlength=G)
    pl = np.repeat(np.arange(Lg), kcount[gl])  # (label-node, scored cut) pairs
    pc = scored[_ranges(np.cumsum(kcount)[gl] - kcount[gl], kcount[gl])]
    key = pl * p + col[pc]
    w_cut = np.concatenate([t.w_left for t in tabs])  # R's weight left of each cut
    # only the pairs near their column's best, exactly (it pays from four classes on)
    if table is not None and pl.size and finder.n_classes >= 4:
        near_best = _near_best(table, lab, pl, pc, key, xl, left, right, w_cut,
                               np.repeat([t.N for t in tabs], ncut), e_left, e_right,
                               e_other, parent, tw)
        pl, pc, key = pl[near_best], pc[near_best], key[near_best]
    g = gains(pl, pc)
    kb, gmax = _first_best(g, key)
    near = np.flatnonzero((g >= gmax - 2e-10) & beside[pc])
    if near.size:  # score the runs of skipped cuts either side of those, and choose again
        c = pc[near]
        at = np.searchsorted(kept, c)
        lo = np.r_[-1, kept][at] + 1  # first cut after the previous kept cut
        hi = np.r_[kept, col.size][at + 1]  # the next kept cut
        run = np.zeros(col.size, dtype=np.int64)
        run[runs] = 1
        starts, lens = _rising_runs(gains, np.cumsum(run), w_cut, pl[near], c, lo, hi,
                                    g[near], gmax[near])
        pl = np.r_[pl, np.repeat(np.repeat(pl[near], 2), lens)]
        pc = np.r_[pc, _ranges(starts, lens)]
        g = np.r_[g, gains(pl[g.size:], pc[g.size:])]
        order = np.lexsort((pc, pl))  # by label-node, then cut: (column, position)
        pl, pc, g = pl[order], pc[order], g[order]
        kb, _ = _first_best(g, pl * p + col[pc])
    li, kj, best = pl[kb], col[pc[kb]], pc[kb]
    ok[li, kj] = True
    gain[li, kj] = g[kb]
    thr[li, kj] = t_cut[best]
    if finder.params.criterion == "gain_ratio":
        # the best cut's branch weight left of it, x included
        _ratio_cuts(tabs, gl, Tx, tw, ok, gain, score, li, kj, w_cut[best] + xl[best], p)
    else:
        score[:, :p] = gain[:, :p]


#: How far below its column's best (by the shortcut of :func:`_near_best`) a pair is still
#: scored exactly: ~10^4 times the shortcut's rounding error (below 1e-12 for totals under
#: 2^22), far below the gaps it prunes.
_SHORTCUT_SLACK = 1e-8


def _near_best(table, lab, pl, pc, key, xl, left, right, w_cut, N_cut, e_left, e_right,
               e_other, parent, tw) -> np.ndarray:
    """Which (label-node ``pl``, cut ``pc``) pairs, whose runs of equal ``key`` are the
    (label-node, column)s, lie within :data:`_SHORTCUT_SLACK` of their run's best gain.

    The exact gain sums x ln x over all K classes of x's side with x added (the grower's
    order of additions, :func:`_nimp`); but x adds one unit to one class c, so its side's
    N·impurity is R's (``e_left``/``e_right``) plus
    ``(t(n + 1) - t(n) - t(n_c + 1) + t(n_c)) / ln 2`` (t: the x ln x table) — O(1) per
    pair instead of O(K), equal up to rounding. Only the pairs it puts near the best can be
    the grower's choice or tie it once rounded (or be near-best cuts beside runs), so only
    they are scored exactly; the best is always among them."""
    K = left.shape[1]
    flat = pc * K + lab[pl]
    left_x = xl[pc]
    n_c = np.where(left_x, left.ravel()[flat], right.ravel()[flat]).astype(np.intp)
    n = np.where(left_x, w_cut[pc], N_cut[pc] - w_cut[pc]).astype(np.intp)
    e_x = np.where(left_x, e_left[pc], e_right[pc]) + (
        (table[n + 1] - table[n]) - (table[n_c + 1] - table[n_c])) / _LN2
    approx = (parent[pl] - e_x - e_other[pc]) / tw[pl]
    best = _run_max(approx, np.flatnonzero(np.r_[True, key[1:] != key[:-1]]))
    return approx >= best - _SHORTCUT_SLACK


#: Slack of the chord bound of :func:`_rising_runs` over the 2e-10 of a rounded tie: far
#: above the rounding error of computed gains (~1e-15), far below the gaps it prunes.
_CHORD_SLACK = 1e-9


def _rising_runs(gains, run, w_left, pl, c, lo, hi, g_c, g_max):
    """The parts of the runs of skipped cuts beside near-best cuts that could still tie the
    best once rounded: (starts, lengths), two per near cut (its left run, its right run).

    Near cut ``c[i]`` (of label-node ``pl[i]``) has runs ``lo[i]:c[i]`` and
    ``c[i]+1:hi[i]``, each ending at a kept cut (``lo - 1``, ``hi``). A run moves rows of
    one class only (``NodeTable.skip``), with x on one side of all of it, so the gain is
    convex in R's weight moved along it (the Fayyad-Irani argument): at a cut t it is at
    most the chord ``g(c) - f·(g(c) - g(end))``, f the share of the run's weight between c
    and t. A cut whose chord is below the column's best rounded gain less 2e-10 (and
    :data:`_CHORD_SLACK`) can neither beat nor tie it: the cuts that can are the run's
    part next to c within a weight of c, found by binary search on the weights left of
    the cuts (``w_left``, integer, nondecreasing within a column: ``run`` numbers the
    (node, column) runs of the cuts laid end to end). Where the far end is as high as c,
    the chord stays high and the run is scored whole."""
    c2, lo2, hi2 = np.repeat(c, 2), np.repeat(lo, 2), np.repeat(hi, 2)
    right = np.tile([False, True], c.size)
    lens = np.where(right, hi2 - c2 - 1, c2 - lo2)
    end = np.where(right, hi2, lo2 - 1)  # the run's other end, a kept cut
    has = lens > 0
    g_end = np.full(lens.size, np.inf)
    g_end[has] = gains(np.repeat(pl, 2)[has], end[has])
    drop = np.repeat(g_c, 2) - g_end
    room = np.repeat(g_c - g_max, 2) + 2e-10 + _CHORD_SLACK  # > 0: c is near the best
    w_c = w_left[c2]
    w_end = w_left[np.where(has, end, c2)]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        reach = np.where(drop > 0, room / drop * np.abs(w_end - w_c), np.inf)
    bound = np.where(right, np.floor(np.minimum(w_c + reach, w_end)),
                     np.ceil(np.maximum(w_c - reach, w_end))).astype(np.int64)
    # integer keys nondecreasing over all cuts: (node, column) run, then weight left (integer
    # weights below 2**31, fewer than 2**31 runs: no overflow)
    big = int(w_left.max(initial=0.0)) + 2
    key = run.astype(np.int64) * big + w_left.astype(np.int64)
    target = run[c2].astype(np.int64) * big + bound
    at = np.searchsorted(key, target, side="left")
    after = np.searchsorted(key, target, side="right")
    n_right = np.clip(after - (c2 + 1), 0, lens)
    n_left = np.clip(c2 - np.maximum(at, lo2), 0, lens)
    lens = np.where(has, np.where(right, n_right, n_left), 0)
    starts = np.where(right, c2 + 1, c2 - lens)
    return starts, lens


def _within_reach(tabs, col: np.ndarray, cut_group: np.ndarray, gini: bool,
                  runs: np.ndarray | None = None) -> np.ndarray:
    """Per cut (tables laid end to end): whether x, whatever its class and side, could make
    it its column's best. One unit added to a count vector of weight n raises n·entropy
    (bits) by at most δ(n) = (n + 1) log2(n + 1) - n log2 n (n·Gini: by less than 2), and
    never lowers it; so (N + 1)·gain with x is within δ(N) of R's N·gain on every cut
    (the parent's and x's side's terms each move by [0, δ(N)]), and a cut whose N·gain is
    more than 2δ(N) below its column's best on R is below that cut with x too — by more
    than the 1e-6 kept for rounding, so not even a rounded tie. ``runs``: the cuts'
    :func:`_column_runs`, when already known."""
    N = np.array([t.N for t in tabs])
    delta = np.full(N.shape, 2.0) if gini else unit_rise(N)
    reach = 2.0 * delta + 1e-6 * (N + 2.0)
    if all(t.gain_span <= r for t, r in zip(tabs, reach.tolist(), strict=True)):
        return np.ones(col.size, dtype=bool)  # nearly pure nodes: every cut within reach
    ngain = np.concatenate([t.n_gain for t in tabs])
    best = _run_max(ngain, _column_runs(cut_group, col) if runs is None else runs)
    return ngain >= best - reach[cut_group]


def _ratio_cuts(tabs, gl, Tx, tw, ok, gain, score, li, kj, w_left, p) -> None:
    """J48's candidates from the best cut by gain of every (label-node ``li``, numeric
    column ``kj``), ``w_left`` its left branch's weight with x, as the grower computes them
    (``NumericSearch._numeric_batch``): the gain MDL-corrected by log2(#cuts)/(N + 1) and
    kept if still at least :data:`~treecert.tree.numeric_search.MIN_NUMERIC_GAIN`, and its
    gain ratio. x never makes a cut valid nor removes one
    (module docstring), so the number of cuts is R's; no weight is unknown."""
    per_column = np.stack([np.bincount(t.col, minlength=p) for t in tabs])  # (G, p)
    n_cuts = per_column[gl[li], kj]
    total = tw[li]
    g = gain[li, kj] - np.log2(n_cuts) / total
    unknown = total - _lastsum(Tx[li])
    si = _split_info([w_left, total - w_left], unknown, total)
    ok[li, kj] = g >= MIN_NUMERIC_GAIN
    gain[li, kj] = g
    with np.errstate(invalid="ignore", divide="ignore"):
        score[li, kj] = np.where(si > 0, g / si, 0.0)
