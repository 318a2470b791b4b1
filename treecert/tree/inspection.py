"""A fitted tree read as scikit-learn's tree API reads one: feature importances and decision
paths (``TreecertClassifier.feature_importances_`` and ``decision_path``).

Both read only the flat arrays of :mod:`treecert.tree.arrays`: the raw weighted class
counts of every node and the parent of every node (each child's id is larger than its
parent's, so a path from the root lists node ids in increasing order).
"""

from __future__ import annotations

import numpy as np

from treecert.tree.arrays import Tree
from treecert.tree.impurity import _impurity_last
from treecert.tree.segments import _ranges, offsets


def impurity_decrease(tree: Tree, criterion: str) -> np.ndarray:
    """Per node, ``N_t * I(t) - sum over children c of N_c * I(c)`` (n_nodes,): the weighted
    impurity decrease of its test, 0 at a leaf. ``N`` is a node's training weight and ``I``
    the criterion's impurity: Gini for ``"gini"``, entropy in bits for ``"info_gain"`` and
    ``"gain_ratio"`` (J48 chooses a test by gain / split information, but what the test
    removes is entropy; the ratio is not a decrease of anything).

    A nominal test has one child per value (C4.5's multiway split) and a numeric test two;
    the sum runs over every child, so both kinds are measured alike. A row whose value of
    the tested attribute is unknown reaches every child with a fraction of its weight, so
    the children's counts add up to the parent's and the decrease is never negative
    (entropy and Gini are concave).
    """
    gini = criterion == "gini"
    weighted = _impurity_last(np.asarray(tree.counts, dtype=float), gini)
    parent = tree.parent
    child = parent >= 0
    children_sum = np.bincount(parent[child], weights=weighted[child],
                               minlength=tree.n_nodes)
    return np.where(tree.is_leaf, 0.0, weighted - children_sum)


def feature_importances(tree: Tree, n_features: int, criterion: str) -> np.ndarray:
    """scikit-learn's ``feature_importances_`` (n_features,): per attribute, the total
    :func:`impurity_decrease` of the tests on it, normalised to sum to 1 (all zeros for a
    tree that is one leaf, as scikit-learn gives)."""
    decrease = impurity_decrease(tree, criterion)
    internal = ~tree.is_leaf
    total = np.bincount(tree.feature[internal], weights=decrease[internal],
                        minlength=n_features).astype(float)
    norm = total.sum()
    return total / norm if norm > 0 else total


def root_paths(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """Every node's path from the root in CSR form ``(ptr, nodes)``: the path to node v is
    ``nodes[ptr[v]:ptr[v+1]]``, root first, in increasing node id."""
    depth = tree.node_depth
    ptr = offsets(depth + 1)
    nodes = np.empty(int(ptr[-1]), dtype=np.int64)
    parent = tree.parent
    for v in range(tree.n_nodes):  # parents come first: copy the parent's path, append v
        start = ptr[v]
        if parent[v] >= 0:
            p = parent[v]
            nodes[start:start + depth[v]] = nodes[ptr[p]:ptr[p + 1]]
        nodes[start + depth[v]] = v
    return ptr, nodes


def decision_path(tree: Tree, leaves: np.ndarray):
    """The indicator matrix (n_samples, n_nodes) of the nodes from the root to ``leaves[i]``
    for row i, as a ``scipy.sparse.csr_matrix`` of int64 ones (scikit-learn's
    ``decision_path``), column indices sorted."""
    from scipy.sparse import csr_matrix

    ptr, nodes = root_paths(tree)
    leaves = np.asarray(leaves, dtype=np.int64)
    lengths = ptr[leaves + 1] - ptr[leaves]
    indptr = offsets(lengths)
    indices = nodes[_ranges(ptr[leaves], lengths)]  # row i's path: nodes[ptr[leaf_i]:...]
    data = np.ones(indices.size, dtype=np.int64)
    return csr_matrix((data, indices, indptr), shape=(leaves.size, tree.n_nodes))
