"""What every pruning method shares: the options, losses and node risks, and the training data.

:class:`PruneOptions` (one pruning run's settings, validated against ``PRUNE_METHODS``) and the
option defaults; :func:`loss_or_zero_one` and :func:`node_risk`, the loss view every
loss-aware method starts from; and the handling of the training rows that ``ccp``, ``rep``
and the ``treecert prune --train`` check need (stratified holdouts, regrowing a tree on part
of the data, checking that data is what the tree was grown on). The methods themselves live
in one module each beside this one; :func:`treecert.pruning.prune.prune_tree` dispatches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError, DataError
from treecert.tree.arrays import Tree
from treecert.tree.classifier import DecisionTree

# --------------------------------------------------------------------------------------------
# the options
# --------------------------------------------------------------------------------------------

PRUNE_METHODS = ("none", "ccp", "ebp", "laplace_loss", "kl", "rep")

#: Defaults of the pruning options (``None`` = "not applicable / method default").
DEFAULT_CF = 0.25
#: kl's units: ``node`` (default) thresholds m·D, the bits of information a split carries
#: about the class over its node's m training examples; ``example`` thresholds D itself
#: (bits per example), the paper's unit.
KL_UNITS = ("node", "example")
DEFAULT_KL_THRESHOLD = {"node": 1.0, "example": 0.01}
DEFAULT_CCP_HOLDOUT = 0.2  # Bradford et al.: "holding back 20% of the training set"
DEFAULT_REP_HOLDOUT = 1.0 / 3.0  # Weka J48 -R -N 3: one fold of three prunes
#: Which pruning methods each pruning option applies to.
OPTION_OWNERS = {
    "cf": ("ebp",),
    "subtree_raising": ("ebp",),
    "kl_threshold": ("kl",),
    "kl_unit": ("kl",),
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
    kl_unit: str | None = None
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
        for name, owners in OPTION_OWNERS.items():
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
        if self.kl_unit is not None and self.kl_unit not in KL_UNITS:
            raise ConfigError(f"unknown KL unit '{self.kl_unit}'.",
                              f"Choose one of: {', '.join(KL_UNITS)}.")
        if self.holdout is not None and not 0 < self.holdout < 1:
            raise ConfigError(f"holdout must be a fraction in (0, 1), got {self.holdout:g}.")
        if self.cv is not None and self.cv < 2:
            raise ConfigError(f"cv must be at least 2 folds, got {self.cv}.")
        if self.cv is not None and self.holdout is not None:
            raise ConfigError("choose either a holdout or cross-validation for ccp, not both.")

    @property
    def kl_threshold_value(self) -> float:
        """kl's threshold: the one given, or the default of its unit."""
        if self.kl_threshold is not None:
            return self.kl_threshold
        return DEFAULT_KL_THRESHOLD[self.kl_unit or "node"]

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
            return {"threshold": self.kl_threshold_value, "unit": self.kl_unit or "node",
                    "log_base": 2}
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
# losses, node risks and tree sizes
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


def size_of(tree: Tree) -> dict:
    return {"nodes": tree.n_nodes, "leaves": tree.n_leaves, "depth": tree.depth}


# --------------------------------------------------------------------------------------------
# the training data: holdouts, regrowing, checks
# --------------------------------------------------------------------------------------------


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


def _check_growable(data: Dataset, what: str) -> None:
    if np.unique(data.y).size < 2:
        raise DataError(
            f"{what} has only one class; too few rows to hold some out.",
            "Use fewer folds, a smaller holdout, or another pruning method.",
        )


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
