"""The batched transductive engine: x's leaf in the tree grown on D ∪ {(x, c)} for many
(x, c) at once — and, for leave-one-out, in the tree grown on (D − {x_i}) ∪ {(x_i, c)}.

Every such tree differs from the tree grown on D (the *base*) only on x's path and below
it, and growing even that path one (x, c) at a time is dominated by the fixed cost of one
split search per node. Three devices remove almost all of it without changing a single
result (``tests/test_engine_batch.py`` checks bit-identity with the naive reference):

1. **A table of every other test's best case.** x is ineligible for thresholds, so the
   candidate tests of a node holding x are the base node's, and x only adds its class c
   (weight 1) to one branch of each. For each base node and each class change d,
   :class:`Competitors` gives, vectorised over all nodes, the largest gain any test
   other than the chosen T1 can reach with d on whichever branch suits it best; T1's own
   gain with x is exact (x's branch of T1 is known). When T1 leads by more than 1e-9 (the
   grower compares gains rounded to 10 decimals) it stays the chosen test and x's child
   is the base child. Leave-one-out swaps x for its own row r (same values, so the same
   side of every test, d = e_c − e_{y_r}): the new candidates are old tests with r
   replaced by x on r's side — a subset of what the table scores — unless r alone sets
   T1's threshold or T1's admissibility, which is checked (:meth:`BatchEngine._drop_safe`);
   with c = y_r nothing changes at all.
2. **Exact rescoring where x's position matters.** Where the table is not enough — a
   competitor close to T1 — every candidate of the node is rescored for x's actual
   position (:class:`NodeScores`): with a column's cuts sorted, those left of x and those
   right of it are two ranges, and prefix/suffix maxima give the best per column in O(1)
   per x. Exact ties of T1 with a later column that splits the rows identically (a
   duplicated column; or a mirrored one, when the gain is safely away from a rounding
   boundary) are settled as the grower settles them: the lower column wins.
3. **Batched exact searches.** Every node that is not certified — x's leaf when x's label
   makes it impure, nodes whose certificate fails, and every node of a subtree regrown
   below a changed test — is searched in one call of the grower's split finder per round,
   over all (x, c) at once, exactly as the level-wise grower batches a level (in parts of
   at most :data:`SEARCH_CELLS` rows × attributes, to bound memory). For the Venn machine
   the subtrees without x that hang off the paths (:class:`LeafForest`) grow a level in the
   same calls.

Limits: numeric and nominal attributes without missing values (in D and in x), criterion
``info_gain`` or ``gini``, no ``collapse``/``cp``; :meth:`BatchEngine.supports` says so and
callers fall back to :class:`treecert.engine.TransductiveEngine` one (x, c) at a time.
"""

from __future__ import annotations

import itertools

import numpy as np

from treecert.data.discretize import _ln_func
from treecert.data.schema import Dataset
from treecert.tree.arrays import Tree
from treecert.tree.classifier import DecisionTree
from treecert.tree.grow import grow, segment_stops, stops
from treecert.tree.impurity import _impurity_last
from treecert.tree.segments import _Batch, _class_dtype, _index_dtype
from treecert.tree.split_search import _EPS

_LN2 = np.log(2.0)
#: Batched engines built in this process (:meth:`BatchEngine.shared`), at most two.
_SHARED: dict = {}
#: Margin of the certificates, in gain units (the grower compares gains rounded to 1e-10).
_MARGIN = 1e-9


# ------------------------------------------------------------------------------ impurity
class CountRows:
    """Class-count rows (..., K) with their N·impurity, ready for N·impurity after a small
    class-weight change ``d`` (one or two non-zero entries) without touching every class.

    x ln x is Weka's ``lnFunc`` (0 for x <= 0; grow's ``_xlogx`` gives NaN below 0): a class
    change can push a count of the table's superset of candidates below zero."""

    def __init__(self, counts: np.ndarray, gini: bool) -> None:
        self.counts = counts
        self.gini = gini
        self.total = counts.sum(axis=-1)
        if gini:
            self.squares = (counts * counts).sum(axis=-1)
            self.impurity = _impurity_last(counts, gini)
        else:
            self.nats = _ln_func(self.total) - _ln_func(counts).sum(axis=-1)
            self.impurity = self.nats / _LN2

    def plus(self, d: np.ndarray) -> np.ndarray:
        """N·impurity of ``counts + d`` (entries pushed below zero count as zero)."""
        total = self.total + d.sum()
        nz = np.flatnonzero(d)
        if self.gini:
            sq = self.squares
            for k in nz:
                c = self.counts[..., k]
                sq = sq + (2.0 * c * d[k] + d[k] * d[k])
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(total > 0, total - sq / total, 0.0)
        nats = self.nats + (_ln_func(total) - _ln_func(self.total))
        for k in nz:
            c = self.counts[..., k]
            nats = nats - (_ln_func(c + d[k]) - _ln_func(c))
        return nats / _LN2


# ------------------------------------------------------------------------------ batched search
def value_ranks(finder) -> np.ndarray:
    """Per numeric column of the finder's X: each row's position in a stable sort of the
    column, so that sorting a node by (node, rank) is the grower's stable value sort."""
    cols = finder.X[:, finder.numeric_idx]
    rank = np.empty(cols.shape[::-1], dtype=np.int64)
    for k in range(cols.shape[1]):
        rank[k, np.argsort(cols[:, k], kind="stable")] = np.arange(cols.shape[0])
    return rank


#: Rows × attributes per batched split search: bounds its sort and count arrays (~100 MB
#: at most, far less for most batches); a longer list of nodes is searched in parts.
SEARCH_CELLS = 1 << 20


def evaluate_nodes(finder, nodes: list[tuple[np.ndarray, np.ndarray]],
                   rank: np.ndarray | None = None) -> list:
    """Best split (or None) of every node ``(rows, weights)`` — batched calls of the
    grower's scorer, equal to ``finder.best_split`` node by node (rows sorted ascending).
    ``rank`` (:func:`value_ranks`, no missing values) replaces the per-node value sorts by
    one integer sort per column."""
    if not nodes:
        return []
    cells = np.cumsum([r.size for r, _ in nodes]) * max(1, finder.X.shape[1])
    if cells[-1] <= SEARCH_CELLS:
        return _evaluate_batch(finder, nodes, rank)
    out, start = [], 0
    while start < len(nodes):  # consecutive parts within the budget, one node at least
        before = cells[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(cells, before + SEARCH_CELLS, side="right")))
        out += _evaluate_batch(finder, nodes[start:stop], rank)
        start = stop
    return out


def _evaluate_batch(finder, nodes, rank) -> list:
    lens = np.array([r.size for r, _ in nodes], dtype=np.int64)
    rows = np.concatenate([r for r, _ in nodes])
    w = np.concatenate([v for _, v in nodes])
    seg, node = _segments(lens)
    we = None if finder.eligible is None else w * finder.eligible[rows]
    S = V = Y = None
    if finder.numeric_idx.size:
        XT = finder.X[np.ix_(rows, finder.numeric_idx)].T
        S = np.empty(XT.shape, dtype=_index_dtype(rows.size))
        if rank is not None:
            offset = node * rank.shape[1]
            for k in range(XT.shape[0]):  # ranks are unique: any sort is the stable one
                S[k] = np.argsort(offset + rank[k, rows])
        else:
            for k in range(XT.shape[0]):  # stable within each node, as the grower sorts
                S[k] = np.lexsort((XT[k], node))
        V = np.take_along_axis(XT, S, axis=1)
        Y = finder.y.astype(_class_dtype(finder.n_classes))[rows][S]
    choice = finder._evaluate(_Batch(seg, rows, w, we, S, V, Y))
    return [choice.split(g) for g in range(lens.size)]


def _segments(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR bounds (G + 1,) of consecutive nodes of ``lens`` rows, and each row's node."""
    seg = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=seg[1:])
    return seg, np.repeat(np.arange(lens.size), lens)


def counts_and_stops(finder, rows: np.ndarray, w: np.ndarray, seg: np.ndarray,
                     node: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class counts (G, K) and :func:`treecert.grow.segment_stops` (G,) of G nodes whose
    rows are consecutive in ``rows``/``w`` (:func:`_segments`)."""
    K, G = finder.n_classes, seg.size - 1
    counts = np.bincount(node * K + finder.y[rows], weights=w, minlength=G * K).reshape(G, K)
    return counts, segment_stops(finder, rows, w, seg, node, counts, depth)


def node_counts_stops(finder, nodes: list[tuple[np.ndarray, np.ndarray, int]]):
    """:func:`counts_and_stops` of nodes ``(rows, weights, depth)``."""
    if not nodes:
        return np.zeros((0, finder.n_classes)), np.zeros(0, dtype=bool)
    seg, node = _segments(np.array([r.size for r, _, _ in nodes], dtype=np.int64))
    return counts_and_stops(finder, np.concatenate([r for r, _, _ in nodes]),
                            np.concatenate([v for _, v, _ in nodes]), seg, node,
                            np.array([d for _, _, d in nodes], dtype=np.int64))


class LeafForest:
    """Trees grown on training rows alone — the subtrees that hang off x's paths — level by
    level, keeping only their leaves (the Venn machine needs nothing else of them).

    Roots may be added at any time; every round, :meth:`open_nodes` settles the nodes that
    stop and hands back the others for a split search, which the caller batches with its
    own (:meth:`BatchEngine.grow_batch` searches x's paths in the same call), and
    :meth:`advance` routes their rows by the tests found. Stopping uses the level-wise
    grower's exact per-node sums, so every tree is ``grow(finder, rows, weights,
    depth=depth)`` (``tests/test_engine_batch.py`` checks its leaves).
    """

    def __init__(self, finder) -> None:
        self.finder = finder
        self.K = finder.n_classes
        self._roots: list[tuple[int, np.ndarray, np.ndarray, int]] = []
        self.rows = np.empty(0, np.int64)
        self.w = np.empty(0)
        self.lens = np.empty(0, np.int64)
        self.depth = np.empty(0, np.int64)
        self.owner = np.empty(0, np.int64)
        self._found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._open = np.empty(0, np.int64)

    def add(self, owner: int, rows: np.ndarray, w: np.ndarray, depth: int) -> None:
        """A tree to grow from training ``rows`` (sorted, no missing values) at ``depth``."""
        self._roots.append((owner, rows, w, depth))

    def open_nodes(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Settle this round's nodes that stop; the others' ``(rows, weights)``."""
        if self._roots:
            self.rows = np.concatenate([self.rows, *[r for _, r, _, _ in self._roots]])
            self.w = np.concatenate([self.w, *[v for _, _, v, _ in self._roots]])
            self.lens = np.concatenate([self.lens, [r.size for _, r, _, _ in self._roots]])
            self.depth = np.concatenate([self.depth, [d for *_, d in self._roots]])
            self.owner = np.concatenate([self.owner, [o for o, *_ in self._roots]])
            self.lens, self.depth, self.owner = (a.astype(np.int64) for a in
                                                 (self.lens, self.depth, self.owner))
            self._roots = []
        self.seg, self.node = _segments(self.lens)
        self.counts, stop = counts_and_stops(self.finder, self.rows, self.w, self.seg,
                                             self.node, self.depth)
        self._keep_leaves(stop)
        self._open = np.flatnonzero(~stop)
        seg, rows, w = self.seg, self.rows, self.w
        return [(rows[seg[g]:seg[g + 1]], w[seg[g]:seg[g + 1]]) for g in self._open]

    def _keep_leaves(self, leaf: np.ndarray) -> None:
        leaf = leaf & (self.lens > 0)  # an empty branch of a multiway test holds no example
        self._found.append((self.owner[leaf], self.counts[leaf], self.lens[leaf].astype(float)))

    def advance(self, splits: list) -> None:
        """Route the open nodes' rows by their tests (None: the node is a leaf)."""
        X = self.finder.X
        split_of = {int(g): sp for g, sp in zip(self._open, splits, strict=True)
                    if sp is not None}
        unsplit = np.zeros(self.lens.size, dtype=bool)
        unsplit[self._open] = True
        unsplit[list(split_of)] = False
        self._keep_leaves(unsplit)
        if not split_of:
            self.rows, self.w = self.rows[:0], self.w[:0]
            self.lens, self.depth, self.owner = self.lens[:0], self.depth[:0], self.owner[:0]
            return
        parents = np.array(sorted(split_of), dtype=np.int64)
        seg = self.seg
        branch = np.full(self.rows.size, -1, dtype=np.int64)
        n_br = np.zeros(self.lens.size, dtype=np.int64)
        for g in parents:
            sp = split_of[int(g)]
            sl = slice(seg[g], seg[g + 1])
            vals = X[self.rows[sl], sp.feature]
            branch[sl] = (vals > sp.threshold if sp.value_branch is None
                          else sp.value_branch[vals.astype(np.int64)])
            n_br[g] = sp.n_branches
        width = int(n_br.max())
        moving = np.flatnonzero(branch >= 0)
        key = self.node[moving] * width + branch[moving]
        order = moving[np.argsort(key, kind="stable")]  # parent-major, rows kept in order
        slots = parents[:, None] * width + np.arange(width)[None, :]
        slots = slots[np.arange(width)[None, :] < n_br[parents][:, None]]
        parent = slots // width
        self.lens = np.bincount(key, minlength=self.lens.size * width)[slots]
        self.owner, self.depth = self.owner[parent], self.depth[parent] + 1
        self.rows, self.w = self.rows[order], self.w[order]

    @property
    def growing(self) -> bool:
        return bool(self._roots) or self.lens.size > 0

    def leaves(self, n_owners: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per owner id: ``(counts (L, K), n_rows (L,))`` of its leaves, breadth-first."""
        own = np.concatenate([o for o, _, _ in self._found] + [np.empty(0, np.int64)])
        cnt = np.concatenate([c for _, c, _ in self._found] + [np.empty((0, self.K))])
        num = np.concatenate([n for _, _, n in self._found] + [np.empty(0)])
        by_owner = np.argsort(own, kind="stable")
        bounds = np.searchsorted(own[by_owner], np.arange(n_owners + 1))
        return [(cnt[by_owner[bounds[i]:bounds[i + 1]]], num[by_owner[bounds[i]:bounds[i + 1]]])
                for i in range(n_owners)]


# ------------------------------------------------------------------------------ trees on D
class Sub:
    """The tree grown on the training rows alone (the base tree), with each node's rows and
    each row's leaf; every (x, c) walks it."""

    def __init__(self, grown, n: int) -> None:
        self.tree = Tree.from_grown(grown)
        g = grown
        nn = self.tree.n_nodes
        self.rows = [g.rows_idx[g.rows_ptr[v]:g.rows_ptr[v + 1]] for v in range(nn)]
        self.w = [g.rows_w[g.rows_ptr[v]:g.rows_ptr[v + 1]] for v in range(nn)]
        self.depth = g.depth
        self.n_inst = np.diff(g.rows_ptr).astype(float)
        self.leaf_of_row = np.full(n, -1, dtype=np.int64)
        for v in np.flatnonzero(self.tree.is_leaf):
            self.leaf_of_row[self.rows[v]] = v
        self.leaves = np.flatnonzero(self.tree.is_leaf & (self.n_inst > 0))

    def children_for(self, v: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The child of internal node v[i] that row X[i] (no missing values) enters."""
        t = self.tree
        f = t.feature[v]
        vals = X[np.arange(v.size), f]
        thr = t.threshold[v]
        num = ~np.isnan(thr)
        b = np.zeros(v.size, dtype=np.int64)
        b[num] = vals[num] > thr[num]
        nom = np.flatnonzero(~num)
        if nom.size:
            b[nom] = t.value_branch[t.value_branch_ptr[v[nom]] + vals[nom].astype(np.int64)]
        return t.children[t.children_ptr[v] + b]


class Competitors:
    """Every admissible test of every internal node of a tree on D, other than the node's
    chosen test T1, as class counts — so that the best of them with one instance's class
    change ``d`` added on whichever side suits it best (:meth:`upper`) takes a few
    vectorised operations for all nodes at once (module docstring, device 1).

    Admissible: both sides of a numeric cut, or two values of a multiway test, or the value
    and the rest of a binary test, hold at least ``min_leaf`` weight (the grower's rules;
    x's weight never counts, so x makes no test admissible, and removing a row can only
    make fewer tests admissible).
    """

    def __init__(self, sub: Sub, data: Dataset, params, gini: bool) -> None:
        tree, X, y = sub.tree, data.X, data.y.astype(np.int64)
        K = data.schema.n_classes
        ml = float(params.min_leaf)
        self.gini = gini
        self.n_nodes = tree.n_nodes
        self.internal = internal = np.flatnonzero(~tree.is_leaf)
        self.N = tree.counts.sum(axis=1)
        self.counts = tree.counts[internal]
        self._memo: dict[tuple, np.ndarray] = {}
        G = internal.size
        self.cuts = []  # numeric: (node g, left counts) of admissible cuts other than T1
        self.multi = []  # multiway nominal: (counts (G, V, K), admissible (G,))
        self.binary = []  # binary nominal: (counts (G, V, K), admissible (G, V))
        if G == 0:
            return
        pc = self.counts
        lens = np.array([sub.rows[v].size for v in internal])
        rows = np.concatenate([sub.rows[v] for v in internal])
        w = np.concatenate([sub.w[v] for v in internal])
        seg = np.repeat(np.arange(G), lens)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
        feat = tree.feature[internal]
        thr = tree.threshold[internal]
        onehot = np.zeros((rows.size, K))
        onehot[np.arange(rows.size), y[rows]] = w
        for f, attr in enumerate(data.schema.attributes):
            vals = X[rows, f]
            mine = feat == f
            if not attr.is_nominal:
                order = np.lexsort((vals, seg))
                sv, sg = vals[order], seg[order]
                cum = np.cumsum(onehot[order], axis=0)
                off = np.zeros((G, K))
                off[1:] = cum[starts[1:] - 1]
                left = cum - off[sg]
                ok = np.zeros(rows.size, dtype=bool)
                ok[:-1] = (sg[:-1] == sg[1:]) & (sv[:-1] < sv[1:])
                lw = left.sum(axis=1)
                ok &= (lw >= ml) & (pc[sg].sum(axis=1) - lw >= ml)
                if mine.any():  # leave out the chosen cut itself
                    t = thr[sg]
                    nxt = np.r_[sv[1:], np.inf]
                    ok &= ~(mine[sg] & (sv <= t) & (t < nxt))
                i = np.flatnonzero(ok)
                if i.size:
                    self.cuts.append((sg[i], left[i], pc[sg[i]] - left[i]))
                continue
            V = len(attr.values)
            cnt = np.bincount((seg * V + vals.astype(np.int64)) * K + y[rows], weights=w,
                              minlength=G * V * K).reshape(G, V, K)
            bw = cnt.sum(axis=2)
            if not params.binary_splits:
                self.multi.append((CountRows(cnt, gini), ((bw >= ml).sum(axis=1) >= 2) & ~mine))
                continue
            okv = (bw >= ml) & (pc.sum(axis=1)[:, None] - bw >= ml)
            for g in np.flatnonzero(mine):
                v = internal[g]
                vb = tree.value_branch[tree.value_branch_ptr[v]:tree.value_branch_ptr[v + 1]]
                okv[g, vb == 0] = False
            self.binary.append((CountRows(cnt, gini), CountRows(pc[:, None, :] - cnt, gini),
                                okv))
        if self.cuts:
            g, left, right = (np.concatenate(part) for part in zip(*self.cuts, strict=True))
            self.cuts = [(g, CountRows(left, gini), CountRows(right, gini))]
        self.parent = CountRows(pc, gini)

    def upper(self, d: np.ndarray) -> np.ndarray:
        """Per node: the largest gain of any test other than T1 once class weights ``d`` are
        added to the node and to the branch that favours that test most; -inf where there
        is no other test, NaN for leaves."""
        key = tuple(d.tolist())
        if key in self._memo:
            return self._memo[key]
        G = self.counts.shape[0]
        Np = self.N[self.internal] + d.sum()
        Ep = self.parent.plus(d)
        best = np.full(G, -np.inf)
        for g, left, right in self.cuts:
            gl = (Ep[g] - left.plus(d) - right.impurity) / Np[g]
            gr = (Ep[g] - left.impurity - right.plus(d)) / Np[g]
            np.maximum.at(best, g, np.maximum(gl, gr))
        for cnt, ok in self.multi:
            e_v = cnt.impurity
            worst = (cnt.plus(d) - e_v).min(axis=1)  # x's best value
            gains = (Ep - e_v.sum(axis=1) - worst) / Np
            best = np.where(ok, np.maximum(best, gains), best)
        for cnt, rest, okv in self.binary:
            gin = Ep[:, None] - cnt.plus(d) - rest.impurity
            gout = Ep[:, None] - cnt.impurity - rest.plus(d)
            gains = np.maximum(gin, gout) / Np[:, None]
            best = np.maximum(best, np.where(okv, gains, -np.inf).max(axis=1))
        out = np.full(self.n_nodes, np.nan)
        out[self.internal] = best
        self._memo[key] = out
        return out


# ------------------------------------------------------------------------------ rescoring
class NodeScores:
    """Every candidate test of one base node, as class counts, ready to be rescored with one
    instance added (or swapped for one of the node's rows) — device (2) of the module
    docstring. Built once per node, shared by every (x, c) that needs it."""

    def __init__(self, sub: Sub, v: int, data: Dataset, params, gini: bool) -> None:
        tree = sub.tree
        rows, w = sub.rows[v], sub.w[v]
        X, y = data.X, data.y.astype(np.int64)
        K = data.schema.n_classes
        ml = float(params.min_leaf)
        self.gini = gini
        self.K = K
        self.P = tree.counts[v].astype(float)
        self.N = float(w.sum())
        f1 = int(tree.feature[v])
        t1 = float(tree.threshold[v])
        self.ok = True  # False: T1 not found among the candidates (never expected)
        m = rows.size
        onehot = np.zeros((m, K))
        onehot[np.arange(m), y[rows]] = w
        attrs = data.schema.attributes
        # numeric columns: the admissible cuts, compacted per column, ascending
        num = [f for f, a in enumerate(attrs) if not a.is_nominal]
        self.num = np.array(num, dtype=np.int64)
        self.t1_num = -1
        if num and m >= 2:
            vals = X[np.ix_(rows, num)]
            order = np.argsort(vals, axis=0, kind="stable")
            sv = np.take_along_axis(vals, order, axis=0)
            L = np.cumsum(onehot[order], axis=0)[:-1]  # (m-1, F, K): left of cut i
            Lw = L.sum(axis=2)
            valid = (sv[:-1] < sv[1:]) & (Lw >= ml) & (self.N - Lw >= ml)
            if params.threshold == "lower":
                thr = sv[:-1].copy()
            else:
                thr = (sv[:-1] + sv[1:]) / 2.0
            thr = np.where(thr < sv[1:], thr, sv[:-1])
            F = len(num)
            C = max(int(valid.sum(axis=0).max()), 1)
            self.thr = np.full((F, C), np.inf)
            self.L = np.zeros((F, C, K))
            self.cut_ok = np.zeros((F, C), dtype=bool)
            for k in range(F):
                idx = np.flatnonzero(valid[:, k])
                self.thr[k, :idx.size] = thr[idx, k]
                self.L[k, :idx.size] = L[idx, k]
                self.cut_ok[k, :idx.size] = True
            self.twin = np.zeros((F, C), dtype=bool)
            self.mirror = self.twin
            if f1 in num:
                k = num.index(f1)
                hit = np.flatnonzero(self.cut_ok[k] & (self.thr[k] == t1))
                if hit.size != 1:
                    self.ok = False
                else:
                    self.t1_num = k
                    self.t1_cut = int(hit[0])
                    # Cuts of later columns with T1's very class counts tie with T1 for
                    # any x on the same side of both (bit-identical gains from integer
                    # counts) and lose the tie to T1's lower column, as in the base tree.
                    # Mirror twins (T1's counts, sides swapped) tie too, up to the last
                    # bit: harmless when the gain is far from a rounding boundary.
                    if np.all(w == np.round(w)):
                        later = self.cut_ok.copy()
                        later[:k + 1] = False
                        t1_left = self.L[k, self.t1_cut]
                        self.twin = (self.L == t1_left).all(axis=2) & later
                        self.mirror = (self.L == self.P - t1_left).all(axis=2) & later
        else:
            self.thr = np.full((len(num), 1), np.inf)
            self.L = np.zeros((len(num), 1, K))
            self.cut_ok = np.zeros((len(num), 1), dtype=bool)
            self.twin = self.mirror = np.zeros((len(num), 1), dtype=bool)
            if f1 in num:
                self.ok = False
        # nominal columns: class counts per value, padded to the most values
        nom = [f for f, a in enumerate(attrs) if a.is_nominal]
        self.nom = np.array(nom, dtype=np.int64)
        nv = np.array([len(attrs[f].values) for f in nom], dtype=np.int64)
        Vm = max(int(nv.max()) if nom else 1, 1)
        self.cnt = np.zeros((len(nom), Vm, K))
        if nom:
            codes = X[np.ix_(rows, nom)].astype(np.int64)
            cell = (np.arange(len(nom))[None, :] * Vm + codes) * K + y[rows][:, None]
            self.cnt = np.bincount(cell.ravel(), weights=np.repeat(w, len(nom)),
                                   minlength=len(nom) * Vm * K).reshape(len(nom), Vm, K)
        bw = self.cnt.sum(axis=2)
        exists = np.arange(Vm)[None, :] < nv[:, None]
        self.binary = bool(params.binary_splits)
        if self.binary:
            self.val_ok = exists & (bw >= ml) & (self.N - bw >= ml)
        else:
            self.val_ok = exists & ((bw >= ml).sum(axis=1) >= 2)[:, None]
        self.t1_nom = -1
        if f1 in nom:
            self.t1_nom = nom.index(f1)
            vb = tree.value_branch[tree.value_branch_ptr[v]:tree.value_branch_ptr[v + 1]]
            self.t1_value = int(np.flatnonzero(vb == 0)[0]) if self.binary else -1
        self._memo: dict[tuple, tuple] = {}
        self._rows = None

    def _arrays(self, d: np.ndarray):
        """Gains of every candidate with ``d`` (class-weight change) added to x's side, T1
        taken out: numeric maxima over the cuts below / above x per column, in four variants
        [x left or right of T1][mirror twins trusted or not]; nominal gains per value."""
        key = tuple(d.tolist())
        if key in self._memo:
            return self._memo[key]
        if self._rows is None:
            self._rows = (CountRows(self.L, self.gini), CountRows(self.P - self.L, self.gini),
                          CountRows(self.cnt, self.gini),
                          CountRows(self.P - self.cnt, self.gini))
        L, R, cnt, rest = self._rows
        Np = self.N + d.sum()
        Ep = _impurity_last(self.P + d, self.gini)
        GL = (Ep - L.plus(d) - R.impurity) / Np
        GR = (Ep - L.impurity - R.plus(d)) / Np
        GL = np.where(self.cut_ok, GL, -np.inf)
        GR = np.where(self.cut_ok, GR, -np.inf)
        t1 = (-np.inf, -np.inf)
        if self.t1_num >= 0:
            k, c = self.t1_num, self.t1_cut
            t1 = (GL[k, c], GR[k, c])
            GL[k, c] = GR[k, c] = -np.inf
        F = GL.shape[0]
        ninf = np.full((F, 1), -np.inf)
        no = np.zeros_like(self.twin)
        # variant 2·side + mirror; side 0 = x left of T1. Twins with x on the same side as
        # in T1 and (when trusted) mirror twins with x on the opposite side are no threat.
        def best_other(gr, gl):  # (F, C+1): best cut below x (x right) or above x (x left)
            below = np.hstack([ninf, np.maximum.accumulate(gr, axis=1)])
            above = np.hstack([np.maximum.accumulate(gl[:, ::-1], axis=1)[:, ::-1], ninf])
            return np.maximum(below, above)

        if self.twin.any() or self.mirror.any():
            variants = []
            for side in (0, 1):
                for mirror in (no, self.mirror):
                    b_mask = (self.twin if side else no) | (mirror if side == 0 else no)
                    a_mask = (self.twin if side == 0 else no) | (mirror if side else no)
                    variants.append(best_other(np.where(b_mask, -np.inf, GR),
                                               np.where(a_mask, -np.inf, GL)))
            num_best = np.stack(variants)  # (4, F, C+1)
        else:
            num_best = best_other(GR, GL)[None]  # one variant serves all
        # nominal: gain with x's value ``u`` per (column, u)
        e_v = cnt.impurity  # (Fn, V)
        e_vd = cnt.plus(d)
        if self.binary:
            gin = np.where(self.val_ok, (Ep - e_vd - rest.impurity) / Np, -np.inf)
            gout = np.where(self.val_ok, (Ep - e_v - rest.plus(d)) / Np, -np.inf)
            if self.t1_nom >= 0:
                j, s1 = self.t1_nom, self.t1_value
                t1 = (gin[j, s1], gout[j, s1])
                gin[j, s1] = gout[j, s1] = -np.inf
            # best over the other values s != u (x on the rest side): top two of gout
            order = np.argsort(-gout, axis=1, kind="stable")
            top = order[:, 0]
            top_g = np.take_along_axis(gout, order[:, :1], axis=1)[:, 0]
            second = (np.take_along_axis(gout, order[:, 1:2], axis=1)[:, 0]
                      if gout.shape[1] > 1 else np.full(gout.shape[0], -np.inf))
            nom = (gin, top, top_g, second)
        else:
            g = (Ep - e_v.sum(axis=1, keepdims=True) - (e_vd - e_v)) / Np
            g = np.where(self.val_ok, g, -np.inf)
            if self.t1_nom >= 0:
                t1 = g[self.t1_nom].copy()
                g[self.t1_nom] = -np.inf
            nom = (g,)
        out = (num_best, nom, t1)
        self._memo[key] = out
        return out

    def certify(self, Xq: np.ndarray, D: np.ndarray, min_gain: float) -> np.ndarray:
        """For rows ``Xq`` entering the node with class-weight changes ``D`` (one row per
        job): True where the node's test T1 provably stays the grower's choice."""
        B = Xq.shape[0]
        out = np.zeros(B, dtype=bool)
        if not self.ok:
            return out
        # positions of x among each numeric column's cuts, and x's nominal values
        pos = np.empty((B, self.num.size), dtype=np.int64)
        for k, f in enumerate(self.num):
            pos[:, k] = np.searchsorted(self.thr[k], Xq[:, f], side="left")
        u = Xq[:, self.nom].astype(np.int64)
        cols = np.arange(self.nom.size)
        floor = max(float(min_gain), _EPS) + _MARGIN
        _, group = np.unique(D, axis=0, return_inverse=True)
        for g in np.unique(group):
            idx = np.flatnonzero(group == g)
            num_best, nom, t1 = self._arrays(D[idx[0]])
            n = idx.size
            g1 = np.full(n, -np.inf)
            side = np.zeros(n, dtype=np.int64)
            if self.t1_num >= 0:
                side = (Xq[idx, self.num[self.t1_num]]
                        > self.thr[self.t1_num, self.t1_cut]).astype(np.int64)
                g1 = np.where(side == 0, t1[0], t1[1])
            elif self.t1_nom >= 0:
                ut = u[idx, self.t1_nom]
                g1 = (np.where(ut == self.t1_value, t1[0], t1[1]) if self.binary
                      else t1[ut])
            # mirror twins tie with T1 only up to the last bit: trust them only where T1's
            # gain is far from a boundary of the grower's rounding to 10 decimals
            with np.errstate(invalid="ignore"):
                scaled = g1 * 10.0**10
                trust = np.abs(scaled - np.floor(scaled) - 0.5) > 1e-3
            variant = side * 2 + trust if num_best.shape[0] == 4 else np.zeros(n, np.int64)
            best = np.full(n, -np.inf)
            if self.num.size:
                best = num_best[variant[:, None], np.arange(self.num.size)[None, :],
                                pos[idx]].max(axis=1)
            if self.nom.size:
                ui = u[idx]
                if self.binary:
                    gin, top, top_g, second = nom
                    other = np.where(ui == top[None, :], second[None, :], top_g[None, :])
                    cand = np.maximum(gin[cols[None, :], ui], other)
                else:
                    cand = nom[0][cols[None, :], ui]
                best = np.maximum(best, cand.max(axis=1))
            out[idx] = (g1 - best > _MARGIN) & (g1 > floor)
        return out


# ------------------------------------------------------------------------------ the engine
def fingerprint(data: Dataset, learner: DecisionTree) -> str:
    """What a batched engine depends on: the training arrays and the learner."""
    import hashlib

    h = hashlib.sha256()
    for a in (data.X, data.y, data.weights):
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(str(a.shape).encode())
    h.update(repr([(a.kind, len(a.values or ())) for a in data.schema.attributes]
                  + [data.schema.n_classes]).encode())
    h.update(repr(sorted(learner.get_params().items())).encode())
    return h.hexdigest()


class HoldsSharedEngine:
    """Mixin for objects that use a batched engine: it is found lazily
    (:meth:`BatchEngine.shared`) and left out of their pickled state, so parallel workers
    look it up in their own process instead of receiving a copy with every chunk."""

    def _shared_engine(self, cls, data: Dataset, learner: DecisionTree,
                       wanted: bool = True):
        """``cls.shared(data, learner)``, or None when not ``wanted`` or not supported."""
        if not hasattr(self, "_batch"):
            self._batch = (cls.shared(data, learner)
                           if wanted and cls.supports(data, learner) else None)
        return self._batch

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_batch", None)  # large; found again in the worker's cache
        return state


class BatchEngine:
    """Trees on D ∪ {(x, c)} — or (D − {row r}) ∪ {(x, c)} — for many jobs (x, c[, r]).

    Every such tree is a path of nodes holding x plus subtrees without x hanging off it.
    A subtree without x depends only on its training rows, so it is grown once (its leaves
    only, :class:`LeafForest`, memoised by its rows) and shared; along the path the test is
    certified unchanged (module docstring, devices 1 and 2) or found by a batched exact
    search (device 3).

    Parameters
    ----------
    data : labelled training Dataset without missing values.
    learner : the DecisionTree giving the growing parameters (info_gain or gini, no
        collapse, cp = 0).
    """

    #: Trees on fewer training rows skip device (1) (an exact search costs less); tests
    #: set it to 0 to exercise the certificates on small data.
    cert_min_rows = 64
    #: Nodes lighter than this skip device (2): a batched exact search costs less there.
    rescore_min_rows = 64

    def __init__(self, data: Dataset, learner: DecisionTree) -> None:
        self.data = data
        self.learner = learner
        self.params = learner.grow_params
        self.gini = learner.criterion == "gini"
        self.n, self.K = data.n_samples, data.schema.n_classes
        self.y = data.y.astype(np.int64)
        self.w = data.weights.astype(float)
        self.finder = learner.make_finder(data, eligible=np.ones(self.n, dtype=bool))
        self.memo: dict[tuple, int] = {}
        self._scores: dict[int, NodeScores] = {}
        self._comp: Competitors | None = None
        self._t1 = None
        self._gains: tuple[np.ndarray, np.ndarray] | None = None
        # Leave-one-out subtracts row r's weight from base counts: exact for integer weights.
        self.integral = bool(np.all(self.w == np.round(self.w)) and self.w.sum() < 2.0**50)
        rows, w = np.arange(self.n), self.w
        self.base_sub = Sub(grow(self.finder, rows, w), self.n)  # the grower's own tree
        #: leaves (counts, n_rows) of the subtrees hanging off x's paths (Venn machine)
        self.leaf_sets: list[tuple[np.ndarray, np.ndarray] | None] = []

    @classmethod
    def shared(cls, data: Dataset, learner: DecisionTree) -> BatchEngine:
        """The engine for ``data`` and ``learner``, built once per process.

        Methods hold it out of their pickled state, so parallel workers find it here after
        their first chunk instead of rebuilding it (a tree and its certificate tables) for
        every chunk.
        """
        key = (cls.__name__, fingerprint(data, learner))
        if key not in _SHARED:
            if len(_SHARED) >= 2:
                _SHARED.pop(next(iter(_SHARED)))
            _SHARED[key] = cls(data, learner)
        return _SHARED[key]

    @staticmethod
    def supports(data: Dataset, learner: DecisionTree) -> bool:
        """Whether the batched engine applies (module docstring, limits)."""
        return (learner.criterion in ("info_gain", "gini") and not learner.collapse
                and learner.cp <= 0 and data.n_samples > 0 and not np.isnan(data.X).any()
                and bool((data.y >= 0).all()))

    def hanging_leaves(self, rows: np.ndarray, w: np.ndarray, depth: int,
                       forest: LeafForest) -> int:
        """Id in :attr:`leaf_sets` of the leaves of the tree grown on training ``rows``
        (sorted) at ``depth``, memoised; a new one is grown by ``forest``."""
        key = (rows.tobytes(), w.tobytes(), depth if self.params.max_depth is not None else 0)
        if key not in self.memo:
            self.memo[key] = len(self.leaf_sets)
            self.leaf_sets.append(None)
            forest.add(self.memo[key], rows, w, depth)
        return self.memo[key]

    def _competitors(self) -> Competitors | None:
        """The base tree's competitor table; None for small trees, where an exact
        (batched) search costs less than certifying."""
        if self._comp is None and self.n >= self.cert_min_rows:
            self._comp = Competitors(self.base_sub, self.data, self.params, self.gini)
        return self._comp

    def _node_scores(self, v: int) -> NodeScores:
        if v not in self._scores:
            self._scores[v] = NodeScores(self.base_sub, v, self.data, self.params,
                                         self.gini)
        return self._scores[v]

    def _cut_neighbours(self):
        """Per base node with a numeric test: the values either side of its cut and how
        many rows hold each (a leave-one-out row alone at one of them moves the cut)."""
        if self._t1 is None:
            base = self.base_sub
            t = base.tree
            nn = t.n_nodes
            lo, hi = np.full(nn, np.nan), np.full(nn, np.nan)
            n_lo, n_hi = np.zeros(nn), np.zeros(nn)
            for v in np.flatnonzero(~t.is_leaf & ~np.isnan(t.threshold)):
                vals = self.data.X[base.rows[v], t.feature[v]]
                below, above = vals[vals <= t.threshold[v]], vals[vals > t.threshold[v]]
                if below.size and above.size:
                    lo[v], hi[v] = below.max(), above.min()
                    n_lo[v], n_hi[v] = (below == lo[v]).sum(), (above == hi[v]).sum()
            self._t1 = (lo, hi, n_lo, n_hi)
        return self._t1

    # -------------------------------------------------------------- growing
    def grow_batch(self, Xq: np.ndarray, labels: np.ndarray, drop: np.ndarray | None = None,
                   *, paths_only: bool = True) -> list[dict]:
        """Follow x's path in the tree grown for every job i: x = ``Xq[i]`` with class
        ``labels[i]``, added to the training data — after removing training row
        ``drop[i]`` when that is >= 0 (leave-one-out; then ``Xq[i]`` is that row's values).

        x first walks the base tree, where each test is certified unchanged or searched
        exactly; from the first node whose test changes (``cut``, a base node) its path is
        grown explicitly, one batched exact search per step, and the subtrees without x
        hanging off it are grown (memoised, all together) when ``paths_only`` is false.
        Job i gets ``x_counts`` / ``x_inst`` (class counts and number of examples of x's
        leaf, x included), ``cut`` (-1: the structure did not change), ``base_leaf`` (x's
        leaf in the base tree when ``cut`` is -1) and ``hanging`` (ids in :attr:`leaf_sets`).
        """
        n, K = self.n, self.K
        Xq = np.asarray(Xq, dtype=float)
        J = Xq.shape[0]
        labels = np.asarray(labels, dtype=np.int64)
        drop = np.full(J, -1, dtype=np.int64) if drop is None else np.asarray(drop, np.int64)
        X_aug = np.vstack([self.data.X, Xq])
        y_aug = np.concatenate([self.y, labels])
        elig = np.concatenate([np.ones(n, dtype=bool), np.zeros(J, dtype=bool)])
        finder = self.learner.make_finder(self.data, eligible=elig, X=X_aug, y=y_aug)
        rank = value_ranks(finder)
        base = self.base_sub
        jobs = [{"cut": -1, "base_leaf": -1, "hanging": []} for _ in range(J)]
        node = np.zeros(J, dtype=np.int64)
        walking = np.ones(J, dtype=bool)
        explicit: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
        forest = None if paths_only else LeafForest(finder)
        while True:
            pending = self._walk(node, walking, labels, drop, Xq, jobs)
            candidates = [(job, u, self._with_x(u, n + job, int(drop[job])))
                          for job, u in pending]
            candidates += [(job, -1, rw) for job, rw in explicit.items()]
            explicit = {}
            items = []
            for (job, u, (rows, w, _)), cnt, stop in zip(
                    candidates, *node_counts_stops(finder, [c[2] for c in candidates]),
                    strict=True):
                if not stop:
                    items.append((job, u, rows, w, _))
                    continue
                if u >= 0:  # possible at a base node once a row is dropped
                    jobs[job]["base_leaf" if base.tree.is_leaf[u] else "cut"] = u
                self._end(jobs[job], cnt, rows.size)
            # the hanging subtrees grow a level in the same search as x's paths
            hanging = forest.open_nodes() if forest is not None else []
            if not items and not hanging:
                break
            splits = evaluate_nodes(finder, [(rows, w) for _, _, rows, w, _ in items] + hanging,
                                    rank)
            if forest is not None:
                forest.advance(splits[len(items):])
            for (job, u, rows, w, depth), split in zip(items, splits[:len(items)], strict=True):
                if u >= 0:  # a node of the base tree
                    leaf = bool(base.tree.is_leaf[u])
                    if not leaf and base.tree.has_test(u, split):
                        node[job] = base.children_for(np.array([u]), Xq[job:job + 1])[0]
                        walking[job] = True
                        continue
                    if split is None and leaf:
                        jobs[job]["base_leaf"] = u
                        cnt = np.bincount(y_aug[rows], weights=w, minlength=K).astype(float)
                        self._end(jobs[job], cnt, rows.size)
                        continue
                    jobs[job]["cut"] = u
                if split is None:  # explicit leaf, or a base test x made inadmissible
                    cnt = np.bincount(y_aug[rows], weights=w, minlength=K).astype(float)
                    self._end(jobs[job], cnt, rows.size)
                    continue
                # no missing values: each branch is the rows on its side; x is the last row
                vals = X_aug[rows, split.feature]
                if split.value_branch is None:
                    side = (vals > split.threshold).astype(np.int64)
                else:
                    side = split.value_branch[vals.astype(np.int64)]
                for b in range(split.n_branches):
                    sel = side == b
                    if b == side[-1]:
                        explicit[job] = (rows[sel], w[sel], depth + 1)
                    elif forest is not None and sel.any():
                        jobs[job]["hanging"].append(
                            self.hanging_leaves(rows[sel], w[sel], depth + 1, forest))
        if forest is not None:
            for i, leaves in enumerate(forest.leaves(len(self.leaf_sets))):
                if self.leaf_sets[i] is None:
                    self.leaf_sets[i] = leaves
        return jobs

    def _with_x(self, u: int, q: int, r: int) -> tuple[np.ndarray, np.ndarray, int]:
        base = self.base_sub
        rows, w = base.rows[u], base.w[u]
        if r >= 0:
            keep = rows != r
            rows, w = rows[keep], w[keep]
        return (np.concatenate([rows, [q]]), np.concatenate([w, [1.0]]), int(base.depth[u]))

    @staticmethod
    def _end(job: dict, counts: np.ndarray, n_inst: float) -> None:
        job["x_counts"] = np.asarray(counts, dtype=float)
        job["x_inst"] = float(n_inst)

    def _walk(self, node, walking, labels, drop, Xq, jobs):
        """Move walking jobs down certified tests of the base tree; returns the (job, node)
        pairs that need an exact search (jobs ending in a leaf that x cannot split are
        settled)."""
        params = self.params
        floor = max(float(params.min_gain), _EPS) + _MARGIN
        base = self.base_sub
        tree = base.tree
        comp = self._competitors()
        N, N_ig1 = self._node_weights_gains()
        eye = np.eye(self.K)
        pending = []
        while walking.any():
            act = np.flatnonzero(walking)
            v = node[act]
            j = labels[act]
            r = drop[act]
            dr = r >= 0
            yr = np.where(dr, self.y[np.maximum(r, 0)], 0)
            wr = np.where(dr, self.w[np.maximum(r, 0)], 0.0)
            # change of class weights at every node on the path: +x, -row r
            delta = eye[j] - wr[:, None] * eye[yr]
            leaf = tree.is_leaf[v]
            if leaf.any():
                a, vv = act[leaf], v[leaf]
                c = tree.counts[vv] + delta[leaf]
                # x's weight is not eligible; row r's was
                stop = stops(params, c, tree.counts[vv].sum(axis=1) - wr[leaf], base.depth[vv])
                if not self.integral:  # base counts minus r may round differently
                    stop &= ~dr[leaf]
                n_inst = base.n_inst[vv] + 1 - dr[leaf]
                for job, u, cc, ni, s in zip(a, vv, c, n_inst, stop, strict=True):
                    walking[job] = False
                    if s:
                        jobs[job]["base_leaf"] = int(u)
                        self._end(jobs[job], cc, ni)
                    else:
                        pending.append((int(job), int(u)))
            keep = ~leaf
            act, v, j, r, dr, yr, wr = act[keep], v[keep], j[keep], r[keep], dr[keep], \
                yr[keep], wr[keep]
            delta = delta[keep]
            if not act.size:
                break
            child = base.children_for(v, Xq[act])
            cb, cp = tree.counts[child], tree.counts[v]
            d_b = _impurity_last(cb + delta, self.gini) - _impurity_last(cb, self.gini)
            d_p = _impurity_last(cp + delta, self.gini) - _impurity_last(cp, self.gini)
            g1 = (N_ig1[v] + d_p - d_b) / (N[v] + delta.sum(axis=1))  # T1's gain with x
            ok = np.zeros(act.size, dtype=bool)
            if comp is not None:
                keys, group = np.unique(delta, axis=0, return_inverse=True)
                upper = np.empty(act.size)
                for g, d in enumerate(keys):
                    idx = np.flatnonzero(group.ravel() == g)
                    upper[idx] = comp.upper(d)[v[idx]]
                ok = (g1 - upper > _MARGIN) & (g1 > floor)
                # x replaces a row of its own class and values: the same class counts
                ok |= dr & (j == yr)
            safe = ~dr
            if dr.any():
                safe[dr] = self._drop_safe(v[dr], r[dr], child[dr], cp[dr] + delta[dr])
            ok &= safe
            again = np.flatnonzero(~ok & safe & (N[v] >= self.rescore_min_rows))
            if again.size and comp is not None:
                ok[again] = self._rescore(v[again], Xq[act[again]], delta[again])
            node[act[ok]] = child[ok]
            walking[act[~ok]] = False
            pending.extend((int(job), int(u)) for job, u in zip(act[~ok], v[~ok], strict=True))
        return pending

    def _node_weights_gains(self) -> tuple[np.ndarray, np.ndarray]:
        """Per base node: its weight N and N · the gain of its test T1 (computed once)."""
        if self._gains is None:
            tree = self.base_sub.tree
            e_all = _impurity_last(tree.counts, self.gini)
            nonroot = np.flatnonzero(tree.parent >= 0)
            child_e = np.bincount(tree.parent[nonroot], weights=e_all[nonroot],
                                  minlength=tree.n_nodes)
            self._gains = (tree.counts.sum(axis=1), e_all - child_e)
        return self._gains

    def _drop_safe(self, v, r, child, new_counts) -> np.ndarray:
        """Whether removing row r[i] (x takes its place) leaves node v[i]'s test T1 the same
        partition and admissible, and the node unstopped — what both certificates assume."""
        base = self.base_sub
        tree = base.tree
        ml = float(self.params.min_leaf)
        safe = np.full(v.size, self.integral) & (self.w[r] == 1.0)
        safe &= ~stops(self.params, new_counts, tree.counts[v].sum(axis=1) - 1.0,
                       base.depth[v])
        safe &= tree.counts[child].sum(axis=1) - 1.0 >= ml
        lo, hi, n_lo, n_hi = self._cut_neighbours()
        num = ~np.isnan(tree.threshold[v])
        val = self.data.X[r, tree.feature[v]]
        moved = ((val == lo[v]) & (n_lo[v] <= 1)) | ((val == hi[v]) & (n_hi[v] <= 1))
        safe &= ~(num & moved)
        return safe

    def _rescore(self, v: np.ndarray, Xq: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Device (2) for jobs at base nodes v whose bound failed."""
        out = np.zeros(v.size, dtype=bool)
        min_gain = float(self.params.min_gain)
        order = np.argsort(v, kind="stable")
        bounds = np.flatnonzero(np.r_[True, v[order][1:] != v[order][:-1], True])
        for a, b in itertools.pairwise(bounds):
            idx = order[a:b]
            out[idx] = self._node_scores(int(v[idx[0]])).certify(Xq[idx], delta[idx],
                                                                  min_gain)
        return out
