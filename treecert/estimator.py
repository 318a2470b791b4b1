"""``TreecertClassifier``: treecert as a scikit-learn estimator.

``fit(X, y)`` on numpy arrays, lists of rows or pandas DataFrames; ``predict``,
``predict_proba``, ``score``; and the certainty the command line reports, through
``predict_certainty``, ``predict_proba_bounds`` and ``predict_with_certainty``. Any registered
certainty method runs behind it (``method="laplace"``, ``"tpce"``, ``"venn"``, ...), fitted
exactly as ``treecert evaluate`` fits it: the estimator only turns arrays into a
:class:`~treecert.data.schema.Dataset` (:mod:`treecert.data.inmemory`) and hyperparameters
into a method specification (:mod:`treecert.methods.base`).

scikit-learn is optional (:mod:`treecert.sklearn_base`): with it installed the estimator is a
``ClassifierMixin`` + ``BaseEstimator`` and passes ``check_estimator``; without it, the same
class works with stand-ins for ``get_params``/``set_params``/``score``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from treecert.data.inmemory import (
    check_feature_names,
    label_of,
    learn_encoding,
    read_matrix,
    read_target,
    read_weights,
)
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.errors import InputError, ParameterError
from treecert.estimator_options import _as_value_errors, _typed
from treecert.estimator_tree import TreeAPIMixin
from treecert.methods import METHODS, MethodSpec, make_method, parse_method_spec
from treecert.methods.base import TREE_OPTIONS, Prediction
from treecert.methods.option_rules import check_options, kind_of
from treecert.parallel import effective_jobs
from treecert.pruning.common import OPTION_OWNERS as PRUNE_OPTION_OWNERS
from treecert.sklearn_base import (
    BaseEstimator,
    ClassifierMixin,
    DataConversionWarning,
    NotFittedError,
)
from treecert.tree.classifier import DecisionTree

__all__ = ["TreecertClassifier"]

#: The scikit-learn checks (``check_estimator``) that contradict a method's definition, as
#: ``expected_failed_checks`` per method; every other check passes for every method, and
#: every check for the default method.
EXPECTED_CHECK_FAILURES: dict[str, dict[str, str]] = {
    "tpce_batch": dict.fromkeys(
        ("check_methods_sample_order_invariance", "check_methods_subset_invariance"),
        "batch TPCE (Costa et al., section 5) grows its trees on the training data plus the "
        "whole test batch, so a row's probabilities depend on the rows predicted with it "
        "(and each row's label permutation on its place in the batch)",
    ),
    "bagging": {
        "check_sample_weight_equivalence_on_dense_data":
            "a bootstrap sample draws rows: k copies of a row are k chances to be drawn, one "
            "row of weight k is one (scikit-learn's BaggingClassifier fails it too)",
    },
    "calibrated_bagging": {
        "check_sample_weight_equivalence_on_dense_data":
            "its trees are grown on bootstrap samples (as bagging's) and its temperature on "
            "their out-of-bag rows: k copies of a row are k chances to be drawn, one row of "
            "weight k is one",
    },
    "forest": {
        "check_sample_weight_equivalence_on_dense_data":
            "its trees are grown on bootstrap samples (as calibrated_bagging's): k copies "
            "of a row are k chances to be drawn, one row of weight k is one",
    },
    "binning": {
        "check_sample_weight_equivalence_on_dense_data":
            "the bins are learnt from out-of-fold forecasts of a cross-validation over rows: "
            "k copies of a row fall into several folds, one row of weight k into one",
    },
    "certified_tree": {
        "check_sample_weight_equivalence_on_dense_data":
            "its leaf smoothing and temperature are chosen on out-of-fold forecasts of a "
            "cross-validation over rows: k copies of a row fall into several folds, one row "
            "of weight k into one",
    },
}

#: Estimator parameters passed to the method as options: parameter -> option name.
_OPTION_PARAMS = {"alpha": "alpha", "m": "m", "cf": "cf", "n_trees": "trees"}


#: The estimator's own parameters that ``fit`` ignores, with a warning, where they do not
#: apply (options written in ``method`` or ``method_options`` are refused instead).
_IGNORABLE = (*_OPTION_PARAMS, "prune")


def _ignored(message: str) -> None:
    """One warning for one parameter that does not apply (pointing at the caller of fit)."""
    warnings.warn(message, UserWarning, stacklevel=4)


class TreecertClassifier(TreeAPIMixin, ClassifierMixin, BaseEstimator):
    """A C4.5-family decision tree with a certainty method, as a scikit-learn classifier.

    Parameters (keyword-only, stored as given; checked in ``fit``)
    ----------------------------------------------------------
    method : str, default="laplace"
        A registered certainty method (``treecert.methods.METHODS``):
        {methods};
        optionally with the method's own options as on the command line, e.g.
        ``"venn:taxonomy=leaf"``. Not ``treecert train``'s default leaf (``frequency``) on
        purpose: a pure leaf's frequencies are 0 and 1, so one wrong row makes
        ``scoring="neg_log_loss"`` infinite; Laplace's leaves never reach 0 or 1 and rank
        pure leaves by size. ``method="frequency"`` fits ``treecert train``'s model.
    criterion, min_leaf, max_depth, min_gain, cp, binary_splits, threshold, collapse
        The tree learner's settings, as ``treecert train`` and
        :class:`~treecert.tree.classifier.DecisionTree` take them: ``criterion`` is
        ``"info_gain"`` (the papers), ``"gain_ratio"`` (J48) or ``"gini"``; ``min_leaf`` the
        minimum weight of a branch (J48 ``-M``); ``threshold`` ``"midpoint"``, ``"lower"``
        (C4.5) or ``"j48"`` (J48's cuts); ``collapse`` J48's subtree collapse; ``cp``
        rpart's complexity.
    max_features : str, int, float or None, default=None
        Attributes searched at each node, drawn at random per node: None (every one),
        ``"sqrt"``, ``"log2"``, an integer or a fraction (``forest`` defaults to ``"sqrt"``).
    alpha, m : float, default=None
        Laplace's ``alpha`` / the m-estimate's ``m`` (None: the method's default, 1 and 2).
        ``alpha``, ``m``, ``prune``, ``cf`` and ``n_trees`` apply only to some settings
        (``m`` to ``m_estimate``, ``cf`` to ``prune="ebp"``, ...); where one does not
        apply, ``fit`` ignores it with a ``UserWarning`` that names it and says why, as
        scikit-learn's estimators do, so a grid over ``prune`` x ``cf`` fits every point;
        options written in ``method`` or ``method_options`` are refused there.
    prune : str, default="none"
        Post-pruning of the leaf methods and ``empirical_bayes``: ``"ccp"``, ``"ebp"`` (J48),
        ``"laplace_loss"``, ``"kl"``, ``"rep"`` (:mod:`treecert.pruning.prune`).
    cf : float, default=None
        ``ebp``'s confidence factor (None: 0.25, as J48).
    loss : array-like of shape (n_classes, n_classes) or dict, default=None
        Loss matrix ``L[true, predicted]`` in the order of ``classes_`` (or a mapping
        ``{true: {predicted: cost}}``). Loss-aware pruning uses it, and ``predict`` then
        returns the class of minimum expected loss (Bradford et al. sect. 2.1), as
        ``treecert predict --loss`` does; ``predict_proba`` is unchanged.
    n_trees : int, default=None
        ``bagging``'s number of trees (None: as many as classes, the TPCE paper's setting).
    method_options : dict, default=None
        Further options of the method by name, e.g. ``{"engine": "path"}`` for ``tpce`` or
        ``{"holdout": 0.3, "one_se": True}`` for ``prune="ccp"``.
    nominal : list of str or int, or bool mask, default=None
        Numeric columns to treat as nominal (one value per distinct number). Without it,
        a column is nominal when it holds labels: pandas ``category`` (in the categories'
        order), ``bool``, ``object``/``string`` columns, numpy bool and string arrays.
    random_state : int, RandomState or None, default=None
        Seed of the randomised methods and pruning (the ``seed`` option); None keeps the
        method's default seed (1), so results are reproducible as on the command line.
    n_jobs : int, default=None
        Worker processes for the per-instance work of ``tpce``, ``kk`` and ``venn`` (None:
        1; -1: all cores). Results never depend on it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted (``numpy.unique``).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when ``X`` is a DataFrame whose column names are all strings.
    nominal_features_ : ndarray of bool, shape (n_features_in_,)
        Which columns were read as nominal.
    schema_ : treecert.data.schema.Schema
        The attributes the tree was grown on (columns without any known value in fit are
        left out, as J48 leaves them out) and the class labels.
    method_ : treecert.methods.base.Method
        The fitted certainty method; ``method_.size`` is its number of leaves (an int for
        one tree, the mean over the trees of an ensemble).
    feature_importances_ : ndarray of shape (n_features_in_,)
        Per column, the total weighted impurity decrease of the tests on it, normalised to
        sum to 1 (scikit-learn's definition), in the tree's criterion: Gini for
        ``criterion="gini"``, entropy for ``"info_gain"`` and ``"gain_ratio"``. A nominal
        test's decrease is over all its branches (C4.5's multiway split). Columns the tree
        does not test get 0. Of the tree that :meth:`get_depth` describes.

    The tree API (``feature_importances_``, :meth:`apply`, :meth:`decision_path`,
    :meth:`get_depth`, :meth:`get_n_leaves`) reads the tree a method predicts with:
    the leaf methods' and ``empirical_bayes``' (pruned) tree; for ``kk`` its inductive tree;
    for ``tpce`` the tree grown on the training data alone (each of its transductive trees
    changes it only along the row's path); for ``binning`` and ``venn`` their base method's
    tree, as ``treecert predict --explain`` does. Ensembles (``bagging``,
    ``calibrated_bagging``), ``naive_bayes`` and ``tpce_batch`` have no single tree: there
    these raise a ``ValueError``.

    Notes
    -----
    Missing values (NaN, None) are handled as C4.5 does, with fractional instances. A row
    of weight 0 is left out, as if it were not there. A nominal value not seen in fit is read
    as missing. Labels may be strings, integers or booleans; a target with NaN or with
    non-integer numbers is rejected.

    The estimator passes scikit-learn's ``check_estimator`` with every method, except the
    checks in ``EXPECTED_CHECK_FAILURES`` that contradict a method's definition: batch TPCE
    (``tpce_batch``) predicts a batch together, so its rows are not invariant to the batch's
    order or subsets; the bootstraps of ``bagging``, ``calibrated_bagging`` and ``forest``
    and ``binning``'s cross-validation draw rows, so a weight of k is not the same as k
    copies of a row.

    References
    ----------
    Quinlan (1993), C4.5; Costa, Verwer & Blockeel, "Estimating prediction certainty in
    decision trees" (TPCE); Kukar & Kononenko (2002); Lindsay & Cox (Venn); Bradford et al.
    (1998), pruning under loss. See the README's Methods section.

    Examples
    --------
    >>> import numpy as np
    >>> from treecert import TreecertClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> y = np.array(["no", "no", "no", "yes", "yes", "yes"])
    >>> clf = TreecertClassifier(method="laplace").fit(X, y)
    >>> clf.predict([[0.5], [4.5]]).tolist()
    ['no', 'yes']
    >>> clf.predict_proba([[4.5]]).round(2).tolist()
    [[0.2, 0.8]]
    """

    def __init__(
        self,
        *,
        method: str = "laplace",
        criterion: str = "info_gain",
        min_leaf: float = 2.0,
        max_depth: int | None = None,
        min_gain: float = 0.0,
        cp: float = 0.0,
        binary_splits: bool = False,
        threshold: str = "midpoint",
        collapse: bool = False,
        max_features: str | int | float | None = None,
        alpha: float | None = None,
        m: float | None = None,
        prune: str = "none",
        cf: float | None = None,
        loss: Any = None,
        n_trees: int | None = None,
        method_options: dict | None = None,
        nominal: Any = None,
        random_state: Any = None,
        n_jobs: int | None = None,
    ) -> None:
        self.method = method
        self.criterion = criterion
        self.min_leaf = min_leaf
        self.max_depth = max_depth
        self.min_gain = min_gain
        self.cp = cp
        self.binary_splits = binary_splits
        self.threshold = threshold
        self.collapse = collapse
        self.max_features = max_features
        self.alpha = alpha
        self.m = m
        self.prune = prune
        self.cf = cf
        self.loss = loss
        self.n_trees = n_trees
        self.method_options = method_options
        self.nominal = nominal
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ---------------------------------------------------------------- parameters

    def _tree_params(self) -> dict:
        params = {"criterion": self.criterion, "min_leaf": self.min_leaf,
                  "max_depth": self.max_depth, "min_gain": self.min_gain, "cp": self.cp,
                  "binary_splits": self.binary_splits, "threshold": self.threshold,
                  "collapse": self.collapse, "max_features": self.max_features}
        for key, kind in TREE_OPTIONS.items():
            # max_features is a name or a number; DecisionTree checks it
            if params[key] is not None and key != "max_features":
                params[key] = _typed(params[key], kind, key)
        with _as_value_errors():
            DecisionTree(**params)  # checks the values
        return params

    def _seed(self) -> int | None:
        rs = self.random_state
        if rs is None:
            return None
        if isinstance(rs, numbers.Integral) and not isinstance(rs, bool | np.bool_):
            return int(rs)
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(np.iinfo(np.int32).max))
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(np.iinfo(np.int32).max))
        raise ParameterError(f"random_state: expected None, an int or a RandomState, "
                             f"got {rs!r}.")

    def _method_spec(self) -> MethodSpec:
        """The method specification: ``method``'s own options, ``method_options`` and the
        option parameters, each option given in one place only."""
        if not isinstance(self.method, str):
            raise ParameterError(f"method: expected a method name, got {self.method!r}.",
                                 f"Choose one of: {', '.join(METHODS)}.")
        with _as_value_errors():
            parsed = parse_method_spec(self.method, METHODS)
        cls = METHODS[parsed.name]
        tree_keys = [k for k in parsed.options if k in TREE_OPTIONS and k not in cls.options]
        if tree_keys:
            raise ParameterError(
                f"method={self.method!r} sets {', '.join(tree_keys)}, a setting of the tree.",
                f"Give it as the estimator's parameter, e.g. {tree_keys[0]}=...",
            )
        options = dict(parsed.options)
        where = dict.fromkeys(options, f"method={self.method!r}")
        given: list[tuple[str, str, object]] = []
        if self.method_options is not None:
            if not isinstance(self.method_options, dict):
                raise ParameterError(f"method_options: expected a dict of options, got "
                                     f"{self.method_options!r}.")
            given += [(str(k).replace("-", "_"), "method_options", v)
                      for k, v in self.method_options.items()]
        given += [(opt, param, getattr(self, param)) for param, opt in _OPTION_PARAMS.items()
                  if getattr(self, param) is not None]
        if self.prune not in (None, "none"):
            given.append(("prune", "prune", self.prune))
        seed = self._seed()
        if seed is not None and "seed" in cls.options:
            given.append(("seed", "random_state", seed))
        for key, source, value in given:
            if key not in cls.options and source in _IGNORABLE:
                _ignored(f"{source}={value!r} is ignored: method {parsed.name!r} has no "
                         f"option {key!r}.")
                continue
            if key not in cls.options:
                raise ParameterError(
                    f"{source}: method {parsed.name!r} has no option {key!r}.",
                    f"Its options: {', '.join(sorted(cls.options)) or 'none'}.",
                )
            if key in options:
                raise ParameterError(
                    f"option {key!r} is given twice, by {where[key]} and by {source}.")
            options[key] = _typed(value, kind_of(cls.options[key]), f"{source} ({key})")
            where[key] = source
        pruning = str(options.get("prune", "none")).strip().lower().replace("-", "_")
        for key, owners in PRUNE_OPTION_OWNERS.items():
            if key in options and where[key] in _IGNORABLE and pruning not in owners:
                _ignored(f"{where[key]}={options.pop(key)!r} is ignored: it applies to "
                         f"prune={' or '.join(map(repr, owners))} only, and prune is "
                         f"{pruning!r}.")
        with _as_value_errors():
            options = check_options(cls, options, f"method {parsed.name!r}")
        text = parsed.name + (":" + ",".join(f"{k}={v}" for k, v in options.items())
                              if options else "")
        return MethodSpec(parsed.name, options, text)

    def _loss_matrix(self, labels: tuple[str, ...]) -> np.ndarray | None:
        if self.loss is None:
            return None
        k = len(labels)
        if isinstance(self.loss, dict):
            from treecert.pruning.loss import parse_loss

            table = {label_of(t): ({label_of(p): c for p, c in row.items()}
                                   if isinstance(row, dict) else row)
                     for t, row in self.loss.items()}
            with _as_value_errors():
                return parse_loss({"loss": table}, labels, "loss")
        try:
            L = np.array(self.loss, dtype=np.float64)
        except (TypeError, ValueError):
            raise ParameterError(f"loss: expected a ({k}, {k}) matrix of numbers.") from None
        if L.shape != (k, k):
            raise ParameterError(
                f"loss: expected a ({k}, {k}) matrix, L[true, predicted] in the order of "
                f"classes_ ({', '.join(labels)}); got shape {L.shape}."
            )
        if not np.isfinite(L).all() or (L < 0).any():
            raise ParameterError("loss: every cost must be finite and >= 0.")
        return L

    # ---------------------------------------------------------------- fit

    def fit(self, X, y, sample_weight=None) -> TreecertClassifier:
        """Grow the tree(s) of ``method`` on ``X`` (n_samples, n_features) and ``y``.

        ``sample_weight`` (n_samples,) are instance weights, as ARFF's ``{w}``; a weight of
        0 leaves the row out.
        """
        spec = self._method_spec()
        tree_params = self._tree_params()
        if self.n_jobs is not None and (
            not isinstance(self.n_jobs, numbers.Integral) or isinstance(self.n_jobs, bool)
        ):
            raise ParameterError(f"n_jobs: expected None or an int, got {self.n_jobs!r}.")
        matrix = read_matrix(X, "X")
        n = matrix.shape[0]
        classes, codes, was_column = read_target(y, n, type(self).__name__)
        if was_column:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected. Please change "
                "the shape of y to (n_samples,), for example using ravel().",
                DataConversionWarning, stacklevel=2,
            )
        w = read_weights(sample_weight, n)
        with _as_value_errors():
            encoding, X_codes = learn_encoding(matrix, self.nominal)
        labels = tuple(label_of(c) for c in classes)
        keep = w > 0
        present = np.unique(codes[keep])
        if present.size < 2:
            weighted = "" if keep.all() else " among the rows of positive sample_weight"
            raise InputError(
                f"y has only one class ({labels[present[0]]!r}){weighted}; a classifier "
                "needs at least two classes to tell apart.")
        used = np.flatnonzero(~np.isnan(X_codes[keep]).all(axis=0))
        dropped = [name for j, name in enumerate(matrix.names) if j not in set(used.tolist())]
        if used.size == 0:
            raise InputError("X: no column has a known value; a tree needs at least one.")
        if dropped:
            warnings.warn(f"X: column(s) {', '.join(map(repr, dropped))} have no known "
                          "value; the tree ignores them (as J48 does).", UserWarning,
                          stacklevel=2)
        class_name = getattr(y, "name", None)
        schema = Schema(tuple(encoding.attributes[j] for j in used),
                        Attribute(class_name if isinstance(class_name, str) else "class",
                                  "nominal", labels))
        data = Dataset(schema, X_codes[keep][:, used], codes[keep], w[keep],
                       source="the training data")
        loss = self._loss_matrix(labels)
        with _as_value_errors():
            runner = make_method(spec, {**tree_params, "loss": loss})
            runner.jobs = effective_jobs(self.n_jobs)
            runner.fit(data)
        self.classes_ = classes
        self.n_features_in_ = matrix.shape[1]
        if matrix.feature_names is not None:
            self.feature_names_in_ = np.asarray(matrix.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.nominal_features_ = encoding.nominal_mask
        self.schema_ = schema
        self.method_ = runner
        self._train_data = data
        self._base_tree = None
        self._encoding = encoding
        self._used = used
        self._loss = loss
        return self

    # ---------------------------------------------------------------- predict

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "method_")

    def _check_fitted(self) -> None:
        if not hasattr(self, "method_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                "appropriate arguments before using this estimator."
            )

    def _predict_data(self, X) -> tuple[Dataset, object]:
        self._check_fitted()
        matrix = read_matrix(X, "X")
        check_feature_names(getattr(self, "feature_names_in_", None), matrix.feature_names,
                            type(self).__name__)
        if matrix.shape[1] != self.n_features_in_:
            raise InputError(
                f"X has {matrix.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        with _as_value_errors():
            X_codes = self._encoding.transform(matrix, "X")[:, self._used]
        n = matrix.shape[0]
        data = Dataset(self.schema_, X_codes, np.full(n, -1, dtype=np.int64), np.ones(n),
                       source="X", has_class=False)
        return data, matrix.index

    def _prediction(self, data: Dataset) -> Prediction:
        with _as_value_errors():
            return self.method_.predict(data)

    def _decide(self, proba: np.ndarray) -> np.ndarray:
        if self._loss is None:
            return np.argmax(proba, axis=1)
        from treecert.evaluation.costs import min_expected_loss_predictions

        return min_expected_loss_predictions(proba, self._loss)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (n_samples, n_classes), columns in the order of
        ``classes_``."""
        data, _ = self._predict_data(X)
        return np.asarray(self._prediction(data).proba, dtype=np.float64)

    def predict_log_proba(self, X) -> np.ndarray:
        """``log(predict_proba(X))`` (``-inf`` where a probability is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """The most probable class of each row (with ``loss``: the class of minimum
        expected loss), as labels from ``classes_``."""
        decided = self._decide(self.predict_proba(X))
        return self.classes_[decided]

    def predict_certainty(self, X) -> np.ndarray:
        """The ``certainty`` column of ``treecert predict`` (n_samples,): the method's
        reliability score where it has one (``kk``), else the probability of the
        predicted class."""
        data, _ = self._predict_data(X)
        pred = self._prediction(data)
        if pred.certainty is not None:
            return np.asarray(pred.certainty, dtype=np.float64)
        return pred.proba[np.arange(pred.proba.shape[0]), self._decide(pred.proba)]

    def predict_proba_bounds(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper probability of each class, two (n_samples, n_classes) arrays,
        for the methods that give bounds (``venn``, ``empirical_bayes``)."""
        data, _ = self._predict_data(X)
        pred = self._prediction(data)
        if pred.lower is None or pred.upper is None:
            raise ParameterError(
                f"method {self.method_.spec.name!r} gives no probability bounds.",
                "Use method='venn' or method='empirical_bayes'.",
            )
        return np.asarray(pred.lower, dtype=np.float64), np.asarray(pred.upper,
                                                                     dtype=np.float64)

    def predict_with_certainty(self, X):
        """The table ``treecert predict`` writes, as a pandas DataFrame (one row per row of
        ``X``, indexed like ``X`` when it is a DataFrame): ``predicted`` (labels of
        ``classes_``), ``p_<label>`` per class, ``certainty``, ``expected_loss`` with
        ``loss``, the method's own columns (e.g. ``tpce_disagree``) and
        ``lower_<label>``/``upper_<label>`` where the method gives bounds."""
        from treecert.evaluation.frames import predictions_frame

        data, index = self._predict_data(X)
        pred = self._prediction(data)
        frame = predictions_frame(
            data, pred.proba, self.schema_.classes, certainty=pred.certainty,
            lower=pred.lower, upper=pred.upper, extra_columns=pred.columns, loss=self._loss,
        ).drop(columns="row")
        frame["predicted"] = self.classes_[self._decide(pred.proba)]
        if index is not None:
            frame.index = index
        return frame

    def export_text(self) -> str:
        """The fitted tree in J48's text layout (``treecert show``), for the methods that
        predict with one tree (leaf methods, ``empirical_bayes``)."""
        from treecert.tree.render import to_text_with_estimates

        self._check_fitted()
        model = getattr(self.method_, "model_", None)
        if not isinstance(model, DecisionTree):
            raise ParameterError(f"method {self.method_.spec.name!r} predicts with more than "
                                 "one tree; there is no single tree to show.")
        return to_text_with_estimates(model.tree_, model.schema_, model.leaf, model.alpha,
                                      model.m)

    # ---------------------------------------------------------------- tags

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _more_tags(self) -> dict:  # scikit-learn < 1.6
        return {"allow_nan": True}


def _method_list(indent: int = 8, width: int = 88) -> str:
    """The registered methods as the docstring lists them (from the registry, so the list
    cannot go stale), wrapped to ``width`` under an ``indent``."""
    import textwrap

    return textwrap.fill(", ".join(f"``{name}``" for name in METHODS), width=width,
                         initial_indent=" " * indent, subsequent_indent=" " * indent).lstrip()


if TreecertClassifier.__doc__:  # (None under python -OO)
    TreecertClassifier.__doc__ = TreecertClassifier.__doc__.replace("{methods}",
                                                                    _method_list())
