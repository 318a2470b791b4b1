"""Growing C4.5-family decision trees: split search and the tree builder.

This is the engine the transductive and Venn methods re-run thousands of times, so no
Python loop runs per row or per threshold, and growing a whole tree costs a few dozen array
operations per tree level rather than per node:

* :class:`SplitFinder` scores a *batch* of nodes at once: their rows are laid end to end
  (node g owns a segment), each numeric column is sorted within every segment, class
  weights are cumulated along the sorted columns, and every (node, column)'s best cut is
  found with a few array operations and segmented reductions; nominal attributes are
  tallied with one ``bincount``. :meth:`SplitFinder.best_split` is the batch of one node
  (one ``argsort`` of its numeric columns), callable on any row subset.
* :func:`grow` grows level by level: the root's columns are sorted once, and each level's
  per-column orders come from its parents' by stable partitioning (O(rows) per level, no
  sorting); a row with a missing value goes to several children with a fraction of its
  weight and stays last (as NaN) in their orders. Node ids are then assigned in the
  depth-first order of the straightforward builder (kept as ``_grow_nodewise``, used for
  rows not given in increasing order).
* Only Fayyad-Irani boundary cuts are scored at first: a cut between two valid cuts that
  moves rows of a single class lies on a convex stretch of the gain, so it never beats both
  neighbours; the skipped cuts next to a column's (near-)best cut are scored afterwards,
  since rounding to 10 decimals could make them tie. J48's MDL term still counts every
  valid cut.
* Integer weights (the usual case) are cumulated in integers, and ``x ln x`` of integer
  counts is read from a table.

Bit-for-bit equality with the straightforward node-by-node computation (sort the node,
``cumsum`` its class weights, score every cut, as treecert first did) is a hard
requirement: tie-breaking rounds scores to 10 decimals, so one ulp could change a tree.
Every floating-point sum is therefore taken in the same order as there: segmented
cumulative sums are exact when the weights are dyadic (integer weights: always), and are
otherwise re-done node by node; sums over a small last axis (classes, branches) are
replicated as numpy computes them (one term after the other below 8 terms); where sums are
exact, ties in a column may be sorted in any order. ``tests/test_grow_equivalence.py``
holds golden trees grown by the original grower and property tests against a plain
node-by-node grower, a full (unpruned) cut search and a brute-force enumeration.

Rules, and where they come from
-------------------------------
* ``info_gain`` (default; Clus and the TPCE paper's experiments): the admissible test of
  largest information gain. ``gini``: the same with the Gini decrease (CART).
  ``gain_ratio``: J48's ``C45ModelSelection`` — best gain ratio among tests whose gain is at
  least the average gain (minus 1e-3), numeric gain MDL-corrected by log2(#cuts)/N, numeric
  branches at least ``clamp(0.1 N_known / K, min_leaf, 25)``.
* Missing values (C4.5): gain is computed on the instances whose value is known and scaled by
  the known fraction; gain ratio's split information counts the unknown part as a branch;
  an instance with an unknown value goes down every branch with a weight proportional to the
  branch's known weight (fractional instances).
* Numeric tests are ``x <= threshold`` (left) versus ``x > threshold``. Candidate thresholds
  come only from *eligible* training values: ``threshold="midpoint"`` puts the threshold
  halfway between two consecutive eligible values (scikit-learn, rpart);
  ``threshold="lower"`` uses the lower of the two (C4.5/J48 use an observed value; J48 picks
  the largest value of the *whole* training set below the midpoint, which partitions the
  node's training rows identically and differs only for unseen values in between).
  For each attribute the cut of largest gain is taken (then, for ``gain_ratio``, corrected
  and divided by its split information).
* Nominal tests: one branch per declared value (C4.5 multiway) or, with
  ``binary_splits=True``, one value versus the rest (J48 ``-B``). A multiway test needs at
  least two branches with ``min_leaf`` weight, as in J48.
* Ineligible rows (the TPCE paper, section 3.2 and Fig. 3): a row flagged ineligible — the
  test instance x added with a tentative label — counts in every class count, hence in the
  heuristic, but its values never become thresholds and its weight never makes a test
  admissible (``min_leaf`` and J48's node-size checks use eligible weight only), so x cannot
  create a nominal branch or a numeric cut that the training data alone would not allow.
* Ties are broken deterministically: scores are compared after rounding to 10 decimals, and
  the lowest attribute index, then the lowest threshold/value, wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treecert.errors import ConfigError

CRITERIA = ("info_gain", "gain_ratio", "gini")
THRESHOLD_RULES = ("midpoint", "lower")
_LN2 = np.log(2.0)
_EPS = 1e-12
_ROUND = 10
# Weights that are multiples of 2**-20 summing to less than 2**32 add up exactly in float64,
# in any order: segmented sums of such weights can be taken with one global cumsum.
_DYADIC = 2.0**20
_EXACT_TOTAL = 2.0**32
# numpy sums fewer than this many terms along an axis one after the other (then pairwise).
_SEQ_SUM = 8
# Score only Fayyad-Irani boundary cuts first (False: every cut; for tests).
_PRUNE = True
# Largest total weight for which x ln x of integer counts is looked up in a table.
_TABLE_MAX = 2.0**22
# Nominal class counts are tallied for at most this many (node, attribute, value, class) cells
# at once.
_NOMINAL_CELLS = 2**22


@dataclass(frozen=True)
class GrowParams:
    """Hyperparameters of tree growing (all stopping rules are pre-pruning)."""

    criterion: str = "info_gain"
    min_leaf: float = 2.0
    max_depth: int | None = None
    min_gain: float = 0.0
    binary_splits: bool = False
    threshold: str = "midpoint"
    collapse: bool = False

    def __post_init__(self) -> None:
        if self.criterion not in CRITERIA:
            raise ConfigError(
                f"unknown criterion '{self.criterion}'.", f"Choose one of: {', '.join(CRITERIA)}."
            )
        if self.threshold not in THRESHOLD_RULES:
            raise ConfigError(
                f"unknown threshold rule '{self.threshold}'.", "Choose midpoint or lower."
            )
        if self.min_leaf < 0:
            raise ConfigError(f"min_leaf must be >= 0, got {self.min_leaf}.")
        if self.max_depth is not None and self.max_depth < 0:
            raise ConfigError(f"max_depth must be >= 0, got {self.max_depth}.")
        if self.min_gain < 0:
            raise ConfigError(f"min_gain must be >= 0, got {self.min_gain}.")


@dataclass
class Split:
    """The test chosen at a node."""

    feature: int
    threshold: float  # NaN for nominal tests
    value_branch: np.ndarray | None  # nominal: branch index of every declared value
    n_branches: int
    score: float


# ---------------------------------------------------------------------- arithmetic
def _xlogx(a: np.ndarray) -> np.ndarray:
    """``a * ln(a)``, 0 where a == 0: scipy's ``xlogy(a, a)`` without importing scipy."""
    a = np.asarray(a, dtype=float)
    out = np.zeros(a.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.log(a, out=out, where=a != 0)
    out *= a
    return out


def _sum_cols(cols: list[np.ndarray]) -> np.ndarray:
    """Elementwise sum of the arrays in ``cols``, in the order numpy sums a last axis."""
    if len(cols) >= _SEQ_SUM:
        return np.stack(cols, axis=-1).sum(axis=-1)
    total = cols[0]
    for c in cols[1:]:
        total = total + c
    return total


def _lastsum(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=-1)`` exactly as numpy computes it for each (contiguous) row."""
    if a.shape[-1] >= _SEQ_SUM or a.shape[-1] == 0:
        return np.ascontiguousarray(a).sum(axis=-1)
    return _sum_cols([a[..., k] for k in range(a.shape[-1])])


def _impurity(cols: list[np.ndarray], gini: bool) -> np.ndarray:
    """N * impurity (entropy in bits, or Gini) from per-class count arrays."""
    total = _sum_cols(cols)
    if gini:
        sq = _sum_cols([c * c for c in cols])
        with np.errstate(invalid="ignore", divide="ignore"):
            out = total - sq / total
        return np.where(total > 0, out, 0.0)
    return (_xlogx(total) - _sum_cols([_xlogx(c) for c in cols])) / _LN2


def _impurity_last(counts: np.ndarray, gini: bool) -> np.ndarray:
    """N * impurity over the last axis (classes) of ``counts``."""
    if counts.shape[-1] == 0:
        return np.zeros(counts.shape[:-1])
    return _impurity([counts[..., k] for k in range(counts.shape[-1])], gini)


def _split_info(branch_weights: list[np.ndarray], unknown, total) -> np.ndarray:
    """C4.5 split information in bits; the unknown weight counts as one more branch."""
    s = _xlogx(total) - _sum_cols([_xlogx(b) for b in branch_weights])
    s = s - _xlogx(unknown)
    return s / _LN2 / total


def _exact_segments(w: np.ndarray, node: np.ndarray, G: int) -> np.ndarray:
    """Per segment: True if its weights are dyadic enough to be summed exactly in any order."""
    scaled = w * _DYADIC
    bad = ~(scaled == np.floor(scaled))
    if not bad.any():
        ok = np.ones(G, dtype=bool)
    else:
        ok = np.bincount(node[bad], minlength=G) == 0
    if ok.any() and float(w[ok[node]].sum()) >= _EXACT_TOTAL:
        ok[:] = False
    return ok


def _segment_sums(x: np.ndarray, seg: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """``x[seg[g]:seg[g+1]].sum()`` for every (non-empty) segment g, bit for bit."""
    out = np.add.reduceat(x, seg[:-1]) if x.size else np.zeros(seg.size - 1)
    for g in np.flatnonzero(~exact):
        out[g] = x[seg[g] : seg[g + 1]].sum()
    return out


def _segment_cumsum(a: np.ndarray, seg: np.ndarray, exact: np.ndarray,
                    totals: np.ndarray) -> np.ndarray:
    """Cumulative sums of ``a`` (p, M) along axis 1 restarted in every segment, in place.

    Each equals ``np.cumsum`` over its segment alone, bit for bit: exact segments are summed
    in one pass, with the previous segment's total (``totals[g]``: the sum of every row of
    ``a`` over segment g) taken off at each segment start; the others one by one.
    """
    inexact = np.flatnonzero(~exact)
    local = [np.cumsum(a[:, seg[g] : seg[g + 1]], axis=1) for g in inexact]
    for g in inexact:
        a[:, seg[g] : seg[g + 1]] = 0.0
    if seg.size > 2:
        a[:, seg[1:-1]] -= np.where(exact[:-1], totals[:-1], 0.0).astype(a.dtype)
    np.cumsum(a, axis=1, out=a)
    for g, c in zip(inexact, local, strict=True):
        a[:, seg[g] : seg[g + 1]] = c
    return a


class _Batch:
    """Rows of G nodes laid end to end: node g owns entries ``seg[g]:seg[g+1]``.

    ``S[j]`` lists the entries sorted by numeric column j within each segment (NaN last;
    stable, unless sums are exact), ``V[j]`` their values and ``Y[j]`` their classes;
    ``we`` is the eligible weight (None: all eligible). ``integral``: all weights are
    integers summing below 2**31.
    """

    __slots__ = ("G", "S", "V", "Y", "exact", "integral", "node", "rows", "seg", "total_w",
                 "w", "we")

    def __init__(self, seg, rows, w, we, S, V, Y):
        self.seg = seg
        self.G = seg.size - 1
        self.rows = rows
        self.w = w
        self.we = we
        self.S = S
        self.V = V
        self.Y = Y
        self.node = np.repeat(np.arange(self.G), np.diff(seg))
        self.exact = _exact_segments(w, self.node, self.G)
        self.total_w = _segment_sums(w, seg, self.exact)
        self.integral = bool(self.exact.all() and np.all(w == np.floor(w))
                             and float(self.total_w.sum()) < 2.0**31)


def _exact_any_order(w: np.ndarray, XT: np.ndarray, *, missing_ok: bool) -> bool:
    """True if the order of equal values cannot change a result: integer weights (exact
    sums), no -0.0 (which sorts with 0.0 but prints apart) and, unless ``missing_ok``, no
    missing value (whose fractional weights would make sums inexact further down)."""
    if not (np.all(w == np.floor(w)) and float(w.sum()) < 2.0**31):
        return False
    zero = XT == 0
    if zero.any() and np.signbit(XT[zero]).any():
        return False
    return missing_ok or not np.isnan(XT).any()


def _index_dtype(n: int):
    return np.int32 if n < 2**31 else np.int64


def _class_dtype(n_classes: int):
    return np.int8 if n_classes < 128 else np.int32


@dataclass
class _Choice:
    """The chosen test of every node of a batch (feature -1: none)."""

    feature: np.ndarray
    threshold: np.ndarray
    n_branches: np.ndarray
    score: np.ndarray
    value_branch: dict[int, np.ndarray]

    def split(self, g: int) -> Split | None:
        if self.feature[g] < 0:
            return None
        return Split(int(self.feature[g]), float(self.threshold[g]), self.value_branch.get(g),
                     int(self.n_branches[g]), float(self.score[g]))


class SplitFinder:
    """Finds the best test for a node's rows; shared by the builder and the TPCE engine.

    Parameters
    ----------
    X : float array (n_samples, n_features); nominal codes as floats, NaN = missing.
    y : int array (n_samples,) with codes in [0, n_classes).
    is_nominal, n_values : per-feature kind and number of declared values.
    eligible : bool array (n_samples,) or None — rows whose values may become thresholds.
    n_total_rows : size of the whole training set (J48's 0.3·N many-values rule).

    ``X``, ``y`` and ``eligible`` are read at every call, never copied: a caller may change
    rows in place between calls (the transductive engine does).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        is_nominal: np.ndarray,
        n_values: np.ndarray,
        n_classes: int,
        params: GrowParams,
        eligible: np.ndarray | None = None,
        n_total_rows: float | None = None,
    ) -> None:
        self.X = X
        self.y = y
        self.n_classes = n_classes
        self.params = params
        self.eligible = eligible
        self.numeric_idx = np.flatnonzero(~is_nominal)
        self.nominal_idx = np.flatnonzero(is_nominal)
        self.n_values = n_values
        self.max_values = int(n_values[self.nominal_idx].max()) if self.nominal_idx.size else 0
        self.n_total_rows = float(n_total_rows if n_total_rows is not None else X.shape[0])
        # J48's "many values" rule: if every attribute is nominal with >= 0.3 N values,
        # all of them still count in the average gain.
        self.multi_val = bool(
            self.numeric_idx.size == 0
            and self.nominal_idx.size > 0
            and np.all(n_values[self.nominal_idx] >= 0.3 * self.n_total_rows)
        )
        many_rule = 0.3 * self.n_total_rows
        self._in_avg = np.array(
            [True] * self.numeric_idx.size
            + [self.multi_val or int(n_values[f]) < many_rule for f in self.nominal_idx],
            dtype=bool,
        )
        self._fid = np.concatenate([self.numeric_idx, self.nominal_idx]).astype(np.int64)

    # ------------------------------------------------------------------ public
    def best_split(self, idx: np.ndarray, w: np.ndarray) -> Split | None:
        """Best admissible test for the rows ``idx`` with weights ``w``, or None."""
        idx = np.asarray(idx, dtype=np.int64)
        w = np.asarray(w, dtype=float)
        return self._evaluate(self._single_batch(idx, w)).split(0)

    def _single_batch(self, idx: np.ndarray, w: np.ndarray, we: np.ndarray | None = None,
                      *, any_order: bool | None = None):
        """The batch of one node; its numeric columns sorted (stable unless ``any_order``)."""
        S = V = Y = None
        if self.numeric_idx.size:
            XT = self.X[np.ix_(idx, self.numeric_idx)].T
            if any_order is None:
                any_order = _exact_any_order(w, XT, missing_ok=True)
            # Exact (integer) sums do not depend on the order of equal values: any sort.
            S = np.argsort(XT, axis=1, kind=None if any_order else "stable")
            S = S.astype(_index_dtype(idx.size))
            V = np.take_along_axis(XT, S, axis=1)
            Y = self.y.astype(_class_dtype(self.n_classes))[idx][S]
        if we is None and self.eligible is not None:
            we = w * self.eligible[idx]
        return _Batch(np.array([0, idx.size]), idx, w, we, S, V, Y)

    def _nominal(self, idx, Y, we, total_w):
        """Candidate nominal tests of one node as (feature, gain, score, nan, value_branch,
        counts-in-average) tuples (``Y``: the rows' one-hot class weights)."""
        b = self._single_batch(np.asarray(idx), np.asarray(Y).sum(axis=1), np.asarray(we))
        b.total_w = np.array([float(total_w)])
        ok, gain, score, vb = self._nominal_batch(b)
        out = []
        for j in np.flatnonzero(ok[0]):
            f = int(self.nominal_idx[j])
            out.append((f, float(gain[0, j]), float(score[0, j]), np.nan,
                        self._value_branch(f, int(vb[0, j])), bool(self._in_avg[
                            self.numeric_idx.size + j])))
        return out

    # ------------------------------------------------------------------ batch scoring
    def _value_branch(self, f: int, v: int) -> np.ndarray:
        nv = int(self.n_values[f])
        if v < 0:
            return np.arange(nv)
        vb = np.ones(nv, dtype=np.int64)
        vb[v] = 0
        return vb

    def _evaluate(self, b: _Batch) -> _Choice:
        """The chosen test of every node of the batch (the rules in the module docstring)."""
        params = self.params
        G, p, q = b.G, self.numeric_idx.size, self.nominal_idx.size
        ok = np.zeros((G, p + q), dtype=bool)
        gain = np.zeros((G, p + q))
        score = np.zeros((G, p + q))
        thr = np.full((G, p), np.nan)
        vb = np.full((G, q), -1, dtype=np.int64)
        if p and b.rows.size:
            ok[:, :p], gain[:, :p], score[:, :p], thr = self._numeric_batch(b)
        if q and b.rows.size:
            ok[:, p:], gain[:, p:], score[:, p:], vb = self._nominal_batch(b)
        if params.criterion == "gain_ratio":
            counted = ok & self._in_avg
            acc = np.zeros(G)
            for c in range(p + q):  # Python's sum() over the candidate list, in its order
                acc = acc + np.where(counted[:, c], gain[:, c], 0.0)
            n_counted = counted.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                avg = acc / n_counted
            pool = ok & (n_counted > 0)[:, None] & (gain >= (avg - 1e-3)[:, None])
            pool &= score > 1e-6
        else:
            pool = ok & (gain > _EPS)
        pool &= gain > params.min_gain
        # max(pool, key=(round(score, 10), -feature)): the unique clear best wins; among
        # exactly equal scores the lowest feature; anything closer is settled as Python does.
        masked = np.where(pool, score, -np.inf)
        top = masked.max(axis=1) if p + q else np.full(G, -np.inf)
        near = pool & (masked >= (top - 2e-10)[:, None])
        same = near & (masked == top[:, None])
        best = np.argmin(np.where(same, self._fid, np.iinfo(np.int64).max), axis=1)
        has = pool.any(axis=1)
        for g in np.flatnonzero(has & ((near != same).any(axis=1))):
            cands = np.flatnonzero(pool[g])
            best[g] = max(cands, key=lambda c, g=g: (round(float(score[g, c]), _ROUND),
                                                     -int(self._fid[c])))
        rows = np.flatnonzero(has)
        col = best[rows]
        feature = np.full(G, -1, dtype=np.int64)
        feature[rows] = self._fid[col]
        threshold = np.full(G, np.nan)
        n_branches = np.zeros(G, dtype=np.int64)
        value_branch: dict[int, np.ndarray] = {}
        is_num = col < p
        threshold[rows[is_num]] = thr[rows[is_num], col[is_num]]
        n_branches[rows[is_num]] = 2
        for g, c in zip(rows[~is_num].tolist(), (col[~is_num] - p).tolist(), strict=True):
            f = int(self.nominal_idx[c])
            value_branch[g] = self._value_branch(f, int(vb[g, c]))
            n_branches[g] = int(value_branch[g].max()) + 1
        out_score = np.zeros(G)
        out_score[rows] = score[rows, col]
        return _Choice(feature, threshold, n_branches, out_score, value_branch)

    def _xlogx_table(self, n: int) -> np.ndarray:
        """``_xlogx(i)`` for i = 0..n (at least), cached."""
        table = getattr(self, "_table", None)
        if table is None or table.size <= n:
            table = _xlogx(np.arange(max(n + 1, 1024), dtype=float))
            self._table = table
        return table

    def _numeric_batch(self, b: _Batch):
        """Best cut of every (node, numeric column): (ok, gain, score, threshold), (G, p)."""
        params = self.params
        K = self.n_classes
        gini = params.criterion == "gini"
        G, seg, S, V, ys = b.G, b.seg, b.S, b.V, b.Y
        p, M = S.shape
        out_ok = np.zeros((G, p), dtype=bool)
        out_gain = np.zeros((G, p))
        out_score = np.zeros((G, p))
        out_thr = np.full((G, p), np.nan)
        if M < 2:
            return out_ok, out_gain, out_score, out_thr
        exact, node = b.exact, b.node
        starts = seg[:-1]
        lens = np.diff(seg)
        y_e = self.y[b.rows]
        # Class weights cumulated along every sorted column, restarted at each node. With
        # integer weights in integers (exact, half the memory); else in floats, exactly as
        # a per-node cumsum.
        if b.integral:
            w_e = b.w.astype(np.int32)
            unit = bool(np.all(w_e == 1))
            ws = None if unit else w_e[S]

            def class_weights(k):
                return (ys == k).astype(np.int32) if unit else np.where(ys == k, ws, 0)
        else:
            w_e = b.w
            ws = b.w[S]

            def class_weights(k):
                return ws * (ys == k)  # w * 1.0 or w * 0.0: np.where(ys == k, ws, 0.0)

        if b.we is None:
            if b.integral and unit:  # the eligible weight before each cut is its position
                CE = (np.arange(M) - np.repeat(starts, lens) + 1).astype(np.int32)
            else:
                CE = _segment_cumsum(ws.copy(), seg, exact,
                                     np.bincount(node, weights=w_e, minlength=G))
        else:
            el = self.eligible[b.rows]
            el_s = el[S]
            CE = _segment_cumsum(np.where(el_s, ws, 0) if ws is not None else
                                 el_s.astype(np.int32), seg, exact,
                                 np.bincount(node, weights=w_e * el, minlength=G))
        C = []
        derive_last = b.we is None and bool(exact.all())
        for k in range(K - 1 if derive_last else K):
            tk = np.bincount(node, weights=np.where(y_e == k, w_e, 0), minlength=G)
            C.append(_segment_cumsum(class_weights(k), seg, exact, tk))
        if derive_last:  # exact sums: the last class is the rest, bit for bit
            C.append(CE - _sum_cols(C) if C else np.broadcast_to(CE, (p, M)).copy())
        # Known values come first in each segment (NaN sorts last).
        if np.isnan(V[:, seg[1:] - 1]).any():
            n_known = np.add.reduceat(~np.isnan(V), starts, axis=1, dtype=np.int64)  # (p, G)
        else:
            n_known = np.broadcast_to(lens, (p, G))
        has = n_known > 0
        last = np.maximum(starts + n_known - 1, 0)
        rowj = np.arange(p)[:, None]
        KC = [np.where(has, C[k][rowj, last], 0) for k in range(K)]  # (p, G)
        KE = np.where(has, CE[last] if CE.ndim == 1 else CE[rowj, last], 0)
        KCf = [c.astype(float) for c in KC]
        # Cut i lies between sorted positions i and i+1 of one node.
        pos_node = node[:-1]

        def per_cut(a):  # (p, G) -> (p, M - 1): the value of each cut's node
            return a if G == 1 else np.repeat(a, lens, axis=1)[:, :-1]

        valid = V[:, :-1] < V[:, 1:]
        if G > 1:
            valid &= node[1:] == pos_node
        left_e = CE[..., :-1]
        if params.criterion == "gain_ratio":
            min_split = np.clip(0.1 * KE.astype(float) / K, params.min_leaf, 25.0)
            ms_pos = per_cut(min_split)
            valid &= per_cut(KE >= 2 * min_split)
        else:
            ms_pos = float(params.min_leaf)
        valid &= left_e >= ms_pos
        valid &= per_cut(KE) - left_e >= ms_pos
        inel = None
        if self.eligible is not None:
            inel_seg = np.bincount(node, weights=~self.eligible[b.rows], minlength=G) > 0
            if inel_seg.any():
                inel = self._ineligible_cuts(b, inel_seg, valid)
        total_w = b.total_w
        parent = _impurity(KCf, gini).ravel()
        table = None
        if b.integral and not gini and float(total_w.max()) < _TABLE_MAX:
            table = self._xlogx_table(int(total_w.max()))  # x ln x of integer counts
        KCr = [c.ravel().astype(np.intp) if b.integral else c.ravel() for c in KC]
        Cr = [c.ravel() for c in C]

        def cut_gain(jj, ii, gi, counts=False):
            """Gain of the cuts (column jj, position ii, node gi) [and their counts]."""
            kt, ft = jj * G + gi, jj * M + ii
            L = [c.take(ft) for c in Cr]
            KCt = [c.take(kt) for c in KCr]
            if table is not None and not counts:
                L = [c.astype(np.intp) for c in L]
                R = [KCt[k] - L[k] for k in range(K)]
                imp_l = (table.take(_sum_cols(L)) - _sum_cols([table.take(c) for c in L])) / _LN2
                imp_r = (table.take(_sum_cols(R)) - _sum_cols([table.take(c) for c in R])) / _LN2
                return (parent.take(kt) - imp_l - imp_r) / total_w.take(gi)
            R = [KCt[k] - L[k] for k in range(K)]
            if b.integral:
                L = [c.astype(float) for c in L]
                R = [c.astype(float) for c in R]
                KCt = [c.astype(float) for c in KCt]
            gain = (parent[kt] - _impurity(L, gini) - _impurity(R, gini)) / total_w[gi]
            return (gain, L, R, KCt) if counts else gain

        # Fayyad & Irani: moving the cut across rows of one class changes the gain convexly,
        # so a cut whose neighbouring cuts are valid and which moves rows of one class only
        # is never above both neighbours: skip it. The runs of skipped cuts next to a
        # (near-)best cut are scored afterwards, as rounding to 10 decimals could tie them.
        W = M - 1
        prune = _PRUNE and W > 2
        cand = valid
        if prune:
            skip = np.zeros_like(valid)
            skip[:, 1:-1] = valid[:, :-2] & valid[:, 1:-1] & valid[:, 2:]
            skip[:, 1:-1] &= ys[:, 1:-2] == ys[:, 2:-1]
            cand = valid & ~skip
        fc = np.flatnonzero(cand)
        if fc.size == 0:
            return out_ok, out_gain, out_score, out_thr
        jj = np.repeat(np.arange(p), np.count_nonzero(cand, axis=1))
        ii = fc - jj * W
        gi = pos_node[ii]
        key = jj * G + gi
        gain = cut_gain(jj, ii, gi)
        rgain = np.round(gain, _ROUND)
        n = key.size
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        sizes = np.diff(np.r_[first, n])
        gmax = np.maximum.reduceat(rgain, first)
        k = np.minimum.reduceat(np.where(rgain == np.repeat(gmax, sizes), np.arange(n), n),
                                first)
        gj, gg, i_best, g_best = jj[k], gi[k], ii[k], gain[k]
        if prune:
            ht = np.flatnonzero(gain >= np.repeat(gmax, sizes) - 2e-10)
            hpos = jj[ht] * W + ii[ht]
            flat_skip = skip.ravel()
            right = (ii[ht] < W - 1) & flat_skip[np.minimum(hpos + 1, p * W - 1)]
            left = (ii[ht] > 0) & flat_skip[np.maximum(hpos - 1, 0)]
            if right.any() or left.any():
                # A run of skipped cuts ends at the neighbouring boundary cut of its group.
                nxt = np.minimum(ht + 1, n - 1)
                prv = np.maximum(ht - 1, 0)
                lo = np.stack([ii[prv] + 1, ii[ht] + 1], axis=1).ravel()
                ln = np.stack([np.where(left, ii[ht] - ii[prv] - 1, 0),
                               np.where(right, ii[nxt] - ii[ht] - 1, 0)], axis=1).ravel()
                owner = np.repeat(np.repeat(ht, 2), ln)
                ni = _ranges(lo, ln)
                nj, ng = jj[owner], gi[owner]
                ngain = cut_gain(nj, ni, ng)
                nr = np.round(ngain, _ROUND)
                grp = np.cumsum(np.r_[True, key[1:] != key[:-1]])[owner] - 1
                nf = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]])
                ngrp = grp[nf]
                nmax = np.maximum.reduceat(nr, nf)
                nk = np.minimum.reduceat(
                    np.where(nr == np.repeat(nmax, np.diff(np.r_[nf, ni.size])),
                             np.arange(ni.size), ni.size), nf)
                # Merge with the boundary cuts' first maximum, in position order.
                take = (nmax > gmax[ngrp]) | ((nmax == gmax[ngrp]) & (ni[nk] < i_best[ngrp]))
                tg = ngrp[take]
                i_best[tg] = ni[nk[take]]
                g_best[tg] = ngain[nk[take]]
        ok = np.ones(gj.size, dtype=bool)
        if params.criterion == "gain_ratio":
            valid_pad = np.zeros((p, M), dtype=bool)
            valid_pad[:, :-1] = valid
            n_cuts = np.add.reduceat(valid_pad, starts, axis=1, dtype=np.int64)[gj, gg]
            _, L, R, KCt = cut_gain(gj, i_best, gg, counts=True)
            tw = total_w[gg]
            g_best = g_best - np.log2(n_cuts) / tw  # J48's MDL correction
            ok = g_best > 0
            si = _split_info([_sum_cols(L), _sum_cols(R)], tw - _sum_cols(KCt), tw)
            with np.errstate(invalid="ignore", divide="ignore"):
                score = np.where(si > 0, g_best / si, 0.0)
        else:
            score = g_best
        vi = V[gj, i_best]
        vn = V[gj, i_best + 1]
        thr = vi if params.threshold == "lower" else (vi + vn) / 2.0
        if inel is not None:
            thr = np.where(inel[0][gg], inel[1][gj, i_best], thr)
        thr = np.where(thr < vn, thr, vi)
        out_ok[gg, gj] = ok
        out_gain[gg, gj] = g_best
        out_score[gg, gj] = score
        out_thr[gg, gj] = thr
        return out_ok, out_gain, out_score, out_thr

    def _ineligible_cuts(self, b: _Batch, inel_seg: np.ndarray, valid: np.ndarray):
        """Cuts of nodes holding ineligible rows: thresholds from eligible values only.

        Restricts ``valid`` in place; returns (node flag, threshold per cut position).
        """
        S, V, seg, node = b.S, b.V, b.seg, b.node
        p, M = S.shape
        el = self.eligible[b.rows[S]] & ~np.isnan(V)
        pos = np.arange(M)
        prev_pos = np.maximum.accumulate(np.where(el, pos, -1), axis=1)[:, :-1]
        nxt_pos = np.minimum.accumulate(np.where(el, pos, M)[:, ::-1], axis=1)[:, ::-1][:, 1:]
        pos_node = node[:-1]
        rowj = np.arange(p)[:, None]
        prev = np.where(prev_pos >= seg[pos_node], V[rowj, np.maximum(prev_pos, 0)], -np.inf)
        nxt = np.where(nxt_pos < seg[pos_node + 1], V[rowj, np.minimum(nxt_pos, M - 1)],
                       np.inf)
        Vi, Vn = V[:, :-1], V[:, 1:]
        ok = np.isfinite(prev) & np.isfinite(nxt)
        if self.params.threshold == "lower":
            thr = prev
            ok &= prev == Vi
        else:
            with np.errstate(invalid="ignore"):
                thr = (prev + nxt) / 2.0
            ok &= (Vi <= thr) & (thr < Vn)
        valid &= ok | ~inel_seg[pos_node]
        return inel_seg, thr

    def _nominal_batch(self, b: _Batch):
        """Best test of every (node, nominal column): (ok, gain, score, value), (G, q);
        value is the branch-0 value of a binary test, -1 for a multiway test."""
        cell_size = self.nominal_idx.size * max(self.max_values, 1) * self.n_classes
        step = max(1, _NOMINAL_CELLS // cell_size)
        if b.G <= step:
            return self._nominal_nodes(b, 0, b.G)
        parts = [self._nominal_nodes(b, g, min(g + step, b.G)) for g in range(0, b.G, step)]
        return tuple(np.concatenate(arrays) for arrays in zip(*parts, strict=True))

    def _nominal_nodes(self, b: _Batch, g0: int, g1: int):
        """:meth:`_nominal_batch` for the nodes g0..g1-1 of the batch (bounded memory)."""
        params = self.params
        gini = params.criterion == "gini"
        cols = self.nominal_idx
        K, V, q, G = self.n_classes, self.max_values, cols.size, g1 - g0
        lo, hi = b.seg[g0], b.seg[g1]
        rows, w = b.rows[lo:hi], b.w[lo:hi]
        we = w if b.we is None else b.we[lo:hi]
        codes = self.X[np.ix_(rows, cols)]
        known = ~np.isnan(codes)
        ci = np.where(known, codes, 0).astype(np.int64)
        y = self.y[rows]
        cell = ((b.node[lo:hi] - g0)[:, None] * q + np.arange(q)[None, :]) * V + ci
        flat = cell * K + y[:, None]
        counts = np.bincount(
            flat[known], weights=np.broadcast_to(w[:, None], flat.shape)[known],
            minlength=G * q * V * K,
        ).reshape(G, q, V, K)
        elig = np.bincount(
            cell[known], weights=np.broadcast_to(we[:, None], cell.shape)[known],
            minlength=G * q * V,
        ).reshape(G, q, V)
        known_counts = counts.sum(axis=2)  # (G, q, K)
        wk = _lastsum(known_counts)
        parent_imp = _impurity_last(known_counts, gini)
        tw = b.total_w[g0:g1]
        ok = np.zeros((G, q), dtype=bool)
        gain = np.zeros((G, q))
        score = np.zeros((G, q))
        value = np.full((G, q), -1, dtype=np.int64)
        ml = params.min_leaf
        for j in range(q):
            nv = int(self.n_values[cols[j]])
            if nv == 0:
                continue
            cnt = counts[:, j, :nv]  # (G, nv, K)
            if not params.binary_splits:
                ok[:, j] = (elig[:, j, :nv] >= ml).sum(axis=1) >= 2
                g = (parent_imp[:, j] - _lastsum(_impurity_last(cnt, gini))) / tw
                gain[:, j] = g
                if params.criterion == "gain_ratio":
                    br = _lastsum(cnt)  # (G, nv)
                    si = _split_info([br[:, v] for v in range(nv)], tw - wk[:, j], tw)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        score[:, j] = np.where(si > 0, g / si, 0.0)
                else:
                    score[:, j] = g
                continue
            # One value versus the rest (J48 -B).
            el = elig[:, j, :nv]
            okv = (el >= ml) & (_lastsum(el)[:, None] - el >= ml)
            ok[:, j] = okv.any(axis=1)
            if not ok[:, j].any():
                continue
            rest = known_counts[:, j][:, None, :] - cnt
            gains = (parent_imp[:, j][:, None] - _impurity_last(cnt, gini)
                     - _impurity_last(rest, gini)) / tw[:, None]
            if params.criterion == "gain_ratio":
                si = _split_info([_lastsum(cnt), _lastsum(rest)], (tw - wk[:, j])[:, None],
                                 tw[:, None])
                with np.errstate(invalid="ignore", divide="ignore"):
                    scores = np.where(si > 0, gains / si, 0.0)
            else:
                scores = gains
            scores = np.where(okv, np.round(scores, _ROUND), -np.inf)
            v = np.argmax(scores, axis=1)
            rg = np.arange(G)
            value[:, j] = v
            gain[:, j] = gains[rg, v]
            score[:, j] = scores[rg, v]
        return ok, gain, score, value
def stops(params: GrowParams, counts: np.ndarray, eligible_weight, depth) -> np.ndarray:
    """The grower's stopping rules for count rows (..., K), vectorised: no weight, too
    little eligible weight for two branches of ``min_leaf``, one class only, or
    ``max_depth`` reached. The one definition every builder and engine uses."""
    total = _lastsum(counts)
    out = ~(total > 0) | (np.asarray(eligible_weight) < 2 * params.min_leaf)
    out |= counts.max(axis=-1) >= total - 1e-9 * np.maximum(total, 1.0)
    if params.max_depth is not None:
        out |= np.asarray(depth) >= params.max_depth
    return out


def segment_stops(finder: SplitFinder, rows: np.ndarray, w: np.ndarray, seg: np.ndarray,
                  node: np.ndarray, counts: np.ndarray, depth) -> np.ndarray:
    """:func:`node_stops` of many nodes at once — node g holds ``rows[seg[g]:seg[g+1]]``
    (``node`` names each row's node) — with the eligible weights summed exactly as
    ``.sum()`` would, node by node."""
    ew = w if finder.eligible is None else w * finder.eligible[rows]
    elig_w = _ragged_sums(ew, seg, _exact_segments(w, node, seg.size - 1))
    return stops(finder.params, counts, elig_w, depth)


def node_stops(finder: SplitFinder, rows: np.ndarray, w: np.ndarray, counts: np.ndarray,
               depth: int) -> bool:
    """:func:`stops` for one node given by its rows (x's rows may be ineligible)."""
    elig_w = w.sum() if finder.eligible is None else (w * finder.eligible[rows]).sum()
    return bool(stops(finder.params, counts, elig_w, depth))


@dataclass
class GrownNodes:
    """Flat arrays of a grown tree plus each node's training rows (CSR by node)."""

    feature: np.ndarray
    threshold: np.ndarray
    children_ptr: np.ndarray
    children: np.ndarray
    value_branch_ptr: np.ndarray
    value_branch: np.ndarray
    counts: np.ndarray
    depth: np.ndarray
    rows_ptr: np.ndarray
    rows_idx: np.ndarray
    rows_w: np.ndarray


def route_rows(
    X: np.ndarray, idx: np.ndarray, w: np.ndarray, split: Split, child_weight: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Send a node's rows to its children; unknown values go everywhere, weighted (C4.5).

    ``child_weight`` is the known weight per branch; an unknown row's weight is shared in
    proportion to it.
    """
    vals = X[idx, split.feature]
    missing = np.isnan(vals)
    if split.value_branch is None:
        branch = (vals > split.threshold).astype(np.int64)
    else:
        branch = split.value_branch[np.where(missing, 0, vals).astype(np.int64)]
    branch[missing] = -1
    known_total = child_weight.sum()
    out = []
    for b in range(split.n_branches):
        sel = branch == b
        if missing.any() and known_total > 0 and child_weight[b] > 0:
            frac = child_weight[b] / known_total
            sel_m = missing
            ci = np.concatenate([idx[sel], idx[sel_m]])
            cw = np.concatenate([w[sel], w[sel_m] * frac])
            order = np.argsort(ci, kind="stable")
            out.append((ci[order], cw[order]))
        else:
            out.append((idx[sel], w[sel]))
    return out


def branch_known_weights(X, idx, w, split: Split) -> np.ndarray:
    """Weight of rows with a known value in each branch of ``split``."""
    vals = X[idx, split.feature]
    known = ~np.isnan(vals)
    if split.value_branch is None:
        branch = (vals[known] > split.threshold).astype(np.int64)
    else:
        branch = split.value_branch[vals[known].astype(np.int64)]
    return np.bincount(branch, weights=w[known], minlength=split.n_branches)




def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for every (s, n)."""
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    ends = np.cumsum(lens)
    return np.repeat(starts - (ends - lens), lens) + np.arange(total)


def grow(
    finder: SplitFinder,
    idx: np.ndarray,
    w: np.ndarray,
    *,
    depth: int = 0,
) -> GrownNodes:
    """Grow a (sub)tree from rows ``idx`` with weights ``w``; node 0 is its root.

    Nodes are numbered in creation order of the depth-first builder (pop a node, create its
    children, push them in reverse), so every child's id is larger than its parent's. Each
    node's rows keep the order of ``idx``; an unknown-valued row sent to several children
    takes its place among them by row index (as :func:`route_rows` does).
    """
    idx = np.asarray(idx, dtype=np.int64)
    w = np.asarray(w, dtype=float)
    if idx.size > 1 and not bool(np.all(idx[1:] >= idx[:-1])):
        # Children of unsorted rows are re-sorted where unknown values join them; the
        # partitioned orders of the level-wise builder assume rows in increasing order.
        return _grow_nodewise(finder, idx, w, depth=depth)
    return _grow_levels(finder, idx, w, depth)


class _Level:
    """All nodes created at one depth: their rows (CSR), class counts and chosen tests."""

    def __init__(self, base, rows, w, lens, parent, branch, K, y):
        self.base = base
        self.rows = rows
        self.w = w
        self.lens = lens
        self.parent = parent
        self.branch = branch
        n = lens.size
        self.seg = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=self.seg[1:])
        self.node = np.repeat(np.arange(n), lens)
        self.counts = np.bincount(self.node * K + y[rows], weights=w,
                                  minlength=n * K).reshape(n, K).astype(float)
        self.feature = np.full(n, -1, dtype=np.int64)
        self.threshold = np.full(n, np.nan)


def _grow_levels(finder: SplitFinder, idx: np.ndarray, w: np.ndarray, depth0: int) -> GrownNodes:
    X, y, K = finder.X, finder.y, finder.n_classes
    eligible = finder.eligible
    p = finder.numeric_idx.size
    is_nominal = np.zeros(X.shape[1], dtype=bool)
    is_nominal[finder.nominal_idx] = True
    levels: list[_Level] = []
    value_branch: dict[int, np.ndarray] = {}
    lvl = _Level(0, idx, w, np.array([idx.size]), np.array([-1]), np.array([0]), K, y)
    pending = None  # how the previous batch's entries were sent to this level's nodes
    while True:
        levels.append(lvl)
        n = lvl.lens.size
        counts = lvl.counts
        active = ~segment_stops(finder, lvl.rows, lvl.w, lvl.seg, lvl.node, counts,
                                depth0 + len(levels) - 1)
        if not active.any():
            break
        # ------------------------------------------------ the batch of active nodes
        act = np.flatnonzero(active)
        keep = active[lvl.node]
        b_rows, b_w = lvl.rows[keep], lvl.w[keep]
        b_seg = np.zeros(act.size + 1, dtype=np.int64)
        np.cumsum(lvl.lens[act], out=b_seg[1:])
        b_we = None if eligible is None else b_w * eligible[b_rows]
        if pending is None:
            # The root: sorted once. Rows with missing values (numeric or nominal) get
            # fractional weights in children, whose sums depend on the order of ties.
            any_order = not np.isnan(X[b_rows]).any() and _exact_any_order(
                b_w, X[np.ix_(b_rows, finder.numeric_idx)].T, missing_ok=False)
            batch = finder._single_batch(b_rows, b_w, b_we, any_order=any_order)
        else:
            S = V = Y = None
            if p:
                new_id = np.cumsum(keep) - 1
                prev_S, prev_V, prev_Y, sent = pending
                parts_S, parts_V, parts_Y = [], [], []
                for ent, lo in sent:
                    kept = keep[lo : lo + ent.size]
                    mark = np.zeros(prev_S.shape[1], dtype=bool)
                    mark[ent[kept]] = True
                    nid = np.zeros(prev_S.shape[1], dtype=_index_dtype(b_rows.size))
                    nid[ent[kept]] = new_id[lo : lo + ent.size][kept]
                    sel = np.flatnonzero(mark[prev_S])
                    parts_S.append(nid[prev_S.ravel()[sel]].reshape(p, -1))
                    parts_V.append(prev_V.ravel()[sel].reshape(p, -1))
                    parts_Y.append(prev_Y.ravel()[sel].reshape(p, -1))
                S = np.concatenate(parts_S, axis=1)
                V = np.concatenate(parts_V, axis=1)
                Y = np.concatenate(parts_Y, axis=1)
            batch = _Batch(b_seg, b_rows, b_w, b_we, S, V, Y)
        choice = finder._evaluate(batch)
        split = choice.feature >= 0
        if not split.any():
            break
        sp = act[split]
        lvl.feature[sp] = choice.feature[split]
        lvl.threshold[sp] = choice.threshold[split]
        for g in np.flatnonzero(split):
            if g in choice.value_branch:
                value_branch[lvl.base + int(act[g])] = choice.value_branch[g]
        # ------------------------------------------------ route the rows (route_rows)
        G, ne = batch.G, batch.node
        nbr = np.where(split, choice.n_branches, 0)
        sp_e = split[ne]
        f_e = np.where(sp_e, choice.feature[ne], 0)
        vals = X[batch.rows, f_e]
        missing = sp_e & np.isnan(vals)
        known = sp_e & ~missing
        branch = np.full(ne.size, -1, dtype=np.int64)
        nom_e = known & is_nominal[f_e]
        num_e = known & ~is_nominal[f_e]
        branch[num_e] = vals[num_e] > choice.threshold[ne[num_e]]
        if nom_e.any():
            vb_nodes = sorted(choice.value_branch)
            vb_off = np.zeros(G, dtype=np.int64)
            sizes = [choice.value_branch[g].size for g in vb_nodes]
            vb_off[vb_nodes] = np.cumsum([0, *sizes[:-1]])
            vb_flat = np.concatenate([choice.value_branch[g] for g in vb_nodes])
            branch[nom_e] = vb_flat[vb_off[ne[nom_e]] + vals[nom_e].astype(np.int64)]
        maxnb = int(nbr.max())
        cw = np.bincount(ne[known] * maxnb + branch[known], weights=batch.w[known],
                         minlength=G * maxnb).reshape(G, maxnb)
        known_total = cw[:, 0].copy()
        for b in range(1, maxnb):  # child_weight.sum(): sequential below 8 branches
            known_total = known_total + cw[:, b]
        for g in np.flatnonzero(nbr >= _SEQ_SUM):
            known_total[g] = cw[g, : nbr[g]].sum()
        has_missing = np.bincount(ne[missing], minlength=G) > 0
        to_all = has_missing[:, None] & (known_total > 0)[:, None] & (cw > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = cw / known_total[:, None]
        c_rows, c_w, c_lens, c_parent, c_branch, sent = [], [], [], [], [], []
        lo = 0
        for b in range(maxnb):
            exists = nbr > b
            sel = exists[ne] & ((branch == b) | (missing & to_all[ne, b]))
            ent = np.flatnonzero(sel)
            cw_b = batch.w[ent]
            m = missing[ent]
            if m.any():
                cw_b[m] = cw_b[m] * frac[ne[ent[m]], b]
            c_rows.append(batch.rows[ent])
            c_w.append(cw_b)
            c_lens.append(np.bincount(ne[ent], minlength=G)[exists])
            c_parent.append(lvl.base + act[exists])
            c_branch.append(np.full(int(exists.sum()), b))
            sent.append((ent, lo))
            lo += ent.size
        pending = (batch.S, batch.V, batch.Y, sent)
        lvl = _Level(lvl.base + n, np.concatenate(c_rows), np.concatenate(c_w),
                     np.concatenate(c_lens), np.concatenate(c_parent),
                     np.concatenate(c_branch), K, y)
    return _assemble(levels, value_branch, depth0, K)


def _ragged_sums(x: np.ndarray, seg: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """``x[seg[g]:seg[g+1]].sum()`` for every segment g (empty ones too), bit for bit."""
    x0 = np.where(exact[np.repeat(np.arange(seg.size - 1), np.diff(seg))], x, 0.0)
    cs = np.zeros(x.size + 1)
    np.cumsum(x0, out=cs[1:])
    out = cs[seg[1:]] - cs[seg[:-1]]
    for g in np.flatnonzero(~exact):
        out[g] = x[seg[g] : seg[g + 1]].sum()
    return out


def _assemble(levels: list[_Level], value_branch: dict[int, np.ndarray], depth0: int,
              K: int) -> GrownNodes:
    """Flat arrays with the node ids of the depth-first builder."""
    parent = np.concatenate([lv.parent for lv in levels])
    branch = np.concatenate([lv.branch for lv in levels])
    T = parent.size
    has_parent = np.flatnonzero(parent >= 0)
    kids = has_parent[np.lexsort((branch[has_parent], parent[has_parent]))]
    n_kids = np.bincount(parent[has_parent], minlength=T)
    kid_ptr = np.zeros(T + 1, dtype=np.int64)
    np.cumsum(n_kids, out=kid_ptr[1:])
    # Depth-first numbering: pop a node, number its children, push them in reverse.
    new = [0] * T
    kid_list, ptr_list = kids.tolist(), kid_ptr.tolist()
    nxt, stack = 1, [0]
    while stack:
        t = stack.pop()
        lo, hi = ptr_list[t], ptr_list[t + 1]
        if hi > lo:
            ks = kid_list[lo:hi]
            for i, k in enumerate(ks):
                new[k] = nxt + i
            nxt += hi - lo
            stack.extend(reversed(ks))
    new_id = np.array(new, dtype=np.int64)
    perm = np.empty(T, dtype=np.int64)
    perm[new_id] = np.arange(T)
    depth = np.concatenate([np.full(lv.lens.size, depth0 + d) for d, lv in enumerate(levels)])
    lens = np.concatenate([lv.lens for lv in levels])
    ent_ptr = np.zeros(T + 1, dtype=np.int64)
    np.cumsum(lens, out=ent_ptr[1:])
    rows = np.concatenate([lv.rows for lv in levels]).astype(np.int64)
    w = np.concatenate([lv.w for lv in levels]).astype(float)
    take = _ranges(ent_ptr[perm], lens[perm])
    r_ptr = np.zeros(T + 1, dtype=np.int64)
    np.cumsum(lens[perm], out=r_ptr[1:])
    ch_ptr = np.zeros(T + 1, dtype=np.int64)
    np.cumsum(n_kids[perm], out=ch_ptr[1:])
    children = new_id[kids[_ranges(kid_ptr[perm], n_kids[perm])]]
    vb_sizes = np.zeros(T, dtype=np.int64)
    for t, v in value_branch.items():
        vb_sizes[t] = v.size
    vb_ptr = np.zeros(T + 1, dtype=np.int64)
    np.cumsum(vb_sizes[perm], out=vb_ptr[1:])
    vb_order = sorted(value_branch, key=lambda t: new[t])
    return GrownNodes(
        feature=np.concatenate([lv.feature for lv in levels])[perm],
        threshold=np.concatenate([lv.threshold for lv in levels])[perm],
        children_ptr=ch_ptr,
        children=children.astype(np.int64),
        value_branch_ptr=vb_ptr,
        value_branch=np.concatenate(
            [np.empty(0, np.int64)] + [value_branch[t] for t in vb_order]
        ).astype(np.int64),
        counts=np.concatenate([lv.counts for lv in levels]).reshape(T, K)[perm],
        depth=depth[perm],
        rows_ptr=r_ptr,
        rows_idx=rows[take],
        rows_w=w[take],
    )


def _grow_nodewise(
    finder: SplitFinder, idx: np.ndarray, w: np.ndarray, *, depth: int = 0
) -> GrownNodes:
    """The straightforward builder: one :meth:`SplitFinder.best_split` per node."""
    X, y, K = finder.X, finder.y, finder.n_classes
    feature: list[int] = []
    threshold: list[float] = []
    children: list[list[int]] = []
    value_branch: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    depths: list[int] = []
    rows: list[tuple[np.ndarray, np.ndarray]] = []

    def new_node(nidx, nw, d) -> int:
        feature.append(-1)
        threshold.append(np.nan)
        children.append([])
        value_branch.append(np.empty(0, dtype=np.int64))
        counts.append(np.bincount(y[nidx], weights=nw, minlength=K).astype(float))
        depths.append(d)
        rows.append((nidx, nw))
        return len(feature) - 1

    stack = [new_node(idx, w, depth)]
    while stack:
        node = stack.pop()
        nidx, nw = rows[node]
        if node_stops(finder, nidx, nw, counts[node], depths[node]):
            continue
        split = finder.best_split(nidx, nw)
        if split is None:
            continue
        feature[node] = split.feature
        threshold[node] = split.threshold
        if split.value_branch is not None:
            value_branch[node] = split.value_branch
        child_known = branch_known_weights(X, nidx, nw, split)
        kids = [
            new_node(ci, cw, depths[node] + 1)
            for ci, cw in route_rows(X, nidx, nw, split, child_known)
        ]
        children[node] = kids
        stack.extend(reversed(kids))

    n = len(feature)
    ch_ptr = np.zeros(n + 1, dtype=np.int64)
    ch_ptr[1:] = np.cumsum([len(c) for c in children])
    vb_ptr = np.zeros(n + 1, dtype=np.int64)
    vb_ptr[1:] = np.cumsum([v.size for v in value_branch])
    r_ptr = np.zeros(n + 1, dtype=np.int64)
    r_ptr[1:] = np.cumsum([r[0].size for r in rows])
    return GrownNodes(
        feature=np.array(feature, dtype=np.int64),
        threshold=np.array(threshold, dtype=float),
        children_ptr=ch_ptr,
        children=np.array([c for cs in children for c in cs], dtype=np.int64),
        value_branch_ptr=vb_ptr,
        value_branch=(
            np.concatenate(value_branch).astype(np.int64) if n else np.empty(0, np.int64)
        ),
        counts=np.array(counts, dtype=float).reshape(n, K),
        depth=np.array(depths, dtype=np.int64),
        rows_ptr=r_ptr,
        rows_idx=np.concatenate([r[0] for r in rows]).astype(np.int64),
        rows_w=np.concatenate([r[1] for r in rows]).astype(float),
    )
