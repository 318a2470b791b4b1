"""Reduced-error pruning on a stratified holdout (Quinlan 1987; Weka J48 ``-R``): ``rep``.

:func:`prune_rep` prunes a tree with separate pruning rows, under a loss matrix if given;
:func:`_rep` is the ``rep`` method: hold out a stratified part of the training data (a third
by default), regrow the tree on the rest and prune it with the held-out rows.
"""

from __future__ import annotations

import numpy as np

from treecert.data.schema import Dataset
from treecert.pruning.common import (
    DEFAULT_REP_HOLDOUT,
    PruneOptions,
    _check_growable,
    _grow,
    loss_or_zero_one,
    node_counts_of,
    node_risk,
    size_of,
    stratified_holdout,
)
from treecert.tree.arrays import Tree


def prune_rep(tree: Tree, prune_data: Dataset,
              loss: np.ndarray | None = None) -> tuple[Tree, dict]:
    """Reduced-error pruning (Weka ``PruneableClassifierTree``): bottom-up, a subtree
    becomes a leaf when the pruning rows' loss at the node as a leaf is at most that of the
    subtree. Each node predicts the minimum-loss class of its training counts (the
    majority class under 0/1 loss); an empty child predicts its parent's class, as in Weka.
    """
    L = loss_or_zero_one(loss, tree.n_classes)
    _, pred = node_risk(tree.counts, L)
    test = node_counts_of(tree, prune_data)
    per_class = test @ L  # loss of each possible prediction on the pruning rows
    as_leaf = per_class[np.arange(tree.n_nodes), pred]
    sub = as_leaf.copy()
    totals = tree.counts.sum(axis=1)
    collapse = np.zeros(tree.n_nodes, dtype=bool)
    for i in range(tree.n_nodes - 1, -1, -1):
        if tree.feature[i] < 0:
            continue
        below = 0.0
        for c in tree.children_of(i):
            below += per_class[c, pred[i]] if totals[c] <= 1e-6 else sub[c]
        if as_leaf[i] - below < 1e-6:
            collapse[i] = True
            sub[i] = as_leaf[i]
        else:
            sub[i] = below
    return tree.with_leaves(collapse), {}


def _rep(data: Dataset, params: dict, loss, opts: PruneOptions) -> tuple[Tree, dict]:
    labelled = data.subset(np.flatnonzero(data.y >= 0))
    fraction = opts.holdout if opts.holdout is not None else DEFAULT_REP_HOLDOUT
    held = stratified_holdout(labelled.y, fraction, opts.seed)
    train = labelled.subset(~held)
    _check_growable(train, "the rep holdout's training part")
    grown = _grow(params, train)
    pruned, _ = prune_rep(grown, labelled.subset(held), loss)
    return pruned, {"grown_on_rows": int((~held).sum()), "pruning_rows": int(held.sum()),
                    "grown_size": size_of(grown)}
