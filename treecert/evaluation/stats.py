"""Comparing methods across data sets (Demšar 2006; Costa et al.'s Tables 1-3).

Per-data-set scores of two methods are compared with wins/ties/losses and a two-sided
Wilcoxon signed-rank test; several methods with the Friedman test and average ranks.

Missing results (NaN, e.g. an AUC reliability that is undefined because every prediction was
right) are dropped pairwise in the two-method functions and row-wise (whole data set) in the
many-method functions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats as _sps

from treecert.errors import ConfigError, DataError

__all__ = [
    "METRIC_DIRECTION",
    "METRIC_TARGET",
    "FriedmanResult",
    "WinsTiesLosses",
    "average_ranks",
    "friedman",
    "higher_is_better",
    "wilcoxon_p",
    "wins_ties_losses",
]

#: For every metric name treecert reports: ``True`` if a higher value is better.
METRIC_DIRECTION: dict[str, bool] = {
    "accuracy": True,
    "kappa": True,
    "auc": True,
    "auc_reliability": True,
    "auc_low": True,
    "auc_high": True,
    "brier": False,
    "brier_norm": False,
    "log_loss": False,
    "erc_deviation": False,
    "ece": False,
    "expected_loss": False,
    "brier_low": False,
    "brier_high": False,
    "log_loss_low": False,
    "log_loss_high": False,
    "leaves": False,
    "fit_seconds": False,
    "predict_seconds": False,
    "erc_slope": False,  # ranked by its distance from METRIC_TARGET (1), lower is better
    "reliable_accuracy": True,
    "reliable_share": True,  # of equally right labels, the one that trusts more
}

#: Metrics whose ideal is a value rather than an end: compare ranks ``|v - target|`` (lower
#: is better) and reports the values themselves.
METRIC_TARGET: dict[str, float] = {"erc_slope": 1.0}


def higher_is_better(metric: str) -> bool:
    """Direction of ``metric`` from :data:`METRIC_DIRECTION`.

    Raises
    ------
    ConfigError
        For an unknown metric name.
    """
    try:
        return METRIC_DIRECTION[metric]
    except KeyError:
        known = ", ".join(sorted(METRIC_DIRECTION))
        raise ConfigError(f"Unknown metric {metric!r}.", hint=f"Known metrics: {known}.") from None


def _paired(a: object, b: object) -> tuple[np.ndarray, np.ndarray]:
    try:
        x = np.asarray(a, dtype=float)
        z = np.asarray(b, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError("Scores must be numeric.") from exc
    if x.ndim != 1 or x.shape != z.shape:
        raise DataError(
            f"Paired scores must be 1-D arrays of equal length, got {x.shape} and {z.shape}."
        )
    keep = ~(np.isnan(x) | np.isnan(z))
    return x[keep], z[keep]


class WinsTiesLosses(NamedTuple):
    """Counts from the point of view of the first method."""

    wins: int
    ties: int
    losses: int


def wins_ties_losses(
    a: object, b: object, *, higher_is_better: bool, tol: float = 1e-4
) -> WinsTiesLosses:
    """Wins/ties/losses of method ``a`` against method ``b`` over data sets.

    A data set is a **tie** when ``|a_i - b_i| <= tol`` (absolute difference; the default
    1e-4 treats differences below the 4th decimal, as printed in the papers' tables, as
    ties); otherwise a win for ``a`` if it is better in the given direction, else a loss.
    Pairs with a NaN are ignored.

    Parameters
    ----------
    a, b : array_like, shape (n_datasets,)
        Scores of the two methods, aligned by data set.
    higher_is_better : bool
        Direction of the metric (see :data:`METRIC_DIRECTION`).
    tol : float, default 1e-4
        Absolute tie tolerance (>= 0).

    Returns
    -------
    WinsTiesLosses
        ``(wins, ties, losses)``.
    """
    if not (isinstance(tol, (int, float, np.floating)) and np.isfinite(tol) and tol >= 0):
        raise ConfigError(f"tol must be a finite non-negative number, got {tol!r}.")
    x, z = _paired(a, b)
    d = x - z if higher_is_better else z - x
    ties = np.abs(d) <= tol
    return WinsTiesLosses(
        int(np.count_nonzero(~ties & (d > 0))),
        int(np.count_nonzero(ties)),
        int(np.count_nonzero(~ties & (d < 0))),
    )


def wilcoxon_p(a: object, b: object) -> float:
    """Two-sided Wilcoxon signed-rank p-value for paired scores (Demšar 2006, sect. 3.1.3).

    ``scipy.stats.wilcoxon(a, b, zero_method="wilcox", alternative="two-sided")`` with
    scipy's default ``method="auto"`` (exact distribution for up to 50 non-zero differences
    without ties, else the normal approximation). Zero differences are discarded (Wilcoxon's
    original treatment), which is also how exact-zero differences are counted as ties in
    :func:`wins_ties_losses`; pairs with a NaN are dropped.

    Returns
    -------
    float
        ``NaN`` when there is no pair at all; ``1.0`` when every difference is zero (no
        evidence of any difference). With very few non-zero differences the test cannot
        reach significance (the smallest possible two-sided p with m differences is
        ``2 / 2^m``, e.g. 0.0625 for m = 5), but the p-value is still reported.
    """
    x, z = _paired(a, b)
    if x.size == 0:
        return float("nan")
    d = x - z
    if not np.any(d != 0):
        return 1.0
    res = _sps.wilcoxon(x, z, zero_method="wilcox", alternative="two-sided")
    return float(res.pvalue)


def _table(table: object) -> np.ndarray:
    try:
        t = np.asarray(table, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError("The results table must be numeric.") from exc
    if t.ndim != 2:
        raise DataError(f"The results table must be datasets x methods, got shape {t.shape}.")
    return t[~np.isnan(t).any(axis=1)]


def average_ranks(table: object, higher_is_better: bool) -> np.ndarray:
    """Average rank of each method over data sets (Demšar 2006, sect. 3.2.2).

    On every data set (row) the best method gets rank 1; tied methods share the average of
    their ranks. Rows containing a NaN are dropped.

    Parameters
    ----------
    table : array_like, shape (n_datasets, n_methods)
        A pandas DataFrame works too (its column order is kept).
    higher_is_better : bool

    Returns
    -------
    numpy.ndarray, shape (n_methods,)
        NaN everywhere when no complete row remains.
    """
    t = _table(table)
    if t.shape[0] == 0:
        return np.full(t.shape[1], np.nan)
    ranks = _sps.rankdata(-t if higher_is_better else t, axis=1, method="average")
    return ranks.mean(axis=0)


class FriedmanResult(NamedTuple):
    """Friedman chi-square statistic (tie-corrected) and its p-value."""

    statistic: float
    pvalue: float


def friedman(table: object) -> FriedmanResult:
    """Friedman test that all methods perform alike (Demšar 2006, sect. 3.2.2).

    ``chi2_F = [12 / (N k (k+1)) Σ_j R_j^2 - 3 N (k + 1)] / C`` with ``R_j`` the rank sums
    over the N data sets and ``C = 1 - Σ (t^3 - t) / (N k (k^2 - 1))`` the correction for ties,
    referred to chi-square with ``k - 1`` degrees of freedom: the same numbers as
    ``scipy.stats.friedmanchisquare`` (which needs k >= 3), but this also accepts k = 2.
    The statistic does not depend on the metric's direction. Rows with a NaN are dropped.

    Parameters
    ----------
    table : array_like, shape (n_datasets, n_methods)

    Returns
    -------
    FriedmanResult
        ``(statistic, pvalue)``; ``(nan, nan)`` with fewer than 2 complete data sets, and
        ``(0.0, 1.0)`` when every data set ties all methods.

    Raises
    ------
    ConfigError
        With fewer than two methods.
    """
    t = _table(table)
    n, k = t.shape
    if k < 2:
        raise ConfigError(f"The Friedman test needs at least 2 methods, got {k}.")
    if n < 2:
        return FriedmanResult(float("nan"), float("nan"))
    ranks = _sps.rankdata(t, axis=1, method="average")
    ties = 0.0
    for row in t:
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts.astype(float) ** 3 - counts))
    c = 1.0 - ties / (n * k * (k * k - 1))
    if c <= 0:
        return FriedmanResult(0.0, 1.0)
    r = ranks.sum(axis=0)
    stat = (12.0 / (n * k * (k + 1)) * float(np.sum(r**2)) - 3.0 * n * (k + 1)) / c
    stat = max(stat, 0.0)
    return FriedmanResult(float(stat), float(_sps.chi2.sf(stat, k - 1)))
