"""Tests of the metrics (treecert.evaluation.point_metrics, costs, reliability,
interval_metrics, metric_table): hand-computed cases, scikit-learn parity, brute-force checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.errors import ConfigError, DataError
from treecert.evaluation.costs import expected_loss, min_expected_loss_predictions
from treecert.evaluation.interval_metrics import (
    auc_bounds,
    auc_bounds_endpoints,
    brier_bounds,
    log_loss_bounds,
)
from treecert.evaluation.metric_table import compute_metrics
from treecert.evaluation.point_metrics import (
    accuracy,
    auc,
    bias_variance,
    brier,
    brier_norm,
    log_loss,
    predictions,
    roc_auc,
)
from treecert.evaluation.reliability import (
    auc_reliability,
    ece,
    erc_deviation,
    reliability_curve,
)

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _pairs_auc(scores: np.ndarray, pos: np.ndarray) -> float:
    """O(n^2) definition: P(s_pos > s_neg) + ½ P(s_pos = s_neg)."""
    sp, sn = scores[pos], scores[~pos]
    if sp.size == 0 or sn.size == 0:
        return float("nan")
    d = sp[:, None] - sn[None, :]
    return float(((d > 0) + 0.5 * (d == 0)).mean())


def _random_proba(rng: np.random.Generator, n: int, k: int, decimals: int | None = None):
    p = rng.dirichlet(np.ones(k), size=n)
    if decimals is not None:
        p = np.round(p, decimals)
        p[:, -1] = 1.0 - p[:, :-1].sum(axis=1)
        p = np.clip(p, 0, 1)
        p /= p.sum(axis=1, keepdims=True)
    return p


# --------------------------------------------------------------------------------------------
# hand-computed point metrics
# --------------------------------------------------------------------------------------------

Y3 = np.array([0, 1, 1])
P3 = np.array([[0.8, 0.2], [0.4, 0.6], [0.7, 0.3]])


def test_hand_accuracy_brier_logloss() -> None:
    assert accuracy(Y3, P3) == pytest.approx(2 / 3)
    # (0.04 + 0.04) + (0.16 + 0.16) + (0.49 + 0.49) = 1.38
    assert brier(Y3, P3) == pytest.approx(1.38 / 3)
    assert brier_norm(Y3, P3) == pytest.approx(0.69 / 3)
    assert log_loss(Y3, P3) == pytest.approx(-(math.log(0.8) + math.log(0.6) + math.log(0.3)) / 3)


def test_argmax_ties_go_to_lowest_index() -> None:
    p = np.array([[0.5, 0.5], [0.4, 0.6]])
    assert predictions(np.array([[0.5, 0.5]])).tolist() == [0]
    assert predictions(np.array([[0.2, 0.4, 0.4]])).tolist() == [1]
    assert accuracy([0, 1], p) == 1.0
    assert accuracy([1], [[0.5, 0.5]]) == 0.0


def test_log_loss_clips_zero_probability() -> None:
    assert log_loss([0], [[0.0, 1.0]]) == pytest.approx(-math.log(1e-15))
    assert log_loss([1], [[0.0, 1.0]]) == 0.0


def test_roc_auc_hand_and_degenerate() -> None:
    assert roc_auc([0.2, 0.6, 0.3], [False, True, True]) == 1.0
    assert roc_auc([0.5, 0.5], [True, False]) == 0.5
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True]) == 0.75
    assert math.isnan(roc_auc([0.1, 0.2], [True, True]))
    assert math.isnan(roc_auc([], []))
    with pytest.raises(DataError):
        roc_auc([0.1, np.nan], [True, False])


def test_auc_macro_skips_absent_classes() -> None:
    y = np.array([0, 0, 1, 1])
    p = np.array([[0.6, 0.3, 0.1], [0.5, 0.1, 0.4], [0.2, 0.7, 0.1], [0.4, 0.2, 0.4]])
    a0 = _pairs_auc(p[:, 0], y == 0)
    a1 = _pairs_auc(p[:, 1], y == 1)
    assert auc(y, p) == pytest.approx((a0 + a1) / 2)  # class 2 absent: skipped
    assert math.isnan(auc([1, 1], [[0.2, 0.8], [0.4, 0.6]]))


def test_auc_reliability_hand() -> None:
    y = np.array([0, 1, 1, 0])
    p = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.55, 0.45]])
    # correct: T, T, F, T; certainty = max prob: .9 .7 .6 .55 -> 2 of 3 correct ones beat .6
    assert auc_reliability(y, p) == pytest.approx(2 / 3)
    assert auc_reliability(y, p, certainty=[0.1, 0.1, 0.0, 0.2]) == 1.0
    assert math.isnan(auc_reliability([0, 1], [[0.9, 0.1], [0.2, 0.8]]))


def test_ece_hand() -> None:
    y = np.array([0, 1, 1, 0])
    p = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.55, 0.45]])
    # bins (right-closed): .9 -> (.8,.9]; .7 -> (.6,.7]; .6 and .55 -> (.5,.6]
    # |1 - .9| + |1 - .7| + |1 - (.6 + .55)| = .1 + .3 + .15
    assert ece(y, p) == pytest.approx(0.55 / 4)
    assert ece([0], [[1.0, 0.0]]) == 0.0


def test_expected_loss_hand() -> None:
    loss = np.array([[0.0, 1.0], [10.0, 0.0]])  # L[true, pred]: missing class 1 costs 10
    p = np.array([[0.8, 0.2], [0.95, 0.05], [0.9, 0.1]])
    # expected cost of predicting 0 = 10 p1, of predicting 1 = p0
    # row 1: 2 vs .8 -> 1; row 2: .5 vs .95 -> 0; row 3: 1 vs .9 -> 1
    assert min_expected_loss_predictions(p, loss).tolist() == [1, 0, 1]
    assert expected_loss([0, 1, 1], p, loss) == pytest.approx((1.0 + 10.0 + 0.0) / 3)
    # 0/1 loss reproduces the error rate
    zero_one = 1 - np.eye(2)
    assert expected_loss(Y3, P3, zero_one) == pytest.approx(1 - accuracy(Y3, P3))
    with pytest.raises(ConfigError):
        expected_loss(Y3, P3, np.zeros((3, 3)))
    with pytest.raises(ConfigError):
        min_expected_loss_predictions(P3, [[0, np.nan], [1, 0]])


def test_bias_variance_hand_and_identity() -> None:
    res = bias_variance([0], [[[1.0, 0.0]], [[0.5, 0.5]]])
    assert res["bias2"] == pytest.approx(0.0625)
    assert res["variance"] == pytest.approx(0.0625)
    assert res["noise"] == 0.0
    assert res["mse_norm"] == pytest.approx(0.125)
    assert res["mse"] == pytest.approx(0.25)
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 40)
    runs = np.stack([_random_proba(rng, 40, 3) for _ in range(7)])
    r = bias_variance(y, runs)
    assert r["bias2"] + r["variance"] + r["noise"] == pytest.approx(r["mse_norm"])
    assert r["mse"] == pytest.approx(np.mean([brier(y, runs[i]) for i in range(7)]))
    # identical runs: no variance
    assert bias_variance(y, np.stack([runs[0]] * 3))["variance"] == pytest.approx(0.0)
    with pytest.raises(DataError):
        bias_variance(y, runs[0])


# --------------------------------------------------------------------------------------------
# ERC deviation / reliability curve
# --------------------------------------------------------------------------------------------


def test_erc_deviation_hand_equal_width() -> None:
    y = np.array([1, 1, 0, 0])
    p1 = np.array([0.85, 0.95, 0.15, 0.82])
    p = np.column_stack([1 - p1, p1])
    # class 1: bin [.8,.9): {.85 (y=1), .82 (y=0)} nu=.5 |.5 - .835| ; [.9,1]: nu=.25 |1-.95|;
    # [.1,.2): nu=.25 |0 - .15|  -> .2175; class 0 is symmetric -> .2175
    assert erc_deviation(y, p) == pytest.approx(0.435)
    rc = reliability_curve(y, p, 1)
    np.testing.assert_allclose(rc.mean_forecast, [0.15, 0.835, 0.95])
    np.testing.assert_allclose(rc.observed_frequency, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(rc.weight, [0.25, 0.5, 0.25])
    mean_forecast, observed, weight = rc  # plain tuple unpacking works
    assert mean_forecast is rc.mean_forecast and observed is rc.observed_frequency
    assert weight.sum() == pytest.approx(1.0)


def test_erc_equal_width_bins_are_left_closed() -> None:
    # [0.3, 0.4) holds both 0.3 and 0.35 (Lindsay & Cox: [0, 1/k), ..., [(k-1)/k, 1])
    p = np.array([[0.7, 0.3], [0.65, 0.35], [0.0, 1.0]])
    rc = reliability_curve([0, 1, 1], p, 1)
    np.testing.assert_allclose(rc.mean_forecast, [0.325, 1.0])
    np.testing.assert_allclose(rc.weight, [2 / 3, 1 / 3])


def test_erc_deviation_mdl_hand() -> None:
    p1 = np.arange(1, 11) / 10
    y = (p1 > 0.5).astype(int)
    p = np.column_stack([1 - p1, p1])
    # MDL cuts p1 at .55 (and p0 at .45): bins {.1..0.5} (mean .3, rho 0) and {.6..1} (mean .8,
    # rho 1), each nu = .5 -> .5*.3 + .5*.2 = .25 per class
    assert erc_deviation(y, p, bins="mdl") == pytest.approx(0.5)
    assert erc_deviation(y, p, bins="mdl", mdl_target="indicator") == pytest.approx(0.5)
    rc = reliability_curve(y, p, 1, bins="mdl")
    np.testing.assert_allclose(rc.mean_forecast, [0.3, 0.8])
    np.testing.assert_allclose(rc.observed_frequency, [0.0, 1.0])


def test_erc_perfectly_calibrated_is_zero_and_bounded() -> None:
    # within each bin the mean forecast equals the observed frequency
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0])
    p1 = np.array([0.25] * 4 + [0.75] * 4)
    p = np.column_stack([1 - p1, p1])
    assert erc_deviation(y, p) == pytest.approx(0.0)
    rng = np.random.default_rng(0)
    for k in (2, 3, 5):
        yy = rng.integers(0, k, 50)
        pp = _random_proba(rng, 50, k)
        for b in ("equal_width", "mdl"):
            assert 0.0 <= erc_deviation(yy, pp, bins=b) <= 2.0
    # worst case: confident and always wrong -> 2
    assert erc_deviation([0, 1], [[0.0, 1.0], [1.0, 0.0]]) == pytest.approx(2.0)


def test_reliability_curve_matches_sklearn_calibration_curve() -> None:
    pytest.importorskip("sklearn")
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(1)
    p1 = rng.uniform(0, 1, 500)
    p1 = p1[np.abs(p1 * 10 - np.round(p1 * 10)) > 1e-9]  # no value on a bin boundary
    y = (rng.uniform(0, 1, p1.size) < p1**1.5).astype(int)
    rc = reliability_curve(y, np.column_stack([1 - p1, p1]), 1, n_bins=10)
    prob_true, prob_pred = calibration_curve(y, p1, n_bins=10)
    np.testing.assert_allclose(rc.observed_frequency, prob_true)
    np.testing.assert_allclose(rc.mean_forecast, prob_pred)


def test_erc_and_curve_options_are_checked() -> None:
    with pytest.raises(ConfigError):
        erc_deviation(Y3, P3, bins="quantile")
    with pytest.raises(ConfigError):
        erc_deviation(Y3, P3, n_bins=0)
    with pytest.raises(ConfigError):
        reliability_curve(Y3, P3, 2)
    with pytest.raises(ConfigError):
        erc_deviation(Y3, P3, bins="mdl", mdl_target="other")


# --------------------------------------------------------------------------------------------
# scikit-learn parity
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 6])
def test_point_metrics_match_sklearn(k: int) -> None:
    pytest.importorskip("sklearn")
    from sklearn import metrics as skm

    rng = np.random.default_rng(10 + k)
    n = 200
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    p = _random_proba(rng, n, k, decimals=2)  # rounded: plenty of ties
    labels = list(range(k))
    assert accuracy(y, p) == pytest.approx(skm.accuracy_score(y, p.argmax(axis=1)))
    assert brier(y, p) == pytest.approx(
        skm.brier_score_loss(y, p, labels=labels, scale_by_half=False)
    )
    assert brier_norm(y, p) == pytest.approx(
        skm.brier_score_loss(y, p, labels=labels, scale_by_half=True)
    )
    pc = np.clip(p, 1e-15, 1)
    assert log_loss(y, p) == pytest.approx(
        skm.log_loss(y, pc / pc.sum(axis=1, keepdims=True), labels=labels), rel=1e-9, abs=1e-12
    )
    if k == 2:
        ref = skm.roc_auc_score(y, p[:, 1])
    else:
        ref = skm.roc_auc_score(y, p, multi_class="ovr", average="macro", labels=labels)
    assert auc(y, p) == pytest.approx(ref)
    correct = p.argmax(axis=1) == y
    assert auc_reliability(y, p) == pytest.approx(skm.roc_auc_score(correct, p.max(axis=1)))


def test_roc_auc_matches_sklearn_large() -> None:
    pytest.importorskip("sklearn")
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(5)
    s = np.round(rng.normal(size=20000), 2)
    pos = rng.uniform(size=s.size) < 1 / (1 + np.exp(-s))
    assert roc_auc(s, pos) == pytest.approx(roc_auc_score(pos, s), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.booleans()), min_size=0, max_size=40),
)
def test_rank_auc_equals_pair_counting(data: list[tuple[int, bool]]) -> None:
    s = np.array([d[0] for d in data], dtype=float) / 3.0
    pos = np.array([d[1] for d in data], dtype=bool)
    got, ref = roc_auc(s, pos), _pairs_auc(s, pos)
    if math.isnan(ref):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(ref, abs=1e-12)


# --------------------------------------------------------------------------------------------
# interval-valued metrics: exact bounds vs brute force
# --------------------------------------------------------------------------------------------


def _intervals(draw, n: int, k: int):
    """lower <= upper per entry, on a coarse grid so that ties between instances happen."""
    vals = st.integers(0, 8)
    lo = np.zeros((n, k))
    hi = np.zeros((n, k))
    for i in range(n):
        for c in range(k):
            a, b = draw(vals), draw(vals)
            lo[i, c], hi[i, c] = min(a, b) / 8, max(a, b) / 8
    return lo, hi


@st.composite
def binary_interval_cases(draw):
    n = draw(st.integers(2, 4))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    vals = st.integers(0, 8)
    lo1, hi1 = np.zeros(n), np.zeros(n)
    for i in range(n):
        a, b = draw(vals), draw(vals)
        lo1[i], hi1[i] = min(a, b) / 8, max(a, b) / 8
    # consistent binary intervals: p0 = 1 - p1
    lower = np.column_stack([1 - hi1, lo1])
    upper = np.column_stack([1 - lo1, hi1])
    return y, lower, upper


@settings(max_examples=60, deadline=None)
@given(binary_interval_cases())
def test_binary_bounds_equal_joint_brute_force(case) -> None:
    """EB paper's definition on the simplex: min/max over p1_i in [l_i, u_i] jointly."""
    y, lower, upper = case
    n = y.shape[0]
    lo1, hi1 = lower[:, 1], upper[:, 1]
    # per-instance candidate values: a fine grid plus every endpoint of every instance
    endpoints = np.concatenate([lo1, hi1])
    grids = []
    for i in range(n):
        g = np.concatenate([np.linspace(lo1[i], hi1[i], 5), endpoints])
        grids.append(np.unique(g[(g >= lo1[i]) & (g <= hi1[i])]))
    p1 = np.array(list(itertools.product(*grids)))  # (C, n): every joint choice
    t = y.astype(float)
    briers = (2 * (p1 - t) ** 2).mean(axis=1)  # (p0 - y0)^2 + (p1 - y1)^2 with p0 = 1 - p1
    p_true = np.where(y == 1, p1, 1 - p1)
    logs = (-np.log(np.clip(p_true, 1e-15, 1))).mean(axis=1)
    pos = y == 1
    d = p1[:, pos][:, :, None] - p1[:, ~pos][:, None, :]
    aucs = ((d > 0) + 0.5 * (d == 0)).mean(axis=(1, 2)) if pos.any() and (~pos).any() else None
    b_lo, b_hi = brier_bounds(y, lower, upper)
    assert b_lo == pytest.approx(briers.min(), abs=1e-12)
    assert b_hi == pytest.approx(briers.max(), abs=1e-12)
    l_lo, l_hi = log_loss_bounds(y, lower, upper)
    assert l_lo == pytest.approx(logs.min(), abs=1e-9)
    assert l_hi == pytest.approx(logs.max(), abs=1e-9)
    a_lo, a_hi = auc_bounds(y, lower, upper)
    if len(set(y.tolist())) < 2:
        assert math.isnan(a_lo) and math.isnan(a_hi)
    else:
        assert a_lo == pytest.approx(aucs.min(), abs=1e-12)
        assert a_hi == pytest.approx(aucs.max(), abs=1e-12)
        e_lo, e_hi = auc_bounds_endpoints(y, lower, upper)
        assert a_lo - 1e-12 <= e_lo <= e_hi <= a_hi + 1e-12


@st.composite
def multiclass_interval_cases(draw):
    n = draw(st.integers(2, 3))
    k = 3
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    lower, upper = _intervals(draw, n, k)
    return y, lower, upper


@settings(max_examples=40, deadline=None)
@given(multiclass_interval_cases())
def test_multiclass_bounds_equal_box_brute_force(case) -> None:
    """Box semantics: every p_ic chosen independently in [lower_ic, upper_ic]."""
    y, lower, upper = case
    n, k = lower.shape
    # Brier / log-loss: the mean is separable over instances -> brute force per instance on a
    # grid of 5 points per class probability, all K probabilities jointly
    b_lo = b_hi = l_lo = l_hi = 0.0
    for i in range(n):
        grids = [np.linspace(lower[i, c], upper[i, c], 5) for c in range(k)]
        vals = np.array(list(itertools.product(*grids)))  # (5^k, k)
        t = np.eye(k)[y[i]]
        s = ((vals - t) ** 2).sum(axis=1)
        ll = -np.log(np.clip(vals[:, y[i]], 1e-15, 1))
        b_lo, b_hi = b_lo + s.min() / n, b_hi + s.max() / n
        l_lo, l_hi = l_lo + ll.min() / n, l_hi + ll.max() / n
    got_b = brier_bounds(y, lower, upper)
    got_l = log_loss_bounds(y, lower, upper)
    assert got_b[0] == pytest.approx(b_lo, abs=1e-12)
    assert got_b[1] == pytest.approx(b_hi, abs=1e-12)
    assert got_l[0] == pytest.approx(l_lo, abs=1e-9)
    assert got_l[1] == pytest.approx(l_hi, abs=1e-9)
    # AUC: all entries jointly over {lower, midpoint, upper} (3^(n k) <= 19683 score matrices)
    choices = np.stack([lower, (lower + upper) / 2, upper])  # (3, n, k)
    combos = np.array(list(itertools.product(range(3), repeat=n * k))).reshape(-1, n, k)
    scores = np.take_along_axis(choices[None], combos[:, None], axis=1)[:, 0]  # (C, n, k)
    per_class = []
    for c in range(k):
        pos = y == c
        if not pos.any() or pos.all():
            continue
        d = scores[:, pos, c][:, :, None] - scores[:, ~pos, c][:, None, :]
        per_class.append(((d > 0) + 0.5 * (d == 0)).mean(axis=(1, 2)))
    got = auc_bounds(y, lower, upper)
    if not per_class:
        assert math.isnan(got[0]) and math.isnan(got[1])
        return
    macro = np.mean(per_class, axis=0)
    assert got[0] == pytest.approx(macro.min(), abs=1e-12)
    assert got[1] == pytest.approx(macro.max(), abs=1e-12)


def test_auc_bounds_hand_and_endpoints_variant() -> None:
    # two positives, two negatives, overlapping intervals on p1
    y = np.array([1, 1, 0, 0])
    lo1 = np.array([0.4, 0.7, 0.2, 0.5])
    hi1 = np.array([0.6, 0.9, 0.45, 0.8])
    lower = np.column_stack([1 - hi1, lo1])
    upper = np.column_stack([1 - lo1, hi1])
    # min: positives at .4 .7, negatives at .45 .8 -> pairs (.4<.45,.4<.8,.7>.45,.7<.8) = 1/4
    # max: positives at .6 .9, negatives at .2 .5 -> all 4 pairs won = 1
    assert auc_bounds(y, lower, upper) == (0.25, 1.0)
    # paper-code variant: AUC(lower vector) = AUC([.4,.7 | .2,.5]) = 3/4,
    # AUC(upper vector) = AUC([.6,.9 | .45,.8]) = 3/4
    assert auc_bounds_endpoints(y, lower, upper) == (0.75, 0.75)


def test_bounds_contain_point_metrics() -> None:
    rng = np.random.default_rng(4)
    for k in (2, 4):
        y = rng.integers(0, k, 60)
        p = _random_proba(rng, 60, k)
        w = rng.uniform(0, 0.2, (60, k))
        lower, upper = np.clip(p - w, 0, 1), np.clip(p + w, 0, 1)
        for f, g in ((brier, brier_bounds), (log_loss, log_loss_bounds), (auc, auc_bounds)):
            lo, hi = g(y, lower, upper)
            assert lo - 1e-12 <= f(y, p) <= hi + 1e-12
        # degenerate intervals give the point value
        assert brier_bounds(y, p, p) == pytest.approx((brier(y, p),) * 2)
        assert auc_bounds(y, p, p) == pytest.approx((auc(y, p),) * 2)


def test_bounds_input_errors() -> None:
    with pytest.raises(DataError):
        brier_bounds([0], [[0.6, 0.4]], [[0.5, 0.5]])  # lower > upper
    with pytest.raises(DataError):
        log_loss_bounds([0], [[0.1, 0.1]], [[0.2, 0.2, 0.2]])
    with pytest.raises(DataError):
        auc_bounds([0, 3], [[0.1, 0.1]] * 2, [[0.2, 0.2]] * 2)


# --------------------------------------------------------------------------------------------
# input validation and compute_metrics
# --------------------------------------------------------------------------------------------


def test_input_validation() -> None:
    with pytest.raises(DataError):
        brier([0, 1], [[0.5, 0.5]])  # length mismatch
    with pytest.raises(DataError):
        brier([0, 2], [[0.5, 0.5], [0.5, 0.5]])  # class code out of range
    with pytest.raises(DataError):
        brier([0], [[0.5, 0.6]])  # row does not sum to 1
    with pytest.raises(DataError):
        brier([0], [0.5, 0.5])  # not 2-D
    with pytest.raises(DataError):
        log_loss([0.5], [[0.5, 0.5]])  # non-integer class code
    with pytest.raises(DataError):
        accuracy([0], [[np.nan, 1.0]])
    assert math.isnan(brier(np.array([], dtype=int), np.zeros((0, 2))))


def test_compute_metrics_keys_and_values() -> None:
    rng = np.random.default_rng(9)
    y = rng.integers(0, 3, 80)
    p = _random_proba(rng, 80, 3)
    base = compute_metrics(y, p)
    assert list(base) == [
        "accuracy",
        "kappa",
        "brier",
        "brier_norm",
        "log_loss",
        "auc",
        "auc_reliability",
        "erc_deviation",
        "ece",
        "erc_slope",
    ]
    assert all(isinstance(v, float) for v in base.values())
    assert base["brier"] == pytest.approx(brier(y, p))
    assert base["brier_norm"] == pytest.approx(base["brier"] / 2)
    assert base["erc_deviation"] == pytest.approx(erc_deviation(y, p))
    loss = 1 - np.eye(3)
    full = compute_metrics(
        y,
        p,
        lower=p * 0.9,
        upper=np.minimum(p * 1.1, 1),
        loss=loss,
        bins="mdl",
        certainty=rng.uniform(size=80),
    )
    assert set(full) - set(base) == {
        "expected_loss",
        "brier_low",
        "brier_high",
        "log_loss_low",
        "log_loss_high",
        "auc_low",
        "auc_high",
    }
    assert full["expected_loss"] == pytest.approx(1 - full["accuracy"])
    assert full["erc_deviation"] == pytest.approx(erc_deviation(y, p, bins="mdl"))
    assert full["brier_low"] <= full["brier"] <= full["brier_high"]
    with pytest.raises(ConfigError):
        compute_metrics(y, p, lower=p)
    with pytest.raises(ConfigError):
        compute_metrics(y, p, bins="nope")
