"""Fold ids: stratified k-fold assignment and folds files.

The one source of folds for ``evaluate``, binning's out-of-fold calibration and ccp
pruning's cross-validation, so the same seed gives the same folds everywhere.
"""

from __future__ import annotations

import numpy as np

from treecert.errors import ConfigError, DataError

DEFAULT_SEED = 1


def stratified_folds(y: np.ndarray, n_folds: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Fold id (0..n_folds-1) per row, stratified by class (see the module docstring)."""
    n = _checked_rows(y, n_folds)
    perm = np.random.RandomState(seed).permutation(n)
    order = perm[np.argsort(y[perm], kind="stable")]
    folds = np.empty(n, dtype=np.int64)
    folds[order] = np.arange(n) % n_folds
    return folds


def _checked_rows(y: np.ndarray, n_folds: int) -> int:
    """The number of rows, once ``n_folds`` is known to fit them (2 <= n_folds <= rows)."""
    n = y.shape[0]
    if n_folds < 2:
        raise ConfigError(f"--folds must be at least 2, got {n_folds}.")
    if n_folds > n:
        raise ConfigError(
            f"--folds {n_folds} is more than the {n} labelled rows.", "Use --loo or fewer folds."
        )
    return n


def weka_folds(y: np.ndarray, n_folds: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Fold id per row as Weka's ``-x n_folds -s seed`` assigns them, so that a CV here
    tests each fold on the rows Weka's does (J48's own CV accuracy, to the row).

    Weka 3.6's ``Evaluation.crossValidateModel`` shuffles a copy of the data with
    ``java.util.Random(seed)`` (``Instances.randomize``: for j = n-1 down to 1, swap j with
    ``nextInt(j + 1)``), stratifies it (``Instances.stratify``: instances of a class moved
    together, in the order the shuffle left them, then dealt into ``n_folds`` piles by
    ``stratStep``) and tests fold f on the contiguous block ``testCV(n_folds, f)`` takes.
    """
    n = _checked_rows(y, n_folds)
    rows = list(range(n))
    rng = _JavaRandom(seed)
    for j in range(n - 1, 0, -1):  # Instances.randomize
        k = rng.next_int(j + 1)
        rows[j], rows[k] = rows[k], rows[j]
    labels = [int(y[r]) for r in rows]
    index = 1  # Instances.stratify: gather each class behind its first instance
    while index < n:
        first = labels[index - 1]
        for j in range(index, n):
            if labels[j] == first:
                rows[index], rows[j] = rows[j], rows[index]
                labels[index], labels[j] = labels[j], labels[index]
                index += 1
        index += 1
    dealt = [r for start in range(n_folds) for r in rows[start::n_folds]]  # stratStep
    folds = np.empty(n, dtype=np.int64)
    size, extra = divmod(n, n_folds)
    for fold in range(n_folds):  # Instances.testCV
        offset = fold if fold < extra else extra
        first = fold * size + offset
        folds[dealt[first:first + size + (fold < extra)]] = fold
    return folds


class _JavaRandom:
    """``java.util.Random``: the 48-bit linear congruential generator Weka draws from."""

    _MULT, _ADD, _MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ self._MULT) & self._MASK

    def _next(self, bits: int) -> int:
        self.seed = (self.seed * self._MULT + self._ADD) & self._MASK
        return self.seed >> (48 - bits)

    def next_int(self, bound: int) -> int:
        if bound & -bound == bound:  # a power of two
            return (bound * self._next(31)) >> 31
        while True:
            bits = self._next(31)
            value = bits % bound
            if bits - value + (bound - 1) < 1 << 31:
                return value


def read_fold_ids(text: str, n_rows: int, source: str) -> np.ndarray:
    """Parse a folds file: one integer fold id per data row (blank lines ignored)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines and not lines[0].lstrip("-").isdigit():
        lines = lines[1:]  # a header line
    try:
        ids = np.array([int(v.split(",")[-1]) for v in lines], dtype=np.int64)
    except ValueError:
        raise DataError(f"{source}: expected one integer fold id per line.") from None
    if ids.size != n_rows:
        raise DataError(
            f"{source}: {ids.size} fold ids for {n_rows} data rows.",
            "The folds file needs one id per row of the data file, in order.",
        )
    if np.any(ids < 0):
        raise DataError(f"{source}: fold ids must be >= 0.")
    return ids
