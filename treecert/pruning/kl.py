"""Bradford et al.'s KL pruning (1998, sect. 2.3): the ``kl`` method.

A subtree is pruned when the weighted mean over its node's children of KL(child ‖ node),
Laplace distributions, in bits, is below a threshold (0.01 by default). Losses play no part.
"""

from __future__ import annotations

import numpy as np

from treecert.pruning.common import DEFAULT_KL_THRESHOLD
from treecert.tree.arrays import Tree


def kl_distance(tree: Tree) -> np.ndarray:
    """Per internal node: Σ_i (m_i / m) KL(child_i ‖ node) in bits, Laplace distributions
    (Bradford et al., sect. 2.3); NaN at leaves."""
    c = tree.counts
    K = tree.n_classes
    m = c.sum(axis=1)
    p = (c + 1.0) / (m[:, None] + K)
    out = np.full(tree.n_nodes, np.nan)
    for i in np.flatnonzero(tree.feature >= 0):
        kids = tree.children_of(i)
        if m[i] <= 0:
            out[i] = 0.0
            continue
        d = np.sum(p[kids] * np.log2(p[kids] / p[i]), axis=1)
        out[i] = float(np.sum(d * m[kids]) / m[i])
    return out


def prune_kl(tree: Tree, threshold: float = DEFAULT_KL_THRESHOLD) -> tuple[Tree, dict]:
    """KL pruning: every subtree whose node has :func:`kl_distance` below ``threshold``
    becomes a leaf. The distance depends only on the node and its children's counts, which
    pruning below does not change, so the order of visits does not matter."""
    d = kl_distance(tree)
    return tree.with_leaves(np.nan_to_num(d, nan=np.inf) < threshold), {}
