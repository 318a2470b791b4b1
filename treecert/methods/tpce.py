"""TPCE — transductive prediction certainty estimation (Costa, Verwer & Blockeel).

For a test instance x and every class c a tree is learnt on D ∪ {(x, c)}, x's values never
becoming thresholds but x counting in the heuristic (section 3.2); the leaf L_c that x
reaches gives a Laplace estimate, and the K estimates are averaged (Eq. 1):

    Pred(c) = (1/|T|) Σ_i (|L_i(c)| + 1) / (|L_i(c)| + |L_i(¬c)| + |T|),  |T| = K.

The paper does not say whether x itself counts in |L_i(·)|; it is part of the training set
of tree i, so by default it does (``count_x=true``); ``count_x=false`` leaves it out. When x
has unknown values it reaches several leaves fractionally and their estimates are summed
with x's shares, as in ordinary C4.5 prediction. ``tpce_disagree`` is 1 when the K trees
do not all predict the same class for x.

``engine=fast`` serves every (x, c) of a batch together
(:mod:`treecert.transductive.batch_engine`: on complete data, with any criterion, tests
certified unchanged and exact searches only where a test may change; with missing values,
exact searches of every node on x's paths); ``engine=path`` grows x's
paths one (x, c) at a time (:mod:`treecert.transductive.engine`); ``engine=naive`` grows
every tree in full — the reference. All three give identical output. ``collapse``/``cp``
edit whole trees: ``engine=fast`` grows a batch's trees together and edits them
(:mod:`treecert.transductive.edited_trees`); ``engine=path`` does not take them.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.methods.base import Method, Prediction, per_label_columns
from treecert.methods.option_rules import TRANSDUCTIVE_MIN_LEAF
from treecert.transductive import held_out_folds
from treecert.transductive.engine import (
    TransductiveEngine,
    check_engine,
    check_engine_covers,
)


class TpceMethod(Method):
    """TPCE (Eq. 1); options ``engine`` (fast|path|naive) and ``count_x`` (true|false)."""

    name = "tpce"
    random_subsets = False
    j48_cuts = False
    options: ClassVar[dict[str, type]] = {"engine": str, "count_x": bool}
    defaults: ClassVar[dict] = {"engine": "fast", "count_x": True}
    rules: ClassVar[dict] = {"min_leaf": TRANSDUCTIVE_MIN_LEAF}

    def fit(self, data: Dataset) -> TpceMethod:
        check_engine(self.opts["engine"], "tpce")
        check_engine_covers(self.opts["engine"], self.new_tree(), "tpce")
        self.engine_ = TransductiveEngine(data, self.new_tree())
        return self

    def _predict_rows(self, X: np.ndarray, drop_rows: np.ndarray | None,
                      held_out: tuple[np.ndarray, np.ndarray] | None = None) -> Prediction:
        """Eq. 1 for the rows X; row i's trees leave out training row ``drop_rows[i]``, or
        with ``held_out = (row_fold, x_fold)`` the training rows of its fold ``x_fold[i]``."""
        from treecert.parallel import map_chunks

        K = self.engine_.n_classes

        def work(lo: int, hi: int):
            m = hi - lo
            jobs_x = np.repeat(X[lo:hi], K, axis=0)  # instance-major: (x, 0), (x, 1), ...
            labels = np.tile(np.arange(K), m)
            drop = None if drop_rows is None else np.repeat(drop_rows[lo:hi], K)
            held = None if held_out is None else (held_out[0], np.repeat(held_out[1][lo:hi], K))
            per_tree = self.engine_.estimates(
                jobs_x, labels, drop, count_x=self.opts["count_x"],
                engine=self.opts["engine"], held_out=held).reshape(m, K, K)
            proba = per_tree.mean(axis=1)  # Eq. 1: the mean over the K trees
            votes = np.argmax(per_tree, axis=2)
            disagree = (votes != votes[:, :1]).any(axis=1).astype(np.int64)
            return proba, disagree, per_tree

        parts = map_chunks(work, X.shape[0], self.jobs)
        proba = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, K))
        disagree = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
        columns = {"tpce_disagree": disagree}
        if self.explain:  # the K trees' Laplace estimates: Eq. 1 averages them over a
            per_tree = np.concatenate([p[2] for p in parts]) if parts else np.zeros((0, K, K))
            columns.update(per_label_columns("tpce", per_tree,
                                             self.engine_.data.schema.classes))
        return Prediction(proba, columns=columns)

    def predict(self, data: Dataset) -> Prediction:
        return self._predict_rows(data.X, None)

    def serves_held_out(self, data: Dataset, train_sizes: list[int]) -> bool:
        """Whether :meth:`predict_held_out` serves the folds of a cross-validation of
        ``data`` (training sets of ``train_sizes`` rows) from one engine fitted on all of
        it, and it pays (:meth:`TransductiveEngine.serves_held_out`: missing values, small
        folds). Every fold's rounds are then shared: one batched search per depth."""
        return TransductiveEngine.serves_held_out(data, self.new_tree(), train_sizes,
                                                  data.schema.n_classes, self.opts["engine"])

    def predict_held_out(self, folds: list[np.ndarray]) -> list[tuple[Prediction, None]]:
        """Per fold, the predictions of its rows (indices into the fitted data) from the
        trees grown on the other rows — what fitting on those rows and predicting gives, bit
        for bit (the roots hold that fold's training rows in their order:
        :meth:`~treecert.transductive.batch_engine.BatchEngine.estimates`, ``held_out``) —
        and the model's size (none). Where the engine does not serve them
        (:func:`~treecert.transductive.held_out_folds.serves`): ValueError."""
        data = self.engine_.data
        row_fold, rows, x_fold = held_out_folds.assignment(data.n_samples, folds)
        pred = self._predict_rows(data.X[rows], None, (row_fold, x_fold))
        return [(p, None) for p in held_out_folds.split(pred, folds)]

    def predict_loo(self, rows: np.ndarray) -> Prediction:
        """Leave-one-out for the training rows ``rows``: D without row i plus (x_i, c) is the
        fitted data with row i dropped, so one engine serves every fold."""
        data = self.engine_.data
        return self._predict_rows(data.X[rows], rows)
