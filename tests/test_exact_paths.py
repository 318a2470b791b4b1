"""The exact batched paths give, bit for bit, what growing whole trees gives — in the settings
the certificates do not cover: missing values in D and in x (C4.5's fractional instances),
gain ratio, many classes, non-dyadic instance weights, leave-one-out.

``TREECERT_ENGINE_EXAMPLES`` raises the number of random cases (CI uses the default).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import DATASETS, assert_engines_agree, random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.schema import Dataset
from treecert.transductive.batch_engine import BatchEngine
from treecert.transductive.engine import TransductiveEngine
from treecert.transductive.exact_paths import ReachedLeaves, mix_laplace
from treecert.tree.classifier import DecisionTree

EXAMPLES = int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "150"))


def _jobs(X: np.ndarray, K: int):
    return np.repeat(X, K, axis=0), np.tile(np.arange(K), X.shape[0])


def _blank(X: np.ndarray, rng, p: float) -> np.ndarray:
    X = X.copy()
    X[rng.random(X.shape) < p] = np.nan
    return X


def _assert_leaves_equal(engine: TransductiveEngine, x, label, drop_row=None):
    """The path engine's leaves (one job) are the naive ones: same order, shares, counts."""
    got = engine.leaves(x, label, drop_row=drop_row)
    want = engine.naive_leaves(x, label, drop_row=drop_row)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.weight == b.weight
        np.testing.assert_array_equal(a.counts, b.counts)
        np.testing.assert_array_equal(a.counts_without_x, b.counts_without_x)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    data=random_datasets(min_rows=8, max_rows=60, max_classes=5, missing=True),
    criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
    min_leaf=st.sampled_from([1.0, 2.0, 3.0]),
    binary=st.booleans(),
    rule=st.sampled_from(["midpoint", "lower"]),
    max_depth=st.sampled_from([None, 2, 4]),
    x_missing=st.sampled_from([0.0, 0.2, 0.5]),
    odd_weights=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_exact_paths_equal_whole_trees(data, criterion, min_leaf, binary, rule, max_depth,
                                       x_missing, odd_weights, seed):
    rng = np.random.default_rng(seed)
    if odd_weights:  # non-dyadic weights: sums depend on their order
        data = Dataset(data.schema, data.X, data.y, rng.choice([0.3, 1.0, 1.7], data.n_samples),
                       source=data.source)
    learner = DecisionTree(criterion=criterion, min_leaf=min_leaf, binary_splits=binary,
                           threshold=rule, max_depth=max_depth)
    n_test = 4
    train = data.subset(np.arange(data.n_samples - n_test))
    K = data.schema.n_classes
    engine = TransductiveEngine(train, learner)
    Xt = _blank(data.X[-n_test:], rng, x_missing)
    X, labels = _jobs(Xt, K)
    assert_engines_agree(engine, X, labels)
    _assert_leaves_equal(engine, Xt[0], int(rng.integers(K)))
    # leave-one-out: training row r swapped for (x_r, c)
    rows = np.arange(0, train.n_samples, max(1, train.n_samples // 4))
    X, labels = _jobs(train.X[rows], K)
    assert_engines_agree(engine, X, labels, np.repeat(rows, K))
    _assert_leaves_equal(engine, train.X[rows[-1]], 0, drop_row=int(rows[-1]))


@settings(max_examples=max(10, EXAMPLES // 10), deadline=None)
@given(data=random_datasets(min_rows=30, max_rows=80, max_classes=19, missing=True),
       criterion=st.sampled_from(["info_gain", "gain_ratio"]), binary=st.booleans())
def test_exact_paths_with_many_classes(data, criterion, binary):
    learner = DecisionTree(criterion=criterion, min_leaf=1.0, binary_splits=binary)
    train = data.subset(np.arange(data.n_samples - 3))
    engine = TransductiveEngine(train, learner)
    X, labels = _jobs(data.X[-3:], data.schema.n_classes)
    assert_engines_agree(engine, X, labels)


def test_x_with_unknown_values_takes_the_exact_paths_on_certified_data():
    """Complete D with information gain walks the certificates; a test row with an unknown
    value is served by the exact paths, and both agree with whole trees."""
    from treecert.data.loading import load_dataset

    data = load_dataset(DATASETS / "iris.arff")
    train = data.subset(np.arange(0, 150, 2))
    engine = TransductiveEngine(train, DecisionTree())
    assert engine._batch_engine().certified
    Xt = data.X[1:40:4].copy()
    Xt[::2, 2] = np.nan
    X, labels = _jobs(Xt, 3)
    assert_engines_agree(engine, X, labels)


@settings(max_examples=EXAMPLES, deadline=None)
@given(lens=st.lists(st.integers(0, 40), min_size=1, max_size=12),
       seed=st.integers(0, 2**32 - 1), dyadic=st.booleans())
def test_stopping_weight_decided_as_the_grower_sums_it(lens, seed, dyadic):
    """The eligible-weight stop of every node (:func:`~treecert.tree.grow.too_light`, which
    the grower's levels and the exact paths' contents both read: one cumsum, the grower's
    sums only where rounding could matter) is the node-by-node sum's, also with the limit
    at a segment's exact sum."""
    from treecert.tree.grow import too_light
    from treecert.tree.segments import _exact_segments, _ragged_sums

    rng = np.random.default_rng(seed)
    lens = np.array(lens, dtype=np.int64)
    seg = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=seg[1:])
    w = rng.choice([0.5, 1.0, 2.0] if dyadic else [0.1, 0.3, 1.0 / 3, 0.7, 1.7], seg[-1])
    ew = np.where(rng.random(w.size) < 0.1, 0.0, w)  # x's weight is never eligible
    node = np.repeat(np.arange(lens.size), lens)
    want = _ragged_sums(ew, seg, _exact_segments(w, node, lens.size))
    for limit in (*want[:3], *np.nextafter(want[:3], np.inf), 2.0, 0.0):
        np.testing.assert_array_equal(too_light(ew, w, seg, float(limit)), want < limit)


def test_identical_test_rows_share_their_contents():
    """Two equal x (and their K labels) hold nodes of one content each round; their
    estimates are still each job's own, equal to whole trees."""
    from treecert.data.loading import load_dataset

    data = load_dataset(DATASETS / "vote.arff")
    train = data.subset(np.arange(0, data.n_samples, 3))
    engine = TransductiveEngine(train, DecisionTree(criterion="gain_ratio", min_leaf=1.0))
    Xt = data.X[[1, 1, 2, 4, 1]]
    X, labels = _jobs(Xt, data.schema.n_classes)
    assert_engines_agree(engine, X, labels)


def test_mix_laplace_by_hand():
    """Two leaves with shares 0.25 / 0.75: Σ share · (n_c + 1)/(n + K), normalised."""
    leaves = ReachedLeaves(job=np.array([0, 0, 1]), share=np.array([0.25, 0.75, 1.0]),
                           counts=np.array([[3.0, 1.0], [0.0, 2.0], [1.0, 1.0]]),
                           x_weight=np.array([0.25, 0.75, 1.0]), n_inst=np.array([4, 2, 2.0]))
    got = mix_laplace(leaves, np.array([0, 1]), 2, 2)
    first = 0.25 * np.array([4.0, 2.0]) / 6 + 0.75 * np.array([1.0, 3.0]) / 4
    np.testing.assert_allclose(got[0], first / first.sum())
    np.testing.assert_allclose(got[1], [0.5, 0.5])
    # without x: x's weight leaves its label's count (job 0's label 0, job 1's label 1)
    got = mix_laplace(leaves, np.array([0, 1]), 2, 2, count_x=False)
    first = 0.25 * np.array([3.75, 2.0]) / 5.75 + 0.75 * np.array([1.0, 3.0]) / 4
    np.testing.assert_allclose(got[0], first / first.sum())
    np.testing.assert_allclose(got[1], np.array([2.0, 1.0]) / 3)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "criterion", "blank"), [
    ("vote", "info_gain", 0.0), ("breast-cancer", "gain_ratio", 0.0),
    ("soybean", "info_gain", 0.0), ("credit-g", "info_gain", 0.02),
    ("segment-challenge", "gain_ratio", 0.0)])
def test_exact_paths_on_uci_data(name, criterion, blank, monkeypatch):
    from treecert.data.loading import load_dataset

    data = load_dataset(DATASETS / f"{name}.arff")
    rng = np.random.default_rng(5)
    if blank:
        data = Dataset(data.schema, _blank(data.X, rng, blank), data.y, data.weights,
                       source=data.source)
    n = data.n_samples
    test_rows = np.arange(0, n, n // 4)[:4]
    train = data.subset(np.setdiff1d(np.arange(n), test_rows))
    engine = TransductiveEngine(train, DecisionTree(criterion=criterion))
    # complete data with gain ratio walks its certificates (ratio_scores); the rest not
    assert engine._batch_engine().certified == (not np.isnan(train.X).any())
    X, labels = _jobs(data.X[test_rows], data.schema.n_classes)
    np.testing.assert_array_equal(engine.estimates(X, labels, engine="fast"),
                                  engine.estimates(X, labels, engine="naive"))
    # the root of a job holds every training row: parts bounded in rows × jobs
    monkeypatch.setattr("treecert.transductive.budget.PATH_ENTRIES", n)
    np.testing.assert_array_equal(engine.estimates(X, labels, engine="fast"),
                                  engine.estimates(X, labels, engine="naive"))


def test_collapse_and_cp_are_batched():
    from treecert.data.schema import Attribute, Schema

    schema = Schema((Attribute("a", "numeric"),), Attribute("class", "nominal", ("p", "q")))
    data = Dataset(schema, np.array([[1.0], [2.0], [np.nan], [4.0]]), np.array([0, 0, 1, 1]),
                   np.ones(4), source="<toy>")
    assert BatchEngine.supports(data, DecisionTree(criterion="gain_ratio"))
    for learner in (DecisionTree(collapse=True), DecisionTree(cp=0.01)):
        assert BatchEngine.supports(data, learner)  # edited_trees.EditedEngine

