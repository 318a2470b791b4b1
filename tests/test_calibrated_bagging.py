"""calibrated_bagging: the temperature fit, sharpening and vote certainty by hand, and the
method against plain bagging with the same bootstrap samples."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_dataset

from treecert.errors import ConfigError
from treecert.methods import make_method
from treecert.methods.calibrated_bagging import (
    T_MAX,
    T_MIN,
    fit_temperature,
    sharpen,
    vote_certainty,
)


def test_sharpen_by_hand():
    # (3/4, 1/4) at t = 2: (9, 1) / 10; t = 1 leaves it alone
    got = sharpen(np.array([[0.75, 0.25], [0.5, 0.5]]), 2.0)
    np.testing.assert_allclose(got, [[0.9, 0.1], [0.5, 0.5]])
    p = np.array([[0.2, 0.3, 0.5]])
    np.testing.assert_allclose(sharpen(p, 1.0), p)


def test_temperature_by_hand():
    # forecasts (3/4, 1/4) but class 0 nine times in ten: the log-loss is least where
    # 3^t / (3^t + 1) = 0.9, i.e. t = ln 9 / ln 3 = 2
    proba = np.tile([0.75, 0.25], (10, 1))
    y = np.array([0] * 9 + [1])
    assert fit_temperature(proba, y) == pytest.approx(2.0, abs=1e-9)
    # already calibrated: t = 1; weights count like repeated rows
    y4 = np.array([0, 0, 0, 1])
    assert fit_temperature(np.tile([0.75, 0.25], (4, 1)), y4) == pytest.approx(1.0, abs=1e-9)
    w = np.array([9.0, 1.0])
    assert fit_temperature(np.tile([0.75, 0.25], (2, 1)), np.array([0, 1]), w) == \
        pytest.approx(2.0, abs=1e-9)


def test_temperature_is_clamped():
    proba = np.tile([0.75, 0.25], (4, 1))
    assert fit_temperature(proba, np.zeros(4, np.int64)) == T_MAX  # always right: sharpen
    assert fit_temperature(proba, np.array([0, 1, 0, 1])) == T_MIN  # a coin: flatten


def test_vote_certainty_orders_by_votes_then_probability():
    c = vote_certainty(np.array([3, 2, 3, 0]), np.array([0.6, 0.99, 0.7, 0.5]), 4)
    np.testing.assert_allclose(c, [3.6 / 5, 2.99 / 5, 3.7 / 5, 0.5 / 5])
    assert list(np.argsort(c)) == [3, 1, 0, 2]


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40).round(2)
    z = rng.normal(size=40).round(2)
    y = (x + 0.5 * rng.normal(size=40) > 0).astype(int)
    return make_dataset({"x": x.tolist(), "z": z.tolist()}, y.tolist())


def test_without_temperature_it_is_bagging_with_the_same_samples():
    data = _data()
    train, test = data.subset(np.arange(30)), data.subset(np.arange(30, 40))
    plain = make_method("bagging:trees=5,seed=3").fit(train).predict(test)
    ours = make_method("calibrated_bagging:trees=5,seed=3,temperature=1").fit(train)
    pred = ours.predict(test)
    np.testing.assert_allclose(pred.proba, plain.proba)
    votes = pred.columns["vote_share"] * 5
    np.testing.assert_allclose(votes, np.round(votes))
    top = pred.proba.max(axis=1)
    np.testing.assert_allclose(pred.certainty, (votes + top) / 6)
    proba_cert = make_method("calibrated_bagging:trees=5,seed=3,temperature=1,"
                             "certainty=proba").fit(train).predict(test)
    np.testing.assert_allclose(proba_cert.certainty, top)
    # with a temperature the probabilities change, the certainty does not (the tie-break is
    # the trees' mean before the temperature) and neither does the prediction
    sharp = make_method("calibrated_bagging:trees=5,seed=3,temperature=3").fit(train)
    pred3 = sharp.predict(test)
    np.testing.assert_allclose(pred3.proba, sharpen(plain.proba, 3.0))
    np.testing.assert_allclose(pred3.certainty, pred.certainty)


def test_temperature_is_fitted_on_out_of_bag_forecasts():
    data = _data()
    method = make_method("calibrated_bagging:trees=7,seed=2").fit(data)
    # the same trees' out-of-bag forecasts, recomputed from the bootstrap draws
    rng = np.random.RandomState(2)
    n = data.n_samples
    total, count = np.zeros((n, 2)), np.zeros(n)
    for tree in method.trees_:
        out = np.bincount(rng.randint(0, n, n), minlength=n) == 0
        total[out] += tree.predict_proba(data.X[out])
        count[out] += 1
    seen = count > 0
    t = fit_temperature(total[seen] / count[seen, None], data.y[seen])
    assert method.temperature_ == pytest.approx(t, rel=1e-12)
    fixed = make_method("calibrated_bagging:trees=7,seed=2,temperature=1.5").fit(data)
    assert fixed.temperature_ == 1.5


@pytest.mark.parametrize(("spec", "message"), [
    ("calibrated_bagging:trees=0", "trees must be at least 1"),
    ("calibrated_bagging:alpha=0", "alpha must be positive"),
    ("calibrated_bagging:certainty=max", "unknown certainty 'max'. Choose vote, margin or proba"),
    ("calibrated_bagging:temperature=hot", "temperature must be oob or a positive number"),
])
def test_bad_options_are_user_errors(spec, message):
    with pytest.raises(ConfigError, match=message):
        make_method(spec).fit(_data())
