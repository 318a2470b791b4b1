"""``treecert calibrate``: attach calibration state to a trained model.

A calibrated model file is an ordinary model file whose ``"method"`` is the calibration
method's spec and whose ``"calibration"`` holds what that method learnt::

    "calibration": {"method": "binning:base=laplace", "source": "data" | "cv" | "model",
                    "cv": null | K, "seed": 1, "n_samples": 300, "data": "cal.csv",
                    "data_sha256": "...", "state": {...}}

``treecert predict`` then applies it by default; ``--method`` still chooses anything else.
A method finds its state with :func:`treecert.methods.base.stored_state` when the spec it
was built from equals the stored one (same name and options); a different spec is fitted
afresh from the embedded training data, as ``predict --method`` always does.

What each method calibrates on
------------------------------
* ``binning``: the base method's forecasts on held-out DATA, or out-of-fold forecasts on the
  embedded training data with ``cv=K`` (the base refitted on K−1 folds each time, with the
  model's tree settings); the base model used at prediction is the model itself.
* ``venn``: with DATA or ``cv`` an *inductive* Venn predictor — the bag is the calibration
  examples with their forecasts, plus (x, j); without either, the transductive machine on the
  embedded training data (nothing to store).
* ``empirical_bayes``: the prior fitted on the model's own leaves (the paper's recipe), so it
  takes no calibration data; with ``prune=...`` the model's tree is pruned first and the
  calibrated model stores the pruned tree with the prior fitted on its leaves.
* ``calibrated_bagging`` and ``forest``: the temperature of the bagged trees grown on the
  embedded training data, fitted out of bag (no DATA: that is already cross-fitted, so
  ``--cv`` is refused) or on held-out DATA; the state is the temperature and the grown trees
  (:mod:`treecert.methods.ensemble`), so ``predict`` never regrows them.
* ``bagging``: nothing to calibrate; the state is the grown trees (no DATA, no ``--cv``).
  ``treecert train --method M`` does the same for these three in one step.
"""

from __future__ import annotations

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.methods import METHODS, MethodSpec, make_method, parse_method_spec
from treecert.methods.base import TREE_OPTIONS
from treecert.methods.binning import CALIBRATION_METHODS, make_base, out_of_fold
from treecert.tree.model import Model, data_sha256

#: Methods that calibrate themselves on their training data (allowed in ``calibrate``, and
#: as a base of binning).
SELF_CALIBRATING = ("calibrated_bagging", "forest")
#: Ensembles whose grown trees a model file can store (``train --method``, ``calibrate``).
STORED_ENSEMBLES = ("bagging", *SELF_CALIBRATING)


def with_positive(method: str | MethodSpec, positive: str) -> MethodSpec:
    """``method`` with ``positive=LABEL`` (``--positive``; only ``empirical_bayes`` has it).

    The label is kept verbatim, so it may contain characters the ``key=value`` syntax
    cannot (commas); such a spec is not re-read from the model file by text.
    """
    spec = parse_method_spec(method, METHODS) if isinstance(method, str) else method
    if "positive" not in METHODS[spec.name].options:
        raise ConfigError(f"--positive applies to empirical_bayes, not to '{spec.name}'.")
    options = {**spec.options, "positive": positive}
    text = spec.name + ":" + ",".join(f"{k}={v}" for k, v in options.items())
    return MethodSpec(spec.name, options, text)


def _tree_params(model: Model) -> dict:
    return {k: v for k, v in model.estimator.get_params().items() if k in TREE_OPTIONS}


def calibrate(
    model: Model,
    data: Dataset | None = None,
    *,
    method: str | MethodSpec,
    cv: int | None = None,
    seed: int = 1,
) -> Model:
    """A copy of ``model`` calibrated by ``method`` (see the module docstring).

    Parameters
    ----------
    model : the trained model.
    data : held-out calibration data (aligned to the model's schema, with the class).
    method : ``binning``, ``venn`` or ``empirical_bayes``, with options.
    cv : calibrate on K-fold out-of-fold forecasts of the embedded training data instead.
    seed : seed of those folds.
    """
    spec = parse_method_spec(method, METHODS) if isinstance(method, str) else method
    if spec.name not in CALIBRATION_METHODS + STORED_ENSEMBLES:
        raise ConfigError(f"'{spec.name}' is not a calibration method.",
                          "Choose one of: "
                          f"{', '.join(CALIBRATION_METHODS + STORED_ENSEMBLES)}.")
    if data is not None and cv is not None:
        raise ConfigError("give calibration DATA or --cv, not both.")
    if cv is not None and cv < 2:
        raise ConfigError(f"--cv must be at least 2, got {cv}.")
    runner = make_method(spec, _tree_params(model))
    record: dict = {"method": spec.text or spec.name, "source": "model", "cv": cv,
                    "seed": seed, "n_samples": None, "data": None, "data_sha256": None}
    estimator, pruning = model.estimator, model.pruning
    if spec.name == "empirical_bayes":
        if data is not None or cv is not None:
            raise ConfigError(
                "empirical_bayes fits its prior on the model's own leaves and takes no "
                "calibration data.", "Drop DATA and --cv.")
        runner.adopt(Model(model.estimator, model.training_data, model.method,
                           model.pruning, None, model.extra))
        record["state"] = runner.state()
        if runner.pruning_ is not None:  # the prior belongs to the pruned tree: store it
            estimator = type(estimator).from_tree(runner.model_.tree_, estimator.schema_,
                                                  estimator.get_params())
            pruning = runner.pruning_
    elif spec.name in STORED_ENSEMBLES:
        record["state"], record["source"], record["n_samples"] = _self_calibrate(
            runner, model, data, cv)
        if data is not None:
            cal = data.subset(np.flatnonzero(data.y >= 0))
            record.update(data=data.source, data_sha256=data_sha256(cal.X, cal.y, cal.weights))
    elif spec.name == "venn" and data is None and cv is None:
        if model.training_data is None:
            raise ConfigError(
                "the transductive venn method needs the training data, but the model was "
                "saved with --no-embed-data.",
                "Give calibration DATA (inductive Venn) or retrain without --no-embed-data.")
        runner.fit(model.training_data)  # checks the options
        record["source"] = "transductive"
        record["state"] = None
    else:
        if data is None and cv is None:
            raise ConfigError(f"{spec.name} needs calibration data.",
                              "Give held-out DATA, or --cv K to use the training data.")
        base = make_base(runner.opts["base"], spec.options, _tree_params(model))
        if data is not None:
            if not data.has_class:
                raise ConfigError(f"{data.source}: the calibration data has no class column "
                                  f"'{model.schema.class_attribute.name}'.")
            cal = data.subset(np.flatnonzero(data.y >= 0))
            if cal.n_samples == 0:
                raise ConfigError(f"{data.source}: no calibration row has a class.")
            proba = base.adopt(model).predict(cal).proba
            record.update(source="data", data=data.source,
                          data_sha256=data_sha256(cal.X, cal.y, cal.weights))
        else:
            if model.training_data is None:
                raise ConfigError(
                    "--cv needs the training data, but the model was saved with "
                    "--no-embed-data.", "Give held-out calibration DATA instead.")
            cal = model.training_data.subset(np.flatnonzero(model.training_data.y >= 0))
            proba = out_of_fold(base.spec, _tree_params(model), cal, cv, seed)
            record["source"] = "cv"
        record["n_samples"] = cal.n_samples
        record["state"] = runner.calibrate(model, proba, cal.y.astype(np.int64),
                                           cal.weights.astype(float))
    return Model(estimator=estimator, training_data=model.training_data,
                 method=record["method"], pruning=pruning, calibration=record,
                 extra=dict(model.extra))


def _self_calibrate(runner, model: Model, data: Dataset | None, cv: int | None):
    """State, source and row count of a method that calibrates itself (out of bag, or on
    held-out ``data``)."""
    if cv is not None:
        raise ConfigError(f"{runner.name} calibrates out of bag, which is already "
                          "cross-fitted; --cv does not apply." if runner.name in
                          SELF_CALIBRATING else f"{runner.name} has nothing to calibrate; "
                          "--cv does not apply.",
                          "Drop --cv (or give held-out DATA).")
    if model.training_data is None:
        raise ConfigError(f"{runner.name} regrows its trees from the training data, but the "
                          "model was saved with --no-embed-data.",
                          "Retrain without --no-embed-data.")
    runner.adopt(Model(model.estimator, model.training_data, model.method, model.pruning,
                       None, model.extra))
    if data is None:
        source = "oob" if runner.name in SELF_CALIBRATING else "model"
        return runner.state(), source, int(np.sum(model.training_data.y >= 0))
    if runner.name not in SELF_CALIBRATING:
        raise ConfigError(f"{runner.name} has nothing to calibrate on DATA; it only stores "
                          "its trees.", "Drop DATA.")
    if not data.has_class or not np.any(data.y >= 0):
        raise ConfigError(f"{data.source}: the calibration data has no labelled row.")
    return runner.calibrate_on(data), "data", int(np.sum(data.y >= 0))


def describe(model: Model) -> str:
    """One line about a calibrated model, for the CLI."""
    cal = model.calibration or {}
    state = cal.get("state") or {}
    parts = [f"method {cal.get('method')}"]
    if cal.get("source") == "data":
        parts.append(f"on {cal.get('n_samples')} rows of {cal.get('data')}")
    elif cal.get("source") == "cv":
        parts.append(f"on {cal.get('cv')}-fold out-of-fold forecasts of "
                     f"{cal.get('n_samples')} training rows")
    elif cal.get("source") == "oob":
        parts.append(f"out of bag on {cal.get('n_samples')} training rows")
    elif cal.get("source") == "transductive":
        parts.append("transductive, on the embedded training data")
    if "alpha" in state:
        parts.append(f"prior alpha={state['alpha']:.4g} beta={state['beta']:.4g} "
                     f"(positive class '{state['positive']}')")
    elif "temperature" in state:
        parts.append(f"temperature {state['temperature']:.4g}")
    elif "prior" in state:
        parts.append("Dirichlet prior " + ", ".join(f"{a:.4g}" for a in state["prior"]))
    return "; ".join(parts)
