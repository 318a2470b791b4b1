"""C4.5 error-based pruning exactly as Weka J48 does it (``C45PruneableClassifierTree``).

``Stats.addErrs`` (:func:`add_errs`) with its normal approximation and ``e < 1``
interpolation, the 0.1 slack, and subtree raising, which re-routes a node's training rows
through its largest branch. J48 prunes recursively and restructures the tree as it goes, so
the tree is turned into linked nodes (:class:`_Node`, rows sent down by :class:`_Router`),
pruned by :class:`_J48Pruner` and flattened back into arrays. Losses play no part here.
"""

from __future__ import annotations

import math

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError, DataError
from treecert.pruning.common import DEFAULT_CF
from treecert.tree.arrays import Tree


def add_errs(N: float, e: float, cf: float = DEFAULT_CF) -> float:
    """Weka's ``Stats.addErrs``: extra errors of a leaf with ``N`` (weighted) cases and
    ``e`` errors at confidence ``cf``, from the upper limit of a normal-approximation
    binomial interval with continuity correction.

    Special cases as in J48: ``e = 0`` uses the exact ``N (1 - cf^(1/N))``; ``0 < e < 1``
    interpolates linearly between e = 0 and e = 1 (as C4.5 does); ``e + 0.5 >= N`` returns
    ``max(N - e, 0)``. ``cf`` is a Java float in J48, so it is rounded to float32 here too.

    References: Quinlan (1993), ch. 4; Weka 3.6 ``weka.classifiers.trees.j48.Stats``.
    """
    from scipy.special import ndtri

    cf32 = np.float32(cf)
    if e < 1:
        base = N * (1.0 - math.pow(float(cf32), 1.0 / N))
        if e == 0:
            return base
        return base + e * (add_errs(N, 1.0, cf) - base)
    if e + 0.5 >= N:
        return max(N - e, 0.0)
    z = float(ndtri(float(np.float32(1.0) - cf32)))
    f = (e + 0.5) / N
    r = (f + z * z / (2 * N) + z * math.sqrt(f / N - f * f / N + z * z / (4 * N * N))) / (
        1 + z * z / N
    )
    return r * N - e


def _estimated_errors(counts: np.ndarray, cf: float) -> float:
    """J48's ``getEstimatedErrorsForDistribution``."""
    N = float(counts.sum())
    if abs(N) < 1e-6:
        return 0.0
    e = N - float(counts.max())
    return e + add_errs(N, e, cf)


class _Node:
    """A mutable node for J48's recursive pruning (which restructures the tree)."""

    __slots__ = ("children", "counts", "idx", "src", "w")

    def __init__(self, src: int, counts: np.ndarray, idx=None, w=None) -> None:
        self.src = src  # original node whose test this node uses
        self.counts = counts
        self.children: list[_Node] = []
        self.idx = idx
        self.w = w


class _Router:
    """Sends rows down one node's test the way J48 does (``resetDistribution`` + ``split``):
    unknown values go to every branch with the share of the *arriving* rows' known weight."""

    def __init__(self, tree: Tree, X: np.ndarray, y: np.ndarray, n_classes: int) -> None:
        self.tree, self.X, self.y, self.K = tree, X, y, n_classes

    def counts(self, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.bincount(self.y[idx], weights=w, minlength=self.K).astype(float)

    def split(self, src: int, idx: np.ndarray, w: np.ndarray):
        t = self.tree
        f = int(t.feature[src])
        n_b = int(t.children_ptr[src + 1] - t.children_ptr[src])
        vals = self.X[idx, f]
        missing = np.isnan(vals)
        if not np.isnan(t.threshold[src]):
            branch = (vals > t.routing_threshold[src]).astype(np.int64)
        else:
            vb = t.value_branch[t.value_branch_ptr[src] : t.value_branch_ptr[src + 1]]
            branch = vb[np.where(missing, 0, vals).astype(np.int64)]
        branch[missing] = -1
        known = np.bincount(branch[~missing], weights=w[~missing], minlength=n_b)
        total = known.sum()
        frac = known / total if total > 0 else np.full(n_b, 1.0 / n_b)
        out = []
        for b in range(n_b):
            sel = branch == b
            if missing.any() and frac[b] > 0:
                ci = np.concatenate([idx[sel], idx[missing]])
                cw = np.concatenate([w[sel], w[missing] * frac[b]])
                order = np.argsort(ci, kind="stable")
                out.append((ci[order], cw[order]))
            else:
                out.append((idx[sel], w[sel]))
        return out


def _build_nodes(tree: Tree, router: _Router | None, X_rows=None) -> _Node:
    """The tree as linked nodes; with a router, every node gets its training rows (the
    root gets all rows) and counts recomputed from them."""
    def build(i: int, idx, w) -> _Node:
        counts = tree.counts[i].copy() if router is None else router.counts(idx, w)
        node = _Node(i, counts, idx, w)
        if tree.feature[i] >= 0:
            kids = tree.children_of(i)
            parts = router.split(i, idx, w) if router is not None else [(None, None)] * len(kids)
            node.children = [build(int(c), pi, pw) for c, (pi, pw) in zip(kids, parts,
                                                                          strict=True)]
        return node

    idx, w = X_rows if X_rows is not None else (None, None)
    return build(0, idx, w)


def _to_tree(tree: Tree, root: _Node) -> Tree:
    """Flatten linked nodes back into arrays (preorder ids, so children > parents)."""
    order: list[_Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(node.children))
    ids = {id(n): k for k, n in enumerate(order)}
    feature, threshold, ch, ch_ptr, vb, vb_ptr, counts = [], [], [], [0], [], [0], []
    for node in order:
        if node.children:
            s = node.src
            feature.append(int(tree.feature[s]))
            threshold.append(float(tree.threshold[s]))
            ch.extend(ids[id(c)] for c in node.children)
            vb.extend(tree.value_branch[tree.value_branch_ptr[s] : tree.value_branch_ptr[s + 1]])
        else:
            feature.append(-1)
            threshold.append(np.nan)
        ch_ptr.append(len(ch))
        vb_ptr.append(len(vb))
        counts.append(node.counts)
    out = Tree(
        j48_cuts=tree.j48_cuts,
        feature=np.array(feature, dtype=np.int64),
        threshold=np.array(threshold, dtype=float),
        children_ptr=np.array(ch_ptr, dtype=np.int64),
        children=np.array(ch, dtype=np.int64),
        value_branch_ptr=np.array(vb_ptr, dtype=np.int64),
        value_branch=np.array(vb, dtype=np.int64),
        counts=np.array(counts, dtype=float).reshape(len(order), tree.n_classes),
    )
    out.validate()
    return out


class _J48Pruner:
    """``C45PruneableClassifierTree.prune`` (Weka 3.6/3.8), node for node."""

    def __init__(self, tree: Tree, cf: float, router: _Router | None) -> None:
        self.tree, self.cf, self.router = tree, cf, router
        self.raised = 0

    def estimated(self, node: _Node) -> float:  # getEstimatedErrors
        if not node.children:
            return _estimated_errors(node.counts, self.cf)
        return sum(self.estimated(c) for c in node.children)

    def for_branch(self, node: _Node, idx, w) -> float:  # getEstimatedErrorsForBranch
        if not node.children:
            return _estimated_errors(self.router.counts(idx, w), self.cf)
        parts = self.router.split(node.src, idx, w)
        return sum(self.for_branch(c, pi, pw) for c, (pi, pw) in
                   zip(node.children, parts, strict=True))

    def redistribute(self, node: _Node, idx, w) -> None:  # newDistribution
        node.idx, node.w = idx, w
        node.counts = self.router.counts(idx, w)
        if node.children:
            parts = self.router.split(node.src, idx, w)
            for c, (pi, pw) in zip(node.children, parts, strict=True):
                self.redistribute(c, pi, pw)

    def prune(self, node: _Node) -> None:
        if not node.children:
            return
        for c in node.children:
            self.prune(c)
        # maxBag: the last branch with the largest weight (Utils.grOrEq).
        totals = [float(c.counts.sum()) for c in node.children]
        largest, best = -1, 0.0
        for b, t in enumerate(totals):
            if best - t < 1e-6:
                largest, best = b, t
        if self.router is not None:
            errors_largest = self.for_branch(node.children[largest], node.idx, node.w)
        else:
            errors_largest = math.inf
        errors_leaf = _estimated_errors(node.counts, self.cf)
        errors_tree = self.estimated(node)
        # Utils.smOrEq(a, b) is a - b < 1e-6.
        if errors_leaf - (errors_tree + 0.1) < 1e-6 and errors_leaf - (errors_largest + 0.1) < 1e-6:
            node.children = []
            return
        if errors_largest - (errors_tree + 0.1) < 1e-6:
            branch = node.children[largest]
            node.src, node.children = branch.src, branch.children
            self.raised += 1
            self.redistribute(node, node.idx, node.w)
            self.prune(node)


def prune_ebp(tree: Tree, cf: float = DEFAULT_CF, *, data: Dataset | None = None,
              subtree_raising: bool = True) -> tuple[Tree, dict]:
    """C4.5 error-based pruning as Weka J48 does it (``-C cf``; ``-S`` = no raising).

    Post-order: each node's children are pruned first; then, with E(·) the J48 estimate
    ``e + addErrs(N, e, cf)`` summed over leaves, the node becomes a leaf if
    ``E(leaf) <= E(subtree) + 0.1`` and ``E(leaf) <= E(largest branch) + 0.1``; otherwise it
    is replaced by its largest branch if ``E(largest branch) <= E(subtree) + 0.1``, the
    node's training rows are re-routed through that branch (counts change) and the result
    is pruned again. E(largest branch) routes *all* the node's rows through the branch, so
    subtree raising needs the training data (``data``, the rows the tree was grown on).

    References: Quinlan (1993), ch. 4; Weka ``C45PruneableClassifierTree.prune``.
    """
    router = None
    rows = None
    if subtree_raising:
        if data is None:
            raise ConfigError("subtree raising needs the training data.",
                              "Pass the data, or turn raising off (--no-raise).")
        labelled = np.flatnonzero(data.y >= 0)
        router = _Router(tree, data.X, data.y, tree.n_classes)
        rows = (labelled, data.weights[labelled].astype(float))
    root = _build_nodes(tree, router, rows)
    if router is not None:
        _check_counts(tree, root)
    pruner = _J48Pruner(tree, cf, router)
    pruner.prune(root)
    return _to_tree(tree, root), {"raised": pruner.raised}


def _check_counts(tree: Tree, root: _Node) -> None:
    """The re-routed training rows must reproduce the tree's stored counts."""
    stack, bad = [root], False
    while stack and not bad:
        node = stack.pop()
        bad = not np.allclose(node.counts, tree.counts[node.src], rtol=1e-7, atol=1e-7)
        stack.extend(node.children)
    if bad:
        raise DataError(
            "the training data does not reproduce the tree's class counts; it is not the "
            "data the tree was grown on.",
            "Give the original training file.",
        )
