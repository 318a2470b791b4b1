"""Certificates and exact rescoring: proofs that x leaves a base node's test unchanged.

The tree grown on D (:class:`BaseTree`, with each node's rows) is walked by every (x, c). At
each of its nodes, :class:`Competitors` bounds every other test's gain for all nodes at once
(the competitor bound of :mod:`treecert.transductive.batch_engine`) and, where that bound is
not enough, :class:`~treecert.transductive.node_scores.NodeScores` rescores every candidate
for x's actual position (exact rescoring); :class:`CountRows` gives both the impurity after
a small class-weight change.
"""

from __future__ import annotations

import numpy as np

from treecert.data.discretize import _ln_func
from treecert.data.schema import Dataset
from treecert.transductive import budget
from treecert.transductive.node_search import rank_orders
from treecert.tree.arrays import Tree
from treecert.tree.impurity import _LN2, _impurity_last
from treecert.tree.segments import counted_unique, flat_nonzero, offsets, run_starts, unique_rows

#: Margin of the certificates, in gain units (the grower compares gains rounded to 1e-10).
_MARGIN = 1e-9


# ------------------------------------------------------------------------------ impurity
class CountRows:
    """Class-count rows (..., K) with their N·impurity, ready for N·impurity after a small
    class-weight change ``d`` (one or two non-zero entries) without touching every class.

    x ln x is Weka's ``lnFunc`` (0 for x <= 0; grow's ``_xlogx`` gives NaN below 0): a class
    change can push a count of the table's superset of candidates below zero."""

    def __init__(self, counts: np.ndarray, gini: bool, table: np.ndarray | None = None) -> None:
        self.counts = counts
        self.gini = gini
        self.table = table  # x ln x of 0, 1, 2, ... when every count is an integer below
        # integer counts (a table) sum exactly in any order: einsum's 4x faster short rows
        self.total = counts.sum(axis=-1) if table is None else np.einsum("...k->...", counts)
        if gini:
            self.squares = (counts * counts).sum(axis=-1)
            self.impurity = _impurity_last(counts, gini)
            return
        if table is not None:  # integer counts (below 2^26): cast once, kept for plus
            it, ic = self.total.astype(np.int32), counts.astype(np.int32)
            self._int = (it, table.take(it), ic)
            self.nats = self._int[1] - table.take(ic).sum(axis=-1)
        else:
            self.nats = self._lnf(self.total) - self._lnf(counts).sum(axis=-1)
        self.impurity = self.nats / _LN2

    def _lnf(self, x: np.ndarray, integral: bool = True) -> np.ndarray:
        """``_ln_func(x)``, read from the table for integer x (the same numbers)."""
        return table_xlogx(x, self.table if integral else None)

    def plus(self, d: np.ndarray) -> np.ndarray:
        """N·impurity of ``counts + d`` (entries pushed below zero count as zero)."""
        total = self.total + d.sum()
        nz = flat_nonzero(d)
        if self.gini:
            sq = self.squares
            for k in nz:
                c = self.counts[..., k]
                sq = sq + (2.0 * c * d[k] + d[k] * d[k])
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(total > 0, total - sq / total, 0.0)
        whole = bool(np.all(d == d.round()))
        if whole and self.table is not None:  # the table at the same integers, cast once
            it, lnf_t, ic = self._int
            t = self.table
            nats = self.nats + (t.take(np.maximum(it + int(d.sum()), 0)) - lnf_t)
            for k in nz:
                c = ic[..., k]
                nats = nats - (t.take(np.maximum(c + int(d[k]), 0)) - t.take(c))
            return nats / _LN2
        nats = self.nats + (self._lnf(total, whole) - self._lnf(self.total))
        for k in nz:
            c = self.counts[..., k]
            nats = nats - (self._lnf(c + d[k], whole) - self._lnf(c))
        return nats / _LN2


    def plus_many(self, D: np.ndarray) -> np.ndarray:
        """:meth:`plus` of every row of ``D``, stacked (len(D), ...): the same numbers, the
        same operations in the same order. Changes of one class (the +x of TPCE, K&K and
        Venn jobs: the K labels reaching a node) in whole-array operations, since one call
        per change costs more than its arithmetic on small tables; others row by row."""
        D = np.asarray(D, dtype=float)
        out = np.empty((len(D), *self.total.shape))
        nz = D != 0
        one = nz.sum(axis=1) == 1
        if not self.gini:  # the table path needs whole changes (as in plus)
            one &= np.all(D == D.round(), axis=1) & (self.table is not None)
        for i in flat_nonzero(~one):
            out[i] = self.plus(D[i])
        idx = flat_nonzero(one)
        if idx.size:
            k = nz[idx].argmax(axis=1)
            s = D[idx, k].reshape((-1,) + (1,) * self.total.ndim)  # = d.sum() exactly
            if self.gini:
                total = self.total + s
                c = np.moveaxis(self.counts[..., k], -1, 0)
                sq = self.squares + (2.0 * c * s + s * s)
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[idx] = np.where(total > 0, total - sq / total, 0.0)
            else:
                it, lnf_t, ic = self._int
                t, si = self.table, s.astype(np.int64)
                nats = self.nats + (t[np.maximum(it + si, 0)] - lnf_t)
                c = np.moveaxis(ic[..., k], -1, 0)
                nats = nats - (t[np.maximum(c + si, 0)] - t.take(c))
                out[idx] = nats / _LN2
        return out


def distinct_changes(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(D, axis=0, return_inverse=True)`` (inverse flattened) for class changes
    ``D`` (jobs, K). Changes that are all unit vectors e_c (TPCE, K&K and Venn jobs without
    a dropped row) are told apart by c — a bincount instead of a sort of rows, which costs
    more than the walk round that asks; others (leave-one-out swaps) by
    :func:`~treecert.tree.segments.unique_rows`."""
    D = np.asarray(D, dtype=float)
    K = D.shape[1]
    if D.shape[0]:
        c = D.argmax(axis=1)
        if np.array_equal(D, np.eye(K)[c]):
            keys, group = counted_unique(K - 1 - c, K)  # rows ascending: c descending
            return np.eye(K)[::-1][keys], group
    return unique_rows(D)


def table_xlogx(x, table: np.ndarray | None) -> np.ndarray:
    """``_ln_func(x)``, read from ``table`` (x ln x of 0, 1, 2, ...) when given: for
    integer-valued ``x``, a count pushed below 0 counting as 0 (the same numbers: a gather
    instead of a log)."""
    if table is None:
        return _ln_func(x)
    return table.take(np.maximum(x, 0).astype(np.intp))


def xlogx_table(w: np.ndarray) -> np.ndarray | None:
    """``_ln_func`` of 0, 1, ..., sum(w) + 2 when the weights ``w`` are integers (so are
    all class counts of their subsets), for :class:`CountRows`; else None."""
    total = float(w.sum())
    if not (np.all(w == np.round(w)) and np.all(w >= 0) and total < 2.0**26):
        return None
    return _ln_func(np.arange(int(total) + 3, dtype=float))


# ------------------------------------------------------------------------------ trees on D
class BaseTree:
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
        for v in flat_nonzero(self.tree.is_leaf):
            self.leaf_of_row[self.rows[v]] = v
        self.leaves = flat_nonzero(self.tree.is_leaf & (self.n_inst > 0))

    def children_for(self, v: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The child of internal node v[i] that row X[i] (no missing values) enters."""
        t = self.tree
        f = t.feature[v]
        vals = X[np.arange(v.size), f]
        thr = t.threshold[v]
        num = ~np.isnan(thr)
        b = np.zeros(v.size, dtype=np.int64)
        b[num] = vals[num] > thr[num]
        nom = flat_nonzero(~num)
        if nom.size:
            b[nom] = t.value_branch[t.value_branch_ptr[v[nom]] + vals[nom].astype(np.int64)]
        return t.children[t.children_ptr[v] + b]

    def paths(self, v: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The internal nodes on the paths of rows ``X[i]`` from ``v[i]`` down, distinct:
        every node a walk of them can reach."""
        on, rows = [np.empty(0, dtype=np.int64)], np.arange(v.size)
        while v.size:
            inner = ~self.tree.is_leaf[v]
            v, rows = v[inner], rows[inner]
            on.append(v)
            v = self.children_for(v, X[rows]) if v.size else v
        return np.unique(np.concatenate(on))


class Competitors:
    """Every admissible test of every internal node of a tree on D, other than the node's
    chosen test T1, as class counts — so that the best of them with one instance's class
    change ``d`` added on whichever side suits it best (:meth:`upper_many`) takes a few
    vectorised operations for many nodes at once (the competitor bound of
    :mod:`treecert.transductive.batch_engine`).

    Admissible: both sides of a numeric cut, or two values of a multiway test, or the value
    and the rest of a binary test, hold at least ``min_leaf`` weight (the grower's rules;
    x's weight never counts, so x makes no test admissible, and removing a row can only
    make fewer tests admissible).

    Built for the nodes walked, as they are walked: a node's candidates are tabled the
    first time a job reaches it, with the other nodes new in that round, as a *group*
    (one test row's paths hold about 2n of the tree's n · depth entries, so a first
    prediction does not pay for every node's table; 100k rows: BENCHMARKS.md).

    Bounded memory: the candidates of all nodes (n · depth · p of them) are never held at
    once. A group holds at most :data:`~treecert.transductive.budget.CHUNK_CELLS` rows ×
    classes (more new nodes make more groups) and is scored for a whole set of changes in
    one pass (:meth:`upper_many`); the groups' tables stay cached while they fit in
    :data:`~treecert.transductive.budget.COMPETITOR_BYTES` / 2 (then later passes rebuild
    them), and the per-change bounds, (internal nodes,) each, in the other half. A change
    of a class (TPCE, K&K, Venn) brings the bounds of all K unit changes in the same
    pass; a leave-one-out swap e_c − w·e_y those of every c.
    """

    def __init__(self, sub: BaseTree, data: Dataset, params, gini: bool,
                 rank: dict | None = None) -> None:
        tree = sub.tree
        self.sub, self.data, self.params, self.gini = sub, data, params, gini
        self.y = data.y.astype(np.int64)
        self.K = data.schema.n_classes
        self.n_nodes = tree.n_nodes
        self.internal = internal = flat_nonzero(~tree.is_leaf)
        self.position = np.full(tree.n_nodes, -1, dtype=np.int64)  # node -> its place in internal
        self.position[internal] = np.arange(internal.size)
        self.N = tree.counts.sum(axis=1)
        self.counts = tree.counts[internal]
        self.rank = {} if rank is None else rank  # numeric column -> stable ranks over D
        self.table = None if gini else xlogx_table(np.asarray(data.weights, float))
        self.parent = CountRows(self.counts, gini, self.table)
        self.lens = np.array([sub.rows[v].size for v in internal], dtype=np.int64)
        self.group = np.full(internal.size, -1, dtype=np.int64)  # place -> its group
        self.groups: list[np.ndarray] = []  # group -> its places, ascending
        self._tables = budget.ByteLRU(budget.COMPETITOR_BYTES // 2)
        #: change -> (bounds over all places, NaN until their group is scored; groups done)
        self._bounds = budget.ByteLRU(budget.COMPETITOR_BYTES // 2)

    def release(self) -> None:
        """Empty the kept tables and bounds (rebuilt when next needed)."""
        self._tables.clear()
        self._bounds.clear()

    def _grouped(self, places: np.ndarray) -> np.ndarray:
        """The groups holding ``places`` (ascending, distinct), the new places put in new
        groups of consecutive places within the budget, one place at least."""
        new = places[self.group[places] < 0]
        if new.size:
            cells = np.cumsum(self.lens[new]) * max(self.K, 1)
            start = 0
            while start < new.size:
                before = cells[start - 1] if start else 0
                stop = max(start + 1, int(np.searchsorted(cells, before + budget.CHUNK_CELLS,
                                                          side="right")))
                self.group[new[start:stop]] = len(self.groups)
                self.groups.append(new[start:stop])
                start = stop
        return np.unique(self.group[places])

    def _column_rank(self, f: int) -> np.ndarray:
        if f not in self.rank:
            r = np.empty(self.data.n_samples, dtype=np.int64)
            r[np.argsort(self.data.X[:, f], kind="stable")] = np.arange(r.size)
            self.rank[f] = r
        return self.rank[f]

    def _table(self, c: int):
        """The candidates of group ``c`` of the internal nodes: numeric cuts (local node,
        left and right counts), multiway and binary nominal tests."""
        got = self._tables.get(c)
        if got is not None:
            return got
        places = self.groups[c]
        sub, tree, X, y, K = self.sub, self.sub.tree, self.data.X, self.y, self.K
        params, gini = self.params, self.gini
        ml = float(params.min_leaf)
        internal = self.internal[places]
        G = internal.size
        pc = self.counts[places]
        lens = self.lens[places]
        rows = np.concatenate([sub.rows[v] for v in internal])
        w = np.concatenate([sub.w[v] for v in internal])
        seg = np.repeat(np.arange(G), lens)
        feat = tree.feature[internal]
        thr = tree.threshold[internal]
        ends = np.cumsum(lens) - 1  # each node's last entry
        tot = pc.sum(axis=1)
        cuts, multi, binary = [], [], []

        bounds = offsets(lens)

        def by_rank(f: int) -> np.ndarray:
            """Entries sorted by (node, rank of their row in column f)."""
            return rank_orders(self._column_rank(f)[None, :], rows, bounds, seg)[0]

        for f, attr in enumerate(self.data.schema.attributes):
            vals = X[rows, f]
            mine = feat == f
            if not attr.is_nominal:
                # rows ascend within a node: (node, rank) is the stable (node, value) sort
                order = by_rank(f)
                sv, sg, ys, ws = vals[order], seg[order], y[rows[order]], w[order]
                cw = np.cumsum(ws)
                lw = cw - np.concatenate(([0.0], cw[ends[:-1]]))[sg]  # weight left of each cut
                ok = np.zeros(rows.size, dtype=bool)
                ok[:-1] = (sg[:-1] == sg[1:]) & (sv[:-1] < sv[1:])
                ok &= (lw >= ml) & (tot[sg] - lw >= ml)
                if mine.any():  # leave out the chosen cut itself
                    t = thr[sg]
                    nxt = np.concatenate((sv[1:], [np.inf]))
                    ok &= ~(mine[sg] & (sv <= t) & (t < nxt))
                # Fayyad & Irani: between two candidate cuts, moving one row of the same
                # class across each, both gains (d left, d right) are convex along the
                # way: the middle cut never beats both neighbours, so the maximum is kept
                skip = np.zeros_like(ok)
                skip[1:-1] = ok[:-2] & ok[1:-1] & ok[2:] & (ys[1:-1] == ys[2:])
                i = flat_nonzero(ok & ~skip)
                if i.size:
                    # class counts left of the kept cuts: rows summed in blocks ending at
                    # the kept cuts and at node ends, cumulated, less the node's start
                    stop = np.zeros(rows.size, dtype=bool)
                    stop[i] = True
                    stop[ends] = True
                    blk = np.cumsum(stop) - stop  # block of each row
                    B = int(stop.sum())
                    cum = np.cumsum(np.bincount(blk * K + ys, weights=ws,
                                                minlength=B * K).reshape(B, K), axis=0)
                    at_end = flat_nonzero(stop)  # block b ends at row at_end[b]
                    first = np.concatenate(([0], at_end.searchsorted(ends[:-1]) + 1))  # per node
                    base = np.vstack([np.zeros((1, K)), cum])[first]  # counts before node
                    bi = np.searchsorted(at_end, i)
                    left = cum[bi] - base[sg[i]]
                    cuts.append((sg[i], left, pc[sg[i]] - left))
                continue
            V = len(attr.values)
            cnt = np.bincount((seg * V + vals.astype(np.int64)) * K + y[rows], weights=w,
                              minlength=G * V * K).reshape(G, V, K)
            bw = cnt.sum(axis=2)
            if not params.binary_splits:
                multi.append((CountRows(cnt, gini, self.table),
                              ((bw >= ml).sum(axis=1) >= 2) & ~mine))
                continue
            okv = (bw >= ml) & (pc.sum(axis=1)[:, None] - bw >= ml)
            for g in flat_nonzero(mine):
                v = internal[g]
                vb = tree.value_branch[tree.value_branch_ptr[v]:tree.value_branch_ptr[v + 1]]
                okv[g, vb == 0] = False
            binary.append((CountRows(cnt, gini, self.table),
                           CountRows(pc[:, None, :] - cnt, gini, self.table), okv))
        cuts = [(g, CountRows(left, gini, self.table), CountRows(right, gini, self.table))
                for g, left, right in cuts]  # per column: no copy into one array
        table = (cuts, multi, binary)
        self._tables.put(c, table, _nbytes(table))
        return table

    def table_paths(self, D: np.ndarray, v: np.ndarray, X: np.ndarray) -> None:
        """The bounds of job i's change ``D[i]`` at every internal node on the path of row
        ``X[i]`` from node ``v[i]`` (:meth:`BaseTree.paths`: all a walk of them can reach),
        tabled in one pass at the walk's start; nothing once every node has its table."""
        if v.size and (self.group < 0).any():
            self._ensure([tuple(d.tolist()) for d in distinct_changes(D)[0]],
                         self.sub.paths(v, X))

    def upper_many(self, D: np.ndarray, nodes: np.ndarray | None = None) -> np.ndarray:
        """Per row d of ``D`` (changes) and node: the largest gain of any test other than T1
        once d is added to the node and to the branch that favours that test most (-inf:
        no other test, NaN: leaves and nodes not asked for), (len(D), nodes); ``nodes``:
        the nodes asked for (None: all); unknown bounds found in one pass."""
        keys = [tuple(d.tolist()) for d in D]
        groups = self._ensure(keys, nodes)
        out = np.full((len(keys), self.n_nodes), np.nan)
        for i, k in enumerate(keys):
            if self._lacking(k, groups):  # evicted by its own family: compute it alone
                self._fill([k], sorted(self._lacking(k, groups)))
            got = self._bounds.get(k)
            if got is not None:  # None: no internal node asked for
                out[i, self.internal] = got[0]
        return out

    def _ensure(self, keys: list[tuple], nodes: np.ndarray | None) -> set:
        """Score the changes ``keys`` at the groups of ``nodes`` (None: all) where not yet
        scored, with their kin (:meth:`_with_family`), in one pass; returns those groups."""
        places = (np.arange(self.internal.size) if nodes is None else
                  np.unique(self.position[np.asarray(nodes, dtype=np.int64)]))
        groups = set(self._grouped(places[places >= 0]).tolist())
        missing = list(dict.fromkeys(k for k in keys if self._lacking(k, groups)))
        if missing:
            self._fill(self._with_family(missing),
                       sorted(set().union(*(self._lacking(k, groups) for k in missing))))
        return groups

    def _lacking(self, key: tuple, groups: set) -> set:
        """The groups among ``groups`` whose bounds of the change ``key`` are not held."""
        got = self._bounds.get(key)
        return groups if got is None else groups - got[1]

    def _with_family(self, missing: list[tuple]) -> list[tuple]:
        """The missing changes and their kin, scored in the same pass: all K unit changes
        for a unit change, all e_c − w·e_y (same y, w) for a leave-one-out swap."""
        K, out = self.K, dict.fromkeys(missing)
        eye = np.eye(K)
        for k in missing:
            d = np.array(k)
            neg = flat_nonzero(d < 0)
            if d.sum() == 1.0 and neg.size == 0:
                kin = eye
            elif neg.size == 1:
                kin = eye + d[neg[0]] * eye[neg[0]][None, :]
            else:
                continue
            for row in kin:
                out.setdefault(tuple(row.tolist()), None)
        fits = max(1, budget.COMPETITOR_BYTES // 2 // max(1, 8 * self.internal.size))
        kin = [k for k in out if k not in self._bounds and k not in missing]
        return missing + kin[:max(0, fits - len(missing))]

    def _fill(self, keys: list[tuple], groups: list[int]) -> None:
        """The bounds of ``keys`` (changes) at the places of ``groups``, up to K changes at
        a time in whole-array operations (:meth:`CountRows.plus_many`: the numbers of one
        change at a time)."""
        G = self.internal.size
        D_all = np.array(keys, dtype=float).reshape(len(keys), self.K)
        have = [self._bounds.get(k) for k in keys]
        bounds = [np.full(G, np.nan) if h is None else h[0] for h in have]
        done = [set() if h is None else h[1] for h in have]
        step = max(self.K, 1)
        steps = []  # (rows of best, changes, N with each, parents' n·impurity with each)
        for lo in range(0, len(keys), step):
            D = D_all[lo:lo + step]
            steps.append((slice(lo, lo + step), D,
                          self.N[self.internal][None, :] + D.sum(axis=1)[:, None],
                          self.parent.plus_many(D)))
        for c in groups:
            places = self.groups[c]
            best = np.full((len(keys), places.size), -np.inf)
            cuts, multi, binary = self._table(c)
            # g ascends: a maximum per run of one node's cuts
            firsts = [flat_nonzero(run_starts(g)) for g, _, _ in cuts]
            for at, D, Np, Ep in steps:
                ep, np_, b = Ep[:, places], Np[:, places], best[at]
                for (g, left, right), first in zip(cuts, firsts, strict=True):
                    gl = (ep[:, g] - left.plus_many(D) - right.impurity) / np_[:, g]
                    gr = (ep[:, g] - left.impurity - right.plus_many(D)) / np_[:, g]
                    top = np.maximum.reduceat(np.maximum(gl, gr), first, axis=1)
                    b[:, g[first]] = np.maximum(b[:, g[first]], top)
                for cnt, ok in multi:
                    e_v = cnt.impurity
                    worst = (cnt.plus_many(D) - e_v).min(axis=2)  # x's best value
                    gains = (ep - e_v.sum(axis=1) - worst) / np_
                    b[:] = np.where(ok, np.maximum(b, gains), b)
                for cnt, rest, okv in binary:
                    gin = ep[:, :, None] - cnt.plus_many(D) - rest.impurity
                    gout = ep[:, :, None] - cnt.impurity - rest.plus_many(D)
                    gains = np.maximum(gin, gout) / np_[:, :, None]
                    b[:] = np.maximum(b, np.where(okv, gains, -np.inf).max(axis=2))
            for b, got, gone in zip(bounds, best, done, strict=True):
                b[places] = got
                gone.add(c)
        for k, b, gone in zip(keys, bounds, done, strict=True):
            self._bounds.put(k, (b, gone), b.nbytes)


def _nbytes(obj) -> int:
    """Bytes of the arrays in nested tuples / lists / CountRows."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, CountRows):  # the x ln x table is shared, counted by its owner
        return _nbytes(tuple(v for k, v in vars(obj).items() if k != "table"))
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(o) for o in obj.values())
    return 0
