"""A random forest of C4.5-family trees, calibrated out of bag, with the trees' margin as the
certainty.

``calibrated_bagging`` (:mod:`treecert.methods.calibrated_bagging`) grown as Breiman's
random forest, with the choices scikit-learn's ``RandomForestClassifier`` makes by default:

* **Random attribute subsets**: every node of every tree searches its test among a random
  subset of the attributes (``max_features``, default ``sqrt``: ⌊√F⌋ of F; Breiman 2001,
  section 4), drawn per tree from its own seed (:func:`~treecert.methods.ensemble.tree_seed`).
  Bootstrap samples alone grow trees that share their top tests; random subsets
  decorrelate them.
* **Fully grown trees**: ``min_leaf`` 1 (Breiman's trees are grown to purity, unpruned;
  scikit-learn's ``min_samples_leaf=1``), not C4.5's 2: averaging is what smooths a forest,
  and a leaf of one bootstrap row still counts as a vote.
* **A missing nominal value is a value of its own** (``missing=value``): a nominal attribute
  with missing values in the training data gets one more branch, which rows missing it take,
  at training and at prediction time (Twala, Jones and Hand's "missing incorporated in
  attributes"; what scikit-learn's peers do with one-hot columns and a missing column).
  Where values are missing for a reason (soybean's, labor's), the missingness itself is
  evidence, which C4.5's fractional routing spreads over every branch. Numeric attributes
  keep C4.5's fractional routing. ``missing=fractional`` routes nominal ones that way too.
* **Leaf estimate chosen out of bag**: Laplace leaves with α among 1, 0.5 and 0.1, each with
  its own temperature fitted on the out-of-bag forecasts; the α of the lowest out-of-bag
  log-loss is kept (ties to the larger α). Fully grown trees have small leaves, where α = 1
  pulls every leaf far towards uniform on data with many classes; a small α keeps the
  leaves' frequencies (scikit-learn's leaves) while keeping every probability positive for
  the temperature. Which is better is a property of the data, so the forest measures it on
  rows no tree it averages was grown on (cross-fitting for free). ``alpha=A`` fixes it.
* **Calibration**: calibrated_bagging's one temperature fitted on the out-of-bag forecasts.
* **200 trees**: adding trees does not overfit, the error converges (Breiman 2001, section 2),
  and with fully grown trees the margin and the averaged probabilities keep sharpening past
  scikit-learn's 100: on the shared suite 200 trees move accuracy's average rank from 3.58
  to 3.00 and AUC's from 2.38 to 2.15 (docs/certainty-quality.md); each tree costs the same,
  so a fit costs twice as much. ``trees=100`` halves it.
* **Certainty** (``certainty=margin``, the default): Breiman's margin of the predicted class,
  the votes for it minus the votes for the runner-up, ties broken by the same margin of the
  trees' mean probabilities (:func:`~treecert.methods.calibrated_bagging.margin_certainty`):
  a prediction half the trees contest is less certain than one they all make, also when the
  predicted class has the same share of votes. ``certainty=vote`` (the predicted class's
  votes) and ``certainty=proba`` as in calibrated_bagging.

The tree settings ``min_leaf``, ``max_features`` take the forest's values above when the
run leaves them at the learner's defaults (``--min-leaf 2``, every attribute); a spec option
(``forest:min_leaf=2``) or a run value that differs from the learner's default is used as
given.

Options: calibrated_bagging's (``trees`` 200, ``seed``, ``alpha`` (chosen out of bag),
``temperature``, ``certainty`` margin), ``missing`` (value | fractional) and the tree's
options.

References
----------
L. Breiman, "Random forests", Machine Learning 45(1), 2001 (sections 2.2 and 4: the margin,
random features). L. Breiman, "Out-of-bag estimation", 1996. B. Twala, M. C. Jones and D. J.
Hand, "Good methods for coping with missing data in decision trees", Pattern Recognition
Letters 29(7), 2008. C. Guo et al., "On calibration of modern neural networks", ICML 2017.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.methods.calibrated_bagging import CalibratedBaggingMethod
from treecert.methods.ensemble import tree_seed
from treecert.tree.classifier import DecisionTree

#: The leaves' Laplace α compared out of bag, in the order ties are broken.
ALPHAS = (1.0, 0.5, 0.1)
#: Values of the ``missing`` option.
MISSING = ("value", "fractional")
#: The forest's tree settings where the run leaves the learner's defaults.
TREE_DEFAULTS = {"min_leaf": 1.0, "max_features": "sqrt"}


def missing_as_value(data: Dataset, attributes: np.ndarray) -> Dataset:
    """``data`` with a missing value of each nominal attribute in ``attributes`` coded as
    one more value of that attribute (code = its number of declared values)."""
    if attributes.size == 0:
        return data
    X = data.X.copy()
    attrs = list(data.schema.attributes)
    for j in attributes:
        a = attrs[j]
        X[np.isnan(X[:, j]), j] = len(a.values)
        attrs[j] = dataclasses.replace(a, values=(*a.values, "?"))
    schema = dataclasses.replace(data.schema, attributes=tuple(attrs))
    return dataclasses.replace(data, schema=schema, X=X)


class ForestMethod(CalibratedBaggingMethod):
    """Random forest of fully grown Laplace trees (``max_features`` sqrt, α chosen out of
    bag, missing nominal values as a value), out-of-bag temperature, margin certainty."""

    name = "forest"
    options: ClassVar[dict[str, type]] = {**CalibratedBaggingMethod.options, "missing": str}
    defaults: ClassVar[dict] = {**CalibratedBaggingMethod.defaults, "trees": 200,
                                "alpha": None, "certainty": "margin", "missing": "value"}

    def _checked_tree(self, params: dict) -> dict:
        """The run's tree settings, with the forest's own where the run left the learner's
        defaults and the spec does not name them."""
        params = dict(params)
        learner = DecisionTree.__dataclass_fields__
        for key, value in TREE_DEFAULTS.items():
            if key not in self.spec.options and params.get(key, learner[key].default) == (
                    learner[key].default):
                params[key] = value
        return super()._checked_tree(params)

    def _check(self) -> float | None:
        if self.opts["missing"] not in MISSING:
            raise ConfigError(f"{self.name}: unknown missing '{self.opts['missing']}'.",
                              "Choose value or fractional.")
        return super()._check()

    def alpha_candidates(self) -> tuple[float, ...]:
        return ALPHAS if self.opts["alpha"] is None else (float(self.opts["alpha"]),)

    def fit(self, data: Dataset) -> ForestMethod:
        self._check()
        self.missing_value_ = np.zeros(0, np.int64)
        if self.opts["missing"] == "value":
            nominal = data.schema.nominal_mask()
            labelled = data.y >= 0
            self.missing_value_ = np.flatnonzero(
                nominal & np.isnan(data.X[labelled]).any(axis=0)).astype(np.int64)
        return super().fit(data)

    def inputs(self, data: Dataset) -> Dataset:
        return missing_as_value(data, self.missing_value_)

    def state(self) -> dict:
        return {**super().state(), "missing_value": self.missing_value_.tolist()}

    def read_state(self, state: dict, model) -> None:
        cols = state.get("missing_value", [])
        F = model.schema.n_features
        nominal = model.schema.nominal_mask()
        if not isinstance(cols, list) or not all(
                type(j) is int and 0 <= j < F and nominal[j] for j in cols):
            raise ValueError("missing_value must list nominal attributes")
        self.missing_value_ = np.asarray(cols, dtype=np.int64)

    def new_member(self, i: int):
        """Tree i: a Laplace tree drawing its attribute subsets from its own seed."""
        return self.new_tree(leaf="laplace", alpha=self.alpha_candidates()[0],
                             random_state=tree_seed(self.opts["seed"], i))
