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
    n = y.shape[0]
    if n_folds < 2:
        raise ConfigError(f"--folds must be at least 2, got {n_folds}.")
    if n_folds > n:
        raise ConfigError(
            f"--folds {n_folds} is more than the {n} labelled rows.", "Use --loo or fewer folds."
        )
    perm = np.random.RandomState(seed).permutation(n)
    order = perm[np.argsort(y[perm], kind="stable")]
    folds = np.empty(n, dtype=np.int64)
    folds[order] = np.arange(n) % n_folds
    return folds


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
