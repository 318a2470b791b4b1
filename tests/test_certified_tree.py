"""certified_tree: hand-computed smoothed leaves and certainty; the out-of-fold choice;
one tree for show and predict --explain; benchmarks/single_tree_quality.py exits 1 on
nothing to run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import make_dataset

from treecert import api
from treecert.errors import ConfigError
from treecert.methods import make_method
from treecert.methods.calibrated_bagging import fit_temperature
from treecert.methods.certified_tree import (
    M_GRID,
    SMOOTHINGS,
    fit_pool,
    node_estimates,
    pooled,
)
from treecert.tree.classifier import DecisionTree

ROOT = Path(__file__).resolve().parents[1]


def test_node_estimates_by_hand() -> None:
    # x = 1..7, classes 0,0,0,1,1,1,1: one split at 3.5, leaves (3, 0) and (0, 4).
    data = make_dataset({"x": [1, 2, 3, 4, 5, 6, 7]}, [0, 0, 0, 1, 1, 1, 1])
    tree = DecisionTree().fit(data).tree_
    left = int(tree.apply(np.array([[2.0]]))[0])
    root = np.array([4 / 9, 5 / 9])  # Laplace (n_c + 1) / (n + K) of (3, 4)
    np.testing.assert_allclose(node_estimates(tree, "m_branch", 2.0)[0], root)
    # m-branch: (n_c + m p_parent_c) / (n + m) = (3 + 8/9, 10/9) / 5
    np.testing.assert_allclose(node_estimates(tree, "m_branch", 2.0)[left],
                               [(3 + 8 / 9) / 5, (10 / 9) / 5])
    # m-estimate: the class frequencies (3/7, 4/7) as the prior
    np.testing.assert_allclose(node_estimates(tree, "m_estimate", 2.0)[left],
                               [(3 + 6 / 7) / 5, (8 / 7) / 5])


def test_probabilities_and_certainty_by_hand() -> None:
    # Six rows (< 10: no out-of-fold choice): m-estimate, m = 2, temperature 1. The tree
    # splits at 3.5 into (3, 0) and (0, 3); prior (1/2, 1/2): p = (3 + 1) / (3 + 2) = 0.8.
    train = make_dataset({"x": [1, 2, 3, 4, 5, 6]}, [0, 0, 0, 1, 1, 1])
    test = make_dataset({"x": [2, 5]}, [0, 1])
    method = make_method("certified_tree").fit(train)
    assert (method.smoothing_, method.m_, method.weights_) == ("m_estimate", 2.0, (1.0, 0.0))
    pred = method.predict(test)
    np.testing.assert_allclose(pred.proba, [[0.8, 0.2], [0.2, 0.8]])
    # TPCE (Eq. 1) of the predicted class, x = 2: with (2, 0) the left leaf is (4, 0),
    # Laplace 5/6; with (2, 1) it is (3, 1), 4/6 for class 0; the mean is 0.75. The
    # certainty is the geometric mean of 0.8 and 0.75.
    np.testing.assert_allclose(pred.certainty, [np.sqrt(0.8 * 0.75)] * 2)
    tpce = make_method("tpce").fit(train).predict(test)
    np.testing.assert_allclose(tpce.proba[[0, 1], [0, 1]], [0.75, 0.75])
    np.testing.assert_array_equal(pred.columns["tpce_disagree"], [0, 0])


def _noisy(n: int = 80, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).round(2)
    y = ((x[:, 0] + 0.8 * rng.normal(size=n)) > 0).astype(int)
    return make_dataset({"a": x[:, 0].tolist(), "b": x[:, 1].tolist()}, y.tolist())


def test_the_out_of_fold_choice_is_what_predicts() -> None:
    data = _noisy()
    method = make_method("certified_tree:temperature=1").fit(data)
    assert method.smoothing_ in SMOOTHINGS and method.m_ in M_GRID
    assert method.weights_ == (1.0, 0.0)
    fixed = make_method(f"certified_tree:smoothing={method.smoothing_},temperature=1").fit(data)
    assert fixed.m_ in M_GRID
    if method.smoothing_ == "m_estimate":  # the same as the leaf method with that m
        leaf = DecisionTree(leaf="m_estimate", m=method.m_).fit(data).predict_proba(data)
        np.testing.assert_allclose(method.predict(data).proba, leaf)
    cal = make_method("certified_tree").fit(data)
    assert all(0.0 <= w <= 10.0 for w in cal.weights_)
    again = make_method("certified_tree").fit(data)
    assert (again.smoothing_, again.m_, again.weights_) == (
        cal.smoothing_, cal.m_, cal.weights_)


def test_pool_without_tpce_information_is_the_temperature() -> None:
    # A uniform TPCE forecast adds a constant to every class's log: the pool's a is then
    # the leaves' own temperature.
    rng = np.random.default_rng(1)
    leaf = rng.dirichlet([1.0, 1.0, 1.0], size=60)
    y = np.array([rng.choice(3, p=p) for p in leaf])
    w = np.ones(60)
    a, _ = fit_pool(leaf, np.full((60, 3), 1 / 3), y, w)
    assert a == pytest.approx(fit_temperature(leaf, y, w), rel=1e-4)
    np.testing.assert_allclose(pooled(leaf, np.full((60, 3), 1 / 3), 1.0, 5.0), leaf)


@pytest.mark.parametrize("spec", ["certified_tree:smoothing=nope", "certified_tree:cv=1",
                                  "certified_tree:temperature=-1",
                                  "certified_tree:pool=mean"])
def test_bad_options_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError):
        make_method(spec).fit(_noisy(20))


def test_one_tree_for_show_and_explain() -> None:
    data = _noisy()
    model = api.train(data)
    runner = make_method("certified_tree").adopt(model)
    assert runner.model_.tree_ is model.estimator.tree_  # the tree `show` draws
    out = api.predict(model, data, method="certified_tree", explain=True)
    for col in ("leaf", "leaf_share", "path", "certainty", "tpce_p_no", "tpce_p_yes",
                "leaf_p_no", "tpce_if_no_p_yes"):
        assert col in out.columns, col
    tp, p = out[["tpce_p_no", "tpce_p_yes"]].to_numpy(), out[["p_no", "p_yes"]].to_numpy()
    yes = out["predicted"] == "yes"
    picked = np.where(yes, tp[:, 1] * p[:, 1], tp[:, 0] * p[:, 0])
    np.testing.assert_allclose(out["certainty"].to_numpy(), np.sqrt(picked))


def test_benchmark_script_exits_non_zero_when_it_ran_nothing() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks/single_tree_quality.py"),
                           "--datasets"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, proc.stdout
    assert "|" not in proc.stdout
