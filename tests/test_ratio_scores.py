"""The gain-ratio rescoring by prefix and suffix maxima gives, on every row it decides,
the very intervals and checks of the rescoring of every cut
(:mod:`treecert.transductive.ratio_scores`), hence the same certificates.

``TREECERT_ENGINE_EXAMPLES`` raises the number of random cases (CI uses the default).
"""

from __future__ import annotations

import os

import numpy as np
from conftest import random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.schema import Attribute, Dataset, Schema
from treecert.transductive import ratio_scores
from treecert.transductive.batch_engine import BatchEngine
from treecert.tree.classifier import DecisionTree

EXAMPLES = int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "150"))


def _integral(data: Dataset, rng, copy: bool) -> Dataset:
    """Integer weights, and with ``copy`` a duplicate of the first numeric column (T1's
    twins: exact ties the grower settles for the lower column)."""
    w = rng.integers(1, 4, data.n_samples).astype(float)
    num = [j for j, a in enumerate(data.schema.attributes) if not a.is_nominal]
    X, attrs = data.X, list(data.schema.attributes)
    if copy and num:
        X = np.hstack([X, X[:, num[:1]]])
        attrs.append(Attribute("copy", "numeric"))
    return Dataset(Schema(tuple(attrs), data.schema.class_attribute), X, data.y, w,
                   source=data.source)


def test_top_two_of_every_prefix():
    A = np.array([[3.0, 1.0, 3.0, 5.0, -np.inf, 4.0], [-np.inf, -np.inf, 2.0, 2.0, 1.0, 7.0]])
    best, at, second = ratio_scores._top_two(A)
    for f in range(A.shape[0]):
        for s in range(A.shape[1] + 1):
            head = np.sort(A[f, :s])[::-1]
            assert best[f, s] == (head[0] if s else -np.inf)
            assert second[f, s] == (head[1] if s > 1 else -np.inf)
            if best[f, s] > -np.inf:
                assert at[f, s] == int(np.flatnonzero(A[f, :s] == best[f, s])[0])
            else:
                assert at[f, s] == -1


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    data=st.one_of(random_datasets(min_rows=12, max_rows=70, max_classes=5, missing=False),
                   random_datasets(min_rows=25, max_rows=90, max_classes=12, missing=False)),
    min_leaf=st.sampled_from([1.0, 2.0]),
    binary=st.booleans(),
    rule=st.sampled_from(["midpoint", "lower"]),
    copy=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_prefix_rescoring_equals_every_cut(data, min_leaf, binary, rule, copy, seed):
    rng = np.random.default_rng(seed)
    data = _integral(data, rng, copy)
    K = data.schema.n_classes
    learner = DecisionTree(criterion="gain_ratio", min_leaf=min_leaf, binary_splits=binary,
                           threshold=rule)
    engine = BatchEngine(data, learner)
    tree = engine.base_sub.tree
    # x: training rows, and values between and beyond them
    Xq = np.vstack([data.X, data.X + rng.choice([-0.25, 0.0, 0.25], data.X.shape)])
    nominal = np.array([a.is_nominal for a in data.schema.attributes])
    Xq[:, nominal] = data.X[rng.integers(0, data.n_samples, Xq.shape[0])][:, nominal]
    for v in np.flatnonzero(~tree.is_leaf):
        scores = ratio_scores.RatioScores(engine.base_sub, v, data, learner.grow_params,
                                          engine.finder)
        if not scores.ok or not scores.num.size:
            continue
        for c in range(K):
            d = np.eye(K)[c]
            arrays = scores._arrays(d)
            Np = scores.N + 1.0
            B, F = Xq.shape[0], scores.num.size
            by_prefix, dense = _outputs(B, F), _outputs(B, F)
            crowded = scores._numeric_by_prefix(Xq, arrays, Np, *by_prefix)
            scores._numeric_dense(Xq, arrays, Np, *dense)
            decided = ~crowded
            for a, b in zip(by_prefix, dense, strict=True):
                np.testing.assert_array_equal(a[decided], b[decided])
            # and the certificates, rows decided either way
            D = np.tile(d, (B, 1))
            want = _certify(scores, Xq, D, prefix=False)
            np.testing.assert_array_equal(_certify(scores, Xq, D, prefix=True), want)


def _outputs(B: int, F: int) -> tuple:
    """Fresh (ok, g_lo, g_hi, s_lo, s_hi, sure, tied) of B rows and F numeric columns."""
    return (np.zeros((B, F), dtype=bool), *(np.zeros((B, F)) for _ in range(4)),
            np.ones(B, dtype=bool), np.zeros((B, F), dtype=bool))


def _certify(scores, Xq, D, prefix: bool) -> np.ndarray:
    saved = ratio_scores._PREFIX
    ratio_scores._PREFIX = prefix
    try:
        return scores.certify(Xq, D, 0.0)
    finally:
        ratio_scores._PREFIX = saved


@settings(max_examples=max(20, EXAMPLES // 3), deadline=None)
@given(data=random_datasets(min_rows=12, max_rows=70, max_classes=6, missing=False),
       rule=st.sampled_from(["midpoint", "lower"]), seed=st.integers(0, 2**32 - 1))
def test_cut_tables_in_steps_of_columns_equal_one_step(data, rule, seed):
    """The numeric cut tables built a few columns at a time (bounded memory on large nodes)
    are the tables built in one step, bit for bit; so are the twins and the verdict."""
    data = _integral(data, np.random.default_rng(seed), copy=True)
    learner = DecisionTree(criterion="gain_ratio", threshold=rule)
    engine = BatchEngine(data, learner)
    tree = engine.base_sub.tree
    saved = ratio_scores._TABLE_ELEMENTS
    for v in np.flatnonzero(~tree.is_leaf):
        built = []
        for elements in (saved, 1, 2 * data.n_samples * data.schema.n_classes):
            ratio_scores._TABLE_ELEMENTS = elements  # every column alone, two at a time
            try:
                built.append(ratio_scores.RatioScores(engine.base_sub, v, data,
                                                      learner.grow_params, engine.finder))
            finally:
                ratio_scores._TABLE_ELEMENTS = saved
        one, *steps = built
        for other in steps:
            assert other.ok == one.ok
            for name in ("thr", "L", "cut_ok", "n_cuts", "invalid", "twin"):
                np.testing.assert_array_equal(getattr(other, name), getattr(one, name))
