"""The split search shared by the labels of one x (the label search of the batched
engine) chooses what the grower's search of every node R ∪ {(x, c)} chooses, bit for bit,
with its tables of R built at once or found in its cache.

``TREECERT_ENGINE_EXAMPLES`` raises the number of random cases (CI uses the default).
"""

from __future__ import annotations

import os
from unittest import mock

import numpy as np
from conftest import random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.schema import Attribute, Dataset, Schema
from treecert.transductive import cut_tables, label_search, node_search
from treecert.transductive.budget import ByteLRU
from treecert.transductive.node_search import evaluate_nodes, value_ranks
from treecert.tree.classifier import DecisionTree
from treecert.tree.segments import _ranges

EXAMPLES = int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "150"))


def _with_ties(data: Dataset, rng, runs: bool, positive: bool = False) -> Dataset:
    """Integer weights (zeros too, unless ``positive``) and a copy of the first numeric
    column (exact ties); with ``runs``, many distinct values and classes in runs along the
    first numeric column (long stretches of cuts the Fayyad–Irani rule skips, near-ties
    beside them)."""
    K = data.schema.n_classes
    w = rng.integers(int(positive), 4, data.n_samples).astype(float)
    w[:K] = 1.0
    num = [j for j, a in enumerate(data.schema.attributes) if not a.is_nominal]
    X, y, attrs = data.X.copy(), data.y.copy(), list(data.schema.attributes)
    if num and runs:
        X[:, num] = np.round(rng.normal(size=(X.shape[0], len(num))), 1)
        x0 = X[:, num[0]]
        y = np.minimum(((x0 - x0.min()) / (np.ptp(x0) + 1e-9) * K).astype(np.int64), K - 1)
        y = np.where(rng.random(y.size) < 0.1, rng.integers(0, K, y.size), y)
        y[:K] = np.arange(K)
    if num:
        X = np.hstack([X, X[:, num[:1]] * 2.0 - 1.0])
        attrs.append(Attribute("copy", "numeric"))
    return Dataset(Schema(tuple(attrs), data.schema.class_attribute), X, y, w,
                   source=data.source)


#: The searches drawn: data, the learner's settings, a seed for nodes, weights and ties.
_SEARCHES = {
    "data": st.one_of(
        random_datasets(min_rows=6, max_rows=50, max_classes=5, missing=False),
        random_datasets(min_rows=22, max_rows=80, max_classes=19, missing=False)),
    "criterion": st.sampled_from(["info_gain", "gini", "gain_ratio"]),
    "min_leaf": st.sampled_from([0.0, 1.0, 2.0, 3.0]),
    "binary": st.booleans(),
    "rule": st.sampled_from(["midpoint", "lower"]),
    "min_gain": st.sampled_from([0.0, 0.05]),
    "seed": st.integers(0, 2**32 - 1),
    "runs": st.booleans(),
}


def _assert_same_splits(got: list, want: list) -> None:
    """The grower's splits, bit for bit: feature, branches, score, threshold, value map."""
    for a, b in zip(got, want, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert (a.feature, a.n_branches, a.score) == (b.feature, b.n_branches, b.score)
            np.testing.assert_array_equal(a.threshold, b.threshold)
            assert (a.value_branch is None) == (b.value_branch is None)
            if a.value_branch is not None:
                np.testing.assert_array_equal(a.value_branch, b.value_branch)


@settings(max_examples=EXAMPLES, deadline=None)
@given(**_SEARCHES, tallied=st.booleans())
def test_shared_search_equals_the_growers(data, criterion, min_leaf, binary, rule, min_gain,
                                          seed, runs, tallied):
    """``tallied``: every node's cuts from its value tallies (positive weights), else from
    its sorted columns wherever tallies would not pay."""
    rng = np.random.default_rng(seed)
    data = _with_ties(data, rng, runs, positive=tallied)
    K, n = data.schema.n_classes, data.n_samples - 3
    learner = DecisionTree(criterion=criterion, min_leaf=min_leaf, binary_splits=binary,
                           threshold=rule, min_gain=min_gain)
    train, Xq = data.subset(np.arange(n)), data.X[n:]
    groups, jobs = [], []  # (R, w, x, labels); per job: (R, x's appended row)
    for _ in range(4):
        R = np.flatnonzero(rng.random(n) < rng.uniform(0.3, 1.0))
        i = int(rng.integers(0, Xq.shape[0]))
        labels = rng.permutation(K)[:int(rng.integers(1, K + 1))]
        groups.append((R, train.weights[R], Xq[i], labels.tolist()))
        jobs += [(R, i, int(c)) for c in labels]
    X_aug = np.vstack([train.X, Xq[[i for _, i, _ in jobs]]])
    y_aug = np.concatenate([train.y, [c for _, _, c in jobs]])
    elig = np.r_[np.ones(n, dtype=bool), np.zeros(len(jobs), dtype=bool)]
    finder = learner.make_finder(train, eligible=elig, X=X_aug, y=y_aug)
    assert label_search.covers(finder, train.weights)
    rank = value_ranks(finder)
    want = evaluate_nodes(finder, [(np.r_[R, n + j], np.r_[train.weights[R], 1.0])
                                   for j, (R, _, _) in enumerate(jobs)], rank)
    # without a cache, then twice through one (tables built, then found; or evicted at
    # once by a budget of one byte); the last time in parts of one node each
    cache = ByteLRU(1 if rng.random() < 0.5 else 1 << 30)
    for held, tiny in ((None, False), (cache, False), (cache, True)):
        cells = label_search.SEARCH_CELLS, label_search.PAIR_CELLS
        if tiny:
            label_search.SEARCH_CELLS = label_search.PAIR_CELLS = 1
        try:
            with mock.patch.object(cut_tables, "TALLY_ROWS_PER_CELL",
                                   0.0 if tallied else cut_tables.TALLY_ROWS_PER_CELL):
                got = [s for found in label_search.search_groups(finder, groups, rank, held)
                       for s in found]
        finally:
            label_search.SEARCH_CELLS, label_search.PAIR_CELLS = cells
        _assert_same_splits(got, want)


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), K=st.integers(2, 19), p=st.integers(1, 4),
       distinct=st.integers(1, 12), n_nodes=st.integers(1, 6),
       criterion=st.sampled_from(["info_gain", "gain_ratio"]),
       rule=st.sampled_from(["midpoint", "lower"]), min_leaf=st.sampled_from([1.0, 2.0, 5.0]),
       zero=st.booleans(), share=st.sampled_from([0.0, 0.5, 2.0]))
def test_tallied_cuts_equal_the_sorted_ones(seed, K, p, distinct, n_nodes, criterion, rule,
                                            min_leaf, zero, share):
    """The cuts of a node from its (value, class) tallies are its sorted columns' cuts, bit
    for bit and in the same order: columns of few distinct values (some repeated in another
    column, some never a midpoint: adjacent floats), classes in runs (cuts the Fayyad-Irani
    rule skips), integer weights, nodes mixed between the two ways by ``share``. A weight
    of 0 (``zero``) sends every node to the sorted columns."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    levels = np.sort(rng.normal(size=distinct) * 10.0)
    levels[-1] = np.nextafter(levels[0], np.inf) if distinct > 1 else levels[-1]
    X = rng.choice(levels, size=(n, p))
    X[:, -1] = np.round(X[:, -1])  # fewer values still
    y = np.minimum((np.argsort(np.argsort(X[:, 0], kind="stable")) * K) // n, K - 1)
    y = np.where(rng.random(n) < 0.2, rng.integers(0, K, n), y).astype(np.int64)
    schema = Schema(tuple(Attribute(f"a{j}", "numeric") for j in range(p)),
                    Attribute("class", "nominal", tuple(f"c{k}" for k in range(K))))
    data = Dataset(schema, X, y, np.ones(n), source="<random>")
    finder = DecisionTree(criterion=criterion, threshold=rule, min_leaf=min_leaf).make_finder(
        data, eligible=np.ones(n, dtype=bool))
    rank = value_ranks(finder)
    nodes = [np.flatnonzero(rng.random(n) < rng.uniform(0.1, 1.0)) for _ in range(n_nodes)]
    nodes = [r for r in nodes if r.size] or [np.arange(n)]
    lens = np.array([r.size for r in nodes])
    rows = np.concatenate(nodes)
    w = rng.integers(1, 4, rows.size).astype(float)
    if zero:
        w[int(rng.integers(0, w.size))] = 0.0
    seg = np.r_[0, np.cumsum(lens)]
    node = np.repeat(np.arange(lens.size), lens)
    N = np.bincount(node, weights=w, minlength=lens.size)
    want = cut_tables.sorted_cuts(finder, rows, w, seg, node, rank, N)
    with mock.patch.object(cut_tables, "TALLY_ROWS_PER_CELL", share):
        tallied = cut_tables.tallies_pay(finder, rank, lens, w)
        got = cut_tables.valid_cuts(finder, rows, w, seg, node, rank, N)
    assert not (zero and tallied.any())
    assert tallied.all() or share > 0 or zero
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@settings(max_examples=EXAMPLES, deadline=None)
@given(**_SEARCHES, share=st.sampled_from([0.0, 0.5]), infinite=st.booleans())
def test_search_alone_equals_the_growers(data, criterion, min_leaf, binary, rule, min_gain,
                                         seed, runs, share, infinite):
    """Nodes of training rows alone (no x: the hanging subtrees), the tallied ones chosen
    from their tables of R: the grower's splits, bit for bit — ties, runs of one class,
    adjacent floats (a midpoint that rounds onto the upper value becomes the lower one),
    infinite values (``infinite``), every node tallied (``share`` 0) or the usual share."""
    rng = np.random.default_rng(seed)
    data = _with_ties(data, rng, runs, positive=True)
    num = [j for j, a in enumerate(data.schema.attributes) if not a.is_nominal]
    X = data.X.copy()
    if num:
        odd = np.nextafter(1.0, 2.0)  # an odd last bit: the midpoint to the next float
        X[rng.random(X.shape[0]) < 0.2, num[0]] = odd  # rounds (to even) onto that one
        X[rng.random(X.shape[0]) < 0.2, num[0]] = np.nextafter(odd, 2.0)
        if infinite:
            X[rng.random(X.shape[0]) < 0.1, num[-1]] = np.inf
            X[rng.random(X.shape[0]) < 0.1, num[-1]] = -np.inf
    data = Dataset(data.schema, X, data.y, data.weights, source=data.source)
    learner = DecisionTree(criterion=criterion, min_leaf=min_leaf, binary_splits=binary,
                           threshold=rule, min_gain=min_gain)
    n = data.n_samples
    finder = learner.make_finder(data, eligible=np.ones(n, dtype=bool))
    rank = value_ranks(finder)
    nodes = [(R, data.weights[R]) for R in  # nodes hold rows (the grower's search's
             (np.flatnonzero(rng.random(n) < rng.uniform(0.3, 1.0)) for _ in range(5))
             if R.size]  # batches of nodes do not take empty ones)
    nodes += [(R, 3.0 * w) for R, w in nodes[:1]]  # the same rows, other weights
    want = evaluate_nodes(finder, nodes, rank)
    with mock.patch.object(cut_tables, "TALLY_ROWS_PER_CELL", share):
        tallied = cut_tables.tallies_pay(finder, rank, np.array([r.size for r, _ in nodes]),
                                         np.concatenate([w for _, w in nodes]))
        got = label_search.search_alone(finder, nodes, rank)
        # through a cache of splits by rows and weights: nodes met twice in one call and
        # again in the next; a budget of one entry, or room for all
        cache = ByteLRU(int(rng.choice([1, 1 << 20])))
        cached = [label_search.search_alone(finder, nodes + nodes[::-1], rank, cache)
                  for _ in range(2)]
    assert share > 0 or not num or tallied.all()
    _assert_same_splits(got, want)
    for splits in cached:
        _assert_same_splits(splits, want + want[::-1])


def test_value_codes_number_the_distinct_values_in_order():
    schema = Schema((Attribute("a", "numeric"), Attribute("b", "numeric")),
                    Attribute("class", "nominal", ("p", "q")))
    X = np.array([[3.0, 1.0], [1.0, 1.0], [3.0, 1.0], [-2.0, 1.0], [1.5, 1.0]])
    data = Dataset(schema, X, np.array([0, 1, 0, 1, 0]), np.ones(5), source="<toy>")
    finder = DecisionTree().make_finder(data, eligible=np.ones(5, dtype=bool))
    codes, values = cut_tables.value_codes(finder, value_ranks(finder))
    assert codes.tolist() == [[3, 1, 3, 0, 2], [0, 0, 0, 0, 0]]
    np.testing.assert_array_equal(values, [[-2.0, 1.0, 1.5, 3.0], [1.0] + [np.nan] * 3])


def test_not_covered_settings_are_named():
    """Fractional weights are not covered (the engine searches job by job); every
    criterion is."""
    schema = Schema((Attribute("a", "numeric"),), Attribute("class", "nominal", ("p", "q")))
    data = Dataset(schema, np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([0, 0, 1, 1]),
                   np.ones(4), source="<toy>")
    for learner, w, covered in ((DecisionTree(), np.ones(4), True),
                                (DecisionTree(criterion="gain_ratio"), np.ones(4), True),
                                (DecisionTree(), np.full(4, 0.5), False)):
        finder = learner.make_finder(data, eligible=np.ones(4, dtype=bool))
        assert label_search.covers(finder, w) is covered


def _two_class_nodes(Xq: np.ndarray, labels: list[int]):
    """A two-class finder over six training rows and the test rows ``Xq`` (ineligible), its
    value ranks, and one node (all six rows, test row j last) per test row."""
    schema = Schema((Attribute("a", "numeric"), Attribute("b", "numeric")),
                    Attribute("class", "nominal", ("p", "q")))
    X = np.array([[1.0, 5.0], [2.0, 4.0], [3.0, 3.0], [4.0, 2.0], [5.0, 1.0], [6.0, 0.0]])
    train = Dataset(schema, X, np.array([0, 0, 0, 1, 1, 1]), np.ones(6), source="<toy>")
    J = Xq.shape[0]
    finder = DecisionTree(min_leaf=1.0).make_finder(
        train, eligible=np.r_[np.ones(6, dtype=bool), np.zeros(J, dtype=bool)],
        X=np.vstack([X, Xq]), y=np.r_[train.y, labels])
    nodes = [(np.r_[np.arange(6), 6 + j], np.ones(7), Xq[j], labels[j]) for j in range(J)]
    return finder, value_ranks(finder), nodes


def _same_splits(got: list, want: list) -> bool:
    return [(s.feature, s.threshold, s.score) for s in got] == \
        [(s.feature, s.threshold, s.score) for s in want]


def test_nodes_of_an_x_with_an_unknown_value_are_searched_alone():
    finder, rank, nodes = _two_class_nodes(np.array([[np.nan, 2.5], [3.5, 2.5], [3.5, 2.5]]),
                                           [1, 0, 1])
    with mock.patch.object(label_search, "TWO_CLASS_ROWS", -1):  # tables for any node
        got = label_search.search_nodes(finder, nodes, rank, ByteLRU(1 << 20))
    assert _same_splits(got, evaluate_nodes(finder, [nd[:2] for nd in nodes], rank))


def test_two_class_nodes_take_a_table_only_above_the_size_that_pays():
    """With two classes a node of at most TWO_CLASS_ROWS training rows is searched alone (no
    table is built), a larger one through its table: the grower's splits either way."""
    finder, rank, nodes = _two_class_nodes(np.array([[3.5, 2.5], [3.5, 2.5], [1.5, 0.5]]),
                                           [0, 1, 1])
    want = evaluate_nodes(finder, [nd[:2] for nd in nodes], rank)
    for limit, tables in ((6, 0), (5, 1)):  # six training rows: alone, then one table of R
        cache = ByteLRU(1 << 20)
        with mock.patch.object(label_search, "TWO_CLASS_ROWS", limit):
            got = label_search.search_nodes(finder, nodes, rank, cache)
        assert len(cache) == tables
        assert _same_splits(got, want)


@settings(max_examples=EXAMPLES, deadline=None)
@given(left=st.lists(st.integers(0, 60), min_size=2, max_size=7),
       right_seed=st.integers(0, 2**32 - 1), gini=st.booleans(), x_left=st.booleans(),
       label=st.integers(0, 6))
def test_one_row_moves_a_cuts_gain_within_the_bound(left, right_seed, gini, x_left, label):
    """The lemma behind ``_within_reach``: x of any class on either side of a cut moves
    (N + 1)·gain to within δ(N) of R's N·gain (δ: ``_within_reach``'s, for one node)."""
    from treecert.tree.impurity import _impurity_last

    K = len(left)
    lc = np.array(left, dtype=float)
    rc = np.random.default_rng(right_seed).integers(0, 60, K).astype(float)
    T, c = lc + rc, label % K
    N = float(T.sum())
    if N == 0:
        return
    imp = lambda a: float(_impurity_last(a[None, :], gini)[0])  # noqa: E731
    n_gain = imp(T) - imp(lc) - imp(rc)
    e = np.eye(K)[c]
    with_x = imp(T + e) - imp(lc + e * x_left) - imp(rc + e * (not x_left))
    delta = (np.log2(N + 1.0) + N * np.log1p(1.0 / N) / np.log(2.0)) if not gini else 2.0
    assert abs(with_x - n_gain) <= delta + 1e-9 * (N + 1.0)
    # _within_reach keeps a cut 2δ below its column's best, drops one 2δ + 1 below
    table = cut_tables.NodeTable()
    table.n_gain = np.array([n_gain, n_gain - 2 * delta, n_gain - 2 * delta - 1.0])
    table.N, table.gain_span = N, float(np.ptp(table.n_gain))
    reach = label_search._within_reach([table], np.zeros(3, np.int64), np.zeros(3, np.int64),
                                       gini)
    assert reach.tolist() == [True, True, False]


@settings(max_examples=EXAMPLES, deadline=None)
@given(start=st.lists(st.integers(0, 40), min_size=2, max_size=7),
       rest_seed=st.integers(0, 2**32 - 1), moved=st.lists(st.integers(0, 5), min_size=2,
                                                           max_size=30),
       cls=st.integers(0, 6), gini=st.booleans(), x_left=st.booleans(),
       label=st.integers(0, 6), near_first=st.booleans())
def test_a_run_s_pruned_cuts_cannot_tie_the_best(start, rest_seed, moved, cls, gini, x_left,
                                                 label, near_first):
    """The chord bound of ``_rising_runs``: along a run of cuts that move rows of one class
    (x on one side of all of it) the gain is convex, so a cut it does not score rounds
    below the column's best: it can neither be nor tie the grower's choice. Cuts whose
    moves are small (ties are likely) and the two ends near or far apart are all drawn."""
    from treecert.tree.impurity import _impurity_last

    K = len(start)
    k, c = cls % K, label % K
    lc0 = np.array(start, dtype=float)  # left of the run's first cut
    rest = np.random.default_rng(rest_seed).integers(0, 40, K).astype(float)
    rest[k] += sum(moved)  # the moved rows start on the right
    T = lc0 + rest
    if T.sum() == 0:
        return
    step = np.cumsum([0, *moved]).astype(float)  # class k's weight moved at each cut
    left = lc0[None, :] + np.outer(step, np.eye(K)[k])  # (cuts, K): R left of each cut
    e = np.eye(K)[c]
    imp = lambda a: _impurity_last(np.atleast_2d(a), gini)  # noqa: E731
    tw = T.sum() + 1.0

    def gains(pl, pc):  # label-node pl is unused: one node, one label
        lx = left[pc] + e * x_left
        rx = (T - left[pc]) + e * (not x_left)
        return (imp(T + e) - imp(lx) - imp(rx)) / tw

    n = left.shape[0]
    g = gains(None, np.arange(n))
    ends = [0, n - 1] if near_first else [n - 1, 0]  # the near cut, the run's other end
    g_max = float(np.max(np.round(g[ends], 10)))
    if g[ends[0]] < g_max - 2e-10:  # the near cut is the end nearer the best
        ends = ends[::-1]
    near = ends[0]
    lo, hi = (0, n - 1) if near == 0 else (1, n)  # the runs beside it end at kept cuts
    starts, lens = label_search._rising_runs(
        gains, np.ones(n, np.int64), left.sum(axis=1), np.zeros(1, np.int64),
        np.array([near]), np.array([lo]), np.array([hi]), g[[near]], np.array([g_max]))
    cuts = _ranges(starts, lens)
    assert np.all((cuts >= 1) & (cuts <= n - 2))  # within the runs
    pruned = np.setdiff1d(np.arange(1, n - 1), cuts)
    assert np.all(np.round(g[pruned], 10) < g_max)
    # and a pruned cut is never above the chord: the lemma itself
    assert np.all(g[1:-1] <= np.maximum(g[0], g[-1]) + 1e-12)


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), K=st.integers(2, 19), n_cuts=st.integers(1, 40),
       scale=st.sampled_from([3, 50, 5000]), labels=st.integers(1, 19))
def test_the_shortcut_keeps_every_pair_near_its_best(seed, K, n_cuts, scale, labels):
    """``_near_best``'s O(1) gain of x added to one class agrees with the exact O(K) one to
    far below its slack: every pair whose exact gain is within 1e-9 of its (label, column)
    best is kept, ties and near-ties included (many equal counts at small scales)."""
    from treecert.tree.impurity import _impurity_last

    rng = np.random.default_rng(seed)
    T = rng.integers(0, scale, K).astype(float)
    if T.sum() == 0:
        return
    N = float(T.sum())
    left = np.array([rng.integers(0, t + 1) for t in T for _ in range(n_cuts)],
                    dtype=float).reshape(K, n_cuts).T  # (cuts, K), any counts within T
    right = T - left
    table = cut_tables.xlogx_of(DecisionTree().make_finder(
        Dataset(Schema((Attribute("a", "numeric"),), Attribute("c", "nominal", ("p", "q"))),
                np.zeros((1, 1)), np.zeros(1, np.int64), np.ones(1), source="t")), N + 1.0)
    e_left, e_right = cut_tables.nimp(left, False, table), cut_tables.nimp(right, False,
                                                                                 table)
    xl = rng.random(n_cuts) < 0.5
    lab = rng.integers(0, K, labels)
    Tx = T[None, :] + np.eye(K)[lab]
    parent = _impurity_last(Tx, False)
    tw = np.full(labels, N + 1.0)
    pl = np.repeat(np.arange(labels), n_cuts)
    pc = np.tile(np.arange(n_cuts), labels)
    col = rng.integers(0, 3, n_cuts)
    order = np.lexsort((pc, col[pc], pl))  # runs of (label-node, column), as _best_cuts
    pl, pc = pl[order], pc[order]
    key = pl * 3 + col[pc]
    e_other = np.where(xl, e_right, e_left)
    kept = label_search._near_best(table, lab, pl, pc, key, xl, left, right, left.sum(axis=1),
                                   np.full(n_cuts, N), e_left, e_right, e_other, parent, tw)
    xs = np.where(xl[pc][:, None], left[pc], right[pc])
    xs[np.arange(pc.size), lab[pl]] += 1.0
    e_x = cut_tables.nimp(xs, False, table)
    exact = (parent[pl] - np.where(xl[pc], e_x, e_other[pc])
             - np.where(xl[pc], e_other[pc], e_x)) / tw[pl]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    best = np.repeat(np.maximum.reduceat(exact, first), np.diff(np.r_[first, key.size]))
    assert np.all(kept[exact >= best - 1e-9])


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), p=st.integers(1, 4),
       G=st.integers(1, 8), mark_rows=st.integers(0, 300))
def test_rank_orders_equal_one_sort_per_column(seed, n, p, G, mark_rows):
    """Nodes ordered by marking their ranks (large nodes, here from ``mark_rows`` rows) or
    by a sort of (node, rank) keys (the others) — the same order as one sort per column."""
    rng = np.random.default_rng(seed)
    rank = np.stack([rng.permutation(n) for _ in range(p)])
    lens = rng.integers(0, n + 1, G)
    rows = np.concatenate([np.sort(rng.choice(n, m, replace=False)) for m in lens])
    seg = np.r_[0, np.cumsum(lens)]
    node = np.repeat(np.arange(G), lens)
    want = np.stack([np.argsort(node * n + rank[k, rows], kind="stable") for k in range(p)])
    with mock.patch.object(node_search, "MARK_ROWS", mark_rows):
        got = node_search.rank_orders(rank, rows, seg, node)
    np.testing.assert_array_equal(got, want)
