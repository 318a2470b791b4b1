"""Metrics of point forecasts: one probability vector per instance.

Predictions, accuracy, the Brier score (and its normalised form), the log-loss, ROC AUC
(binary by ranks, and the macro one-vs-rest AUC of Costa et al.), and the bias-variance
decomposition of the Brier score / MSE over models trained on different samples (Bradford
et al.). Inputs and return values follow :mod:`treecert.evaluation.metric_inputs`.
"""

from __future__ import annotations

import numpy as np

from treecert.errors import DataError
from treecert.evaluation.metric_inputs import check_matrix, check_y, check_y_proba, onehot

__all__ = [
    "LOG_LOSS_EPS",
    "accuracy",
    "auc",
    "auc_columns",
    "bias_variance",
    "brier",
    "brier_norm",
    "kappa",
    "log_loss",
    "predictions",
    "roc_auc",
]

#: Probabilities are clipped to ``[LOG_LOSS_EPS, 1]`` before taking logs.
LOG_LOSS_EPS = 1e-15


def predictions(proba: object) -> np.ndarray:
    """Predicted class codes: ``argmax`` of each row, ties going to the lowest index.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
    """
    p = check_matrix(proba, "proba")
    return np.argmax(p, axis=1).astype(np.int64)


def accuracy(y: object, proba: object) -> float:
    """Fraction of instances whose ``argmax`` class (lowest index on ties) is the true one,
    in [0, 1]."""
    yy, p = check_y_proba(y, proba)
    if yy.size == 0:
        return float("nan")
    return float(np.mean(np.argmax(p, axis=1) == yy))


def kappa(y: object, proba: object) -> float:
    """Cohen's kappa of the ``argmax`` predictions against the truth, as Weka's summary
    reports it: (p_o - p_e) / (1 - p_e), p_o the accuracy and p_e the agreement expected
    from the marginals, sum_c (true share of c)(predicted share of c); 1 when p_e = 1."""
    yy, p = check_y_proba(y, proba)
    if yy.size == 0:
        return float("nan")
    k = p.shape[1]
    predicted = np.argmax(p, axis=1)
    observed = float(np.mean(predicted == yy))
    chance = float(np.bincount(yy, minlength=k) @ np.bincount(predicted, minlength=k)
                   ) / yy.size**2
    return 1.0 if chance == 1.0 else (observed - chance) / (1.0 - chance)


def brier(y: object, proba: object) -> float:
    """Multiclass Brier score ``mean_i sum_c (p_ic - y_ic)^2`` (range 0-2).

    This is Brier's (1950) original score as used by Costa et al. (sect. 2.1) and
    scikit-learn's multiclass definition; Bradford et al. call it the MSE. For binary problems
    it is twice the usual ``mean (p_1 - y)^2``.
    """
    yy, p = check_y_proba(y, proba)
    if yy.size == 0:
        return float("nan")
    return float(np.mean(np.sum((p - onehot(yy, p.shape[1])) ** 2, axis=1)))


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
    """
    yy, p = check_y_proba(y, proba)
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
    ranks = average_ranks(s)
    u = float(ranks[pos].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of a 1-D array, tied values sharing the mean of their ranks (what
    ``scipy.stats.rankdata(method="average")`` gives; here in numpy, because importing
    scipy.stats costs a command-line run more than a small cross-validation takes)."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    counts = np.diff(np.r_[starts, ordered.size])
    group = np.repeat(np.arange(starts.size), counts)
    ranks = np.empty(values.size, dtype=float)
    ranks[order] = (starts + (counts + 1) / 2.0)[group]
    return ranks


def auc_columns(y: np.ndarray, pos_scores: np.ndarray, neg_scores: np.ndarray) -> float:
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
    average="macro")``. NaN when ``y`` holds fewer than two classes.
    """
    yy, p = check_y_proba(y, proba)
    return auc_columns(yy, p, p)


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
    proba_runs : array_like, shape (R, n, K)
        The ``proba`` of each of the R models.

    Returns
    -------
    dict
        Keys ``mse``, ``mse_norm``, ``bias2``, ``variance``, ``noise`` (floats).
    """
    yy = check_y(y)
    try:
        pr = np.asarray(proba_runs, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError("proba_runs must be a numeric array.") from exc
    if pr.ndim != 3 or pr.shape[1] != yy.shape[0] or pr.shape[0] < 1:
        raise DataError(
            f"proba_runs must have shape (R, n, K) with n = {yy.shape[0]}, got {pr.shape}."
        )
    for r in range(pr.shape[0]):
        check_y_proba(yy, pr[r])
    if yy.size == 0:
        nan = float("nan")
        return {"mse": nan, "mse_norm": nan, "bias2": nan, "variance": nan, "noise": nan}
    t = onehot(yy, pr.shape[2])
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
