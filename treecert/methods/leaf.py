"""A single tree with a leaf estimate: ``frequency``, ``laplace``, ``m_estimate``.

These are the papers' baselines: Clus-Orig (frequency), Clus-Orig with Laplace (the TPCE
paper's comparison), J48 ``-A``; the m-estimate after Cestnik (1990).
"""

from __future__ import annotations

from typing import Any, ClassVar

from treecert.data.schema import Dataset
from treecert.methods.base import Method, MethodSpec, Prediction

#: Post-pruning options every leaf method accepts (:mod:`treecert.pruning.prune`), e.g.
#: ``laplace:prune=ccp,cv=10,one_se=true``; the loss matrix is the run's ``--loss``.
PRUNE_OPTIONS: dict[str, type] = {
    "prune": str, "cf": float, "subtree_raising": bool, "kl_threshold": float,
    "kl_unit": str,
    "holdout": float, "cv": int, "one_se": bool, "seed": int,
}
PRUNE_DEFAULTS: dict[str, Any] = {"prune": "none", "seed": 1}


class PrunesTree:
    """Mixin: the ``prune`` options of :data:`PRUNE_OPTIONS`, applied to a fitted tree with
    the run's loss matrix (``tree_params["loss"]``)."""

    def __init__(self, tree_params: dict, spec: MethodSpec | None = None) -> None:
        super().__init__(tree_params, spec)
        #: Loss matrix L[true, predicted] of the run (evaluate/predict --loss), for pruning.
        self.loss = tree_params.get("loss")
        #: The pruning record of the last :meth:`_prune` that pruned (None: not pruned).
        self.pruning_ = None

    def prune_options(self):
        """The :class:`~treecert.pruning.common.PruneOptions` of this method's options."""
        from treecert.pruning.common import PruneOptions

        o = self.opts
        return PruneOptions(
            method=o.get("prune", "none"), cf=o.get("cf"), subtree_raising=o.get("subtree_raising"),
            kl_threshold=o.get("kl_threshold"), kl_unit=o.get("kl_unit"),
            holdout=o.get("holdout"), cv=o.get("cv"), one_se=o.get("one_se"),
            seed=o.get("seed", 1),
        )

    def _prune(self, estimator, data: Dataset):
        from treecert.pruning.prune import prune_tree

        options = self.prune_options()
        if options.method != "none":
            estimator.tree_, self.pruning_ = prune_tree(
                estimator.tree_, options, data=data, params=estimator.get_params(),
                loss=self.loss,
            )
        return estimator

    def _prune_stored(self, estimator, model):
        """:meth:`_prune` of a stored model's tree, with its embedded training data where
        the pruning method needs it."""
        if self.opts.get("prune", "none") == "none":
            return estimator
        return self._prune(estimator, _training_data_for(model, self.spec))


class _LeafMethod(PrunesTree, Method):
    leaf: ClassVar[str] = "frequency"
    #: The leaf estimate's own parameters with their defaults; the method's options are
    #: these (all floats) followed by the pruning options.
    leaf_defaults: ClassVar[dict[str, float]] = {}
    leaf_options: ClassVar[dict[str, type]] = {}
    options: ClassVar[dict[str, type]] = dict(PRUNE_OPTIONS)
    defaults: ClassVar[dict] = dict(PRUNE_DEFAULTS)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.leaf_options = dict.fromkeys(cls.leaf_defaults, float)
        cls.options = {**cls.leaf_options, **PRUNE_OPTIONS}
        cls.defaults = {**cls.leaf_defaults, **PRUNE_DEFAULTS}

    def _leaf_kwargs(self) -> dict:
        return {"leaf": self.leaf, **{k: self.opts[k] for k in self.leaf_options}}

    def fit(self, data: Dataset) -> _LeafMethod:
        self.model_ = self._prune(self.new_tree(**self._leaf_kwargs()).fit(data), data)
        return self

    def adopt(self, model) -> _LeafMethod:
        """Reuse the stored tree; only the leaf estimate changes (unless tree options are
        given, which need the training data to regrow). A ``prune`` option prunes the
        stored tree, with the model's embedded training data where the method needs it."""
        if any(k not in self.options for k in self.spec.options):
            return super().adopt(model)
        est = model.estimator
        params = {**est.get_params(), **self._leaf_kwargs()}
        self.model_ = self._prune_stored(type(est).from_tree(est.tree_, est.schema_, params),
                                         model)
        return self

    def predict(self, data: Dataset) -> Prediction:
        return Prediction(self.model_.predict_proba(data))

    @property
    def size(self) -> int | float | None:
        return self.model_.tree_.n_leaves


def _training_data_for(model, spec) -> Dataset | None:
    from treecert.pruning.common import PruneOptions

    data = model.training_data
    needs = PruneOptions(method=str(spec.options.get("prune", "none")),
                         subtree_raising=spec.options.get("subtree_raising")).needs_data
    if data is None and needs:
        from treecert.errors import ConfigError

        raise ConfigError(
            f"method '{spec}' needs the training data, but the model was saved with "
            "--no-embed-data.",
            "Retrain without --no-embed-data, or prune with 'treecert prune --train FILE'.",
        )
    return data


class FrequencyMethod(_LeafMethod):
    """Leaf class frequencies n_c / n (Clus, scikit-learn, J48 without ``-A``)."""

    name = "frequency"
    leaf = "frequency"


class LaplaceMethod(_LeafMethod):
    """Laplace leaves (n_c + alpha) / (n + K alpha) (J48 ``-A``; Bradford et al. sect. 3)."""

    name = "laplace"
    leaf = "laplace"
    leaf_defaults: ClassVar[dict[str, float]] = {"alpha": 1.0}


class MEstimateMethod(_LeafMethod):
    """m-estimate leaves (n_c + m prior_c) / (n + m), prior = training class frequencies."""

    name = "m_estimate"
    leaf = "m_estimate"
    leaf_defaults: ClassVar[dict[str, float]] = {"m": 2.0}
