"""CART cost-complexity pruning (Breiman et al. 1984, ch. 3 and 10), under a loss matrix.

The weakest-link sequence of a tree (:class:`CcpPath`, :func:`ccp_path`), pruning at a given
α (:func:`prune_ccp`), and the choice of α the ``ccp`` method makes: on a stratified holdout
of the training data (Bradford et al.'s protocol, 20 %) or by k-fold cross-validation as
rpart does (:func:`cv_path_losses`, optionally with the 1-SE rule). With a loss matrix the
resubstitution *loss* replaces the error ("loss-based CCP", Bradford et al. sect. 2.2) and
the validation loss is ``L[true, predicted]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treecert.data.folds import stratified_folds
from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.pruning.common import (
    DEFAULT_CCP_HOLDOUT,
    PruneOptions,
    _check_growable,
    _grow,
    loss_or_zero_one,
    node_risk,
    stratified_holdout,
)
from treecert.tree.arrays import Tree


def _levels(tree: Tree) -> list[np.ndarray]:
    """Node ids grouped by depth, root first."""
    depth = tree.node_depth
    return [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)]


def _subtree_sums(tree: Tree, levels: list[np.ndarray], leaf: np.ndarray,
                  value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node: sum of ``value`` over the leaves of its subtree, and their number, where
    ``leaf`` marks the nodes acting as leaves (nodes below them are ignored)."""
    sub = np.where(leaf, value, 0.0)
    n = leaf.astype(float)
    parent = tree.parent
    for nodes in reversed(levels[1:]):
        p = parent[nodes]
        keep = ~leaf[p]
        np.add.at(sub, p[keep], sub[nodes[keep]])
        np.add.at(n, p[keep], n[nodes[keep]])
    return sub, n


def _alive(tree: Tree, levels: list[np.ndarray], leaf: np.ndarray) -> np.ndarray:
    """Nodes still in the tree when the nodes in ``leaf`` are leaves."""
    alive = np.ones(tree.n_nodes, dtype=bool)
    parent = tree.parent
    for nodes in levels[1:]:
        p = parent[nodes]
        alive[nodes] = alive[p] & ~leaf[p]
    return alive


@dataclass
class CcpPath:
    """The weakest-link sequence T_1 ⊃ T_2 ⊃ ... ⊃ T_K = root of a tree.

    ``alphas[k]`` is the smallest α at which T_k minimises ``R(T) + α |leaves(T)|`` (so
    ``alphas[0] = 0``); ``risks[k]`` its resubstitution loss and ``leaves[k]`` its size.
    ``node_alpha[i]`` is the α at which node i becomes a leaf (inf if it never does itself,
    because an ancestor goes first); pruning at α collapses every node with
    ``node_alpha <= α``. α is in units of the loss summed over the training weight; rpart's
    ``cp`` is ``α / R(root)``.
    """

    alphas: np.ndarray
    risks: np.ndarray
    leaves: np.ndarray
    node_alpha: np.ndarray
    root_risk: float

    @property
    def cps(self) -> np.ndarray:
        return self.alphas / self.root_risk if self.root_risk > 0 else self.alphas * np.nan

    def prune_mask(self, alpha: float) -> np.ndarray:
        return self.node_alpha <= alpha + _alpha_tol(self.root_risk)

    def table(self) -> list[dict]:
        return [
            {"alpha": float(a), "cp": float(c), "leaves": int(n), "risk": float(r),
             "rel_error": float(r / self.root_risk) if self.root_risk > 0 else float("nan")}
            for a, c, n, r in zip(self.alphas, self.cps, self.leaves, self.risks, strict=True)
        ]


def _alpha_tol(scale: float) -> float:
    return 1e-9 * max(1.0, abs(scale))


def ccp_path(tree: Tree, loss: np.ndarray | None = None) -> CcpPath:
    """Breiman et al.'s weakest-link pruning sequence, under a loss matrix if given.

    Repeatedly collapse the internal node(s) with the smallest
    ``g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)``; ties collapse together. With
    ``loss``, ``R`` is the resubstitution loss of :func:`~treecert.pruning.common.node_risk`
    (Bradford et al.'s loss-based CCP, rpart's risk with a loss matrix).

    References: Breiman, Friedman, Olshen & Stone (1984), sect. 3.3 and 10.2.
    """
    L = loss_or_zero_one(loss, tree.n_classes)
    R, _ = node_risk(tree.counts, L)
    levels = _levels(tree)
    tol = _alpha_tol(R[0])
    collapsed = np.zeros(tree.n_nodes, dtype=bool)
    node_alpha = np.full(tree.n_nodes, np.inf)
    alphas, risks, leaves = [], [], []
    alpha = 0.0
    while True:
        leaf = tree.is_leaf | collapsed
        sub_r, sub_n = _subtree_sums(tree, levels, leaf, R)
        internal = ~leaf & _alive(tree, levels, leaf)
        if not internal.any():
            alphas.append(alpha)
            risks.append(float(sub_r[0]))
            leaves.append(int(sub_n[0]))
            break
        with np.errstate(invalid="ignore", divide="ignore"):
            g = np.where(internal, (R - sub_r) / (sub_n - 1), np.inf)
        g_min = max(float(g.min()), 0.0)
        if g_min > alpha + tol:
            # The current tree is optimal on [alpha, g_min).
            alphas.append(alpha)
            risks.append(float(sub_r[0]))
            leaves.append(int(sub_n[0]))
            alpha = g_min
        weakest = internal & (g <= alpha + tol)
        collapsed |= weakest
        node_alpha[weakest] = alpha
    return CcpPath(np.array(alphas), np.array(risks), np.array(leaves, dtype=np.int64),
                   node_alpha, float(R[0]))


def prune_ccp(tree: Tree, alpha: float, loss: np.ndarray | None = None) -> Tree:
    """The subtree of the weakest-link sequence that is optimal at ``alpha``."""
    if alpha < 0:
        raise ConfigError(f"alpha must be >= 0, got {alpha:g}.")
    path = ccp_path(tree, loss)
    return tree.with_leaves(path.prune_mask(alpha))


def _decisions(tree: Tree, X: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Minimum-expected-loss class of every row from the tree's count-based leaves."""
    proba = tree.predict_proba(X, "frequency")
    return np.argmin(proba @ L, axis=1)


def _row_losses(tree: Tree, data: Dataset, L: np.ndarray) -> np.ndarray:
    """Weighted loss ``w_i L[y_i, pred_i]`` of every row (the right way round)."""
    pred = _decisions(tree, data.X, L)
    return data.weights * L[data.y, pred]


def _betas(alphas: np.ndarray) -> np.ndarray:
    """rpart's representative α of each subtree: the geometric mean of the ends of the
    interval on which it is optimal; the root's is 10 × its α ("close enough to infinity",
    ``xval.c``)."""
    out = np.empty_like(alphas)
    out[:-1] = np.sqrt(alphas[:-1] * alphas[1:])
    out[-1] = 10.0 * alphas[-1] if alphas[-1] > 0 else np.inf
    return out


def _choose(total: np.ndarray, se: np.ndarray, one_se: bool) -> int:
    """Index of the chosen subtree (alphas ascending, so larger index = smaller tree):
    minimum validation loss, ties to the smaller tree; with the 1-SE rule the smallest
    tree within one standard error of the minimum."""
    tol = 1e-9 * max(1.0, float(np.max(np.abs(total))))
    best = int(np.flatnonzero(total <= total.min() + tol)[-1])
    if one_se:
        best = int(np.flatnonzero(total <= total[best] + se[best] + tol)[-1])
    return best


def _se_of_total(losses: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """rpart's xstd (unscaled): sqrt(Σ w l² − (Σ w l)² / Σ w) per column of per-row losses
    ``losses`` (rows, steps) that are already weighted (l_i w_i)."""
    W = weights.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        unweighted = np.where(weights[:, None] > 0, losses / weights[:, None], 0.0)
    sq = (weights[:, None] * unweighted**2).sum(axis=0)
    tot = losses.sum(axis=0)
    return np.sqrt(np.maximum(sq - tot**2 / W, 0.0)) if W > 0 else np.zeros_like(tot)


def cv_path_losses(
    path: CcpPath, folds: list[tuple[Tree, Dataset, float]], loss: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Cross-validated loss of every subtree of ``path`` (rpart's ``xerror`` before scaling).

    ``folds`` holds, per fold, the tree grown without the fold, the held-out rows, and the
    ratio (training weight of the fold tree) / (weight of all the data) by which rpart
    rescales α. Each fold tree is pruned at every representative α of :func:`_betas` and
    the held-out rows are scored with ``L[true, predicted]`` — the orientation rpart's
    ``ginipred`` gets wrong
    (https://github.com/bethatkinson/rpart/issues/74). Returns the total loss per subtree and its
    standard error (rpart's ``xstd``, unscaled).
    """
    L = loss_or_zero_one(loss, folds[0][0].n_classes)
    betas = _betas(path.alphas)
    per_row, weights = [], []
    for fold_tree, held, ratio in folds:
        fpath = ccp_path(fold_tree, L)
        cols = []
        for beta in betas:
            pruned = fold_tree.with_leaves(fpath.prune_mask(beta * ratio))
            cols.append(_row_losses(pruned, held, L))
        per_row.append(np.column_stack(cols) if cols else np.zeros((held.n_samples, 0)))
        weights.append(held.weights)
    losses = np.vstack(per_row)
    w = np.concatenate(weights)
    return losses.sum(axis=0), _se_of_total(losses, w)


def _ccp(tree: Tree, data: Dataset, params: dict, loss: np.ndarray | None,
         opts: PruneOptions) -> tuple[Tree, dict]:
    L = loss_or_zero_one(loss, tree.n_classes)
    path = ccp_path(tree, L)
    labelled = data.subset(np.flatnonzero(data.y >= 0))
    W = float(labelled.weights.sum())
    if opts.cv is not None:
        if opts.cv > labelled.n_samples:
            raise ConfigError(f"ccp: {opts.cv} folds for {labelled.n_samples} training rows.",
                              f"Use at most --cv {labelled.n_samples} (leave-one-out).")
        fold_ids = stratified_folds(labelled.y, opts.cv, opts.seed)
        folds = []
        for f in range(opts.cv):
            train = labelled.subset(fold_ids != f)
            _check_growable(train, f"fold {f} of the ccp cross-validation")
            folds.append((_grow(params, train), labelled.subset(fold_ids == f),
                          float(train.weights.sum()) / W))
        total, se = cv_path_losses(path, folds, L)
        k = _choose(total, se, bool(opts.one_se))
        table = path.table()
        for row, t, s in zip(table, total, se, strict=True):
            row["cv_loss"] = float(t)
            row["xerror"] = float(t / path.root_risk) if path.root_risk > 0 else float("nan")
            row["xstd"] = float(s / path.root_risk) if path.root_risk > 0 else float("nan")
        alpha = float(_betas(path.alphas)[k])
        pruned = tree.with_leaves(path.prune_mask(path.alphas[k]))
        info = {"selection": f"{opts.cv}-fold cross-validation" +
                (" with the 1-SE rule" if opts.one_se else ""),
                "alpha": float(path.alphas[k]), "representative_alpha": alpha,
                "cp": float(path.cps[k]), "chosen": k,
                "pruned_to_root": bool(pruned.n_nodes == 1), "sequence": table}
        return pruned, info
    fraction = opts.holdout if opts.holdout is not None else DEFAULT_CCP_HOLDOUT
    held_mask = stratified_holdout(labelled.y, fraction, opts.seed)
    train, held = labelled.subset(~held_mask), labelled.subset(held_mask)
    _check_growable(train, "the ccp holdout's training part")
    small = _grow(params, train)
    spath = ccp_path(small, L)
    cols = [_row_losses(small.with_leaves(spath.prune_mask(a)), held, L) for a in spath.alphas]
    losses = np.column_stack(cols)
    total, se = losses.sum(axis=0), _se_of_total(losses, held.weights)
    k = _choose(total, se, bool(opts.one_se))
    table = spath.table()
    for row, t, s in zip(table, total, se, strict=True):
        row["holdout_loss"] = float(t)
        row["holdout_se"] = float(s)  # for prune --plot's 1-SE bars
    ratio = W / float(train.weights.sum())
    beta = float(_betas(spath.alphas)[k]) * ratio
    if not np.isfinite(beta):
        # The tree regrown on the rest is a single leaf (no split passes the growing
        # criteria on fewer rows), so its one subtree, the root, is chosen, and rpart's
        # representative α of a root at α 0 is infinite. The whole tree is pruned to its
        # root, recorded at the α from which its root is optimal (finite: the model file
        # is strict JSON).
        beta = float(path.alphas[-1])
    pruned = tree.with_leaves(path.prune_mask(beta))
    info = {"selection": f"holdout {fraction:g} (tree regrown on the rest)",
            "alpha": beta, "cp": beta / path.root_risk if path.root_risk > 0 else None,
            "chosen": k, "pruned_to_root": bool(pruned.n_nodes == 1),
            "holdout_rows": int(held_mask.sum()), "holdout_sequence": table,
            "sequence": path.table()}
    return pruned, info
