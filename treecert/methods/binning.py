"""Binning calibration (Zadrozny & Elkan 2001, as used by Lindsay & Cox 2004, section 1).

For every class l the base learner's forecasts ``p_l`` on a calibration set are cut into
bins; a new forecast is replaced by the (weighted) frequency of class l among the
calibration examples of its bin, and the K values are renormalised to sum to 1.

* Bins: Fayyad & Irani's MDL discretisation of the forecasts against the true class
  (Weka's supervised ``Discretize``, which Lindsay & Cox used; ``bins=0``, the default), or
  ``bins=N`` equal-frequency bins. Bins are right-closed, as in Weka.
* If every class's bin frequency is 0 for an instance (possible only with many classes),
  the base forecast is kept for it.
* Base: any registry method (``binning:base=laplace``, ``binning:base=naive_bayes``); the
  base's tree options and its ``alpha``, ``m``, ``discretize`` options are passed on.
* Calibration set: in ``evaluate``/``compare`` (``fit``), out-of-fold forecasts of the
  training fold — ``cv`` stratified folds (default 10, ``seed``) inside the training data —
  while the base model itself is fitted on the whole training fold. ``treecert calibrate``
  uses held-out data or ``--cv`` on the model's training data instead
  (:mod:`treecert.methods.calibrate`).

References
----------
B. Zadrozny and C. Elkan, "Obtaining calibrated probability estimates from decision trees
and naive Bayesian classifiers", ICML 2001; D. Lindsay and S. Cox, ICDM 2004, section 1.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.discretize import assign_bins, equal_frequency_edges, mdl_cut_points
from treecert.data.folds import stratified_folds
from treecert.data.schema import Dataset
from treecert.errors import ConfigError, describe
from treecert.methods.base import (
    METHODS,
    TREE_OPTIONS,
    Method,
    MethodSpec,
    Prediction,
    make_method,
    reading_state,
    state_numbers,
    stored_state,
)

#: Options a calibration method passes on to its base method (when the base declares them):
#: the leaf estimates' parameters, Naive Bayes's ``discretize`` and the pruning options of
#: :data:`treecert.methods.leaf.PRUNE_OPTIONS` but ``cv`` and ``seed`` (binning's own), so
#: ``binning:prune=ebp`` bins J48's pruned tree.
BASE_PASS_OPTIONS: dict[str, type] = {
    "alpha": float, "m": float, "discretize": bool,
    "prune": str, "cf": float, "subtree_raising": bool, "kl_threshold": float,
    "holdout": float, "one_se": bool,
}


def base_spec(name: str, options: dict) -> MethodSpec:
    """The base method's spec: ``name`` with the options it understands."""
    key = name.strip().lower().replace("-", "_")
    if key not in METHODS or key in CALIBRATION_METHODS:
        allowed = sorted(k for k in METHODS if k not in CALIBRATION_METHODS)
        raise ConfigError(f"unknown base method '{name}'.", f"Choose one of: {', '.join(allowed)}.")
    cls = METHODS[key]
    allowed = {**(TREE_OPTIONS if cls.tree_based else {}),
               **{k: t for k, t in cls.options.items() if k in BASE_PASS_OPTIONS}}
    opts = {k: v for k, v in options.items() if k in allowed}
    text = key + (":" + ",".join(f"{k}={v}" for k, v in opts.items()) if opts else "")
    return MethodSpec(key, opts, text)


def make_base(name: str, options: dict, tree_params: dict) -> Method:
    return make_method(base_spec(name, options), tree_params)


def out_of_fold(spec: MethodSpec, tree_params: dict, data: Dataset, n_folds: int,
                seed: int) -> np.ndarray:
    """Forecasts (n, K) of every labelled row of ``data`` by ``spec`` fitted without its fold
    (stratified folds as :func:`treecert.data.folds.stratified_folds`)."""
    n = data.n_samples
    counts = np.bincount(data.y, minlength=data.schema.n_classes)
    k = int(min(n_folds, n))
    if k < 2 or counts.max() == n:
        raise ConfigError(
            f"cannot calibrate by {n_folds}-fold cross-validation on {n} rows with "
            f"{int(np.count_nonzero(counts))} class(es).",
            "Use more data or give held-out calibration data.",
        )
    folds = stratified_folds(data.y, k, seed)
    out = np.zeros((n, data.schema.n_classes))
    for f in range(k):
        test = folds == f
        train = data.subset(np.flatnonzero(~test))
        if np.unique(train.y).size < 2:  # a one-class training part: the base cannot learn
            out[test] = np.bincount(train.y, weights=train.weights,
                                    minlength=out.shape[1]) / train.weights.sum()
            continue
        method = make_method(spec, tree_params).fit(train)
        out[test] = method.predict(data.subset(np.flatnonzero(test))).proba
    return out


class BinningCalibrator:
    """Per-class bins of forecasts and the class frequency in each.

    ``cuts[l]`` are the interior cut points of class l's forecasts (right-closed bins),
    ``freq[l]`` the weighted frequency of class l in each of its ``len(cuts[l]) + 1`` bins,
    ``count[l]`` the calibration weight in each bin.
    """

    def __init__(self, bins: int = 0) -> None:
        if bins < 0:
            raise ConfigError(f"binning: bins must be >= 0 (0 = MDL), got {bins}.")
        self.bins = bins

    def fit(self, proba: np.ndarray, y: np.ndarray, w: np.ndarray | None = None):
        K = proba.shape[1]
        w = np.ones(y.size) if w is None else np.asarray(w, float)
        self.cuts, self.freq, self.count = [], [], []
        for cls in range(K):
            f = proba[:, cls]
            if self.bins == 0:
                cuts = mdl_cut_points(f, y, K, w)
            else:
                cuts = equal_frequency_edges(f, self.bins)
            b = assign_bins(f, cuts, right=True)
            m = cuts.size + 1
            cnt = np.bincount(b, weights=w, minlength=m)
            hit = np.bincount(b, weights=w * (y == cls), minlength=m)
            with np.errstate(invalid="ignore", divide="ignore"):
                freq = np.where(cnt > 0, hit / cnt, 0.0)
            self.cuts.append(cuts)
            self.freq.append(freq)
            self.count.append(cnt)
        return self

    def transform(self, proba: np.ndarray) -> np.ndarray:
        """Calibrated probabilities (n, K): bin frequencies, renormalised per row."""
        out = np.empty_like(proba, dtype=float)
        for cls in range(proba.shape[1]):
            out[:, cls] = self.freq[cls][assign_bins(proba[:, cls], self.cuts[cls], right=True)]
        total = out.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(total > 0, out / total, proba)
        return out

    def to_json(self) -> dict:
        return {"bins": self.bins,
                "classes": [{"cuts": c.tolist(), "freq": f.tolist(), "count": n.tolist()}
                            for c, f, n in zip(self.cuts, self.freq, self.count, strict=True)]}

    @classmethod
    def from_json(cls, obj: dict, n_classes: int | None = None) -> BinningCalibrator:
        bins = obj["bins"]
        if type(bins) is not int or not 0 <= bins < 2**63:
            raise ValueError(f"bins must be an integer >= 0, not {describe(bins)}")
        cal = cls(bins)
        classes = obj["classes"]
        if not isinstance(classes, list):
            raise ValueError(f"classes must be a list, not {describe(classes)}")
        cal.cuts = [state_numbers(c["cuts"], f"classes[{i}].cuts")
                    for i, c in enumerate(classes)]
        cal.freq = [state_numbers(c["freq"], f"classes[{i}].freq", low=0, high=1)
                    for i, c in enumerate(classes)]
        cal.count = [state_numbers(c["count"], f"classes[{i}].count", low=0)
                     for i, c in enumerate(classes)]
        ok = (n_classes is None or len(cal.cuts) == n_classes) and all(
            c.ndim == 1 and f.shape == (c.size + 1,) and np.all(np.diff(c) > 0)
            for c, f in zip(cal.cuts, cal.freq, strict=True))
        if not ok:
            raise ValueError("bins and frequencies do not fit together")
        return cal


class BinningMethod(Method):
    """Binning on top of a base method; options ``base``, ``bins`` (0 = MDL), ``cv``,
    ``seed`` and the base's ``alpha``/``m``/``discretize``."""

    name = "binning"
    options: ClassVar[dict[str, type]] = {"base": str, "bins": int, "cv": int, "seed": int,
                                          **BASE_PASS_OPTIONS}
    defaults: ClassVar[dict] = {"base": "frequency", "bins": 0, "cv": 10, "seed": 1}

    def _base(self) -> Method:
        return make_base(self.opts["base"], self.spec.options, self.tree_params)

    def fit(self, data: Dataset) -> BinningMethod:
        data = data.subset(np.flatnonzero(data.y >= 0))
        base = self._base()
        oof = out_of_fold(base.spec, self.tree_params, data, self.opts["cv"], self.opts["seed"])
        self.calibrator_ = BinningCalibrator(self.opts["bins"]).fit(oof, data.y, data.weights)
        self.base_ = base.fit(data)
        return self

    def calibrate(self, model, proba: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict:
        """Fit the bins on calibration forecasts ``proba`` of the model's base; returns the
        state stored in the model file."""
        self.base_ = self._base().adopt(model)
        self.calibrator_ = BinningCalibrator(self.opts["bins"]).fit(proba, y, w)
        return self.calibrator_.to_json()

    def load_state(self, model, state: dict) -> BinningMethod:
        self.base_ = self._base().adopt(model)
        self.calibrator_ = BinningCalibrator.from_json(state, model.schema.n_classes)
        return self

    def adopt(self, model) -> BinningMethod:
        state = stored_state(model, self.spec)
        if state is not None:
            return reading_state(lambda: self.load_state(model, state), model.source)
        return super().adopt(model)

    def predict(self, data: Dataset) -> Prediction:
        base = self.base_.predict(data)
        return Prediction(self.calibrator_.transform(base.proba), columns=dict(base.columns))

    @property
    def size(self) -> int | float | None:
        return self.base_.size


#: Registry names of the calibration methods (not allowed as a base).
CALIBRATION_METHODS = ("binning", "venn", "empirical_bayes")
