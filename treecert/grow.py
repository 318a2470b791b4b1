"""Growing C4.5-family decision trees: split search and the tree builder.

This is the engine the transductive and Venn methods re-run thousands of times, so the
split search for one node is a handful of numpy calls over *all* attributes at once: one
``argsort`` of the node's numeric columns, one cumulative class-count tensor, one
``bincount`` for the nominal columns. No Python loop runs per row or per threshold.

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
from scipy.special import xlogy

from treecert.errors import ConfigError

CRITERIA = ("info_gain", "gain_ratio", "gini")
THRESHOLD_RULES = ("midpoint", "lower")
_LN2 = np.log(2.0)
_EPS = 1e-12
_ROUND = 10


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


def _wentropy(counts: np.ndarray) -> np.ndarray:
    """N * H(counts) in bits over the last axis (0 for empty count vectors)."""
    total = counts.sum(axis=-1)
    return (xlogy(total, total) - xlogy(counts, counts).sum(axis=-1)) / _LN2


def _wgini(counts: np.ndarray) -> np.ndarray:
    """N * Gini(counts) over the last axis (0 for empty count vectors)."""
    total = counts.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total - (counts**2).sum(axis=-1) / total
    return np.where(total > 0, out, 0.0)


def _split_info(branch_weights: np.ndarray, unknown: np.ndarray | float, total: float):
    """C4.5 split information in bits; branches along the last axis, unknowns a branch."""
    s = xlogy(total, total) - xlogy(branch_weights, branch_weights).sum(axis=-1)
    s = s - xlogy(unknown, unknown)
    return s / _LN2 / total


class SplitFinder:
    """Finds the best test for a node's rows; shared by the builder and the TPCE engine.

    Parameters
    ----------
    X : float array (n_samples, n_features); nominal codes as floats, NaN = missing.
    y : int array (n_samples,) with codes in [0, n_classes).
    is_nominal, n_values : per-feature kind and number of declared values.
    eligible : bool array (n_samples,) or None — rows whose values may become thresholds.
    n_total_rows : size of the whole training set (J48's 0.3·N many-values rule).
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

    # ------------------------------------------------------------------ scoring
    def _impurity(self, counts: np.ndarray) -> np.ndarray:
        return _wgini(counts) if self.params.criterion == "gini" else _wentropy(counts)

    def best_split(self, idx: np.ndarray, w: np.ndarray) -> Split | None:
        """Best admissible test for the rows ``idx`` with weights ``w``, or None."""
        params = self.params
        y = self.y[idx]
        Y = np.zeros((idx.size, self.n_classes))
        Y[np.arange(idx.size), y] = w
        total_w = float(w.sum())
        we = w if self.eligible is None else w * self.eligible[idx]
        # Each candidate: (feature, info gain, selection score, threshold, value_branch,
        # counts-in-average flag).
        cands: list[tuple[int, float, float, float, np.ndarray | None, bool]] = []
        if self.numeric_idx.size:
            cands.extend(self._numeric(idx, Y, we, total_w))
        if self.nominal_idx.size:
            cands.extend(self._nominal(idx, Y, we, total_w))
        if not cands:
            return None
        if params.criterion == "gain_ratio":
            counted = [c[1] for c in cands if c[5]]
            if not counted:
                return None
            avg = sum(counted) / len(counted)
            pool = [c for c in cands if c[1] >= avg - 1e-3 and c[2] > 1e-6]
        else:
            pool = [c for c in cands if c[1] > _EPS]
        pool = [c for c in pool if c[1] > params.min_gain]
        if not pool:
            return None
        best = max(pool, key=lambda c: (round(c[2], _ROUND), -c[0]))
        feature, _, score, threshold, value_branch, _ = best
        n_branches = 2 if value_branch is None else int(value_branch.max()) + 1
        return Split(feature, threshold, value_branch, n_branches, score)

    def _numeric(self, idx, Y, we, total_w):
        params = self.params
        cols = self.numeric_idx
        Xn = self.X[np.ix_(idx, cols)]
        m, p = Xn.shape
        if m < 2:
            return []
        order = np.argsort(Xn, axis=0, kind="stable")
        V = np.take_along_axis(Xn, order, axis=0)
        C = np.cumsum(Y[order], axis=0)  # (m, p, K)
        CE = np.cumsum(we[order], axis=0)  # (m, p)
        known = ~np.isnan(V)
        n_known = known.sum(axis=0)
        last = np.maximum(n_known - 1, 0)
        ar = np.arange(p)
        known_counts = np.where((n_known > 0)[:, None], C[last, ar], 0.0)  # (p, K)
        known_elig = np.where(n_known > 0, CE[last, ar], 0.0)
        Vi, Vn = V[:-1], V[1:]
        valid = Vi < Vn  # False wherever a NaN is involved
        if self.eligible is None or bool(self.eligible[idx].all()):
            thr = Vi if params.threshold == "lower" else (Vi + Vn) / 2.0
        else:
            el = self.eligible[idx][order] & known
            prev = np.maximum.accumulate(np.where(el, V, -np.inf), axis=0)[:-1]
            nxt = np.minimum.accumulate(np.where(el, V, np.inf)[::-1], axis=0)[::-1][1:]
            valid &= np.isfinite(prev) & np.isfinite(nxt)
            if params.threshold == "lower":
                thr = prev
                valid &= prev == Vi
            else:
                thr = (prev + nxt) / 2.0
                valid &= (Vi <= thr) & (thr < Vn)
        # Rounding can put a midpoint on the upper value; fall back to the lower one.
        thr = np.where(thr < Vn, thr, Vi)
        if params.criterion == "gain_ratio":
            min_split = np.clip(0.1 * known_elig / self.n_classes, params.min_leaf, 25.0)
            enough = known_elig >= 2 * min_split
        else:
            min_split = np.full(p, float(params.min_leaf))
            enough = np.ones(p, dtype=bool)
        left_e = CE[:-1]
        valid &= (left_e >= min_split) & (known_elig - left_e >= min_split) & enough
        ii, jj = np.nonzero(valid)
        if ii.size == 0:
            return []
        L = C[ii, jj]
        R = known_counts[jj] - L
        kc = known_counts[jj]
        wk = kc.sum(axis=1)
        gain = (self._impurity(kc) - self._impurity(L) - self._impurity(R)) / total_w
        score_mat = np.full((m - 1, p), -np.inf)
        score_mat[ii, jj] = np.round(gain, _ROUND)
        best_pos = np.argmax(score_mat, axis=0)
        n_cuts = valid.sum(axis=0)
        kmat = np.full((m - 1, p), -1, dtype=np.int64)
        kmat[ii, jj] = np.arange(ii.size)
        out = []
        for j in np.flatnonzero(n_cuts > 0):
            k = int(kmat[best_pos[j], j])
            g = float(gain[k])
            if params.criterion == "gain_ratio":
                g -= np.log2(n_cuts[j]) / total_w  # J48's MDL correction
                if g <= 0:
                    continue
                branches = np.array([L[k].sum(), R[k].sum()])
                si = _split_info(branches, total_w - wk[k], total_w)
                score = g / si if si > 0 else 0.0
            else:
                score = g
            out.append((int(cols[j]), g, float(score), float(thr[best_pos[j], j]), None, True))
        return out

    def _nominal(self, idx, Y, we, total_w):
        params = self.params
        cols = self.nominal_idx
        K = self.n_classes
        V = self.max_values
        q = cols.size
        codes = self.X[np.ix_(idx, cols)]
        known = ~np.isnan(codes)
        ci = np.where(known, codes, 0).astype(np.int64)
        y = self.y[idx]
        w_rows = Y.sum(axis=1)
        flat = (np.arange(q)[None, :] * V + ci) * K + y[:, None]
        counts = np.bincount(
            flat[known], weights=np.broadcast_to(w_rows[:, None], flat.shape)[known],
            minlength=q * V * K,
        ).reshape(q, V, K)
        eflat = np.arange(q)[None, :] * V + ci
        elig = np.bincount(
            eflat[known], weights=np.broadcast_to(we[:, None], eflat.shape)[known],
            minlength=q * V,
        ).reshape(q, V)
        known_counts = counts.sum(axis=1)  # (q, K)
        wk = known_counts.sum(axis=1)
        parent_imp = self._impurity(known_counts)
        out = []
        many_rule = 0.3 * self.n_total_rows
        for j in range(q):
            f = int(cols[j])
            nv = int(self.n_values[f])
            cnt = counts[j, :nv]
            in_avg = self.multi_val or nv < many_rule
            if not params.binary_splits:
                if (elig[j, :nv] >= params.min_leaf).sum() < 2:
                    continue
                g = float((parent_imp[j] - self._impurity(cnt).sum()) / total_w)
                if params.criterion == "gain_ratio":
                    si = _split_info(cnt.sum(axis=1), total_w - wk[j], total_w)
                    score = g / si if si > 0 else 0.0
                else:
                    score = g
                out.append((f, g, float(score), np.nan, np.arange(nv), in_avg))
                continue
            # One value versus the rest (J48 -B).
            el = elig[j, :nv]
            ok = (el >= params.min_leaf) & (el.sum() - el >= params.min_leaf)
            if not ok.any():
                continue
            rest = known_counts[j][None, :] - cnt
            gains = (parent_imp[j] - self._impurity(cnt) - self._impurity(rest)) / total_w
            if params.criterion == "gain_ratio":
                br = np.stack([cnt.sum(axis=1), rest.sum(axis=1)], axis=1)
                si = _split_info(br, total_w - wk[j], total_w)
                with np.errstate(invalid="ignore", divide="ignore"):
                    scores = np.where(si > 0, gains / si, 0.0)
            else:
                scores = gains
            scores = np.where(ok, np.round(scores, _ROUND), -np.inf)
            v = int(np.argmax(scores))
            vb = np.ones(nv, dtype=np.int64)
            vb[v] = 0
            out.append((f, float(gains[v]), float(scores[v]), np.nan, vb, in_avg))
        return out


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


def grow(
    finder: SplitFinder,
    idx: np.ndarray,
    w: np.ndarray,
    *,
    depth: int = 0,
) -> GrownNodes:
    """Grow a (sub)tree from rows ``idx`` with weights ``w``; node 0 is its root.

    Nodes are numbered in creation order, so every child's id is larger than its parent's.
    """
    params = finder.params
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
        cnt = counts[node]
        total = cnt.sum()
        elig_w = nw.sum() if finder.eligible is None else (nw * finder.eligible[nidx]).sum()
        if (
            total <= 0
            or elig_w < 2 * params.min_leaf
            or cnt.max() >= total - 1e-9 * max(total, 1.0)
            or (params.max_depth is not None and depths[node] >= params.max_depth)
        ):
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
