"""The split search: growing parameters, and the best test of every node of a batch.

:class:`SplitFinder` scores a *batch* of nodes at once (a
:class:`~treecert.tree.segments._Batch`): their rows are laid end to end (node g owns a
segment), each numeric column is sorted within every segment and every (node, column)'s best
cut is found with a few array operations and segmented reductions
(:class:`~treecert.tree.numeric_search.NumericSearch`); nominal attributes are tallied with
one ``bincount``. :meth:`SplitFinder.best_split` is the batch of one node (one ``argsort`` of
its numeric columns), callable on any row subset. The grower (:mod:`treecert.tree.grow`) and
the transductive engines share it.

Rules, and where they come from
-------------------------------
* ``info_gain`` (default; Clus and the TPCE paper's experiments): the admissible test of
  largest information gain. ``gini``: the same with the Gini decrease (CART).
  ``gain_ratio``: J48's ``C45ModelSelection`` — best gain ratio among tests whose gain is at
  least the average gain (minus 1e-3), numeric gain MDL-corrected by log2(#cuts)/N (and no
  numeric test unless that is at least 1e-6, Weka's ``Utils.smOrEq``), numeric
  branches at least ``clamp(0.1 N_known / K, min_leaf, 25)``.
* Missing values (C4.5): gain is computed on the instances whose value is known and scaled by
  the known fraction; gain ratio's split information counts the unknown part as a branch;
  an instance with an unknown value goes down every branch with a weight proportional to the
  branch's known weight (fractional instances).
* Numeric tests are ``x <= threshold`` (left) versus ``x > threshold``. Candidate thresholds
  come only from *eligible* training values: ``threshold="midpoint"`` puts the threshold
  halfway between two consecutive eligible values (scikit-learn, rpart);
  ``threshold="lower"`` uses the lower of the two (C4.5 uses an observed value).
  ``threshold="j48"`` is J48's rule (``C45Split``): a cut only between values more than
  1e-5 apart (:func:`~treecert.tree.numeric_search.distinct_cuts`), grown at the midpoint,
  then moved to the largest value of the *whole* training set not above it
  (:mod:`treecert.tree.j48_cuts`, applied by ``DecisionTree.fit``). That partitions the
  node's training rows as the midpoint does and differs for unseen values in between.
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
* Random attribute subsets (``max_features``, Breiman's random forests, 2001): with a
  :class:`~treecert.tree.feature_draw.FeatureDraw` set on the finder, each node's test is
  chosen among a random subset of the attributes, drawn for the nodes of a batch in order
  from one seeded generator; a node none of whose drawn attributes has an admissible test
  chooses among all of them
  (as scikit-learn keeps drawing until it finds a usable feature), so the subsets never stop
  growth early. Without a draw (the default) every attribute is searched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treecert.data.schema import integer_codes
from treecert.errors import ConfigError
from treecert.tree.impurity import (
    _ROUND,
    _SEQ_SUM,
    _impurity_last,
    _lastsum,
    _split_info,
    _split_info_of,
    _total_and_impurity,
    _xlogx,
)
from treecert.tree.numeric_search import NumericSearch
from treecert.tree.segments import (
    _Batch,
    _class_dtype,
    _exact_any_order,
    _index_dtype,
    flat_nonzero,
)

CRITERIA = ("info_gain", "gain_ratio", "gini")
THRESHOLD_RULES = ("midpoint", "lower", "j48")
_EPS = 1e-12
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
                f"unknown threshold rule '{self.threshold}'.", "Choose midpoint, lower or j48."
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

    def fill(self, again: np.ndarray, rest: _Choice) -> _Choice:
        """This choice with nodes ``again`` taking ``rest``'s tests (``rest``'s node i is
        node ``again[i]``): a node that found nothing among its drawn attributes, searched
        again among all of them."""
        for name in ("feature", "threshold", "n_branches", "score"):
            getattr(self, name)[again] = getattr(rest, name)
        for g, branch in rest.value_branch.items():
            self.value_branch[int(again[g])] = branch
        return self


def counted_in_average(is_nominal: np.ndarray, n_values: np.ndarray,
                       n_total_rows: float) -> tuple[bool, np.ndarray]:
    """J48's "many values" rule for a training set of ``n_total_rows`` rows: a nominal
    column of 0.3·N values or more is left out of gain ratio's average gain, unless every
    column is nominal with that many (then all count). Returns (that exception, whether
    each column — numeric ones first, then nominal — counts)."""
    numeric_idx, nominal_idx = flat_nonzero(~is_nominal), flat_nonzero(is_nominal)
    multi_val = bool(numeric_idx.size == 0 and nominal_idx.size > 0
                     and np.all(n_values[nominal_idx] >= 0.3 * n_total_rows))
    many_rule = 0.3 * n_total_rows
    return multi_val, np.array(
        [True] * numeric_idx.size
        + [multi_val or int(n_values[f]) < many_rule for f in nominal_idx], dtype=bool)


class SplitFinder(NumericSearch):
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

    #: Whether every test offered is known to pass gain ratio's average-gain filter, so the
    #: average need not be taken: a finder restricted to some columns whose membership the
    #: transductive engine has proven (:func:`treecert.transductive.settled_tests.among`),
    #: where the average of its own columns would not be J48's.
    pool_proven: bool = False
    #: Random attribute subsets (``max_features``,
    #: :class:`~treecert.tree.feature_draw.FeatureDraw`); None searches every attribute.
    feature_draw = None

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
        self.numeric_idx = flat_nonzero(~is_nominal)
        self.nominal_idx = flat_nonzero(is_nominal)
        self.n_values = n_values
        self.max_values = int(n_values[self.nominal_idx].max()) if self.nominal_idx.size else 0
        self.n_total_rows = float(n_total_rows if n_total_rows is not None else X.shape[0])
        self.multi_val, self._in_avg = counted_in_average(is_nominal, n_values,
                                                          self.n_total_rows)
        self._fid = np.concatenate([self.numeric_idx, self.nominal_idx]).astype(np.int64)
        self._same_width = _columns_by_width(n_values[self.nominal_idx])
        # one read-only value_branch array per nominal test (f, v): :meth:`_value_branch`
        self._value_branches: dict[tuple[int, int], np.ndarray] = {}

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
        for j in flat_nonzero(ok[0]):
            f = int(self.nominal_idx[j])
            out.append((f, float(gain[0, j]), float(score[0, j]), np.nan,
                        self._value_branch(f, int(vb[0, j])), bool(self._in_avg[
                            self.numeric_idx.size + j])))
        return out

    # ------------------------------------------------------------------ batch scoring
    def _value_branch(self, f: int, v: int) -> np.ndarray:
        """Branch per value of feature f's test: multiway (v = -1) or v versus the rest —
        one read-only array per (f, v), shared by the nodes that choose that test."""
        vb = self._value_branches.get((f, v))
        if vb is None:
            nv = int(self.n_values[f])
            if v < 0:
                vb = np.arange(nv)
            else:
                vb = np.ones(nv, dtype=np.int64)
                vb[v] = 0
            vb.flags.writeable = False
            self._value_branches[(f, v)] = vb
        return vb

    def _evaluate(self, b: _Batch) -> _Choice:
        """The chosen test of every node of the batch (the rules in the module docstring)."""
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
        return self._choose(ok, gain, score, thr, vb)

    def _choose(self, ok: np.ndarray, gain: np.ndarray, score: np.ndarray, thr: np.ndarray,
                vb: np.ndarray) -> _Choice:
        """The chosen test of every node from its candidates (numeric columns first, then
        nominal): ``ok``, ``gain``, ``score`` (G, p + q), numeric thresholds (G, p) and the
        branch-0 value of binary nominal tests (G, q). Shared with the engine's searches of
        many labels at once (:mod:`treecert.transductive.label_search`)."""
        if self.feature_draw is None or ok.shape[0] == 0:
            return self._choose_among(ok, gain, score, thr, vb)
        allowed = self.feature_draw.masks(ok.shape[0])[:, self._fid]
        first = self._choose_among(ok & allowed, gain, score, thr, vb)
        again = flat_nonzero(first.feature < 0)
        if again.size:  # nothing admissible among the drawn attributes: all of them
            first.fill(again, self._choose_among(ok[again], gain[again], score[again],
                                                 thr[again], vb[again]))
        return first

    def _choose_among(self, ok: np.ndarray, gain: np.ndarray, score: np.ndarray,
                      thr: np.ndarray, vb: np.ndarray) -> _Choice:
        """:meth:`_choose` among the candidates ``ok``."""
        params = self.params
        G, p, q = ok.shape[0], self.numeric_idx.size, self.nominal_idx.size
        if params.criterion == "gain_ratio" and self.pool_proven:
            pool = ok & (score > 1e-6)
        elif params.criterion == "gain_ratio":
            counted = ok & self._in_avg
            # Python's sum() over the candidate list, in its order: a cumulative sum adds
            # one column after the other, as that loop does (never pairwise)
            acc = (np.cumsum(np.where(counted, gain, 0.0), axis=1)[:, -1] if p + q
                   else np.zeros(G))
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
        for g in flat_nonzero(has & ((near != same).any(axis=1))):
            cands = flat_nonzero(pool[g])
            best[g] = max(cands, key=lambda c, g=g: (round(float(score[g, c]), _ROUND),
                                                     -int(self._fid[c])))
        rows = flat_nonzero(has)
        col = best[rows]
        feature = np.full(G, -1, dtype=np.int64)
        feature[rows] = self._fid[col]
        threshold = np.full(G, np.nan)
        n_branches = np.zeros(G, dtype=np.int64)
        is_num = col < p
        threshold[rows[is_num]] = thr[rows[is_num], col[is_num]]
        n_branches[rows[is_num]] = 2
        nom = rows[~is_num]
        c = col[~is_num] - p
        f, v = self.nominal_idx[c], vb[nom, c]
        nv = self.n_values[f]
        n_branches[nom] = np.where(v < 0, nv, np.minimum(nv, 2))  # multiway: one per value
        value_branch = dict(zip(nom.tolist(), map(self._value_branch, f.tolist(), v.tolist()),
                                strict=True))
        out_score = np.zeros(G)
        out_score[rows] = score[rows, col]
        return _Choice(feature, threshold, n_branches, out_score, value_branch)

    def _nominal_batch(self, b: _Batch):
        """Best test of every (node, nominal column): (ok, gain, score, value), (G, q);
        value is the branch-0 value of a binary test, -1 for a multiway test."""
        cell_size = self.nominal_idx.size * (self.max_values + 1) * self.n_classes
        step = max(1, _NOMINAL_CELLS // cell_size)
        if b.G <= step:
            return self._nominal_nodes(b, 0, b.G)
        parts = [self._nominal_nodes(b, g, min(g + step, b.G)) for g in range(0, b.G, step)]
        return tuple(np.concatenate(arrays) for arrays in zip(*parts, strict=True))

    def nominal_codes(self) -> tuple[np.ndarray, int, np.ndarray | None]:
        """(codes, stride, columns): every row's value code (n, q) in the nominal columns
        of the finder that made them, as the smallest unsigned integers that hold them (a
        byte each where no column has over 255 values: an eighth of X's share), an unknown
        value coded ``stride - 1`` — one past the widest column's values where any is
        unknown (else stride is the widest column's count) —, and the positions of this
        finder's columns among them (None: all). Kept on the finder, and shared by the
        finders that search some of its columns
        (:func:`~treecert.transductive.settled_tests.among`)."""
        got = self.__dict__.get("_nominal_codes")
        if got is None:
            values = self.X[:, self.nominal_idx]
            unknown = np.isnan(values)
            stride = self.max_values + bool(unknown.any())
            codes = integer_codes(values, stride - 1, np.min_scalar_type(max(stride - 1, 0)))
            got = self._nominal_codes = codes, stride, None
        return got

    def row_written(self, i: int) -> None:
        """Row ``i`` of X was written in place (the path engine's spare row, x): its kept
        codes (:meth:`nominal_codes`) follow, or are dropped where they cannot."""
        got = self.__dict__.get("_nominal_codes")
        if got is None:
            return
        codes, stride, _ = got
        values = self.X[i, self.nominal_idx]
        if codes.flags.writeable and (stride > self.max_values or not np.isnan(values).any()):
            codes[i] = integer_codes(values, stride - 1)
        else:
            del self._nominal_codes

    def _nominal_tally(self, b: _Batch, g0: int, g1: int) -> tuple[np.ndarray, np.ndarray]:
        """Class weights (G, q, V, K) and eligible weights (G, q, V) per (node, nominal
        column, value) of the nodes g0..g1-1, rows with an unknown value left out; each cell
        summed over the node's rows in their order (``bincount``: one after the other).

        An unknown value's entry goes to its column's extra cell past the values (the
        :meth:`nominal_codes`' stride), dropped after the count: no mask, and every kept
        cell adds the same entries in the same order."""
        codes, S, columns = self.nominal_codes()
        K, V, q, G = self.n_classes, self.max_values, self.nominal_idx.size, g1 - g0
        lo, hi = b.seg[g0], b.seg[g1]
        rows, w = b.rows[lo:hi], b.w[lo:hi]
        we = w if b.we is None else b.we[lo:hi]
        codes = codes.take(rows, axis=0)  # (rows, q) small integers
        if columns is not None:
            codes = codes[:, columns]
        # (node, column, value), row-major; then ((node, column, value), class) in place:
        # every step on the one (rows, q) array of indices, none of that size beside it
        cell = np.add(codes, np.arange(0, q * S, S, dtype=np.intp))
        cell += ((b.node[lo:hi] - g0) * (q * S))[:, None]
        w_q = np.repeat(w, q)
        elig = np.bincount(cell.ravel(), weights=w_q if we is w else np.repeat(we, q),
                           minlength=G * q * S)
        cell *= K
        cell += self.y.take(rows)[:, None]
        counts = np.bincount(cell.ravel(), weights=w_q, minlength=G * q * S * K)
        counts, elig = counts.reshape(G, q, S, K), elig.reshape(G, q, S)
        if S > V:  # the unknown values' cells dropped
            counts, elig = (np.ascontiguousarray(counts[:, :, :V]),
                            np.ascontiguousarray(elig[:, :, :V]))
        return counts, elig

    # Hooks: what the nominal scores read of the last :meth:`_nominal_tally`'s counts
    # (G, q, V, K). The transductive engine's shared tallies answer them per group of nodes
    # with the same training rows, with x's cells apart, never building every node's counts.
    def _node_counts(self, counts) -> np.ndarray:
        """Every node's class weights per (column, value) (G, q, V, K)."""
        return counts

    def _known_counts(self, counts) -> np.ndarray:
        """Class weights of the known values per (node, column) (G, q, K)."""
        return sum_over_values(counts)

    def _known_impurity(self, counts, gini: bool,
                        known_counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Weight and N·impurity (G, q) of the known values of every (node, column), from
        their class weights (``known_counts``: :meth:`_known_counts`, if taken already)."""
        if known_counts is None:
            known_counts = self._known_counts(counts)
        return _total_and_impurity(known_counts, gini)

    def _value_impurity(self, counts, js: slice | np.ndarray, nv: int,
                        gini: bool) -> np.ndarray:
        """N·impurity (G, len(js), nv) of every (node, value) of the nominal columns ``js``
        (local indices, a slice or an array, all with ``nv`` values)."""
        return _impurity_last(counts[:, js, :nv], gini)

    def _value_weights(self, counts, js: slice | np.ndarray, nv: int) -> np.ndarray:
        """Weight (G, len(js), nv) of every (node, value) of the nominal columns ``js``:
        the class weights summed as :func:`_lastsum` sums them."""
        return _lastsum(counts[:, js, :nv])

    def _value_weight_terms(self, counts, js: slice | np.ndarray, nv: int) -> np.ndarray:
        """w ln w of :meth:`_value_weights`: the split information's terms, added along
        the values as :func:`~treecert.tree.impurity._split_info` adds its branches."""
        return _xlogx(self._value_weights(counts, js, nv))

    def _multiway_ok(self, counts, elig: np.ndarray, js: slice | np.ndarray,
                     nv: int) -> np.ndarray:
        """Whether the multiway test of every (node, column of ``js``) has two branches
        of ``min_leaf`` eligible weight (J48), from the eligible weights per value ``elig``
        (G, q, V). Many (node, column) pairs count their branches one value after the
        other (small integer additions: a reduction along the short last axis costs up to
        four times as much there, and less than the additions' calls for a few pairs)."""
        heavy = elig[:, js, :nv] >= self.params.min_leaf
        if self.params.min_leaf <= 0:  # the values a narrower column lacks weigh 0: no branch
            heavy &= np.arange(nv) < self.n_values[self.nominal_idx[js]][:, None]
        dtype = np.int8 if nv < 128 else np.int64  # counts up to nv, never wrapped
        if heavy.shape[0] * heavy.shape[1] < 256:
            return heavy.sum(axis=2, dtype=dtype) >= 2
        n = heavy[..., 0].astype(dtype)
        for k in range(1, nv):
            n += heavy[..., k]
        return n >= 2

    def _nominal_nodes(self, b: _Batch, g0: int, g1: int):
        """:meth:`_nominal_batch` for the nodes g0..g1-1 of the batch (bounded memory)."""
        counts, elig = self._nominal_tally(b, g0, g1)
        return self._nominal_scores(counts, elig, b.total_w[g0:g1])

    def _nominal_scores(self, counts: np.ndarray, elig: np.ndarray, tw: np.ndarray):
        """(ok, gain, score, value) of every (node, nominal column) from its class counts
        per value ``counts`` (G, q, V, K; read through the hooks above), eligible weights
        per value ``elig`` (G, q, V) and total weights ``tw`` (G,)."""
        params = self.params
        gini = params.criterion == "gini"
        cols = self.nominal_idx
        G, q = tw.size, cols.size
        # (G, q, K): only the one-vs-rest scores read every node's
        known_counts = self._known_counts(counts) if params.binary_splits else None
        wk, parent_imp = self._known_impurity(counts, gini, known_counts)
        ok = np.zeros((G, q), dtype=bool)
        gain = np.zeros((G, q))
        score = np.zeros((G, q))
        value = np.full((G, q), -1, dtype=np.int64)
        ml = params.min_leaf
        nvs = self.n_values[cols]
        if not params.binary_splits:
            # columns with as many values at once: every number is the one a column alone
            # gets (elementwise over columns; sums over values and classes per cell)
            for nv, js in self._same_width:
                ok[:, js] = self._multiway_ok(counts, elig, js, nv)
                g = (parent_imp[:, js] - _lastsum(self._value_impurity(counts, js, nv, gini))) \
                    / tw[:, None]
                gain[:, js] = g
                if params.criterion == "gain_ratio":
                    si = _split_info_of(_lastsum(self._value_weight_terms(counts, js, nv)),
                                        tw[:, None] - wk[:, js], tw[:, None])
                    with np.errstate(invalid="ignore", divide="ignore"):
                        score[:, js] = np.where(si > 0, g / si, 0.0)
                else:
                    score[:, js] = g
            return ok, gain, score, value
        node_counts = self._node_counts(counts)
        for j in range(q):
            nv = int(nvs[j])
            if nv == 0:
                continue
            cnt = node_counts[:, j, :nv]  # (G, nv, K)
            # One value versus the rest (J48 -B).
            el = elig[:, j, :nv]
            okv = (el >= ml) & (_lastsum(el)[:, None] - el >= ml)
            ok[:, j] = okv.any(axis=1)
            if not ok[:, j].any():
                continue
            rest = known_counts[:, j][:, None, :] - cnt
            value_imp = self._value_impurity(counts, slice(j, j + 1), nv, gini)[:, 0]
            gains = (parent_imp[:, j][:, None] - value_imp
                     - _impurity_last(rest, gini)) / tw[:, None]
            if params.criterion == "gain_ratio":
                br = self._value_weights(counts, slice(j, j + 1), nv)[:, 0]
                si = _split_info([br, _lastsum(rest)], (tw - wk[:, j])[:, None],
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


def _columns_by_width(nvs: np.ndarray) -> list[tuple[int, slice | np.ndarray]]:
    """The nominal columns (local indices) grouped for the multiway scores, each group with
    the number of values its arrays are read to: every column of fewer than ``_SEQ_SUM``
    values in one group, read to the largest such width — the values a column lacks hold
    no weight, and its sums over values, taken one after the other below ``_SEQ_SUM``
    terms, only add exact zeros after its own —, and each wider width apart (numpy sums
    those pairwise, so zeros would regroup the additions). A group's columns are a slice
    where adjacent (a view, no copy), else an array; none has 0 values."""
    out: list[tuple[int, slice | np.ndarray]] = []
    narrow = (nvs > 0) & (nvs < _SEQ_SUM)
    groups = [(int(nvs[narrow].max()), narrow)] if narrow.any() else []
    groups += [(nv, nvs == nv) for nv in np.unique(nvs[nvs >= _SEQ_SUM]).tolist()]
    for nv, member in groups:
        js = flat_nonzero(member)
        adjacent = js[-1] - js[0] + 1 == js.size
        out.append((int(nv), slice(int(js[0]), int(js[-1]) + 1) if adjacent else js))
    return out


def sum_over_values(counts: np.ndarray) -> np.ndarray:
    """``counts`` (..., V, K) summed over the values, one value after the other (the order
    numpy's reduction over a middle axis takes, written out so that it does not depend on
    numpy's choice): the engine's shared tallies redo one class's sum alone the same way."""
    total = np.zeros(counts.shape[:-2] + counts.shape[-1:])
    if counts.shape[-2]:
        total = counts[..., 0, :].astype(float)  # a copy
        for v in range(1, counts.shape[-2]):
            total += counts[..., v, :]
    return total
