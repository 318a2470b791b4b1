"""Batched split searches: the grower's split finder over many nodes at once.

The batched engine (:mod:`treecert.transductive.batch_engine`) searches every node that is
not certified — of all (x, c) together, and a level of the hanging subtrees
(:mod:`treecert.transductive.leaf_forest`) with them — in one call of the grower's scorer
per round, exactly as the level-wise grower batches a level; this module holds that call,
split into parts that bound memory — as one Split per node (:func:`evaluate_nodes`) or as
the grower's arrays of chosen tests (:func:`choose_tests`, for callers that work on arrays)
— and the per-node counts and stopping rules of such lists of nodes.
"""

from __future__ import annotations

import numpy as np

from treecert.transductive.budget import key_bytes, rows_key
from treecert.tree.grow import (
    eligible_weights,
    light_stops,
    segment_stops,
    too_light,
)
from treecert.tree.segments import (
    _Batch,
    _class_dtype,
    _exact_segments,
    _index_dtype,
    flat_nonzero,
    offsets,
)
from treecert.tree.split_search import _Choice


def value_ranks(finder) -> np.ndarray:
    """Per numeric column of the finder's X: each row's position in a stable sort of the
    column, so that sorting a node by (node, rank) is the grower's stable value sort."""
    cols = finder.X[:, finder.numeric_idx]
    rank = np.empty(cols.shape[::-1], dtype=np.int64)
    for k in range(cols.shape[1]):
        rank[k, np.argsort(cols[:, k], kind="stable")] = np.arange(cols.shape[0])
    return rank


def sorted_columns(X: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``X[:, columns]``: each row's position in a stable sort of the column
    (:func:`value_ranks` of the training data alone), and the sorted values."""
    rank = np.empty((columns.size, X.shape[0]), dtype=np.int64)
    values = np.empty((columns.size, X.shape[0]))
    for k, f in enumerate(columns):
        order = np.argsort(X[:, f], kind="stable")
        rank[k, order] = np.arange(X.shape[0])
        values[k] = X[order, f]
    return rank, values


def appended_ranks(rank: np.ndarray, values: np.ndarray, Xq: np.ndarray) -> np.ndarray:
    """:func:`value_ranks` of the training rows followed by the rows of ``Xq`` (numeric
    columns, no missing values), from the training rows' ``rank`` and sorted ``values``
    (:func:`sorted_columns`) without sorting the training rows again: a stable sort puts
    a training row before an appended row of equal value, so an appended value ``q`` comes
    right after the training rows with values <= q, and a training row at position r moves
    down by the number of appended rows placed before it."""
    n, J = rank.shape[1], Xq.shape[0]
    out = np.empty((rank.shape[0], n + J), dtype=np.int64)
    for k in range(rank.shape[0]):
        q = Xq[:, k]
        below = np.searchsorted(values[k], q, side="right")  # training rows before each
        order = np.argsort(q, kind="stable")  # appended rows among themselves
        before = np.searchsorted(below[order], rank[k], side="right")
        out[k, :n] = rank[k] + before
        out[k, n + order] = below[order] + np.arange(J)
    return out


#: Rows × attributes per batched split search: bounds its sort and count arrays (~100 MB
#: at most, far less for most batches); a longer list of nodes is searched in parts.
SEARCH_CELLS = 1 << 20
#: Rows of a node from which :func:`rank_orders` marks its ranks rather than sorting them:
#: a marking pass costs ~4 µs of calls per (node, column), a sort ~10 ns per row (measured
#: per column: 300 rows 3.2 µs sorted, 4.5 µs marked; 1 000 rows 12 µs and 9 µs).
MARK_ROWS = 512
#: Training rows of a node on x's path from which the batched engine keeps its class counts
#: (:func:`node_counts_stops`) and its children's rows (``BatchEngine._x_child``) by key:
#: below it a pass over the rows costs less than keeping and finding them.
MEMO_ROWS = 512


def row_keys(nodes: list, x_last: bool = True) -> list[tuple]:
    """Keys of the training rows and weights of nodes ``(rows, w, ...)`` — less the last
    row, their x, where ``x_last`` — for grouping and caching: their bytes, equal iff they
    are (the batched engine passes keys by derivation instead,
    ``BatchEngine._child_key``)."""
    end = -1 if x_last else None
    return [rows_key(nd[0][:end], nd[1][:end]) for nd in nodes]


def sorted_values(finder, rows: np.ndarray, S: np.ndarray, w: np.ndarray | None = None):
    """Values and classes (and, given per-entry weights ``w``, weights) of the entries
    ``rows`` in the sorted orders ``S`` (p, M) of the finder's numeric columns, column by
    column (one column's temporaries: fresh memory of the whole batch costs as much as the
    gathers), read from the numeric columns transposed once per finder (its rows do not
    change while it searches)."""
    columns = numeric_columns(finder)
    y = finder.y.astype(_class_dtype(finder.n_classes))
    V = np.empty(S.shape)
    Y = np.empty(S.shape, dtype=y.dtype)
    W = None if w is None else np.empty(S.shape)
    for k in range(S.shape[0]):
        # gathers by int64 indices (the rows) index, by the orders S (int32 at the grower's
        # levels) take: the faster gather of each on numpy 2 (``take(out=)`` costs twice)
        sorted_rows = rows.take(S[k])
        V[k] = columns[k][sorted_rows]
        Y[k] = y[sorted_rows]
        if W is not None:
            w.take(S[k], out=W[k])
    return V, Y, W


def numeric_columns(finder) -> np.ndarray:
    """The finder's numeric columns transposed (p, n), once per finder (its rows do not
    change while it searches)."""
    columns = finder.__dict__.get("_numeric_columns")
    if columns is None:
        columns = finder._numeric_columns = np.ascontiguousarray(
            finder.X[:, finder.numeric_idx].T)
    return columns


def feature_column(finder, f: int) -> np.ndarray:
    """Column ``f`` of the finder's X, contiguous (a numeric one a row of
    :func:`numeric_columns`), kept per finder: gathering many rows of one column from it
    costs a third of indexing X by (rows, f)."""
    kept = finder.__dict__.setdefault("_feature_columns", {})
    column = kept.get(f)
    if column is None:
        k = flat_nonzero(finder.numeric_idx == f)
        column = kept[f] = (numeric_columns(finder)[k[0]] if k.size
                            else np.ascontiguousarray(finder.X[:, f]))
    return column


def rank_orders(rank: np.ndarray, rows: np.ndarray, seg: np.ndarray,
                node: np.ndarray) -> np.ndarray:
    """Each node's entries (laid end to end) in the order of every column's ranks (p, M):
    the grower's stable value order, ranks being unique. ``rank``: (p, n) or a sequence of
    p rank arrays. A node holding more than 1/16 of the ranked rows and more than
    :data:`MARK_ROWS` is ordered by marking its ranks in a table of all of them (linear),
    the others by one sort of (node, rank) keys per column — the p sorts in one
    ``argsort(axis=1)`` call (one call per column cost diabetes' TPCE CV 1.2 % of its
    instructions)."""
    p = len(rank)
    n_rank = len(rank[0]) if p else 0
    S = np.empty((p, rows.size), dtype=np.int64)
    lens = seg[1:] - seg[:-1]
    marked = (lens * 16 > n_rank) & (lens > MARK_ROWS)
    big = flat_nonzero(marked)
    small = flat_nonzero((~marked).repeat(lens))
    offset = node[small] * n_rank
    present = np.zeros(n_rank, dtype=bool) if big.size else None
    at = np.empty(n_rank, dtype=np.int64) if big.size else None
    if small.size:  # node-major: the small nodes' segments, in order
        keys = np.empty((p, small.size), dtype=np.int64)
        rows_small = rows[small]
        for k in range(p):
            np.add(offset, rank[k][rows_small], out=keys[k])
        S[:, small] = small[keys.argsort(axis=1)]
    for g in big.tolist():  # each big node's rows alone (the small ones are ordered)
        a, e = seg[g], seg[g + 1]
        rows_g = rows[a:e]
        for k in range(p):
            r = rank[k][rows_g]
            present[r] = True
            at[r] = np.arange(a, e)
            S[k, a:e] = at[flat_nonzero(present)]
            present[r] = False
    return S


def evaluate_nodes(finder, nodes: list[tuple[np.ndarray, np.ndarray]],
                   rank: np.ndarray | None = None) -> list:
    """Best split (or None) of every node ``(rows, weights)`` — batched calls of the
    grower's scorer, equal to ``finder.best_split`` node by node (rows sorted ascending).
    ``rank`` (:func:`value_ranks`, no missing values) replaces the per-node value sorts by
    one integer sort per column."""
    if not nodes:
        return []
    lens = np.array([r.size for r, _ in nodes], dtype=np.int64)
    choice = choose_tests(finder, lens, np.concatenate([r for r, _ in nodes]),
                          np.concatenate([v for _, v in nodes]), rank)
    return [choice.split(g) for g in range(lens.size)]


def choose_tests(finder, lens: np.ndarray, rows: np.ndarray, w: np.ndarray,
                 rank: np.ndarray | None = None, keys: np.ndarray | None = None) -> _Choice:
    """:func:`evaluate_nodes` of nodes laid end to end (node g: ``lens[g]`` consecutive
    entries of ``rows``/``w``), as the grower's arrays of chosen tests — no Split object
    per node for callers that work on arrays. ``keys`` (optional, per node): equal keys
    name nodes whose entries but the last are equal (:class:`~treecert.tree.segments._Batch`).
    """
    cells = np.cumsum(lens) * max(1, finder.X.shape[1])
    if not cells.size or cells[-1] <= SEARCH_CELLS:
        return _evaluate_batch(finder, lens, rows, w, rank, keys)
    seg, _ = _segments(lens)
    chosen = [(start, _evaluate_batch(finder, lens[start:stop], rows[seg[start]:seg[stop]],
                                      w[seg[start]:seg[stop]], rank,
                                      None if keys is None else keys[start:stop]))
              for start, stop in parts(cells, SEARCH_CELLS)]
    return _Choice(*(np.concatenate([getattr(c, name) for _, c in chosen])
                     for name in ("feature", "threshold", "n_branches", "score")),
                   {start + g: vb for start, c in chosen for g, vb in c.value_branch.items()})


def parts(cum: np.ndarray, limit: int):
    """(start, stop) of consecutive parts of items whose sizes cumulate to ``cum``, each
    within ``limit`` (or of one item): the bounded-memory cut of a list of searches."""
    start = 0
    while start < len(cum):
        before = cum[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(cum, before + limit, side="right")))
        yield start, stop
        start = stop


def _evaluate_batch(finder, lens, rows, w, rank, keys=None) -> _Choice:
    seg, node = _segments(lens)
    we = eligible_weights(finder.eligible, rows, w)
    S = V = Y = None
    sorted_batch = getattr(finder, "sorted_batch", None)
    if finder.numeric_idx.size and rank is not None and sorted_batch is not None:
        S, V, Y = sorted_batch(rows, seg, rank, keys)  # SharedTallies: once per row set
    elif finder.numeric_idx.size:
        if rank is not None:  # ranks are unique: any sort is the stable one
            S = rank_orders(rank, rows, seg, node)
        else:
            XT = finder.X[np.ix_(rows, finder.numeric_idx)].T
            S = np.empty(XT.shape, dtype=_index_dtype(rows.size))
            for k in range(XT.shape[0]):  # stable within each node, as the grower sorts
                S[k] = np.lexsort((XT[k], node))
        V, Y, _ = sorted_values(finder, rows, S)
    return finder._evaluate(_Batch(seg, rows, w, we, S, V, Y, keys))


def _segments(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR bounds (G + 1,) of consecutive nodes of ``lens`` rows, and each row's node."""
    return offsets(lens), np.arange(lens.size).repeat(lens)


def counts_and_stops(finder, rows: np.ndarray, w: np.ndarray, seg: np.ndarray,
                     node: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class counts (G, K) and :func:`treecert.tree.grow.segment_stops` (G,) of G nodes whose
    rows are consecutive in ``rows``/``w`` (:func:`_segments`)."""
    K, G = finder.n_classes, seg.size - 1
    counts = np.bincount(node * K + finder.y[rows], weights=w, minlength=G * K).reshape(G, K)
    return counts, segment_stops(finder, rows, w, seg, counts, depth)


def node_counts_stops(finder, nodes: list[tuple[np.ndarray, np.ndarray, int]],
                      x_last: bool = False, keys: list | None = None, memo=None):
    """:func:`counts_and_stops` of nodes ``(rows, weights, depth)``.

    ``x_last``: every node's last row is its x, ineligible (the batched engine's nodes).
    Nodes with the same rows before x and the same weights — the K labels of one x until
    their tests part — then share one pass over their rows: the training rows' class
    counts, x's weight added to its class (``bincount`` adds a node's rows in order, x
    last: the same sums), and the eligible weight of the stopping rule, summed over one
    node of the group as over each (x adds 0 to it; the exactness of the sums depends on
    the weights alone, and holds or fails for a node whatever the other nodes). ``keys``
    name the nodes' rows before x and their weights — equal keys, equal rows and weights
    (default: their bytes; see :func:`treecert.transductive.label_search.search_nodes`).
    ``memo``: a :class:`~treecert.transductive.budget.ByteLRU` of each group's training
    class counts and light flag by (key, x's weight), which depend on nothing else (the
    finder's training rows must not change while it is used); kept for nodes of at least
    :data:`MEMO_ROWS` training rows."""
    if not nodes:
        return np.zeros((0, finder.n_classes)), np.zeros(0, dtype=bool)
    depth = np.array([d for _, _, d in nodes], dtype=np.int64)
    if not x_last:
        seg, node = _segments(np.array([r.size for r, _, _ in nodes], dtype=np.int64))
        return counts_and_stops(finder, np.concatenate([r for r, _, _ in nodes]),
                                np.concatenate([v for _, v, _ in nodes]), seg, node, depth)
    if keys is None:
        keys = row_keys(nodes)
    group_keys = [(k, float(v[-1])) for k, (_, v, _) in zip(keys, nodes, strict=True)]
    group, firsts = _groups(group_keys)
    K = finder.n_classes
    reps = firsts.tolist()
    # x last: nodes of at least MEMO_ROWS training rows
    kept = {i for i in reps if memo is not None and nodes[i][0].size > MEMO_ROWS}
    known = [memo.get(group_keys[i]) if i in kept else None for i in reps]
    new = [i for i, got in zip(reps, known, strict=True) if got is None]
    train, light = _train_counts_light(finder, [nodes[i] for i in new], K)
    for i, t, lt in zip(new, train, light, strict=True):
        if i in kept:
            memo.put(group_keys[i], (t.copy(), bool(lt)), 8 * K + key_bytes(group_keys[i][0])
                     + 200)
    fresh = zip(train, light, strict=True)
    picks = [got if got is not None else next(fresh) for got in known]
    train = np.array([t for t, _ in picks], dtype=float).reshape(len(picks), K)
    light = np.array([lt for _, lt in picks], dtype=bool)
    counts = train[group]
    x_row = np.array([r[-1] for r, _, _ in nodes], dtype=np.int64)
    counts[np.arange(group.size), finder.y[x_row]] += np.array([v[-1] for _, v, _ in nodes])
    return counts, light_stops(finder.params, counts, light[group], depth)


def _train_counts_light(finder, reps: list, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Per node ``(rows, w, depth)`` with x last: its training rows' class counts, and
    whether their eligible weight is below twice ``min_leaf`` (:func:`node_counts_stops`)."""
    R = len(reps)
    if not R:
        return np.zeros((0, K)), np.zeros(0, dtype=bool)
    seg, node = _segments(np.array([r.size - 1 for r, _, _ in reps], dtype=np.int64))
    rows_train = np.concatenate([r[:-1] for r, _, _ in reps])
    w_train = np.concatenate([v[:-1] for _, v, _ in reps])
    train = np.bincount(node * K + finder.y[rows_train], weights=w_train,
                        minlength=R * K).reshape(R, K).astype(float, copy=False)
    exact = _exact_segments(w_train, node, R)
    if exact.all() and (finder.eligible is None or finder.eligible[rows_train].all()):
        # exact sums of eligible training rows: x's eligible weight, 0, changes no bit; and
        # each node's weight is its class weights' sum, exact in any order (dyadic weights
        # below 2^32 in all: every partial sum is a multiple of 2^-20 below 2^32)
        light = train.sum(axis=1) < 2 * finder.params.min_leaf
    else:  # met with the limit as the grower sums each node (too_light)
        seg, _ = _segments(np.array([r.size for r, _, _ in reps], dtype=np.int64))
        w_all = np.concatenate([v for _, v, _ in reps])
        ew = eligible_weights(finder.eligible, np.concatenate([r for r, _, _ in reps]), w_all)
        light = too_light(w_all if ew is None else ew, w_all, seg, 2 * finder.params.min_leaf)
    return train, light


def _groups(keys: list) -> tuple[np.ndarray, np.ndarray]:
    """Each item's group among equal ``keys`` (numbered in order of first appearance), and
    each group's first item."""
    firsts: dict = {}
    group = np.array([firsts.setdefault(k, len(firsts)) for k in keys], dtype=np.int64)
    # groups are numbered as they first appear: a group's first item raises the maximum
    reps = flat_nonzero(group > np.maximum.accumulate(np.concatenate(([-1], group[:-1]))))
    return group, reps


def branch_fractions(parent: np.ndarray, branch: np.ndarray, totals: np.ndarray,
                     n_parents: int) -> np.ndarray:
    """Each edge's C4.5 ``branch_fraction``: its child's total weight over the sum of its
    siblings' (0 where that sum is 0), the siblings summed in branch order from zero, as
    :meth:`Tree.apply_weighted` sums them, so an unknown value's share is bit for bit the
    whole tree's. ``parent``, ``branch`` and ``totals`` are per edge; one edge per
    (parent, branch)."""
    ptot = np.zeros(n_parents)
    for b in range(int(branch.max()) + 1 if branch.size else 0):
        at = branch == b
        ptot[parent[at]] = ptot[parent[at]] + totals[at]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ptot[parent] > 0, totals / ptot[parent], 0.0)
