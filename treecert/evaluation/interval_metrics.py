"""Interval-valued metrics: the range a metric takes when every predicted probability may be
anywhere in its interval ``[lower_ic, upper_ic]`` (empirical-Bayes belief trees, sect. 5).

EB paper sect. 5: ``eval([p⁻, p⁺], y) = [min_p eval(p, y), max_p eval(p, y)]``, computed
exactly here for the Brier score, the log-loss and the AUC, plus the EB paper code's endpoint
AUC for comparison with the published numbers. Every function returns ``(low, high)``;
inputs follow :mod:`treecert.evaluation.metric_inputs`.
"""

from __future__ import annotations

import numpy as np

from treecert.evaluation.metric_inputs import check_bounds, onehot
from treecert.evaluation.point_metrics import LOG_LOSS_EPS, auc_columns

__all__ = ["auc_bounds", "auc_bounds_endpoints", "brier_bounds", "log_loss_bounds"]


def brier_bounds(y: object, lower: object, upper: object) -> tuple[float, float]:
    """Exact range of the Brier score when each probability lies in its interval.

    Multiclass definition (**box semantics**): every class probability ``p_ic`` is chosen
    independently in ``[lower_ic, upper_ic]`` (rows need not sum to 1). Then the per-instance
    score ``Σ_c (p_ic - y_ic)^2`` is separable and each term is monotone on [0, 1], so

    * low  = mean_i [(1 - upper_{i,y_i})^2 + Σ_{c != y_i} lower_ic^2],
    * high = mean_i [(1 - lower_{i,y_i})^2 + Σ_{c != y_i} upper_ic^2].

    For binary problems with consistent intervals (``lower_0 = 1 - upper_1``) the extremes lie
    on the simplex and this is exactly the paper's binary range (times 2, the multiclass
    Brier scale; halve it for the paper's ``mean (p - y)^2``). ``(low, high)`` are on the 0-2
    scale of :func:`~treecert.evaluation.point_metrics.brier`.
    """
    yy, lo, hi = check_bounds(y, lower, upper)
    if yy.size == 0:
        return float("nan"), float("nan")
    t = onehot(yy, lo.shape[1]).astype(bool)
    low = np.where(t, (1.0 - hi) ** 2, lo**2).sum(axis=1)
    high = np.where(t, (1.0 - lo) ** 2, hi**2).sum(axis=1)
    return float(low.mean()), float(high.mean())


def log_loss_bounds(y: object, lower: object, upper: object) -> tuple[float, float]:
    """Exact range of the log-loss over the intervals: ``(mean -ln u_true, mean -ln l_true)``.

    The per-instance loss depends only on ``p_{i, y_i}`` and is decreasing in it, so the
    extremes are at the interval ends (clipped to ``[1e-15, 1]`` as in
    :func:`~treecert.evaluation.point_metrics.log_loss`). Independent per instance, hence the
    range of the mean is the mean of the ranges.
    """
    yy, lo, hi = check_bounds(y, lower, upper)
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
    :func:`~treecert.evaluation.point_metrics.auc` (class 1 only when K = 2; absent classes
    skipped). NaN when ``y`` holds fewer than two classes.
    """
    yy, lo, hi = check_bounds(y, lower, upper)
    return auc_columns(yy, lo, hi), auc_columns(yy, hi, lo)


def auc_bounds_endpoints(y: object, lower: object, upper: object) -> tuple[float, float]:
    """The EB paper code's AUC "interval": ``min``/``max`` of the AUC of the lower vector and
    the AUC of the upper vector (``AUC(p_inf)``, ``AUC(p_sup)`` in ``main.R``).

    Not the true range (see :func:`auc_bounds`, which always contains it); provided for
    comparison with the published numbers.
    """
    yy, lo, hi = check_bounds(y, lower, upper)
    a = auc_columns(yy, lo, lo)
    b = auc_columns(yy, hi, hi)
    if np.isnan(a) or np.isnan(b):
        return float("nan"), float("nan")
    return min(a, b), max(a, b)
