"""The batched transductive engine gives exactly what growing whole trees gives.

Every certificate is exercised on small data (``cert_min_rows = 0``), with duplicated and
mirrored columns to create the exact ties the rescoring has to settle, and under
leave-one-out (a training row swapped for x). ``TREECERT_ENGINE_EXAMPLES`` raises the
number of random cases (CI uses the default).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import SAMPLE_DATA, assert_engines_agree, random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.schema import Attribute, Dataset, Schema
from treecert.errors import ConfigError
from treecert.transductive import budget, node_scores, node_search
from treecert.transductive.batch_engine import BatchEngine
from treecert.transductive.certificates import distinct_changes
from treecert.transductive.engine import TransductiveEngine
from treecert.transductive.leaf_forest import LeafForest
from treecert.transductive.node_search import evaluate_nodes, sorted_columns, value_ranks
from treecert.tree.classifier import DecisionTree
from treecert.tree.grow import grow


@pytest.fixture(autouse=True)
def certify_small_trees(monkeypatch):
    monkeypatch.setattr(BatchEngine, "cert_min_rows", 0)
    monkeypatch.setattr(BatchEngine, "rescore_min_rows", 0)
    # x's nodes of every size keep their children's rows and their counts by key
    monkeypatch.setattr(node_search, "MEMO_ROWS", 0)


def _with_tied_columns(data: Dataset, copy: bool, mirror: bool) -> Dataset:
    """Add a copy and/or a negated copy of the first numeric column (exact gain ties)."""
    num = [j for j, a in enumerate(data.schema.attributes) if not a.is_nominal]
    if not num or not (copy or mirror):
        return data
    cols, attrs = [data.X], list(data.schema.attributes)
    if copy:
        cols.append(data.X[:, num[:1]] * 3.0 + 1.0)
        attrs.append(Attribute("copy", "numeric"))
    if mirror:
        cols.append(-data.X[:, num[:1]])
        attrs.append(Attribute("mirror", "numeric"))
    schema = Schema(tuple(attrs), data.schema.class_attribute)
    return Dataset(schema, np.hstack(cols), data.y, data.weights, source=data.source)


def _jobs(data: Dataset, rows: np.ndarray):
    K = data.schema.n_classes
    return np.repeat(data.X[rows], K, axis=0), np.tile(np.arange(K), rows.size)


EXAMPLES = int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "150"))


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    data=random_datasets(min_rows=8, max_rows=60, missing=False),
    criterion=st.sampled_from(["info_gain", "gini"]),
    min_leaf=st.sampled_from([1.0, 2.0, 3.0]),
    binary=st.booleans(),
    rule=st.sampled_from(["midpoint", "lower"]),
    max_depth=st.sampled_from([None, 2, 4]),
    min_gain=st.sampled_from([0.0, 0.05]),
    copy=st.booleans(),
    mirror=st.booleans(),
)
def test_batch_engine_equals_whole_trees(data, criterion, min_leaf, binary, rule, max_depth,
                                         min_gain, copy, mirror):
    data = _with_tied_columns(data, copy, mirror)
    learner = DecisionTree(criterion=criterion, min_leaf=min_leaf, binary_splits=binary,
                           threshold=rule, max_depth=max_depth, min_gain=min_gain)
    n_test = 4
    train = data.subset(np.arange(data.n_samples - n_test))
    engine = TransductiveEngine(train, learner)
    X, labels = _jobs(data, np.arange(data.n_samples - n_test, data.n_samples))
    assert_engines_agree(engine, X, labels)
    # leave-one-out: training row r swapped for (x_r, c)
    rows = np.arange(0, train.n_samples, max(1, train.n_samples // 5))
    X, labels = _jobs(train, rows)
    drop = np.repeat(rows, train.schema.n_classes)
    assert_engines_agree(engine, X, labels, drop)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["credit-g", "diabetes", "iris", "weather.numeric"])
def test_batch_engine_equals_path_engine_on_sample_data(name, monkeypatch):
    from treecert.data.loading import load_dataset

    monkeypatch.setattr(BatchEngine, "cert_min_rows", 64)  # as shipped
    monkeypatch.setattr(BatchEngine, "rescore_min_rows", 64)
    data = load_dataset(SAMPLE_DATA / f"{name}.arff")
    n = data.n_samples
    test_rows = np.arange(0, n, max(1, n // 25))
    train = data.subset(np.setdiff1d(np.arange(n), test_rows))
    for criterion in ("info_gain", "gini"):
        engine = TransductiveEngine(train, DecisionTree(criterion=criterion))
        X, labels = _jobs(data, test_rows)
        fast = engine.estimates(X, labels, engine="fast")
        np.testing.assert_array_equal(fast, engine.estimates(X, labels, engine="path"))
        rows = np.arange(0, train.n_samples, max(1, train.n_samples // 12))
        X, labels = _jobs(train, rows)
        drop = np.repeat(rows, train.schema.n_classes)
        np.testing.assert_array_equal(engine.estimates(X, labels, drop, engine="fast"),
                                      engine.estimates(X, labels, drop, engine="path"))


def test_collapse_takes_the_edited_engine():
    from treecert.transductive.edited_trees import EditedEngine

    learner = DecisionTree(collapse=True)
    schema = Schema((Attribute("a", "numeric"),), Attribute("class", "nominal", ("p", "q")))
    data = Dataset(schema, np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([0, 0, 1, 1]),
                   np.ones(4), source="<toy>")
    engine = TransductiveEngine(data, learner)
    assert isinstance(engine._batch_engine(), EditedEngine)
    X = np.array([[2.5], [2.5]])
    np.testing.assert_array_equal(engine.estimates(X, [0, 1]),
                                  engine.estimates(X, [0, 1], engine="naive"))
    # the plain batched engine, built directly, refuses to ignore the edits
    with pytest.raises(ConfigError, match="collapse and cp"):
        BatchEngine(data, learner).estimates(X, np.array([0, 1]), np.full(2, -1))


def grow_leaves(finder, roots, rank):
    """The leaves of a tree grown from each root, driven as grow_batch drives the forest."""
    forest = LeafForest(finder)
    for i, (rows, w, depth) in enumerate(roots):
        forest.add(i, rows, w, depth)
    while forest.growing:
        forest.advance(evaluate_nodes(finder, forest.open_nodes(), rank))
    return forest.leaves(len(roots))


GROWING = st.fixed_dictionaries({
    "criterion": st.sampled_from(["info_gain", "gini"]), "min_leaf": st.sampled_from([1.0, 2.0]),
    "binary_splits": st.booleans(), "max_depth": st.sampled_from([None, 3])})


@settings(max_examples=60, deadline=None)
@given(data=random_datasets(min_rows=4, max_rows=60, missing=False), growing=GROWING,
       seed=st.integers(0, 2**32 - 1), ranked=st.booleans())
def test_leaf_forest_grows_the_growers_leaves(data, growing, seed, ranked):
    """The subtrees hanging off x's paths, grown together leaves-only, have exactly the
    leaves (class counts, numbers of rows) of the grower's tree on the same rows."""
    learner = DecisionTree(**growing)
    n = data.n_samples
    finder = learner.make_finder(data, eligible=np.ones(n, dtype=bool))
    rng = np.random.default_rng(seed)
    roots = []
    for _ in range(int(rng.integers(1, 6))):
        rows = np.flatnonzero(rng.random(n) < rng.uniform(0.2, 1.0))
        if rows.size:
            roots.append((rows, data.weights[rows], int(rng.integers(0, 3))))
    got = grow_leaves(finder, roots, value_ranks(finder) if ranked else None)
    assert len(got) == len(roots)
    for (rows, w, depth), (counts, n_rows) in zip(roots, got, strict=True):
        g = grow(finder, rows, w, depth=depth)
        size = np.diff(g.rows_ptr)
        leaf = (g.feature < 0) & (size > 0)
        want = np.column_stack([g.counts[leaf], size[leaf]])
        have = np.column_stack([counts, n_rows])
        order_w, order_h = np.lexsort(want.T[::-1]), np.lexsort(have.T[::-1])
        np.testing.assert_array_equal(have[order_h], want[order_w])


def test_split_searches_in_parts_equal_one_batch(monkeypatch):
    """A long list of nodes is searched in parts (bounded memory) with the same results."""
    import treecert.transductive.node_search as node_search
    from treecert.data.loading import load_dataset

    data = load_dataset(SAMPLE_DATA / "credit-g.arff")
    finder = DecisionTree().make_finder(data, eligible=np.ones(data.n_samples, dtype=bool))
    rng = np.random.default_rng(3)
    nodes = []
    for size in rng.integers(2, 400, 30):
        rows = np.sort(rng.choice(data.n_samples, size, replace=False))
        nodes.append((rows, data.weights[rows]))
    whole = node_search.evaluate_nodes(finder, nodes, value_ranks(finder))
    monkeypatch.setattr(node_search, "SEARCH_CELLS", 2000)  # a few nodes per part
    parts = node_search.evaluate_nodes(finder, nodes, value_ranks(finder))
    assert sum(s is not None for s in whole) > 20
    for a, b in zip(whole, parts, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert (a.feature, a.n_branches, a.score) == (b.feature, b.n_branches, b.score)
            np.testing.assert_array_equal(a.threshold, b.threshold)
            np.testing.assert_array_equal(
                np.asarray(a.value_branch if a.value_branch is not None else []),
                np.asarray(b.value_branch if b.value_branch is not None else []))


@settings(max_examples=max(8, EXAMPLES // 15), deadline=None)
@given(
    data=random_datasets(min_rows=8, max_rows=60, max_classes=5, missing=False),
    min_leaf=st.sampled_from([1.0, 2.0, 3.0]),
    binary=st.booleans(),
    rule=st.sampled_from(["midpoint", "lower"]),
    max_depth=st.sampled_from([None, 3]),
    min_gain=st.sampled_from([0.0, 0.05]),
    copy=st.booleans(),
)
def test_gain_ratio_certificates_equal_whole_trees(data, min_leaf, binary, rule, max_depth,
                                                   min_gain, copy):
    """J48's rule (average-gain filter, MDL-corrected numeric gains) replayed on intervals
    (:mod:`treecert.transductive.ratio_scores`): certified walks equal whole trees, also
    with duplicated columns (exact ties) and under leave-one-out (not certified)."""
    data = _with_tied_columns(data, copy, False)
    learner = DecisionTree(criterion="gain_ratio", min_leaf=min_leaf, binary_splits=binary,
                           threshold=rule, max_depth=max_depth, min_gain=min_gain)
    train = data.subset(np.arange(data.n_samples - 4))
    engine = TransductiveEngine(train, learner)
    X, labels = _jobs(data, np.arange(data.n_samples - 4, data.n_samples))
    assert_engines_agree(engine, X, labels)
    rows = np.arange(0, train.n_samples, max(1, train.n_samples // 4))
    X, labels = _jobs(train, rows)
    assert_engines_agree(engine, X, labels, np.repeat(rows, train.schema.n_classes))


def test_gain_ratio_certificates_serve_the_venn_rows():
    """The Venn machine's walk uses the same gain-ratio certificates (certifying every
    node here): equal to whole trees."""
    from treecert.data.loading import load_dataset
    from treecert.methods import make_method

    data = load_dataset(SAMPLE_DATA / "credit-g.arff")  # numeric and nominal attributes
    train, test = data.subset(np.arange(1, 240, 2)), data.subset(np.arange(0, 240, 30))
    spec = "venn:taxonomy=leaf,criterion=gain_ratio,binary_splits=True"
    a = make_method(spec).fit(train).predict(test)
    b = make_method(spec + ",engine=naive").fit(train).predict(test)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.lower, b.lower)


@settings(max_examples=max(20, EXAMPLES // 3), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gini=st.booleans(), integral=st.booleans(),
       K=st.integers(1, 7))
def test_plus_many_equals_plus_bit_for_bit(seed, gini, integral, K):
    """Exact rescoring, batched: :meth:`CountRows.plus_many` gives each change's
    :meth:`CountRows.plus` to the bit (unit changes, larger single-class changes, swaps
    e_c − w·e_y, counts pushed below zero; integer counts read x ln x from the table)."""
    from treecert.transductive.certificates import CountRows, xlogx_table

    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 9, size=(3, 4, K)).astype(float)
    if not integral:
        counts = counts * 0.75
    table = None if gini or not integral else xlogx_table(np.full(8 * K * 12, 1.0))
    rows = CountRows(counts, gini, table)
    eye = np.eye(K)
    D = [eye[c] for c in range(K)] + [2.0 * eye[K - 1], -eye[0]]
    D += [eye[c] - eye[int(rng.integers(K))] * rng.choice([1.0, 0.5]) for c in range(K)]
    D = np.array(D)
    got = rows.plus_many(D)
    for d, g in zip(D, got, strict=True):
        assert g.tobytes() == np.asarray(rows.plus(d), dtype=float).tobytes()


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("criterion", ["info_gain", "gini"])
def test_rescoring_changes_together_equals_one_at_a_time(criterion, binary, monkeypatch):
    """:class:`NodeScores` rescoring many class changes in one pass (and in passes of one
    change each, the memory bound) gives each change's arrays to the bit; so does a large
    node's value order read from D's ranks instead of sorted."""
    import treecert.transductive.node_scores as node_scores
    from treecert.data.loading import load_dataset

    data = load_dataset(SAMPLE_DATA / "credit-g.arff")  # numeric and nominal attributes
    engine = BatchEngine(data, DecisionTree(criterion=criterion, binary_splits=binary))
    tree = engine.base_sub.tree
    K = data.schema.n_classes
    D = np.vstack([np.eye(K), np.eye(K) - np.eye(K)[::-1], 2.0 * np.eye(K)[:1]])
    keys = [tuple(d.tolist()) for d in D]
    comp = engine._competitors()
    num = [f for f, a in enumerate(data.schema.attributes) if not a.is_nominal]
    rank = dict(zip(num, sorted_columns(data.X, np.array(num))[0], strict=True))
    nodes = [int(v) for v in np.flatnonzero(~tree.is_leaf)[:12]]  # root: rows sorted by rank
    together = [node_scores.NodeScores(engine.base_sub, v, data, engine.params, engine.gini,
                                       comp and comp.table, rank)._arrays(keys)
                for v in nodes]
    monkeypatch.setattr(node_scores, "RESCORE_CELLS", 1)
    for v, arrays in zip(nodes, together, strict=True):
        for i, k in enumerate(keys):
            alone = node_scores.NodeScores(engine.base_sub, v, data, engine.params,
                                           engine.gini, comp and comp.table)._arrays([k])
            for a, b in zip(arrays, alone, strict=True):
                assert a[i].tobytes() == b[0].tobytes()


@settings(max_examples=max(20, EXAMPLES // 3), deadline=None)
@given(st.integers(1, 8), st.lists(st.integers(0, 7), max_size=40),
       st.lists(st.tuples(st.integers(0, 39), st.integers(0, 7), st.sampled_from([1.0, 0.5])),
                max_size=3))
def test_distinct_changes_equal_unique_rows(K, labels, swaps):
    """The walk's grouping of class changes gives np.unique's keys and inverse, for unit
    changes (bincount) and for leave-one-out swaps e_c - w e_y (np.unique itself)."""
    D = np.eye(K)[np.array(labels, dtype=np.int64) % K].reshape(-1, K)
    for row, y, w in swaps:
        if D.shape[0]:
            D[row % D.shape[0], y % K] -= w
    keys, group = distinct_changes(D)
    want_keys, want_group = np.unique(D, axis=0, return_inverse=True)
    np.testing.assert_array_equal(keys, want_keys)
    np.testing.assert_array_equal(group, want_group.ravel())


@settings(max_examples=max(20, EXAMPLES // 3), deadline=None)
@given(data=random_datasets(min_rows=8, max_rows=60, missing=False),
       binary=st.booleans(), drops=st.booleans())
def test_equal_row_keys_name_equal_rows(data, binary, drops):
    """The keys the engine gives its nodes' training rows (``BatchEngine._child_key``) —
    grouping, searches and caches trust them — name equal rows and weights, with and
    without a dropped row, on x's paths and on the Venn machine's hanging subtrees."""
    from treecert.methods.venn_fast import TreeVennBatch
    from treecert.transductive import batch_engine

    seen: dict = {}

    def check(key, rows, w):
        got = seen.setdefault(key, (rows.copy(), w.copy()))
        np.testing.assert_array_equal(got[0], rows)
        np.testing.assert_array_equal(got[1], w)

    real_counts = batch_engine.node_counts_stops

    def counts(finder, nodes, x_last=False, keys=None, memo=None):
        for (rows, w, _), key in zip(nodes, keys, strict=True):
            check(key, rows[:-1], w[:-1])
        return real_counts(finder, nodes, x_last, keys, memo)

    class Forgetful(budget.ByteLRU):  # every node's rows found anew, never by its key
        def get(self, key, default=None):
            return default

    real_hanging = BatchEngine.hanging_leaves

    def hanging(self, rows, w, depth, forest, grown, key=None):
        check(("hanging", *key), rows, w)
        return real_hanging(self, rows, w, depth, forest, grown, key)

    learner = DecisionTree(binary_splits=binary)
    train = data.subset(np.arange(data.n_samples - 3))
    rows = np.arange(0, train.n_samples, 2)
    X, labels = _jobs(train, rows)
    drop = np.repeat(rows, train.schema.n_classes) if drops else None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(batch_engine, "node_counts_stops", counts)
        mp.setattr(BatchEngine, "hanging_leaves", hanging)
        engine = TreeVennBatch(train, learner)
        engine._x_nodes = Forgetful(0)
        engine.memo = Forgetful(budget.LEAF_BYTES, on_evict=engine._forget_leaf_set)
        engine.grow_batch(X, labels, drop, paths_only=drops)


def _competitor_bound(sub, data, params, gini: bool, v: int, d: np.ndarray) -> float:
    """The largest gain of any test of node ``v`` but its own once ``d`` joins the node
    and the branch that favours the test most, scored test by test from class counts."""
    from treecert.tree.impurity import _impurity_last

    def imp(c):
        return float(_impurity_last(np.asarray(c, dtype=float), gini))

    tree, K = sub.tree, data.schema.n_classes
    rows, w, y = sub.rows[v], sub.w[v], data.y[sub.rows[v]].astype(np.int64)
    P, ml = tree.counts[v], float(params.min_leaf)
    N, ep = P.sum() + d.sum(), imp(P + d)
    f1, t1 = int(tree.feature[v]), float(tree.threshold[v])
    best = -np.inf
    for f, attr in enumerate(data.schema.attributes):
        vals = data.X[rows, f]
        if not attr.is_nominal:
            for a, b in zip(*(lambda s: (s[:-1], s[1:]))(np.unique(vals)), strict=True):
                left = vals <= a
                L = np.bincount(y[left], weights=w[left], minlength=K)
                if L.sum() < ml or P.sum() - L.sum() < ml or (f == f1 and a <= t1 < b):
                    continue
                for side in (L, P - L):
                    rest = P - side
                    best = max(best, (ep - imp(side + d) - imp(rest)) / N)
            continue
        cnt = np.stack([np.bincount(y[vals == u], weights=w[vals == u], minlength=K)
                        for u in range(len(attr.values))])
        bw = cnt.sum(axis=1)
        if not params.binary_splits:
            if f != f1 and (bw >= ml).sum() >= 2:
                e = [imp(c) for c in cnt]
                for u in range(len(cnt)):
                    best = max(best, (ep - sum(e) + e[u] - imp(cnt[u] + d)) / N)
            continue
        mine = np.zeros(len(cnt), dtype=bool)
        if f == f1:
            mine = tree.value_branch[tree.value_branch_ptr[v]:tree.value_branch_ptr[v + 1]] == 0
        for u in np.flatnonzero((bw >= ml) & (P.sum() - bw >= ml) & ~mine):
            for side in (cnt[u], P - cnt[u]):
                best = max(best, (ep - imp(side + d) - imp(P - side)) / N)
    return best


@pytest.mark.parametrize(("name", "criterion", "binary"),
                         [("credit-g", "info_gain", False), ("credit-g", "gini", True),
                          ("iris", "info_gain", False), ("weather.nominal", "info_gain", True)])
def test_competitor_bounds_are_every_other_tests_best_gain(name, criterion, binary):
    """The competitor bounds (:meth:`Competitors.upper_many`, the changes of one pass
    scored together) equal every other test's best gain with the change on its favoured side,
    scored test by test — so every test, not just the ones near the top, is in the table
    (Fayyad-Irani's skipped cuts never hold the maximum)."""
    from treecert.data.loading import load_dataset

    data = load_dataset(SAMPLE_DATA / f"{name}.arff")
    engine = BatchEngine(data, DecisionTree(criterion=criterion, binary_splits=binary))
    comp, sub = engine._competitors(), engine.base_sub
    K = data.schema.n_classes
    D = np.vstack([np.eye(K), 2.0 * np.eye(K)[:1]])
    got = comp.upper_many(D)
    internal = np.flatnonzero(~sub.tree.is_leaf)
    assert internal.size and np.isnan(got[:, sub.tree.is_leaf]).all()
    for i, d in enumerate(D):
        want = [_competitor_bound(sub, data, engine.params, engine.gini, int(v), d)
                for v in internal]
        np.testing.assert_allclose(got[i, internal], want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["credit-g", "soybean"])
def test_competitor_bounds_tabled_as_walked_equal_the_whole_tree_s(name):
    """The competitor bound tables a node's candidates when a walk first reaches it, in
    groups of the nodes new at once: bounds asked for a few nodes at a time (groups that
    overlap, the same node asked again) are the bounds of the whole tree's one pass, and the
    nodes not asked for stay unknown (NaN)."""
    from treecert.data.loading import load_dataset

    data = load_dataset(SAMPLE_DATA / f"{name}.arff")
    if np.isnan(data.X).any():  # the base tree is grown on complete data
        data = data.subset(np.flatnonzero(~np.isnan(data.X).any(axis=1)))
    K = data.schema.n_classes
    D = np.vstack([np.eye(K), np.eye(K)[1] - np.eye(K)[0]])
    whole = BatchEngine(data, DecisionTree())._competitors().upper_many(D)
    engine = BatchEngine(data, DecisionTree())
    comp, sub = engine._competitors(), engine.base_sub
    internal = np.flatnonzero(~sub.tree.is_leaf)
    assert internal.size > 6
    asked = np.zeros(sub.tree.n_nodes, dtype=bool)
    rng = np.random.default_rng(0)
    for part in (internal[:3], sub.paths(np.zeros(4, np.int64), data.X[:4]),
                 rng.choice(internal, 5), internal[-2:]):
        got = comp.upper_many(D[rng.permutation(len(D))[:2]], part)
        asked[part] = True
        got = comp.upper_many(D, part)
        np.testing.assert_array_equal(got[:, part], whole[:, part])
        assert np.isnan(got[:, ~asked]).all()
    assert comp.upper_many(D).shape == whole.shape
    np.testing.assert_array_equal(comp.upper_many(D), whole)


def test_paths_are_the_internal_nodes_rows_pass():
    from treecert.data.loading import load_dataset

    data = load_dataset(SAMPLE_DATA / "credit-g.arff")
    sub = BatchEngine(data, DecisionTree()).base_sub
    start = np.zeros(7, dtype=np.int64)
    want = set()
    for i in range(7):
        v = 0
        while not sub.tree.is_leaf[v]:
            want.add(v)
            v = int(sub.children_for(np.array([v]), data.X[i:i + 1])[0])
    assert sub.paths(start, data.X[:7]).tolist() == sorted(want)
    assert sub.paths(start[:0], data.X[:0]).size == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 2000), st.integers(1, 4),
       st.sampled_from([0.02, 0.1, 0.3, 1.0]))
def test_value_order_from_ranks_is_the_stable_sort(seed, n, n_cols, share):
    """Exact rescoring's value order read from D's stable ranks — marked for a node holding
    much of D (more than ``MARK_ROWS`` rows), sorted for a small one — is the stable sort of the
    node's values, ties (few distinct values) by row."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, rng.integers(1, 6), size=(n, n_cols + 1)).astype(float)
    num = sorted(rng.choice(n_cols + 1, n_cols, replace=False).tolist())
    rank = {}
    for f in num:
        rank[f] = np.empty(n, dtype=np.int64)
        rank[f][np.argsort(X[:, f], kind="stable")] = np.arange(n)
    rows = np.flatnonzero(rng.random(n) < share)
    vals = X[rows][:, num]
    np.testing.assert_array_equal(node_scores._value_order(vals, rows, num, rank),
                                  np.argsort(vals, axis=0, kind="stable"))
