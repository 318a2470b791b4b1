"""The ensembles grow their trees together (``treecert.tree.batch_grow``): every tree must be
the one its own ``DecisionTree.fit`` grows on its bootstrap sample, bit for bit, in every
setting an ensemble member can take."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import random_datasets

from treecert.data.loading import load_dataset
from treecert.errors import DataError
from treecert.methods import make_method
from treecert.methods.ensemble import bootstrap_counts, encode_trees, grow_bootstrap, tree_seed
from treecert.tree.classifier import DecisionTree

REPO = Path(__file__).resolve().parents[1]
_ARRAYS = ("feature", "threshold", "children_ptr", "children", "value_branch_ptr",
           "value_branch", "counts")


def one_by_one(labelled, n_trees: int, seed: int, new_tree):
    """The trees grown one at a time, each by its own ``fit`` (the ensembles' former
    grower): the reference."""
    n = labelled.n_samples
    rng = np.random.RandomState(seed)
    trees = []
    for i in range(n_trees):
        draws = bootstrap_counts(rng, n)
        keep = np.flatnonzero(draws)
        sample = labelled.subset(keep)
        sample.weights = sample.weights * draws[keep]
        if np.unique(sample.y).size < 2:
            sample = labelled
        trees.append(new_tree(i).fit(sample, sample=True))
    return trees


def assert_same_trees(expected, got) -> None:
    assert len(expected) == len(got)
    for i, (a, b) in enumerate(zip(expected, got, strict=True)):
        for name in _ARRAYS:
            x, y = getattr(a.tree_, name), getattr(b.tree_, name)
            assert x.dtype == y.dtype, (i, name)
            assert np.array_equal(x, y, equal_nan=True), (i, name)
    assert json.dumps(encode_trees([t.tree_ for t in expected])) == json.dumps(
        encode_trees([t.tree_ for t in got]))


def check(labelled, n_trees: int, seed: int, new_tree) -> None:
    """Batch and one by one agree: the same trees, or the same error."""
    try:
        expected = one_by_one(labelled, n_trees, seed, new_tree)
    except DataError as err:
        with pytest.raises(DataError) as raised:
            grow_bootstrap(labelled, n_trees, seed, new_tree)
        assert str(raised.value) == str(err)
        return
    got, _, _ = grow_bootstrap(labelled, n_trees, seed, new_tree)
    assert_same_trees(expected, got)
    X = labelled.X
    for a, b in zip(expected, got, strict=True):
        assert np.array_equal(a.predict_proba(X), b.predict_proba(X))


SETTINGS = st.fixed_dictionaries({
    "criterion": st.sampled_from(["info_gain", "gain_ratio", "gini"]),
    "min_leaf": st.sampled_from([0.0, 1.0, 2.0, 3.5]),
    "max_depth": st.sampled_from([None, None, 2]),
    "min_gain": st.sampled_from([0.0, 0.0, 0.05]),
    "cp": st.sampled_from([0.0, 0.0, 0.02]),
    "binary_splits": st.booleans(),
    "threshold": st.sampled_from(["midpoint", "lower", "j48"]),
    "collapse": st.booleans(),
    "leaf": st.sampled_from(["laplace", "frequency", "m_estimate"]),
    "max_features": st.sampled_from([None, "all", "sqrt", "log2", 1, 2, 0.5]),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=random_datasets(min_rows=4, max_rows=60), params=SETTINGS,
       n_trees=st.integers(1, 6), seed=st.integers(0, 2**31 - 1),
       weights=st.sampled_from(["as drawn", "integers", "fractions"]))
def test_batch_grows_each_tree_as_its_own_fit(data, params, n_trees, seed, weights):
    rng = np.random.default_rng(seed)
    if weights == "integers":
        data.weights = rng.integers(1, 4, data.n_samples).astype(float)
    elif weights == "fractions":  # not dyadic: sums depend on their order
        data.weights = rng.choice([0.1, 0.3, 1.0, 1.7], data.n_samples)
    labelled = data.subset(np.flatnonzero(data.y >= 0))

    def new_tree(i):
        return DecisionTree(**params, random_state=tree_seed(seed, i))

    check(labelled, n_trees, seed % 1000, new_tree)


@pytest.mark.parametrize("spec", ["forest:trees=12", "calibrated_bagging:trees=8",
                                  "bagging:trees=5", "forest:trees=6,seed=4"])
@pytest.mark.parametrize("name", ["credit-g", "soybean", "vote", "diabetes"])
def test_named_datasets(name, spec):
    """The ensembles' own members on real data: nominal multiway tests and missing values
    (soybean, vote), numeric columns with ties (diabetes), mixed (credit-g)."""
    data = load_dataset(REPO / "tests" / "data" / f"{name}.arff")
    method = make_method(spec)
    trees = method.fit(data).trees_
    labelled = data.subset(np.flatnonzero(data.y >= 0))
    if hasattr(method, "inputs"):  # forest codes missing nominal values as a value
        labelled = method.inputs(labelled)
    assert_same_trees(one_by_one(labelled, len(trees), method.opts["seed"],
                                 method.new_member), trees)


def test_j48_offers_no_cut_between_values_1e5_apart():
    """Two values 1e-5 apart separate the classes; J48's rule offers no cut between them,
    so the batch, as each tree's own fit, grows no test on that column."""
    from treecert.data.schema import Attribute, Dataset, Schema

    n = 30
    y = (np.arange(n) % 2).astype(np.int64)
    X = np.column_stack([1.0 + 1e-5 * y, np.arange(n, dtype=float) % 7])
    schema = Schema((Attribute("a", "numeric"), Attribute("b", "numeric")),
                    Attribute("class", "nominal", ("x", "y")))
    data = Dataset(schema, X, y, np.ones(n))
    check(data, 5, 0, lambda i: DecisionTree(threshold="j48", min_leaf=1))
    trees, _, _ = grow_bootstrap(data, 5, 0, lambda i: DecisionTree(threshold="j48",
                                                                    min_leaf=1))
    assert not any((t.tree_.feature == 0).any() for t in trees)


def test_j48_cut_rule_on_glass():
    """J48's cut rule under a batch: glass's RI has neighbouring values exactly 1e-5 apart,
    between which J48 offers no cut; every tree is its own fit's, moved cuts included."""
    data = load_dataset(REPO / "tests" / "data" / "glass.arff")
    method = make_method("forest:trees=12,threshold=j48,criterion=gain_ratio")
    trees = method.fit(data).trees_
    labelled = method.inputs(data.subset(np.flatnonzero(data.y >= 0)))
    assert all(t.tree_.j48_cuts for t in trees)
    assert_same_trees(one_by_one(labelled, len(trees), method.opts["seed"],
                                 method.new_member), trees)


@pytest.mark.parametrize("tree_params", [{}, {"min_leaf": 1, "binary_splits": True},
                                         {"criterion": "gain_ratio", "max_features": "log2"}])
def test_letter_shaped_data(tree_params):
    """Many classes, integer-valued numeric columns (runs of equal values)."""
    from treecert.data.schema import Attribute, Dataset, Schema

    rng = np.random.default_rng(3)
    n, p, K = 600, 8, 12
    y = rng.integers(0, K, n)
    X = np.clip(np.round(rng.normal(size=(K, p))[y] * 3 + rng.normal(size=(n, p)) * 2 + 7),
                0, 15)
    schema = Schema(tuple(Attribute(f"a{j}", "numeric") for j in range(p)),
                    Attribute("class", "nominal", tuple(f"c{k}" for k in range(K))))
    data = Dataset(schema, X, y.astype(np.int64), np.ones(n))
    method = make_method("forest:trees=10", tree_params)
    trees = method.fit(data).trees_
    assert_same_trees(one_by_one(data, 10, 1, method.new_member), trees)


def test_a_sample_without_a_column_grows_without_it():
    """A bootstrap sample that holds no known value of an attribute grows its tree, which
    never tests that attribute (the data it resamples have values of it): as its own
    ``fit(sample=True)``, while a plain ``fit`` of such data is refused."""
    from treecert.data.schema import Attribute, Dataset, Schema

    n = 40
    X = np.column_stack([np.arange(n, dtype=float), np.full(n, np.nan)])
    X[5, 1] = 1.0
    schema = Schema((Attribute("a", "numeric"), Attribute("b", "numeric")),
                    Attribute("class", "nominal", ("x", "y")))
    data = Dataset(schema, X, (np.arange(n) % 2).astype(np.int64), np.ones(n))
    check(data, 6, 0, lambda i: DecisionTree(leaf="laplace"))
    trees, _, _ = grow_bootstrap(data, 6, 0, lambda i: DecisionTree(leaf="laplace"))
    assert any(5 not in sample for sample in _bootstrap_rows(n, 6, 0))  # a sample without b
    assert all(t.tree_.n_nodes > 1 for t in trees)
    with pytest.raises(DataError, match="no known values"):
        DecisionTree().fit(data.subset(np.flatnonzero(np.arange(n) != 5)))


def _bootstrap_rows(n: int, n_trees: int, seed: int) -> list[np.ndarray]:
    rng = np.random.RandomState(seed)
    return [np.flatnonzero(bootstrap_counts(rng, n)) for _ in range(n_trees)]


@pytest.mark.parametrize("name", ["credit-g", "soybean", "iris", "diabetes"])
def test_forecasts_of_all_trees_at_once(name):
    """The ensembles' forecasts — every tree's probabilities, and the out-of-bag sums —
    are those of each tree's own ``predict_proba``, bit for bit (soybean: unknown values,
    each tree on its own)."""
    from treecert.methods.ensemble import per_tree_proba

    data = load_dataset(REPO / "tests" / "data" / f"{name}.arff")
    # diabetes with J48's cut rule: its trees route x - t < 1e-6 left (routing_threshold)
    method = make_method("forest:trees=9" + (",threshold=j48" if name == "diabetes" else ""))
    labelled = data.subset(np.flatnonzero(data.y >= 0))
    trees, oob_sum, oob_n = grow_bootstrap(labelled, 9, 1, method.new_member)
    assert all(t.tree_.j48_cuts for t in trees) == (name == "diabetes")
    got = per_tree_proba(trees, data)
    assert np.array_equal(got, np.stack([t.predict_proba(data) for t in trees]))
    n = labelled.n_samples
    rng = np.random.RandomState(1)
    total, count = np.zeros((n, data.schema.n_classes)), np.zeros(n)
    for tree in trees:
        out = np.flatnonzero(bootstrap_counts(rng, n) == 0)
        total[out] += tree.predict_proba(labelled.X[out])
        count[out] += 1
    assert np.array_equal(oob_sum, total)
    assert np.array_equal(oob_n, count)
