"""The tree learner: everything that learns or stores *one* tree.

Nothing here knows about certainty methods, transductive engines, pruning or experiments.
May import :mod:`treecert.data` and the foundation modules (:mod:`treecert.errors`,
:mod:`treecert.parallel`).

- :mod:`~treecert.tree.impurity` and :mod:`~treecert.tree.segments`: entropy, Gini and split
  information; sums over nodes' rows laid end to end, exact bit for bit in any order.
- :mod:`~treecert.tree.split_search` and :mod:`~treecert.tree.numeric_search`: the batched
  best-split search of many nodes at once (growing parameters, criteria, nominal and numeric
  tests).
- :mod:`~treecert.tree.grow`: stopping rules, routing rows (C4.5 fractional instances), the
  level-wise grower and the node-at-a-time builder.
- :mod:`~treecert.tree.arrays`: the tree as flat numpy arrays (``Tree``), collapse and cp.
- :mod:`~treecert.tree.leaf_estimates`: frequency, Laplace and m-estimate leaves.
- :mod:`~treecert.tree.classifier`: the ``DecisionTree`` estimator.
- :mod:`~treecert.tree.render` and :mod:`~treecert.tree.model`: text/DOT rendering and the
  JSON model file.
"""
