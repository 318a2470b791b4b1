"""collapse and cp in the batched engine (:mod:`treecert.transductive.edited_trees`): TPCE's
and K&K's estimates, the edited trees themselves and the Venn machine, bit for bit what
growing each tree on D ∪ {(x, c)} whole and editing it (``engine=naive``) gives — missing
values in D and in x, every criterion, multiway and binary tests, 2-9 classes,
leave-one-out; and ``--j48 --method tpce`` through the real entry point.

``TREECERT_EDITS_EXAMPLES`` raises the number of random cases (CI uses the default).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import SAMPLE_DATA, random_datasets, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.loading import load_dataset
from treecert.data.schema import Dataset
from treecert.methods import make_method
from treecert.transductive.edited_trees import EditedEngine, apply_edits, walkable
from treecert.transductive.engine import TransductiveEngine
from treecert.transductive.venn_forest import grow_forest
from treecert.tree.arrays import Tree, collapse, prune_to_cp
from treecert.tree.classifier import DecisionTree
from treecert.tree.grow import grow

EXAMPLES = int(os.environ.get("TREECERT_EDITS_EXAMPLES", "12"))

#: (collapse, cp): each edit alone and both, cp across rpart's useful range
edits = st.tuples(st.booleans(), st.sampled_from([0.0, 0.001, 0.005, 0.01, 0.03, 0.1])).filter(
    lambda e: e[0] or e[1] > 0)


def _learner(criterion, binary, min_leaf, edit) -> DecisionTree:
    return DecisionTree(criterion=criterion, binary_splits=binary, min_leaf=min_leaf,
                        collapse=edit[0], cp=edit[1])


def _test_rows(data, every: int):
    """Every ``every``-th row for testing, half of them with a value blanked (x with an
    unknown value follows every branch)."""
    test = np.arange(data.n_samples) % every == 0
    Q = data.X[test].copy()
    Q[::2, 0] = np.nan
    return data.subset(np.flatnonzero(~test)), Q


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=random_datasets(min_rows=9, max_rows=36, max_classes=9),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]), binary=st.booleans(),
       min_leaf=st.sampled_from([1.0, 2.0]), edit=edits, count_x=st.booleans())
def test_estimates_equal_whole_edited_trees(data, criterion, binary, min_leaf, edit,
                                            count_x):
    train, Q = _test_rows(data, 4)
    engine = TransductiveEngine(train, _learner(criterion, binary, min_leaf, edit))
    assert isinstance(engine._batch_engine(), EditedEngine)
    K = train.schema.n_classes
    X, labels = np.repeat(Q, K, axis=0), np.tile(np.arange(K), Q.shape[0])
    np.testing.assert_array_equal(engine.estimates(X, labels, count_x=count_x),
                                  engine.estimates(X, labels, count_x=count_x, engine="naive"))


@settings(max_examples=max(2, EXAMPLES // 2), deadline=None)
@given(data=random_datasets(min_rows=8, max_rows=30, max_classes=5),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]), binary=st.booleans(),
       edit=edits)
def test_leave_one_out_equals_whole_edited_trees(data, criterion, binary, edit):
    """A training row swapped for x with each label (TPCE's and K&K's leave-one-out)."""
    engine = TransductiveEngine(data, _learner(criterion, binary, 1.0, edit))
    K = data.schema.n_classes
    rows = np.arange(0, data.n_samples, 3)
    X, labels = np.repeat(data.X[rows], K, axis=0), np.tile(np.arange(K), rows.size)
    drop = np.repeat(rows, K)
    np.testing.assert_array_equal(engine.estimates(X, labels, drop),
                                  engine.estimates(X, labels, drop, engine="naive"))


def _nested(counts, feature, threshold, kids_of, u):
    """Node u's subtree as nested tuples (exact counts), whatever the numbering."""
    return (int(feature[u]), None if np.isnan(threshold[u]) else float(threshold[u]),
            tuple(counts[u].tolist()),
            tuple(_nested(counts, feature, threshold, kids_of, int(c)) for c in kids_of(u))
            if feature[u] >= 0 else ())


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=random_datasets(min_rows=6, max_rows=30, max_classes=6),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]), binary=st.booleans(),
       edit=edits, walked=st.booleans(), loo=st.booleans())
def test_edited_forest_holds_each_jobs_edited_tree(data, criterion, binary, edit, walked,
                                                   loo):
    """Every job's tree in the edited forest — grown whole (unknown values), or composed
    from the certified walk on complete data (``walked``, its certificates on small trees too),
    x new or swapped for a training row (``loo``) — is the tree grown whole and edited by
    tree.arrays' collapse and prune_to_cp: every node, not only x's leaves."""
    from treecert.transductive.batch_engine import BatchEngine
    from treecert.transductive.walked_trees import walked_forest

    if walked:  # complete data, integer weights (leave-one-out rows walk only then)
        X = np.where(np.isnan(data.X), 0.0, data.X)
        data = Dataset(data.schema, X, data.y, np.round(data.weights + 0.5),
                       source=data.source)
    train, Q = _test_rows(data, 3)
    learner = _learner(criterion, binary, 1.0, edit)
    saved = BatchEngine.cert_min_rows, BatchEngine.rescore_min_rows
    BatchEngine.cert_min_rows = BatchEngine.rescore_min_rows = 0
    try:
        batch = EditedEngine(train, learner)
    finally:
        BatchEngine.cert_min_rows, BatchEngine.rescore_min_rows = saved
    batch.cert_min_rows = batch.rescore_min_rows = 0
    K, n = batch.K, batch.n
    if loo:
        Q = train.X[: max(1, n // 3)]
    if walked:
        Q = np.where(np.isnan(Q), 0.0, Q)
    Xq, labels = np.repeat(Q, K, axis=0), np.tile(np.arange(K), Q.shape[0])
    J = labels.size
    drop = np.repeat(np.arange(Q.shape[0]), K) if loo else np.full(J, -1)
    finder, rank = batch._augmented(Xq, labels)
    roots = batch._roots(J, drop)
    if walked:
        assert walkable(batch, Xq, drop).all()
        forest = walked_forest(batch, batch.grow_batch(Xq, labels, drop), labels, drop,
                               finder, rank)
        forest = apply_edits(learner, forest, J)
    else:
        forest = apply_edits(learner, grow_forest(finder, roots, rank), J)
    for i, (rows, w) in enumerate(roots):
        tree = Tree.from_grown(grow(finder, rows, w))
        if learner.collapse:
            tree = collapse(tree)
        if learner.cp > 0:
            tree = prune_to_cp(tree, learner.cp)
        got = _nested(forest.counts, forest.feature, forest.threshold,
                      lambda u: forest.kids[forest.kid_ptr[u]:forest.kid_ptr[u + 1]], i)
        assert got == _nested(tree.counts, tree.feature, tree.threshold, tree.children_of, 0)
    assert n == train.n_samples


@settings(max_examples=max(2, EXAMPLES // 2), deadline=None)
@given(data=random_datasets(min_rows=8, max_rows=30, max_classes=5),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]), binary=st.booleans(),
       edit=edits, base=st.sampled_from(["frequency", "laplace", "m_estimate"]),
       taxonomy=st.sampled_from(["forecast", "leaf"]))
def test_venn_with_edits_equals_one_at_a_time(data, criterion, binary, edit, base, taxonomy):
    test = np.arange(data.n_samples) % 5 == 0
    train, tst = data.subset(np.flatnonzero(~test)), data.subset(np.flatnonzero(test))
    spec = (f"venn:base={base},taxonomy={taxonomy},criterion={criterion},min_leaf=1,"
            f"binary_splits={binary},collapse={edit[0]},cp={edit[1]}")
    fast = make_method(spec).fit(train)
    assert fast.batch_ is not None and not fast.batch_.walks
    a = fast.predict(tst)
    b = make_method(spec + ",engine=naive").fit(train).predict(tst)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)


@pytest.mark.parametrize("name", ["vote", "diabetes"])
def test_j48_and_cp_on_real_data(name):
    """Missing values (vote) and numeric tests (diabetes): TPCE and K&K with J48's tree and
    with cp equal engine=naive."""
    data = load_dataset(SAMPLE_DATA / f"{name}.arff")
    train, test = data.subset(np.arange(40, 200)), data.subset(np.arange(0, 40, 4))
    for tree in ("criterion=gain_ratio,threshold=lower,collapse=true", "cp=0.01"):
        for method in ("tpce", "kk"):
            fast = make_method(f"{method}:{tree}").fit(train).predict(test)
            naive = make_method(f"{method}:{tree},engine=naive").fit(train).predict(test)
            np.testing.assert_array_equal(fast.proba, naive.proba)
            np.testing.assert_array_equal(fast.certainty, naive.certainty)


def test_cli_j48_tpce_evaluates(capsys, tmp_path):
    """``--j48`` sets collapse, and TPCE follows it (the real entry point)."""
    code, out, err = run_cli(["evaluate", SAMPLE_DATA / "weather.nominal.arff", "--j48",
                              "--method", "tpce", "--method", "kk", "--method", "venn",
                              "--folds", "2"], capsys)
    assert code == 0, err
    assert "tpce" in out and "kk" in out and "venn" in out


def test_cli_path_engine_with_collapse_is_refused(capsys):
    code, _, err = run_cli(["evaluate", SAMPLE_DATA / "weather.nominal.arff", "--collapse",
                            "--method", "tpce:engine=path", "--folds", "2"], capsys)
    assert code == 2
    assert "engine=path follows only x's paths" in err
