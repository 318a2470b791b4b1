"""Why a row got its certainty: the columns ``predict --explain`` adds.

For the tree a method predicts with (:func:`explained_tree`), each row gets

* ``leaf`` — the node id of the leaf the row reaches (its index in the model file's tree
  arrays; node ``n<id>`` in ``show --format dot``);
* ``leaf_share`` — the row's share of that leaf: 1 when the row reaches one leaf. With an
  unknown value on its path a row goes down every branch of that test, with the branch's
  share of the training weight (C4.5; :meth:`~treecert.tree.arrays.Tree.apply_weighted`),
  and so reaches several leaves fractionally. One row stays one output row, so the columns
  describe the **heaviest** of those leaves (ties: the smallest node id) and ``leaf_share``
  says how much of the row it holds;
* ``leaf_size`` — the weighted number of training rows in that leaf (a small leaf is a
  thin basis for any estimate);
* ``path`` — the tests from the root to that leaf, ``petallength>2.45 & petalwidth<=1.75``;
  a test whose attribute the row does not know is followed by `` (?)``: the row went down
  every branch there, and the path follows the heaviest share. A tree that is one leaf has
  the path ``(root)``.

Methods add their own per-label components to the predictions when asked (``explain`` on
the method: TPCE's K leaf estimates, Kukar & Kononenko's transductive distribution, Venn's
matrix); see :func:`treecert.methods.base.per_label_columns`.
"""

from __future__ import annotations

import numpy as np

from treecert.data.schema import Schema
from treecert.errors import ConfigError
from treecert.tree.arrays import Tree
from treecert.tree.classifier import DecisionTree
from treecert.tree.render import branch_labels

#: The columns :func:`leaf_columns` adds, in order.
LEAF_COLUMNS = ("leaf", "leaf_share", "leaf_size", "path")
#: The path of a tree that is a single leaf (no test on the way): not an empty field.
ROOT_PATH = "(root)"


def explained_tree(runner) -> Tree:
    """The single tree whose leaves explain a fitted method's predictions.

    Leaf methods, empirical Bayes and certified_tree: their (possibly pruned) tree. Kukar &
    Kononenko: the inductive tree that gives P. TPCE: the tree grown on the training data
    alone, which each of its K transductive trees modifies only along x's path.
    Calibrations (binning, Venn over a tree): their base method's tree. Ensembles and Naive
    Bayes have no single tree: refused, rather than describing a tree they do not use.
    """
    model = getattr(runner, "model_", None)
    if isinstance(model, DecisionTree):
        return model.tree_
    inductive = getattr(runner, "inductive_", None)
    if isinstance(inductive, DecisionTree):
        return inductive.tree_
    base = getattr(runner, "base_", None)
    if base is not None:
        return explained_tree(base)
    engine = getattr(runner, "engine_", None)
    if engine is not None:
        # TPCE, Venn over a tree: the tree on D with the learner's post-growth edits.
        return runner.new_tree().fit(engine.data).tree_
    raise ConfigError(
        f"--explain: method '{runner.spec}' does not predict with one tree (ensembles, "
        "Naive Bayes and tpce_batch's batch trees do not), so no leaf or path explains its "
        "rows.",
        "Use --explain with a tree method: frequency, laplace, m_estimate, certified_tree, "
        "tpce, kk, empirical_bayes, binning or venn over a tree.",
    )


def heaviest_leaf(tree: Tree, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the leaf holding the largest share of it and that share (see the module
    docstring); ties go to the smallest node id."""
    row, leaf, weight = tree.apply_weighted(X)
    order = np.lexsort((leaf, -weight, row))  # by row, heaviest first, then smallest id
    row, leaf, weight = row[order], leaf[order], weight[order]
    first = np.r_[True, row[1:] != row[:-1]]
    out_leaf = np.zeros(X.shape[0], dtype=np.int64)
    out_share = np.zeros(X.shape[0])
    out_leaf[row[first]] = leaf[first]
    out_share[row[first]] = weight[first]
    return out_leaf, out_share


def _path_of(tree: Tree, node: int) -> list[tuple[int, int]]:
    """(ancestor, branch index) pairs from the root down to ``node``."""
    steps = []
    parent = tree.parent
    while parent[node] >= 0:
        p = int(parent[node])
        steps.append((p, int(np.flatnonzero(tree.children_of(p) == node)[0])))
        node = p
    return steps[::-1]


def leaf_columns(tree: Tree, schema: Schema, X: np.ndarray) -> dict[str, np.ndarray]:
    """The :data:`LEAF_COLUMNS` of every row of ``X`` (n_samples, n_features).

    Paths are built once per leaf and once per pattern of unknown values on it, not per
    row: a chunk of 50,000 rows has a few hundred distinct paths.
    """
    leaf, share = heaviest_leaf(tree, X)
    paths = np.empty(X.shape[0], dtype=object)
    labels: dict[int, list[str]] = {}
    by_leaf = np.argsort(leaf, kind="stable")
    nodes, starts = np.unique(leaf[by_leaf], return_index=True)
    for node, rows in zip(nodes, np.split(by_leaf, starts[1:]), strict=True):
        steps = _path_of(tree, int(node))
        for p, _ in steps:
            if p not in labels:
                labels[p] = branch_labels(tree, schema, p, sep="")
        tests = [labels[p][b] for p, b in steps]
        features = [int(tree.feature[p]) for p, _ in steps]
        paths[rows] = " & ".join(tests) or ROOT_PATH
        unknown = np.isnan(X[np.ix_(rows, features)])
        partial = np.flatnonzero(unknown.any(axis=1))
        if partial.size:
            # one key per pattern of unknowns: the row's bits packed into bytes
            packed = np.packbits(unknown[partial], axis=1)
            keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
            _, first, which = np.unique(keys, return_index=True, return_inverse=True)
            texts = np.array([" & ".join(t + (" (?)" if u else "") for t, u in
                                         zip(tests, unknown[partial[i]], strict=True))
                              for i in first], dtype=object)
            paths[rows[partial]] = texts[which.ravel()]
    return {"leaf": leaf, "leaf_share": share, "leaf_size": tree.counts[leaf].sum(axis=1),
            "path": paths}
