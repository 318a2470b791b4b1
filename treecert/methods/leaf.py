"""A single tree with a leaf estimate: ``frequency``, ``laplace``, ``m_estimate``.

These are the papers' baselines: Clus-Orig (frequency), Clus-Orig with Laplace (the TPCE
paper's comparison), J48 ``-A``; the m-estimate after Cestnik (1990).
"""

from __future__ import annotations

from typing import ClassVar

from treecert.methods.base import Method, Prediction
from treecert.schema import Dataset


class _LeafMethod(Method):
    leaf: ClassVar[str] = "frequency"

    def _leaf_kwargs(self) -> dict:
        return {"leaf": self.leaf, **self.opts}

    def fit(self, data: Dataset) -> _LeafMethod:
        self.model_ = self.new_tree(**self._leaf_kwargs()).fit(data)
        return self

    def adopt(self, model) -> _LeafMethod:
        """Reuse the stored tree; only the leaf estimate changes (unless tree options are
        given, which need the training data to regrow)."""
        if any(k not in self.options for k in self.spec.options):
            return super().adopt(model)
        est = model.estimator
        params = {**est.get_params(), **self._leaf_kwargs()}
        self.model_ = type(est).from_tree(est.tree_, est.schema_, params)
        return self

    def predict(self, data: Dataset) -> Prediction:
        return Prediction(self.model_.predict_proba(data))

    @property
    def size(self) -> float | None:
        return float(self.model_.tree_.n_leaves)


class FrequencyMethod(_LeafMethod):
    """Leaf class frequencies n_c / n (Clus, scikit-learn, J48 without ``-A``)."""

    name = "frequency"
    leaf = "frequency"


class LaplaceMethod(_LeafMethod):
    """Laplace leaves (n_c + alpha) / (n + K alpha) (J48 ``-A``; Bradford et al. sect. 3)."""

    name = "laplace"
    leaf = "laplace"
    options: ClassVar[dict[str, type]] = {"alpha": float}
    defaults: ClassVar[dict] = {"alpha": 1.0}


class MEstimateMethod(_LeafMethod):
    """m-estimate leaves (n_c + m prior_c) / (n + m), prior = training class frequencies."""

    name = "m_estimate"
    leaf = "m_estimate"
    options: ClassVar[dict[str, type]] = {"m": float}
    defaults: ClassVar[dict] = {"m": 2.0}
