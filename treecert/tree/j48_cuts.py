"""J48's split points: a numeric test's cut moved onto a value of the whole training set.

J48 grows a numeric test at the midpoint of the two neighbouring values of the node, then
moves it (``C45Split.setSplitPoint(allData)``, called by ``C45ModelSelection.selectModel``)
to the largest value of the attribute among *all* the training rows given to J48 that is
not above the midpoint. The scan over the rows, in their order, is::

    new = -Double.MAX_VALUE
    for v in the column's known values:
        if Utils.gr(v, new) and Utils.smOrEq(v, split):   # v - new > 1e-6, v - split < 1e-6
            new = v

So the result is the largest value ``m`` with ``m - split < 1e-6``, unless a smaller value
within 1e-6 of ``m`` comes first in the rows (then that one stays: the scan's tolerance).
Every row of the node lies on the same side of both cuts (the node's values below the
midpoint are at most the new cut, those above exceed it by more than 1e-6, since J48 cuts
only between values more than 1e-5 apart), so the tree and its counts do not change; a
value between the node's lower neighbour and the midpoint that no training row holds is
what goes the other way.

References: Weka 3.6 ``weka.classifiers.trees.j48.C45Split.setSplitPoint``,
``C45ModelSelection.selectModel``; ``weka.core.Utils.gr``/``smOrEq`` (``SMALL = 1e-6``).
"""

from __future__ import annotations

import numpy as np

from treecert.tree.segments import flat_nonzero

#: Weka's ``Utils.SMALL``: the tolerance of ``gr`` and ``smOrEq``.
WEKA_SMALL = 1e-6


def j48_split_point(column: np.ndarray, split: float) -> float:
    """J48's ``setSplitPoint`` of one test: ``column`` holds the attribute's values over the
    whole training set in row order (NaN = unknown, skipped), ``split`` the grown cut.

    >>> j48_split_point(np.array([0.3, 0.1, 0.5, 0.2]), 0.35)
    0.3
    """
    known = column[~np.isnan(column)]
    below = known[known - split < WEKA_SMALL]
    if below.size == 0:
        return -np.finfo(float).max
    top = below.max()
    # The scan ends at the maximum unless a distinct value within 1e-6 of it precedes it
    # (rare: values that close); then replay J48's scan over those rows.
    if not np.any((below < top) & (top - below <= 2 * WEKA_SMALL)):
        return float(top)
    new = -np.finfo(float).max
    for v in below.tolist():
        if v - new > WEKA_SMALL:
            new = v
    return float(new)


def j48_split_points(feature: np.ndarray, threshold: np.ndarray, X: np.ndarray) -> np.ndarray:
    """A tree's thresholds (``feature``, ``threshold`` per node; NaN = no numeric test) with
    every numeric test's cut moved by :func:`j48_split_point` over ``X`` (n_samples,
    n_features), the whole training set: a new array."""
    out = threshold.copy()
    for node in flat_nonzero(~np.isnan(out)).tolist():
        out[node] = j48_split_point(X[:, feature[node]], float(out[node]))
    return out


def j48_route_bounds(threshold: np.ndarray) -> np.ndarray:
    """Per numeric test, the largest float ``b`` with ``b - t < 1e-6`` (``t`` its threshold;
    NaN stays NaN): ``x <= b`` exactly when J48's ``whichSubset`` sends ``x`` to the first
    branch (``Utils.smOrEq(x, t)``, i.e. ``x - t < 1e-6``), since ``x - t`` never decreases
    as ``x`` grows. Found from ``t + 1e-6`` by stepping one float at a time.

    >>> t = np.array([0.001588, np.nan])
    >>> b = j48_route_bounds(t)
    >>> bool(b[0] - t[0] < 1e-6), bool(np.nextafter(b[0], np.inf) - t[0] < 1e-6)
    (True, False)
    """
    t = np.asarray(threshold, dtype=float)
    b = t + WEKA_SMALL
    with np.errstate(invalid="ignore"):
        for _ in range(64):  # a few steps in practice (rounding of t + 1e-6)
            up = (np.nextafter(b, np.inf) - t < WEKA_SMALL) & np.isfinite(b)
            down = ~(b - t < WEKA_SMALL) & np.isfinite(b)
            if not (up.any() or down.any()):
                break
            b = np.where(up, np.nextafter(b, np.inf), np.where(down, np.nextafter(b, -np.inf), b))
    return b
