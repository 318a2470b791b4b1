"""Searches of one training row set R served for many test rows x from R's table of gains
with x either side of each cut (:mod:`treecert.transductive.sided_search`) choose what the
grower's search of every node R ∪ {(x, c)} chooses, bit for bit.

``TREECERT_ENGINE_EXAMPLES`` raises the number of random cases (CI uses the default).
"""

from __future__ import annotations

import os
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.schema import Attribute, Dataset, Schema
from treecert.transductive import label_search, sided_search
from treecert.transductive.budget import ByteLRU
from treecert.transductive.node_search import evaluate_nodes, value_ranks
from treecert.tree.classifier import DecisionTree

EXAMPLES = int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "150"))


def _numeric_data(rng, n: int, K: int, p: int, runs: bool) -> Dataset:
    """Numeric columns with many ties (few levels, and a mirrored copy of the first), or
    with ``runs`` classes in runs along the first column (near-ties between cuts);
    integer weights, zeros too."""
    if runs:
        X = np.round(rng.normal(size=(n, p)), 1)
        y = np.minimum(((X[:, 0] - X[:, 0].min()) / (np.ptp(X[:, 0]) + 1e-9) * K)
                       .astype(np.int64), K - 1)
        y = np.where(rng.random(n) < 0.1, rng.integers(0, K, n), y)
    else:
        X = rng.integers(0, rng.integers(2, 9), (n, p)) / 2.0
        y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    X = np.hstack([X, 1.0 - 2.0 * X[:, :1]])
    w = rng.integers(0, 4, n).astype(float)
    w[:K] = 1.0
    schema = Schema(tuple(Attribute(f"a{j}", "numeric") for j in range(p + 1)),
                    Attribute("class", "nominal", tuple(f"c{k}" for k in range(K))))
    return Dataset(schema, X, y.astype(np.int64), w, source="<random>")


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    n=st.integers(8, 60), K=st.integers(2, 5), p=st.integers(1, 3),
    criterion=st.sampled_from(["info_gain", "gini"]),
    min_leaf=st.sampled_from([0.0, 1.0, 2.0, 3.0]),
    rule=st.sampled_from(["midpoint", "lower"]),
    min_gain=st.sampled_from([0.0, 0.05]),
    seed=st.integers(0, 2**32 - 1),
    runs=st.booleans(),
)
def test_tables_choose_the_growers_split(n, K, p, criterion, min_leaf, rule, min_gain, seed,
                                         runs):
    rng = np.random.default_rng(seed)
    data = _numeric_data(rng, n + 8, K, p, runs)
    learner = DecisionTree(criterion=criterion, min_leaf=min_leaf, threshold=rule,
                           min_gain=min_gain)
    train, Xq = data.subset(np.arange(n)), data.X[n:]
    # a few R, each searched by most of the 8 test rows with some of their labels
    jobs = []  # (R, test row, label)
    for _ in range(3):
        R = np.flatnonzero(rng.random(n) < rng.uniform(0.3, 1.0))
        for i in np.flatnonzero(rng.random(Xq.shape[0]) < 0.8):
            jobs += [(R, int(i), int(c)) for c in rng.permutation(K)[:rng.integers(1, K + 1)]]
    X_aug = np.vstack([train.X, Xq[[i for _, i, _ in jobs]]])
    y_aug = np.concatenate([train.y, [c for _, _, c in jobs]]).astype(np.int64)
    elig = np.r_[np.ones(n, dtype=bool), np.zeros(len(jobs), dtype=bool)]
    finder = learner.make_finder(train, eligible=elig, X=X_aug, y=y_aug)
    assert sided_search.covers(finder, train.weights)
    rank = value_ranks(finder)
    nodes = [(np.r_[R, n + j], np.r_[train.weights[R], 1.0]) for j, (R, _, _) in enumerate(jobs)]
    want = evaluate_nodes(finder, nodes, rank)
    # tables built from the label search's in the call, then kept: twice through one cache (or a
    # cache of one byte, where every table is evicted at once)
    cache = ByteLRU(1 if rng.random() < 0.3 else 1 << 30)
    queries = [(rows, w, Xq[i], c) for (rows, w), (_, i, c) in zip(nodes, jobs, strict=True)]
    # two classes: the tables serve nodes of any size here (in use only the large ones)
    with mock.patch.object(label_search, "TWO_CLASS_ROWS", -1):
        found = [sided_search.search_nodes(finder, queries, rank, cache) for _ in range(2)]
    for got in found:
        for a, b in zip(got, want, strict=True):
            assert (a is None) == (b is None)
            if a is not None:
                assert (a.feature, a.n_branches, a.score) == (b.feature, b.n_branches, b.score)
                np.testing.assert_array_equal(a.threshold, b.threshold)


def test_nominal_columns_are_not_covered():
    """Nominal tests take the label search (the tables hold numeric cuts only)."""
    schema = Schema((Attribute("a", "numeric"), Attribute("b", "nominal", ("u", "v"))),
                    Attribute("class", "nominal", ("p", "q")))
    data = Dataset(schema, np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0]]),
                   np.array([0, 0, 1, 1]), np.ones(4), source="<toy>")
    finder = DecisionTree().make_finder(data)
    assert not sided_search.covers(finder, data.weights)
    numeric = Dataset(Schema(schema.attributes[:1], schema.class_attribute), data.X[:, :1],
                      data.y, data.weights, source="<toy>")
    assert sided_search.covers(DecisionTree().make_finder(numeric), numeric.weights)


@settings(max_examples=EXAMPLES, deadline=None)
@given(n=st.integers(0, 40), K=st.integers(1, 12), top=st.sampled_from([1, 3, 50, 4000]),
       seed=st.integers(0, 2**32 - 1), with_table=st.booleans())
def test_each_class_added_in_turn_equals_the_copied_rows(n, K, top, seed, with_table):
    """``nimp_plus_each`` (the running sums side by side) equals :func:`nimp` of the
    (n·K, K) copy with one class raised per row, bit for bit, below and above numpy's
    pairwise block of 8 classes."""
    from treecert.data.discretize import _ln_func
    from treecert.transductive.cut_tables import nimp, nimp_plus_each

    rng = np.random.default_rng(seed)
    counts = rng.integers(0, top + 1, (n, K)).astype(float)
    table = _ln_func(np.arange(top * K + 3, dtype=float)) if with_table else None
    xs = np.repeat(counts, K, axis=0)
    xs[np.arange(n * K), np.tile(np.arange(K), n)] += 1.0
    want = nimp(xs, False, table).reshape(n, K)
    np.testing.assert_array_equal(nimp_plus_each(counts, False, table), want)
