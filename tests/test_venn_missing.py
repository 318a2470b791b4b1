"""The Venn machine's forecast taxonomy with unknown values (in D and in x): the batched
whole trees (:mod:`treecert.transductive.venn_forest`) against growing each tree on
D ∪ {(x, j)} and calling ``predict_proba``, and the Venn matrices against the one-(x, j)-
at-a-time reference, bit for bit.

``TREECERT_VENN_EXAMPLES`` raises the number of random cases (CI uses the default).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from conftest import SAMPLE_DATA, random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.loading import load_dataset
from treecert.data.schema import Dataset
from treecert.methods import make_method
from treecert.transductive.venn_forest import Forecasts, grow_forest

TEST_DATA = Path(__file__).parent / "data"
EXAMPLES = int(os.environ.get("TREECERT_VENN_EXAMPLES", "12"))


def _split(data, every: int):
    test = np.arange(data.n_samples) % every == 0
    return data.subset(np.flatnonzero(~test)), data.subset(np.flatnonzero(test))


def _assert_same(spec: str, train, test) -> None:
    fast = make_method(spec).fit(train)
    assert fast.batch_ is not None
    a = fast.predict(test)
    b = make_method(spec + ",engine=naive").fit(train).predict(test)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)
    # the size, read from the forest that grew the tree on D with the jobs' trees
    assert fast.size == fast.engine_.base[0].n_leaves


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=random_datasets(min_rows=8, max_rows=40, missing=True),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
       min_leaf=st.sampled_from([1.0, 2.0]), binary=st.booleans(),
       base=st.sampled_from(["frequency", "laplace", "m_estimate"]))
def test_venn_with_missing_values_equals_one_at_a_time(data, criterion, min_leaf, binary,
                                                        base):
    train, test = _split(data, 5)
    _assert_same(f"venn:base={base},criterion={criterion},min_leaf={min_leaf},"
                 f"binary_splits={binary}", train, test)


@settings(max_examples=max(2, EXAMPLES // 4), deadline=None)
@given(data=random_datasets(min_rows=30, max_rows=50, max_classes=19, missing=True),
       criterion=st.sampled_from(["info_gain", "gain_ratio"]), binary=st.booleans())
def test_venn_with_missing_values_and_many_classes(data, criterion, binary):
    train, test = _split(data, 16)
    _assert_same(f"venn:criterion={criterion},min_leaf=1,binary_splits={binary}", train, test)


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=random_datasets(min_rows=6, max_rows=30, missing=True),
       criterion=st.sampled_from(["info_gain", "gain_ratio"]), binary=st.booleans(),
       kind=st.sampled_from(["frequency", "laplace", "m_estimate"]))
def test_forest_forecasts_equal_each_trees_predict_proba(data, criterion, binary, kind):
    """Every example's forecast in every job's tree, as the tree grown alone predicts it —
    x with unknown values too (its own row, blanked)."""
    train, test = _split(data, 4)
    method = make_method(f"venn:criterion={criterion},min_leaf=1,binary_splits={binary}")
    method.fit(train)
    batch, engine = method.batch_, method.engine_
    n, K = batch.n, batch.K
    Q = test.X.copy()
    Q[::2, 0] = np.nan  # x lacks a value
    Xq, labels = np.repeat(Q, K, axis=0), np.tile(np.arange(K), Q.shape[0])
    J = labels.size
    finder, rank = batch._augmented(Xq, labels)
    forest = grow_forest(finder, batch._roots(J, np.full(J, -1)), rank)
    job, row = np.repeat(np.arange(J), n + 1), np.tile(np.arange(n + 1), J)
    F = Forecasts(forest, finder.X, np.where(row < n, row, n + job), job, kind, 1.0, 2.0)
    F = F.take(np.arange(J * (n + 1))).reshape(J, n + 1, K)
    for i in range(J):
        Xa = np.vstack([train.X, Xq[i]])
        tree = engine.tree_with(Xq[i], int(labels[i]), engine="naive")
        np.testing.assert_array_equal(F[i], tree.predict_proba(Xa, kind))


def test_soybean_rows_equal_the_reference():
    """19 classes, 10 % unknown values, multiway nominal tests."""
    data = load_dataset(SAMPLE_DATA / "soybean.arff")
    train, test = data.subset(np.arange(2, 150)), data.subset(np.array([0, 1]))
    _assert_same("venn:min_leaf=2", train, test)


def test_cli_evaluate_venn_on_data_with_unknown_values(tmp_path, capsys):
    """``treecert evaluate labor.arff --method venn`` (a third of its values unknown) through
    the real entry point, on the batched machine: every row predicted, inside its interval."""
    import pandas as pd
    from conftest import run_cli

    code, _, err = run_cli(["evaluate", TEST_DATA / "labor.arff", "--method", "venn",
                            "--folds-file", TEST_DATA / "labor.folds.csv", "-o", tmp_path],
                           capsys)
    assert code == 0, err
    pred = pd.read_csv(tmp_path / "predictions.csv")
    assert len(pred) == 57
    for c in ("bad", "good"):
        assert (pred[f"lower_{c}"] <= pred[f"p_{c}"]).all()
        assert (pred[f"p_{c}"] <= pred[f"upper_{c}"]).all()
    np.testing.assert_allclose(pred.p_bad + pred.p_good, 1.0)


def test_size_with_edits_is_the_edited_trees_leaves():
    """With ``cp`` or ``collapse`` the Venn machine's size is the edited tree's leaf count,
    as a plain tree with the same options reports it (it once reported the unedited tree:
    317 leaves for 11 on credit-g with cp=0.01). Complete data walks, blanks grow a forest."""
    data = load_dataset(TEST_DATA / "credit-g.arff")
    train, test = _split(data, 10)
    X = train.X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.02] = np.nan
    blanked = Dataset(train.schema, X, train.y, train.weights, source=train.source)
    for fit_on in (train, blanked):
        unedited = make_method("laplace").fit(fit_on).size
        for edits in ("cp=0.01", "collapse=true", "collapse=true,cp=0.005"):
            venn = make_method(f"venn:{edits}").fit(fit_on)
            venn.predict(test.subset(np.arange(3)))
            plain = make_method(f"laplace:{edits}").fit(fit_on).size
            assert venn.size == plain < unedited
