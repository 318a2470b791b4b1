"""Bagging, the TPCE paper's ensemble baseline (Clus-Ens): ``trees`` bootstrap trees with
Laplace leaves, probabilities averaged. By default as many trees as classes — "the same
number of trees as TPCE". Bootstrap samples are drawn with ``numpy.random.RandomState(seed)``
and expressed as instance weights (a row drawn k times gets weight k·w), which grows the same
tree as copying rows.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.methods.base import Method, Prediction


class BaggingMethod(Method):
    """Bootstrap ensemble; options ``trees`` (default: number of classes), ``seed``,
    ``leaf`` (laplace)."""

    name = "bagging"
    options: ClassVar[dict[str, type]] = {"trees": int, "seed": int, "leaf": str}
    defaults: ClassVar[dict] = {"trees": 0, "seed": 1, "leaf": "laplace"}
    randomised = True

    def fit(self, data: Dataset) -> BaggingMethod:
        labelled = data.subset(np.flatnonzero(data.y >= 0))
        n = labelled.n_samples
        n_trees = self.opts["trees"] or data.schema.n_classes
        rng = np.random.RandomState(self.opts["seed"])
        self.trees_ = []
        for _ in range(n_trees):
            draws = np.bincount(rng.randint(0, n, n), minlength=n)
            keep = np.flatnonzero(draws)
            sample = labelled.subset(keep)
            sample.weights = sample.weights * draws[keep]
            if np.unique(sample.y).size < 2:  # a one-class bootstrap: the tree is one leaf
                sample = labelled
            self.trees_.append(self.new_tree(leaf=self.opts["leaf"]).fit(sample))
        return self

    def predict(self, data: Dataset) -> Prediction:
        proba = np.mean([t.predict_proba(data) for t in self.trees_], axis=0)
        return Prediction(proba)

    @property
    def size(self) -> int | float | None:
        return float(np.mean([t.tree_.n_leaves for t in self.trees_]))
