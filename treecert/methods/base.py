"""The method interface and the ``NAME:key=value,...`` option syntax.

A method is fitted on a training :class:`~treecert.data.schema.Dataset` and predicts a
:class:`Prediction` for test data: probabilities, optionally a certainty score per instance
(AUC reliability ranks by it; default the probability of the predicted class), lower/upper
probability bounds, and extra per-instance columns (e.g. ``tpce_disagree``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError, ModelFileError, describe
from treecert.methods.option_rules import check_options, kind_of
from treecert.tree.classifier import DecisionTree

#: Options every tree-based method accepts: the base learner's settings.
TREE_OPTIONS: dict[str, type] = {
    "criterion": str,
    "min_leaf": float,
    "max_depth": int,
    "min_gain": float,
    "cp": float,
    "binary_splits": bool,
    "threshold": str,
    "collapse": bool,
    "max_features": str,
}


@dataclass(frozen=True)
class MethodSpec:
    """A parsed method specification; ``text`` is kept verbatim for result rows."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    def __str__(self) -> str:
        return self.text or self.name


@dataclass
class Prediction:
    """What a method says about each test instance."""

    proba: np.ndarray
    certainty: np.ndarray | None = None
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    columns: dict[str, np.ndarray] = field(default_factory=dict)

    def take(self, order: np.ndarray) -> Prediction:
        """The predictions of the rows ``order`` (indices), every column alike."""
        def t(a):
            return None if a is None else a[order]

        return Prediction(t(self.proba), t(self.certainty), t(self.lower), t(self.upper),
                          {k: v[order] for k, v in self.columns.items()})

    def certainty_or_max(self) -> np.ndarray:
        if self.certainty is not None:
            return self.certainty
        return self.proba[np.arange(self.proba.shape[0]), np.argmax(self.proba, axis=1)]


def _coerce(value: str, kind: type, where: str, error: type[ConfigError] = ConfigError):
    if kind is bool:
        low = value.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise error(f"{where}: expected true or false, got {describe(value)}.")
    if kind in (int, float):
        try:
            return kind(value)
        except ValueError:  # also an integer of more than 4300 digits
            raise error(f"{where}: expected {'an integer' if kind is int else 'a number'}, "
                        f"got {describe(value)}.") from None
    return value


def parse_method_spec(text: str, registry: Mapping[str, type[Method]], *,
                      trusted: bool = True) -> MethodSpec:
    """Parse ``'laplace'`` or ``'laplace:alpha=0.5,min_leaf=3'``.

    Names accept ``-`` for ``_``; option values are typed and checked by the method's
    declared options (:mod:`treecert.methods.option_rules`); a key given twice is an error.
    ``trusted=False`` for a spec read from a model file: its errors are
    :class:`~treecert.errors.ModelFileError` and a work bound is a limit.
    """
    error = ConfigError if trusted else ModelFileError
    raw = text.strip()
    name, _, opt_text = raw.partition(":")
    key = name.strip().lower().replace("-", "_")
    if key not in registry:
        raise error(
            f"unknown method {describe(name.strip())}.",
            f"Choose one of: {', '.join(sorted(registry))}.",
        )
    cls = registry[key]
    allowed = {**TREE_OPTIONS, **cls.options} if cls.tree_based else dict(cls.options)
    options: dict[str, Any] = {}
    where = f"method {describe(raw)}"
    if opt_text.strip():
        for item in opt_text.split(","):
            k, eq, v = item.partition("=")
            k = k.strip().replace("-", "_")
            if not eq or not k:
                raise error(
                    f"{where}: option {describe(item.strip())} is not key=value.",
                    "Write e.g. 'laplace:alpha=0.5'.",
                )
            if k not in allowed:
                raise error(
                    f"method '{key}' has no option {describe(k)}.",
                    f"Options: {', '.join(sorted(allowed)) or 'none'}.",
                )
            if k in options:
                raise error(f"{where}: option {k} is given twice.", "Give each option once.")
            options[k] = _coerce(v.strip(), kind_of(allowed[k]), f"{where}, option {k}", error)
    options = check_options(cls, options, where, trusted=trusted, error=error)
    return MethodSpec(key, options, raw)


class Method:
    """Base class: subclasses set ``name``, ``options`` and implement fit / predict.

    ``tree_params`` are the base learner's settings shared by all methods in a run (from the
    command line); the spec's own options override them.
    """

    name: ClassVar[str] = ""
    #: The method's options: name -> type or Rule (:mod:`treecert.methods.option_rules`).
    options: ClassVar[dict[str, Any]] = {}
    defaults: ClassVar[dict[str, Any]] = {}
    #: The method's own rules for options it shares (the tree's included), by name.
    rules: ClassVar[dict[str, Any]] = {}
    tree_based: ClassVar[bool] = True
    #: Whether predictions depend on a random seed (the ``seed`` option).
    randomised: ClassVar[bool] = False
    #: Whether ``lower <= proba <= upper`` holds where the method gives bounds (not for
    #: the empirical-Bayes paper's Eq. 4, which is centred on the uncorrected estimate).
    bounds_contain_proba: ClassVar[bool] = True
    #: Whether the method's trees may search random attribute subsets (``max_features``);
    #: the transductive engines regrow trees with every attribute, so they refuse it.
    random_subsets: ClassVar[bool] = True
    #: Whether the method's trees may use J48's cut rule (``threshold="j48"``); the
    #: transductive engines' cut searches do not follow it, so their methods refuse it
    #: (``--j48`` gives them ``threshold=lower``: :func:`treecert.cli.options.j48_spec`).
    j48_cuts: ClassVar[bool] = True

    def __init__(self, tree_params: dict, spec: MethodSpec | None = None) -> None:
        self.spec = spec or MethodSpec(self.name, {}, self.name)
        # a spec built in Python (the estimator, a calibration's base) is checked as a
        # parsed one is; the values come back canonical
        check_options(type(self), self.spec.options, f"method '{self.spec}'", warn=False)
        opts = dict(self.defaults)
        opts.update({k: v for k, v in self.spec.options.items() if k in self.options})
        self.opts = opts
        tree = {k: v for k, v in tree_params.items() if k in TREE_OPTIONS}
        tree.update({k: v for k, v in self.spec.options.items() if k in TREE_OPTIONS})
        if not self.random_subsets and tree.get("max_features") not in (None, "all"):
            raise ConfigError(f"method '{self.name}' grows its trees with every attribute; "
                              "max_features does not apply.", "Drop max_features.")
        self.tree_params = self._checked_tree(tree)
        #: Worker processes for per-instance work (set by ``--jobs``); output never depends
        #: on it.
        self.jobs = 1
        #: Whether ``predict`` adds the method's per-label components as extra columns
        #: (``predict --explain``; off in ``evaluate``, whose tables stay as they are).
        self.explain = False

    def new_tree(self, **leaf) -> DecisionTree:
        return DecisionTree(**self.tree_params, **leaf)

    def fit(self, data: Dataset) -> Method:  # pragma: no cover - interface
        raise NotImplementedError

    def predict(self, data: Dataset) -> Prediction:  # pragma: no cover - interface
        raise NotImplementedError

    def adopt(self, model) -> Method:
        """Use a trained :class:`~treecert.tree.model.Model` (``predict --method``).

        Default: refit on the model's embedded training data with the model's tree
        settings; methods that can reuse the stored tree override this.
        """
        if model.training_data is None:
            raise ConfigError(
                f"method '{self.spec}' needs the training data, but the model was saved "
                "with --no-embed-data.",
                "Retrain without --no-embed-data.",
            )
        params = {k: v for k, v in model.estimator.get_params().items() if k in TREE_OPTIONS}
        params.update({k: v for k, v in self.spec.options.items() if k in TREE_OPTIONS})
        self.tree_params = self._checked_tree(params)
        return self.fit(model.training_data)

    def _checked_tree(self, params: dict) -> dict:
        """The tree settings this method grows with, checked by the method's own rules
        (e.g. the transductive methods' ``min_leaf`` > 0) wherever they came from."""
        if not self.j48_cuts and params.get("threshold") == "j48":
            raise ConfigError(f"method '{self.name}' regrows its trees in the transductive "
                              "engine, which has no J48 cut rule; threshold j48 does not "
                              "apply.", f"Give it threshold=lower: --method "
                              f"'{self.name}:threshold=lower'.")
        own = getattr(type(self), "rules", {})
        check_options(type(self), {k: v for k, v in params.items() if k in own},
                      f"method '{self.spec}'", warn=False)
        return params

    @property
    def size(self) -> int | float | None:
        """Number of leaves of the fitted model: an int for one tree, the mean (a float)
        over the trees of an ensemble; None where there is no tree."""
        return None


class Registry(Mapping):
    """snake_case name -> Method class, each class imported from its module when it is
    first looked up (registered as ``"module:Class"``); keys in registration order."""

    def __init__(self) -> None:
        self._where: dict[str, str] = {}
        self._classes: dict[str, type[Method]] = {}

    def register(self, where: dict[str, str]) -> None:
        self._where.update(where)

    def __getitem__(self, name: str) -> type[Method]:
        if name not in self._classes:
            module, _, cls = self._where[name].partition(":")
            self._classes[name] = getattr(importlib.import_module(module), cls)
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, name: object) -> bool:
        return name in self._where


#: The registry: snake_case name -> Method class. :mod:`treecert.methods` fills it, in the
#: order the CLI lists methods; methods that build other methods (a calibration's base) look
#: them up here at call time, so no method module imports the package that lists it.
METHODS = Registry()


def per_label_columns(prefix: str, M: np.ndarray, classes: tuple[str, ...]
                      ) -> dict[str, np.ndarray]:
    """``<prefix>_if_<a>_p_<c>`` = ``M[:, a, c]`` (M: n × K × K): what a transductive
    method estimates for class c when the row is given the tentative label a (TPCE's K
    trees, the rows of a Venn matrix), for ``predict --explain``."""
    return {f"{prefix}_if_{a}_p_{c}": M[:, i, j]
            for i, a in enumerate(classes) for j, c in enumerate(classes)}


def make_method(spec: str | MethodSpec, tree_params: dict | None = None) -> Method:
    """Instantiate a method from ``'name'`` or ``'name:key=value,...'``."""
    parsed = parse_method_spec(spec, METHODS) if isinstance(spec, str) else spec
    return METHODS[parsed.name](tree_params or {}, spec=parsed)


def reading_state(load, source: str = "<model>"):
    """Run ``load()`` (a method reading its stored state); a malformed state is a model-file
    error (exit 2) naming the file ``source``, not a crash."""
    try:
        return load()
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
        why = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise ModelFileError(
            f"{source}: the model's calibration state is corrupt ({why}).",
            "Calibrate the original model again with 'treecert calibrate'.",
        ) from None


def state_numbers(obj: object, where: str, *, low: float | None = None,
                  high: float | None = None, integer: bool = False) -> np.ndarray:
    """A stored state's list (or list of lists) of JSON numbers, checked as the tree's
    arrays are: no null, no true/false, finite, in ``[low, high]``; int64 with ``integer``.
    Raises ValueError naming ``where`` (:func:`reading_state` reports it)."""
    if not isinstance(obj, list):
        raise ValueError(f"{where} must be a list, not {describe(obj)}")
    flat = [v for row in obj for v in row] if obj and all(
        isinstance(row, list) for row in obj) else obj
    allowed = {int} if integer else {int, float}
    if not set(map(type, flat)) <= allowed:
        v = next(v for v in flat if type(v) not in allowed)
        what = "an integer" if integer else "a number"
        raise ValueError(f"{where} holds {describe(v)}, not {what}")
    try:
        arr = np.array(flat, dtype=np.int64 if integer else np.float64)
    except OverflowError:
        raise ValueError(f"{where} holds a number too large") from None
    bad = ~np.isfinite(arr)
    if low is not None:
        bad |= arr < low
    if high is not None:
        bad |= arr > high
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        span = f" in [{low:g}, {high:g}]" if low is not None and high is not None else (
            f" >= {low:g}" if low is not None else "")
        raise ValueError(f"{where} holds {describe(flat[i])}, not a finite number{span}")
    return arr


def stored_state(model, spec: MethodSpec) -> dict | None:
    """The model's calibration state if it was made by ``spec`` (same name and options)."""
    cal = model.calibration
    if not cal or not isinstance(cal, dict) or "method" not in cal:
        return None
    try:
        stored = parse_method_spec(str(cal["method"]), METHODS, trusted=False)
    except ConfigError:  # e.g. a positive= label with a comma: not re-read by text
        return None
    if stored.name != spec.name or stored.options != spec.options:
        return None
    return cal.get("state")
