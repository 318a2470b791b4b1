"""Post-pruning, cost-sensitive where the method allows it (Bradford et al. 1998).

Every method takes a :class:`~treecert.tree.Tree` and returns a *new*, compacted tree (the
input is never modified) plus a dict describing what was done; :func:`prune_tree`, the one
thing this module holds, is the single entry point used by ``treecert prune``,
``train --prune`` and the leaf methods' ``prune=`` option. Its options are
:class:`~treecert.pruning.common.PruneOptions`.

Methods (:data:`~treecert.pruning.common.PRUNE_METHODS`; registry key = CLI value = JSON
``"method"``, and the name of the method's module):

* ``none`` — the tree as grown.
* ``ccp`` (:mod:`treecert.pruning.ccp`) — CART cost-complexity pruning (Breiman et al. 1984,
  ch. 3 and 10): the whole weakest-link sequence; α chosen on a held-out part of the training
  data (Bradford et al.'s protocol, 20 %) or by k-fold cross-validation (rpart's way,
  optionally with the 1-SE rule). With a loss matrix the resubstitution *loss* replaces the
  error ("loss-based CCP", Bradford et al. sect. 2.2) and the validation loss is
  ``L[true, predicted]``.
* ``ebp`` (:mod:`treecert.pruning.ebp`) — C4.5 error-based pruning exactly as Weka J48
  (``C45PruneableClassifierTree``): ``Stats.addErrs`` normal approximation with its ``e < 1``
  interpolation, the 0.1 slack, and subtree raising (which re-routes the node's training rows
  through its largest branch).
* ``laplace_loss`` (:mod:`treecert.pruning.laplace_loss`) — Bradford et al.'s Laplace-based
  pruning (sect. 2.2, Fig. 2): a node's expected loss is ``m · min_j Σ_c p_c L[c, j]`` with
  Laplace ``p``; a subtree is pruned when the node's loss is at most the sum of its leaves'
  losses.
* ``kl`` (:mod:`treecert.pruning.kl`) — Bradford et al.'s KL pruning (sect. 2.3): prune when
  the weighted mean D over the children of KL(child ‖ parent), Laplace distributions, is
  small: by default bottom-up when m·D (bits over the node's m examples) is below 1, or
  with ``kl_unit=example`` the paper's D below 0.01 bits per example.
* ``rep`` (:mod:`treecert.pruning.rep`) — reduced-error pruning on a stratified holdout
  (Quinlan 1987; Weka J48 ``-R``).

Losses are ``L[true, predicted]`` everywhere (rows = true class); without a loss matrix the
0/1 loss is used, so every loss-aware method reduces to its error-based form. What the
methods share (options, node risks, holdouts, training-data checks) is in
:mod:`treecert.pruning.common`; loss-matrix files are read by :mod:`treecert.pruning.loss`.
"""

from __future__ import annotations

import numpy as np

from treecert.data.fileio import nan_to_none
from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.pruning.ccp import _ccp
from treecert.pruning.common import (
    DEFAULT_CF,
    PruneOptions,
    loss_or_zero_one,
    size_of,
)
from treecert.pruning.ebp import prune_ebp
from treecert.pruning.kl import prune_kl
from treecert.pruning.laplace_loss import prune_laplace_loss
from treecert.pruning.rep import _rep
from treecert.tree.arrays import Tree


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
    ``ebp`` with subtree raising), ``params`` the
    :class:`~treecert.tree.classifier.DecisionTree` parameters used to regrow trees on parts
    of it (``ccp``, ``rep``), ``loss`` the matrix ``L[true, pred]`` (used by ``ccp``,
    ``laplace_loss`` and ``rep``; ``ebp`` and ``kl`` do not use a loss).

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
        pruned, detail = prune_kl(tree, options.kl_threshold_value, options.kl_unit or "node")
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
    return pruned, nan_to_none(record)
