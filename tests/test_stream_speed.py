"""The shortcuts that make streamed ``predict`` fast give what the general code
gives, bit for bit: the tree descent for rows without unknown values against
``route_weighted``, and the CSV writer's grouped paths on blocks as large as a streamed
chunk against ``pandas.DataFrame.to_csv``."""

from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.csv_writer import write_columns
from treecert.tree.arrays import mix_leaves, route_weighted
from treecert.tree.classifier import DecisionTree


def _routed(tree, X):
    """``apply_weighted`` by the general routine (what it gave before the shortcut)."""
    n = X.shape[0]
    return route_weighted(X, np.arange(n), np.zeros(n, dtype=np.int64),
                          tree.branch_fraction[tree.children], tree.feature, tree.threshold,
                          tree.children_ptr, tree.children, tree.value_branch_ptr,
                          tree.value_branch)


@settings(max_examples=40, deadline=None)
@given(data=random_datasets(min_rows=8, max_rows=60, missing=True), binary=st.booleans(),
       seed=st.integers(0, 2**16))
def test_complete_rows_descend_as_route_weighted_routes_them(data, binary, seed):
    tree = DecisionTree(min_leaf=1.0, binary_splits=binary).fit(data).tree_
    rng = np.random.default_rng(seed)
    X = data.X[rng.integers(0, data.n_samples, 50)]
    complete = X[~np.isnan(X).any(axis=1)]
    for rows in (complete, complete[:1], X):  # with an unknown value: the general routine
        got = tree.apply_weighted(rows)
        want = _routed(tree, rows)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
        per_node = tree.leaf_estimates("laplace")
        mixed = mix_leaves(want, per_node, rows.shape[0])
        expected = mixed / mixed.sum(axis=1, keepdims=True)
        assert tree.predict_proba(rows, "laplace").tobytes() == expected.tobytes()


def test_a_single_leaf_tree_sends_every_row_to_the_root(weather):
    tree = DecisionTree(min_leaf=100.0).fit(weather).tree_
    assert tree.n_nodes == 1
    row, leaf, weight = tree.apply_weighted(weather.X)
    np.testing.assert_array_equal(row, np.arange(14))
    np.testing.assert_array_equal(leaf, np.zeros(14))
    np.testing.assert_array_equal(weight, np.ones(14))


def _table(n: int, rng, tails: int, missing: bool) -> dict:
    labels = np.array(["neg", "pos", "a b"], dtype=object)
    leaf = rng.integers(0, tails, n)
    p = rng.random(tails)[leaf]
    actual = labels[rng.integers(0, 3, n)]
    if missing:
        actual[rng.random(n) < 0.1] = None
    return {"row": np.arange(1_000_000 - n // 2, 1_000_000 - n // 2 + n),
            "actual": actual, "predicted": labels[(p > 0.5).astype(int)],
            "p_pos": p, "p_neg": 1.0 - p, "certainty": np.maximum(p, 1.0 - p),
            "flag": p > 0.25}


@pytest.mark.parametrize(("tails", "missing"), [(40, False), (40, True), (5000, False)])
def test_write_columns_on_a_chunk_equals_to_csv(tails, missing):
    """A block of ~15,000 rows (pandas' factorisation, the tails grouped by checking
    columns, row numbers from digit tables across a power of ten; few and many tails)."""
    pd = pytest.importorskip("pandas")
    columns = _table(15_000, np.random.default_rng(tails), tails, missing)
    buf = io.StringIO()
    write_columns(columns, buf)
    assert buf.getvalue() == pd.DataFrame(columns).to_csv(index=False, lineterminator="\n")


def test_write_columns_leaves_a_nan_among_text_to_pandas():
    """A NaN in a text column is not None: pandas' factorisation would merge them, so the
    column goes to pandas, which writes it as it always did."""
    pd = pytest.importorskip("pandas")
    labels = np.array(["x", None, float("nan")], dtype=object)[np.arange(3000) % 3]
    columns = {"row": np.arange(3000), "label": labels, "p": np.zeros(3000)}
    buf = io.StringIO()
    write_columns(columns, buf)
    assert buf.getvalue() == pd.DataFrame(columns).to_csv(index=False, lineterminator="\n")


@pytest.mark.parametrize("last", ["text", "number"])
@pytest.mark.parametrize("quote", [False, True])
def test_a_short_row_in_a_large_text_is_still_found(last, quote):
    """pandas pads a short row; the comma count that finds it is spared only when no quote
    and no missing last cell leave room for one — here there is a short row, and it is
    reported with its line as before."""
    from treecert.data.csv_reader import PANDAS_MIN_CHARS, _parse_csv
    from treecert.errors import DataError

    cell = '"x"' if quote else "x"
    row = f"1.5,{cell},{'yes' if last == 'text' else '2.5'}"
    rows = [row] * (PANDAS_MIN_CHARS // len(row) + 10)
    rows[1234] = row.rsplit(",", 1)[0]  # one field short
    text = "a,b,c\n" + "\n".join(rows) + "\n"
    with pytest.raises(DataError, match=r"t\.csv, line 1236: expected 3 fields"):
        _parse_csv(text, "t.csv", lambda names: {"b", "c"} if last == "text" else {"b"})
    rows[1234] = row.rsplit(",", 1)[0] + ",?"  # a missing last value is not a short row
    table = _parse_csv("a,b,c\n" + "\n".join(rows) + "\n", "t.csv",
                       lambda names: {"b", "c"} if last == "text" else {"b"})
    assert table.weights.size == len(rows)
