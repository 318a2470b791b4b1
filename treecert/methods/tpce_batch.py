"""TPCE for a whole batch (Costa et al., section 5, future work).

K trees are learnt once for the whole batch of test instances: in tree t every test
instance carries one tentative label, and across the K trees each instance receives every
label exactly once (an independent random permutation of the labels per instance, drawn with
``numpy.random.RandomState(seed)``). Test instances are ineligible for thresholds but count
in the heuristic and in the leaves; the K leaf estimates are combined with Eq. 1.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.methods.base import Method, Prediction
from treecert.methods.option_rules import TRANSDUCTIVE_MIN_LEAF
from treecert.tree.segments import flat_nonzero


class TpceBatchMethod(Method):
    """Batch TPCE; option ``seed``."""

    name = "tpce_batch"
    random_subsets = False
    j48_cuts = False
    options: ClassVar[dict[str, type]] = {"seed": int}
    defaults: ClassVar[dict] = {"seed": 1}
    rules: ClassVar[dict] = {"min_leaf": TRANSDUCTIVE_MIN_LEAF}
    randomised = True

    def fit(self, data: Dataset) -> TpceBatchMethod:
        self.train_ = data.subset(flat_nonzero(data.y >= 0))
        return self

    def predict(self, data: Dataset) -> Prediction:
        train, K, B = self.train_, self.train_.schema.n_classes, data.n_samples
        rng = np.random.RandomState(self.opts["seed"])
        labels = np.array([rng.permutation(K) for _ in range(B)]).reshape(B, K)
        X = np.vstack([train.X, data.X])
        eligible = np.r_[np.ones(train.n_samples, bool), np.zeros(B, bool)]
        proba = np.zeros((B, K))
        per_tree = np.zeros((K, B), dtype=np.int64)
        for t in range(K):
            y = np.r_[train.y, labels[:, t]]
            w = np.r_[train.weights, np.ones(B)]
            augmented = Dataset(train.schema, X, y, w, source=train.source)
            tree = self.new_tree(leaf="laplace").fit(augmented, eligible=eligible)
            p = tree.predict_proba(data)
            proba += p
            per_tree[t] = np.argmax(p, axis=1)
        disagree = (per_tree != per_tree[0]).any(axis=0).astype(np.int64)
        return Prediction(proba / K, columns={"tpce_disagree": disagree})
