"""The tree Venn machine in Lindsay & Cox's protocol: a pruned base tree, x eligible as a
threshold, and the online mode.

Lindsay & Cox (ICDM 2004) ran the Venn Probability Machine on Weka's C4.5 as it ships
(J48: pruned) and grew it on D ∪ {(x, j)} with x an ordinary example. treecert's batched
machine (:mod:`treecert.methods.venn_fast`) grows only unpruned trees with x ineligible for
thresholds. The options here take the **exact path** instead: for every test object x and
tentative label j the whole tree on D ∪ {(x, j)} is grown —

* ``x_threshold=false`` (default): by the transductive engine (x ineligible, as everywhere
  in treecert; :meth:`TransductiveEngine.tree_with`);
* ``x_threshold=true``: by the plain learner on the n + 1 examples, x like any other (the
  paper's reading; the taxonomy is then symmetric in the n + 1 examples, as Venn validity
  assumes) —

then pruned with the ``prune`` options (the leaf methods' options, :mod:`treecert.pruning`;
``ccp`` and ``rep`` regrow on parts of D ∪ {(x, j)} with x an ordinary example), and the
n + 1 resubstitution forecasts of that tree discretised into types as by the fast machine
(:func:`treecert.methods.venn.bag_venn_matrices`). With ``taxonomy=leaf`` row j is the
frequencies of x's leaf (x's shares mixed over leaves for unknown values) in the pruned tree.
Cost: one whole tree (and its pruning) per (x, j), K trees per test row: 3 to 46 times the
batched machine's CPU time on the repository's datasets (diabetes' 10-fold CV: 25 CPU-seconds
against 1.4; benchmarks/reproduce_lindsay_cox.py records both).

``online=true`` (Vovk, Shafer & Nouretdinov's setting): the rows of the test data are taken
in order; row i is predicted by the machine fitted on the training data plus test rows
0..i-1 with their labels, then learnt. The test data must be labelled. Cost: one fit per row.
"""

from __future__ import annotations

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.pruning.prune import prune_tree
from treecert.tree.arrays import Tree


def uses_refit(opts: dict) -> bool:
    """Whether the options need the exact per-(x, j) path."""
    return bool(opts.get("x_threshold", False)) or opts.get("prune", "none") != "none"


def with_row(data: Dataset, x: np.ndarray, label: int, weight: float = 1.0) -> Dataset:
    """D ∪ {(x, label)} with x last."""
    return Dataset(data.schema, np.vstack([data.X, x[None, :]]),
                   np.concatenate([data.y, [label]]).astype(np.int64),
                   np.concatenate([data.weights, [weight]]).astype(float),
                   source=data.source)


def tree_on(method, x: np.ndarray, label: int) -> tuple[Tree, Dataset]:
    """The (pruned) tree grown on D ∪ {(x, label)}, and that data."""
    data = with_row(method.data_, x, label)
    if method.opts.get("x_threshold", False):
        tree = method.new_tree().fit(data).tree_
    else:
        engine = "naive" if method.opts["engine"] == "naive" else "fast"
        tree = method.engine_.tree_with(x, label, engine=engine)
    options = method.prune_options()
    if options.method != "none":
        tree, _ = prune_tree(tree, options, data=data, params=method.new_tree().get_params(),
                             loss=method.loss)
    return tree, data


def tree_on_data(method) -> tuple[Tree, Dataset]:
    """The (pruned) tree grown on the fitted data alone: the machine's size."""
    data = method.data_
    tree = method.new_tree().fit(data).tree_
    options = method.prune_options()
    if options.method != "none":
        tree, _ = prune_tree(tree, options, data=data, params=method.new_tree().get_params(),
                             loss=method.loss)
    return tree, data


def refit_matrices(method, X: np.ndarray) -> np.ndarray:
    """Venn matrices (n, K, K) of the rows of X by the exact path (see the module)."""
    from treecert.methods.venn_types import bag_venn_matrices

    d = method.data_
    K = d.schema.n_classes
    kind, alpha, m = method.opts["base"], method.opts.get("alpha", 1.0), method.opts.get("m", 2.0)
    out = np.empty((X.shape[0], K, K))
    for i in range(X.shape[0]):
        trees = [tree_on(method, X[i], j) for j in range(K)]
        if method.opts["taxonomy"] == "leaf":  # x's leaf frequencies, x counted
            out[i] = np.vstack([t.predict_proba(X[i : i + 1], "frequency") for t, _ in trees])
            continue
        F = np.array([t.predict_proba(aug.X, kind, alpha=alpha, m=m) for t, aug in trees])
        out[i] = bag_venn_matrices([F], d.y.astype(np.int64), d.weights.astype(float), K)[0]
    return out


def online_matrices(method, data: Dataset) -> np.ndarray:
    """Venn matrices of ``data``'s rows in order, each predicted from the fitted data plus
    the rows before it, then learnt (``online=true``)."""
    if not data.has_class or np.any(data.y < 0):
        raise ConfigError("venn: online=true learns every row after predicting it, so the "
                          "data needs the class of every row.",
                          "Give labelled data, or drop online=true.")
    K = data.schema.n_classes
    start = method.data_
    spec_opts = {k: v for k, v in method.spec.options.items() if k != "online"}
    out = np.empty((data.n_samples, K, K))
    for i in range(data.n_samples):
        step = type(method)(method.tree_params, spec=type(method.spec)(
            method.spec.name, spec_opts, method.spec.text))
        step.loss = method.loss
        seen = Dataset(start.schema, np.vstack([start.X, data.X[:i]]),
                       np.concatenate([start.y, data.y[:i]]).astype(np.int64),
                       np.concatenate([start.weights, data.weights[:i]]).astype(float),
                       source=start.source)
        out[i] = step.fit(seen).matrices(data.subset(np.arange(i, i + 1)))[0]
    return out
