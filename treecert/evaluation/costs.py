"""Decisions and their cost under a loss matrix (Bradford et al. sect. 2.1).

``loss`` is a (K, K) array ``L[true, predicted]``: rows are the true class, columns the
predicted class. The minimum-expected-loss predictions are what ``predict`` and ``evaluate``
report when given a loss matrix; :func:`expected_loss` is their mean loss. Other inputs and
return values follow :mod:`treecert.evaluation.metric_inputs`.
"""

from __future__ import annotations

import numpy as np

from treecert.errors import ConfigError
from treecert.evaluation.metric_inputs import check_matrix, check_y_proba

__all__ = ["expected_loss", "min_expected_loss_predictions"]


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
    """Bayes-optimal predictions under a loss matrix.

    ``pred_i = argmin_j Σ_c p_ic L[c, j]`` (lowest index on ties).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
    """
    p = check_matrix(proba, "proba")
    lm = _check_loss(loss, p.shape[1])
    return np.argmin(p @ lm, axis=1).astype(np.int64)


def expected_loss(y: object, proba: object, loss: object) -> float:
    """Mean loss ``mean_i L[y_i, pred_i]`` of the minimum-expected-loss predictions."""
    yy, p = check_y_proba(y, proba)
    lm = _check_loss(loss, p.shape[1])
    if yy.size == 0:
        return float("nan")
    pred = np.argmin(p @ lm, axis=1)
    return float(np.mean(lm[yy, pred]))
