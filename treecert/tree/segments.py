"""Batches of nodes laid end to end, and sums over their segments that are exact bit for bit.

The split search scores many nodes at once: their rows are laid end to end, node g owning the
segment ``seg[g]:seg[g+1]`` (:class:`_Batch`), and each numeric column is sorted within every
segment. Every floating-point sum over a segment must equal the one a node-by-node computation
takes: segmented (cumulative) sums are exact when the weights are dyadic (integer weights:
always) and are then taken in one pass over all segments; the others are re-done node by
node. Where sums are exact, ties in a column may be sorted in any order
(:func:`_exact_any_order`). Also here, as the other array helpers: :func:`unique_rows`,
:func:`counted_unique`, :func:`flat_nonzero`, :func:`offsets`, :func:`run_starts`,
:func:`run_lengths`, :func:`run_max` and :func:`first_max_of_runs`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

# Weights that are multiples of 2**-20 summing to less than 2**32 add up exactly in float64,
# in any order: segmented sums of such weights can be taken with one global cumsum.
_DYADIC = 2.0**20
_EXACT_TOTAL = 2.0**32


def flat_nonzero(a: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(a)`` for an array: the same indices without numpy's Python-level
    dispatch and wrappers (~10 000 instructions a call, several times the work on the small
    masks of a tree level; ``np.flatnonzero`` runs ~2 400 times in a 10-fold plain tree CV
    on diabetes)."""
    return a.ravel().nonzero()[0]


def run_starts(key: np.ndarray) -> np.ndarray:
    """Whether each entry of ``key`` (1-D) starts a run of equal keys: the first entry, and
    every one that differs from its predecessor (``np.r_[True, key[1:] != key[:-1]]``
    without ``np.r_``'s Python-level parsing)."""
    new = np.empty(key.size, dtype=bool)
    new[:1] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    return new


def run_lengths(first: np.ndarray, n: int) -> np.ndarray:
    """The lengths of runs that start at the (increasing) positions ``first`` of n entries
    (``np.diff(np.r_[first, n])``)."""
    out = np.empty(first.size, dtype=np.int64)
    np.subtract(first[1:], first[:-1], out=out[:-1])
    out[-1:] = n - first[-1:]
    return out


def offsets(lengths) -> np.ndarray:
    """``[0, l0, l0 + l1, ...]`` (int64): where runs of these integer lengths laid end to
    end start, and where the last ends — the CSR bounds of a batch's segments."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(lengths.size + 1, dtype=np.int64)
    lengths.cumsum(out=out[1:])
    return out


def run_max(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The maximum of ``values`` (1-D) over each run starting at the increasing positions
    ``first`` (from 0), repeated over the run."""
    return np.maximum.reduceat(values, first).repeat(run_lengths(first, values.size))


def first_max_of_runs(values: np.ndarray, first: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run of ``values`` (1-D) starting at the increasing positions ``first`` (from 0):
    the index of its first largest entry, its maximum, and that maximum repeated over the
    run. The split search's choice of a column's cut — the first of largest rounded gain —
    in the grower and in the engine, so that both choose alike."""
    each = run_max(values, first)
    n = values.size
    return np.minimum.reduceat(np.where(values == each, np.arange(n), n), first), each[first], each


def _exact_segments(w: np.ndarray, node: np.ndarray, G: int) -> np.ndarray:
    """Per segment: True if its weights are dyadic enough to be summed exactly in any order."""
    scaled = w * _DYADIC
    bad = ~(scaled == np.floor(scaled))
    if not bad.any():  # every segment: their weights' sum is w's (no gather of w)
        return np.full(G, float(w.sum()) < _EXACT_TOTAL)
    ok = np.bincount(node[bad], minlength=G) == 0
    if ok.any() and float(w[ok[node]].sum()) >= _EXACT_TOTAL:
        ok[:] = False
    return ok


def _segment_sums(x: np.ndarray, seg: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """``x[seg[g]:seg[g+1]].sum()`` for every (non-empty) segment g, bit for bit."""
    out = np.add.reduceat(x, seg[:-1]) if x.size else np.zeros(seg.size - 1)
    return _sum_each(x, seg, flat_nonzero(~exact), out)


def _sum_each(x: np.ndarray, seg: np.ndarray, segments: np.ndarray,
              out: np.ndarray) -> np.ndarray:
    """``out[g] = x[seg[g]:seg[g+1]].sum()`` for the ``segments`` g, bit for bit: the sum's
    reduction itself (``np.add.reduce``), bounds as Python ints. A call a segment (numpy's
    pairwise order), so the Python-level wrappers of ``sum()`` were most of its cost."""
    if segments.size:
        bounds, reduce = seg.tolist(), np.add.reduce
        for g in segments.tolist():
            out[g] = reduce(x[bounds[g] : bounds[g + 1]])
    return out


def _segment_cumsum(a: np.ndarray, seg: np.ndarray, exact: np.ndarray,
                    totals: np.ndarray) -> np.ndarray:
    """Cumulative sums of ``a`` (..., M) along its last axis restarted in every segment, in
    place.

    Each equals ``np.cumsum`` over its segment alone, bit for bit: exact segments are summed
    in one pass, with the previous segment's total (``totals[g]``: the sum of every row of
    ``a`` over segment g) taken off at each segment start; the others one by one — a stack
    ``a`` (n, p, M) of n arrays (``totals`` (n, G)) in one call per segment, not n.
    """
    if not np.all(seg[1:] > seg[:-1]):  # an empty segment shares the next one's start,
        keep = seg[1:] > seg[:-1]        # where only one total would be taken off
        seg = np.r_[seg[:-1][keep], seg[-1]]
        exact, totals = exact[keep], totals[..., keep]
    inexact = flat_nonzero(~exact)
    # (``cumsum``'s accumulation called directly, bounds as Python ints: a call a segment)
    accumulate, bounds = np.add.accumulate, seg.tolist()
    if inexact.size == exact.size:  # no exact segment: each summed in place, no global pass
        for s, e in itertools.pairwise(bounds):
            accumulate(a[..., s:e], axis=-1, out=a[..., s:e])
        return a
    parts = [(bounds[g], bounds[g + 1]) for g in inexact.tolist()]
    local = [accumulate(a[..., s:e], axis=-1) for s, e in parts]
    for s, e in parts:
        a[..., s:e] = 0.0
    if seg.size > 2:
        taken = np.where(exact[:-1], totals[..., :-1], 0.0).astype(a.dtype)
        a[..., seg[1:-1]] -= taken if taken.ndim == 1 else taken[..., None, :]
    np.cumsum(a, axis=-1, out=a)
    for (s, e), c in zip(parts, local, strict=True):
        a[..., s:e] = c
    return a


def _ragged_sums(x: np.ndarray, seg: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """``x[seg[g]:seg[g+1]].sum()`` for every segment g (empty ones too), bit for bit."""
    x0 = np.where(exact[np.arange(seg.size - 1).repeat(seg[1:] - seg[:-1])], x, 0.0)
    cs = np.zeros(x.size + 1)
    x0.cumsum(out=cs[1:])
    return _sum_each(x, seg, flat_nonzero(~exact), cs[seg[1:]] - cs[seg[:-1]])


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for every (s, n)."""
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    ends = lens.cumsum()
    return (starts - (ends - lens)).repeat(lens) + np.arange(total)


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_inverse=True)`` of a 2-D array without NaN, the
    inverse flat: the distinct rows ascending (lexicographically, as numbers: -0.0 equals
    0.0) and each row's index among them. One ``lexsort`` of the columns: numpy's own
    compares a structured view of the rows element by element, about 10x slower on the
    Venn machine's forecast tables (3 000 × 26: 8.4 ms against 0.7 ms)."""
    a = np.asarray(a)
    if a.ndim != 2 or not a.shape[0] or not a.shape[1]:
        keys, inverse = np.unique(a, axis=0, return_inverse=True)
        return keys, inverse.ravel()
    order = np.lexsort(a.T[::-1])  # the first column the primary key
    ordered = a[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def counted_unique(key: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` of integer keys in [0, ``size``) by counting
    instead of sorting (for a ``size`` not much more than the keys): the distinct keys
    ascending and each key's index among them."""
    present = np.bincount(key, minlength=size) > 0
    return flat_nonzero(present), (np.cumsum(present) - 1)[key]


@dataclass(eq=False, slots=True)
class _Batch:
    """Rows of G nodes laid end to end: node g owns entries ``seg[g]:seg[g+1]``.

    ``S[j]`` lists the entries sorted by numeric column j within each segment (NaN last;
    stable, unless sums are exact), ``V[j]`` their values and ``Y[j]`` their classes;
    ``we`` is the eligible weight (None: all eligible). ``integral``: all weights are
    integers summing below 2**31. ``keys`` (G,), optional: nodes of equal key hold the
    same rows and weights but for their last (a transductive x) — a hint that lets
    :class:`~treecert.transductive.shared_tallies.SharedTallies` compare rows per key.
    """

    seg: np.ndarray
    rows: np.ndarray
    w: np.ndarray
    we: np.ndarray | None
    S: np.ndarray | None
    V: np.ndarray | None
    Y: np.ndarray | None
    keys: np.ndarray | None = None
    G: int = field(init=False)
    node: np.ndarray = field(init=False)
    exact: np.ndarray = field(init=False)
    total_w: np.ndarray = field(init=False)
    integral: bool = field(init=False)

    def __post_init__(self) -> None:
        self.G = self.seg.size - 1
        self.node = np.arange(self.G).repeat(self.seg[1:] - self.seg[:-1])
        self.exact = _exact_segments(self.w, self.node, self.G)
        self.total_w = _segment_sums(self.w, self.seg, self.exact)
        self.integral = bool(self.exact.all() and np.all(self.w == np.floor(self.w))
                             and float(self.total_w.sum()) < 2.0**31)


def _exact_any_order(w: np.ndarray, XT: np.ndarray, *, missing_ok: bool) -> bool:
    """True if the order of equal values cannot change a result: integer weights (exact
    sums), no -0.0 (which sorts with 0.0 but prints apart) and, unless ``missing_ok``, no
    missing value (whose fractional weights would make sums inexact further down)."""
    if not (np.all(w == np.floor(w)) and float(w.sum()) < 2.0**31):
        return False
    zero = XT == 0
    if zero.any() and np.signbit(XT[zero]).any():
        return False
    return missing_ok or not np.isnan(XT).any()


def _index_dtype(n: int):
    return np.int32 if n < 2**31 else np.int64


def _class_dtype(n_classes: int):
    return np.int8 if n_classes < 128 else np.int32
