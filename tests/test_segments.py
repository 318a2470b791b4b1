"""Segmented cumulative sums (:func:`treecert.tree.segments._segment_cumsum`) equal each
segment's own ``np.cumsum`` bit for bit — one array or a stack of them (the numeric search
cumulates the eligible weight and every class's weight as one stack), exact segments
(dyadic weights, summed in one global pass) and inexact ones (one by one) mixed. And
:func:`~treecert.tree.segments.unique_rows` is ``np.unique(..., axis=0)``; the helpers that
replace numpy's Python-level idioms on hot paths (``flat_nonzero``, ``run_starts``,
``run_lengths``, ``offsets``, ``run_max``) give the idioms' arrays, and
``first_max_of_runs`` picks each run's first largest entry as a loop over the runs does;
``_segment_sums`` and ``_ragged_sums`` are each segment's own ``sum()``."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.tree.segments import (
    _exact_segments,
    _ragged_sums,
    _segment_cumsum,
    _segment_sums,
    first_max_of_runs,
    flat_nonzero,
    offsets,
    run_lengths,
    run_max,
    run_starts,
    unique_rows,
)


@settings(max_examples=200, deadline=None)
@given(lens=st.lists(st.integers(0, 12), min_size=1, max_size=8),
       seed=st.integers(0, 2**32 - 1), n=st.integers(1, 3), p=st.integers(1, 3),
       dyadic=st.floats(0.0, 1.0))
def test_segment_cumsum_equals_each_segment_s_cumsum(lens, seed, n, p, dyadic):
    rng = np.random.default_rng(seed)
    lens = np.array(lens, dtype=np.int64)
    seg = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=seg[1:])
    M, G = int(seg[-1]), lens.size
    node = np.repeat(np.arange(G), lens)
    # per segment dyadic weights (exact sums) or fractional ones (C4.5's shares)
    frac = rng.random(G) >= dyadic
    w = np.where(frac[node], rng.choice([0.1, 1 / 3, 0.7, 1 / 7, 2.9], M),
                 rng.choice([0.0, 0.5, 1.0, 2.0], M))
    exact = _exact_segments(w, node, G)
    # n arrays (some weights zeroed: another class's), each in p orders within segments
    # (the sorted columns: every row sums to the same per segment)
    stack = np.empty((n, p, M))
    for i in range(n):
        wi = w * (rng.random(M) < 0.6)
        for j in range(p):
            order = np.concatenate([np.zeros(0, np.int64)] + [
                rng.permutation(np.arange(a, b)) for a, b in pairwise(seg.tolist())])
            stack[i, j] = wi[order]
    totals = np.array([[stack[i, 0, a:b].sum() for a, b in pairwise(seg.tolist())]
                       for i in range(n)])
    want = stack.copy()
    for i in range(n):
        for a, b in pairwise(seg.tolist()):
            want[i, :, a:b] = np.cumsum(stack[i, :, a:b], axis=1)
    got = _segment_cumsum(stack.copy(), seg, exact, totals)
    assert got.tobytes() == want.tobytes()
    for i in range(n):  # and each array alone
        got = _segment_cumsum(stack[i].copy(), seg, exact, totals[i])
        assert got.tobytes() == want[i].tobytes()


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 60), k=st.integers(0, 6),
       levels=st.integers(1, 4), ints=st.booleans())
def test_unique_rows_is_numpy_s_unique_over_rows(seed, n, k, levels, ints):
    """Few distinct values per column (many equal rows, rows equal on a prefix), floats
    and integers, signed zeros, no rows or no columns: the same distinct rows in the same
    order, and the same inverse."""
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, 1.5, -2.25, 1e-300, 3.0])[:levels + 1]
    a = rng.choice(pool, size=(n, k))
    if ints:
        a = (a * 4).astype(np.int64)
    keys, inverse = unique_rows(a)
    want_keys, want_inverse = np.unique(a, axis=0, return_inverse=True)
    np.testing.assert_array_equal(keys, want_keys)
    np.testing.assert_array_equal(inverse, want_inverse.ravel())
    assert inverse.shape == (n,)
    np.testing.assert_array_equal(keys[inverse], a)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shape=st.lists(st.integers(0, 7), min_size=1, max_size=3),
       levels=st.integers(1, 4), transpose=st.booleans())
def test_flat_nonzero_is_numpy_s_flatnonzero(seed, shape, levels, transpose):
    a = np.random.default_rng(seed).integers(0, levels, size=shape)
    a = a.T if transpose else a  # a non-contiguous view too
    for arr in (a, a > 0, a.astype(float)):
        got = flat_nonzero(arr)
        assert got.dtype == np.flatnonzero(arr).dtype
        assert np.array_equal(got, np.flatnonzero(arr))


@settings(max_examples=200, deadline=None)
@given(key=st.lists(st.integers(0, 3), min_size=1, max_size=40), floats=st.booleans())
def test_run_starts_and_lengths_are_numpy_s_idioms(key, floats):
    key = np.array(key, dtype=float if floats else np.int64)
    starts = run_starts(key)
    assert np.array_equal(starts, np.r_[True, key[1:] != key[:-1]])
    first = np.flatnonzero(starts)
    lengths = run_lengths(first, key.size)
    assert lengths.dtype == np.int64
    assert np.array_equal(lengths, np.diff(np.r_[first, key.size]))
    assert lengths.sum() == key.size


def test_run_helpers_of_nothing_are_empty():
    assert run_starts(np.empty(0)).shape == (0,)
    assert run_lengths(np.empty(0, dtype=np.int64), 0).shape == (0,)


@settings(max_examples=300, deadline=None)
@given(lens=st.lists(st.integers(1, 9), min_size=1, max_size=8),
       seed=st.integers(0, 2**32 - 1), levels=st.integers(1, 4))
def test_first_max_of_runs_is_each_run_s_first_largest(lens, seed, levels):
    """Few distinct values, so runs hold ties (the first one counts), -inf and -0.0 too."""
    pool = np.array([-np.inf, -0.0, 0.0, 0.5, 2.0])[:levels + 1]
    values = np.random.default_rng(seed).choice(pool, size=sum(lens))
    first = np.cumsum([0, *lens[:-1]])
    k, run_max, each = first_max_of_runs(values, first)
    for r, (a, n) in enumerate(zip(first.tolist(), lens, strict=True)):
        run = values[a:a + n]
        assert k[r] == a + int(np.argmax(run))  # argmax: the first of the largest
        assert run_max[r] == run.max()
        assert np.array_equal(each[a:a + n], np.full(n, run.max()))


def test_exact_segments_need_dyadic_weights_and_a_total_below_2_to_the_32():
    node = np.array([0, 0, 1, 1, 2])
    assert _exact_segments(np.array([1.0, 0.5, 2.0, 0.25, 3.0]), node, 3).tolist() == [True] * 3
    # one segment's weights not dyadic: only it is summed node by node
    w = np.array([1.0, 0.5, 0.1, 1.0, 3.0])
    assert _exact_segments(w, node, 3).tolist() == [True, False, True]
    # the exact segments' total reaches 2**32: none is exact any more, dyadic or not
    for w in (np.array([2.0**31, 2.0**31, 1.0, 1.0, 0.0]),
              np.array([2.0**31, 2.0**31, 0.1, 1.0, 0.0])):
        assert not _exact_segments(w, node, 3).any()
    assert _exact_segments(np.empty(0), np.empty(0, np.int64), 2).tolist() == [True, True]


@settings(max_examples=200, deadline=None)
@given(lens=st.lists(st.integers(0, 9), max_size=12), as_list=st.booleans(),
       int32=st.booleans())
def test_offsets_are_zero_then_the_cumulative_lengths(lens, as_list, int32):
    arg = lens if as_list else np.array(lens, dtype=np.int32 if int32 else np.int64)
    got = offsets(arg)
    assert got.dtype == np.int64
    assert np.array_equal(got, np.r_[0, np.cumsum(np.array(lens, dtype=np.int64))])


@settings(max_examples=200, deadline=None)
@given(lens=st.lists(st.integers(1, 9), min_size=1, max_size=8),
       seed=st.integers(0, 2**32 - 1))
def test_run_max_is_each_run_s_maximum_repeated(lens, seed):
    values = np.random.default_rng(seed).normal(size=sum(lens))
    first = np.cumsum([0, *lens[:-1]])
    want = np.concatenate([np.full(n, values[a:a + n].max())
                           for a, n in zip(first.tolist(), lens, strict=True)])
    assert np.array_equal(run_max(values, first), want)


@settings(max_examples=200, deadline=None)
@given(lens=st.lists(st.integers(0, 200), min_size=1, max_size=30),
       seed=st.integers(0, 2**32 - 1), zeros=st.floats(0.0, 0.5), exact=st.floats(0.0, 1.0))
def test_segment_sums_are_each_segment_s_sum(lens, seed, zeros, exact):
    """Segment totals, exact segments in one pass and the others one by one (numpy's
    pairwise order, by its reduction called directly), are each segment's own ``sum()``
    bit for bit — -0.0, scales from 1e-6 to 1e6 and, for ``_ragged_sums``, empty
    segments included."""
    rng = np.random.default_rng(seed)
    lens = np.array(lens, dtype=np.int64)
    seg = offsets(lens)
    x = rng.random(int(seg[-1])) * 10.0 ** rng.integers(-6, 7, int(seg[-1]))
    x[rng.random(x.size) < zeros] = rng.choice([0.0, -0.0])
    dyadic = rng.random(x.size) < 0.5  # quarters: exact in any order, some segments all
    x[dyadic] = rng.integers(0, 8, int(dyadic.sum())) / 4.0
    node = np.arange(lens.size).repeat(lens)
    is_exact = _exact_segments(x, node, lens.size) & (rng.random(lens.size) < exact)
    own = np.array([x[a:b].sum() for a, b in pairwise(seg.tolist())])
    ragged = _ragged_sums(x, seg, is_exact)
    inexact = ~is_exact
    np.testing.assert_array_equal(ragged[inexact].view(np.int64), own[inexact].view(np.int64))
    np.testing.assert_allclose(ragged, own, rtol=1e-12, atol=0)
    full = lens > 0
    if full.all():
        got = _segment_sums(x, seg, is_exact)
        np.testing.assert_array_equal(got[inexact].view(np.int64), own[inexact].view(np.int64))
        np.testing.assert_allclose(got, own, rtol=1e-12, atol=0)
