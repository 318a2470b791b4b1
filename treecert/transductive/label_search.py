"""Exact split searches shared by the labels of one test row (the label search of
:mod:`treecert.transductive.batch_engine`).

Below a test that x changed, the batched engine searches x's node exactly for every job
(x, c). The jobs of one x that reach the same node hold the same training rows R and
differ only in x's class, yet the grower's search of R ∪ {(x, c)} sorts R, cumulates its
class weights along every column and scores every cut K times over (26 times on a
letter-shaped problem). Here R is sorted and counted once per node (a node of many rows
over columns of few distinct values is tallied per (value, class) instead, which gives the
same cuts without a sort: :mod:`.cut_tables`), and only the arithmetic that depends on
c is done per label:

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

The same tables of R built without x (``node_tables(with_x=False)``: the grower's
thresholds for a node with no ineligible row) choose the splits of large nodes of the
subtrees hanging off x's paths, where the value tallies serve them (:func:`search_alone`):
per column the first cut of largest rounded gain, the grower's own choice among columns.
"""

from __future__ import annotations

import hashlib

import numpy as np

from treecert.transductive.budget import key_bytes
from treecert.transductive.cut_tables import NodeTable, nimp, node_tables, tallies_pay, xlogx_of
from treecert.transductive.node_search import SEARCH_CELLS, evaluate_nodes, parts, row_keys
from treecert.tree.impurity import _LN2, _ROUND, _impurity_last, _lastsum, unit_rise
from treecert.tree.numeric_search import chosen_cut_ratio
from treecert.tree.segments import (
    _ranges,
    first_max_of_runs,
    flat_nonzero,
    offsets,
    run_max,
    run_starts,
)

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
    alone = [i for i, nd in enumerate(nodes)  # the size first: cheaper than x's NaNs
             if not shares(finder, nd[0].size - 1) or np.isnan(nd[2]).any()]
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
        built = node_tables(finder, [(r, w) for _, r, w in part], rank)
        for (key, _, _), table in zip(part, built, strict=True):
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



def search_alone(finder, nodes: list, rank: np.ndarray, cache=None) -> list:
    """The grower's split (or None) of every node ``(rows, w)`` of training rows alone (the
    subtrees hanging off x's path; no missing values). Where their weights are covered
    (:func:`covers`), a node the value tallies serve (``cut_tables.tallies_pay``) is
    chosen from its table of R (:func:`_choose_alone`), which needs no sort; the others
    by the grower's batched search (``node_search.evaluate_nodes``).

    ``cache``: a :class:`~treecert.transductive.budget.ByteLRU` of splits by the node's
    rows and weights, which are all a split depends on: the subtrees of different x's meet
    the same nodes again (about half of a shuttle-shaped Venn machine's hanging nodes).
    Its keys are 128-bit BLAKE2 digests of the rows' and weights' bytes, so that a budget
    holds many nodes (their bytes average 2 KB there); two distinct nodes share a digest
    with probability about 2^-128 per pair, as the engine registry trusts SHA-256."""
    if cache is None:
        return _search_alone(finder, nodes, rank)
    out: list = [None] * len(nodes)
    todo: dict = {}  # key -> places of the nodes not in the cache
    for i, (rows, w) in enumerate(nodes):
        h = hashlib.blake2b(np.ascontiguousarray(rows, dtype=np.int64), digest_size=16)
        h.update(np.ascontiguousarray(w, dtype=float))
        key = h.digest()
        if key in cache:
            out[i] = cache.get(key)
        else:
            todo.setdefault(key, []).append(i)
    searched = _search_alone(finder, [nodes[places[0]] for places in todo.values()], rank)
    for (key, places), split in zip(todo.items(), searched, strict=True):
        for i in places:
            out[i] = split
        extra = 0 if split is None or split.value_branch is None else split.value_branch.nbytes
        cache.put(key, split, _SPLIT_BYTES + extra)
    return out


#: Bytes of one cached split with its key and the cache's entry.
_SPLIT_BYTES = 320


def _search_alone(finder, nodes: list, rank: np.ndarray) -> list:
    out: list = [None] * len(nodes)
    tallied = np.zeros(len(nodes), dtype=bool)
    if nodes and finder.numeric_idx.size:
        w = np.concatenate([w for _, w in nodes])
        if covers(finder, w):
            lens = np.array([r.size for r, _ in nodes], dtype=np.int64)
            tallied = tallies_pay(finder, rank, lens, w)
    rest = flat_nonzero(~tallied)
    for i, split in zip(rest, evaluate_nodes(finder, [nodes[i] for i in rest], rank),
                        strict=True):
        out[i] = split
    chosen = flat_nonzero(tallied)
    cells = np.cumsum([nodes[i][0].size for i in chosen]) * max(1, finder.X.shape[1])
    for start, stop in parts(cells, SEARCH_CELLS):
        idx = chosen[start:stop]
        tabs = node_tables(finder, [nodes[i] for i in idx], rank, with_x=False)
        for i, split in zip(idx, _choose_alone(finder, tabs), strict=True):
            out[i] = split
    return out


def _choose_alone(finder, tabs: list[NodeTable]) -> list:
    """The grower's split of every node of R alone from its table (cuts of R alone,
    ``node_tables(with_x=False)``): per numeric column the first cut of largest gain
    rounded to 10 decimals over all its cuts (what the grower's pruned search finds), the
    gain the grower's (N·impurities of the same integer counts in the same order, over N),
    J48's correction and ratio under gain ratio (:func:`_ratio_cuts`, nothing unknown),
    the nominal tests and the choice among columns the grower's own."""
    G = len(tabs)
    p, q = finder.numeric_idx.size, finder.nominal_idx.size
    N = np.array([t.N for t in tabs])
    ok = np.zeros((G, p + q), dtype=bool)
    gain = np.zeros((G, p + q))
    score = np.zeros((G, p + q))
    thr = np.full((G, p), np.nan)
    vb = np.full((G, q), -1, dtype=np.int64)
    ncut = np.array([t.col.size for t in tabs], dtype=np.int64)
    if p and ncut.any():
        cut_group = np.repeat(np.arange(G), ncut)
        col = np.concatenate([t.col for t in tabs])
        g = np.concatenate([t.n_gain for t in tabs]) / N[cut_group]
        kb, _ = _first_best(g, cut_group * p + col)
        li, kj = cut_group[kb], col[kb]
        ok[li, kj] = True
        gain[li, kj] = g[kb]
        thr[li, kj] = np.concatenate([t.thr for t in tabs])[kb]
        if finder.params.criterion == "gain_ratio":
            T = np.array([t.T for t in tabs]).reshape(G, -1)
            _ratio_cuts(tabs, np.arange(G), T, N, ok, gain, score, li, kj,
                        np.concatenate([t.w_left for t in tabs])[kb], p)
        else:
            score[:, :p] = gain[:, :p]
    if q:
        ok[:, p:], gain[:, p:], score[:, p:], vb[:] = finder._nominal_scores(
            np.array([t.cnt for t in tabs]), np.array([t.elig for t in tabs]), N)
    choice = finder._choose(ok, gain, score, thr, vb)
    return [choice.split(i) for i in range(G)]


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
    bounds = offsets(m)
    return [splits[bounds[g]:bounds[g + 1]] for g in range(G)]


def _column_runs(cut_group: np.ndarray, col: np.ndarray) -> np.ndarray:
    """Where each (node, column) run of cuts laid end to end starts (indices)."""
    new = run_starts(cut_group)
    new |= run_starts(col)
    return flat_nonzero(new)


def _first_best(g: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run of equal ``key`` (consecutive): the index of the first entry of largest
    ``g`` rounded to 10 decimals (the grower's choice of a column's cut), and that
    rounded maximum repeated over the run."""
    k, _, gmax = first_max_of_runs(g.round(_ROUND), flat_nonzero(run_starts(key)))
    return k, gmax


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
    same = xl[1:] == xl[:-1]
    skip[1:] &= same
    skip[:-1] &= same
    beside = np.zeros_like(skip)  # a skipped neighbour (there are cuts: ncut.any())
    beside[:-1] = skip[1:]
    beside[1:] |= skip[:-1]
    table = xlogx_of(finder, float(tw.max()))
    parent = _impurity_last(Tx, gini)

    def gains(pl, pc):  # the grower's gain of cut pc for label-node pl
        left_x = xl[pc]
        xs = np.where(left_x[:, None], left[pc], right[pc])
        xs[np.arange(pc.size), lab[pl]] += 1.0
        e_x, e_o = nimp(xs, gini, table), e_other[pc]
        return (parent[pl] - np.where(left_x, e_x, e_o) - np.where(left_x, e_o, e_x)) / tw[pl]

    kept = flat_nonzero(~skip)
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
    near = flat_nonzero((g >= gmax - 2e-10) & beside[pc])
    if near.size:  # score the runs of skipped cuts either side of those, and choose again
        c = pc[near]
        at = np.searchsorted(kept, c)
        lo = np.concatenate(([-1], kept))[at] + 1  # first cut after the previous kept cut
        hi = np.concatenate((kept, [col.size]))[at + 1]  # the next kept cut
        run = np.zeros(col.size, dtype=np.int64)
        run[runs] = 1
        starts, lens = _rising_runs(gains, np.cumsum(run), w_cut, pl[near], c, lo, hi,
                                    g[near], gmax[near])
        pl = np.concatenate((pl, pl[near].repeat(2).repeat(lens)))
        pc = np.concatenate((pc, _ranges(starts, lens)))
        g = np.concatenate((g, gains(pl[g.size:], pc[g.size:])))
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
    order of additions, :func:`nimp`); but x adds one unit to one class c, so its side's
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
    best = run_max(approx, flat_nonzero(run_starts(key)))
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
    best = run_max(ngain, _column_runs(cut_group, col) if runs is None else runs)
    return ngain >= best - reach[cut_group]


def _ratio_cuts(tabs, gl, Tx, tw, ok, gain, score, li, kj, w_left, p) -> None:
    """J48's candidates from the best cut by gain of every (label-node ``li``, numeric
    column ``kj``), ``w_left`` its left branch's weight with x, as the grower computes them
    (``NumericSearch._numeric_batch``): the gain MDL-corrected by log2(#cuts)/(N + 1) and
    kept if still at least :data:`~treecert.tree.numeric_search.MIN_NUMERIC_GAIN`, and its
    gain ratio. x never makes a cut valid nor removes one
    (module docstring), so the number of cuts is R's; no weight is unknown."""
    per_column = np.stack([np.bincount(t.col, minlength=p) for t in tabs])  # (G, p)
    total = tw[li]
    gain[li, kj], ok[li, kj], score[li, kj] = chosen_cut_ratio(
        gain[li, kj], per_column[gl[li], kj], w_left, total - w_left, _lastsum(Tx[li]), total)
