"""Naive Bayes, the second base learner of Lindsay & Cox, exactly as Weka's ``NaiveBayes``.

Weka 3.6/3.8 ``weka.classifiers.bayes.NaiveBayes`` (the learner Lindsay & Cox extend):

* Class prior and nominal attributes: Laplace-corrected weighted counts
  (``DiscreteEstimator(k, laplace=true)``: every count starts at 1).
* Numeric attributes: one normal distribution per class (``NormalEstimator``). Values are
  rounded to the attribute's *precision* — the mean gap between consecutive distinct
  training values (default 0.01) — and a value's likelihood is the normal probability of
  the precision-wide interval around it, ``Φ(z + h) − Φ(z − h)``. The standard deviation is
  ``max(precision / 6, σ)`` (σ with the weights as frequencies, divided by Σw), or
  ``precision / 6`` when σ ≈ 0.
* ``discretize=true`` (Weka ``-D``): numeric attributes are first discretised with the
  Fayyad–Irani MDL filter (:func:`treecert.data.discretize.mdl_cut_points`, Weka's
  ``Discretize``) learnt on the training data, then treated as nominal.
* A missing attribute value is skipped, in training and at prediction; rows with a missing
  class are ignored. Instance weights count everywhere (the precision is unweighted, as in
  Weka). Each factor is floored at 1e-75 as Weka does; products are taken in log space.

The sufficient statistics (:class:`NBStats`) are kept apart from the model so that the Venn
machine can add one instance ``(x, j)`` without refitting (see :mod:`treecert.methods.venn`).

References
----------
Weka ``NaiveBayes``, ``NormalEstimator``, ``DiscreteEstimator`` (Witten & Frank 2000);
Lindsay & Cox, "Improving the reliability of decision tree and naive Bayes learners",
ICDM 2004, section 5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from treecert.data.discretize import assign_bins, mdl_cut_points
from treecert.data.schema import Dataset, Schema, integer_codes
from treecert.errors import ConfigError
from treecert.methods.base import Method, Prediction

#: Weka's ``NaiveBayes.DEFAULT_NUM_PRECISION``.
DEFAULT_PRECISION = 0.01
_LOG_FLOOR = np.log(1e-75)


def weka_precision(values: np.ndarray) -> float:
    """Weka's numeric precision: mean difference of consecutive distinct known values.

    Weka sums the differences one after the other in sorted order; so does ``cumsum``.
    """
    v = np.sort(values[~np.isnan(values)])
    if v.size < 2:
        return DEFAULT_PRECISION
    distinct = v[np.concatenate([[True], v[1:] != v[:-1]])]
    if distinct.size < 2:
        return DEFAULT_PRECISION
    return float(np.cumsum(np.diff(distinct))[-1] / (distinct.size - 1))


def weka_round(values: np.ndarray, precision: float | np.ndarray) -> np.ndarray:
    """``Math.rint(v / precision) * precision`` (NaN stays NaN)."""
    return np.rint(values / precision) * precision


@dataclass
class NBStats:
    """Sufficient statistics of a naive Bayes model (all weighted).

    Attributes
    ----------
    class_w : (K,) class weights (without the Laplace 1).
    nominal : list of (K, V_f) value weights per nominal (or discretised) attribute.
    nominal_idx : attribute index of each entry of ``nominal``.
    numeric_idx : (p,) attribute indices of the Gaussian attributes.
    precision : (p,) their precisions.
    sw, s1, s2 : (p, K) Σw, Σw·v, Σw·v² of the rounded known values per class.
    """

    class_w: np.ndarray
    nominal: list[np.ndarray]
    nominal_idx: np.ndarray
    numeric_idx: np.ndarray
    precision: np.ndarray
    sw: np.ndarray
    s1: np.ndarray
    s2: np.ndarray

    def gaussian(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation (p, K), as ``NormalEstimator.computeParameters``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(self.sw > 0, self.s1 / self.sw, 0.0)
            sd = np.sqrt(np.abs(self.s2 - mean * self.s1) / self.sw)
        floor = (self.precision / 6.0)[:, None]
        sd = np.where((self.sw > 0) & (sd > 1e-10), np.maximum(floor, sd), floor)
        return mean, sd

    def log_joint(self, X: np.ndarray, Xr: np.ndarray | None = None,
                  classes: np.ndarray | None = None,
                  codes: np.ndarray | None = None) -> np.ndarray:
        """Log P(c) Π_f P(x_f | c) up to a constant shared by the classes, (n, K') for the
        rows of ``X`` and all classes (or those in ``classes``).

        ``X`` holds nominal codes (discretised columns already mapped to bins); ``Xr`` the
        numeric columns rounded to the precision and ``codes`` the nominal columns as
        :meth:`padded_codes` (both computed when not given). The prior's denominator N + K is
        left out and the attributes are added one after the other in a fixed order, so a
        column does not depend on which other columns are computed — the Venn machine
        recomputes one class at a time.
        """
        cls = np.arange(self.class_w.size) if classes is None else np.asarray(classes)
        n = X.shape[0]
        out = np.tile(np.log(self.class_w[cls] + 1.0), (n, 1))
        if codes is None:
            codes = self.padded_codes(X)
        for k, cnt in enumerate(self.nominal):
            c = cnt[cls]
            p = (c + 1.0) / (c.sum(axis=1, keepdims=True) + c.shape[1])  # (K', V)
            table = np.zeros((c.shape[0], c.shape[1] + 1))  # last column: value missing
            table[:, :-1] = np.maximum(np.log(p), _LOG_FLOOR)
            out += table[:, codes[:, k]].T
        if self.numeric_idx.size:
            if Xr is None:
                Xr = weka_round(X[:, self.numeric_idx], self.precision)
            ll = self.numeric_log_lik(Xr, cls)
            for k in range(ll.shape[1]):
                out += ll[:, k, :]
        return out

    def padded_codes(self, X: np.ndarray) -> np.ndarray:
        """Nominal codes (n, q) with a missing value mapped to one past the last value."""
        return integer_codes(X[:, self.nominal_idx], [cnt.shape[1] for cnt in self.nominal])

    def numeric_log_lik(self, Xr: np.ndarray, classes: np.ndarray | None = None) -> np.ndarray:
        """Per-attribute log-likelihoods (n, p, K') of rounded numeric values (0 if missing),
        for all classes or those in ``classes``."""
        mean, sd = self.gaussian()
        if classes is not None:
            mean, sd = mean[:, classes], sd[:, classes]
        h = (self.precision / 2.0)[None, :, None]
        d = Xr[:, :, None] - mean[None]
        s = sd[None]
        with np.errstate(divide="ignore"):
            from scipy.special import ndtr  # lazily: SciPy slows every start-up

            ll = np.log(ndtr((d + h) / s) - ndtr((d - h) / s))
        ll = np.maximum(ll, _LOG_FLOOR)
        return np.where(np.isnan(Xr)[:, :, None], 0.0, ll)

    def to_json(self) -> dict:
        return {
            "class_w": self.class_w.tolist(),
            "nominal": [c.tolist() for c in self.nominal],
            "nominal_idx": self.nominal_idx.tolist(),
            "numeric_idx": self.numeric_idx.tolist(),
            "precision": self.precision.tolist(),
            "sw": self.sw.tolist(), "s1": self.s1.tolist(), "s2": self.s2.tolist(),
        }

    @classmethod
    def from_json(cls, obj: dict) -> NBStats:
        p = len(obj["numeric_idx"])
        K = len(obj["class_w"])
        return cls(
            class_w=np.asarray(obj["class_w"], float),
            nominal=[np.asarray(c, float) for c in obj["nominal"]],
            nominal_idx=np.asarray(obj["nominal_idx"], np.int64),
            numeric_idx=np.asarray(obj["numeric_idx"], np.int64),
            precision=np.asarray(obj["precision"], float),
            sw=np.asarray(obj["sw"], float).reshape(p, K),
            s1=np.asarray(obj["s1"], float).reshape(p, K),
            s2=np.asarray(obj["s2"], float).reshape(p, K),
        )


def nb_stats(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_values: list[int],
             n_classes: int, nominal_idx: np.ndarray, numeric_idx: np.ndarray,
             precision: np.ndarray) -> NBStats:
    """Weighted sufficient statistics of labelled rows (``X`` nominal codes / raw numbers).

    ``n_values[f]`` is the number of values of nominal (or discretised) attribute f.
    Sums are taken row by row in data order (``bincount``), as Weka adds instances.
    """
    K = n_classes
    class_w = np.bincount(y, weights=w, minlength=K).astype(float)
    nominal = []
    for f in nominal_idx:
        v = X[:, f]
        known = ~np.isnan(v)
        V = int(n_values[f])
        cnt = np.bincount(y[known] * V + v[known].astype(np.int64), weights=w[known],
                          minlength=K * V).reshape(K, V)
        nominal.append(cnt.astype(float))
    p = numeric_idx.size
    sw, s1, s2 = np.zeros((p, K)), np.zeros((p, K)), np.zeros((p, K))
    for k, f in enumerate(numeric_idx):
        v = weka_round(X[:, f], precision[k])
        known = ~np.isnan(v)
        yk, wk, vk = y[known], w[known], v[known]
        sw[k] = np.bincount(yk, weights=wk, minlength=K)
        s1[k] = np.bincount(yk, weights=vk * wk, minlength=K)
        s2[k] = np.bincount(yk, weights=vk * vk * wk, minlength=K)
    return NBStats(class_w, nominal, np.asarray(nominal_idx, np.int64),
                   np.asarray(numeric_idx, np.int64), np.asarray(precision, float), sw, s1, s2)


def softmax_rows(log_joint: np.ndarray) -> np.ndarray:
    z = log_joint - log_joint.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class NaiveBayes:
    """Weka's NaiveBayes as an estimator (``fit`` / ``predict_proba``).

    Parameters
    ----------
    discretize : bool, keyword-only
        MDL-discretise numeric attributes (Weka ``-D``) instead of fitting normals.

    Fitted attributes: ``schema_``, ``stats_`` (:class:`NBStats`), ``cuts_`` (per numeric
    attribute, the MDL cut points when ``discretize``).
    """

    def __init__(self, *, discretize: bool = False) -> None:
        self.discretize = discretize

    def _columns(self, schema: Schema) -> tuple[np.ndarray, np.ndarray]:
        nominal = schema.nominal_mask()
        if self.discretize:
            return np.arange(schema.n_features), np.empty(0, np.int64)
        return np.flatnonzero(nominal), np.flatnonzero(~nominal)

    def encode(self, X: np.ndarray) -> np.ndarray:
        """Numeric columns mapped to their MDL bins when discretising (else unchanged)."""
        if not self.discretize or not self.cuts_:
            return X
        Z = X.copy()
        for f, cuts in self.cuts_.items():
            b = assign_bins(X[:, f], cuts, right=True).astype(float)
            b[b < 0] = np.nan
            Z[:, f] = b
        return Z

    def n_values(self, schema: Schema) -> list[int]:
        nv = [int(v) for v in schema.n_values()]
        for f, cuts in self.cuts_.items():
            nv[f] = len(cuts) + 1
        return nv

    def fit(self, data: Dataset) -> NaiveBayes:
        keep = np.flatnonzero(data.y >= 0)
        X, y, w = data.X[keep], data.y[keep].astype(np.int64), data.weights[keep].astype(float)
        schema = data.schema
        K = schema.n_classes
        self.schema_ = schema
        self.cuts_: dict[int, np.ndarray] = {}
        if self.discretize:
            for f in np.flatnonzero(~schema.nominal_mask()):
                self.cuts_[int(f)] = mdl_cut_points(X[:, f], y, K, w)
        nominal_idx, numeric_idx = self._columns(schema)
        precision = np.array([weka_precision(X[:, f]) for f in numeric_idx], dtype=float)
        self.stats_ = nb_stats(self.encode(X), y, w, self.n_values(schema), K,
                               nominal_idx, numeric_idx, precision)
        return self

    def predict_proba(self, data: Dataset | np.ndarray) -> np.ndarray:
        X = data.X if isinstance(data, Dataset) else np.asarray(data, dtype=float)
        return softmax_rows(self.stats_.log_joint(self.encode(X)))

    def to_json(self) -> dict:
        return {"discretize": self.discretize,
                "cuts": {str(f): c.tolist() for f, c in self.cuts_.items()},
                "stats": self.stats_.to_json()}

    @classmethod
    def from_json(cls, obj: dict, schema: Schema) -> NaiveBayes:
        nb = cls(discretize=bool(obj["discretize"]))
        nb.schema_ = schema
        nb.cuts_ = {int(f): np.asarray(c, float) for f, c in obj["cuts"].items()}
        nb.stats_ = NBStats.from_json(obj["stats"])
        return nb


class NaiveBayesMethod(Method):
    """Weka's NaiveBayes; option ``discretize`` (MDL bins for numeric attributes)."""

    name = "naive_bayes"
    options: ClassVar[dict[str, type]] = {"discretize": bool}
    defaults: ClassVar[dict] = {"discretize": False}
    tree_based = False

    def fit(self, data: Dataset) -> NaiveBayesMethod:
        if data.schema.n_classes < 2:
            raise ConfigError("naive_bayes needs at least two classes.")
        self.model_ = NaiveBayes(discretize=self.opts["discretize"]).fit(data)
        return self

    def predict(self, data: Dataset) -> Prediction:
        return Prediction(self.model_.predict_proba(data))
