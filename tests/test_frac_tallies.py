"""Shared nominal tallies and numeric sorts (:mod:`treecert.transductive.shared_tallies`) give
the grower's split search bit for bit: nodes whose training rows repeat (with fractional,
non-dyadic weights, as C4.5's missing-value fractions make them) and an ineligible x of any weight
and class appended, every criterion, multiway and binary tests, 2–19 classes.

The whole engine with missing values is checked against whole trees in
``tests/test_exact_paths.py``. ``TREECERT_ENGINE_EXAMPLES`` raises the number of random
cases (CI uses the default).
"""

from __future__ import annotations

import os

import numpy as np
from conftest import random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.transductive.node_search import (
    _segments,
    evaluate_nodes,
    node_counts_stops,
    value_ranks,
)
from treecert.transductive.shared_tallies import SharedTallies
from treecert.tree.classifier import DecisionTree
from treecert.tree.segments import _Batch

EXAMPLES = int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "60"))


def _same_split(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return (a.feature == b.feature and a.n_branches == b.n_branches and a.score == b.score
            and (a.threshold == b.threshold or (np.isnan(a.threshold)
                                                and np.isnan(b.threshold)))
            and ((a.value_branch is None and b.value_branch is None)
                 or np.array_equal(a.value_branch, b.value_branch)))


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=random_datasets(min_rows=20, max_rows=60, max_classes=19, missing=True),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
       binary=st.booleans(), min_leaf=st.sampled_from([0.5, 1.0, 2.0]),
       seed=st.integers(0, 2**32 - 1), small=st.booleans())
def test_shared_tallies_equal_the_grower_s(data, criterion, binary, min_leaf, seed, small):
    """Shared tallies equal the grower's, both ways of gathering every node's numbers:
    all columns at once (small chunks) and per width (``small`` False: the limit 0)."""
    import treecert.transductive.shared_tallies as shared_tallies

    limit = shared_tallies._SMALL_CHUNK
    try:
        shared_tallies._SMALL_CHUNK = limit if small else 0
        _check_shared_tallies(data, criterion, binary, min_leaf, seed)
    finally:
        shared_tallies._SMALL_CHUNK = limit


def _check_shared_tallies(data, criterion, binary, min_leaf, seed):
    rng = np.random.default_rng(seed)
    n, K = data.n_samples, data.schema.n_classes
    J = 8  # jobs: x rows appended to the training rows, ineligible
    Xq = data.X[rng.integers(0, n, J)].copy()
    Xq[rng.random(Xq.shape) < 0.3] = np.nan
    X = np.vstack([data.X, Xq])
    y = np.concatenate([data.y, rng.integers(0, K, J)])
    elig = np.r_[np.ones(n, bool), np.zeros(J, bool)]
    learner = DecisionTree(criterion=criterion, binary_splits=binary, min_leaf=min_leaf)
    finder = learner.make_finder(data, eligible=elig, X=X, y=y)
    # a few sets of training rows with fractional weights, each shared by several nodes
    sets = []
    for _ in range(3):
        rows = np.flatnonzero(rng.random(n) < 0.7)
        w = data.weights[rows] * rng.choice([1.0, 1 / 3, 0.7, 0.15], rows.size)
        sets.append((rows, w))
    nodes, keys = [], []  # keys: a node's set of training rows (a hint to the tallies)
    for i in range(J):
        keys.append(int(rng.integers(len(sets))))
        rows, w = sets[keys[-1]]
        nodes.append((np.r_[rows, n + i], np.r_[w, rng.choice([1.0, 0.3, 1 / 7])]))
    nodes.append(sets[0])  # a node without x
    nodes.append((np.r_[n + J - 1], np.r_[0.5]))  # x alone
    keys += [0, len(sets)]
    shared = SharedTallies.of(finder)
    want = evaluate_nodes(finder, nodes)
    got = evaluate_nodes(shared, nodes)
    assert all(_same_split(a, b) for a, b in zip(got, want, strict=True))
    # numeric columns sorted once per set of training rows, x put in: the grower's order
    rank = value_ranks(finder)
    got = evaluate_nodes(shared, nodes, rank)
    assert all(_same_split(a, b) for a, b in zip(got, want, strict=True))
    if finder.numeric_idx.size:
        lens = np.array([r.size for r, _ in nodes])
        rows = np.concatenate([r for r, _ in nodes])
        seg, node = _segments(lens)
        S = shared.shared_sort(rows, seg, rank)
        for k, f in enumerate(finder.numeric_idx):
            np.testing.assert_array_equal(S[k], np.lexsort((X[rows, f], node)))
    # the tallies themselves, with fewer groups than nodes
    lens = np.array([r.size for r, _ in nodes])
    seg = np.r_[0, np.cumsum(lens)]
    rows = np.concatenate([r for r, _ in nodes])
    w = np.concatenate([v for _, v in nodes])
    b = _Batch(seg, rows, w, w * elig[rows], None, None, None)
    if finder.nominal_idx.size:
        chunk, elig = shared._nominal_tally(b, 0, b.G)
        counts, want_elig = finder._nominal_tally(b, 0, b.G)
        # x's eligible weight is 0: a node's are its group's (every node's: binary only)
        np.testing.assert_array_equal(chunk.shared_elig.take(chunk.group, axis=0), want_elig)
        if binary:
            np.testing.assert_array_equal(elig, want_elig)
        np.testing.assert_array_equal(chunk.node_counts(), counts)
        assert chunk.group.max() + 1 <= len(sets) + 1  # and x alone
        # with the hint, the same groups (one node per key read)
        keyed, _ = shared._nominal_tally(
            _Batch(seg, rows, w, b.we, None, None, None, np.array(keys) + 5), 0, b.G)
        np.testing.assert_array_equal(keyed.group, chunk.group)
        np.testing.assert_array_equal(keyed.node_counts(), counts)
        # what the scores read, from the groups with x's cells apart: the grower's numbers
        np.testing.assert_array_equal(shared._known_counts(chunk), finder._known_counts(counts))
        gini = criterion == "gini"
        for got, want in zip(shared._known_impurity(chunk, gini),
                             finder._known_impurity(counts, gini), strict=True):
            np.testing.assert_array_equal(got, want)
        for nv, js in finder._same_width:
            np.testing.assert_array_equal(shared._value_impurity(chunk, js, nv, gini),
                                          finder._value_impurity(counts, js, nv, gini))
            if criterion == "gain_ratio":
                np.testing.assert_array_equal(shared._value_weights(chunk, js, nv),
                                              finder._value_weights(counts, js, nv))


def test_node_whose_training_rows_all_lack_the_value():
    """A group of shared rows that all lack a nominal value tallies nothing: numpy's
    ``bincount`` of no entries is int64, and x's float weight must still be added (found by
    ``test_engine``'s property test)."""
    from conftest import make_dataset

    from treecert.transductive.engine import TransductiveEngine
    from treecert.tree.classifier import DecisionTree

    data = make_dataset(
        {"num0": [0.5, None, 0.0, 0.5, 0.5, 0.0, 0.0, None],
         "num1": [0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.5],
         "nom0": (("v0", "v1"), ["v1", "v1", None, None, "v0", "v1", None, "v1"])},
        ["no", "yes", "no", "no", "no", "yes", "no", "yes"],
        weights=[2.0, 2.0, 1.0, 2.0, 0.5, 0.5, 2.0, 2.0])
    engine = TransductiveEngine(data.subset(np.arange(5)), DecisionTree(min_leaf=1.0))
    for i in range(5, 8):
        for c in range(2):
            fast = engine.leaves(data.X[i], c)
            naive = engine.naive_leaves(data.X[i], c)
            assert [(leaf.weight, leaf.counts.tolist()) for leaf in fast] == \
                [(leaf.weight, leaf.counts.tolist()) for leaf in naive]


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=random_datasets(min_rows=20, max_rows=60, max_classes=7, missing=False),
       min_leaf=st.sampled_from([0.5, 1.0, 2.0, 3.0]), seed=st.integers(0, 2**32 - 1))
def test_counts_and_stops_shared_by_nodes_of_equal_rows(data, min_leaf, seed):
    """The batched engine's nodes (x last, ineligible) that hold the same rows before x and
    the same weights share one pass over them (``x_last``): the counts and stops of each
    node taken alone. Weights integral, dyadic or not, x's of any weight and class, nodes
    of x alone, nodes whose weight lies about the limit of too light a node."""
    rng = np.random.default_rng(seed)
    n, K = data.n_samples, data.schema.n_classes
    J = 9
    X = np.vstack([data.X, data.X[rng.integers(0, n, J)]])
    y = np.concatenate([data.y, rng.integers(0, K, J)])
    elig = np.r_[np.ones(n, bool), np.zeros(J, bool)]
    finder = DecisionTree(min_leaf=min_leaf).make_finder(data, eligible=elig, X=X, y=y)
    sets = []
    for i in range(4):  # the last a few rows: weights about the stopping limit 2 · min_leaf
        rows = (np.flatnonzero(rng.random(n) < rng.random()) if i < 3
                else np.sort(rng.choice(n, size=int(rng.integers(0, 8)), replace=False)))
        dyadic = rng.random() < 0.6  # every node's sums exact, or some not
        w = data.weights[rows] * rng.choice([1.0, 2.0, 0.5] if dyadic
                                            else [1.0, 2.0, 1 / 3, 0.7, 0.5], rows.size)
        sets.append((rows, w))
    nodes = []
    for i in range(J):
        rows, w = sets[int(rng.integers(len(sets)))]
        xw = float(rng.choice([1.0, 1.0, 0.3]))
        nodes.append((np.r_[rows, n + i], np.r_[w, xw], int(rng.integers(0, 4))))
    nodes.append((np.r_[n + J - 1], np.r_[1.0], 2))  # x alone
    for some in (nodes, nodes[-1:]):  # and only nodes of x alone (no training row at all)
        want = node_counts_stops(finder, some)
        got = node_counts_stops(finder, some, x_last=True)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
