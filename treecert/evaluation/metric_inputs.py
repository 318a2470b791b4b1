"""The inputs every metric takes, their conventions and their checks.

The metrics (:mod:`~treecert.evaluation.point_metrics`, :mod:`~treecert.evaluation.costs`,
:mod:`~treecert.evaluation.reliability`, :mod:`~treecert.evaluation.interval_metrics`, and
all of them at once in :mod:`~treecert.evaluation.metric_table`) are pure, vectorised numpy
code and unweighted. Their docstrings state only what is particular to each; these are the
shared conventions:

``y``
    int array, shape (n,), true class codes ``0..K-1``.
``proba``
    float array, shape (n, K), predicted class probabilities; every row sums to 1 (checked to
    1e-5) and entries lie in [0, 1].
``lower``, ``upper``
    float arrays, shape (n, K), an interval ``[lower_ic, upper_ic]`` for every predicted
    probability (e.g. the empirical-Bayes belief intervals, Venn intervals).

A metric returns a float (an interval-valued metric a pair ``(low, high)``), NaN when there
are no instances (``n == 0``); its docstring says when else it is NaN.

Sources: Lindsay & Cox (ERC deviation ``R(Γ, n)``), Costa, Verwer & Blockeel sect. 2.1 (Brier
score, one-vs-rest macro AUC, AUC reliability), Sutton-Charani's empirical-Bayes belief
trees sect. 5 (interval-valued metrics), Bradford et al. (normalised MSE, loss matrices,
bias-variance decomposition of the MSE after Kohavi & Wolpert 1996), Guo et al. 2017 (ECE).

Input errors raise :class:`treecert.errors.DataError` (arrays) or
:class:`treecert.errors.ConfigError` (options, loss matrices).
"""

from __future__ import annotations

import numpy as np

from treecert.data.coerce import float_array
from treecert.errors import DataError

__all__ = ["check_bounds", "check_matrix", "check_y", "check_y_proba", "onehot"]

_ROW_SUM_TOL = 1e-5
_RANGE_TOL = 1e-9


def check_y(y: object, n_classes: int | None = None) -> np.ndarray:
    """``y`` as int64 class codes (in ``0..n_classes-1`` when ``n_classes`` is given)."""
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


def check_matrix(m: object, name: str, n: int | None = None, k: int | None = None) -> np.ndarray:
    """``m`` as a finite (n, K) float matrix with entries in [0, 1]; ``name`` is for errors."""
    arr = float_array(m, f"{name} must be a numeric array", 2, f"{name} must have shape (n, K)")
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


def check_y_proba(y: object, proba: object) -> tuple[np.ndarray, np.ndarray]:
    """``(y, proba)`` checked together: rows summing to 1, class codes below K."""
    yy = check_y(y)
    p = check_matrix(proba, "proba", n=yy.shape[0])
    if p.size and np.abs(p.sum(axis=1) - 1.0).max() > _ROW_SUM_TOL:
        raise DataError("Every row of proba must sum to 1.")
    check_y(yy, p.shape[1])
    return yy, p


def check_bounds(y: object, lower: object, upper: object) -> tuple[np.ndarray, ...]:
    """``(y, lower, upper)`` checked together, the bounds clipped to [0, 1]."""
    yy = check_y(y)
    lo = check_matrix(lower, "lower", n=yy.shape[0])
    hi = check_matrix(upper, "upper", n=yy.shape[0], k=lo.shape[1])
    if (lo > hi + _RANGE_TOL).any():
        raise DataError("lower must not exceed upper.")
    check_y(yy, lo.shape[1])
    return yy, np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def onehot(y: np.ndarray, k: int) -> np.ndarray:
    """The (n, k) 0/1 indicator matrix of the class codes ``y``."""
    out = np.zeros((y.shape[0], k))
    out[np.arange(y.shape[0]), y] = 1.0
    return out
