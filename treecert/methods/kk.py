"""Kukar & Kononenko's transductive reliability (ECML 2002), as summarised in the TPCE
paper, section 2.2.

Inductive step: the tree learnt on D gives x a distribution P and a class ĉ = argmax P.
Transductive step: (x, ĉ) is added to D (x ineligible for thresholds, as in TPCE), the tree
is regrown by the transductive engine, and x's leaf gives Q. Both distributions are Laplace
leaf estimates (no zeros, so the divergence is finite). The reliability is a decreasing
function of the symmetric Kullback-Leibler divergence

    J(P, Q) = Σ_c (P_c - Q_c) ln(P_c / Q_c)   (= KL(P‖Q) + KL(Q‖P)),
    reliability = exp(-J(P, Q))  in (0, 1].

treecert reports the continuous score so that ``auc_reliability`` measures its ranking
directly (any decreasing transform ranks the same). The probabilities are the inductive ones;
``certainty`` is the reliability and the column ``kk_divergence`` holds J.

**Supervised threshold** (``reliable_cv=K``; K&K 2002 label each prediction reliable or
unreliable by a threshold on the reliability learnt from the training data, choosing it by
information gain, the criterion the TPCE paper's footnote 1 names): the reliabilities and
the correctness of the inductive predictions of every training row are gathered out of fold
by a stratified K-fold cross-validation inside the training data (``seed``), and the
threshold t is the cut between two consecutive distinct reliabilities that maximises the
information gain of {reliability ≥ t, < t} about {correct, incorrect} (weighted rows; the
lowest such cut on ties, :func:`gain_threshold`). ``predict`` then adds the column
``reliable`` (``yes`` where the reliability is ≥ t), and ``evaluate`` reports
``reliable_accuracy`` (how often the label is right: reliable and correct, or unreliable and
wrong) and ``reliable_share``. Cost: K more fits of the method per fit. Departure: K&K
estimate the training reliabilities by leave-one-out; K folds cost less and serve the same
purpose (``reliable_cv`` = the number of training rows is leave-one-out).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.folds import stratified_folds
from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.methods.base import Method, MethodSpec, Prediction
from treecert.methods.option_rules import TRANSDUCTIVE_MIN_LEAF
from treecert.transductive import held_out_folds
from treecert.transductive.engine import (
    TransductiveEngine,
    check_engine,
    check_engine_covers,
)
from treecert.tree.params import Rule
from treecert.tree.segments import flat_nonzero


def gain_threshold(score: np.ndarray, correct: np.ndarray, w: np.ndarray) -> float:
    """Kukar & Kononenko's supervised threshold: the midpoint between two consecutive
    distinct scores that maximises the information gain (bits) of the split score ≥ t /
    score < t about ``correct`` (weights ``w``); the lowest on ties. Without a split that
    gains anything, 0 (every score ≥ 0: all reliable) if at least half the weight is
    correct, else +inf (all unreliable)."""
    order = np.argsort(score, kind="stable")
    s, c, ww = score[order], correct[order].astype(bool), w[order]
    cum_ok = np.cumsum(ww * c)
    cum_w = np.cumsum(ww)
    W, OK = cum_w[-1], cum_ok[-1]

    def entropy(ok, tot):
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(tot > 0, ok / tot, 0.0)
            h = -(np.where(p > 0, p * np.log2(p), 0.0)
                  + np.where(p < 1, (1 - p) * np.log2(1 - p), 0.0))
        return np.where(tot > 0, h, 0.0)

    cut = np.flatnonzero(np.diff(s) > 0)  # left part: rows 0..k
    if cut.size:
        lw, lok = cum_w[cut], cum_ok[cut]
        gain = entropy(OK, W) - (lw * entropy(lok, lw) + (W - lw) * entropy(OK - lok, W - lw)) / W
        best = int(np.argmax(gain))
        if gain[best] > 1e-12:
            k = cut[best]
            return float((s[k] + s[k + 1]) / 2)
    return 0.0 if OK >= W / 2 else float("inf")


def symmetric_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """J(P, Q) row-wise for strictly positive distributions."""
    return np.sum((p - q) * np.log(p / q), axis=-1)


class KukarKononenkoMethod(Method):
    """K&K reliability; option ``engine`` (fast|path|naive)."""

    name = "kk"
    random_subsets = False
    j48_cuts = False
    #: ``reliable_cv``: folds of the internal cross-validation that learns the supervised
    #: reliable/unreliable threshold (0: no label); ``seed`` its folds. K more fits per fit.
    options: ClassVar[dict[str, type]] = {
        "engine": str, "seed": int,
        "reliable_cv": Rule(int, 0, 1_000_000, work=100, why="0 means no reliable label; "
                            "otherwise the folds of the internal cross-validation (>= 2).")}
    defaults: ClassVar[dict] = {"engine": "fast", "reliable_cv": 0, "seed": 1}
    rules: ClassVar[dict] = {"min_leaf": TRANSDUCTIVE_MIN_LEAF}

    def fit(self, data: Dataset) -> KukarKononenkoMethod:
        check_engine(self.opts["engine"], "kk")
        check_engine_covers(self.opts["engine"], self.new_tree(), "kk")
        k = self.opts["reliable_cv"]
        if k == 1 or k < 0:
            raise ConfigError(f"kk: reliable_cv must be 0 (no label) or at least 2, got {k}.")
        self.inductive_ = self.new_tree(leaf="laplace").fit(data)
        self.engine_ = TransductiveEngine(data, self.new_tree())
        self.threshold_ = self._learn_threshold(data) if k else None
        return self

    def _learn_threshold(self, data: Dataset) -> float:
        """:func:`gain_threshold` of out-of-fold reliabilities of the training rows."""
        labelled = data.subset(flat_nonzero(data.y >= 0))
        k = min(self.opts["reliable_cv"], labelled.n_samples)
        if k < 2:
            return 0.0
        folds = stratified_folds(labelled.y, k, self.opts["seed"])
        inner = MethodSpec("kk", {"engine": self.opts["engine"]}, "kk")
        score = np.empty(labelled.n_samples)
        correct = np.empty(labelled.n_samples, dtype=bool)
        for f in range(k):
            test = flat_nonzero(folds == f)
            sub = KukarKononenkoMethod(self.tree_params, spec=inner)
            sub.jobs = self.jobs
            pred = sub.fit(labelled.subset(flat_nonzero(folds != f))).predict(
                labelled.subset(test))
            score[test] = pred.certainty
            correct[test] = np.argmax(pred.proba, axis=1) == labelled.y[test]
        return gain_threshold(score, correct, labelled.weights)

    def _label(self, pred: Prediction) -> Prediction:
        if getattr(self, "threshold_", None) is not None:
            pred.columns["reliable"] = np.where(pred.certainty >= self.threshold_, "yes", "no")
        return pred

    def _predict_rows(self, X: np.ndarray, P: np.ndarray, drop_rows,
                      held_out: tuple[np.ndarray, np.ndarray] | None = None) -> Prediction:
        from treecert.parallel import map_chunks

        K = self.engine_.n_classes
        c_hat = np.argmax(P, axis=1)

        def work(lo: int, hi: int) -> np.ndarray:
            drop = None if drop_rows is None else drop_rows[lo:hi]
            held = None if held_out is None else (held_out[0], held_out[1][lo:hi])
            return self.engine_.estimates(X[lo:hi], c_hat[lo:hi], drop, count_x=True,
                                          engine=self.opts["engine"], held_out=held)

        parts = map_chunks(work, X.shape[0], self.jobs)
        Q = np.concatenate(parts) if parts else np.zeros((0, K))
        div = symmetric_kl(P, Q)
        columns = {"kk_divergence": div}
        if self.explain:  # the transductive Q that P is compared with
            columns.update((f"kk_q_{c}", Q[:, j])
                           for j, c in enumerate(self.engine_.data.schema.classes))
        return self._label(Prediction(P, certainty=np.exp(-div), columns=columns))

    def serves_held_out(self, data: Dataset, train_sizes: list[int]) -> bool:
        """Whether :meth:`predict_held_out` serves a cross-validation's folds of ``data``
        from one engine (one label a row: :meth:`TransductiveEngine.serves_held_out`). Not
        with ``reliable_cv``: each fold's threshold must be learnt without its test rows."""
        if self.opts["reliable_cv"]:
            return False
        return TransductiveEngine.serves_held_out(data, self.new_tree(), train_sizes, 1,
                                                  self.opts["engine"])

    def predict_held_out(self, folds: list[np.ndarray]) -> list[tuple[Prediction, float]]:
        """Per fold, the predictions of its rows (indices into the fitted data) and the
        inductive tree's size: that tree fitted on the other rows, as a fit on them does,
        and the transductive step of every fold from this engine (``held_out``, bit for bit
        that fit's: :meth:`TpceMethod.predict_held_out`). Where the engine does not serve
        them, the engine's ValueError (or first a fold's inductive fit's own error)."""
        data = self.engine_.data
        row_fold, rows, x_fold = held_out_folds.assignment(data.n_samples, folds)
        trees = [self.new_tree(leaf="laplace").fit(data.subset(flat_nonzero(row_fold != f)))
                 for f in range(len(folds))]
        P = np.concatenate([t.predict_proba(data.X[f_rows]) for t, f_rows in
                            zip(trees, folds, strict=True)]) if folds else np.zeros((0, 0))
        pred = self._predict_rows(data.X[rows], P, None, (row_fold, x_fold))
        return [(p, float(t.tree_.n_leaves)) for p, t in
                zip(held_out_folds.split(pred, folds), trees, strict=True)]

    def predict_loo(self, rows: np.ndarray) -> Prediction:
        """Leave-one-out from one engine (see :meth:`TpceMethod.predict_loo`): the inductive
        tree of fold i is the tree grown without row i, x_i routed through it without
        growing it (:meth:`TransductiveEngine.loo_inductive`, bit for bit a refit);
        ``engine=naive`` refits it per row, the reference."""
        if self.opts["reliable_cv"]:
            raise ConfigError("kk: reliable_cv cannot run under leave-one-out: the threshold "
                              "would be learnt with the left-out row.",
                              "Evaluate with folds (--folds K), or drop reliable_cv.")
        data = self.engine_.data
        tree = self.new_tree(leaf="laplace")
        if self.opts["engine"] != "naive":
            P = self.engine_.loo_inductive(rows, alpha=tree.alpha)
            return self._predict_rows(data.X[rows], P, rows)
        P = np.empty((rows.size, data.schema.n_classes))
        for k, i in enumerate(rows):
            keep = np.delete(np.arange(data.n_samples), i)
            P[k] = self.new_tree(leaf="laplace").fit(data.subset(keep)).predict_proba(
                data.X[i : i + 1])[0]
        return self._predict_rows(data.X[rows], P, rows)

    def predict(self, data: Dataset) -> Prediction:
        return self._predict_rows(data.X, self.inductive_.predict_proba(data), None)

    @property
    def size(self) -> int | float | None:
        return self.inductive_.tree_.n_leaves
