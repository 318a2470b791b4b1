"""How far forecasts and certainties can be trusted: reliability curves and their scores.

Lindsay & Cox's empirical reliability curve (ERC) per class and its deviation ``R(Γ, n)``
with equal-width or MDL bins, the expected calibration error of the predicted class (Guo et
al. 2017), and the AUC reliability of Costa et al. (how well a certainty separates correct
from incorrect predictions). Inputs and return values follow
:mod:`treecert.evaluation.metric_inputs`.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from treecert.data.discretize import assign_bins, equal_width_edges, mdl_cut_points
from treecert.errors import ConfigError, DataError
from treecert.evaluation.metric_inputs import check_y_proba
from treecert.evaluation.point_metrics import roc_auc

__all__ = [
    "Bins",
    "MdlTarget",
    "ReliabilityCurve",
    "auc_reliability",
    "ece",
    "erc_deviation",
    "erc_slope",
    "reliability_curve",
    "weighted_trend",
]

Bins = Literal["equal_width", "mdl"]
MdlTarget = Literal["class", "indicator"]


def auc_reliability(y: object, proba: object, certainty: object | None = None) -> float:
    """AUC reliability (Costa et al. sect. 2.1, after Kukar & Kononenko).

    ROC AUC of separating correct predictions (positives) from incorrect ones (negatives)
    by the certainty attached to each prediction. Predictions are ``argmax`` of ``proba``
    (lowest index on ties). NaN when all predictions are correct or all are wrong.

    Parameters
    ----------
    certainty : array_like, shape (n,), optional
        Certainty of each prediction; default the probability of the predicted class.
    """
    yy, p = check_y_proba(y, proba)
    if certainty is None:
        cert = p.max(axis=1)
    else:
        cert = np.asarray(certainty, dtype=float)
        if cert.shape != yy.shape:
            raise DataError(f"certainty has shape {cert.shape}, expected {yy.shape}.")
    return roc_auc(cert, np.argmax(p, axis=1) == yy)


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
    y: object, proba: object, cls: int, bins: Bins = "equal_width", n_bins: int = 10, *,
    mdl_target: MdlTarget = "class",
) -> ReliabilityCurve:
    """Points ``(φ(b), ρ(b))`` and weights ``ν(b)`` of the empirical reliability curve (ERC)
    of class ``cls`` (Lindsay & Cox, sect. 2).

    Bins of the forecasts ``p_{·, cls}``:

    * ``"equal_width"``: ``n_bins`` bins ``[0, 1/k), [1/k, 2/k), ..., [(k-1)/k, 1]`` exactly
      as in the paper (left-closed, the last one closed).
    * ``"mdl"``: Fayyad & Irani MDL cut points (:func:`treecert.data.discretize.mdl_cut_points`,
      Weka's ``Discretize``, which Lindsay & Cox used) learnt on the forecasts themselves,
      right-closed bins as in Weka. ``mdl_target="class"`` (default) discretises against the
      true class label, as Weka's filter does when applied to a table of forecasts with the
      class attribute; ``"indicator"`` against the binary event ``y == cls``. Both coincide
      for binary problems. ``n_bins`` is ignored.

    Parameters
    ----------
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
    yy, p = check_y_proba(y, proba)
    _check_bins_args(bins, n_bins)
    if (
        isinstance(cls, bool)
        or not isinstance(cls, (int, np.integer))
        or not (0 <= cls < p.shape[1])
    ):
        raise ConfigError(f"cls must be a class code in 0..{p.shape[1] - 1}, got {cls!r}.")
    return _reliability_stats(yy, p, int(cls), bins, n_bins, mdl_target)


def reliability_bins(
    y: object, proba: object, cls: int, bins: Bins = "equal_width", n_bins: int = 10, *,
    mdl_target: MdlTarget = "class",
) -> np.ndarray:
    """The bin of every row's forecast ``p_{i, cls}``, shape (n,), binned as by
    :func:`reliability_curve` with the same arguments: the k-th distinct bin number, in
    increasing order, is the curve's k-th point (plots average other per-row values, such
    as Venn's bounds, over the same bins)."""
    yy, p = check_y_proba(y, proba)
    _check_bins_args(bins, n_bins)
    return _bin_forecasts(p[:, int(cls)], yy, p.shape[1], int(cls), bins, n_bins, mdl_target)


def erc_deviation(
    y: object, proba: object, bins: Bins = "equal_width", n_bins: int = 10, *,
    mdl_target: MdlTarget = "class",
) -> float:
    """Lindsay & Cox's ERC deviation ``R(Γ, n) = Σ_j Σ_{b ∈ B_j} ν(b) |ρ(b) - φ(b)|``.

    For every class j the forecasts ``p_{·j}`` are binned as by :func:`reliability_curve`
    (same ``bins``, ``n_bins`` and ``mdl_target``) and, per bin b with ``n_b`` forecasts,

    * ``φ(b)`` = mean forecast in b,
    * ``ρ(b)`` = fraction of those instances whose true class is j,
    * ``ν(b) = n_b / n``: a **fraction** of the n test instances, exactly as the paper
      defines ``ν_n^j(b) = n_b^j / n`` (not a count), so the score does not grow with the test
      set size and is comparable across data sets.

    All K classes are summed, including classes absent from ``y`` (ρ = 0 there). Since
    ``Σ_b ν(b)(ρ(b) + φ(b)) = freq(j) + mean(p_j)`` sums to 2 over j, ``0 <= R <= 2``.
    """
    yy, p = check_y_proba(y, proba)
    _check_bins_args(bins, n_bins)
    if yy.size == 0:
        return float("nan")
    total = 0.0
    for j in range(p.shape[1]):
        rc = _reliability_stats(yy, p, j, bins, n_bins, mdl_target)
        total += float(np.sum(rc.weight * np.abs(rc.observed_frequency - rc.mean_forecast)))
    return total


def weighted_trend(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """``(intercept, slope)`` of the weighted least-squares line through points (x, y) with
    weights w: the ERC's trend line when the points are the bins' ``(φ(b), ρ(b))`` and the
    weights their ``ν(b)``. NaN when fewer than two distinct x carry weight.
    """
    x, y, w = (np.asarray(a, dtype=float) for a in (x, y, w))
    sw = w.sum()
    if sw <= 0:
        return float("nan"), float("nan")
    mx, my = np.dot(w, x) / sw, np.dot(w, y) / sw
    sxx = np.dot(w, (x - mx) ** 2)
    if not sxx > 1e-15 * sw:
        return float("nan"), float("nan")
    slope = float(np.dot(w, (x - mx) * (y - my)) / sxx)
    return float(my - slope * mx), slope


def erc_slope(
    y: object, proba: object, bins: Bins = "equal_width", n_bins: int = 10, *,
    mdl_target: MdlTarget = "class",
) -> float:
    """Slope of the ERC's trend line (Lindsay & Cox sect. 3): "a trend line is predicted from
    these coordinates using a weighted regression algorithm (each training example weighted
    according to the value ν(b))".

    The coordinates are every class's bins ``(φ(b), ρ(b))`` as in :func:`erc_deviation`
    (same binning), weighted by ``ν(b)``; the line is the weighted least-squares fit
    (:func:`weighted_trend`). Pooled over the K classes, the weighted means of φ and ρ are
    both 1/K, so the line always crosses the line of calibration at (1/K, 1/K) and its slope
    says how it leans: 1 is calibration; below 1 the forecasts are too extreme
    (over-estimation of high forecasts, under-estimation of low ones, the paper's reading of
    Fig. 1), above 1 too timid. NaN with a single forecast value.

    Departure: the paper cites locally weighted learning (Atkeson et al. 1997) for the
    regression, which draws a curve; a straight line gives one number to compare.
    """
    yy, p = check_y_proba(y, proba)
    _check_bins_args(bins, n_bins)
    if yy.size == 0:
        return float("nan")
    curves = [_reliability_stats(yy, p, j, bins, n_bins, mdl_target) for j in range(p.shape[1])]
    x = np.concatenate([c.mean_forecast for c in curves])
    r = np.concatenate([c.observed_frequency for c in curves])
    w = np.concatenate([c.weight for c in curves])
    return weighted_trend(x, r, w)[1]


def ece(y: object, proba: object, n_bins: int = 10) -> float:
    """Expected calibration error of the predicted class (Guo et al. 2017; Naeini et al.),
    in [0, 1].

    Confidence = max probability, prediction = argmax (lowest index on ties). ``n_bins``
    (default 10) equal-width bins ``(0, 1/M], (1/M, 2/M], ..., ((M-1)/M, 1]`` on the
    confidence (right-closed, as in Guo et al.); ``ECE = Σ_m |B_m| / n · |acc(B_m) -
    conf(B_m)|``.
    """
    yy, p = check_y_proba(y, proba)
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
