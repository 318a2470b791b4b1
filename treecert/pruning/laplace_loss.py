"""Bradford et al.'s Laplace-based pruning (1998, sect. 2.2, Fig. 2): the ``laplace_loss`` method.

A node's expected loss as a leaf is ``m · min_j Σ_c p_c L[c, j]`` with the Laplace
distribution ``p``; bottom-up, a subtree is pruned when the node's loss is at most the sum of
its leaves' losses. Under the 0/1 loss this is Laplace error-based pruning.
"""

from __future__ import annotations

import numpy as np

from treecert.pruning.common import loss_or_zero_one
from treecert.tree.arrays import Tree


def laplace_node_loss(counts: np.ndarray, loss: np.ndarray | None = None) -> np.ndarray:
    """Expected loss of every node as a leaf: ``m · min_j Σ_c p_c L[c, j]`` with the
    Laplace distribution ``p_c = (n_c + 1) / (m + K)`` (Bradford et al., sect. 2.2)."""
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    K = counts.shape[1]
    L = loss_or_zero_one(loss, K)
    m = counts.sum(axis=1)
    p = (counts + 1.0) / (m[:, None] + K)
    return m * (p @ L).min(axis=1)


def prune_laplace_loss(tree: Tree, loss: np.ndarray | None = None) -> tuple[Tree, dict]:
    """Bradford et al.'s Laplace-based pruning: bottom-up, a subtree becomes a leaf when the
    node's Laplace expected loss is at most the sum over its (already pruned) leaves."""
    node_loss = laplace_node_loss(tree.counts, loss)
    sub = node_loss.copy()
    collapse = np.zeros(tree.n_nodes, dtype=bool)
    for i in range(tree.n_nodes - 1, -1, -1):  # children have larger ids: post-order
        if tree.feature[i] < 0:
            continue
        below = float(sub[tree.children_of(i)].sum())
        if node_loss[i] <= below + 1e-9 * max(1.0, below):
            collapse[i] = True
            sub[i] = node_loss[i]
        else:
            sub[i] = below
    return tree.with_leaves(collapse), {}
