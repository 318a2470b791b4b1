"""Kukar & Kononenko's transductive reliability (ECML 2002), as summarised in the TPCE
paper, section 2.2.

Inductive step: the tree learnt on D gives x a distribution P and a class ĉ = argmax P.
Transductive step: (x, ĉ) is added to D (x ineligible for thresholds, as in TPCE), the tree
is regrown by the transductive engine, and x's leaf gives Q. Both distributions are Laplace
leaf estimates (no zeros, so the divergence is finite). The reliability is a decreasing
function of the symmetric Kullback-Leibler divergence

    J(P, Q) = Σ_c (P_c - Q_c) ln(P_c / Q_c)   (= KL(P‖Q) + KL(Q‖P)),
    reliability = exp(-J(P, Q))  in (0, 1].

K&K threshold the divergence in a supervised way; treecert reports the continuous score so
that ``auc_reliability`` measures its ranking directly (any decreasing transform ranks the
same). The probabilities are the inductive ones; ``certainty`` is the reliability and the
column ``kk_divergence`` holds J.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.methods.base import Method, Prediction
from treecert.transductive import held_out_folds
from treecert.transductive.engine import (
    TransductiveEngine,
    check_engine,
    check_engine_covers,
)
from treecert.tree.segments import flat_nonzero


def symmetric_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """J(P, Q) row-wise for strictly positive distributions."""
    return np.sum((p - q) * np.log(p / q), axis=-1)


class KukarKononenkoMethod(Method):
    """K&K reliability; option ``engine`` (fast|path|naive)."""

    name = "kk"
    random_subsets = False
    options: ClassVar[dict[str, type]] = {"engine": str}
    defaults: ClassVar[dict] = {"engine": "fast"}

    def fit(self, data: Dataset) -> KukarKononenkoMethod:
        check_engine(self.opts["engine"], "kk")
        check_engine_covers(self.opts["engine"], self.new_tree(), "kk")
        self.inductive_ = self.new_tree(leaf="laplace").fit(data)
        self.engine_ = TransductiveEngine(data, self.new_tree())
        return self

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
        return Prediction(P, certainty=np.exp(-div), columns=columns)

    def serves_held_out(self, data: Dataset, train_sizes: list[int]) -> bool:
        """Whether :meth:`predict_held_out` serves a cross-validation's folds of ``data``
        from one engine (one label a row: :meth:`TransductiveEngine.serves_held_out`)."""
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
    def size(self) -> float | None:
        return float(self.inductive_.tree_.n_leaves)
