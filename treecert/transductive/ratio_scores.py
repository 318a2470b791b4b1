"""Gain-ratio certificates: proof that x leaves a base node's test unchanged under J48's
selection rule.

With ``gain_ratio`` the chosen test is not simply the best-scoring one
(:mod:`treecert.tree.split_search`, ``C45ModelSelection``): each numeric column offers the
cut of largest *gain*, MDL-corrected by log2(#cuts)/N (Quinlan 1996) and kept only if still
at least Weka's 1e-6; among the candidates whose gain is at least the average gain (minus
1e-3) the largest gain *ratio* wins. Adding x (class c, weight 1, ineligible) moves every one
of these numbers a little, and the average as well, so a bound on the best competitor alone
(the competitor bound of :mod:`treecert.transductive.batch_engine`) decides nothing. Instead every
candidate of the node is rescored for x's actual position — the analogue of exact rescoring —
and the whole selection is replayed on *intervals*:

* On complete data x changes no candidate's admissibility and no cut's partition of the
  training rows: thresholds come from eligible values only, the minimum branch weight
  ``clamp(0.1·N/K, min_leaf, 25)`` and the admissibility checks use eligible weight, and
  of the two cut positions either side of x in a column exactly one is valid (the one
  that puts x on its threshold's side), so the number of cuts in J48's MDL term is the
  base node's too. What changes is each candidate's class counts (+1 in x's class on x's
  branch) and the node's total weight (N + 1): gain, split information and ratio of every
  candidate with x are computed directly from the base node's counts.
* The recomputed numbers differ from the grower's by float rounding (~1e-13 here); every
  one is widened to an interval of ±``_TOL`` = 1e-9, and a step of the selection is taken
  only where the intervals decide it: the cut a column offers (or, for a binary nominal
  test, the value), its sign after the MDL correction, the average gain, membership of the
  pool, and T1's lead in gain ratio. The grower rounds scores to 10 decimals; a lead of
  more than 1e-9 survives that rounding. Anything undecided (near ties, a gain near the
  average threshold) fails the certificate and the node is searched exactly.

* A column's cuts are sorted by threshold, so x is right of a prefix of them and left of
  the rest: per class change, the largest and second largest gain of every prefix (x
  right) and suffix (x left) are tabled once, and each x finds its column's best cut and
  whether another is within 2·``_TOL`` of it in O(log C) — the same numbers and
  comparisons as scoring every cut, which is done only for the rare rows where a column
  has several near-best cuts (:meth:`RatioScores._numeric_by_prefix`).

Leave-one-out swaps (a training row removed) change eligible weights, hence the minimum
branch weight and the MDL cut counts: they are not certified here (exact searches).
"""

from __future__ import annotations

import numpy as np

from treecert.data.schema import Dataset
from treecert.transductive.certificates import table_xlogx
from treecert.transductive.node_scores import _value_order, cut_places
from treecert.tree.impurity import _LN2, _impurity_last, _xlogx
from treecert.tree.numeric_search import MIN_NUMERIC_GAIN
from treecert.tree.segments import flat_nonzero, unique_rows

#: Half-width of the interval around every recomputed gain / ratio (float error ≪ this).
_TOL = 1e-9

#: Rows × numeric columns × classes per step of the cut tables' build (~16 MB arrays).
_TABLE_ELEMENTS = 2**21


def _si(w_a: np.ndarray, w_b: np.ndarray, total: float, xlogx=_xlogx) -> np.ndarray:
    """Split information (bits) of two branches of weights ``w_a``, ``w_b``."""
    return (xlogx(total) - xlogx(w_a) - xlogx(w_b)) / _LN2 / total


#: Rescore numeric columns by prefix and suffix maxima where they decide
#: (:meth:`RatioScores._numeric_by_prefix`); False: every cut of every column (for tests).
_PREFIX = True


def _top_two(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``A`` (F, C) and prefix length s = 0..C: the largest entry of
    ``A[:, :s]``, the first position reaching it (-1 if none is above -inf) and the
    second largest entry counting repeats (-inf if none). The second largest of a prefix
    is the largest of its entries other than its last record (an entry above every entry
    before it): a running maximum of the entries with each record replaced by the maximum
    before it."""
    F, C = A.shape
    best = np.full((F, C + 1), -np.inf)
    np.maximum.accumulate(A, axis=1, out=best[:, 1:])
    record = A > best[:, :-1]
    at = np.full((F, C + 1), -1, dtype=np.int64)
    np.maximum.accumulate(np.where(record, np.arange(C), -1), axis=1, out=at[:, 1:])
    second = np.full((F, C + 1), -np.inf)
    np.maximum.accumulate(np.where(record, best[:, :-1], A), axis=1, out=second[:, 1:])
    return best, at, second


def _ratio(g: np.ndarray, si: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(si > 0, g / si, 0.0)


class RatioScores:
    """Every candidate test of one base node under ``gain_ratio``, ready to be rescored with
    x added (module docstring). Built once per node, shared by every (x, c) reaching it.

    ``ok`` is False where the node cannot be certified at all (T1 not found among the
    candidates, or a midpoint threshold that rounds onto the upper value).
    """

    def __init__(self, sub, v: int, data: Dataset, params, finder,
                 rank: dict | None = None) -> None:
        tree = sub.tree
        rows, w = sub.rows[v], sub.w[v]
        X, y = data.X, data.y.astype(np.int64)
        K = data.schema.n_classes
        self.K = K
        self.P = tree.counts[v].astype(float)
        self.N = N = float(w.sum())
        self.params = params
        self.in_avg = np.asarray(finder._in_avg, dtype=bool)
        f1, t1 = int(tree.feature[v]), float(tree.threshold[v])
        self.ok = True
        # integer weights: every count here and with x's unit added is an integer, whose
        # x ln x the finder's table holds (the same numbers, a gather instead of a log)
        self._table = (finder._xlogx_table(int(N) + 2)
                       if np.all(w == np.round(w)) and N < 2.0**26 else None)
        m = rows.size
        onehot = np.zeros((m, K))
        onehot[np.arange(m), y[rows]] = w
        ml = float(params.min_leaf)
        # ---- numeric columns: every valid cut (no Fayyad-Irani pruning: ratios are not
        # convex along a run), compacted per column, ascending
        num = finder.numeric_idx
        self.num = num
        F = num.size
        ms = float(np.clip(0.1 * N / K, ml, 25.0))
        C = 1
        parts = []  # per group of columns: every valid cut's column, place, threshold, L
        step = max(1, _TABLE_ELEMENTS // max(1, m * K))  # bounded (m, columns, K) arrays
        for c0 in range(0, F, step):
            cols = num[c0:c0 + step]
            vals = X[rows[:, None], cols[None, :]]  # (m, columns)
            order = _value_order(vals, rows, cols.tolist(), rank or {})  # as NodeScores'
            sv = np.take_along_axis(vals, order, axis=0)
            L = onehot[order].cumsum(axis=0)[:-1]  # (m - 1, columns, K)
            Lw = w[order].cumsum(axis=0)[:-1]
            valid = (sv[:-1] < sv[1:]) & (Lw >= ms) & (N - Lw >= ms) & (N >= 2 * ms)
            if params.threshold == "lower":
                thr = sv[:-1]
            else:
                thr = (sv[:-1] + sv[1:]) / 2.0
                if np.any(valid & ~(thr < sv[1:])):
                    self.ok = False  # x's side of such a cut is not its threshold's
            col, cut, place = cut_places(valid)
            parts.append((c0 + col, place, thr[cut, col], L[cut, col]))
            C = max(C, int(place.max()) + 1 if place.size else 1)
        self.thr = np.full((F, C), np.inf)
        self.L = np.zeros((F, C, K))
        self.cut_ok = np.zeros((F, C), dtype=bool)
        for col, place, t, L in parts:
            self.thr[col, place], self.L[col, place], self.cut_ok[col, place] = t, L, True
        self.n_cuts = self.cut_ok.sum(axis=1)
        self.invalid = np.where(self.cut_ok, 0.0, -np.inf)  # added to every gain
        self.t1_num = self.t1_cut = -1
        if f1 in num:
            k = int(flat_nonzero(num == f1)[0])
            hit = flat_nonzero(self.cut_ok[k] & (self.thr[k] == t1))
            if hit.size != 1:
                self.ok = False
            else:
                self.t1_num, self.t1_cut = k, int(hit[0])
        # Twins: cuts of later columns with T1's class counts and cut count. With x on the
        # same side as in T1 their gain and ratio are T1's to the last bit (the same
        # operations on the same numbers), and the grower settles that tie for T1's lower
        # column, as it did in the base tree (integer weights: exact counts).
        self.twin = np.zeros_like(self.cut_ok)
        if self.t1_num >= 0:
            k, c = self.t1_num, self.t1_cut
            self.twin = ((self.L == self.L[k, c]).all(axis=2) & self.cut_ok
                         & (self.n_cuts == self.n_cuts[k])[:, None]
                         & (num > f1)[:, None])
        # ---- nominal columns: class counts per value
        nom = finder.nominal_idx
        self.nom = nom
        nv = np.array([int(finder.n_values[f]) for f in nom], dtype=np.int64)
        V = max(int(nv.max()) if nom.size else 1, 1)
        self.cnt = np.zeros((nom.size, V, K))
        if nom.size:
            codes = X[np.ix_(rows, nom)].astype(np.int64)
            cell = (np.arange(nom.size)[None, :] * V + codes) * K + y[rows][:, None]
            self.cnt = np.bincount(cell.ravel(), weights=np.repeat(w, nom.size),
                                   minlength=nom.size * V * K).reshape(nom.size, V, K)
        bw = self.cnt.sum(axis=2)
        exists = np.arange(V)[None, :] < nv[:, None]
        self.binary = bool(params.binary_splits)
        if self.binary:
            self.val_ok = exists & (bw >= ml) & (N - bw >= ml)
            self.nom_ok = self.val_ok.any(axis=1)
        else:
            self.nom_ok = (exists & (bw >= ml)).sum(axis=1) >= 2
        self.t1_nom = self.t1_value = -1
        if f1 in nom:
            self.t1_nom = int(flat_nonzero(nom == f1)[0])
            if self.binary:
                vb = tree.value_branch[tree.value_branch_ptr[v]:tree.value_branch_ptr[v + 1]]
                self.t1_value = int(flat_nonzero(vb == 0)[0])
        self.t1 = (self.t1_num if self.t1_num >= 0
                   else F + self.t1_nom if self.t1_nom >= 0 else -1)
        if self.t1 < 0:
            self.ok = False
        self._memo: dict[tuple, tuple] = {}
        self._sums: dict[str, tuple] = {}  # (:meth:`_impurity`)
        self._split_infos_memo: dict[float, tuple] = {}  # (:meth:`_split_infos`)

    def nbytes(self) -> int:
        """Bytes held: the tables, their sums and the memoised arrays of every class change
        seen (not the x ln x table, the finder's)."""
        arrays = [a for name, a in vars(self).items()
                  if isinstance(a, np.ndarray) and name != "_table"]
        arrays += [a for entry in self._memo.values() for a in (*entry[:-1], *entry[-1])]
        arrays += [a for entry in self._sums.values() for a in entry]  # (L, cnt: twice)
        arrays += [a for entry in self._split_infos_memo.values() for a in entry]
        return sum(a.nbytes for a in arrays)

    def _arrays(self, d: np.ndarray) -> tuple:
        """Gains and split informations of every candidate with x (class change ``d``)
        on either side: numeric (F, C) with x left / right; nominal (q, V) with x in /
        out of the value's branch (binary) or with x's value (multiway)."""
        key = tuple(d.tolist())
        if key not in self._memo:
            P, N = self.P, self.N
            Np = N + float(d.sum())
            Ep = float(_impurity_last(P + d, False))
            EL, ER = self._impurity("L"), self._impurity("R")
            GL = (Ep - self._impurity("L", d) - ER) / Np + self.invalid
            GR = (Ep - EL - self._impurity("R", d)) / Np + self.invalid
            SL, SR, *nominal_si = self._split_infos(Np)
            Ev, Evd = self._impurity("value"), self._impurity("value", d)
            if self.binary:
                Erest, Erd = self._impurity("rest"), self._impurity("rest", d)
                A = ((Ep - Evd - Erest) / Np, nominal_si[0],   # x in the branch
                     (Ep - Ev - Erd) / Np, nominal_si[1])       # x in the rest
            else:
                g = (Ep - Ev.sum(axis=1, keepdims=True) - (Evd - Ev)) / Np
                A = (g, nominal_si[0])
            C = GL.shape[1]
            sf_best, sf_at, sf_second = (a[:, ::-1] for a in _top_two(GL[:, ::-1]))
            sf_at = np.where(sf_at >= 0, C - 1 - sf_at, -1)  # (the last of equal bests)
            prefix = (*_top_two(GR), sf_best, sf_at, sf_second)
            self._memo[key] = (GL, GR, SL, SR, *A, prefix)
        return self._memo[key]

    def _split_infos(self, Np: float) -> tuple:
        """Split informations of every candidate with x on either side, which read x's
        weight alone, not its class (so every class change of one weight shares them):
        numeric (F, C) with x left / right; nominal (q, V) with x in / out of the value's
        branch (binary) or with x's value (multiway)."""
        if Np not in self._split_infos_memo:
            N, wL, bw = self.N, self._sums_of("L")[1], self._sums_of("value")[1]
            f = self._xlogx if Np == round(Np) else _xlogx
            out = [_si(wL + 1.0, N - wL, Np, f), _si(wL, N - wL + 1.0, Np, f)]
            if self.binary:
                out += [_si(bw + 1.0, N - bw, Np, f), _si(bw, N - bw + 1.0, Np, f)]
            else:
                out.append((f(Np) - f(bw).sum(axis=1, keepdims=True)
                            - (f(bw + 1.0) - f(bw))) / _LN2 / Np)
            self._split_infos_memo[Np] = tuple(out)
        return self._split_infos_memo[Np]

    def _impurity(self, table: str, d: np.ndarray | None = None) -> np.ndarray:
        """N·entropy (bits) of every count row of one of the node's tables — ``"L"`` (left
        of every cut), ``"R"`` (right of it), ``"value"`` (nominal values), ``"rest"``
        (all but the value) — plus the class change ``d`` when given. The table's sums of
        x ln x are kept, so a class change costs its changed classes only: equal to
        :func:`~treecert.tree.impurity._impurity_last` within float rounding (≪ ``_TOL``)."""
        counts, total, sum_x, without_x = self._sums_of(table)
        if d is None:
            return without_x
        # counts stay within the table: an integer change of at most 2 in all
        f = self._xlogx if np.all(d == np.round(d)) and np.abs(d).sum() <= 2 else _xlogx
        for k in flat_nonzero(d):
            c = counts[..., k]
            sum_x = sum_x + (f(c + d[k]) - f(c))
        return (f(total + float(d.sum())) - sum_x) / _LN2

    def _sums_of(self, table: str) -> tuple:
        """One of the node's tables (:meth:`_impurity`), kept with its rows' weights, their
        x ln x summed over the classes and its N·entropy: (counts, total, sum_x, bits)."""
        if table not in self._sums:
            counts = {"L": lambda: self.L, "R": lambda: self.P - self.L,
                      "value": lambda: self.cnt, "rest": lambda: self.P - self.cnt}[table]()
            total, sum_x = counts.sum(axis=-1), self._xlogx(counts).sum(axis=-1)
            self._sums[table] = (counts, total, sum_x, (self._xlogx(total) - sum_x) / _LN2)
        return self._sums[table]

    def _xlogx(self, x) -> np.ndarray:
        """x ln x of integer-valued ``x`` with integer weights, from the table."""
        return table_xlogx(x, self._table)

    def certify(self, Xq: np.ndarray, D: np.ndarray, min_gain: float) -> np.ndarray:
        """For rows ``Xq`` (no missing values) entering the node with class changes ``D``
        (one row each, a unit vector): True where T1 provably stays J48's choice."""
        B = Xq.shape[0]
        out = np.zeros(B, dtype=bool)
        if not self.ok:
            return out
        group = unique_rows(D)[1]
        step = max(1, (1 << 21) // max(1, self.thr.size))  # bounded (jobs, F, C) arrays
        for g in np.unique(group):
            idx = flat_nonzero(group == g)
            arrays = self._arrays(D[idx[0]])
            Np = self.N + float(D[idx[0]].sum())
            for lo in range(0, idx.size, step):
                part = idx[lo:lo + step]
                out[part] = self._decide(Xq[part], arrays, Np, min_gain)
        return out

    def _decide(self, Xq: np.ndarray, arrays: tuple, Np: float, min_gain: float) -> np.ndarray:
        B = Xq.shape[0]
        F, q = self.num.size, self.nom.size
        g_lo, g_hi = np.zeros((B, F + q)), np.zeros((B, F + q))
        s_lo, s_hi = np.zeros((B, F + q)), np.zeros((B, F + q))
        ok = np.zeros((B, F + q), dtype=bool)
        sure = np.ones(B, dtype=bool)  # every step decided
        tied = np.zeros((B, F + q), dtype=bool)  # candidates tying with T1 exactly
        if F:
            numeric = (ok[:, :F], g_lo[:, :F], g_hi[:, :F], s_lo[:, :F], s_hi[:, :F],
                       np.ones(B, dtype=bool), tied[:, :F])  # (their own ``sure``)
            crowded = (self._numeric_by_prefix(Xq, arrays, Np, *numeric) if _PREFIX
                       else np.ones(B, dtype=bool))
            if crowded.any():  # several near-best cuts in a column: every cut rescored
                rows = flat_nonzero(crowded)
                part = [a[rows] for a in numeric]
                part[5][:] = True
                self._numeric_dense(Xq[rows], arrays, Np, *part)
                for whole, a in zip(numeric, part, strict=True):
                    whole[rows] = a
            sure &= numeric[5]
        if q:
            u = Xq[:, self.nom].astype(np.int64)
            cols = np.arange(q)[None, :]
            if self.binary:
                gin, sin, gout, sout = arrays[4:8]
                mine = np.arange(gin.shape[1])[None, None, :] == u[:, :, None]
                gv = np.where(mine, gin[None], gout[None])
                sv = np.where(self.val_ok[None], _ratio(gv, np.where(mine, sin[None],
                                                                     sout[None])), -np.inf)
                top = sv.max(axis=2)
                near = sv >= top[:, :, None] - 2 * _TOL
                gn = np.where(near, gv, np.nan)
                with np.errstate(invalid="ignore"):
                    g_lo[:, F:] = np.nan_to_num(np.nanmin(gn, axis=2)) - _TOL
                    g_hi[:, F:] = np.nan_to_num(np.nanmax(gn, axis=2)) + _TOL
                    s_lo[:, F:] = np.nan_to_num(np.nanmin(np.where(near, sv, np.nan), axis=2),
                                                neginf=0.0) - _TOL
                s_hi[:, F:] = np.where(self.nom_ok[None], top, 0.0) + _TOL
                if self.t1_nom >= 0:
                    j, s1 = self.t1_nom, self.t1_value
                    sure &= near[:, j, s1] & (near[:, j].sum(axis=1) == 1)
            else:
                gm, sm = arrays[4][cols, u], arrays[5][cols, u]
                sc = _ratio(gm, sm)
                g_lo[:, F:], g_hi[:, F:] = gm - _TOL, gm + _TOL
                s_lo[:, F:], s_hi[:, F:] = sc - _TOL, sc + _TOL
            ok[:, F:] = self.nom_ok[None, :]
        # the average gain over the counted candidates, as an interval
        counted = ok & self.in_avg[None, :]
        n_c = counted.sum(axis=1)
        sure &= n_c > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            avg_lo = np.where(counted, g_lo, 0.0).sum(axis=1) / n_c
            avg_hi = np.where(counted, g_hi, 0.0).sum(axis=1) / n_c
        t = self.t1
        sure &= ok[:, t] & (g_lo[:, t] >= avg_hi - 1e-3) & (s_lo[:, t] > 1e-6)
        sure &= g_lo[:, t] > min_gain
        # any other candidate that may enter the pool must trail T1 in gain ratio
        maybe = ok & (g_hi >= (avg_lo - 1e-3)[:, None]) & (s_hi > 1e-6) & (g_hi > min_gain)
        maybe[:, t] = False
        maybe &= ~tied
        rival = np.where(maybe, s_hi, -np.inf).max(axis=1)
        sure &= s_lo[:, t] - rival > _TOL
        return sure

    def _mdl(self, Np: float) -> np.ndarray:
        """J48's MDL correction of every numeric column, x included."""
        return np.log2(np.maximum(self.n_cuts, 1)) / Np

    def _numeric_dense(self, Xq, arrays, Np, ok, g_lo, g_hi, s_lo, s_hi, sure, tied) -> None:
        """The numeric candidates' intervals of rows ``Xq`` into ``ok`` … ``tied`` (B, F)
        and T1's checks into ``sure`` (B,): every cut of every column scored for x's side."""
        GL, GR, SL, SR = arrays[:4]
        right = Xq[:, self.num][:, :, None] > self.thr[None]
        g = np.where(right, GR, GL)  # -inf at padding cuts
        best = g.max(axis=2)
        near = g >= best[:, :, None] - 2 * _TOL
        n_near = near.sum(axis=2)
        jb, jf, jc = np.nonzero(near)  # few: the near-best cuts of every column
        mdl = self._mdl(Np)
        sc = _ratio(g[jb, jf, jc] - mdl[jf], np.where(right[jb, jf, jc], SR[jf, jc], SL[jf, jc]))
        lo, hi = np.full(best.shape, np.inf), np.full(best.shape, -np.inf)
        np.minimum.at(lo, (jb, jf), sc)
        np.maximum.at(hi, (jb, jf), sc)
        self._numeric_intervals(best - mdl, lo, hi, ok, g_lo, g_hi, s_lo, s_hi, sure)
        if self.t1_num >= 0:  # T1's cut must be its column's only near-best cut
            k, c = self.t1_num, self.t1_cut
            sure &= near[:, k, c] & (n_near[:, k] == 1)
            if self.twin.any():  # columns offering only twins of T1 tie, and lose
                same = near & self.twin[None] & (right == right[:, k, c][:, None, None])
                tied[:] = same.any(axis=2) & (same.sum(axis=2) == n_near)

    def _numeric_intervals(self, gc, lo, hi, ok, g_lo, g_hi, s_lo, s_hi, sure) -> None:
        """Intervals of every numeric candidate from its MDL-corrected gain ``gc`` and the
        least and largest ratio ``lo``, ``hi`` of its column's near-best cuts."""
        has = (self.n_cuts > 0)[None, :]
        ok[:] = has & (gc >= MIN_NUMERIC_GAIN)
        sure &= ~(has & (np.abs(gc - MIN_NUMERIC_GAIN) <= 2 * _TOL)).any(axis=1)
        g_lo[:], g_hi[:] = gc - 2 * _TOL, gc + _TOL
        s_lo[:] = np.where(has, lo, 0.0) - _TOL
        s_hi[:] = np.where(has, hi, 0.0) + _TOL

    def _numeric_by_prefix(self, Xq, arrays, Np, ok, g_lo, g_hi, s_lo, s_hi, sure,
                           tied) -> np.ndarray:
        """:meth:`_numeric_dense` in O(F log C) per row where every column with cuts has a
        single near-best cut (the usual case); returns the rows where one has several
        (their outputs are left for the dense rescoring). A column's cuts are sorted by
        threshold, so x is right of a prefix of them and left of the rest: the largest
        and second largest gain of each prefix with x right (and of each suffix with x
        left), with the first cut reaching the largest (:func:`_top_two`), give the
        column's best gain and whether any other cut is within 2·_TOL of it — the very
        numbers and comparisons of the dense rescoring."""
        SL, SR = arrays[2:4]
        pr_best, pr_at, pr_second, sf_best, sf_at, sf_second = arrays[-1]
        F = self.num.size
        cols = np.arange(F)[None, :]
        x = Xq[:, self.num]
        # cuts strictly below x: x is right of them
        split = np.stack([self.thr[k].searchsorted(x[:, k], side="left")
                          for k in range(F)], axis=1)
        a_best, a_second = pr_best[cols, split], pr_second[cols, split]
        b_best, b_second = sf_best[cols, split], sf_second[cols, split]
        from_prefix = a_best >= b_best
        best = np.maximum(a_best, b_best)
        second = np.where(from_prefix, np.maximum(a_second, b_best),
                          np.maximum(b_second, a_best))
        has = (self.n_cuts > 0)[None, :]
        crowded = (has & (second >= best - 2 * _TOL)).any(axis=1)
        at = np.where(from_prefix, pr_at[cols, split], sf_at[cols, split])
        at = np.maximum(at, 0)  # (no cut: a column without cuts, masked below)
        mdl = self._mdl(Np)
        with np.errstate(invalid="ignore"):
            sc = _ratio(best - mdl, np.where(from_prefix, SR[cols, at], SL[cols, at]))
        self._numeric_intervals(best - mdl, sc, sc, ok, g_lo, g_hi, s_lo, s_hi, sure)
        if self.t1_num >= 0:  # T1's cut must be its column's (only) near-best cut
            k, c = self.t1_num, self.t1_cut
            sure &= at[:, k] == c
            if self.twin.any():  # columns offering only a twin of T1 tie, and lose
                t1_right = x[:, k] > self.thr[k, c]
                tied[:] = self.twin[cols, at] & (from_prefix == t1_right[:, None]) & has
        return crowded
