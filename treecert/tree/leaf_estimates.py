"""Leaf probability estimates computed from raw weighted class counts.

Trees store counts, never probabilities (see ``treecert.tree``); every estimator derives
what it needs here.

References
----------
Laplace: Provost & Domingos (2003); Weka J48 ``-A``; Bradford et al. (1998) section 3.
m-estimate: Cestnik (1990).
"""

from __future__ import annotations

import numpy as np

from treecert.errors import ConfigError

LEAF_ESTIMATES = ("frequency", "laplace", "m_estimate")


def normalise_leaf_name(name: str) -> str:
    """Accept ``m-estimate`` and ``m_estimate`` alike; reject anything else."""
    key = name.strip().lower().replace("-", "_")
    if key not in LEAF_ESTIMATES:
        raise ConfigError(
            f"unknown leaf estimate '{name}'.", f"Choose one of: {', '.join(LEAF_ESTIMATES)}."
        )
    return key


def leaf_proba(
    counts: np.ndarray,
    kind: str = "frequency",
    *,
    alpha: float = 1.0,
    m: float = 2.0,
    prior: np.ndarray | None = None,
) -> np.ndarray:
    """Class probabilities from class counts.

    Parameters
    ----------
    counts : array (..., n_classes)
        Weighted class counts (fractional counts from missing values are fine).
    kind : {"frequency", "laplace", "m_estimate"}
        ``frequency``: n_c / n. ``laplace``: (n_c + alpha) / (n + K alpha).
        ``m_estimate``: (n_c + m prior_c) / (n + m).
    prior : array (n_classes,), only for ``m_estimate``
        Class prior, normally the training class frequencies.

    Rows with no weight get the uniform distribution (frequency) or the smoothed value of
    zero counts; callers fall back to the parent's counts first, as J48 does.
    """
    counts = np.asarray(counts, dtype=float)
    n_classes = counts.shape[-1]
    total = counts.sum(axis=-1, keepdims=True)
    if kind == "frequency":
        with np.errstate(invalid="ignore", divide="ignore"):
            proba = counts / total
        return np.where(total > 0, proba, 1.0 / n_classes)
    if kind == "laplace":
        return (counts + alpha) / (total + n_classes * alpha)
    if kind == "m_estimate":
        if prior is None:
            raise ConfigError("the m-estimate needs a class prior.")
        return (counts + m * np.asarray(prior, dtype=float)) / (total + m)
    raise ConfigError(f"unknown leaf estimate '{kind}'.")
