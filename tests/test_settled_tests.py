"""Tests no x can change (:mod:`treecert.transductive.settled_tests`): the bound they rest
on, and the exact paths that take them equal whole trees bit for bit — missing values in D
and in x, information gain and Gini, multiway and binary splits, 2-19 classes; and gain
ratio's bounds (multiway nominal tests) against J48's choice with every enumerated x.

``TREECERT_ENGINE_EXAMPLES`` raises the number of random cases (CI uses the default).
"""

from __future__ import annotations

import itertools
import os
from unittest import mock

import numpy as np
import pytest
from conftest import assert_engines_agree, random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.schema import Attribute, Dataset, Schema
from treecert.methods import make_method
from treecert.transductive import settled_tests
from treecert.transductive.engine import TransductiveEngine
from treecert.tree.classifier import DecisionTree
from treecert.tree.impurity import _impurity_last
from treecert.tree.split_search import Split

EXAMPLES = int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "150"))


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(counts=st.lists(st.floats(0.0, 50.0), min_size=1, max_size=19),
       cls=st.integers(0, 18), w=st.floats(0.0, 1.0), gini=st.booleans())
def test_one_instance_moves_n_impurity_within_its_bound(counts, cls, w, gini):
    """Weight w <= 1 added to class c raises n·impurity by at least 0 and at most
    δ(n) - δ(n_c) (entropy; Gini: 2)."""
    c = np.array(counts)
    k = cls % c.size
    d = np.zeros(c.size)
    d[k] = w
    rise = float(_impurity_last(c + d, gini) - _impurity_last(c, gini))
    bound = settled_tests._rises(c[None, :], gini)[k]
    assert -1e-9 <= rise <= bound + 1e-9
    if not gini:  # the bound is the rise of a whole unit: tight
        d[k] = 1.0
        assert bound == pytest.approx(float(_impurity_last(c + d, gini) - _impurity_last(c, gini)),
                                      abs=1e-9)


def _planted(data: Dataset, rng, kind: str, noise: float = 0.1,
             unknown: float = 0.1) -> Dataset:
    """``data`` with one more attribute that nearly gives the class (a test that leads by
    far at the root and below it), with missing values like the others."""
    y, n = data.y, data.n_samples
    K = data.schema.n_classes
    if kind == "numeric":
        col = y + rng.normal(0, 0.2, n)
        attr = Attribute("planted", "numeric")
    else:
        col = y.astype(float)
        attr = Attribute("planted", "nominal", tuple(f"p{k}" for k in range(K)))
    noisy = rng.random(n) < noise
    col[noisy] = rng.integers(0, K, int(noisy.sum()))
    col[rng.random(n) < unknown] = np.nan
    col[0] = y[0]
    schema = Schema((*data.schema.attributes, attr), data.schema.class_attribute)
    return Dataset(schema, np.column_stack([data.X, col]), y, data.weights, source="<planted>")


def _settling_everywhere_equals_whole_trees(data: Dataset, learner: DecisionTree,
                                            x_missing: float, rng) -> None:
    """The last five rows of ``data`` as x (a share of their values made unknown), every
    group of nodes trying its settled test (no size limits): whole trees' estimates."""
    n_test = 5
    train = data.subset(np.arange(data.n_samples - n_test))
    K = data.schema.n_classes
    Xt = data.X[-n_test:].copy()
    Xt[rng.random(Xt.shape) < x_missing] = np.nan
    X, labels = np.repeat(Xt, K, axis=0), np.tile(np.arange(K), n_test)
    with mock.patch.object(settled_tests, "SETTLE_NODES", 1), \
            mock.patch.object(settled_tests, "SETTLE_ROWS", 0):
        assert_engines_agree(TransductiveEngine(train, learner), X, labels)


# two thirds of the others' count: each case grows up to 95 whole trees as the reference
# (5 x by up to 19 classes), the suite's longest test at 150 (2 minutes of CI's 10)
@settings(max_examples=max(10, EXAMPLES * 2 // 3), deadline=None)
@given(
    data=random_datasets(min_rows=20, max_rows=70, max_classes=19, missing=True),
    plant=st.sampled_from(["none", "numeric", "nominal"]),
    criterion=st.sampled_from(["info_gain", "gini", "gain_ratio"]),
    min_leaf=st.sampled_from([1.0, 2.0]),
    min_gain=st.sampled_from([0.0, 0.0, 0.1, 0.3]),
    binary=st.booleans(),
    rule=st.sampled_from(["midpoint", "lower"]),
    x_missing=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 2**32 - 1),
)
def test_exact_paths_with_settled_tests_equal_whole_trees(data, plant, criterion, min_leaf,
                                                          min_gain, binary, rule, x_missing,
                                                          seed):
    """Every group of nodes tries its settled test (no size limits), and the estimates are
    whole trees' bit for bit."""
    rng = np.random.default_rng(seed)
    if plant != "none":
        data = _planted(data, rng, plant)
    learner = DecisionTree(criterion=criterion, min_leaf=min_leaf, min_gain=min_gain,
                           binary_splits=binary, threshold=rule)
    _settling_everywhere_equals_whole_trees(data, learner, x_missing, rng)


@settings(max_examples=max(10, EXAMPLES // 5), deadline=None)
@given(
    data=random_datasets(min_rows=40, max_rows=90, max_classes=4, missing=True),
    criterion=st.sampled_from(["info_gain", "gini"]),
    binary=st.sampled_from([False, False, True]),
    seed=st.integers(0, 2**32 - 1),
)
def test_venn_forest_with_settled_tests_equals_whole_trees(data, criterion, binary, seed):
    """The Venn machine's forest of whole trees (unknown values) takes settled tests at the
    nodes holding x (a nominal column that nearly gives the class settles most roots), and
    its matrices are whole trees' bit for bit."""
    data = _planted(data, np.random.default_rng(seed), "nominal")
    test = np.arange(data.n_samples) % 5 == 0
    train, test = data.subset(np.flatnonzero(~test)), data.subset(np.flatnonzero(test))
    spec = f"venn:criterion={criterion},min_leaf=1,binary_splits={binary}"
    with mock.patch.object(settled_tests, "SETTLE_NODES", 1), \
            mock.patch.object(settled_tests, "SETTLE_ROWS", 0):
        fast = make_method(spec).fit(train).predict(test)
    naive = make_method(spec + ",engine=naive").fit(train).predict(test)
    for a, b in ((fast.proba, naive.proba), (fast.lower, naive.lower),
                 (fast.upper, naive.upper)):
        np.testing.assert_array_equal(a, b)


def test_a_leading_test_is_settled_and_a_close_one_is_not():
    """A nominal column that gives the class leads every other test by far more than 2δ(N):
    settled, and it is the grower's test; with the class shuffled nothing leads so far.
    (A numeric column's neighbouring cuts, one row apart, stay within 2δ(N) of its best.)"""
    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n)
    c = np.where(rng.random(n) < 0.05, 2, y)
    X = np.column_stack([rng.normal(size=n), rng.normal(size=n), c]).astype(float)
    X[rng.random(X.shape) < 0.05] = np.nan
    schema = Schema((Attribute("a", "numeric"), Attribute("b", "numeric"),
                     Attribute("c", "nominal", ("u", "v", "w"))),
                    Attribute("class", "nominal", ("p", "q")))
    for labels, settles in ((y, True), (rng.permutation(y), False)):
        data = Dataset(schema, X, labels.astype(np.int64), np.ones(n), source="<toy>")
        finder = DecisionTree().make_finder(data)
        split = settled_tests.settled_test(finder, np.arange(n), np.ones(n))
        assert (split is not None) == settles
        if settles:
            want = finder.best_split(np.arange(n), np.ones(n))
            assert (split.feature, split.n_branches) == (2, 3) == (want.feature,
                                                                    want.n_branches)
            np.testing.assert_array_equal(split.value_branch, want.value_branch)


@pytest.mark.parametrize("binary", [False, True])
def test_a_leading_nominal_test_is_the_growers_choice_without_a_search(binary):
    """A three-valued column whose first value gives one class and the other two the
    other: settled with the grower's own test of R — one-vs-rest (two branches) or
    multiway (three) — and the grower's search is not run for it."""
    rng = np.random.default_rng(1)
    n = 400
    y = rng.integers(0, 2, n)
    c = np.where(y == 0, 0, rng.integers(1, 3, n))
    X = np.column_stack([rng.normal(size=n), c]).astype(float)
    X[rng.random(n) < 0.05, 0] = np.nan
    schema = Schema((Attribute("a", "numeric"), Attribute("c", "nominal", ("u", "v", "w"))),
                    Attribute("class", "nominal", ("p", "q")))
    data = Dataset(schema, X, y.astype(np.int64), np.ones(n), source="<toy>")
    finder = DecisionTree(binary_splits=binary).make_finder(data)
    with mock.patch.object(settled_tests, "evaluate_nodes") as search:
        split = settled_tests.settled_test(finder, np.arange(n), np.ones(n))
    search.assert_not_called()
    want = finder.best_split(np.arange(n), np.ones(n))
    assert (split.feature, split.n_branches) == (want.feature, want.n_branches) \
        == (1, 2 if binary else 3)
    np.testing.assert_array_equal(split.value_branch, want.value_branch)
    assert np.isnan(split.threshold) and np.isnan(split.score)


def test_gain_ratio_is_covered_for_multiway_nominal_tests_only():
    nominal = Attribute("b", "nominal", ("u", "v"))
    for attrs, binary, covered in (((Attribute("a", "numeric"),), False, False),
                                   ((nominal,), False, True), ((nominal,), True, False)):
        schema = Schema(attrs, Attribute("class", "nominal", ("p", "q")))
        data = Dataset(schema, np.array([[1.0], [0.0]]), np.array([0, 1]), np.ones(2))
        for criterion in ("info_gain", "gini", "gain_ratio"):
            finder = DecisionTree(criterion=criterion, binary_splits=binary).make_finder(data)
            assert settled_tests.covers(finder) is (covered or criterion != "gain_ratio")


def _nominal_only(data: Dataset) -> Dataset:
    """``data`` without its numeric columns (gain ratio settles nominal tests only)."""
    keep = [j for j, a in enumerate(data.schema.attributes) if a.is_nominal]
    schema = Schema(tuple(data.schema.attributes[j] for j in keep),
                    data.schema.class_attribute)
    return Dataset(schema, data.X[:, keep], data.y, data.weights, source="<nominal>")


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(data=random_datasets(min_rows=20, max_rows=60, max_classes=5, missing=True),
       noise=st.floats(0.0, 0.3), unknown=st.sampled_from([0.0, 0.1, 0.3]),
       seed=st.integers(0, 2**32 - 1))
def test_a_gain_ratio_test_said_to_settle_is_j48s_choice_with_every_x(data, noise, unknown,
                                                                      seed):
    """Where a gain-ratio test of R is settled, J48's search of R ∪ {x} chooses it for x of
    any values (unknown ones too), class and weight up to 1: the average-gain filter and
    every ratio recomputed by the grower itself. A planted column settles most roots."""
    rng = np.random.default_rng(seed)
    data = _planted(_nominal_only(data), rng, "nominal", noise, unknown)
    n, K = data.n_samples, data.schema.n_classes
    learner = DecisionTree(criterion="gain_ratio", min_leaf=1.0)
    eligible = np.r_[np.ones(n, dtype=bool), False]
    settled = None
    for i in range(40):
        x = data.X[rng.integers(n, size=data.X.shape[1]), np.arange(data.X.shape[1])]
        x[rng.random(x.size) < 0.3] = np.nan
        if i % 4 == 0:  # the planted column (the usual leader) unknown in x
            x[-1] = np.nan
        aug = Dataset(data.schema, np.vstack([data.X, x]), np.r_[data.y, rng.integers(K)],
                      np.r_[data.weights, 1.0], source="<x>")
        finder = learner.make_finder(aug, eligible=eligible)
        if i == 0:
            settled = settled_tests.settled_test(finder, np.arange(n), data.weights)
            if settled is None:
                return
        _assert_j48s_choice(settled, finder, n, np.r_[data.weights, (1.0, 0.5, 0.01)[i % 3]])


def _assert_j48s_choice(settled, finder, n: int, w: np.ndarray) -> None:
    """J48's search of the n training rows and x (the finder's row n) chooses the settled
    test, or — for :class:`~treecert.transductive.settled_tests.Contenders` — a test of one
    of them, the very split (score too) of the search over them alone."""
    rows = np.arange(n + 1)
    want = finder.best_split(rows, w)
    assert want is not None
    got = settled
    if isinstance(settled, settled_tests.Contenders):
        assert want.feature in settled.features.tolist()
        got = settled_tests.among(finder, settled.features).best_split(rows, w)
        assert got.score == want.score
    assert (got.feature, got.n_branches) == (want.feature, want.n_branches)
    np.testing.assert_array_equal(got.value_branch, want.value_branch)


def _rival_columns(seed: int) -> Dataset:
    """Two classes and three nominal columns made to compete under gain ratio: a
    four-valued column that partly gives the class (high gain, high split information), a
    rare value that mostly means one class (lower gain, low split information) and noise."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 160))
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < rng.uniform(0.3, 0.8), y * 2 + rng.integers(0, 2, n),
                 rng.integers(0, 4, n))
    b = (rng.random(n) < rng.uniform(0.02, 0.2)) & (rng.random(n) < rng.uniform(0.5, 1.0))
    y = np.where(b & (rng.random(n) < 0.9), 1, y)
    X = np.column_stack([a, b, rng.integers(0, 3, n)]).astype(float)
    X[rng.random(X.shape) < rng.choice([0.0, 0.05])] = np.nan
    schema = Schema((Attribute("a", "nominal", ("a0", "a1", "a2", "a3")),
                     Attribute("b", "nominal", ("b0", "b1")),
                     Attribute("c", "nominal", ("c0", "c1", "c2"))),
                    Attribute("class", "nominal", ("p", "q")))
    return Dataset(schema, X, y.astype(np.int64), np.ones(n), source="<rivals>")


@settings(max_examples=max(20, EXAMPLES // 3), deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_gain_ratio_lead_holds_against_the_worst_x(seed):
    """Where R's gain-ratio test is settled (or its contenders found), every x that could
    break the lead — each value (or unknown) of the leader's column and of one other
    column, the rest unknown, each class, weights 1, 0.5 and 0.1 — leaves it J48's choice
    (the grower's own search of R ∪ {x}). Columns made to compete (:func:`_rival_columns`)
    put leaders near the edge of the average-gain filter, and rivals near it."""
    data = _rival_columns(seed)
    n = data.n_samples
    learner = DecisionTree(criterion="gain_ratio", min_leaf=1.0)
    settled = settled_tests.settled_test(learner.make_finder(data), np.arange(n),
                                         data.weights)
    if settled is None:
        return
    _holds_against_the_worst_x(data, learner, settled)


def _holds_against_the_worst_x(data: Dataset, learner, settled) -> None:
    """:func:`_assert_j48s_choice` for every x that could break a settled test or its
    contenders: each value (or unknown) of two columns — a settled test's (or a
    contender's) and any other — the rest unknown, each class, weights 1, 0.5 and 0.1."""
    n, K, p = data.n_samples, data.schema.n_classes, data.X.shape[1]
    values = [[np.nan, *range(len(a.values))] for a in data.schema.attributes]
    eligible = np.r_[np.ones(n, dtype=bool), False]
    firsts = [settled.feature] if isinstance(settled, Split) else settled.features.tolist()
    for f, other in itertools.product(firsts, range(p)):
        for a, b in itertools.product(values[f], values[other]):
            x = np.full(p, np.nan)
            x[other] = b
            x[f] = a
            for c, wx in np.ndindex(K, 3):
                aug = Dataset(data.schema, np.vstack([data.X, x]), np.r_[data.y, c],
                              np.r_[data.weights, 1.0], source="<x>")
                _assert_j48s_choice(settled, learner.make_finder(aug, eligible=eligible), n,
                                    np.r_[data.weights, (1.0, 0.5, 0.1)[wx]])


def _twin_columns(seed: int) -> Dataset:
    """Two nominal columns that give the class about equally well, among four noise
    columns, in a shuffled order: two leaders that no bound parts (gain ratio's
    contenders), both far above the average gain."""
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(60, 200)), int(rng.integers(2, 4))
    y = rng.integers(0, K, n)
    cols = [np.where(rng.random(n) < rng.uniform(0.5, 0.8), y, rng.integers(0, K, n))
            for _ in range(2)] + [rng.integers(0, 3, n) for _ in range(4)]
    values = [tuple(f"v{k}" for k in range(K))] * 2 + [("u0", "u1", "u2")] * 4
    order = rng.permutation(6)
    X = np.column_stack([cols[j] for j in order]).astype(float)
    X[rng.random(X.shape) < rng.choice([0.0, 0.05])] = np.nan
    schema = Schema(tuple(Attribute(f"a{j}", "nominal", values[j]) for j in order),
                    Attribute("class", "nominal", tuple(f"c{k}" for k in range(K))))
    return Dataset(schema, X, y.astype(np.int64), np.ones(n), source="<twins>")


@settings(max_examples=max(20, EXAMPLES // 5), deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_gain_ratio_contenders_hold_against_the_worst_x(seed):
    """Where R's gain-ratio leaders are close (:func:`_twin_columns`), J48's choice on
    R ∪ {x} lies among the contenders found, and the search over them alone
    (:func:`~treecert.transductive.settled_tests.among`: no average gain taken) is J48's
    split, score and all, for every x that could break it."""
    data = _twin_columns(seed)
    learner = DecisionTree(criterion="gain_ratio", min_leaf=1.0)
    settled = settled_tests.settled_test(learner.make_finder(data), np.arange(data.n_samples),
                                         data.weights)
    if settled is not None:
        _holds_against_the_worst_x(data, learner, settled)


def test_close_gain_ratio_leaders_are_contenders_and_searched_alone():
    """Twin leaders (:func:`_twin_columns`) give contenders — the two columns, not the
    noise — on a fair share of seeds, and the exact paths that search their nodes over
    them alone estimate as whole trees do."""
    found = []
    for seed in range(40):
        data = _twin_columns(seed)
        got = settled_tests.settled_test(
            DecisionTree(criterion="gain_ratio", min_leaf=1.0).make_finder(data),
            np.arange(data.n_samples), data.weights)
        if isinstance(got, settled_tests.Contenders):
            names = [data.schema.attributes[f].values for f in got.features.tolist()]
            assert all(v[0] == "v0" for v in names)  # the twins, not the noise
            found.append(seed)
    assert len(found) >= 4
    for seed in found[:4]:
        with mock.patch.object(settled_tests, "among", wraps=settled_tests.among) as among:
            _settling_everywhere_equals_whole_trees(
                _twin_columns(seed), DecisionTree(criterion="gain_ratio", min_leaf=1.0), 0.3,
                np.random.default_rng(seed))
        assert among.called


def test_venn_forest_searches_gain_ratio_contenders_alone_as_whole_trees():
    """The Venn machine's forest of whole trees (unknown values) searches the nodes of
    twin leaders (:func:`_twin_columns`) over their contenders alone, and its matrices are
    whole trees' bit for bit."""
    spec = "venn:criterion=gain_ratio,min_leaf=1"
    searched = 0
    for seed in range(40):
        data = _twin_columns(seed)
        if not np.isnan(data.X).any():  # complete data: the walks, not the forest
            continue
        test = np.arange(data.n_samples) % 6 == 0
        train, test = data.subset(np.flatnonzero(~test)), data.subset(np.flatnonzero(test))
        with mock.patch.object(settled_tests, "SETTLE_NODES", 1), \
                mock.patch.object(settled_tests, "SETTLE_ROWS", 0), \
                mock.patch.object(settled_tests, "among", wraps=settled_tests.among) as among:
            fast = make_method(spec).fit(train).predict(test)
        if not among.called:
            continue
        searched += 1
        naive = make_method(spec + ",engine=naive").fit(train).predict(test)
        for a, b in ((fast.proba, naive.proba), (fast.lower, naive.lower),
                     (fast.upper, naive.upper)):
            np.testing.assert_array_equal(a, b)
        if searched == 3:
            break
    assert searched == 3


def test_a_leading_gain_ratio_test_is_settled_and_a_close_one_is_not():
    """A nominal column that gives the class, beside noise columns: settled under gain
    ratio (without a search) and the grower's test; with the class shuffled, not."""
    rng = np.random.default_rng(2)
    n = 400
    y = rng.integers(0, 3, n)
    c = np.where(rng.random(n) < 0.05, rng.integers(0, 3, n), y)
    X = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 2, n), c]).astype(float)
    X[rng.random(X.shape) < 0.05] = np.nan
    schema = Schema((Attribute("a", "nominal", ("a0", "a1", "a2", "a3")),
                     Attribute("b", "nominal", ("b0", "b1")),
                     Attribute("c", "nominal", ("u", "v", "w"))),
                    Attribute("class", "nominal", ("p", "q", "r")))
    for labels, settles in ((y, True), (rng.permutation(y), False)):
        data = Dataset(schema, X, labels.astype(np.int64), np.ones(n), source="<toy>")
        finder = DecisionTree(criterion="gain_ratio").make_finder(data)
        with mock.patch.object(settled_tests, "evaluate_nodes") as search:
            split = settled_tests.settled_test(finder, np.arange(n), np.ones(n))
        search.assert_not_called()
        assert isinstance(split, Split) == settles
        if settles:
            want = finder.best_split(np.arange(n), np.ones(n))
            assert (split.feature, split.n_branches) == (2, 3) == (want.feature,
                                                                    want.n_branches)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    data=random_datasets(min_rows=20, max_rows=70, max_classes=19, missing=True),
    noise=st.sampled_from([0.0, 0.1, 0.3]),
    min_gain=st.sampled_from([0.0, 0.0, 0.1]),
    x_missing=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 2**32 - 1),
)
def test_exact_paths_with_gain_ratio_settled_tests_equal_whole_trees(data, noise, min_gain,
                                                                     x_missing, seed):
    """Nominal data under gain ratio: every group of nodes tries its settled test (no size
    limits), and the estimates are whole trees' bit for bit."""
    rng = np.random.default_rng(seed)
    data = _planted(_nominal_only(data), rng, "nominal", noise)
    learner = DecisionTree(criterion="gain_ratio", min_leaf=1.0, min_gain=min_gain)
    _settling_everywhere_equals_whole_trees(data, learner, x_missing, rng)


def _numerator(X, y, w, K, f, thr, value, gini, nominal):
    """A test's numerator on rows X, y, w, outright: the known part's n·impurity less its
    branches' (numeric: x <= thr left; nominal: one branch per value, or value vs rest)."""
    known = ~np.isnan(X[:, f])
    v = X[known, f]
    if not nominal:
        branch = (v > thr).astype(np.int64)
    elif value >= 0:
        branch = (v != value).astype(np.int64)
    else:
        branch = v.astype(np.int64)
    cnt = np.zeros((int(branch.max(initial=0)) + 1, K))
    np.add.at(cnt, (branch, y[known]), w[known])
    return float(_impurity_last(cnt.sum(axis=0), gini) - _impurity_last(cnt, gini).sum())


def _leading_test(data: Dataset, gini: bool, binary: bool):
    """(index, candidates) of the test of all of ``data`` that the bounds say leads with
    any x (slack 0), or None."""
    learner = DecisionTree(criterion="gini" if gini else "info_gain", min_leaf=1.0,
                           binary_splits=binary)
    found = settled_tests.candidates(learner.make_finder(data), np.arange(data.n_samples),
                                     data.weights)
    num, up, down, parent = found[3:7]
    if num.size < 2:
        return None
    best = int(np.argmax(num))
    if not settled_tests._leads(num, up, down, parent, np.arange(num.size) == best, 0.0):
        return None
    return best, found


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(data=random_datasets(min_rows=4, max_rows=16, max_classes=4, missing=True),
       gini=st.booleans(), binary=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_a_test_said_to_lead_leads_with_every_x(data, gini, binary, seed):
    """Where the bounds say R's best test leads, it leads on R ∪ {x} for x of any values
    (unknown ones too), class and weight up to 1: every test's numerator with x recomputed
    outright (small R, where the bounds are nearly tight)."""
    rng = np.random.default_rng(seed)
    n, K = data.n_samples, data.schema.n_classes
    leading = _leading_test(data, gini, binary)
    if leading is None:
        return
    best, (feature, threshold, value) = leading[0], leading[1][:3]
    nominal = data.schema.nominal_mask()
    for _ in range(30):  # x: values drawn from R's columns, some unknown; any class, weight
        x = data.X[rng.integers(n, size=data.X.shape[1]), np.arange(data.X.shape[1])]
        x[rng.random(x.size) < 0.3] = np.nan
        if rng.random() < 0.5:  # the best test's value unknown: only the others move
            x[feature[best]] = np.nan
        X, y = np.vstack([data.X, x]), np.r_[data.y, rng.integers(K)]
        w = np.r_[data.weights, rng.uniform(0.0, 1.0)]
        with_x = [_numerator(X, y, w, K, f, t, v, gini, nominal[f])
                  for f, t, v in zip(feature.tolist(), threshold.tolist(), value.tolist(),
                                     strict=True)]
        assert max(with_x) <= with_x[best] + 1e-9


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=random_datasets(min_rows=20, max_rows=50, max_classes=3, missing=True),
       kinds=st.sampled_from(["numeric", "nominal"]), gini=st.booleans(),
       binary=st.booleans(), noise=st.floats(0.1, 0.5), seed=st.integers(0, 2**32 - 1))
def test_a_lead_over_a_rival_of_the_same_parent_holds_against_the_worst_x(data, kinds, gini,
                                                                         binary, noise, seed):
    """Rivals whose known part has the leader's class counts trail by more than the larger
    of the leader's fall and their rise, not the sum: every x that could break such a lead —
    each value (or unknown) of the two tests' columns, each class, weights 1, 0.5, 0.1 —
    is tried outright against every rival that only this rule clears. Two planted columns
    without unknown values, one noisier, make such rivals."""
    rng = np.random.default_rng(seed)
    data = _planted(_planted(data, rng, kinds, 0.0, 0.0), rng, kinds, noise, 0.0)
    K = data.schema.n_classes
    leading = _leading_test(data, gini, binary)
    if leading is None:
        return
    best, (feature, threshold, value, num, up, down) = leading[0], leading[1][:6]
    near = np.flatnonzero((num[best] - down[best] - num[:, None] - up <= 0).any(axis=1))
    near = near[near != best]
    nominal = data.schema.nominal_mask()
    x = np.full(data.X.shape[1], np.nan)
    for t in near.tolist():
        f_best, f_t = int(feature[best]), int(feature[t])
        for a in [np.nan, *np.unique(data.X[~np.isnan(data.X[:, f_best]), f_best])]:
            for b in [np.nan, *np.unique(data.X[~np.isnan(data.X[:, f_t]), f_t])]:
                x[:] = np.nan
                x[f_t] = b
                x[f_best] = a  # one column: its value
                for c, wx in np.ndindex(K, 3):
                    X, y = np.vstack([data.X, x]), np.r_[data.y, c]
                    w = np.r_[data.weights, (1.0, 0.5, 0.1)[wx]]
                    mine, theirs = (_numerator(X, y, w, K, int(feature[i]), threshold[i],
                                               value[i], gini, nominal[feature[i]])
                                    for i in (best, t))
                    assert theirs <= mine + 1e-9
