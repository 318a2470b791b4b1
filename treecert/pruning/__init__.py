"""Pruning under loss matrices (Bradford et al.): loss-matrix files, cost-complexity (ccp),
J48's error-based pruning (ebp), Laplace-loss, KL and reduced-error pruning.

One module per method, named as the method (``ccp``, ``ebp``, ``laplace_loss``, ``kl``,
``rep``); what they share in :mod:`~treecert.pruning.common`; the one entry point,
:func:`~treecert.pruning.prune.prune_tree`, in :mod:`~treecert.pruning.prune`; loss-matrix
files in :mod:`~treecert.pruning.loss`.

Pruning transforms a fitted :class:`~treecert.tree.arrays.Tree`; the leaf certainty methods
call it through their ``prune=`` option, so it sits below :mod:`treecert.methods`. May import
:mod:`treecert.tree`, :mod:`treecert.data` and the foundation modules.
"""
