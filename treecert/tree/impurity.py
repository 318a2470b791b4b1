"""The grower's arithmetic: x ln x, impurity and split information, summed as numpy sums.

Bit-for-bit equality with the straightforward node-by-node computation is a hard requirement
(see :mod:`treecert.tree.grow`): tie-breaking rounds scores to ``_ROUND`` decimals, so one ulp
could change a tree. Sums over a small last axis (classes, branches) are therefore replicated
as numpy computes them (one term after the other below ``_SEQ_SUM`` terms, pairwise from
there), so that a score computed column by column equals the one a per-node computation gets.
Shared by the split search, the grower and the batched transductive engine.
"""

from __future__ import annotations

import numpy as np

from treecert.data.discretize import _ln_func
from treecert.tree.segments import flat_nonzero

_LN2 = np.log(2.0)
# Scores are compared after rounding to this many decimals (ties: see the split search).
_ROUND = 10
# numpy sums fewer than this many terms along an axis one after the other (then pairwise).
_SEQ_SUM = 8


# Arrays of at least this many elements, at most a fifth of them non-zero, take the log of
# their non-zero elements alone (:func:`_xlogx`): class counts padded to every value and class
# (many classes, columns of few values) are mostly zeros, and a log costs ~6 ns an element.
_SPARSE_SIZE = 4096
_SPARSE_SHARE = 0.2


def _xlogx(a: np.ndarray) -> np.ndarray:
    """``a * ln(a)`` where a > 0, else ``a * 0.0`` (a zero, its sign kept): Weka's ``lnFunc``
    (:func:`~treecert.data.discretize._ln_func`, the dense path), which counts a weight at or
    below 0 (a fractional difference rounded to just below 0) as 0. Both paths take the log
    of the positive elements alone with numpy's plain (unmasked) loop, so every element is
    the same bits on both, and need no error state (a third of a small call's cost)."""
    a = np.asarray(a, dtype=float)
    if a.size >= _SPARSE_SIZE and np.count_nonzero(a) <= _SPARSE_SHARE * a.size:
        a = np.ascontiguousarray(a)  # (a view's a * 0.0 keeps its strides: no flat view)
        out = a * 0.0
        at = flat_nonzero(a > 0)
        v = a.reshape(-1).take(at)
        out.reshape(-1)[at] = np.log(v) * v
        return out
    return _ln_func(a)


#: numpy's pairwise sum splits a run of more than this many terms in two halves.
_PW_BLOCK = 128


def _sum_cols(cols: list[np.ndarray]) -> np.ndarray:
    """Elementwise sum of the arrays in ``cols``, in the order numpy sums a last axis: one
    after the other below ``_SEQ_SUM`` terms; from there numpy's pairwise sum — eight
    running sums of every eighth term, combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
    (r6 + r7)), the terms left over added one by one; a run over ``_PW_BLOCK`` terms split
    in two halves (the first a multiple of 8) summed apart. Replayed array by array, not
    by stacking the columns and summing (letter-shaped data's 26 classes: a copy into an
    interleaved array, and numpy's loop per short row, 3-5x the additions'); a property
    test checks it against numpy's own sum."""
    n = len(cols)
    if n < _SEQ_SUM:
        total = cols[0]
        for c in cols[1:]:
            total = total + c
        return total
    if n > _PW_BLOCK:
        half = n // 2 - (n // 2) % 8
        return _sum_cols(cols[:half]) + _sum_cols(cols[half:])
    run = list(cols[:8])
    i = 8
    while i < n - n % 8:
        run = [run[j] + cols[i + j] for j in range(8)]
        i += 8
    total = ((run[0] + run[1]) + (run[2] + run[3])) + ((run[4] + run[5]) + (run[6] + run[7]))
    for c in cols[i:]:
        total = total + c
    return total


def _lastsum(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=-1)`` exactly as numpy computes it for each (contiguous) row."""
    if a.shape[-1] >= _SEQ_SUM or a.shape[-1] == 0:
        return np.ascontiguousarray(a).sum(axis=-1)
    return _sum_cols([a[..., k] for k in range(a.shape[-1])])


def _impurity(cols: list[np.ndarray], gini: bool) -> np.ndarray:
    """N * impurity (entropy in bits, or Gini) from per-class count arrays."""
    total = _sum_cols(cols)
    if gini:
        sq = _sum_cols([c * c for c in cols])
        with np.errstate(invalid="ignore", divide="ignore"):
            out = total - sq / total
        return np.where(total > 0, out, 0.0)
    return (_xlogx(total) - _sum_cols([_xlogx(c) for c in cols])) / _LN2


def _impurity_last(counts: np.ndarray, gini: bool) -> np.ndarray:
    """N * impurity over the last axis (classes) of ``counts``: :func:`_impurity` of its
    columns, the same numbers added in the same order, in a few whole-array operations
    (one call per class costs more than the arithmetic with many classes)."""
    return _total_and_impurity(counts, gini)[1]


def _total_and_impurity(counts: np.ndarray, gini: bool) -> tuple[np.ndarray, np.ndarray]:
    """The weight (:func:`_lastsum`) and :func:`_impurity_last` of ``counts``, for callers
    that need both: the total is summed once."""
    if counts.shape[-1] == 0:
        return np.zeros(counts.shape[:-1]), np.zeros(counts.shape[:-1])
    counts = np.asarray(counts, dtype=float)
    total = _lastsum(counts)
    if gini:
        sq = _lastsum(counts * counts)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = total - sq / total
        return total, np.where(total > 0, out, 0.0)
    return total, _entropy_of_terms(_xlogx(total), _xlogx(counts))


def _entropy_of_terms(total_term: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """N·entropy in bits from x ln x of the total and of each class weight (last axis):
    :func:`_impurity_last`'s last step, for callers that hold those terms already."""
    return (total_term - _lastsum(terms)) / _LN2


def unit_rise(z) -> np.ndarray:
    """δ(z) = (z + 1) log2(z + 1) - z log2 z (elementwise, z >= 0): how much one unit added
    to a class of weight z raises n·entropy — the bound of the engine's proofs that one
    instance cannot change a test. z log2(1 + 1/z) is written with log1p above 1 (no
    cancellation for large z) and as z (log1p(z) - ln z) below (no overflow of 1/z)."""
    z = np.asarray(z, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tail = np.where(z > 1.0, z * np.log1p(1.0 / z), z * (np.log1p(z) - np.log(z)))
    return np.log2(z + 1.0) + np.where(z > 0, tail / _LN2, 0.0)


def _split_info(branch_weights: list[np.ndarray], unknown, total) -> np.ndarray:
    """C4.5 split information in bits; the unknown weight counts as one more branch."""
    return _split_info_of(_sum_cols([_xlogx(b) for b in branch_weights]), unknown, total)


def _split_info_of(sum_xlogx: np.ndarray, unknown, total) -> np.ndarray:
    """:func:`_split_info` from the branches' summed x ln x. The unknown weight is the
    node's total less its known weight: with fractional weights it can round to just below
    0, which counts as 0 (Weka's ``lnFunc``), not as a NaN that would void the test."""
    s = _xlogx(total) - sum_xlogx
    s = s - _xlogx(np.maximum(unknown, 0.0))
    return s / _LN2 / total
