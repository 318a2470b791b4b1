"""Every metric for one set of predictions: one row of the metrics table ``evaluate`` writes.

Gathers the point metrics (:mod:`~treecert.evaluation.point_metrics`), the reliability
scores (:mod:`~treecert.evaluation.reliability`), the expected loss under a loss matrix
(:mod:`~treecert.evaluation.costs`) and, for methods with probability intervals, the
interval-valued metrics (:mod:`~treecert.evaluation.interval_metrics`). Inputs follow
:mod:`treecert.evaluation.metric_inputs`.
"""

from __future__ import annotations

import numpy as np

from treecert.errors import ConfigError
from treecert.evaluation.costs import expected_loss
from treecert.evaluation.interval_metrics import auc_bounds, brier_bounds, log_loss_bounds
from treecert.evaluation.metric_inputs import check_matrix, check_y_proba
from treecert.evaluation.point_metrics import accuracy, auc, brier, kappa, log_loss
from treecert.evaluation.reliability import (
    Bins,
    auc_reliability,
    ece,
    erc_deviation,
    erc_slope,
)

__all__ = ["compute_metrics"]


def compute_metrics(
    y: object,
    proba: object,
    *,
    certainty: object | None = None,
    lower: object | None = None,
    upper: object | None = None,
    loss: object | None = None,
    bins: Bins = "equal_width",
    reliable: object | None = None,
) -> dict[str, float]:
    """Every metric of the point, reliability, cost and interval modules for one set of
    predictions.

    Parameters
    ----------
    certainty : array_like, shape (n,), optional
        Certainty of each prediction for AUC reliability (default: max probability).
    lower, upper : array_like, shape (n, K), optional
        Probability intervals; give both or neither. They are not required to contain
        ``proba`` (the EB intervals are centred on the uncorrected estimate).
    loss : array_like, shape (K, K), optional
        ``L[true, predicted]``; adds ``expected_loss``.
    bins : {"equal_width", "mdl"}
        Binning of the ERC deviation (10 equal-width bins or MDL).
    reliable : array_like of "yes"/"no", shape (n,), optional
        A reliable/unreliable label per prediction (``kk:reliable_cv=K``); adds
        ``reliable_accuracy`` (share of labels that are right: reliable and correct, or
        unreliable and wrong) and ``reliable_share`` (share labelled reliable).

    Returns
    -------
    dict[str, float]
        ``accuracy, kappa, brier, brier_norm, log_loss, auc, auc_reliability,
        erc_deviation, ece, erc_slope``;
        plus ``expected_loss`` when ``loss`` is given; plus ``brier_low, brier_high,
        log_loss_low, log_loss_high, auc_low, auc_high`` when bounds are given.
    """
    yy, p = check_y_proba(y, proba)
    if (lower is None) != (upper is None):
        raise ConfigError("Give both lower and upper probability bounds, or neither.")
    if bins not in ("equal_width", "mdl"):
        raise ConfigError(f"Unknown binning {bins!r}.", hint="Use 'equal_width' or 'mdl'.")
    b = brier(yy, p)
    out: dict[str, float] = {
        "accuracy": accuracy(yy, p),
        "kappa": kappa(yy, p),
        "brier": b,
        "brier_norm": b / 2.0,
        "log_loss": log_loss(yy, p),
        "auc": auc(yy, p),
        "auc_reliability": auc_reliability(yy, p, certainty),
        "erc_deviation": erc_deviation(yy, p, bins=bins),
        "ece": ece(yy, p),
        "erc_slope": erc_slope(yy, p, bins=bins),
    }
    if reliable is not None:
        label = np.asarray(reliable) == "yes"
        correct = np.argmax(p, axis=1) == yy
        out["reliable_accuracy"] = float(np.mean(label == correct)) if yy.size else float("nan")
        out["reliable_share"] = float(np.mean(label)) if yy.size else float("nan")
    if loss is not None:
        out["expected_loss"] = expected_loss(yy, p, loss)
    if lower is not None:
        lo = check_matrix(lower, "lower", n=yy.shape[0], k=p.shape[1])
        hi = check_matrix(upper, "upper", n=yy.shape[0], k=p.shape[1])
        out["brier_low"], out["brier_high"] = brier_bounds(yy, lo, hi)
        out["log_loss_low"], out["log_loss_high"] = log_loss_bounds(yy, lo, hi)
        out["auc_low"], out["auc_high"] = auc_bounds(yy, lo, hi)
    return out
