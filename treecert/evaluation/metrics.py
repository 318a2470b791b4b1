"""Evaluation metrics for probability forecasts, rankings and reliability estimates.

All functions are pure, vectorised numpy code and unweighted. Common inputs:

``y``
    int array, shape (n,), true class codes ``0..K-1``.
``proba``
    float array, shape (n, K), predicted class probabilities; every row sums to 1 (checked to
    1e-5) and entries lie in [0, 1].
``lower``, ``upper``
    float arrays, shape (n, K), an interval ``[lower_ic, upper_ic]`` for every predicted
    probability (e.g. the empirical-Bayes belief intervals, Venn intervals).

Sources: Lindsay & Cox (ERC deviation ``R(Γ, n)``), Costa, Verwer & Blockeel sect. 2.1 (Brier
score, one-vs-rest macro AUC, AUC reliability), Sutton-Charani's empirical-Bayes belief
trees sect. 5 (interval-valued metrics), Bradford et al. (normalised MSE, loss matrices,
bias-variance decomposition of the MSE after Kohavi & Wolpert 1996), Guo et al. 2017 (ECE).

Input errors raise :class:`treecert.errors.DataError` (arrays) or
:class:`treecert.errors.ConfigError` (options, loss matrices).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from scipy.stats import rankdata

from treecert.data.discretize import assign_bins, equal_width_edges, mdl_cut_points
from treecert.errors import ConfigError, DataError

__all__ = [
    "LOG_LOSS_EPS",
    "ReliabilityCurve",
    "accuracy",
    "auc",
    "auc_bounds",
    "auc_bounds_endpoints",
    "auc_reliability",
    "bias_variance",
    "brier",
    "brier_bounds",
    "brier_norm",
    "compute_metrics",
    "ece",
    "erc_deviation",
    "expected_loss",
    "log_loss",
    "log_loss_bounds",
    "min_expected_loss_predictions",
    "predictions",
    "reliability_curve",
    "roc_auc",
]

#: Probabilities are clipped to ``[LOG_LOSS_EPS, 1]`` before taking logs.
LOG_LOSS_EPS = 1e-15
_ROW_SUM_TOL = 1e-5
_RANGE_TOL = 1e-9

Bins = Literal["equal_width", "mdl"]
MdlTarget = Literal["class", "indicator"]


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _check_y(y: object, n_classes: int | None = None) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise DataError(f"y must be a 1-D array of class codes, got shape {arr.shape}.")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if arr.dtype == bool:
            arr = arr.astype(np.int64)
        else:
            try:
                f = arr.astype(float)
            except (TypeError, ValueError) as exc:
                raise DataError("y must hold integer class codes.") from exc
            if not np.all(np.isfinite(f)) or not np.all(f == np.round(f)):
                raise DataError("y must hold integer class codes.")
            arr = f.astype(np.int64)
    arr = arr.astype(np.int64, copy=False)
    if n_classes is not None and arr.size and (arr.min() < 0 or arr.max() >= n_classes):
        raise DataError(f"y must hold class codes in 0..{n_classes - 1}.")
    return arr


def _check_matrix(m: object, name: str, n: int | None = None, k: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(m, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be a numeric array.") from exc
    if arr.ndim != 2:
        raise DataError(f"{name} must have shape (n, K), got shape {arr.shape}.")
    if arr.shape[1] < 1:
        raise DataError(f"{name} must have at least one column.")
    if n is not None and arr.shape[0] != n:
        raise DataError(f"{name} has {arr.shape[0]} rows but y has {n} entries.")
    if k is not None and arr.shape[1] != k:
        raise DataError(f"{name} has {arr.shape[1]} columns, expected {k}.")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{name} contains NaN or infinite values.")
    if arr.size and (arr.min() < -_RANGE_TOL or arr.max() > 1 + _RANGE_TOL):
        raise DataError(f"{name} must lie in [0, 1].")
    return arr


def _check_y_proba(y: object, proba: object) -> tuple[np.ndarray, np.ndarray]:
    yy = _check_y(y)
    p = _check_matrix(proba, "proba", n=yy.shape[0])
    if p.size and np.abs(p.sum(axis=1) - 1.0).max() > _ROW_SUM_TOL:
        raise DataError("Every row of proba must sum to 1.")
    _check_y(yy, p.shape[1])
    return yy, p


def _check_bounds(y: object, lower: object, upper: object) -> tuple[np.ndarray, ...]:
    yy = _check_y(y)
    lo = _check_matrix(lower, "lower", n=yy.shape[0])
    hi = _check_matrix(upper, "upper", n=yy.shape[0], k=lo.shape[1])
    if (lo > hi + _RANGE_TOL).any():
        raise DataError("lower must not exceed upper.")
    _check_y(yy, lo.shape[1])
    return yy, np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def _onehot(y: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((y.shape[0], k))
    out[np.arange(y.shape[0]), y] = 1.0
    return out


# --------------------------------------------------------------------------------------------
# point metrics
# --------------------------------------------------------------------------------------------


def predictions(proba: object) -> np.ndarray:
    """Predicted class codes: ``argmax`` of each row, ties going to the lowest index.

    Parameters
    ----------
    proba : array_like, shape (n, K)

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
    """
    p = _check_matrix(proba, "proba")
    return np.argmax(p, axis=1).astype(np.int64)


def accuracy(y: object, proba: object) -> float:
    """Fraction of instances whose ``argmax`` class (lowest index on ties) is the true one.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)

    Returns
    -------
    float
        In [0, 1]; NaN for ``n == 0``.
    """
    yy, p = _check_y_proba(y, proba)
    if yy.size == 0:
        return float("nan")
    return float(np.mean(np.argmax(p, axis=1) == yy))


def brier(y: object, proba: object) -> float:
    """Multiclass Brier score ``mean_i sum_c (p_ic - y_ic)^2`` (range 0-2).

    This is Brier's (1950) original score as used by Costa et al. (sect. 2.1) and
    scikit-learn's multiclass definition; Bradford et al. call it the MSE. For binary problems
    it is twice the usual ``mean (p_1 - y)^2``.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)

    Returns
    -------
    float
        NaN for ``n == 0``.
    """
    yy, p = _check_y_proba(y, proba)
    if yy.size == 0:
        return float("nan")
    return float(np.mean(np.sum((p - _onehot(yy, p.shape[1])) ** 2, axis=1)))


def brier_norm(y: object, proba: object) -> float:
    """Normalised Brier score / MSE, ``brier / 2`` (range 0-1; Bradford et al.).

    Equals the error rate for a classifier that puts probability 1 on its prediction, and the
    binary ``mean (p_1 - y)^2`` used in the empirical-Bayes paper's Table 1.
    """
    return brier(y, proba) / 2.0


def log_loss(y: object, proba: object) -> float:
    """Mean negative natural log of the probability of the true class.

    ``mean_i -ln(clip(p_{i, y_i}, 1e-15, 1))``. (Bradford et al. use log base 2; divide by
    ``ln 2`` for bits.)

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)

    Returns
    -------
    float
        NaN for ``n == 0``.
    """
    yy, p = _check_y_proba(y, proba)
    if yy.size == 0:
        return float("nan")
    pt = np.clip(p[np.arange(yy.shape[0]), yy], LOG_LOSS_EPS, 1.0)
    return float(np.mean(-np.log(pt)))


def roc_auc(scores: object, positive_mask: object) -> float:
    """Binary ROC AUC by ranks, ties between a positive and a negative counting ½.

    ``AUC = (sum of the mid-ranks of the positives - P (P + 1) / 2) / (P N)``, which equals
    ``(#{s_pos > s_neg} + ½ #{s_pos = s_neg}) / (P N)`` over all positive-negative pairs
    (Mann-Whitney U); O(n log n).

    Parameters
    ----------
    scores : array_like, shape (n,)
        Finite scores, higher meaning "more likely positive".
    positive_mask : array_like of bool, shape (n,)

    Returns
    -------
    float
        In [0, 1]; NaN when there is no positive or no negative.
    """
    s = np.asarray(scores, dtype=float)
    pos = np.asarray(positive_mask)
    if s.ndim != 1 or pos.shape != s.shape:
        raise DataError(
            f"scores and positive_mask must be 1-D of equal length, got {s.shape} and {pos.shape}."
        )
    if not np.all(np.isfinite(s)):
        raise DataError("scores contain NaN or infinite values.")
    pos = pos.astype(bool)
    n_pos = int(pos.sum())
    n_neg = s.shape[0] - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(s, method="average")
    u = float(ranks[pos].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def _auc_columns(y: np.ndarray, pos_scores: np.ndarray, neg_scores: np.ndarray) -> float:
    """Macro one-vs-rest AUC where positives of class c score ``pos_scores[:, c]`` and the
    other instances ``neg_scores[:, c]`` (equal matrices for a plain AUC).

    Binary problems (K = 2) use class 1 only; otherwise classes absent from ``y`` are skipped.
    """
    k = pos_scores.shape[1]
    classes = [1] if k == 2 else list(range(k))
    vals = []
    for c in classes:
        mask = y == c
        if not mask.any() or mask.all():
            continue
        s = np.where(mask, pos_scores[:, c], neg_scores[:, c])
        vals.append(roc_auc(s, mask))
    return float(np.mean(vals)) if vals else float("nan")


def auc(y: object, proba: object) -> float:
    """Macro-averaged one-vs-rest ROC AUC (Costa et al. sect. 4: "a ROC curve for each class
    against all the other ones and report the average AUC").

    For ``K == 2`` this is the AUC of ``proba[:, 1]`` (scikit-learn's binary convention; the
    two one-vs-rest AUCs are equal when rows sum to 1). For ``K > 2`` classes that do not
    occur in ``y`` are skipped (their AUC is undefined), so on test folds with all classes
    present this equals ``sklearn.metrics.roc_auc_score(y, proba, multi_class="ovr",
    average="macro")``.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)

    Returns
    -------
    float
        NaN when ``y`` holds fewer than two classes.
    """
    yy, p = _check_y_proba(y, proba)
    return _auc_columns(yy, p, p)


def auc_reliability(y: object, proba: object, certainty: object | None = None) -> float:
    """AUC reliability (Costa et al. sect. 2.1, after Kukar & Kononenko).

    ROC AUC of separating correct predictions (positives) from incorrect ones (negatives)
    by the certainty attached to each prediction. Predictions are ``argmax`` of ``proba``
    (lowest index on ties).

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)
    certainty : array_like, shape (n,), optional
        Certainty of each prediction; default the probability of the predicted class.

    Returns
    -------
    float
        NaN when all predictions are correct or all are wrong.
    """
    yy, p = _check_y_proba(y, proba)
    if certainty is None:
        cert = p.max(axis=1)
    else:
        cert = np.asarray(certainty, dtype=float)
        if cert.shape != yy.shape:
            raise DataError(f"certainty has shape {cert.shape}, expected {yy.shape}.")
    return roc_auc(cert, np.argmax(p, axis=1) == yy)


# --------------------------------------------------------------------------------------------
# reliability: ERC deviation and ECE
# --------------------------------------------------------------------------------------------


class ReliabilityCurve(NamedTuple):
    """Per-bin statistics of Lindsay & Cox's empirical reliability curve for one class.

    Only non-empty bins are listed, in increasing order of forecast.
    """

    mean_forecast: np.ndarray
    """φ(b): mean forecast ``p_ij`` of the forecasts in bin b."""
    observed_frequency: np.ndarray
    """ρ(b): fraction of the instances in bin b whose true class is j."""
    weight: np.ndarray
    """ν(b) = n_b / n: fraction of all n instances whose forecast falls in bin b."""


def _bin_forecasts(
    f: np.ndarray, y: np.ndarray, n_classes: int, cls: int, bins: str, n_bins: int, target: str
) -> np.ndarray:
    if bins == "equal_width":
        cuts = equal_width_edges(f, n_bins, lo=0.0, hi=1.0)
        return assign_bins(f, cuts, right=False)
    if bins == "mdl":
        if target == "class":
            cuts = mdl_cut_points(f, y, n_classes)
        elif target == "indicator":
            cuts = mdl_cut_points(f, (y == cls).astype(np.int64), 2)
        else:
            raise ConfigError(f"Unknown mdl_target {target!r}.", hint="Use 'class' or 'indicator'.")
        return assign_bins(f, cuts, right=True)
    raise ConfigError(f"Unknown binning {bins!r}.", hint="Use 'equal_width' or 'mdl'.")


def _reliability_stats(
    y: np.ndarray, p: np.ndarray, cls: int, bins: str, n_bins: int, target: str
) -> ReliabilityCurve:
    n = y.shape[0]
    f = p[:, cls]
    if n == 0:
        empty = np.empty(0)
        return ReliabilityCurve(empty, empty.copy(), empty.copy())
    b = _bin_forecasts(f, y, p.shape[1], cls, bins, n_bins, target)
    m = int(b.max()) + 1
    cnt = np.bincount(b, minlength=m).astype(float)
    sum_f = np.bincount(b, weights=f, minlength=m)
    hits = np.bincount(b, weights=(y == cls).astype(float), minlength=m)
    ne = cnt > 0
    return ReliabilityCurve(sum_f[ne] / cnt[ne], hits[ne] / cnt[ne], cnt[ne] / n)


def _check_bins_args(bins: str, n_bins: int) -> None:
    if bins not in ("equal_width", "mdl"):
        raise ConfigError(f"Unknown binning {bins!r}.", hint="Use 'equal_width' or 'mdl'.")
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ConfigError(f"n_bins must be a positive integer, got {n_bins!r}.")


def reliability_curve(
    y: object,
    proba: object,
    cls: int,
    bins: Bins = "equal_width",
    n_bins: int = 10,
    *,
    mdl_target: MdlTarget = "class",
) -> ReliabilityCurve:
    """Points ``(φ(b), ρ(b))`` and weights ``ν(b)`` of the empirical reliability curve (ERC)
    of class ``cls`` (Lindsay & Cox, sect. 2).

    Bins of the forecasts ``p_{·, cls}``:

    * ``"equal_width"``: ``n_bins`` bins ``[0, 1/k), [1/k, 2/k), ..., [(k-1)/k, 1]`` exactly
      as in the paper (left-closed, the last one closed).
    * ``"mdl"``: Fayyad & Irani MDL cut points (:func:`treecert.discretize.mdl_cut_points`,
      Weka's ``Discretize``, which Lindsay & Cox used) learnt on the forecasts themselves,
      right-closed bins as in Weka. ``mdl_target="class"`` (default) discretises against the
      true class label, as Weka's filter does when applied to a table of forecasts with the
      class attribute; ``"indicator"`` against the binary event ``y == cls``. Both coincide
      for binary problems. ``n_bins`` is ignored.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)
    cls : int
        Class whose forecasts are binned.
    bins : {"equal_width", "mdl"}
    n_bins : int
    mdl_target : {"class", "indicator"}

    Returns
    -------
    ReliabilityCurve
        ``(mean_forecast, observed_frequency, weight)``, arrays of shape (m,) over the m
        non-empty bins; ``weight`` sums to 1.
    """
    yy, p = _check_y_proba(y, proba)
    _check_bins_args(bins, n_bins)
    if (
        isinstance(cls, bool)
        or not isinstance(cls, (int, np.integer))
        or not (0 <= cls < p.shape[1])
    ):
        raise ConfigError(f"cls must be a class code in 0..{p.shape[1] - 1}, got {cls!r}.")
    return _reliability_stats(yy, p, int(cls), bins, n_bins, mdl_target)


def erc_deviation(
    y: object,
    proba: object,
    bins: Bins = "equal_width",
    n_bins: int = 10,
    *,
    mdl_target: MdlTarget = "class",
) -> float:
    """Lindsay & Cox's ERC deviation ``R(Γ, n) = Σ_j Σ_{b ∈ B_j} ν(b) |ρ(b) - φ(b)|``.

    For every class j the forecasts ``p_{·j}`` are binned (see :func:`reliability_curve`)
    and, per bin b with ``n_b`` forecasts,

    * ``φ(b)`` = mean forecast in b,
    * ``ρ(b)`` = fraction of those instances whose true class is j,
    * ``ν(b) = n_b / n``: a **fraction** of the n test instances, exactly as the paper
      defines ``ν_n^j(b) = n_b^j / n`` (not a count), so the score does not grow with the test
      set size and is comparable across data sets.

    All K classes are summed, including classes absent from ``y`` (ρ = 0 there). Since
    ``Σ_b ν(b)(ρ(b) + φ(b)) = freq(j) + mean(p_j)`` sums to 2 over j, ``0 <= R <= 2``.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)
    bins : {"equal_width", "mdl"}
    n_bins : int
        Number of equal-width bins (ignored for MDL).
    mdl_target : {"class", "indicator"}

    Returns
    -------
    float
        NaN for ``n == 0``.
    """
    yy, p = _check_y_proba(y, proba)
    _check_bins_args(bins, n_bins)
    if yy.size == 0:
        return float("nan")
    total = 0.0
    for j in range(p.shape[1]):
        rc = _reliability_stats(yy, p, j, bins, n_bins, mdl_target)
        total += float(np.sum(rc.weight * np.abs(rc.observed_frequency - rc.mean_forecast)))
    return total


def ece(y: object, proba: object, n_bins: int = 10) -> float:
    """Expected calibration error of the predicted class (Guo et al. 2017; Naeini et al.).

    Confidence = max probability, prediction = argmax (lowest index on ties). Equal-width
    bins ``(0, 1/M], (1/M, 2/M], ..., ((M-1)/M, 1]`` on the confidence (right-closed, as in
    Guo et al.); ``ECE = Σ_m |B_m| / n · |acc(B_m) - conf(B_m)|``.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)
    n_bins : int, default 10

    Returns
    -------
    float
        In [0, 1]; NaN for ``n == 0``.
    """
    yy, p = _check_y_proba(y, proba)
    _check_bins_args("equal_width", n_bins)
    n = yy.shape[0]
    if n == 0:
        return float("nan")
    conf = p.max(axis=1)
    correct = (np.argmax(p, axis=1) == yy).astype(float)
    b = assign_bins(conf, equal_width_edges(conf, n_bins, lo=0.0, hi=1.0), right=True)
    s_conf = np.bincount(b, weights=conf, minlength=n_bins)
    s_acc = np.bincount(b, weights=correct, minlength=n_bins)
    return float(np.sum(np.abs(s_acc - s_conf)) / n)


# --------------------------------------------------------------------------------------------
# losses
# --------------------------------------------------------------------------------------------


def _check_loss(loss: object, k: int) -> np.ndarray:
    try:
        lm = np.asarray(loss, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ConfigError("The loss matrix must be numeric.") from exc
    if lm.shape != (k, k):
        raise ConfigError(f"The loss matrix must have shape ({k}, {k}), got {lm.shape}.")
    if not np.all(np.isfinite(lm)):
        raise ConfigError("The loss matrix contains NaN or infinite values.")
    return lm


def min_expected_loss_predictions(proba: object, loss: object) -> np.ndarray:
    """Bayes-optimal predictions under a loss matrix (Bradford et al. sect. 2.1).

    ``pred_i = argmin_j Σ_c p_ic L[c, j]`` (lowest index on ties).

    Parameters
    ----------
    proba : array_like, shape (n, K)
    loss : array_like, shape (K, K)
        ``L[true, predicted]``: rows are the true class, columns the predicted class.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
    """
    p = _check_matrix(proba, "proba")
    lm = _check_loss(loss, p.shape[1])
    return np.argmin(p @ lm, axis=1).astype(np.int64)


def expected_loss(y: object, proba: object, loss: object) -> float:
    """Mean loss ``mean_i L[y_i, pred_i]`` of the minimum-expected-loss predictions.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)
    loss : array_like, shape (K, K)
        ``L[true, predicted]``.

    Returns
    -------
    float
        NaN for ``n == 0``.
    """
    yy, p = _check_y_proba(y, proba)
    lm = _check_loss(loss, p.shape[1])
    if yy.size == 0:
        return float("nan")
    pred = np.argmin(p @ lm, axis=1)
    return float(np.mean(lm[yy, pred]))


def bias_variance(y: object, proba_runs: object) -> dict[str, float]:
    """Bias-variance decomposition of the squared error (MSE) over R training samples.

    For instance i with one-hot target ``y_i`` and forecasts ``p_ri`` from R models trained on
    different samples, with ``p̄_i = mean_r p_ri``, the decomposition used by Bradford et al.
    (after Kohavi & Wolpert 1996, with their factor ½, i.e. on the *normalised* MSE scale):

    * ``mse_norm = ½ mean_r Σ_c (p_ric - y_ic)^2``  (mean Brier / 2 over the runs)
    * ``bias2    = ½ Σ_c (p̄_ic - y_ic)^2``
    * ``variance = ½ mean_r Σ_c (p_ric - p̄_ic)^2``
    * ``noise    = ½ (1 - Σ_c f_ic^2)`` for the true class distribution ``f``; the labels are
      taken as deterministic (``f = y``), so ``noise = 0``.

    Then ``mse_norm = bias2 + variance + noise`` exactly. All terms are averaged over the n
    instances. ``mse`` = ``2 * mse_norm`` is the mean multiclass Brier score of the runs.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba_runs : array_like, shape (R, n, K)

    Returns
    -------
    dict
        Keys ``mse``, ``mse_norm``, ``bias2``, ``variance``, ``noise`` (floats).
    """
    yy = _check_y(y)
    try:
        pr = np.asarray(proba_runs, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError("proba_runs must be a numeric array.") from exc
    if pr.ndim != 3 or pr.shape[1] != yy.shape[0] or pr.shape[0] < 1:
        raise DataError(
            f"proba_runs must have shape (R, n, K) with n = {yy.shape[0]}, got {pr.shape}."
        )
    for r in range(pr.shape[0]):
        _check_y_proba(yy, pr[r])
    if yy.size == 0:
        nan = float("nan")
        return {"mse": nan, "mse_norm": nan, "bias2": nan, "variance": nan, "noise": nan}
    t = _onehot(yy, pr.shape[2])
    mean_p = pr.mean(axis=0)
    mse_norm = 0.5 * np.mean(np.sum((pr - t[None]) ** 2, axis=2))
    bias2 = 0.5 * np.mean(np.sum((mean_p - t) ** 2, axis=1))
    variance = 0.5 * np.mean(np.sum((pr - mean_p[None]) ** 2, axis=2))
    return {
        "mse": float(2.0 * mse_norm),
        "mse_norm": float(mse_norm),
        "bias2": float(bias2),
        "variance": float(variance),
        "noise": 0.0,
    }


# --------------------------------------------------------------------------------------------
# interval-valued metrics (empirical-Bayes belief trees, sect. 5), computed exactly
# --------------------------------------------------------------------------------------------


def brier_bounds(y: object, lower: object, upper: object) -> tuple[float, float]:
    """Exact range of the Brier score when each probability lies in its interval.

    EB paper sect. 5: ``eval([p⁻, p⁺], y) = [min_p eval(p, y), max_p eval(p, y)]``.
    Multiclass definition (**box semantics**): every class probability ``p_ic`` is chosen
    independently in ``[lower_ic, upper_ic]`` (rows need not sum to 1). Then the per-instance
    score ``Σ_c (p_ic - y_ic)^2`` is separable and each term is monotone on [0, 1], so

    * low  = mean_i [(1 - upper_{i,y_i})^2 + Σ_{c != y_i} lower_ic^2],
    * high = mean_i [(1 - lower_{i,y_i})^2 + Σ_{c != y_i} upper_ic^2].

    For binary problems with consistent intervals (``lower_0 = 1 - upper_1``) the extremes lie
    on the simplex and this is exactly the paper's binary range (times 2, the multiclass
    Brier scale; halve it for the paper's ``mean (p - y)^2``).

    Parameters
    ----------
    y : array_like of int, shape (n,)
    lower, upper : array_like, shape (n, K)

    Returns
    -------
    (float, float)
        ``(low, high)`` on the 0-2 scale of :func:`brier`.
    """
    yy, lo, hi = _check_bounds(y, lower, upper)
    if yy.size == 0:
        return float("nan"), float("nan")
    t = _onehot(yy, lo.shape[1]).astype(bool)
    low = np.where(t, (1.0 - hi) ** 2, lo**2).sum(axis=1)
    high = np.where(t, (1.0 - lo) ** 2, hi**2).sum(axis=1)
    return float(low.mean()), float(high.mean())


def log_loss_bounds(y: object, lower: object, upper: object) -> tuple[float, float]:
    """Exact range of the log-loss over the intervals: ``(mean -ln u_true, mean -ln l_true)``.

    The per-instance loss depends only on ``p_{i, y_i}`` and is decreasing in it, so the
    extremes are at the interval ends (clipped to ``[1e-15, 1]`` as in :func:`log_loss`).
    Independent per instance, hence the range of the mean is the mean of the ranges.

    Returns
    -------
    (float, float)
        ``(low, high)``.
    """
    yy, lo, hi = _check_bounds(y, lower, upper)
    if yy.size == 0:
        return float("nan"), float("nan")
    idx = np.arange(yy.shape[0])
    low = -np.log(np.clip(hi[idx, yy], LOG_LOSS_EPS, 1.0))
    high = -np.log(np.clip(lo[idx, yy], LOG_LOSS_EPS, 1.0))
    return float(low.mean()), float(high.mean())


def auc_bounds(y: object, lower: object, upper: object) -> tuple[float, float]:
    """Exact range of the (macro one-vs-rest) AUC over the intervals.

    Each pair term ``[s_pos > s_neg] + ½ [s_pos = s_neg]`` is non-decreasing in the positive's
    score and non-increasing in the negative's, so the minimum puts every positive at its
    lower bound and every negative at its upper bound, the maximum the reverse; both
    configurations are attainable, so the bounds are exact. Multiclass: per class c one-vs-rest
    on column c (box semantics, columns chosen independently), then the macro mean as in
    :func:`auc` (class 1 only when K = 2; absent classes skipped).

    Returns
    -------
    (float, float)
        ``(low, high)``; NaN when ``y`` holds fewer than two classes.
    """
    yy, lo, hi = _check_bounds(y, lower, upper)
    return _auc_columns(yy, lo, hi), _auc_columns(yy, hi, lo)


def auc_bounds_endpoints(y: object, lower: object, upper: object) -> tuple[float, float]:
    """The EB paper code's AUC "interval": ``min``/``max`` of the AUC of the lower vector and
    the AUC of the upper vector (``AUC(p_inf)``, ``AUC(p_sup)`` in ``main.R``).

    Not the true range (see :func:`auc_bounds`, which always contains it); provided for
    comparison with the published numbers.

    Returns
    -------
    (float, float)
    """
    yy, lo, hi = _check_bounds(y, lower, upper)
    a = _auc_columns(yy, lo, lo)
    b = _auc_columns(yy, hi, hi)
    if np.isnan(a) or np.isnan(b):
        return float("nan"), float("nan")
    return min(a, b), max(a, b)


# --------------------------------------------------------------------------------------------
# all at once
# --------------------------------------------------------------------------------------------


def compute_metrics(
    y: object,
    proba: object,
    *,
    certainty: object | None = None,
    lower: object | None = None,
    upper: object | None = None,
    loss: object | None = None,
    bins: Bins = "equal_width",
) -> dict[str, float]:
    """Every metric of this module for one set of predictions.

    Parameters
    ----------
    y : array_like of int, shape (n,)
    proba : array_like, shape (n, K)
    certainty : array_like, shape (n,), optional
        Certainty of each prediction for AUC reliability (default: max probability).
    lower, upper : array_like, shape (n, K), optional
        Probability intervals; give both or neither. They are not required to contain
        ``proba`` (the EB intervals are centred on the uncorrected estimate).
    loss : array_like, shape (K, K), optional
        ``L[true, predicted]``; adds ``expected_loss``.
    bins : {"equal_width", "mdl"}
        Binning of the ERC deviation (10 equal-width bins or MDL).

    Returns
    -------
    dict[str, float]
        ``accuracy, brier, brier_norm, log_loss, auc, auc_reliability, erc_deviation, ece``;
        plus ``expected_loss`` when ``loss`` is given; plus ``brier_low, brier_high,
        log_loss_low, log_loss_high, auc_low, auc_high`` when bounds are given.
    """
    yy, p = _check_y_proba(y, proba)
    if (lower is None) != (upper is None):
        raise ConfigError("Give both lower and upper probability bounds, or neither.")
    if bins not in ("equal_width", "mdl"):
        raise ConfigError(f"Unknown binning {bins!r}.", hint="Use 'equal_width' or 'mdl'.")
    b = brier(yy, p)
    out: dict[str, float] = {
        "accuracy": accuracy(yy, p),
        "brier": b,
        "brier_norm": b / 2.0,
        "log_loss": log_loss(yy, p),
        "auc": auc(yy, p),
        "auc_reliability": auc_reliability(yy, p, certainty),
        "erc_deviation": erc_deviation(yy, p, bins=bins),
        "ece": ece(yy, p),
    }
    if loss is not None:
        out["expected_loss"] = expected_loss(yy, p, loss)
    if lower is not None:
        lo = _check_matrix(lower, "lower", n=yy.shape[0], k=p.shape[1])
        hi = _check_matrix(upper, "upper", n=yy.shape[0], k=p.shape[1])
        out["brier_low"], out["brier_high"] = brier_bounds(yy, lo, hi)
        out["log_loss_low"], out["log_loss_high"] = log_loss_bounds(yy, lo, hi)
        out["auc_low"], out["auc_high"] = auc_bounds(yy, lo, hi)
    return out
