"""Random attribute subsets for the split search (``max_features``; Breiman, "Random
forests", Machine Learning 45(1), 2001, section 4): how many attributes a node searches,
and the seeded draw of which ones (:class:`~treecert.tree.split_search.SplitFinder` applies
the draw when it chooses a node's test)."""

from __future__ import annotations

import numpy as np

from treecert.errors import ConfigError

#: Named values of ``max_features``.
MAX_FEATURE_RULES = ("all", "sqrt", "log2")


def resolve_max_features(value, n_features: int) -> int | None:
    """The number of attributes each node searches, or None for all of them.

    ``value``: None or ``"all"``; ``"sqrt"`` (⌊√F⌋) or ``"log2"`` (⌊log2 F⌋), at least 1;
    an integer k ≥ 1 (at most F); a fraction in (0, 1) of F (at least 1). Strings of numbers
    are read as numbers (``"3"``, ``"0.5"``), as the command line gives them.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("all", "none", ""):
            return None
        if text == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if text == "log2":
            return max(1, int(np.log2(max(n_features, 1))))
        try:
            value = int(text) if text.isdigit() else float(text)
        except ValueError:
            raise ConfigError(f"max_features must be all, sqrt, log2, an integer or a "
                              f"fraction, not '{value}'.") from None
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ConfigError(f"max_features must be all, sqrt, log2, an integer or a fraction, "
                          f"not {value!r}.")
    if float(value) == 1.0 and isinstance(value, float | np.floating):
        return None
    if isinstance(value, float | np.floating):
        if not 0 < value < 1:
            raise ConfigError(f"max_features as a fraction must lie in (0, 1], got {value}.")
        k = max(1, int(value * n_features))
    else:
        if value < 1:
            raise ConfigError(f"max_features must be at least 1, got {value}.")
        k = int(value)
    return None if k >= n_features else k


class FeatureDraw:
    """Seeded random attribute subsets, one per node, in the order nodes are searched.

    ``k`` of the ``n_features`` attributes per node, uniformly without replacement (a row
    of uniform keys, the k smallest), from ``numpy.random.default_rng(seed)``: the same
    seed and the same sequence of batches give the same subsets.
    """

    def __init__(self, k: int, n_features: int, seed: int) -> None:
        self.k = int(k)
        self.n_features = int(n_features)
        self.rng = np.random.default_rng(seed)

    def keys(self, G: int) -> np.ndarray:
        """(G, n_features) uniform keys, the next G nodes' draws."""
        return self.rng.random((G, self.n_features))

    def masks(self, G: int) -> np.ndarray:
        """(G, n_features) bool: which attributes (by index) each of G nodes may test."""
        return smallest_keys(self.keys(G), self.k)


def smallest_keys(keys: np.ndarray, k: int) -> np.ndarray:
    """(G, F) bool: each row's k smallest ``keys``, the attributes a node may test."""
    pick = np.argpartition(keys, k - 1, axis=1)[:, :k]
    mask = np.zeros(keys.shape, dtype=bool)
    np.put_along_axis(mask, pick, True, axis=1)
    return mask
