"""The tree learner: split search, growing, the tree as flat arrays, leaf estimates, the
:class:`~treecert.tree.classifier.DecisionTree` estimator, rendering and the JSON model file.

Everything that learns or stores *one* tree lives here; nothing here knows about certainty
methods, transductive engines, pruning or experiments. May import :mod:`treecert.data` and
the foundation modules (:mod:`treecert.errors`, :mod:`treecert.parallel`).
"""
