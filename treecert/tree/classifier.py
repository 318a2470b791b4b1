"""The :class:`DecisionTree` estimator: growing settings, ``fit`` and prediction.

It grows a :class:`~treecert.tree.arrays.Tree` with :mod:`treecert.tree.grow` and predicts
through the tree's arrays; the certainty methods and the transductive engines start from it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from treecert.data.schema import Dataset, Schema
from treecert.errors import ConfigError, DataError
from treecert.tree.arrays import Tree, collapse, prune_to_cp
from treecert.tree.feature_draw import FeatureDraw, resolve_max_features
from treecert.tree.grow import grow
from treecert.tree.j48_cuts import j48_split_points
from treecert.tree.leaf_estimates import normalise_leaf_name
from treecert.tree.params import LEARNER_RULES, check_all
from treecert.tree.segments import flat_nonzero
from treecert.tree.split_search import GrowParams, SplitFinder


@dataclass
class DecisionTree:
    """A C4.5-family classification tree with fit / predict_proba conventions.

    Parameters (keyword-only, stored as given)
    ------------------------------------------
    criterion : "info_gain" (default, the papers), "gain_ratio" (J48), "gini" (CART).
    min_leaf : minimum weight of a branch (J48 ``-M``, Clus ``MinimalWeight``), default 2.
    max_depth, min_gain : further pre-pruning; ``cp``: rpart's relative complexity.
    binary_splits : one-value-versus-rest nominal tests (J48 ``-B``).
    threshold : "midpoint", "lower" (observed value, C4.5) or "j48" (J48's cuts: between
        values more than 1e-5 apart, moved to the largest value of the whole training set
        not above the midpoint; :mod:`treecert.tree.j48_cuts`).
    collapse : J48's collapse of subtrees that do not reduce training errors.
    leaf : "frequency", "laplace" (alpha) or "m_estimate" (m) leaf estimates.
    max_features : attributes searched at each node — None / "all" (default: every one),
        "sqrt", "log2", an integer or a fraction — drawn at random per node with
        ``random_state`` (:func:`~treecert.tree.split_search.resolve_max_features`).
    random_state : seed of those draws (unused with every attribute).

    Fitted attributes: ``tree_`` (:class:`Tree`), ``schema_``, ``grown_`` (with row slices).
    """

    criterion: str = "info_gain"
    min_leaf: float = 2.0
    max_depth: int | None = None
    min_gain: float = 0.0
    cp: float = 0.0
    binary_splits: bool = False
    threshold: str = "midpoint"
    collapse: bool = False
    leaf: str = "frequency"
    alpha: float = 1.0
    m: float = 2.0
    max_features: str | int | float | None = None
    random_state: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.leaf, str):
            self.leaf = normalise_leaf_name(self.leaf)
        if isinstance(self.criterion, str):
            self.criterion = self.criterion.replace("-", "_")
        # one check of every setting (tree.params), canonical types: NaN, an integer beyond
        # float range or a string never reaches the grower or the model file
        for name, value in check_all(LEARNER_RULES, self.get_params(), "the tree's").items():
            setattr(self, name, value)

    @property
    def grow_params(self) -> GrowParams:
        return GrowParams(
            criterion=self.criterion,
            min_leaf=float(self.min_leaf),
            max_depth=self.max_depth,
            min_gain=float(self.min_gain),
            binary_splits=bool(self.binary_splits),
            threshold=self.threshold,
            collapse=bool(self.collapse),
        )

    def get_params(self) -> dict:
        return {
            "criterion": self.criterion, "min_leaf": self.min_leaf, "max_depth": self.max_depth,
            "min_gain": self.min_gain, "cp": self.cp, "binary_splits": self.binary_splits,
            "threshold": self.threshold, "collapse": self.collapse, "leaf": self.leaf,
            "alpha": self.alpha, "m": self.m,
        } | self.subset_params()

    def subset_params(self) -> dict:
        """``max_features`` and ``random_state`` where attributes are drawn at random; none
        otherwise, so the parameters (and model files) of trees searching every attribute
        stay as they were."""
        if self.max_features is None or self.max_features == "all":
            return {}
        return {"max_features": self.max_features, "random_state": self.random_state}

    def make_finder(
        self, data: Dataset, *, eligible: np.ndarray | None = None,
        X: np.ndarray | None = None, y: np.ndarray | None = None,
    ) -> SplitFinder:
        """The split finder over ``data`` (or explicit X, y in its schema)."""
        schema = data.schema
        finder = SplitFinder(
            data.X if X is None else X,
            data.y if y is None else y,
            schema.nominal_mask(),
            schema.n_values(),
            schema.n_classes,
            self.grow_params,
            eligible=eligible,
            n_total_rows=data.n_samples,
        )
        k = resolve_max_features(self.max_features, schema.n_features)
        if k is not None:
            finder.feature_draw = FeatureDraw(k, schema.n_features, self.random_state)
        return finder

    def fit(self, data: Dataset, *, eligible: np.ndarray | None = None,
            sample: bool = False) -> DecisionTree:
        """Grow the tree on ``data`` (rows with a missing class are ignored).

        ``eligible`` (bool per row) marks rows whose values may become thresholds; rows
        marked False still count in the split heuristic (TPCE paper, section 3.2).
        ``sample``: ``data`` resamples checked data (an ensemble member's bootstrap), where
        an attribute without known values is never tested rather than refused
        (:func:`~treecert.data.loading.check_trainable`).
        """
        from treecert.data.loading import check_trainable

        check_trainable(data, sample=sample)
        labelled = flat_nonzero(data.y >= 0)
        finder = self.make_finder(data, eligible=eligible)
        grown = grow(finder, labelled, data.weights[labelled].astype(float))
        self.tree_ = self.finished(Tree.from_grown(grown),
                                   data.X if eligible is None else data.X[eligible])
        self.grown_ = grown
        self.schema_ = data.schema
        return self

    def finished(self, tree: Tree, X: np.ndarray) -> Tree:
        """A grown tree as ``fit`` keeps it: with ``threshold="j48"`` each cut moved onto
        the largest value of the training rows ``X`` not above it (J48's setSplitPoint),
        then :meth:`edited` (collapse, cp). One home for the single tree and the ensembles'
        batch (:func:`~treecert.tree.batch_grow.fit_trees`)."""
        if self.threshold == "j48":
            tree = replace(tree, threshold=j48_split_points(tree.feature, tree.threshold, X),
                           j48_cuts=True, _cache={})
        return self.edited(tree)

    def edited(self, tree: Tree) -> Tree:
        """``tree`` after this learner's post-growth edits (``collapse``, then ``cp``), as
        :meth:`fit` applies them: one home for the order, which the transductive engines
        and the Venn machine's size follow too."""
        if self.collapse:
            tree = collapse(tree)
        if self.cp > 0:
            tree = prune_to_cp(tree, self.cp)
        return tree

    def _check_fitted(self) -> None:
        if not hasattr(self, "tree_"):
            raise ConfigError("this DecisionTree is not fitted yet; call fit() first.")

    def predict_proba(self, data: Dataset | np.ndarray) -> np.ndarray:
        """Class probabilities (n_samples, n_classes) with the configured leaf estimate."""
        self._check_fitted()
        X = data.X if isinstance(data, Dataset) else np.asarray(data, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.schema_.n_features:
            raise DataError(
                f"expected {self.schema_.n_features} attributes, got an array of shape "
                f"{X.shape}."
            )
        return self.tree_.predict_proba(X, self.leaf, alpha=self.alpha, m=self.m)

    def predict(self, data: Dataset | np.ndarray) -> np.ndarray:
        """Class codes of the most probable class (ties: the first declared class)."""
        return np.argmax(self.predict_proba(data), axis=1)

    @classmethod
    def from_tree(cls, tree: Tree, schema: Schema, params: dict) -> DecisionTree:
        """Rebuild a fitted estimator from stored arrays (model files)."""
        est = cls(**params)
        if est.threshold == "j48" and not tree.j48_cuts:  # a model file's tree: J48 routing
            tree = replace(tree, j48_cuts=True, _cache={})
        est.tree_ = tree
        est.schema_ = schema
        return est
