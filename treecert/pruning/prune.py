"""Post-pruning, cost-sensitive where the method allows it (Bradford et al. 1998).

Every method takes a :class:`~treecert.tree.Tree` and returns a *new*, compacted tree (the
input is never modified) plus a dict describing what was done; :func:`prune_tree` is the
single entry point used by ``treecert prune``, ``train --prune`` and the leaf methods'
``prune=`` option.

Methods (``PRUNE_METHODS``; registry key = CLI value = JSON ``"method"``):

* ``none`` — the tree as grown.
* ``ccp`` — CART cost-complexity pruning (Breiman et al. 1984, ch. 3 and 10): the whole
  weakest-link sequence; α chosen on a held-out part of the training data (Bradford et al.'s
  protocol, 20 %) or by k-fold cross-validation (rpart's way, optionally with the 1-SE rule).
  With a loss matrix the resubstitution *loss* replaces the error ("loss-based CCP",
  Bradford et al. sect. 2.2) and the validation loss is ``L[true, predicted]``.
* ``ebp`` — C4.5 error-based pruning exactly as Weka J48 (``C45PruneableClassifierTree``):
  ``Stats.addErrs`` normal approximation with its ``e < 1`` interpolation, the 0.1 slack, and
  subtree raising (which re-routes the node's training rows through its largest branch).
* ``laplace_loss`` — Bradford et al.'s Laplace-based pruning (sect. 2.2, Fig. 2): a node's
  expected loss is ``m · min_j Σ_c p_c L[c, j]`` with Laplace ``p``; a subtree is pruned when
  the node's loss is at most the sum of its leaves' losses.
* ``kl`` — Bradford et al.'s KL pruning (sect. 2.3): prune when the weighted mean over the
  children of KL(child ‖ parent), Laplace distributions, is below a threshold (0.01).
* ``rep`` — reduced-error pruning on a stratified holdout (Quinlan 1987; Weka J48 ``-R``).

Losses are ``L[true, predicted]`` everywhere (rows = true class); without a loss matrix the
0/1 loss is used, so every loss-aware method reduces to its error-based form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from treecert.data.folds import stratified_folds
from treecert.data.schema import Dataset
from treecert.errors import ConfigError, DataError
from treecert.tree.arrays import Tree
from treecert.tree.classifier import DecisionTree

PRUNE_METHODS = ("none", "ccp", "ebp", "laplace_loss", "kl", "rep")

#: Defaults of the pruning options (``None`` = "not applicable / method default").
DEFAULT_CF = 0.25
DEFAULT_KL_THRESHOLD = 0.01
DEFAULT_CCP_HOLDOUT = 0.2  # Bradford et al.: "holding back 20% of the training set"
DEFAULT_REP_HOLDOUT = 1.0 / 3.0  # Weka J48 -R -N 3: one fold of three prunes
_OPTION_OWNERS = {
    "cf": ("ebp",),
    "subtree_raising": ("ebp",),
    "kl_threshold": ("kl",),
    "holdout": ("ccp", "rep"),
    "cv": ("ccp",),
    "one_se": ("ccp",),
}


@dataclass(frozen=True)
class PruneOptions:
    """Settings of one pruning run; ``None`` means the method's default."""

    method: str = "none"
    cf: float | None = None
    subtree_raising: bool | None = None
    kl_threshold: float | None = None
    holdout: float | None = None
    cv: int | None = None
    one_se: bool | None = None
    seed: int = 1

    def __post_init__(self) -> None:
        method = self.method.strip().lower().replace("-", "_")
        object.__setattr__(self, "method", method)
        if method not in PRUNE_METHODS:
            raise ConfigError(
                f"unknown pruning method '{self.method}'.",
                f"Choose one of: {', '.join(PRUNE_METHODS)}.",
            )
        for name, owners in _OPTION_OWNERS.items():
            if getattr(self, name) is not None and method not in owners:
                raise ConfigError(
                    f"pruning option {name} does not apply to '{method}'.",
                    f"It is an option of {' and '.join(owners)}.",
                )
        if self.cf is not None and not 0 < self.cf <= 0.5:
            raise ConfigError(f"cf must be in (0, 0.5], got {self.cf:g}.",
                              "J48 ignores larger values; 0.25 is its default.")
        if self.kl_threshold is not None and not self.kl_threshold >= 0:
            raise ConfigError(f"the KL threshold must be >= 0, got {self.kl_threshold:g}.")
        if self.holdout is not None and not 0 < self.holdout < 1:
            raise ConfigError(f"holdout must be a fraction in (0, 1), got {self.holdout:g}.")
        if self.cv is not None and self.cv < 2:
            raise ConfigError(f"cv must be at least 2 folds, got {self.cv}.")
        if self.cv is not None and self.holdout is not None:
            raise ConfigError("choose either a holdout or cross-validation for ccp, not both.")

    @property
    def needs_data(self) -> bool:
        """Whether the training rows are needed (regrowing, holdouts, subtree raising)."""
        if self.method in ("ccp", "rep"):
            return True
        return self.method == "ebp" and self.subtree_raising is not False

    def to_json(self) -> dict:
        """The options that apply to the method, with defaults filled in."""
        m = self.method
        if m == "ebp":
            return {"cf": self.cf if self.cf is not None else DEFAULT_CF,
                    "subtree_raising": self.subtree_raising is not False}
        if m == "kl":
            return {"threshold": (self.kl_threshold if self.kl_threshold is not None
                                  else DEFAULT_KL_THRESHOLD), "log_base": 2}
        if m == "ccp":
            out: dict = {"one_se": bool(self.one_se), "seed": self.seed}
            if self.cv is not None:
                out["cv"] = self.cv
            else:
                out["holdout"] = self.holdout if self.holdout is not None else DEFAULT_CCP_HOLDOUT
            return out
        if m == "rep":
            return {"holdout": self.holdout if self.holdout is not None else DEFAULT_REP_HOLDOUT,
                    "seed": self.seed}
        return {}


# --------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------


def loss_or_zero_one(loss: np.ndarray | None, n_classes: int) -> np.ndarray:
    """The loss matrix ``L[true, predicted]``, or the 0/1 loss when none is given."""
    if loss is None:
        return 1.0 - np.eye(n_classes)
    L = np.asarray(loss, dtype=float)
    if L.shape != (n_classes, n_classes):
        raise ConfigError(f"the loss matrix must be {n_classes}x{n_classes}, got {L.shape}.")
    if not np.all(np.isfinite(L)) or np.any(L < 0):
        raise ConfigError("loss matrix entries must be finite and >= 0.")
    return L


def node_risk(counts: np.ndarray, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Resubstitution loss of every node as a leaf and its minimum-loss class.

    ``risk[i] = min_j Σ_c counts[i, c] L[c, j]`` (rpart's node risk; the number of training
    errors under the 0/1 loss). Ties go to the first class.
    """
    per_class = counts @ loss
    pred = np.argmin(per_class, axis=1)
    return per_class[np.arange(counts.shape[0]), pred], pred


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


def size_of(tree: Tree) -> dict:
    return {"nodes": tree.n_nodes, "leaves": tree.n_leaves, "depth": tree.depth}


# --------------------------------------------------------------------------------------------
# cost-complexity pruning (CART)
# --------------------------------------------------------------------------------------------


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
    ``loss``, ``R`` is the resubstitution loss of :func:`node_risk` (Bradford et al.'s
    loss-based CCP, rpart's risk with a loss matrix).

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


def stratified_holdout(y: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of held-out rows: ``round(fraction · n_c)`` rows of every class c (at
    least one row stays in training), drawn with ``RandomState(seed)``."""
    rng = np.random.RandomState(seed)
    held = np.zeros(y.shape[0], dtype=bool)
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        k = min(round(fraction * rows.size), rows.size - 1)
        if k > 0:
            held[rng.permutation(rows)[:k]] = True
    return held


def _grow(params: dict, data: Dataset) -> Tree:
    return DecisionTree(**params).fit(data).tree_


def cv_path_losses(
    path: CcpPath, folds: list[tuple[Tree, Dataset, float]], loss: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Cross-validated loss of every subtree of ``path`` (rpart's ``xerror`` before scaling).

    ``folds`` holds, per fold, the tree grown without the fold, the held-out rows, and the
    ratio (training weight of the fold tree) / (weight of all the data) by which rpart
    rescales α. Each fold tree is pruned at every representative α of :func:`_betas` and
    the held-out rows are scored with ``L[true, predicted]`` — the orientation rpart's
    ``ginipred`` gets wrong (rpart issue #74). Returns the total loss per subtree and its
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
                "cp": float(path.cps[k]), "chosen": k, "sequence": table}
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
    for row, t in zip(table, total, strict=True):
        row["holdout_loss"] = float(t)
    ratio = W / float(train.weights.sum())
    beta = float(_betas(spath.alphas)[k]) * ratio
    pruned = tree.with_leaves(path.prune_mask(beta))
    info = {"selection": f"holdout {fraction:g} (tree regrown on the rest)",
            "alpha": beta, "cp": beta / path.root_risk if path.root_risk > 0 else None,
            "chosen": k, "holdout_rows": int(held_mask.sum()), "holdout_sequence": table,
            "sequence": path.table()}
    return pruned, info


def _check_growable(data: Dataset, what: str) -> None:
    if np.unique(data.y).size < 2:
        raise DataError(
            f"{what} has only one class; too few rows to hold some out.",
            "Use fewer folds, a smaller holdout, or another pruning method.",
        )


# --------------------------------------------------------------------------------------------
# error-based pruning (C4.5 / J48)
# --------------------------------------------------------------------------------------------


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
            branch = (vals > t.threshold[src]).astype(np.int64)
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


# --------------------------------------------------------------------------------------------
# Laplace-based pruning methods (Bradford et al. 1998)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# reduced-error pruning
# --------------------------------------------------------------------------------------------


def node_counts_of(tree: Tree, data: Dataset) -> np.ndarray:
    """Weighted class counts of ``data`` at every node, routed as at prediction (unknown
    values share by the tree's training branch weights)."""
    counts = np.zeros((tree.n_nodes, tree.n_classes))
    row, leaf, weight = tree.apply_weighted(data.X)
    ok = data.y[row] >= 0
    row, leaf, weight = row[ok], leaf[ok], weight[ok] * data.weights[row[ok]]
    np.add.at(counts, (leaf, data.y[row]), weight)
    parent = tree.parent
    for i in range(tree.n_nodes - 1, 0, -1):
        counts[parent[i]] += counts[i]
    return counts


def check_training_data(tree: Tree, data: Dataset) -> None:
    """Raise :class:`DataError` unless routing ``data`` through ``tree`` reproduces the
    tree's class counts at every node — i.e. unless it is the data the tree was grown on
    (as far as pruning can tell)."""
    counts = node_counts_of(tree, data)
    if not np.allclose(counts, tree.counts, rtol=1e-7, atol=1e-6):
        bad = int(np.flatnonzero(~np.isclose(counts, tree.counts, rtol=1e-7,
                                             atol=1e-6).all(axis=1))[0])
        raise DataError(
            f"{data.source}: not the data this tree was grown on (class counts differ at "
            f"node {bad}: {_fmt_counts(counts[bad])} vs {_fmt_counts(tree.counts[bad])}).",
            "Give the original training file. A tree pruned with rep keeps the counts of "
            "the rows it was grown on and cannot be pruned again with data.",
        )


def _fmt_counts(c: np.ndarray) -> str:
    return "[" + ", ".join(f"{v:g}" for v in c) + "]"


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


# --------------------------------------------------------------------------------------------
# the entry point
# --------------------------------------------------------------------------------------------


def prune_tree(
    tree: Tree,
    options: PruneOptions,
    *,
    data: Dataset | None = None,
    params: dict | None = None,
    loss: np.ndarray | None = None,
) -> tuple[Tree, dict]:
    """Prune ``tree`` with ``options.method``; returns the new tree and a record.

    ``data`` is the training data the tree was grown on (needed by ``ccp``, ``rep`` and
    ``ebp`` with subtree raising), ``params`` the :class:`DecisionTree` parameters used to
    regrow trees on parts of it (``ccp``, ``rep``), ``loss`` the matrix ``L[true, pred]``
    (used by ``ccp``, ``laplace_loss`` and ``rep``; ``ebp`` and ``kl`` do not use a loss).

    The record holds ``method``, ``options``, ``loss_used``, ``before``/``after`` sizes and
    method details (for ``ccp``: the α sequence, the validation losses and the chosen α).
    """
    method = options.method
    if options.needs_data and data is None:
        raise ConfigError(f"pruning with {method} needs the training data.")
    if loss is not None:
        loss_or_zero_one(loss, tree.n_classes)
    detail: dict = {}
    if method == "none":
        pruned = tree
    elif method == "ccp":
        pruned, detail = _ccp(tree, data, dict(params or {}), loss, options)
    elif method == "ebp":
        cf = options.cf if options.cf is not None else DEFAULT_CF
        pruned, detail = prune_ebp(tree, cf, data=data,
                                   subtree_raising=options.subtree_raising is not False)
    elif method == "laplace_loss":
        pruned, detail = prune_laplace_loss(tree, loss)
    elif method == "kl":
        thr = options.kl_threshold if options.kl_threshold is not None else DEFAULT_KL_THRESHOLD
        pruned, detail = prune_kl(tree, thr)
    else:  # rep
        pruned, detail = _rep(data, dict(params or {}), loss, options)
    record = {
        "method": method,
        "options": options.to_json(),
        "loss_used": loss is not None and method in ("ccp", "laplace_loss", "rep"),
        "before": size_of(tree),
        "after": size_of(pruned),
        **detail,
    }
    return pruned, _finite(record)


def _finite(obj):
    """The record with NaN/inf replaced by None (model files are strict JSON)."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
