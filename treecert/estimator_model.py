"""``TreecertClassifier.save`` and ``load``: a fitted estimator as the command line's model
file (:mod:`treecert.tree.model`), so that ``treecert predict model.json data.csv`` serves a
model built in a notebook, and a model from ``treecert train`` loads as an estimator.

What the file holds for each kind of method:

* a tree with a leaf estimate (``frequency``, ``laplace``, ``m_estimate``) or
  ``empirical_bayes``: the fitted tree, already pruned when ``prune`` is set (the pruning
  is recorded under ``pruning``, as ``treecert prune`` records it), and the method without
  its pruning options, so that ``predict`` uses the tree as it is;
* every other method: the tree grown with the estimator's settings (what ``treecert show``
  prints), the method with all its options and the training data; ``treecert predict``
  fits the method on the embedded data as the estimator fitted it (same seed), which gives
  the same probabilities.

The estimator's own parameters and input encoding (column names, which columns are nominal
and their values, columns fit left out, the class labels with their type) are stored under
``extra.estimator``; the command line ignores them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from treecert.data.inmemory import ColumnEncoding, FeatureEncoding
from treecert.errors import ParameterError
from treecert.methods.leaf import PRUNE_OPTIONS, PrunesTree
from treecert.tree.classifier import DecisionTree
from treecert.tree.model import Model

#: The estimator's tree parameters, as :class:`DecisionTree` names them.
TREE_PARAMS = ("criterion", "min_leaf", "max_depth", "min_gain", "cp", "binary_splits",
               "threshold", "collapse")


def _jsonable(value: object) -> object:
    """A parameter's value as JSON (arrays as lists); None for what JSON cannot hold (a
    ``RandomState``: its seed was drawn in fit and is in the method's options)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return value


def to_model(est: Any, *, embed_data: bool = True) -> Model:
    """The model file's content for a fitted estimator (see the module docstring)."""
    runner = est.method_
    data = getattr(est, "_train_data", None)
    spec = runner.spec
    tree = getattr(runner, "model_", None)
    pruning = None
    if isinstance(runner, PrunesTree) and isinstance(tree, DecisionTree):
        kept = {k: v for k, v in spec.options.items() if k not in PRUNE_OPTIONS}
        method = spec.name + (":" + ",".join(f"{k}={v}" for k, v in kept.items())
                              if kept else "")
        estimator = tree
        pruning = runner.pruning_
        if pruning is not None and est._loss is not None:
            classes = est.schema_.classes
            pruning = {**pruning, "loss": {t: {p: float(est._loss[i, j])
                                                for j, p in enumerate(classes)}
                                            for i, t in enumerate(classes)}}
    else:
        if data is None:
            raise ParameterError(
                f"method {spec.name!r} is fitted again from the training data at predict "
                "time, but this estimator was loaded from a model without it.",
                "Fit the estimator, then save it.")
        method = spec.text or spec.name
        estimator = runner.new_tree().fit(data)
    params = {k: _jsonable(v) for k, v in est.get_params().items()}
    if est._loss is not None:
        params["loss"] = est._loss.tolist()
    info = {
        "params": params,
        "classes": est.classes_.tolist(),
        "classes_dtype": est.classes_.dtype.str if est.classes_.dtype != object else "object",
        "n_features_in": int(est.n_features_in_),
        "feature_names_in": (None if not hasattr(est, "feature_names_in_")
                             else [str(n) for n in est.feature_names_in_]),
        "columns": [{"name": c.name, "nominal": c.nominal, "values": list(c.values),
                     "numbers": None if c.numbers is None else list(c.numbers)}
                    for c in est._encoding.columns],
        "used": [int(j) for j in est._used],
        "method": method,
        "n_nodes": estimator.tree_.n_nodes,
    }
    return Model(estimator=estimator, training_data=data if embed_data else None,
                 method=method, pruning=pruning, extra={"estimator": info})


def save(est: Any, path: str | Path, *, embed_data: bool = True) -> None:
    """Write the model file of a fitted estimator (atomically)."""
    from treecert.data.fileio import write_text

    write_text(path, to_model(est, embed_data=embed_data).dumps())


def _file_params(model: Model) -> dict:
    """The estimator parameters of a model file: its method and tree settings (a tree
    the file holds pruned keeps ``prune="none"``: it is not pruned again)."""
    tree_params = model.estimator.get_params()
    params = {k: tree_params[k] for k in TREE_PARAMS}
    params["method"] = model.method or model.estimator.leaf
    return params


def from_model(cls: type, model: Model) -> Any:
    """A fitted estimator predicting as ``treecert predict`` predicts with ``model``."""
    from treecert import api

    info = model.extra.get("estimator") if isinstance(model.extra, dict) else None
    schema = model.schema
    if isinstance(info, dict):
        params = dict(info["params"])
        if (model.method != info.get("method") or model.calibration is not None
                or model.tree.n_nodes != info.get("n_nodes")):
            # pruned or calibrated by the command line since it was saved: the parameters
            # are the file's (its method, its tree settings), the columns still the saved
            params = _file_params(model)
        kind = info["classes_dtype"]
        classes = np.asarray(info["classes"], dtype=object if kind == "object" else kind)
        n_features = int(info["n_features_in"])
        names = info["feature_names_in"]
        encoding = FeatureEncoding(tuple(
            ColumnEncoding(c["name"], bool(c["nominal"]), tuple(c["values"]),
                           None if c["numbers"] is None else tuple(c["numbers"]))
            for c in info["columns"]))
        used = np.asarray(info["used"], dtype=np.int64)
    else:  # a model of `treecert train`: its columns are the schema's attributes
        params = _file_params(model)
        classes = np.asarray(schema.classes)
        n_features = len(schema.attributes)
        names = [a.name for a in schema.attributes]
        encoding = FeatureEncoding(tuple(
            ColumnEncoding(a.name, a.kind == "nominal", tuple(a.values))
            for a in schema.attributes))
        used = np.arange(n_features, dtype=np.int64)
    loss = params.get("loss")
    L = None if loss is None else np.asarray(loss, dtype=np.float64)
    est = cls(**params)
    est.method_ = api.predictor(model, loss=L)
    est.classes_ = classes
    est.n_features_in_ = n_features
    if names is not None:
        est.feature_names_in_ = np.asarray(names, dtype=object)
    est.nominal_features_ = encoding.nominal_mask
    est.schema_ = schema
    est._encoding = encoding
    est._used = used
    est._loss = L
    est._train_data = model.training_data
    est._base_tree = None
    return est


def load(cls: type, path: str | Path) -> Any:
    """The estimator of a model file (:func:`from_model` of
    :func:`~treecert.tree.model.read_model`)."""
    from treecert.tree.model import read_model

    return from_model(cls, read_model(path))
