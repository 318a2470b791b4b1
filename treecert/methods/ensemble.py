"""What the tree ensembles share: bootstrap trees with their out-of-bag forecasts, and the
stored form of their trees in a model file.

``bagging``, ``calibrated_bagging`` and ``forest`` grow ``trees`` trees on bootstrap samples
drawn with ``numpy.random.RandomState(seed)`` and expressed as instance weights (a row drawn
k times weighs k, which grows the same tree as copying rows). :func:`grow_bootstrap` grows
them and sums each training row's forecasts over the trees that left it out (Breiman's
out-of-bag estimate), which the calibrated ensembles calibrate on.

Stored form
-----------
``treecert train --method M`` and ``treecert calibrate --method M`` store the grown trees
in the model's calibration state, so ``predict`` routes rows through them and never
regrows them (:func:`encode_trees`, :func:`decode_trees`). The trees are laid end to end,
each field one base64 little-endian array (``int32`` indices, ``float64`` thresholds and
counts), with per-tree sizes::

    "trees": {"n_trees": T, "n_nodes": [...], "n_children": [...], "n_value_branch": [...],
              "feature": {"encoding": "base64-i4le", "data": ...}, "threshold": {...},
              "children_ptr": {...}, "children": {...}, "value_branch_ptr": {...},
              "value_branch": {...}, "counts": {"encoding": "base64-f8le", "data": ...}}

Each tree's ``children_ptr`` and ``value_branch_ptr`` are stored without their leading 0.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence

import numpy as np

from treecert.data.schema import Dataset
from treecert.tree.arrays import Tree, TreeArrays, descend_entries, descent_tables
from treecert.tree.batch_grow import fit_trees
from treecert.tree.classifier import DecisionTree
from treecert.tree.segments import flat_nonzero, offsets

#: Out-of-bag forecasts are made for trees holding at most this many (row, class) cells at
#: once.
FORECAST_CELLS = 2**21


def bootstrap_counts(rng: np.random.RandomState, n: int) -> np.ndarray:
    """How often each of n rows is drawn in one bootstrap sample of size n."""
    return np.bincount(rng.randint(0, n, n), minlength=n)


def grow_bootstrap(labelled: Dataset, n_trees: int, seed: int,
                   new_tree: Callable[[int], DecisionTree], *, oob: bool = True,
                   oob_alphas: Sequence[float] | None = None
                   ) -> tuple[list[DecisionTree], np.ndarray, np.ndarray]:
    """``n_trees`` trees ``new_tree(i)`` grown on bootstrap samples of ``labelled``.

    Returns the fitted trees, each row's summed out-of-bag probabilities (n, K) and how many
    trees left it out (n,) (zeros without ``oob``). A bootstrap sample of one class only
    grows its tree on every row instead (the tree would be one leaf), and leaves no row out.
    With ``oob_alphas`` the sums are taken with Laplace leaves of each α in turn, shape
    (len(oob_alphas), n, K), for a choice of α on out-of-bag evidence (``forest``).
    The trees are grown together (:func:`treecert.tree.batch_grow.fit_trees`), each the
    tree ``new_tree(i).fit`` grows on its sample.
    """
    n, K = labelled.n_samples, labelled.schema.n_classes
    rng = np.random.RandomState(seed)
    members = [new_tree(i) for i in range(n_trees)]
    drawn = np.stack([bootstrap_counts(rng, n) for _ in range(n_trees)]) if n_trees else (
        np.zeros((0, n), np.int64))
    one_class = _one_class(labelled.y, drawn > 0, K)
    drawn[one_class] = 1  # a one-class bootstrap: the tree is grown on every row, weight 1
    samples = []
    for i in range(n_trees):
        keep = flat_nonzero(drawn[i])
        w = labelled.weights[keep] if one_class[i] else labelled.weights[keep] * drawn[i, keep]
        samples.append((keep, np.asarray(w, dtype=float)))
    _check_samples(labelled, samples)
    trees = fit_trees(members, labelled, samples)
    alphas = [None] if oob_alphas is None else list(oob_alphas)
    oob_sum = np.zeros((len(alphas), n, K))
    oob_n = np.zeros(n)
    if oob:
        outs = [flat_nonzero(drawn[i] == 0) for i in range(n_trees)]
        lo = 0
        while lo < n_trees:  # a few trees at a time: (rows, classes) per tree held at once
            hi, cells = lo + 1, outs[lo].size * K
            while hi < n_trees and cells + outs[hi].size * K <= FORECAST_CELLS:
                cells += outs[hi].size * K
                hi += 1
            per_alpha = forest_probas(trees[lo:hi], labelled.X, outs[lo:hi], alphas)
            for j, probas in enumerate(per_alpha):  # the trees descended once for every α
                for out, proba in zip(outs[lo:hi], probas, strict=True):
                    if out.size:
                        oob_sum[j, out] += proba
            for out in outs[lo:hi]:
                oob_n[out] += 1
            lo = hi
    if oob_alphas is None:
        oob_sum = oob_sum[0]
    return trees, oob_sum, oob_n


def _one_class(y: np.ndarray, present: np.ndarray, K: int) -> np.ndarray:
    """(T,) whether each sample (``present`` (T, n): its rows) holds one class only."""
    if not present.size:
        return np.zeros(present.shape[0], dtype=bool)
    per_class = np.stack([present[:, y == k].any(axis=1) for k in range(K)], axis=1)
    return per_class.sum(axis=1) < 2


def _check_samples(labelled: Dataset, samples: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """The trainability check (:func:`~treecert.data.loading.check_trainable`) each
    sample's own tree makes (``fit(sample, sample=True)``), in tree order: a sample whose
    weights are all zero or too large raises as its tree's ``fit`` would. A sample without a
    known value of some attribute is grown: its tree never tests that attribute."""
    from treecert.data.loading import MAX_TOTAL_WEIGHT, check_trainable

    for keep, w in samples:
        total = float(np.sum(w))
        if not (np.any(w > 0) and total <= MAX_TOTAL_WEIGHT):
            sample = labelled.subset(keep)
            sample.weights = w
            check_trainable(sample, sample=True)


def tree_seed(seed: int, i: int) -> int:
    """The attribute-draw seed of tree i of an ensemble seeded ``seed``: a 31-bit integer
    from ``SeedSequence([seed, i])``, so trees draw independent subsets."""
    return int(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, i]).generate_state(1)[0]
               >> 1)


def per_tree_proba(trees: list[DecisionTree], data: Dataset | np.ndarray) -> np.ndarray:
    """(n_trees, n, K): every tree's probabilities."""
    X = data.X if isinstance(data, Dataset) else np.asarray(data, dtype=float)
    if not _at_once(trees, X):
        return np.stack([t.predict_proba(data) for t in trees])
    n = X.shape[0]
    out = np.empty((len(trees), n, trees[0].schema_.n_classes))
    step = max(1, FORECAST_CELLS // max(n * out.shape[2], 1))
    for lo in range(0, len(trees), step):  # a few trees at a time, into their place
        out[lo:lo + step] = np.reshape(forest_proba(trees[lo:lo + step], X,
                                                    [np.arange(n)] * len(trees[lo:lo + step]),
                                                    joined=True), (-1, n, out.shape[2]))
    return out


def _at_once(trees: list[DecisionTree], X: np.ndarray) -> bool:
    """Whether the rows of ``X`` can descend every tree at once: rows of the trees'
    attributes, none unknown."""
    return bool(trees) and X.ndim == 2 and X.size > 0 and all(
        X.shape[1] == t.schema_.n_features for t in trees) and not np.isnan(X).any()


def forest_proba(trees: list[DecisionTree], X: np.ndarray, rows: list[np.ndarray], *,
                 joined: bool = False) -> list[np.ndarray] | np.ndarray:
    """Each tree's ``predict_proba`` of its rows ``X[rows[t]]``, the same numbers (one α:
    :func:`forest_probas`). ``joined``: the trees' arrays laid end to end, as one array."""
    each = forest_probas(trees, X, rows, [None])[0]
    return np.concatenate(each) if joined else each


def forest_probas(trees: list[DecisionTree], X: np.ndarray, rows: list[np.ndarray],
                  alphas: Sequence[float | None]) -> list[list[np.ndarray]]:
    """Per α of ``alphas`` (None: each tree's own leaf estimate; a number: Laplace leaves of
    that α), each tree's ``predict_proba`` of its rows ``X[rows[t]]``, the same numbers.
    Without unknown values every row descends every tree at once (:func:`forest_leaves`),
    once for all the α; otherwise each tree predicts its rows on its own."""
    def leaves(alpha):
        return [(t.leaf, {"alpha": t.alpha, "m": t.m}) if alpha is None
                else ("laplace", {"alpha": alpha}) for t in trees]

    if not _at_once(trees, X):
        return [[t.tree_.predict_proba(X[r], kind, **kw)
                 for t, r, (kind, kw) in zip(trees, rows, leaves(a), strict=True)]
                for a in alphas]
    leaf = forest_leaves([t.tree_ for t in trees], X, rows)
    bounds = offsets([r.size for r in rows])
    out = []
    for a in alphas:
        per_node = np.concatenate([t.tree_.leaf_estimates(kind, **kw)
                                   for t, (kind, kw) in zip(trees, leaves(a), strict=True)])
        proba = per_node[leaf]
        np.divide(proba, proba.sum(axis=1, keepdims=True), out=proba)  # Tree.predict_proba's
        out.append([proba[bounds[t]:bounds[t + 1]] for t in range(len(trees))])
    return out


def forest_leaves(trees: list[Tree], X: np.ndarray, rows: list[np.ndarray]) -> np.ndarray:
    """The leaf (numbered across the trees laid end to end) each row ``rows[t]`` of ``X``
    (no unknown value) reaches in tree t, trees in order: the trees joined into one array
    layout, every (tree, row) pair descending from its tree's root at once
    (:func:`~treecert.tree.arrays.descend_entries`)."""
    node0 = offsets([t.n_nodes for t in trees])
    children = np.concatenate([t.children for t in trees]) + np.repeat(
        node0[:-1], [t.children.size for t in trees])
    joined = TreeArrays(
        feature=np.concatenate([t.feature for t in trees]),
        threshold=np.concatenate([t.routing_threshold for t in trees]),  # J48's routing too
        children_ptr=offsets(np.concatenate([np.diff(t.children_ptr) for t in trees])),
        children=children,
        value_branch_ptr=offsets(np.concatenate([np.diff(t.value_branch_ptr)
                                                 for t in trees])),
        value_branch=np.concatenate([t.value_branch for t in trees]),
        counts=np.empty((0, 0)))
    n_cols = X.shape[1]
    lens = [r.size for r in rows]
    at = np.concatenate(rows).astype(np.int64) * n_cols if sum(lens) else np.empty(0, int)
    return descend_entries(np.ascontiguousarray(X, dtype=np.float64).ravel(), at,
                           np.repeat(node0[:-1], lens), joined, descent_tables(joined))


# ---------------------------------------------------------------------------- stored form
def _pack(arr: np.ndarray, dtype: str) -> dict:
    data = np.ascontiguousarray(arr, dtype=dtype).tobytes()
    code = {"<i4": "base64-i4le", "<f8": "base64-f8le"}[dtype]
    return {"encoding": code, "data": base64.b64encode(data).decode("ascii")}


def _unpack(obj: dict, dtype: str, size: int) -> np.ndarray:
    code = {"<i4": "base64-i4le", "<f8": "base64-f8le"}[dtype]
    if not isinstance(obj, dict) or obj.get("encoding") != code:
        raise ValueError(f"an array is not {code}")
    raw = base64.b64decode(obj["data"], validate=True)
    if len(raw) != np.dtype(dtype).itemsize * size:
        raise ValueError(f"an array holds {len(raw)} bytes, expected {size} values")
    return np.frombuffer(raw, dtype=dtype).astype(np.int64 if "i" in dtype else np.float64)


def encode_trees(trees: list[Tree]) -> dict:
    """The stored form of ``trees`` (module docstring)."""
    n_nodes = [t.n_nodes for t in trees]
    return {
        "n_trees": len(trees),
        "n_nodes": n_nodes,
        "n_children": [int(t.children.size) for t in trees],
        "n_value_branch": [int(t.value_branch.size) for t in trees],
        "feature": _pack(np.concatenate([t.feature for t in trees]), "<i4"),
        "threshold": _pack(np.concatenate([t.threshold for t in trees]), "<f8"),
        "children_ptr": _pack(np.concatenate([t.children_ptr[1:] for t in trees]), "<i4"),
        "children": _pack(np.concatenate([t.children for t in trees]), "<i4"),
        "value_branch_ptr": _pack(np.concatenate([t.value_branch_ptr[1:] for t in trees]),
                                  "<i4"),
        "value_branch": _pack(np.concatenate([t.value_branch for t in trees]), "<i4"),
        "counts": _pack(np.concatenate([t.counts.ravel() for t in trees]), "<f8"),
    }


def decode_trees(obj: dict, n_classes: int) -> list[Tree]:
    """The trees of :func:`encode_trees`' form, each checked (``Tree.validate``); a
    malformed form raises ValueError / KeyError / TypeError (the caller's
    :func:`~treecert.methods.base.reading_state` makes that a model-file error)."""
    n_nodes = np.asarray(obj["n_nodes"], dtype=np.int64)
    n_children = np.asarray(obj["n_children"], dtype=np.int64)
    n_vb = np.asarray(obj["n_value_branch"], dtype=np.int64)
    T = int(obj["n_trees"])
    if not (n_nodes.shape == n_children.shape == n_vb.shape == (T,)) or T < 1 or (
            n_nodes < 1).any() or (n_children < 0).any() or (n_vb < 0).any():
        raise ValueError("the per-tree sizes disagree")
    N = int(n_nodes.sum())
    feature = _unpack(obj["feature"], "<i4", N)
    threshold = _unpack(obj["threshold"], "<f8", N)
    children_ptr = _unpack(obj["children_ptr"], "<i4", N)
    children = _unpack(obj["children"], "<i4", int(n_children.sum()))
    vb_ptr = _unpack(obj["value_branch_ptr"], "<i4", N)
    vb = _unpack(obj["value_branch"], "<i4", int(n_vb.sum()))
    counts = _unpack(obj["counts"], "<f8", N * n_classes).reshape(N, n_classes)
    node0, child0, vb0 = offsets(n_nodes), offsets(n_children), offsets(n_vb)
    trees = []
    for i in range(T):
        a, b = node0[i], node0[i + 1]
        tree = Tree(feature[a:b], threshold[a:b],
                    np.concatenate([[0], children_ptr[a:b]]), children[child0[i]:child0[i + 1]],
                    np.concatenate([[0], vb_ptr[a:b]]), vb[vb0[i]:vb0[i + 1]], counts[a:b])
        tree.validate()
        trees.append(tree)
    return trees


def stored_estimators(trees: list[Tree], schema, params: dict) -> list[DecisionTree]:
    """Fitted estimators around stored trees (``params``: leaf estimate and its α)."""
    return [DecisionTree.from_tree(t, schema, params) for t in trees]
