"""The tree learner on hand-computed cases, and properties of the flat-array tree."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import make_dataset, random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.tree.arrays import prune_to_cp
from treecert.tree.classifier import DecisionTree
from treecert.tree.render import to_text
from treecert.tree.split_search import GrowParams, SplitFinder


def _finder(data, **kw):
    return SplitFinder(data.X, data.y, data.schema.nominal_mask(), data.schema.n_values(),
                       data.schema.n_classes, GrowParams(**kw), eligible=kw.pop("eligible", None))


def test_weather_root_gain_is_outlook_0_2467(weather):
    # Quinlan's textbook numbers: gain(outlook)=0.2467, humidity 0.1518, windy 0.0481,
    # temperature 0.0292 bits.
    finder = _finder(weather)
    idx = np.arange(14)
    split = finder.best_split(idx, np.ones(14))
    assert weather.schema.attributes[split.feature].name == "outlook"
    assert split.score == pytest.approx(0.246750, abs=1e-6)
    cands = {c[0]: c[1] for c in finder._nominal(idx, np.eye(2)[weather.y], np.ones(14), 14.0)}
    assert cands[2] == pytest.approx(0.151836, abs=1e-6)
    assert cands[3] == pytest.approx(0.048127, abs=1e-6)
    assert cands[1] == pytest.approx(0.029222, abs=1e-6)


def test_weather_tree_is_the_textbook_tree(weather):
    tree = DecisionTree().fit(weather).tree_
    assert to_text(tree, weather.schema).splitlines()[:7] == [
        "outlook = sunny",
        "|   humidity = high: no (3.0)",
        "|   humidity = normal: yes (2.0)",
        "outlook = overcast: yes (4.0)",
        "outlook = rainy",
        "|   windy = TRUE: no (2.0)",
        "|   windy = FALSE: yes (3.0)",
    ]
    assert (tree.n_nodes, tree.n_leaves, tree.depth) == (8, 5, 2)
    np.testing.assert_array_equal(tree.counts[0], [9, 5])


def test_laplace_leaf_values(weather):
    model = DecisionTree(leaf="laplace").fit(weather)
    # overcast leaf: 4 yes, 0 no -> (4+1)/(4+2) = 5/6.
    overcast = weather.subset(np.array([2]))
    np.testing.assert_allclose(model.predict_proba(overcast), [[5 / 6, 1 / 6]])
    # sunny & high: 0 yes, 3 no -> 1/5, 4/5; alpha = 0.5 -> 0.5/4, 3.5/4.
    np.testing.assert_allclose(model.predict_proba(weather.subset(np.array([0]))), [[0.2, 0.8]])
    half = DecisionTree(leaf="laplace", alpha=0.5).fit(weather)
    np.testing.assert_allclose(half.predict_proba(weather.subset(np.array([0]))),
                               [[0.125, 0.875]])


def test_m_estimate_uses_training_prior(weather):
    model = DecisionTree(leaf="m-estimate", m=2).fit(weather)
    prior = np.array([9, 5]) / 14
    expect = (np.array([4, 0]) + 2 * prior) / (4 + 2)
    np.testing.assert_allclose(model.predict_proba(weather.subset(np.array([2])))[0], expect)


def _missing_case():
    # A: a,a,a (class 0), b,b (class 1), ? (class 0). Known weight 5: a 3, b 2.
    return make_dataset({"A": (("a", "b"), ["a", "a", "a", "b", "b", None])},
                        [0, 0, 0, 1, 1, 0], classes=("c0", "c1"))


def test_fractional_missing_routing_in_training():
    data = _missing_case()
    model = DecisionTree(min_leaf=1).fit(data)
    tree = model.tree_
    # The unknown row goes to branch a with weight 3/5 and to b with 2/5.
    np.testing.assert_allclose(tree.counts[tree.children_of(0)], [[3.6, 0.0], [0.4, 2.0]])
    # Gain is scaled by the known fraction 5/6: 5/6 * H(3/5, 2/5).
    split = _finder(data, min_leaf=1).best_split(np.arange(6), np.ones(6))
    h = -(0.6 * np.log2(0.6) + 0.4 * np.log2(0.4))
    assert split.score == pytest.approx(5 / 6 * h)
    # Gain ratio divides by split info with the unknowns as a third branch.
    gr = _finder(data, min_leaf=1, criterion="gain_ratio").best_split(np.arange(6), np.ones(6))
    si = -(3 / 6 * np.log2(3 / 6) + 2 / 6 * np.log2(2 / 6) + 1 / 6 * np.log2(1 / 6))
    assert gr.score == pytest.approx((5 / 6 * h) / si)


@pytest.mark.parametrize("seed", range(20))
def test_gain_ratio_of_a_column_without_unknowns_survives_fractional_weights(seed):
    """A column with no unknown value has an unknown weight of 0, computed as the node's
    weight less the known weight: with fractional weights it can round to just below 0.
    It counts as 0 (Weka's lnFunc), so the column keeps its ratio (a NaN split information
    used to void it: 8 of these 20 nodes had no test)."""
    rng = np.random.default_rng(seed)
    n = 12
    a = (np.arange(n) % 2).astype(float)
    y = (rng.random(n) < np.where(a == 1, 0.8, 0.2)).astype(np.int64)
    w = rng.choice([0.1, 0.2, 0.3, 0.7, 0.01], n)
    data = make_dataset({"a": [("u", "v")[int(v)] for v in a]}, y.tolist(), weights=w.tolist())
    split = _finder(data, min_leaf=0.0, criterion="gain_ratio").best_split(np.arange(n), w)
    counts = np.zeros((2, 2))
    np.add.at(counts, (a.astype(np.int64), y), w)

    def ent(c):
        p = c[c > 0] / c.sum()
        return -(p * np.log2(p)).sum()

    gain = ent(counts.sum(axis=0)) - sum(c.sum() / w.sum() * ent(c) for c in counts)
    assert split is not None and split.feature == 0
    assert split.score == pytest.approx(gain / ent(counts.sum(axis=1)), rel=1e-9)


def test_fractional_missing_routing_at_prediction():
    data = _missing_case()
    model = DecisionTree(min_leaf=1).fit(data)
    x = data.subset(np.array([5]))  # A unknown
    # Branch a holds 3.6 of 6 (all class 0); branch b holds 2.4 (0.4 c0, 2 c1).
    expect = 0.6 * np.array([1.0, 0.0]) + 0.4 * np.array([0.4, 2.0]) / 2.4
    np.testing.assert_allclose(model.predict_proba(x)[0], expect)


def test_instance_weights_count_like_copies():
    base = make_dataset({"x": [1, 2, 3, 4, 5, 6]}, [0, 0, 0, 1, 1, 1])
    weighted = make_dataset({"x": [1, 2, 3, 4, 5, 6]}, [0, 0, 0, 1, 1, 1],
                            weights=[2, 2, 2, 2, 2, 2])
    a = DecisionTree(min_leaf=2).fit(base).tree_
    b = DecisionTree(min_leaf=4).fit(weighted).tree_
    np.testing.assert_allclose(a.threshold[:1], b.threshold[:1])
    np.testing.assert_allclose(2 * a.counts, b.counts)


def test_threshold_rules():
    data = make_dataset({"x": [1.0, 2.0, 3.0, 5.0, 6.0, 7.0]}, [0, 0, 0, 1, 1, 1])
    assert DecisionTree(min_leaf=1).fit(data).tree_.threshold[0] == 4.0
    assert DecisionTree(min_leaf=1, threshold="lower").fit(data).tree_.threshold[0] == 3.0


def test_ineligible_instance_never_becomes_a_threshold():
    # TPCE Fig. 3: negatives 1,2,3; positives 5,6,7; x = 3.5 added as a negative.
    data = make_dataset({"x": [1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 3.5]}, [0, 0, 0, 1, 1, 1, 0])
    elig = np.array([True] * 6 + [False])
    # Eligible everywhere the cut may sit between 3.5 and 5 -> 4.25.
    assert DecisionTree(min_leaf=1).fit(data).tree_.threshold[0] == 4.25
    # Ineligible x: the cut is the midpoint of two training values (3 and 5) -> 4.0, and x
    # still counts in the counts.
    tree = DecisionTree(min_leaf=1).fit(data, eligible=elig).tree_
    assert tree.threshold[0] == 4.0
    np.testing.assert_allclose(tree.counts[tree.children_of(0)], [[4, 0], [0, 3]])
    # With the lower rule x (3.5 > 3) goes right: the same tree but x on the right.
    tree = DecisionTree(min_leaf=1, threshold="lower").fit(data, eligible=elig).tree_
    assert tree.threshold[0] == 3.0


def test_ineligible_instance_cannot_make_a_nominal_branch_admissible():
    # Training: a,a,a (0,0,1) and one b (1); x = b with label 1. With min_leaf 2 only x
    # would give branch b its second instance.
    cols = {"A": (("a", "b"), ["a", "a", "a", "b", "b"])}
    data = make_dataset(cols, [0, 0, 1, 1, 1])
    assert DecisionTree(min_leaf=2).fit(data).tree_.n_nodes == 3
    elig = np.array([True, True, True, True, False])
    assert DecisionTree(min_leaf=2).fit(data, eligible=elig).tree_.n_nodes == 1


@settings(max_examples=60, deadline=None)
@given(random_datasets(missing=True), st.sampled_from(["midpoint", "lower"]))
def test_thresholds_come_from_eligible_values(data, rule):
    rng = np.random.default_rng(0)
    elig = rng.random(data.n_samples) < 0.7
    tree = DecisionTree(min_leaf=1, threshold=rule).fit(data, eligible=elig).tree_
    for node in np.flatnonzero(~np.isnan(tree.threshold)):
        col = data.X[elig, tree.feature[node]]
        vals = np.unique(col[~np.isnan(col)])
        allowed = vals if rule == "lower" else (vals[:, None] + vals[None, :]).ravel() / 2
        assert np.isclose(allowed, tree.threshold[node]).any()


@settings(max_examples=60, deadline=None)
@given(random_datasets(), st.sampled_from(["info_gain", "gain_ratio", "gini"]),
       st.booleans(), st.sampled_from(["frequency", "laplace"]))
def test_probabilities_are_valid_and_counts_consistent(data, criterion, binary, leaf):
    model = DecisionTree(criterion=criterion, binary_splits=binary, min_leaf=1, leaf=leaf)
    tree = model.fit(data).tree_
    proba = model.predict_proba(data)
    assert np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # Children's counts add up to the parent's (fractional instances included).
    for node in np.flatnonzero(~tree.is_leaf):
        np.testing.assert_allclose(tree.counts[tree.children_of(node)].sum(axis=0),
                                   tree.counts[node], atol=1e-9)
    np.testing.assert_allclose(tree.counts[0].sum(), data.weights.sum())


def test_empty_leaf_falls_back_to_parent_counts():
    # 'c' is never seen: its branch is empty and predicts with the parent's counts.
    cols = {"A": (("a", "b", "c"), ["a", "a", "b", "b"])}
    data = make_dataset(cols, [0, 0, 1, 1])
    model = DecisionTree(min_leaf=1, leaf="laplace").fit(data)
    x = make_dataset({"A": (("a", "b", "c"), ["c"])}, [0])
    np.testing.assert_allclose(model.predict_proba(x), [[3 / 6, 3 / 6]])


def test_cp_prunes_like_rpart_weakest_link():
    # Root error 3 (of 6); one split makes 0 errors: g = (3 - 0) / (2 - 1) = 3, so the
    # split survives cp < 1 (alpha = cp * 3) and goes at cp = 1.
    data = make_dataset({"x": [1, 2, 3, 4, 5, 6]}, [0, 0, 0, 1, 1, 1])
    tree = DecisionTree(min_leaf=1).fit(data).tree_
    assert prune_to_cp(tree, 0.99).n_nodes == 3
    assert prune_to_cp(tree, 1.0).n_nodes == 1


def test_max_depth_and_min_gain(weather):
    assert DecisionTree(max_depth=1).fit(weather).tree_.depth == 1
    assert DecisionTree(min_gain=0.3).fit(weather).tree_.n_nodes == 1


def _tally(finder, rows, w):
    batch = SimpleNamespace(seg=np.array([0, rows.size]), rows=rows, w=w, we=None,
                            node=np.zeros(rows.size, dtype=np.intp))
    return finder._nominal_tally(batch, 0, 1)


def test_nominal_tally_by_hand_and_after_a_row_written_in_place():
    """Class weights per (column, value) and eligible weights of one node, unknown values
    left out — by hand — and, where X's row is written in place as the path engine writes
    x, the finder's kept value codes follow it, whether or not the data had an unknown
    value before (its codes then lack the unknown values' cell)."""
    cols = {"A": (("a", "b", "c"), ["a", "b", "c", "a"]), "B": (("u", "v"), ["u", "u", "v", "v"])}
    data = make_dataset(cols, [0, 1, 1, 0])
    X = np.vstack([data.X, [[np.nan, 0.0]]])  # a spare row, as the path engine keeps
    y = np.concatenate([data.y, [1]])
    finder = SplitFinder(X, y, data.schema.nominal_mask(), data.schema.n_values(), 2,
                         GrowParams())
    rows, w = np.arange(5), np.array([1.0, 0.5, 1.0, 2.0, 0.25])
    counts, elig = _tally(finder, rows, w)
    assert finder.nominal_codes()[0].dtype == np.uint8  # kept small: a byte a value
    np.testing.assert_array_equal(counts[0, 0], [[3.0, 0], [0, 0.5], [0, 1.0]])  # A, x unknown
    np.testing.assert_array_equal(counts[0, 1], [[1.0, 0.75], [2.0, 1.0], [0, 0]])  # 2 values
    np.testing.assert_array_equal(elig[0], [[3.0, 0.5, 1.0], [1.75, 3.0, 0]])
    X[4] = [1.0, 0.0]  # no unknown value: codes without the unknown values' cell
    finder = SplitFinder(X, y, data.schema.nominal_mask(), data.schema.n_values(), 2,
                         GrowParams())
    _tally(finder, rows, w)
    for row in ([2.0, np.nan], [np.nan, np.nan], [1.0, 1.0]):
        X[4] = row
        finder.row_written(4)
        fresh = SplitFinder(X.copy(), y, data.schema.nominal_mask(), data.schema.n_values(), 2,
                            GrowParams())
        for got, want in zip(_tally(finder, rows, w), _tally(fresh, rows, w), strict=True):
            np.testing.assert_array_equal(got, want)
