"""The transductive engine and TPCE: hand-worked toy, and fast path == naive reference."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import SAMPLE_DATA, make_dataset, random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.methods import make_method
from treecert.transductive.engine import TransductiveEngine
from treecert.tree.classifier import DecisionTree


def _toy():
    # One numeric attribute: 1, 2 are class A; 3, 4 are class B. Test x = 2.6.
    train = make_dataset({"v": [1.0, 2.0, 3.0, 4.0]}, ["A", "A", "B", "B"], classes=("A", "B"))
    test = make_dataset({"v": [2.6]}, ["A"], classes=("A", "B"))
    return train, test


def test_tpce_toy_worked_by_hand_counting_x():
    # Label A: root cut 2.5 (x = 2.6 goes right, gain 0.420 beats 0.322 and 0.171); the
    # right node {x(A), 3(B), 4(B)} splits at 3.5 and x lands in {x, 3} = [A 1, B 1]:
    # Laplace (1+1)/(2+2) = 0.5. Label B: the cut 2.5 is perfect, x lands in the pure
    # node {x, 3, 4} = [A 0, B 3]: 1/5 and 4/5. Eq. 1: A (0.5 + 0.2)/2 = 0.35.
    train, test = _toy()
    method = make_method("tpce:min_leaf=1").fit(train)
    pred = method.predict(test)
    np.testing.assert_allclose(pred.proba, [[0.35, 0.65]])
    assert pred.columns["tpce_disagree"].tolist() == [1]


def test_tpce_toy_worked_by_hand_without_x():
    # Same leaves without x: label A -> [0, 1] -> 1/3, 2/3; label B -> [0, 2] -> 1/4, 3/4.
    train, test = _toy()
    pred = make_method("tpce:min_leaf=1,count_x=false").fit(train).predict(test)
    np.testing.assert_allclose(pred.proba, [[7 / 24, 17 / 24]])


def test_naive_engine_gives_the_toy_too():
    train, test = _toy()
    pred = make_method("tpce:min_leaf=1,engine=naive").fit(train).predict(test)
    np.testing.assert_allclose(pred.proba, [[0.35, 0.65]])


def _assert_same_leaves(a, b):
    assert len(a) == len(b)
    key = lambda leaf: (round(leaf.weight, 9), tuple(np.round(leaf.counts, 9)))  # noqa: E731
    for la, lb in zip(sorted(a, key=key), sorted(b, key=key), strict=True):
        assert la.weight == pytest.approx(lb.weight, abs=1e-12)
        np.testing.assert_allclose(la.counts, lb.counts, atol=1e-12)
        np.testing.assert_allclose(la.counts_without_x, lb.counts_without_x, atol=1e-12)


@settings(max_examples=120, deadline=None)
@given(
    data=random_datasets(min_rows=6, max_rows=40),
    criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
    min_leaf=st.sampled_from([1.0, 2.0, 3.0]),
    binary=st.booleans(),
    rule=st.sampled_from(["midpoint", "lower"]),
    max_depth=st.sampled_from([None, 2]),
    drop=st.booleans(),
)
def test_fast_engine_equals_naive_reference(data, criterion, min_leaf, binary, rule,
                                            max_depth, drop):
    learner = DecisionTree(criterion=criterion, min_leaf=min_leaf, binary_splits=binary,
                           threshold=rule, max_depth=max_depth)
    train = data.subset(np.arange(data.n_samples - 3))
    engine = TransductiveEngine(train, learner)
    for i in range(data.n_samples - 3, data.n_samples):
        x = data.X[i]
        for c in range(data.schema.n_classes):
            drop_row = 0 if drop else None
            _assert_same_leaves(engine.leaves(x, c, drop_row=drop_row),
                                engine.naive_leaves(x, c, drop_row=drop_row))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["weather.nominal", "iris", "labor", "vote", "credit-g",
                                  "soybean", "diabetes"])
def test_fast_engine_equals_naive_on_sample_data(name):
    from treecert.data.loading import load_dataset

    data = load_dataset(SAMPLE_DATA / f"{name}.arff")
    n = data.n_samples
    test_rows = np.arange(0, n, max(1, n // 6))[: 3 if name == "soybean" else 6]
    train = data.subset(np.setdiff1d(np.arange(n), test_rows))
    criteria = ("info_gain",) if name == "soybean" else ("info_gain", "gain_ratio")
    for criterion in criteria:  # soybean: 19 classes, the slowest case; one criterion
        tpce_fast = make_method(f"tpce:criterion={criterion}").fit(train)
        tpce_naive = make_method(f"tpce:criterion={criterion},engine=naive").fit(train)
        test = data.subset(test_rows)
        np.testing.assert_allclose(tpce_fast.predict(test).proba,
                                   tpce_naive.predict(test).proba, atol=1e-12)


def test_loo_fast_path_equals_refitting_without_the_row():
    data = make_dataset({"a": [1, 2, 3, 4, 5, 6, 7, 8], "b": list("xyxyxxyy")},
                        [0, 0, 1, 0, 1, 1, 1, 0])
    method = make_method("tpce:min_leaf=1").fit(data)
    loo = method.predict_loo(np.arange(8)).proba
    for i in range(8):
        rest = data.subset(np.delete(np.arange(8), i))
        expect = make_method("tpce:min_leaf=1").fit(rest).predict(data.subset(np.array([i])))
        np.testing.assert_allclose(loo[i], expect.proba[0], atol=1e-12)


def test_collapse_falls_back_to_whole_trees():
    train, test = _toy()
    engine = TransductiveEngine(train, DecisionTree(min_leaf=1, collapse=True))
    assert engine.whole_tree_only
    _assert_same_leaves(engine.leaves(test.X[0], 0), engine.naive_leaves(test.X[0], 0))


@settings(max_examples=80, deadline=None)
@given(
    data=random_datasets(min_rows=6, max_rows=40),
    criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
    min_leaf=st.sampled_from([1.0, 2.0]),
    binary=st.booleans(),
)
def test_tree_with_fast_equals_regrowing(data, criterion, min_leaf, binary):
    learner = DecisionTree(criterion=criterion, min_leaf=min_leaf, binary_splits=binary)
    train = data.subset(np.arange(data.n_samples - 2))
    engine = TransductiveEngine(train, learner)
    for i in range(data.n_samples - 2, data.n_samples):
        for c in range(data.schema.n_classes):
            fast = engine.tree_with(data.X[i], c)
            naive = engine.tree_with(data.X[i], c, engine="naive")
            assert _nested(fast) == _nested(naive)


def _nested(tree, node=0):
    """A tree as nested tuples, independent of node numbering."""
    vb = tree.value_branch[tree.value_branch_ptr[node]:tree.value_branch_ptr[node + 1]]
    return (int(tree.feature[node]), None if np.isnan(tree.threshold[node]) else
            float(tree.threshold[node]), tuple(vb.tolist()),
            tuple(np.round(tree.counts[node], 12).tolist()),
            tuple(_nested(tree, int(c)) for c in tree.children_of(node)))


@pytest.mark.parametrize("method", ["tpce", "kk"])
@pytest.mark.parametrize("edit", ["collapse=true", "cp=0.01"])
def test_whole_tree_edits_refuse_the_path_engine(method, edit):
    """collapse/cp act on whole trees: engine=path (x's paths only) says so up front
    instead of switching engines behind the user's back; fast and naive agree."""
    from treecert.errors import ConfigError

    train, test = _toy()
    with pytest.raises(ConfigError, match="engine=path"):
        make_method(f"{method}:{edit},engine=path").fit(train)
    fast = make_method(f"{method}:{edit}").fit(train).predict(test)
    naive = make_method(f"{method}:{edit},engine=naive").fit(train).predict(test)
    np.testing.assert_array_equal(fast.proba, naive.proba)


@settings(max_examples=int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "100")) // 8,
          deadline=None)
@given(data=random_datasets(min_rows=9, max_rows=30, max_classes=9),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
       binary=st.booleans(), min_leaf=st.sampled_from([1.0, 2.0]))
def test_kk_loo_inductive_equals_refitting(data, criterion, binary, min_leaf):
    """K&K's inductive step under leave-one-out, served by routing row i through the tree
    grown without it (missing values in D and in x, empty branches, up to 9 classes):
    bit for bit the refit per row; and the whole K&K leave-one-out equals engine=naive."""
    spec = f"kk:criterion={criterion},binary_splits={binary},min_leaf={min_leaf}"
    fast = make_method(spec).fit(data)
    rows = np.arange(data.n_samples)
    P = fast.engine_.loo_inductive(rows)
    # rows whose removal leaves one class: the refit refuses (DataError), the engine
    # returns the one-leaf tree's estimate
    two = np.array([np.unique(np.delete(data.y, i)).size >= 2 for i in rows])
    for i in rows[two]:
        rest = data.subset(np.delete(rows, i))
        tree = DecisionTree(criterion=criterion, binary_splits=binary, min_leaf=min_leaf,
                            leaf="laplace").fit(rest)
        np.testing.assert_array_equal(P[i], tree.predict_proba(data.X[i:i + 1])[0])
    some = rows[two][:6]
    got = fast.predict_loo(some)
    ref = make_method(spec + ",engine=naive").fit(data).predict_loo(some)
    np.testing.assert_array_equal(got.proba, ref.proba)
    np.testing.assert_array_equal(got.certainty, ref.certainty)
