"""Bagging, the TPCE paper's ensemble baseline (Clus-Ens): ``trees`` bootstrap trees with
Laplace leaves, probabilities averaged. By default as many trees as classes — "the same
number of trees as TPCE". Bootstrap samples are drawn with ``numpy.random.RandomState(seed)``
and expressed as instance weights (a row drawn k times gets weight k·w), which grows the same
tree as copying rows (:func:`treecert.methods.ensemble.grow_bootstrap`).

``treecert train --method bagging`` (or ``calibrate --method bagging``) stores the grown
trees in the model file, so ``predict`` applies them without regrowing.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.methods.base import Method, Prediction, reading_state, stored_state
from treecert.methods.ensemble import (
    decode_trees,
    encode_trees,
    grow_bootstrap,
    per_tree_proba,
    stored_estimators,
)


class BaggingMethod(Method):
    """Bootstrap ensemble; options ``trees`` (default: number of classes), ``seed``,
    ``leaf`` (laplace)."""

    name = "bagging"
    options: ClassVar[dict[str, type]] = {"trees": int, "seed": int, "leaf": str}
    defaults: ClassVar[dict] = {"trees": 0, "seed": 1, "leaf": "laplace"}
    randomised = True

    def new_member(self, i: int):
        return self.new_tree(leaf=self.opts["leaf"])

    def fit(self, data: Dataset) -> BaggingMethod:
        labelled = data.subset(np.flatnonzero(data.y >= 0))
        n_trees = self.opts["trees"] or data.schema.n_classes
        self.trees_, _, _ = grow_bootstrap(labelled, n_trees, self.opts["seed"],
                                           self.new_member, oob=False)
        return self

    def state(self) -> dict:
        """What ``treecert train --method bagging`` / ``calibrate`` store: the trees."""
        return {"trees": encode_trees([t.tree_ for t in self.trees_])}

    def adopt(self, model) -> BaggingMethod:
        """The trees stored by this spec, or grown on the embedded training data."""
        state = stored_state(model, self.spec)
        if state is None or "trees" not in state:
            return super().adopt(model)

        def load() -> list:
            return decode_trees(state["trees"], model.schema.n_classes)

        params = self.new_member(0).get_params()
        self.trees_ = stored_estimators(reading_state(load), model.schema, params)
        return self

    def predict(self, data: Dataset) -> Prediction:
        return Prediction(per_tree_proba(self.trees_, data).mean(axis=0))

    @property
    def size(self) -> int | float | None:
        return float(np.mean([t.tree_.n_leaves for t in self.trees_]))
