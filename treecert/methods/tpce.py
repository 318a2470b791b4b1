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

``engine=fast`` grows only x's path (:mod:`treecert.engine`); ``engine=naive`` grows every
tree in full — the reference, identical output.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.engine import TransductiveEngine, leaf_estimate
from treecert.errors import ConfigError
from treecert.methods.base import Method, Prediction
from treecert.schema import Dataset


class TpceMethod(Method):
    """TPCE (Eq. 1); options ``engine`` (fast|naive) and ``count_x`` (true|false)."""

    name = "tpce"
    options: ClassVar[dict[str, type]] = {"engine": str, "count_x": bool}
    defaults: ClassVar[dict] = {"engine": "fast", "count_x": True}

    def fit(self, data: Dataset) -> TpceMethod:
        if self.opts["engine"] not in ("fast", "naive"):
            raise ConfigError(f"tpce: unknown engine '{self.opts['engine']}'.",
                              "Choose fast or naive.")
        self.engine_ = TransductiveEngine(data, self.new_tree())
        return self

    def _one(self, x: np.ndarray, drop_row: int | None = None) -> tuple[np.ndarray, int]:
        K = self.engine_.n_classes
        per_tree = np.empty((K, K))
        for c in range(K):
            leaves = self.engine_.leaves(x, c, drop_row=drop_row, engine=self.opts["engine"])
            per_tree[c] = leaf_estimate(leaves, K, count_x=self.opts["count_x"])
        proba = per_tree.mean(axis=0)  # Eq. 1
        disagree = int(np.unique(np.argmax(per_tree, axis=1)).size > 1)
        return proba, disagree

    def _predict_rows(self, X: np.ndarray, drop_rows: np.ndarray | None) -> Prediction:
        from treecert.parallel import map_chunks

        def work(lo: int, hi: int):
            out = [self._one(X[i], None if drop_rows is None else int(drop_rows[i]))
                   for i in range(lo, hi)]
            return (np.array([o[0] for o in out]).reshape(hi - lo, -1),
                    np.array([o[1] for o in out], dtype=np.int64))

        parts = map_chunks(work, X.shape[0], self.jobs)
        proba = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 0))
        disagree = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
        return Prediction(proba, columns={"tpce_disagree": disagree})

    def predict(self, data: Dataset) -> Prediction:
        return self._predict_rows(data.X, None)

    def predict_loo(self, rows: np.ndarray) -> Prediction:
        """Leave-one-out for the training rows ``rows``: D without row i plus (x_i, c) is the
        fitted data with row i dropped, so one engine serves every fold."""
        data = self.engine_.data
        return self._predict_rows(data.X[rows], rows)
