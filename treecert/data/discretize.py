"""Discretisation of one numeric variable into bins.

Used for the MDL bins of Lindsay & Cox's empirical reliability curves (ERC deviation), for
binning calibration and for Venn types, and for equal-width / equal-frequency bins.

Conventions
-----------
* A set of bins is described by its **cut points** (called ``edges`` in the function names):
  a strictly increasing 1-D float array of the *interior* boundaries, so ``m`` cut points give
  ``m + 1`` bins, the first open to ``-inf`` and the last open to ``+inf``.
* :func:`assign_bins` maps values to bin indices ``0..m``. By default bins are closed on the
  right, ``(-inf, c0], (c0, c1], ..., (c_{m-1}, inf)``, which is what Weka's ``Discretize``
  filters do (a value equal to a cut point goes to the lower bin). ``right=False`` gives
  left-closed bins ``[c_{k-1}, c_k)`` (Lindsay & Cox's equal-width probability bins).
* Missing values are ``NaN``: they are ignored when cut points are learnt and get bin ``-1``.
"""

from __future__ import annotations

import numpy as np

from treecert.data.coerce import float_array
from treecert.errors import ConfigError, DataError

__all__ = [
    "assign_bins",
    "equal_frequency_edges",
    "equal_width_edges",
    "mdl_cut_points",
]

_LOG2 = np.log(2.0)


def _as_values(values: object, name: str = "values") -> np.ndarray:
    arr = float_array(values, f"{name} must be numeric", 1, f"{name} must be a 1-D array")
    if np.isinf(arr).any():
        raise DataError(f"{name} contains infinite values.")
    return arr


def _check_n_bins(n_bins: object) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ConfigError(f"n_bins must be a positive integer, got {n_bins!r}.")
    return int(n_bins)


# --------------------------------------------------------------------------------------------
# Weka-exact entropy helpers (weka.core.ContingencyTables, Weka 3.6.14)
# --------------------------------------------------------------------------------------------


def _ln_func(x: np.ndarray) -> np.ndarray:
    """``x * ln(x)`` with ``0`` for ``x <= 0`` (Weka's ``ContingencyTables.lnFunc``), for an
    array of any shape."""
    x = np.asarray(x, dtype=float)
    out = np.log(np.where(x > 0, x, 1.0))  # ln 1 = 0 elsewhere: 2-3x a masked log
    out *= x
    return out


def _entropy_rows(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits of each count row (..., K) -> (...).

    Same operation order as Weka's ``ContingencyTables.entropy`` so that results (and hence
    the choice between equally good cut points) agree bit for bit with Weka.
    """
    by_class = np.ascontiguousarray(np.moveaxis(np.asarray(counts, float), -1, 0))
    L = _ln_func(by_class)  # class-major, as in _entropy_conditioned
    ret = np.zeros(counts.shape[:-1])
    tot = np.zeros(counts.shape[:-1])
    for j in range(by_class.shape[0]):  # sequential over classes, as in Weka
        ret -= L[j]
        tot += by_class[j]
    nz = np.abs(tot) >= 1e-6  # Utils.eq(sum, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(nz, (ret + _ln_func(tot)) / (tot * _LOG2), 0.0)


def _entropy_conditioned(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Weighted mean entropy (bits) of two-way splits, count rows (..., K) per side -> (...).

    Mirrors Weka's ``ContingencyTables.entropyConditionedOnRows`` on the 2 x K matrix
    ``[left; right]``.
    """
    shape = left.shape[:-1]
    ret = np.zeros(shape)
    total = np.zeros(shape)
    for side in (left, right):
        # class-major, each class's counts contiguous: the same additions in the same
        # order, without K strided passes (letter-shaped Venn rows: 26 classes, ~2x)
        by_class = np.ascontiguousarray(np.moveaxis(side, -1, 0))
        L = _ln_func(by_class)
        row_sum = np.zeros(shape)
        for j in range(by_class.shape[0]):
            ret += L[j]
            row_sum += by_class[j]
        ret -= _ln_func(row_sum)
        total += row_sum
    nz = np.abs(total) >= 1e-6
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(nz, -ret / (total * _LOG2), 0.0)


def _best_split(
    v: np.ndarray, onehot: np.ndarray, w: np.ndarray
) -> tuple[int, float, float, np.ndarray, np.ndarray, np.ndarray, float] | None:
    """Best binary cut of one sorted subset (Weka's ``cutPointsForSubset`` search step).

    Returns ``(index, prior_entropy, best_entropy, prior_counts, left, right, weight_sum)``
    where ``index`` is the position of the last instance of the left part, or ``None`` when
    no cut lowers the class entropy.
    """
    n = v.shape[0]
    cum_left = np.cumsum(onehot, axis=0)  # left counts after instance i (sequential sums)
    prior = cum_left[-1]
    # Weka subtracts each instance from the prior counts one by one: replicate that order.
    cum_right = np.subtract.accumulate(np.vstack([prior[None, :], onehot]), axis=0)[1:]
    cand = np.flatnonzero(v[:-1] < v[1:])  # cut only between distinct values
    if cand.size == 0:
        return None
    prior_entropy = float(_entropy_rows(prior[None, :])[0])
    ent = _entropy_conditioned(cum_left[cand], cum_right[cand])
    k = int(np.argmin(ent))  # first of equally good candidates, as Weka's strict '<' scan
    best_entropy = float(ent[k])
    if not best_entropy < prior_entropy:
        return None
    i = int(cand[k])
    weight_sum = float(np.cumsum(w)[-1]) if n else 0.0
    return i, prior_entropy, best_entropy, prior, cum_left[i], cum_right[i], weight_sum


def _fayyad_irani_accepts(
    prior_entropy: float,
    best_entropy: float,
    prior: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    weight_sum: float,
    n_instances: int,
) -> bool:
    """Fayyad & Irani's MDL stopping criterion as coded in Weka (``FayyadAndIranisMDL``).

    Accept when ``gain > (log2(N - 1) + delta) / W`` with ``N`` the number of instances in the
    subset (Weka's default "worse encoding": every position is a potential cut point), ``W``
    their total weight and ``delta = log2(3^k - 2) - (k E(S) - k2 E(S2) - k1 E(S1))``, ``k``,
    ``k1``, ``k2`` the numbers of classes present in ``S``, ``S1``, ``S2``.
    """
    gain = prior_entropy - best_entropy
    k = int(np.count_nonzero(prior > 0))
    k1 = int(np.count_nonzero(left > 0))
    k2 = int(np.count_nonzero(right > 0))
    e1 = float(_entropy_rows(left[None, :])[0])
    e2 = float(_entropy_rows(right[None, :])[0])
    delta = np.log(3.0**k - 2.0) / _LOG2 - (k * prior_entropy - k2 * e2 - k1 * e1)
    n_cut_points = n_instances - 1
    return gain > (np.log(float(n_cut_points)) / _LOG2 + delta) / weight_sum


def mdl_cut_points(
    values: object,
    y: object,
    n_classes: int,
    sample_weight: object | None = None,
) -> np.ndarray:
    """Fayyad & Irani (1993) MDL supervised discretisation, exactly as Weka's default.

    Reproduces ``weka.filters.supervised.attribute.Discretize`` with its default options
    (Fayyad & Irani criterion, not Kononenko's; not the "better encoding"), Weka 3.6.14:

    1. Sort the non-missing values; candidate cuts lie between consecutive *distinct*
       values, at the midpoint ``(v_i + v_{i+1}) / 2``.
    2. Choose the candidate with the lowest class-entropy of the split (first one on ties).
    3. Accept it when ``gain > (log2(N - 1) + delta) / N`` with
       ``delta = log2(3^k - 2) - [k E(S) - k1 E(S1) - k2 E(S2)]`` (``N`` counts instances,
       the denominator uses their total weight), and recurse into both halves.

    The candidate search is vectorised with cumulative class counts; the operations are done
    in Weka's order so that ties between candidates are broken the same way.

    Parameters
    ----------
    values : array_like, shape (n,)
        The numeric variable; ``NaN`` marks a missing value (ignored, as in Weka).
    y : array_like of int, shape (n,)
        Class codes ``0..n_classes-1``.
    n_classes : int
        Number of classes ``K``.
    sample_weight : array_like, shape (n,), optional
        Non-negative instance weights (default: all 1).

    Returns
    -------
    numpy.ndarray, shape (m,)
        Strictly increasing cut points (empty when no cut is accepted). Use
        :func:`assign_bins` (right-closed bins) to map values to the ``m + 1`` bins.

    Raises
    ------
    DataError
        If the arrays have mismatched lengths, ``y`` is out of range or weights are negative.
    """
    v = _as_values(values)
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
        raise ConfigError(f"n_classes must be an integer, got {n_classes!r}.")
    if n_classes < 1:
        raise ConfigError(f"n_classes must be at least 1, got {n_classes}.")
    yy = np.asarray(y)
    if yy.shape != v.shape:
        raise DataError(f"y has shape {yy.shape} but values has shape {v.shape}.")
    if yy.size and (not np.issubdtype(yy.dtype, np.integer)):
        if not np.all(np.equal(np.mod(yy, 1), 0)):
            raise DataError("y must hold integer class codes.")
        yy = yy.astype(np.int64)
    if yy.size and (yy.min() < 0 or yy.max() >= n_classes):
        raise DataError(f"y must hold class codes in 0..{n_classes - 1}.")
    if sample_weight is None:
        w = np.ones_like(v)
    else:
        w = _as_values(sample_weight, "sample_weight")
        if w.shape != v.shape:
            raise DataError(f"sample_weight has shape {w.shape} but values has shape {v.shape}.")
        if np.isnan(w).any() or (w < 0).any():
            raise DataError("sample_weight must be finite and non-negative.")

    keep = ~np.isnan(v)
    v, yy, w = v[keep], yy[keep].astype(np.int64), w[keep]
    order = np.argsort(v, kind="stable")
    v, yy, w = v[order], yy[order], w[order]
    onehot = np.zeros((v.shape[0], int(n_classes)))
    onehot[np.arange(v.shape[0]), yy] = w

    cuts: list[float] = []
    stack = [(0, v.shape[0])]
    while stack:
        a, b = stack.pop()
        if b - a < 2:
            continue
        found = _best_split(v[a:b], onehot[a:b], w[a:b])
        if found is None:
            continue
        i, prior_e, best_e, prior, left, right, wsum = found
        if not _fayyad_irani_accepts(prior_e, best_e, prior, left, right, wsum, b - a):
            continue
        cuts.append((v[a + i] + v[a + i + 1]) / 2.0)
        stack.append((a, a + i + 1))
        stack.append((a + i + 1, b))
    return np.sort(np.asarray(cuts, dtype=float))


def equal_width_edges(
    values: object,
    n_bins: int,
    *,
    lo: float | None = None,
    hi: float | None = None,
) -> np.ndarray:
    """Interior cut points of ``n_bins`` equal-width bins over ``[lo, hi]``.

    Parameters
    ----------
    values : array_like, shape (n,)
        Data used for the default range (``NaN`` ignored).
    n_bins : int
        Number of bins (>= 1).
    lo, hi : float, optional
        Range; default the minimum / maximum of ``values``. For probabilities pass
        ``lo=0, hi=1``: the cut points are then exactly ``k / n_bins`` (computed by division,
        so 0.3 is the double nearest to 0.3, not ``3 * 0.1``).

    Returns
    -------
    numpy.ndarray, shape (n_bins - 1,)
        ``lo + (hi - lo) * k / n_bins`` for ``k = 1..n_bins-1``; empty when ``n_bins == 1``,
        when ``lo == hi`` or when there is no finite value and no range.
    """
    v = _as_values(values)
    n_bins = _check_n_bins(n_bins)
    finite = v[~np.isnan(v)]
    if lo is None:
        lo = float(finite.min()) if finite.size else None
    if hi is None:
        hi = float(finite.max()) if finite.size else None
    if lo is None or hi is None:
        return np.empty(0)
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi < lo:
        raise ConfigError(f"Invalid range for equal-width bins: [{lo}, {hi}].")
    if hi == lo:
        return np.empty(0)
    frac = np.arange(1, n_bins) / n_bins
    if lo == 0.0:
        return hi * frac
    return lo + (hi - lo) * frac


def equal_frequency_edges(values: object, n_bins: int) -> np.ndarray:
    """Interior cut points of (about) ``n_bins`` bins holding equal numbers of values.

    With the ``n`` finite values sorted, ``v_(0) <= ... <= v_(n-1)``, the ``k``-th cut point
    is the midpoint ``(v_(i-1) + v_(i)) / 2`` with ``i = round(k n / n_bins)``. Cut points
    that would not separate two distinct values (ties) or duplicate a previous one are
    dropped, so heavily tied data yield fewer than ``n_bins`` bins.

    Parameters
    ----------
    values : array_like, shape (n,)
        Data (``NaN`` ignored).
    n_bins : int
        Requested number of bins (>= 1).

    Returns
    -------
    numpy.ndarray, shape (m,), m <= n_bins - 1
        Strictly increasing cut points for right-closed bins.
    """
    v = _as_values(values)
    n_bins = _check_n_bins(n_bins)
    s = np.sort(v[~np.isnan(v)])
    n = s.shape[0]
    if n < 2 or n_bins == 1:
        return np.empty(0)
    idx = np.rint(np.arange(1, n_bins) * n / n_bins).astype(np.int64)
    idx = idx[(idx >= 1) & (idx <= n - 1)]
    idx = idx[s[idx - 1] < s[idx]]
    cuts = (s[idx - 1] + s[idx]) / 2.0
    return np.unique(cuts)


def assign_bins(values: object, edges: object, *, right: bool = True) -> np.ndarray:
    """Bin index of every value, given interior cut points.

    Parameters
    ----------
    values : array_like, shape (n,)
        Values to bin; ``NaN`` gets index ``-1``.
    edges : array_like, shape (m,)
        Strictly increasing interior cut points (as returned by the ``*_edges`` functions or
        :func:`mdl_cut_points`).
    right : bool, default True
        ``True``: bins ``(-inf, e0], (e0, e1], ..., (e_{m-1}, inf)`` (Weka). ``False``:
        ``(-inf, e0), [e0, e1), ..., [e_{m-1}, inf)``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Indices in ``0..m`` (``-1`` for missing values).
    """
    v = _as_values(values)
    e = _as_values(edges, "edges")
    if np.isnan(e).any() or (e.size > 1 and not np.all(e[1:] > e[:-1])):
        raise ConfigError("Bin edges must be finite and strictly increasing.")
    out = np.searchsorted(e, v, side="left" if right else "right").astype(np.int64)
    out[np.isnan(v)] = -1
    return out
