"""One tree with calibrated leaves pooled with TPCE, and a certainty from both.

The best single tree for both goals at once — probabilities (log-loss) and flagging the
predictions that may be wrong (AUC-reliability) — puts together what each single-tree
method does best (docs/certainty-quality.md; ``benchmarks/single_tree_quality.py``):

* **Leaves smoothed on the training data.** An unpruned tree's small leaves give extreme
  frequencies; smoothing them towards a prior helps, and how much depends on the data. Two
  priors are tried: the training class frequencies (the m-estimate, Cestnik 1990) and the
  estimate of the leaf's parent, itself smoothed towards its own parent down from the root
  (m-branch smoothing; Ferri, Flach & Hernández-Orallo 2003), so that a small leaf borrows
  from the region of the tree it lies in. The prior and m (a power of two from 1/4 to 128)
  are the pair with the smallest log-loss of **out-of-fold** forecasts: the training rows
  are split into ``cv`` folds (default 5, seeded) and a tree grown on the other folds
  forecasts each one. The tree that predicts is the one grown on all the training rows
  (``show`` draws it).
* **Pooled with TPCE's Eq. 1, weights fitted out of fold.** TPCE's average of the K
  transductive trees' Laplace estimates (Costa, Verwer & Blockeel, Eq. 1) ranks instances
  better than any one tree's leaves, but is under-confident as a probability (|T| = K in
  every denominator). The probabilities are the log-linear pool
  ``p_c ∝ leaf_c^a · tpce_c^b`` with the (a, b) ≥ 0 of least log-loss on out-of-fold
  forecasts of both — the leaves' from the folds above, TPCE's for up to ``tpce_rows``
  (300) training rows drawn with the seed, each from TPCE fitted on the other folds. It is
  a two-feature multinomial logit, convex; with b = 0 it is a temperature of the leaves
  (Guo et al. 2017), which is what ``pool=none`` fits. ``temperature=t`` fixes the leaves
  alone, sharpened by t (t = 1: the smoothed leaves as they are).
* **Certainty: the geometric mean of the predicted class's pooled probability and its
  TPCE Eq. 1 probability.** The predicted class is the argmax of the pooled
  probabilities. Its Eq. 1 probability asks whether x's own label would change the tree
  along x's path — the transductive evidence that ranks a tree's errors better than a
  leaf estimate does; the pooled probability is the calibrated one. Both estimate the
  chance that the prediction is right; a row either doubts gets a low certainty. (Measured
  on the shared suite, ``benchmarks/single_tree_quality.py``: Eq. 1 alone, mean AUC-
  reliability 0.742 over 12 datasets; the pooled probability alone 0.750; their geometric
  mean 0.754.)

Columns: ``tpce_disagree`` (as ``tpce``); with ``predict --explain`` also ``tpce_p_<c>``
(Eq. 1), ``leaf_p_<c>`` (the smoothed leaf) and TPCE's per-label estimates. Options:
``cv`` (5), ``seed`` (1), ``smoothing`` (``auto``, or ``m_estimate`` / ``m_branch``),
``pool`` (``tpce`` | ``none``), ``tpce_rows`` (300), ``temperature`` (a number), and
TPCE's ``engine`` and ``count_x``. Fitting costs five small trees and TPCE on up to
``tpce_rows`` rows beside TPCE's own fit; predicting costs one TPCE prediction per row.

References
----------
B. Cestnik, "Estimating probabilities: a crucial task in machine learning", ECAI 1990.
C. Ferri, P. Flach and J. Hernández-Orallo, "Improving the AUC of probabilistic estimation
trees", ECML 2003, section 3 (m-branch smoothing). C. Guo, G. Pleiss, Y. Sun and K. Q.
Weinberger, "On calibration of modern neural networks", ICML 2017, section 4.2. W. Costa,
S. Verwer and H. Blockeel, TPCE, section 3, Eq. 1.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.methods.base import TREE_OPTIONS, Method, MethodSpec, Prediction
from treecert.methods.calibrated_bagging import _sharpen_logs, fit_temperature
from treecert.methods.option_rules import TRANSDUCTIVE_MIN_LEAF
from treecert.methods.tpce import TpceMethod
from treecert.tree.arrays import Tree, mix_leaves
from treecert.tree.classifier import DecisionTree
from treecert.tree.leaf_estimates import leaf_proba
from treecert.tree.params import Rule

#: The priors a leaf is smoothed towards (``smoothing``; ``auto`` chooses among them).
SMOOTHINGS = ("m_estimate", "m_branch")
#: The m searched: 1/4 … 128.
M_GRID = tuple(2.0 ** k for k in range(-2, 8))
#: Without this many labelled rows, no out-of-fold choice: m-estimate, m = 2, t = 1.
MIN_ROWS = 10
#: Values of the ``pool`` option, and the largest weight of either member of the pool.
POOLS = ("tpce", "none")
W_MAX = 10.0


def node_estimates(tree: Tree, smoothing: str, m: float) -> np.ndarray:
    """Every node's smoothed class probabilities (n_nodes, n_classes).

    ``m_estimate``: ``(n_c + m prior_c) / (n + m)`` with the root's class frequencies as
    the prior (an empty node borrows its ancestor's counts, as every leaf estimate does).
    ``m_branch``: the prior is the parent's own smoothed estimate; the root's is Laplace's
    ``(n_c + 1) / (n + K)``. An empty node so gets its parent's estimate.
    """
    if smoothing == "m_estimate":
        return tree.leaf_estimates("m_estimate", m=m)
    counts = tree.counts
    out = np.empty(counts.shape)
    if not counts.shape[0]:
        return out
    out[0] = leaf_proba(counts[0], "laplace")
    depth, parent = tree.node_depth, tree.parent
    totals = counts.sum(axis=1, keepdims=True)
    for d in range(1, int(depth.max()) + 1):  # parents before children, a level at once
        idx = np.flatnonzero(depth == d)
        out[idx] = (counts[idx] + m * out[parent[idx]]) / (totals[idx] + m)
    return out


def tree_proba(tree: Tree, X: np.ndarray, per_node: np.ndarray) -> np.ndarray:
    """The rows' probabilities from per-node estimates (unknown values: the weighted mix
    of the leaves reached, as C4.5 predicts)."""
    return _normalised(mix_leaves(tree.apply_weighted(X), per_node, X.shape[0]))


def _normalised(proba: np.ndarray) -> np.ndarray:
    """Rows summing to 1, each value at least 1e-12: a class the training data lacks has
    prior 0, and the temperature works on log-probabilities."""
    proba = np.maximum(proba, 1e-12)
    return proba / proba.sum(axis=1, keepdims=True)


def fit_pool(leaf: np.ndarray, tpce: np.ndarray, y: np.ndarray, w: np.ndarray
             ) -> tuple[float, float]:
    """The weights (a, b) in [0, W_MAX]² of least weighted log-loss of
    :func:`pooled` ``(leaf, tpce, a, b)`` — a multinomial logit on the two log-probabilities,
    convex in (a, b); (t, 0) is a temperature of the leaves alone."""
    from scipy.optimize import minimize

    F = np.stack([np.log(leaf), np.log(tpce)], axis=2)  # (n, K, 2)
    rows = np.arange(y.size)

    def loss_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = F @ theta
        z -= z.max(axis=1, keepdims=True)
        log_q = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        q = np.exp(log_q)
        grad = w @ (np.einsum("nk,nkj->nj", q, F) - F[rows, y])
        return float(-(w @ log_q[rows, y])), grad

    res = minimize(loss_grad, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, W_MAX)] * 2)
    return float(res.x[0]), float(res.x[1])


def pooled(leaf: np.ndarray, tpce: np.ndarray, a: float, b: float) -> np.ndarray:
    """``p_c ∝ leaf_c^a · tpce_c^b`` row-wise (a log-linear pool; b = 0: a temperature)."""
    return _sharpen_logs(a * np.log(leaf) + b * np.log(tpce), 1.0)


class CertifiedTreeMethod(Method):
    """One tree: leaves smoothed out of fold and pooled with TPCE's Eq. 1 (weights fitted
    out of fold); certainty from both. Options ``cv``, ``seed``, ``smoothing``
    (auto|m_estimate|m_branch), ``pool`` (tpce|none), ``tpce_rows``, ``temperature`` (a
    number: leaves alone, sharpened by it), ``engine``, ``count_x``."""

    name = "certified_tree"
    options: ClassVar[dict[str, type]] = {
        "cv": int, "seed": int, "smoothing": str, "pool": str, "tpce_rows": int,
        "temperature": float, "engine": str, "count_x": bool}
    defaults: ClassVar[dict] = {"cv": 5, "seed": 1, "smoothing": "auto", "pool": "tpce",
                                "tpce_rows": 300, "temperature": None, "engine": "fast",
                                "count_x": True}
    rules: ClassVar[dict] = {
        "min_leaf": TRANSDUCTIVE_MIN_LEAF,
        "tpce_rows": Rule(int, 1, 1_000_000_000, work=100_000,
                          why="the training rows TPCE's pool weights are fitted on")}
    randomised = True
    random_subsets = False
    j48_cuts = False

    def _check(self) -> tuple[str, ...]:
        o = self.opts
        if o["smoothing"] not in ("auto", *SMOOTHINGS):
            raise ConfigError(f"certified_tree: smoothing must be auto, m_estimate or m_branch, "
                              f"got '{o['smoothing']}'.")
        if o["pool"] not in POOLS:
            raise ConfigError(f"certified_tree: pool must be tpce or none, got '{o['pool']}'.")
        if o["cv"] < 2:
            raise ConfigError(f"certified_tree: cv must be at least 2, got {o['cv']}.")
        if o["tpce_rows"] < 1:
            raise ConfigError(f"certified_tree: tpce_rows must be at least 1, got "
                              f"{o['tpce_rows']}.")
        if o["temperature"] is not None and not o["temperature"] > 0:
            raise ConfigError(f"certified_tree: temperature must be positive, got "
                              f"{o['temperature']}.")
        return SMOOTHINGS if o["smoothing"] == "auto" else (o["smoothing"],)

    def fit(self, data: Dataset) -> CertifiedTreeMethod:
        return self._fit(self.new_tree().fit(data), data)

    def adopt(self, model) -> CertifiedTreeMethod:
        """Predict with the stored tree (the one ``show`` draws) unless tree options are
        given; the calibration and TPCE need the embedded training data."""
        if any(k in TREE_OPTIONS for k in self.spec.options) or model.training_data is None:
            return super().adopt(model)
        est = model.estimator
        self.tree_params = {k: v for k, v in est.get_params().items() if k in TREE_OPTIONS}
        return self._fit(DecisionTree.from_tree(est.tree_, est.schema_, est.get_params()),
                         model.training_data)

    def _new_tpce(self) -> TpceMethod:
        return TpceMethod(self.tree_params, MethodSpec(
            "tpce", {"engine": self.opts["engine"], "count_x": self.opts["count_x"]}))

    def _fit(self, model: DecisionTree, data: Dataset) -> CertifiedTreeMethod:
        kinds = self._check()
        self.model_ = model
        labelled = data.subset(np.flatnonzero(data.y >= 0))
        t = self.opts["temperature"]
        self.smoothing_, self.m_, self.weights_ = kinds[0], 2.0, (t or 1.0, 0.0)
        if labelled.n_samples >= MIN_ROWS:
            self._choose(labelled, kinds)
        self.per_node_ = node_estimates(model.tree_, self.smoothing_, self.m_)
        self.tpce_ = self._new_tpce().fit(data)
        return self

    def _choose(self, data: Dataset, kinds: tuple[str, ...]) -> None:
        """The (smoothing, m) of least out-of-fold log-loss; then the pool's weights (or
        the temperature) on those forecasts, with TPCE's out-of-fold forecasts of up to
        ``tpce_rows`` of the rows (seeded)."""
        o = self.opts
        n, K = data.n_samples, data.schema.n_classes
        rng = np.random.RandomState(o["seed"])
        fold = rng.permutation(n) % o["cv"]
        grid = [(k, m) for k in kinds for m in M_GRID]
        oof = np.empty((len(grid), n, K))
        for f in range(o["cv"]):
            train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
            tree = self.new_tree().fit(data.subset(train)).tree_
            applied = tree.apply_weighted(data.X[test])
            for j, (kind, m) in enumerate(grid):
                oof[j, test] = _normalised(
                    mix_leaves(applied, node_estimates(tree, kind, m), test.size))
        p_true = np.clip(oof[:, np.arange(n), data.y], 1e-15, 1.0)
        best = int(np.argmin(-(np.log(p_true) @ data.weights)))  # ties: the first
        self.smoothing_, self.m_ = grid[best]
        leaf = oof[best]
        if o["temperature"] is not None:
            return
        if o["pool"] == "none":
            self.weights_ = (fit_temperature(leaf, data.y, data.weights), 0.0)
            return
        rows = np.sort(rng.permutation(n)[: o["tpce_rows"]])
        tp = np.empty((rows.size, K))
        for f in range(o["cv"]):
            at = np.flatnonzero(fold[rows] == f)
            if at.size:
                tp[at] = self._new_tpce().fit(data.subset(np.flatnonzero(fold != f))).predict(
                    data.subset(rows[at])).proba
        self.weights_ = fit_pool(leaf[rows], tp, data.y[rows], data.weights[rows])

    def predict(self, data: Dataset) -> Prediction:
        leaf = tree_proba(self.model_.tree_, data.X, self.per_node_)
        self.tpce_.explain, self.tpce_.jobs = self.explain, self.jobs
        tp = self.tpce_.predict(data)
        proba = pooled(leaf, tp.proba, *self.weights_)
        rows, top = np.arange(proba.shape[0]), np.argmax(proba, axis=1)
        certainty = np.sqrt(proba[rows, top] * tp.proba[rows, top])
        columns = dict(tp.columns)
        if self.explain:
            columns.update({f"tpce_p_{c}": tp.proba[:, j]
                            for j, c in enumerate(data.schema.classes)})
            columns.update({f"leaf_p_{c}": leaf[:, j]
                            for j, c in enumerate(data.schema.classes)})
        return Prediction(proba, certainty=certainty, columns=columns)

    @property
    def size(self) -> float | None:
        return float(self.model_.tree_.n_leaves)
