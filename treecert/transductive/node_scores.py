"""Exact rescoring of one base node's candidate tests for x's position (the step of
:mod:`treecert.transductive.batch_engine` after the competitor bound of
:mod:`treecert.transductive.certificates`, where that bound is not enough)."""

from __future__ import annotations

import numpy as np

from treecert.data.schema import Dataset
from treecert.transductive.certificates import (
    _MARGIN,
    BaseTree,
    CountRows,
    _nbytes,
    distinct_changes,
)
from treecert.transductive.node_search import rank_orders
from treecert.tree.impurity import _impurity_last, _lastsum
from treecert.tree.segments import flat_nonzero, offsets
from treecert.tree.split_search import _EPS

#: Changes × (cuts + values) × classes rescored in one pass at most (bounded memory: a
#: root node of 100k distinct values scores one change at a time, as before).
RESCORE_CELLS = 2**21


def _value_order(vals: np.ndarray, rows: np.ndarray, num: list, rank: dict) -> np.ndarray:
    """``np.argsort(vals, axis=0, kind="stable")`` for a node's rows (ascending) in the
    numeric columns ``num``, read from the columns' stable ranks over D (``rank``, column ->
    ranks, when known) by :func:`~treecert.transductive.node_search.rank_orders`: rows
    ascend, so their (value, row) order is the stable sort's (value, position), and ranks
    are distinct integers (a mark in O(n) for a large node, an integer sort for a small
    one: about a third of a stable sort of the values)."""
    if not all(f in rank for f in num):
        return np.argsort(vals, axis=0, kind="stable")
    m = rows.size
    return rank_orders([rank[f] for f in num], rows, np.array([0, m]),
                       np.zeros(m, dtype=np.int64)).T


def cut_places(valid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every admissible cut of ``valid`` (cuts × columns), listed column by column and
    ascending within each: its column, its cut and its place among its column's admissible
    cuts — where the cut tables (columns × places, padded) keep it. One gather for all
    columns, not a loop of calls per column."""
    col, cut = np.divmod(flat_nonzero(valid.T.ravel()), max(valid.shape[0], 1))
    place = np.arange(col.size) - offsets(np.bincount(col, minlength=valid.shape[1]))[col]
    return col, cut, place


class NodeScores:
    """Every candidate test of one base node, as class counts, ready to be rescored with one
    instance added (or swapped for one of the node's rows) — exact rescoring
    in :mod:`treecert.transductive.batch_engine`. Built once per node, shared by every (x, c)
    that needs it; the class changes of one call (the K labels of the jobs reaching the node
    in one walk round) are rescored together, in whole-array operations over a leading axis
    of changes (:meth:`_arrays`): these tables are small (columns × cuts), so one pass per
    change was mostly call overhead."""

    def __init__(self, sub: BaseTree, v: int, data: Dataset, params, gini: bool,
                 table: np.ndarray | None = None, rank: dict | None = None) -> None:
        tree = sub.tree
        self.table = table  # x ln x of integer counts (certificates.xlogx_table)
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
            vals = X.take(rows, axis=0)
            if len(num) < X.shape[1]:
                vals = vals[:, num]
            order = _value_order(vals, rows, num, rank or {})
            sv = np.take_along_axis(vals, order, axis=0)
            L = np.cumsum(onehot.take(order, axis=0), axis=0)[:-1]  # (m-1, F, K): left of cut i
            Lw = _lastsum(L)
            valid = (sv[:-1] < sv[1:]) & (Lw >= ml) & (self.N - Lw >= ml)
            if params.threshold == "lower":
                thr = sv[:-1].copy()
            else:
                thr = (sv[:-1] + sv[1:]) / 2.0
            thr = np.where(thr < sv[1:], thr, sv[:-1])
            F = len(num)
            col, cut, place = cut_places(valid)  # compacted to each column's first places
            C = int(place.max()) + 1 if place.size else 1
            self.thr = np.full((F, C), np.inf)
            self.L = np.zeros((F, C, K))
            self.cut_ok = np.zeros((F, C), dtype=bool)
            self.thr[col, place] = thr[cut, col]
            self.L[col, place] = L[cut, col]
            self.cut_ok[col, place] = True
            self.twin = np.zeros((F, C), dtype=bool)
            self.mirror = self.twin
            if f1 in num:
                k = num.index(f1)
                hit = flat_nonzero(self.cut_ok[k] & (self.thr[k] == t1))
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
                    # (a table exists only for integer weights: no second look at them)
                    if table is not None or np.all(w == np.round(w)):
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
            self.t1_value = int(flat_nonzero(vb == 0)[0]) if self.binary else -1
        self._memo: dict[tuple, tuple] = {}
        self._rows = self._bytes = None  # bytes: counted once, then per change added

    def nbytes(self) -> int:
        """Bytes held: tables and memoised arrays per change (not the shared x ln x table)."""
        if self._bytes is None:
            self._bytes = _nbytes(tuple(v for k, v in vars(self).items() if k != "table"))
        return self._bytes

    def _count_rows(self) -> tuple:
        if self._rows is None:
            t = self.table
            nominal = self.nom.size > 0  # else no nominal rows to score (_score)
            self._rows = (CountRows(self.L, self.gini, t),
                          CountRows(self.P - self.L, self.gini, t),
                          CountRows(self.cnt, self.gini, t) if nominal else None,
                          CountRows(self.P - self.cnt, self.gini, t) if nominal else None)
            if self._bytes is not None:  # counted: add the count rows alone
                self._bytes += _nbytes(self._rows)
        return self._rows

    def _arrays(self, keys: list[tuple]) -> list[np.ndarray]:
        """For the class changes ``keys``, stacked on a first axis: numeric maxima over the
        cuts below / above x per column (G, variants, F, C+1), nominal gains per value and
        T1's gains (:meth:`_score`); memoised per change, unknown changes scored together
        in passes of at most :data:`RESCORE_CELLS`."""
        missing = [k for k in dict.fromkeys(keys) if k not in self._memo]
        if missing:
            K = max(self.K, 1)
            per = max(1, RESCORE_CELLS // max(1, (self.L[..., 0].size + self.cnt[..., 0].size)
                                              * (K + 8)))
            for lo in range(0, len(missing), per):
                part = missing[lo:lo + per]
                parts = self._score(np.array(part, dtype=float))
                for i, k in enumerate(part):
                    self._memo[k] = tuple(p[i] for p in parts)
                if self._bytes is not None:
                    self._bytes += _nbytes(parts)
        got = [self._memo[k] for k in keys]
        return [np.stack(col) for col in zip(*got, strict=True)]

    def _score(self, D: np.ndarray) -> list[np.ndarray]:
        """Gains of every candidate with each row of ``D`` (class-weight change) added to x's
        side, T1 taken out: numeric maxima over the cuts below / above x per column, in four
        variants [x left or right of T1][mirror twins trusted or not]; nominal gains per
        value: [num_best, *nominal, *T1's gains], each with a first axis of changes. The
        operations of one change at a time, elementwise in the same order: the same bits."""
        L, R, cnt, rest = self._count_rows()
        G = D.shape[0]
        Np = (self.N + D.sum(axis=1))[:, None, None]  # few small integers: sums exact
        Ep = _impurity_last(self.P + D, self.gini)[:, None, None]
        GL = (Ep - L.plus_many(D) - R.impurity) / Np
        GR = (Ep - L.impurity - R.plus_many(D)) / Np
        GL = np.where(self.cut_ok, GL, -np.inf)
        GR = np.where(self.cut_ok, GR, -np.inf)
        t1 = [np.full(G, -np.inf), np.full(G, -np.inf)]
        if self.t1_num >= 0:
            k, c = self.t1_num, self.t1_cut
            t1 = [GL[:, k, c].copy(), GR[:, k, c].copy()]
            GL[:, k, c] = GR[:, k, c] = -np.inf
        ninf = np.full((G, GL.shape[1], 1), -np.inf)
        no = np.zeros_like(self.twin)

        # variant 2·side + mirror; side 0 = x left of T1. Twins with x on the same side as
        # in T1 and (when trusted) mirror twins with x on the opposite side are no threat.
        def best_other(gr, gl):  # (G, F, C+1): best cut below x (x right) or above x
            below = np.concatenate([ninf, np.maximum.accumulate(gr, axis=2)], axis=2)
            above = np.concatenate(
                [np.maximum.accumulate(gl[:, :, ::-1], axis=2)[:, :, ::-1], ninf], axis=2)
            return np.maximum(below, above)

        if self.twin.any() or self.mirror.any():
            variants = []
            for side in (0, 1):
                for mirror in (no, self.mirror):
                    b_mask = (self.twin if side else no) | (mirror if side == 0 else no)
                    a_mask = (self.twin if side == 0 else no) | (mirror if side else no)
                    variants.append(best_other(np.where(b_mask, -np.inf, GR),
                                               np.where(a_mask, -np.inf, GL)))
            num_best = np.stack(variants, axis=1)  # (G, 4, F, C+1)
        else:
            num_best = best_other(GR, GL)[:, None]  # one variant serves all
        if cnt is None:  # no nominal columns: their (empty) arrays, as below
            V = self.cnt.shape[1]
            if self.binary:
                return [num_best, np.empty((G, 0, V)), np.empty((G, 0), np.int64),
                        np.empty((G, 0)), np.empty((G, 0)), *t1]
            return [num_best, np.empty((G, 0, V)), *t1]
        # nominal: gain with x's value ``u`` per (change, column, u)
        e_v = cnt.impurity  # (Fn, V)
        e_vd = cnt.plus_many(D)
        if self.binary:
            gin = np.where(self.val_ok, (Ep - e_vd - rest.impurity) / Np, -np.inf)
            gout = np.where(self.val_ok, (Ep - e_v - rest.plus_many(D)) / Np, -np.inf)
            if self.t1_nom >= 0:
                j, s1 = self.t1_nom, self.t1_value
                t1 = [gin[:, j, s1].copy(), gout[:, j, s1].copy()]
                gin[:, j, s1] = gout[:, j, s1] = -np.inf
            # best over the other values s != u (x on the rest side): top two of gout
            order = np.argsort(-gout, axis=2, kind="stable")
            top = order[:, :, 0]
            top_g = np.take_along_axis(gout, order[:, :, :1], axis=2)[:, :, 0]
            second = (np.take_along_axis(gout, order[:, :, 1:2], axis=2)[:, :, 0]
                      if gout.shape[2] > 1 else np.full(gout.shape[:2], -np.inf))
            nom = [gin, top, top_g, second]
        else:
            g = (Ep - e_v.sum(axis=1, keepdims=True) - (e_vd - e_v)) / Np
            g = np.where(self.val_ok, g, -np.inf)
            if self.t1_nom >= 0:
                t1 = [g[:, self.t1_nom].copy()]
                g[:, self.t1_nom] = -np.inf
            nom = [g]
        return [num_best, *nom, *t1]

    def certify(self, Xq: np.ndarray, D: np.ndarray, min_gain: float) -> np.ndarray:
        """For rows ``Xq`` entering the node with class-weight changes ``D`` (one row per
        job): True where the node's test T1 provably stays the grower's choice. All jobs
        at once: their distinct changes rescored in one pass (:meth:`_arrays`), each job
        reading its change's row."""
        B = Xq.shape[0]
        if not self.ok:
            return np.zeros(B, dtype=bool)
        # positions of x among each numeric column's cuts, and x's nominal values
        pos = np.empty((B, self.num.size), dtype=np.int64)
        for k, f in enumerate(self.num):
            pos[:, k] = self.thr[k].searchsorted(Xq[:, f], side="left")
        u = Xq[:, self.nom].astype(np.int64)
        cols = np.arange(self.nom.size)[None, :]
        floor = max(float(min_gain), _EPS) + _MARGIN
        keys, gi = distinct_changes(D)
        arrays = self._arrays([tuple(k.tolist()) for k in keys])
        num_best = arrays[0]
        if self.binary:
            nom, t1 = arrays[1:5], arrays[5:]
        else:
            nom, t1 = arrays[1:2], arrays[2:]
        g1 = np.full(B, -np.inf)
        side = np.zeros(B, dtype=np.int64)
        if self.t1_num >= 0:
            side = (Xq[:, self.num[self.t1_num]]
                    > self.thr[self.t1_num, self.t1_cut]).astype(np.int64)
            g1 = np.where(side == 0, t1[0][gi], t1[1][gi])
        elif self.t1_nom >= 0:
            ut = u[:, self.t1_nom]
            g1 = (np.where(ut == self.t1_value, t1[0][gi], t1[1][gi]) if self.binary
                  else t1[0][gi, ut])
        # mirror twins tie with T1 only up to the last bit: trust them only where T1's
        # gain is far from a boundary of the grower's rounding to 10 decimals
        with np.errstate(invalid="ignore"):
            scaled = g1 * 10.0**10
            trust = np.abs(scaled - np.floor(scaled) - 0.5) > 1e-3
        variant = side * 2 + trust if num_best.shape[1] == 4 else np.zeros(B, np.int64)
        best = np.full(B, -np.inf)
        if self.num.size:
            best = num_best[gi[:, None], variant[:, None], np.arange(self.num.size)[None, :],
                            pos].max(axis=1)
        if self.nom.size:
            if self.binary:
                gin, top, top_g, second = nom
                other = np.where(u == top[gi], second[gi], top_g[gi])
                cand = np.maximum(gin[gi[:, None], cols, u], other)
            else:
                cand = nom[0][gi[:, None], cols, u]
            best = np.maximum(best, cand.max(axis=1))
        return (g1 - best > _MARGIN) & (g1 > floor)
