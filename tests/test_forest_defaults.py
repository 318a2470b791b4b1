"""``forest``'s own choices: Breiman's margin as the certainty (by hand), the leaves' α chosen
on out-of-bag log-loss, a missing nominal value as a value of its own, fully grown trees
where the run leaves the learner's defaults, and the stored form of all of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import make_dataset

from treecert import api
from treecert.data.loading import load_dataset
from treecert.errors import ConfigError
from treecert.methods import make_method
from treecert.methods.calibrated_bagging import (
    fit_temperature,
    margin_certainty,
    oob_log_loss,
)
from treecert.methods.ensemble import grow_bootstrap
from treecert.methods.forest import ALPHAS, missing_as_value
from treecert.tree.classifier import DecisionTree

DATA = Path(__file__).resolve().parent / "data"


def test_margin_certainty_by_hand():
    # 4 trees, 3 classes. Row 0: votes (3, 1, 0), means (0.6, 0.3, 0.1): margin 2 + 0.3.
    # Row 1: votes (2, 2, 0), means (0.45, 0.44, 0.11): 0 + 0.01. Row 2: the predicted class
    # (the mean's argmax, 1) has fewer votes than class 0: (1 - 2) + (0.5 - 0.4) = -0.9.
    votes = np.array([[3, 1, 0], [2, 2, 0], [2, 1, 1]])
    mean = np.array([[0.6, 0.3, 0.1], [0.45, 0.44, 0.11], [0.4, 0.5, 0.1]])
    pred = mean.argmax(axis=1)
    c = margin_certainty(votes, mean, pred, 4)
    np.testing.assert_allclose(c, [2.3 / 5, 0.01 / 5, -0.9 / 5])
    # one class: nothing to contest, the margin is the votes plus the mean
    np.testing.assert_allclose(margin_certainty(np.array([[4]]), np.array([[1.0]]),
                                                np.array([0]), 4), [1.0])


def test_oob_log_loss_by_hand():
    p = np.array([[0.75, 0.25], [0.5, 0.5]])
    y = np.array([0, 1])
    # t = 2: (0.9, 0.1) and (0.5, 0.5): -(ln 0.9 + ln 0.5) / 2; weights count like rows
    assert oob_log_loss(p, y, np.ones(2), 2.0) == pytest.approx(-(np.log(0.9) + np.log(0.5)) / 2)
    assert oob_log_loss(p, y, np.array([3.0, 1.0]), 1.0) == pytest.approx(
        -(3 * np.log(0.75) + np.log(0.5)) / 4)


def test_alpha_is_the_one_of_the_lowest_out_of_bag_log_loss():
    data = load_dataset(DATA / "glass.arff")
    forest = make_method("forest:trees=12,seed=5").fit(data)
    # the same trees, their out-of-bag forecasts under each α, compared by hand
    _, total, count = grow_bootstrap(data, 12, 5, forest.new_member, oob_alphas=ALPHAS)
    seen = count > 0
    losses = []
    for j in range(len(ALPHAS)):
        oob = total[j, seen] / count[seen, None]
        t = fit_temperature(oob, data.y[seen])
        losses.append(oob_log_loss(oob, data.y[seen], np.ones(seen.sum()), t))
    assert forest.alpha_ == ALPHAS[int(np.argmin(losses))]
    assert all(t.alpha == forest.alpha_ for t in forest.trees_)
    assert make_method("forest:trees=12,seed=5,alpha=0.5").fit(data).alpha_ == 0.5


def test_missing_nominal_values_become_a_value():
    data = make_dataset({"a": ["x", None, "y", "x", None, "y"], "b": [1.0, 2, None, 4, 5, 6]},
                        [0, 1, 0, 0, 1, 1])
    out = missing_as_value(data, np.array([0]))
    assert out.schema.attributes[0].values == ("x", "y", "?")
    np.testing.assert_array_equal(out.X[:, 0], [0, 2, 1, 0, 2, 1])
    assert np.isnan(out.X[2, 1])  # numeric attributes keep C4.5's routing
    assert np.isnan(data.X[1, 0])  # the input is not changed
    forest = make_method("forest:trees=5").fit(data)
    np.testing.assert_array_equal(forest.missing_value_, [0])
    assert make_method("forest:trees=5,missing=fractional").fit(data).missing_value_.size == 0
    with pytest.raises(ConfigError, match="unknown missing 'drop'"):
        make_method("forest:missing=drop").fit(data)


def test_missing_as_a_value_separates_what_fractional_routing_cannot():
    # class 1 exactly where a is missing: as a value, one test finds it
    a = ["x", "y"] * 10 + [None] * 10
    data = make_dataset({"a": a}, [0] * 20 + [1] * 10)
    test = data.subset(np.array([0, 20]))  # an x and a missing value
    p = make_method("forest:trees=10").fit(data).predict(test).proba
    assert p[0, 0] > 0.9 and p[1, 1] > 0.9
    q = make_method("forest:trees=10,missing=fractional").fit(data).predict(test).proba
    assert q[1, 1] < 0.5


def test_forest_grows_full_trees_unless_told_otherwise():
    assert make_method("forest").tree_params["min_leaf"] == 1.0
    assert make_method("forest").tree_params["max_features"] == "sqrt"
    assert make_method("forest", {"min_leaf": 2.0})._checked_tree({"min_leaf": 2.0})[
        "min_leaf"] == 1.0  # the learner's default: the forest's own
    assert make_method("forest", {"min_leaf": 5.0}).tree_params["min_leaf"] == 5.0
    assert make_method("forest:min_leaf=2", {"min_leaf": 2.0}).tree_params["min_leaf"] == 2.0
    assert make_method("forest", {"max_features": "all"}).tree_params["max_features"] == "all"
    # calibrated_bagging keeps the run's settings
    assert make_method("calibrated_bagging", {"min_leaf": 2.0}).tree_params["min_leaf"] == 2.0
    assert DecisionTree(**make_method("forest").tree_params).min_leaf == 1.0


def test_a_stored_forest_keeps_its_alpha_and_missing_values():
    data = load_dataset(DATA / "soybean.arff")  # 19 classes, missing nominal values
    model = api.train(data, method="forest:trees=6")
    state = model.calibration["state"]
    fitted = make_method("forest:trees=6").fit(data)
    assert state["leaf_alpha"] == fitted.alpha_
    assert state["missing_value"] == fitted.missing_value_.tolist() and state["missing_value"]
    loaded = api.load_model_json(api.model_json(model))
    out = api.predict(loaded, data)
    classes = data.schema.classes
    np.testing.assert_array_equal(out[[f"p_{c}" for c in classes]].to_numpy(),
                                  fitted.predict(data).proba)
