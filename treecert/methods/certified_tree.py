"""One tree with calibrated leaves, and TPCE's certainty of its prediction.

The best single tree for both goals at once — probabilities (log-loss) and flagging the
predictions that may be wrong (AUC-reliability) — puts together what each single-tree
method does best (docs/certainty-quality.md):

* **Probabilities: the tree's leaves, smoothed and calibrated on the training data.** An
  unpruned tree's small leaves give extreme frequencies; smoothing them towards a prior
  helps, and how much depends on the data. Two priors are tried: the training class
  frequencies (the m-estimate, Cestnik 1990) and the estimate of the leaf's parent,
  itself smoothed towards its own parent down from the root (m-branch smoothing; Ferri,
  Flach & Hernández-Orallo 2003) — so a small leaf borrows from the region of the tree it
  lies in, not from the whole data. The prior and m (a power of two from 1/4 to 128) are
  the pair with the smallest log-loss of **out-of-fold** forecasts: the training rows are
  split into ``cv`` folds (default 5, seeded), a tree grown on the others forecasts each
  fold. A single temperature t, ``p_c ∝ p_c^t`` (Guo et al. 2017), fitted on the same
  out-of-fold forecasts, then corrects what over- or under-confidence remains. The tree
  that predicts is the one grown on all the training rows (``show`` draws it).
* **Certainty: TPCE's Eq. 1 probability of the predicted class** (Costa, Verwer &
  Blockeel, section 3). For each class c a tree is grown on D ∪ {(x, c)} and the K Laplace
  estimates are averaged; Eq. 1 is under-confident as a probability (|T| = K in every
  denominator), but it ranks errors better than any leaf estimate, because it asks whether
  x's own label would change the tree along x's path. The predicted class is the argmax
  of the calibrated leaf probabilities, and its Eq. 1 probability is the certainty: a row
  whose leaf and transductive trees disagree gets a low certainty.

Columns: ``tpce_disagree`` (as ``tpce``); with ``predict --explain`` also ``tpce_p_<c>``
(Eq. 1) and TPCE's per-label estimates. Options: ``cv`` (5), ``seed`` (1), ``smoothing``
(``auto``, or ``m_estimate`` / ``m_branch`` to fix the prior), ``temperature`` (``cv``, or
a number), and TPCE's ``engine`` and ``count_x``.

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
from treecert.methods.calibrated_bagging import fit_temperature, sharpen
from treecert.methods.tpce import TpceMethod
from treecert.tree.arrays import Tree, mix_leaves
from treecert.tree.classifier import DecisionTree
from treecert.tree.leaf_estimates import leaf_proba

#: The priors a leaf is smoothed towards (``smoothing``; ``auto`` chooses among them).
SMOOTHINGS = ("m_estimate", "m_branch")
#: The m searched: 1/4 … 128.
M_GRID = tuple(2.0 ** k for k in range(-2, 8))
#: Without this many labelled rows, no out-of-fold choice: m-estimate, m = 2, t = 1.
MIN_ROWS = 10


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


class CertifiedTreeMethod(Method):
    """One tree: leaves smoothed and temperature-scaled out of fold; TPCE's certainty.
    Options ``cv``, ``seed``, ``smoothing`` (auto|m_estimate|m_branch), ``temperature``
    (cv | a number), ``engine``, ``count_x``."""

    name = "certified_tree"
    options: ClassVar[dict[str, type]] = {"cv": int, "seed": int, "smoothing": str,
                                          "temperature": str, "engine": str, "count_x": bool}
    defaults: ClassVar[dict] = {"cv": 5, "seed": 1, "smoothing": "auto", "temperature": "cv",
                                "engine": "fast", "count_x": True}
    randomised = True

    def _check(self) -> tuple[tuple[str, ...], float | None]:
        o = self.opts
        if o["smoothing"] not in ("auto", *SMOOTHINGS):
            raise ConfigError(f"certified_tree: smoothing must be auto, m_estimate or m_branch, "
                              f"got '{o['smoothing']}'.")
        if o["cv"] < 2:
            raise ConfigError(f"certified_tree: cv must be at least 2, got {o['cv']}.")
        fixed_t = None
        if o["temperature"] != "cv":
            try:
                fixed_t = float(o["temperature"])
            except ValueError:
                fixed_t = -1.0
            if not fixed_t > 0:
                raise ConfigError(f"certified_tree: temperature must be cv or a positive "
                                  f"number, got '{o['temperature']}'.")
        kinds = SMOOTHINGS if o["smoothing"] == "auto" else (o["smoothing"],)
        return kinds, fixed_t

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

    def _fit(self, model: DecisionTree, data: Dataset) -> CertifiedTreeMethod:
        kinds, fixed_t = self._check()
        self.model_ = model
        labelled = data.subset(np.flatnonzero(data.y >= 0))
        self.smoothing_, self.m_, self.temperature_ = kinds[0], 2.0, fixed_t or 1.0
        if labelled.n_samples >= MIN_ROWS:
            self._choose(labelled, kinds, fixed_t)
        self.per_node_ = node_estimates(model.tree_, self.smoothing_, self.m_)
        self.tpce_ = TpceMethod(self.tree_params, MethodSpec(
            "tpce", {"engine": self.opts["engine"], "count_x": self.opts["count_x"]}))
        self.tpce_.fit(data)
        return self

    def _choose(self, data: Dataset, kinds: tuple[str, ...], fixed_t: float | None) -> None:
        """The (smoothing, m) of least out-of-fold log-loss, then the temperature on those
        forecasts."""
        n, K = data.n_samples, data.schema.n_classes
        fold = np.random.RandomState(self.opts["seed"]).permutation(n) % self.opts["cv"]
        grid = [(k, m) for k in kinds for m in M_GRID]
        oof = np.empty((len(grid), n, K))
        for f in range(self.opts["cv"]):
            train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
            tree = self.new_tree().fit(data.subset(train)).tree_
            applied = tree.apply_weighted(data.X[test])
            for j, (kind, m) in enumerate(grid):
                oof[j, test] = _normalised(
                    mix_leaves(applied, node_estimates(tree, kind, m), test.size))
        p_true = np.clip(oof[:, np.arange(n), data.y], 1e-15, 1.0)
        loss = -(np.log(p_true) @ data.weights)
        best = int(np.argmin(loss))  # ties: the first, the smallest m of the first prior
        self.smoothing_, self.m_ = grid[best]
        self.temperature_ = fixed_t or fit_temperature(oof[best], data.y, data.weights)

    def predict(self, data: Dataset) -> Prediction:
        proba = sharpen(tree_proba(self.model_.tree_, data.X, self.per_node_),
                        self.temperature_)
        self.tpce_.explain, self.tpce_.jobs = self.explain, self.jobs
        tp = self.tpce_.predict(data)
        certainty = tp.proba[np.arange(proba.shape[0]), np.argmax(proba, axis=1)]
        columns = dict(tp.columns)
        if self.explain:
            columns.update({f"tpce_p_{c}": tp.proba[:, j]
                            for j, c in enumerate(data.schema.classes)})
        return Prediction(proba, certainty=certainty, columns=columns)

    @property
    def size(self) -> float | None:
        return float(self.model_.tree_.n_leaves)
