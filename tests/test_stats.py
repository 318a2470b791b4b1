"""Tests of treecert.evaluation.stats: wins/ties/losses, Wilcoxon, Friedman, average ranks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from treecert.errors import ConfigError, DataError
from treecert.evaluation.stats import (
    METRIC_DIRECTION,
    average_ranks,
    friedman,
    higher_is_better,
    wilcoxon_p,
    wins_ties_losses,
)


def test_wins_ties_losses_hand() -> None:
    a = [0.9, 0.8, 0.7, 0.70005, np.nan]
    b = [0.8, 0.85, 0.7, 0.7, 0.1]
    # diffs +.1 (win), -.05 (loss), 0 (tie), 5e-5 <= 1e-4 (tie); the NaN pair is ignored
    assert wins_ties_losses(a, b, higher_is_better=True) == (1, 2, 1)
    assert wins_ties_losses(a, b, higher_is_better=False) == (1, 2, 1)
    assert wins_ties_losses([0.2, 0.3], [0.3, 0.3], higher_is_better=False) == (1, 1, 0)
    res = wins_ties_losses([1.0, 2.0], [0.5, 0.0], higher_is_better=True, tol=0.5)
    assert (res.wins, res.ties, res.losses) == (1, 1, 0)  # |diff| == tol counts as a tie
    assert wins_ties_losses(a, b, higher_is_better=True, tol=0.0) == (2, 1, 1)
    with pytest.raises(ConfigError):
        wins_ties_losses(a, b, higher_is_better=True, tol=-1)
    with pytest.raises(DataError):
        wins_ties_losses([1, 2], [1], higher_is_better=True)


def test_wilcoxon_hand_and_edge_cases() -> None:
    # 5 positive differences: exact two-sided p = 2 / 2^5
    assert wilcoxon_p([1, 2, 3, 4, 5], [0, 0, 0, 0, 0]) == pytest.approx(0.0625)
    # zero differences are dropped (zero_method='wilcox')
    assert wilcoxon_p([0, 0, 1, 2, 3, 4, 5], [0] * 7) == pytest.approx(0.0625)
    assert wilcoxon_p([0.3, 0.4], [0.3, 0.4]) == 1.0  # all differences zero
    assert math.isnan(wilcoxon_p([], []))
    assert math.isnan(wilcoxon_p([np.nan], [0.1]))
    assert wilcoxon_p([1.0], [0.0]) == 1.0  # one difference: cannot be significant


def test_wilcoxon_matches_scipy() -> None:
    rng = np.random.default_rng(2)
    a = np.round(rng.uniform(0.7, 0.9, 48), 3)
    b = np.round(a + rng.normal(0.01, 0.02, 48), 3)
    ref = sps.wilcoxon(a, b, zero_method="wilcox", alternative="two-sided").pvalue
    assert wilcoxon_p(a, b) == pytest.approx(ref)
    assert wilcoxon_p(a, b) == pytest.approx(wilcoxon_p(b, a))


def test_average_ranks_hand() -> None:
    t = np.array([[0.9, 0.8, 0.8], [0.7, 0.9, 0.6]])
    np.testing.assert_allclose(average_ranks(t, higher_is_better=True), [1.5, 1.75, 2.75])
    np.testing.assert_allclose(average_ranks(t, higher_is_better=False), [2.5, 2.25, 1.25])
    # a row with a NaN is dropped entirely
    t2 = np.vstack([t, [np.nan, 0.0, 1.0]])
    np.testing.assert_allclose(average_ranks(t2, True), [1.5, 1.75, 2.75])
    assert np.isnan(average_ranks(np.full((1, 2), np.nan), True)).all()
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(t, columns=["tpce", "orig", "ens"])
    np.testing.assert_allclose(average_ranks(df, True), [1.5, 1.75, 2.75])


def test_friedman_hand() -> None:
    # same order on every data set: R = (3, 6, 9), chi2 = 12/(3*3*4)*126 - 36 = 6
    t = np.array([[1.0, 2.0, 3.0], [0.1, 0.5, 0.9], [5.0, 6.0, 7.0]])
    res = friedman(t)
    assert res.statistic == pytest.approx(6.0)
    assert res.pvalue == pytest.approx(math.exp(-3.0))  # chi2(2) survival = exp(-x / 2)
    stat, p = friedman(-t)  # direction does not matter
    assert (stat, p) == pytest.approx((6.0, math.exp(-3.0)))
    assert friedman(np.ones((4, 3))) == (0.0, 1.0)
    assert all(math.isnan(v) for v in friedman(t[:1]))
    with pytest.raises(ConfigError):
        friedman(t[:, :1])
    with pytest.raises(DataError):
        friedman([1.0, 2.0])


def test_friedman_matches_scipy_with_ties() -> None:
    rng = np.random.default_rng(8)
    for k in (3, 4, 6):
        t = np.round(rng.uniform(0, 1, (20, k)), 1)  # many ties within rows
        ref = sps.friedmanchisquare(*t.T)
        got = friedman(t)
        assert got.statistic == pytest.approx(ref.statistic)
        assert got.pvalue == pytest.approx(ref.pvalue)


def test_friedman_two_methods() -> None:
    # k = 2 without ties: chi2 = (W - L)^2 / N  (sign test statistic)
    a = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    b = np.array([0.8, 0.7, 0.6, 0.7, 0.4])
    res = friedman(np.column_stack([a, b]))
    assert res.statistic == pytest.approx((4 - 1) ** 2 / 5)


def test_metric_direction() -> None:
    higher = {"accuracy", "kappa", "auc", "auc_reliability", "auc_low", "auc_high",
              "reliable_accuracy", "reliable_share"}
    lower = {
        "brier",
        "brier_norm",
        "log_loss",
        "erc_deviation",
        "ece",
        "expected_loss",
        "brier_low",
        "brier_high",
        "log_loss_low",
        "log_loss_high",
        "leaves",
        "fit_seconds",
        "predict_seconds",
        "erc_slope",
    }
    assert set(METRIC_DIRECTION) == higher | lower
    assert all(METRIC_DIRECTION[m] for m in higher)
    assert not any(METRIC_DIRECTION[m] for m in lower)
    assert higher_is_better("auc") and not higher_is_better("brier")
    with pytest.raises(ConfigError):
        higher_is_better("f1")


def test_metric_direction_covers_compute_metrics() -> None:
    from treecert.evaluation.metric_table import compute_metrics

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 30)
    p1 = rng.uniform(size=30)
    p = np.column_stack([1 - p1, p1])
    out = compute_metrics(y, p, lower=p * 0.9, upper=p, loss=1 - np.eye(2))
    assert set(out) <= set(METRIC_DIRECTION)
