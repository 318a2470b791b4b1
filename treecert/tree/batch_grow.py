"""Growing many trees on samples of one training set at once: the ensembles' grower.

``bagging``, ``calibrated_bagging`` and ``forest`` grow tens of trees on bootstrap samples of
the same rows. Grown one by one (:func:`treecert.tree.grow.grow` per tree), each tree pays
its own sorting and a few hundred array operations per level, which on small data is most
of the cost. :func:`grow_trees` grows them together, level by level: the nodes of every tree
at one depth are the segments of one batch (:class:`~treecert.tree.segments._Batch`), so
one pass of the split search (:class:`~treecert.tree.split_search.SplitFinder`) and of the
routing serves every tree. Each numeric column is sorted once for all trees (a tree's root
order is the shared order restricted to its rows); the next level's orders are the
previous ones stably sorted by branch (one radix sort), as the single-tree grower
partitions them. Only what a node may test is searched: every (node, drawn numeric column)
pair is a segment of a one-column batch, counted per run of equal values
(:func:`~treecert.tree.run_search.run_cuts`) where the weights are integers, else searched
by ``_numeric_batch``; each nominal column is tallied and scored for the nodes that drew it.
Trees are grown in batches of at most :data:`BATCH_CELLS` cells, which bounds memory.

The trees are those of :meth:`DecisionTree.fit <treecert.tree.classifier.DecisionTree.fit>`
on each sample, bit for bit (``tests/test_batch_grow.py``): a sample's rows are kept in
increasing order, the segments of one tree keep the single-tree grower's node order within
each level, every sum is taken per segment as there, and what depends on the tree is kept
per tree:

* the random attribute subsets (``max_features``): each tree draws from its own
  :class:`~treecert.tree.feature_draw.FeatureDraw`, for its own nodes of a level in their
  order, as the tree grown alone draws them. The search scores only the drawn attributes
  of each node; a node none of whose drawn attributes has an admissible test is searched
  again among all of them (the single-tree rule);
* J48's "many values" rule of ``gain_ratio`` (:func:`counted_in_average`), which counts the
  sample's distinct rows: one row of flags per tree.

Node ids follow the single-tree grower's depth-first numbering (:func:`_number_nodes`), and
post-growth edits (``collapse``, ``cp``) are the learner's own
(:meth:`~treecert.tree.classifier.DecisionTree.edited`).
"""

from __future__ import annotations

import copy

import numpy as np

from treecert.tree.arrays import Tree
from treecert.tree.feature_draw import FeatureDraw, smallest_keys
from treecert.tree.grow import _Level, next_level, record_choice, segment_stops
from treecert.tree.run_search import run_cuts
from treecert.tree.segments import (
    _Batch,
    _class_dtype,
    _index_dtype,
    _ranges,
    flat_nonzero,
    offsets,
)
from treecert.tree.split_search import (
    GrowParams,
    SplitFinder,
    _columns_by_width,
    counted_in_average,
)


class ForestFinder(SplitFinder):
    """The split search over the nodes of many trees at once (the module docstring).

    ``n_rows`` (T,): each tree's training-set size (J48's many-values rule); ``draws``:
    each tree's attribute draw, or None (every attribute). Before each batch,
    :meth:`start_level` gives the tree of every node.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, is_nominal: np.ndarray,
                 n_values: np.ndarray, n_classes: int, params: GrowParams,
                 n_rows: np.ndarray, draws: list[FeatureDraw] | None = None) -> None:
        super().__init__(X, y, is_nominal, n_values, n_classes, params)
        self.draws = draws
        self._tree_in_avg = None
        if params.criterion == "gain_ratio":
            self._tree_in_avg = np.stack([counted_in_average(is_nominal, n_values,
                                                             float(n))[1] for n in n_rows])
        self._tid = np.empty(0, dtype=np.int64)
        self._ydtype = _class_dtype(n_classes)
        self._Xflat = np.ascontiguousarray(X).reshape(-1)
        self._columns = np.ascontiguousarray(X[:, self.numeric_idx].T)  # (p, n)
        self.allowed: np.ndarray | None = None

    def start_level(self, tid: np.ndarray) -> None:
        """The next batch's nodes belong to trees ``tid`` (G,): draw their attributes, each
        tree's nodes in batch order from its own generator."""
        self._tid = tid
        self.allowed = None
        if self.draws is None or not tid.size:
            return
        F = self.X.shape[1]
        keys = np.empty((tid.size, F))
        order = np.argsort(tid, kind="stable")
        n_t = np.bincount(tid, minlength=len(self.draws))
        keys[order] = np.concatenate([self.draws[t].keys(int(n_t[t]))
                                      for t in flat_nonzero(n_t).tolist()])
        self.allowed = smallest_keys(keys, self.draws[0].k)[:, self._fid]

    def _choose(self, ok, gain, score, thr, vb):
        """:meth:`SplitFinder._choose` with each node's tree's many-values flags."""
        if self._tree_in_avg is not None:
            self._in_avg = self._tree_in_avg[self._tid]
        return SplitFinder._choose(self, ok, gain, score, thr, vb)

    def _evaluate(self, b: _Batch):
        """The chosen test of every node of the batch, searched among its drawn attributes
        only (a (node, attribute) pair at a time: :func:`_pair_batch`,
        :meth:`_nominal_pairs`); the nodes that find none there are searched again among
        all attributes."""
        allowed = self.allowed
        if not b.rows.size:
            return SplitFinder._evaluate(self, b)
        G, p, q = b.G, self.numeric_idx.size, self.nominal_idx.size
        mask = np.ones((G, p + q), dtype=bool) if allowed is None else allowed
        whole = bool(np.all(b.w == np.floor(b.w)))
        ok = np.zeros((G, p + q), dtype=bool)
        gain = np.zeros((G, p + q))
        score = np.zeros((G, p + q))
        thr = np.full((G, p), np.nan)
        vb = np.full((G, q), -1, dtype=np.int64)
        if p:
            g, j = np.nonzero(mask[:, :p])
            if g.size:
                ok[g, j], gain[g, j], score[g, j], thr[g, j] = self._numeric_pairs(
                    b, g, j, whole)
        if q:
            ok[:, p:], gain[:, p:], score[:, p:], vb = self._nominal_pairs(b, mask[:, p:])
        if allowed is None:
            return self._choose(ok, gain, score, thr, vb)
        tid = self._tid
        first = self._choose(ok & allowed, gain, score, thr, vb)
        again = flat_nonzero(first.feature < 0)
        if again.size:  # nothing admissible among the drawn attributes: all of them
            self._tid, self.allowed = tid[again], None
            try:
                rest = self._evaluate(_sub_batch(b, again, self.X, self.y, self.numeric_idx,
                                                 self._ydtype, whole))
            finally:
                self._tid, self.allowed = tid, allowed
            first.fill(again, rest)
        return first

    def _numeric_pairs(self, b: _Batch, g: np.ndarray, j: np.ndarray, whole: bool):
        """(ok, gain, score, threshold) of the (node ``g``, numeric column ``j``) pairs:
        counted per run of equal values (:func:`~treecert.tree.run_search.run_cuts`)
        where the weights are integers, else by ``_numeric_batch`` on a batch of the
        pairs (:func:`_pair_batch`)."""
        total_w = b.total_w[g]
        if not (whole and self.eligible is None and b.exact[g].all()
                and float(total_w.sum()) < 2.0**31):
            return tuple(a[:, 0] for a in self._numeric_batch(
                _pair_batch(b, g, j, self.X, self.y, self.numeric_idx, self._ydtype, whole)))
        p = b.S.shape[0]
        if g.size == b.G * p:  # every pair, column by column: b's orders as they are
            g, j = np.tile(np.arange(b.G), p), np.repeat(np.arange(p), b.G)
            lens = np.tile(b.seg[1:] - b.seg[:-1], p)
            ent = b.S.ravel()
            r = b.rows[ent]
            V = np.take_along_axis(self._columns, r.reshape(p, -1), axis=1).ravel()
            res = run_cuts(self, offsets(lens), V, self.y[r], b.w[ent], b.total_w[g])
            order = np.arange(g.size).reshape(p, b.G).T.ravel()  # back to (node, column)
            return tuple(a[order] for a in res)
        lens = (b.seg[1:] - b.seg[:-1])[g]
        ent = b.S.ravel()[_ranges(b.seg[g] + j * b.rows.size, lens)]  # sorted per pair
        r = b.rows[ent]
        F = self.X.shape[1]
        V = self._Xflat[r * F + self.numeric_idx[j].repeat(lens)]
        return run_cuts(self, offsets(lens), V, self.y[r], b.w[ent], total_w)

    def _nominal_pairs(self, b: _Batch, mask: np.ndarray):
        """:meth:`SplitFinder._nominal_batch`'s (ok, gain, score, value) (G, q) of the
        drawn (node, nominal column) pairs ``mask`` only, a column at a time (the others:
        none ok): each cell adds the same entries in the same order, and a column's scores
        are those it gets among all columns (:meth:`SplitFinder._nominal_scores`)."""
        G, q, K = b.G, self.nominal_idx.size, self.n_classes
        ok = np.zeros((G, q), dtype=bool)
        gain = np.zeros((G, q))
        score = np.zeros((G, q))
        value = np.full((G, q), -1, dtype=np.int64)
        codes, S, _ = self.nominal_codes()
        lens = b.seg[1:] - b.seg[:-1]
        for jl in range(q):
            g = flat_nonzero(mask[:, jl])
            if not g.size:
                continue
            one = self._column_finder(jl)
            nv = int(one.max_values)
            n_g = lens[g]
            src = _ranges(b.seg[g], n_g)
            rows = b.rows[src]
            w = b.w[src]
            cell = np.repeat(np.arange(g.size) * S, n_g) + codes[rows, jl]
            elig = np.bincount(cell, weights=w, minlength=g.size * S)
            cell *= K
            cell += self.y.take(rows)
            counts = np.bincount(cell, weights=w, minlength=g.size * S * K)
            counts = np.ascontiguousarray(counts.reshape(g.size, 1, S, K)[:, :, :nv])
            elig = np.ascontiguousarray(elig.reshape(g.size, 1, S)[:, :, :nv])
            res = one._nominal_scores(counts, elig, b.total_w[g])
            ok[g, jl], gain[g, jl], score[g, jl], value[g, jl] = (a[:, 0] for a in res)
        return ok, gain, score, value

    def _column_finder(self, jl: int) -> SplitFinder:
        """This finder restricted to its nominal column ``jl`` (cached)."""
        cache = self.__dict__.setdefault("_column_finders", {})
        one = cache.get(jl)
        if one is None:
            one = copy.copy(self)
            one.__dict__.pop("_column_finders", None)
            one.nominal_idx = self.nominal_idx[jl : jl + 1]
            one.max_values = int(self.n_values[one.nominal_idx[0]])
            one._same_width = _columns_by_width(self.n_values[one.nominal_idx])
            cache[jl] = one
        return one


def _derived(b: _Batch, g: np.ndarray, seg: np.ndarray, rows: np.ndarray, w: np.ndarray,
             S: np.ndarray | None, V: np.ndarray | None, Y: np.ndarray | None,
             whole: bool) -> _Batch:
    """A batch whose segment i holds the entries of ``b``'s segment ``g[i]`` (their order,
    their weights): its totals are those segments' (the same sums), and a segment is
    summed exactly where ``b``'s was, while the totals stay far below float64's exact
    range. ``whole``: every weight of ``b`` is an integer."""
    out = object.__new__(_Batch)
    out.seg, out.rows, out.w, out.we, out.S, out.V, out.Y, out.keys = (seg, rows, w, None, S,
                                                                      V, Y, None)
    out.G = seg.size - 1
    out.node = np.arange(out.G).repeat(seg[1:] - seg[:-1])
    out.total_w = b.total_w[g]
    small = float(out.total_w.sum()) < 2.0**31
    out.exact = b.exact[g] & small
    out.integral = bool(whole and small and out.exact.all())
    return out


def _pair_batch(b: _Batch, g: np.ndarray, j: np.ndarray, X: np.ndarray, y: np.ndarray,
                fid: np.ndarray, ydtype, whole: bool) -> _Batch:
    """A batch of one numeric column whose segments are the (node ``g``, column ``j``)
    pairs of ``b``: each the node's entries in their order, sorted by column j as in
    ``b``, so every sum over it is the node's. Values and classes are read from ``X``
    and ``y`` (``fid``: the numeric columns' indices in X)."""
    M = b.rows.size
    lens = (b.seg[1:] - b.seg[:-1])[g]
    seg = offsets(lens)
    src = _ranges(b.seg[g], lens)
    flat = j.repeat(lens) * M + src
    ent = b.S.ravel()[flat]  # b's entries, sorted within each pair
    S = (ent + (seg[:-1] - b.seg[g]).repeat(lens)).astype(_index_dtype(src.size))
    r = b.rows[ent]
    V = X.ravel()[r * X.shape[1] + fid[j].repeat(lens)]
    return _derived(b, g, seg, b.rows[src], b.w[src], S[None], V[None],
                    y[r].astype(ydtype)[None], whole)


def _sub_batch(b: _Batch, nodes: np.ndarray, X: np.ndarray, y: np.ndarray, fid: np.ndarray,
               ydtype, whole: bool) -> _Batch:
    """The batch of the nodes ``nodes`` (increasing) of ``b``, in their order."""
    inside = np.zeros(b.G, dtype=bool)
    inside[nodes] = True
    ent = inside[b.node]
    S = V = Y = None
    if b.S is not None:
        p = b.S.shape[0]
        nid = (np.cumsum(ent) - 1).astype(_index_dtype(int(ent.sum())))
        sel = b.S.ravel()[flat_nonzero(ent[b.S])]
        S = nid[sel].reshape(p, -1)
        r = b.rows[sel].reshape(p, -1)
        V = X[r, fid[:, None]]
        Y = y[r].astype(ydtype)
    return _derived(b, nodes, offsets((b.seg[1:] - b.seg[:-1])[nodes]), b.rows[ent],
                    b.w[ent], S, V, Y, whole)


def _partition(prev_S: np.ndarray, sent: list, keep: np.ndarray, n_new: int) -> np.ndarray:
    """S of the next batch (its ``n_new`` entries: the previous batch's entries ``sent``
    to each branch, those of its active nodes ``keep``), from the previous batch's
    ``prev_S``: each column's order stably partitioned, branch by branch (the next batch's
    nodes are by branch, then parent)."""
    p, M = prev_S.shape
    new_id = (keep.cumsum() - 1).astype(_index_dtype(n_new))
    routed = np.zeros(M, dtype=np.int64)
    for ent, _ in sent:
        routed[ent] += 1
    if routed.max(initial=0) <= 1:  # every entry to one branch at most: one stable sort
        B = len(sent)
        dtype = np.int8 if B < 127 else np.int16
        branch = np.full(M, B, dtype=dtype)
        dest = np.zeros(M, dtype=new_id.dtype)
        for b, (ent, lo) in enumerate(sent):
            kept = keep[lo : lo + ent.size]
            e = ent[kept]
            branch[e] = b
            dest[e] = new_id[lo : lo + ent.size][kept]
        order = np.argsort(branch[prev_S], axis=1, kind="stable")[:, :n_new]
        return dest[np.take_along_axis(prev_S, order, axis=1)]
    parts = []  # an unknown value sent to several branches: a pass per branch
    for ent, lo in sent:
        kept = keep[lo : lo + ent.size]
        mark = np.zeros(M, dtype=bool)
        mark[ent[kept]] = True
        nid = np.zeros(M, dtype=new_id.dtype)
        nid[ent[kept]] = new_id[lo : lo + ent.size][kept]
        sel = flat_nonzero(mark[prev_S])
        parts.append(nid[prev_S.ravel()[sel]].reshape(p, -1))
    return np.concatenate(parts, axis=1)


def _root_orders(finder: SplitFinder, rows: np.ndarray, lens: np.ndarray,
                 order: np.ndarray) -> np.ndarray:
    """S of the roots' batch: every numeric column's shared order ``order`` (p, n)
    restricted to each root's rows (``rows``, increasing within each root of ``lens``)."""
    n = finder.X.shape[0]
    G = lens.size
    tree = np.repeat(np.arange(G), lens)
    present = np.zeros((G, n), dtype=bool)
    present[tree, rows] = True
    loc = np.full((G, n), -1, dtype=np.int64)  # each row's entry in its root's segment
    loc[tree, rows] = np.arange(rows.size)
    M = rows.size
    S = np.empty((order.shape[0], M), dtype=_index_dtype(M))
    for j in range(order.shape[0]):
        o = order[j]
        g, pos = np.divmod(flat_nonzero(present[:, o]), n)
        S[j] = loc[g, o[pos]]
    return S


def grow_trees(finder: ForestFinder, samples: list[tuple[np.ndarray, np.ndarray]]
               ) -> list[Tree]:
    """The trees grown on ``samples`` (per tree: its rows, increasing, and their weights),
    each the tree :func:`~treecert.tree.grow.grow` grows from the same rows and weights
    with a finder of that tree's settings (the module docstring)."""
    X, y, K = finder.X, finder.y, finder.n_classes
    p = finder.numeric_idx.size
    is_nominal = np.zeros(X.shape[1], dtype=bool)
    is_nominal[finder.nominal_idx] = True
    T = len(samples)
    lens = np.array([r.size for r, _ in samples], dtype=np.int64)
    levels: list[_Level] = []
    tids: list[np.ndarray] = []
    value_branch: dict[int, np.ndarray] = {}
    lvl = _Level(0, np.concatenate([r for r, _ in samples]).astype(np.int64),
                 np.concatenate([w for _, w in samples]).astype(float), lens,
                 np.full(T, -1), np.zeros(T, dtype=np.int64), K, y)
    tid = np.arange(T)
    pending = None
    depth = 0
    while True:
        levels.append(lvl)
        tids.append(tid)
        active = ~segment_stops(finder, lvl.rows, lvl.w, lvl.seg, lvl.counts, depth)
        if not active.any():
            break
        act = flat_nonzero(active)
        keep = active[lvl.node]
        b_rows, b_w = lvl.rows[keep], lvl.w[keep]
        b_seg = offsets(lvl.lens[act])
        S = None
        if pending is None:
            if p:
                shared = np.argsort(X[:, finder.numeric_idx], axis=0, kind="stable").T
                S = _root_orders(finder, b_rows, lvl.lens[act], shared)
        elif p:
            S = _partition(pending[0], pending[1], keep, b_rows.size)
        # (values and classes are read where a search needs them: :func:`_pair_batch`)
        batch = _Batch(b_seg, b_rows, b_w, None, S, None, None)
        b_tid = tid[act]
        finder.start_level(b_tid)
        choice = finder._evaluate(batch)
        split = record_choice(lvl, act, choice, value_branch)
        if split is None:
            break
        base = lvl.base
        lvl, sent = next_level(lvl, act, split, choice, batch, X, is_nominal, K, y)
        pending = (batch.S, sent)
        tid = tid[lvl.parent - base]  # a child is in its parent's tree
        depth += 1
    return _assemble_trees(levels, tids, value_branch, T, K)


def _assemble_trees(levels: list[_Level], tids: list[np.ndarray],
                    value_branch: dict[int, np.ndarray], T: int, K: int) -> list[Tree]:
    """Every tree's arrays, its nodes numbered as the single-tree grower numbers them."""
    parent = np.concatenate([lv.parent for lv in levels])
    branch = np.concatenate([lv.branch for lv in levels])
    tid = np.concatenate(tids)
    feature = np.concatenate([lv.feature for lv in levels])
    threshold = np.concatenate([lv.threshold for lv in levels])
    counts = np.concatenate([lv.counts for lv in levels]).reshape(-1, K)
    N = parent.size
    level_ptr = offsets([lv.lens.size for lv in levels])
    new_id, n_kids, kid_order = _number_nodes(parent, branch, tid, level_ptr, T)
    n_nodes = np.bincount(tid, minlength=T)
    node_ptr = offsets(n_nodes)
    perm = np.empty(N, dtype=np.int64)
    perm[node_ptr[tid] + new_id] = np.arange(N)
    # children in branch order: kid_order lists every child by (parent, branch)
    kid_ptr = offsets(n_kids)
    kids_new = new_id[kid_order]
    ch = kids_new[_ranges(kid_ptr[perm], n_kids[perm])]
    vb_size = np.zeros(N, dtype=np.int64)
    nodes_vb = np.fromiter(value_branch, dtype=np.int64, count=len(value_branch))
    if nodes_vb.size:
        vb_size[nodes_vb] = [value_branch[t].size for t in nodes_vb.tolist()]
    vb_sorted = perm[vb_size[perm] > 0]
    vb_all = (np.concatenate([value_branch[t] for t in vb_sorted.tolist()])
              if vb_sorted.size else np.empty(0, np.int64)).astype(np.int64)
    f_p, t_p, c_p, nk_p, vs_p = (feature[perm], threshold[perm], counts[perm], n_kids[perm],
                                 vb_size[perm])
    ch_ptr_all = offsets(nk_p)
    vb_ptr_all = offsets(vs_p)
    trees = []
    for t in range(T):
        a, b = int(node_ptr[t]), int(node_ptr[t + 1])
        c0, c1 = int(ch_ptr_all[a]), int(ch_ptr_all[b])
        v0, v1 = int(vb_ptr_all[a]), int(vb_ptr_all[b])
        trees.append(Tree(f_p[a:b], t_p[a:b], ch_ptr_all[a:b + 1] - c0,
                          ch[c0:c1].astype(np.int64), vb_ptr_all[a:b + 1] - v0,
                          vb_all[v0:v1], c_p[a:b]))
    return trees


def _number_nodes(parent: np.ndarray, branch: np.ndarray, tid: np.ndarray,
                  level_ptr: np.ndarray, T: int):
    """The single-tree grower's node ids (:func:`treecert.tree.grow._assemble`: pop a node,
    number its children in branch order, push them in reverse), for the nodes of many trees
    numbered level by level: returns each node's id within its tree, each node's number of
    children and the children listed by (parent, branch).

    The pops visit the nodes in preorder, so a node's children are numbered
    ``1 + (children of the nodes before it in preorder) + branch rank``; preorder positions
    come from subtree sizes, one level at a time."""
    N = parent.size
    has = flat_nonzero(parent >= 0)
    kid_order = has[np.lexsort((branch[has], parent[has]))]
    n_kids = np.bincount(parent[has], minlength=N)
    size = np.ones(N, dtype=np.int64)
    n_levels = level_ptr.size - 1
    for d in range(n_levels - 1, 0, -1):  # subtree sizes, deepest level first
        lo, hi = level_ptr[d], level_ptr[d + 1]
        size += np.bincount(parent[lo:hi], weights=size[lo:hi], minlength=N).astype(np.int64)
    # the offset of each child's subtree among its siblings' (in branch order)
    sib_size = size[kid_order]
    kid_ptr = offsets(n_kids)
    csum = np.cumsum(sib_size) - sib_size
    first = kid_ptr[:-1][n_kids > 0]
    starts = np.repeat(csum[first], n_kids[n_kids > 0])
    before = np.empty(N, dtype=np.int64)
    before[kid_order] = csum - starts
    pre = np.zeros(N, dtype=np.int64)
    for d in range(1, n_levels):
        lo, hi = level_ptr[d], level_ptr[d + 1]
        pre[lo:hi] = pre[parent[lo:hi]] + 1 + before[lo:hi]
    # children numbered before each node's: the nodes before it in its tree's preorder
    by_pre = np.lexsort((pre, tid))
    nk = n_kids[by_pre]
    cum = np.cumsum(nk) - nk
    tree_first = offsets(np.bincount(tid, minlength=T))[:-1]
    base = np.empty(N, dtype=np.int64)
    base[by_pre] = 1 + cum - cum[tree_first[tid[by_pre]]]
    new_id = np.zeros(N, dtype=np.int64)
    rank = np.arange(kid_order.size) - np.repeat(kid_ptr[:-1], n_kids)
    new_id[kid_order] = base[parent[kid_order]] + rank
    return new_id, n_kids, kid_order


#: Trees grown in one batch hold at most about this many entries × searched columns (their
#: rows times the numeric columns, whose orders move from level to level, plus the drawn
#: columns times the classes, the run counts of a search), unless one tree alone holds more:
#: bounds the grower's largest arrays (8 bytes a cell) while keeping the batches large.
BATCH_CELLS = 2**22


def fit_trees(members: list, data, samples: list[tuple[np.ndarray, np.ndarray]]) -> list:
    """Fit every unfitted :class:`~treecert.tree.classifier.DecisionTree` ``members[i]``
    on the rows ``samples[i][0]`` (increasing, every class known) of ``data`` weighted
    ``samples[i][1]``, as ``members[i].fit(data.subset(rows))`` with those weights would;
    returns ``members``. The members share their growing settings (not their seeds)."""
    from treecert.tree.feature_draw import resolve_max_features

    if not members:
        return members
    first = members[0]
    params = first.grow_params
    k = resolve_max_features(first.max_features, data.schema.n_features)
    for m in members[1:]:
        if m.grow_params != params or resolve_max_features(
                m.max_features, data.schema.n_features) != k:
            raise ValueError("the members of one batch must share their growing settings")
    schema = data.schema
    p, K = int((~schema.nominal_mask()).sum()), schema.n_classes
    per_tree = p + min(k or schema.n_features, schema.n_features) * K
    lo = 0
    while lo < len(members):
        hi, cells = lo, 0
        while hi < len(members) and (hi == lo or cells + samples[hi][0].size * per_tree
                                     <= BATCH_CELLS):
            cells += samples[hi][0].size * per_tree
            hi += 1
        draws = None
        if k is not None:
            draws = [FeatureDraw(k, schema.n_features, m.random_state) for m in members[lo:hi]]
        finder = ForestFinder(data.X, data.y, schema.nominal_mask(), schema.n_values(),
                              K, params, np.array([s[0].size for s in samples[lo:hi]]), draws)
        grown = grow_trees(finder, samples[lo:hi])
        for m, tree, (rows, _) in zip(members[lo:hi], grown, samples[lo:hi], strict=True):
            m.tree_ = m.finished(tree, data.X[rows])
            m.schema_ = schema
        lo = hi
    return members
