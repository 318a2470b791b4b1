"""The model file: one JSON document, versioned, no pickle.

Layout (``format_version`` 2)::

    {"format": "treecert-model", "format_version": 1, "treecert_version": "...",
     "schema": {...}, "params": {...}, "method": "laplace",
     "tree": {"feature": [...], "threshold": [...], "children_ptr": [...], ...},
     "pruning": null | {...}, "calibration": null | {...},
     "training_data": null | {"n_samples": n, "sha256": "...", "columns": {name: [...]},
                              "class": [...], "weights": {...}}}

The training data is embedded column-wise because the transductive and Venn methods need it
at predict time. Version 1 wrote each column as a JSON list (nominal codes, numbers, null for
missing); version 2 writes float columns and weights as ``{"encoding": "base64-f8le",
"data": ...}`` (little-endian float64, NaN = missing), which writes and reads about 20 times
faster on large data. Both are read. Its sha256 is taken over
the canonical little-endian bytes of X (float64, C order), y (int64) and the weights
(float64), so a ``--train`` file given later can be checked against it.

Compatibility promise: every file written with a ``format_version`` up to the current one
keeps loading (a golden v1 file is in the tests); a newer version is refused with a message
naming both versions.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import numpy as np

from treecert._version import __version__
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.errors import ConfigError, ModelFileError, describe
from treecert.tree.arrays import Tree
from treecert.tree.classifier import DecisionTree
from treecert.tree.params import LEARNER_RULES, check_all
from treecert.tree.segments import flat_nonzero

FORMAT = "treecert-model"
FORMAT_VERSION = 2


def data_sha256(X: np.ndarray, y: np.ndarray, weights: np.ndarray) -> str:
    """Fingerprint of a training set, independent of file format and column names."""
    h = hashlib.sha256()
    for arr, dtype in ((X, "<f8"), (y, "<i8"), (weights, "<f8")):
        h.update(np.ascontiguousarray(arr, dtype=dtype).tobytes())
    return h.hexdigest()


@dataclass
class Model:
    """A trained tree with everything needed to use it from a file alone."""

    estimator: DecisionTree
    training_data: Dataset | None = None
    method: str | None = None
    pruning: dict | None = None
    calibration: dict | None = None
    extra: dict = field(default_factory=dict)
    #: Where the model was read from (messages about its contents name it).
    source: str = "<model>"

    @property
    def schema(self) -> Schema:
        return self.estimator.schema_

    @property
    def tree(self) -> Tree:
        return self.estimator.tree_

    @property
    def training_sha256(self) -> str | None:
        d = self.training_data
        return None if d is None else data_sha256(d.X, d.y, d.weights)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        doc = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "treecert_version": __version__,
            "schema": self.schema.to_json(),
            "params": self.estimator.get_params(),
            "method": self.method,
            "tree": self.tree.to_json(),
            "pruning": self.pruning,
            "calibration": self.calibration,
            "training_data": None,
        }
        d = self.training_data
        if d is not None:
            doc["training_data"] = {
                "n_samples": d.n_samples,
                "sha256": self.training_sha256,
                "columns": {
                    a.name: _encode_floats(d.X[:, j]) for a, j in
                    zip(self.schema.attributes, range(d.X.shape[1]), strict=True)
                },
                "class": d.y.astype(int).tolist(),
                "weights": _encode_floats(d.weights),
            }
        if self.extra:
            doc["extra"] = self.extra
        return doc

    def dumps(self) -> str:
        return json.dumps(self.to_json(), allow_nan=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(cls, doc: object, source: str = "<model>") -> Model:
        """The model of a parsed model document; every part is checked first
        (:func:`check_document`), so a document accepted here can be used."""
        parts = check_document(doc, source)
        schema, tree, params = parts["schema"], parts["tree"], parts["params"]
        tree.validate()  # the layout invariants, checked once more where they are defined
        estimator = DecisionTree.from_tree(tree, schema, params)
        training = None
        if parts["training"] is not None:
            X, y, w = parts["training"]
            training = Dataset(schema, X, y, w, source=source)
        return cls(
            estimator=estimator,
            training_data=training,
            method=doc.get("method"),  # type: ignore[union-attr]
            pruning=doc.get("pruning"),  # type: ignore[union-attr]
            calibration=doc.get("calibration"),  # type: ignore[union-attr]
            extra=doc.get("extra") or {},  # type: ignore[union-attr]
            source=source,
        )


def _encode_floats(col: np.ndarray) -> dict:
    data = np.ascontiguousarray(col, dtype="<f8").tobytes()
    return {"encoding": "base64-f8le", "data": base64.b64encode(data).decode("ascii")}


# ---------------------------------------------------------------------------- validation
# Every field of a model document is checked here, against the layout above and the
# document's own schema, before anything is built from it: types (an index is an integer,
# not 1.0 or true), ranges (a feature index names an attribute, a child comes after its
# parent, a nominal branch exists), finiteness (no NaN threshold or count) and the sizes
# that must agree. A document that passes can be used by every command; a failure names
# the field and says what is wrong, never echoing more than a few characters of it.

_HINT = "The file was changed after treecert wrote it; train or calibrate the model again."
_TOP_REQUIRED = ("format", "format_version", "schema", "params", "tree")
_TOP_OPTIONAL = ("treecert_version", "method", "pruning", "calibration", "training_data",
                 "extra")
_TREE_KEYS = ("feature", "threshold", "children_ptr", "children", "value_branch_ptr",
              "value_branch", "counts")
_TRAINING_KEYS = ("n_samples", "sha256", "columns", "class", "weights")
_KINDS = ("numeric", "nominal", "date", "string")
_INT64 = 2**63


class _Invalid(Exception):
    """A field of a model document that breaks the layout: where, and why (``index``: the
    offending entry of a list)."""

    def __init__(self, where: str, why: str, index: int | None = None) -> None:
        super().__init__(where, why)
        self.where, self.why, self.index = where, why, index


def _object(obj: object, where: str, required: tuple[str, ...],
            optional: tuple[str, ...] = ()) -> dict:
    if not isinstance(obj, dict):
        raise _Invalid(where, f"must be an object, not {describe(obj)}")
    for key in obj:
        if key not in required and key not in optional:
            raise _Invalid(where, f"has an unknown key {describe(key)}")
    for key in required:
        if key not in obj:
            raise _Invalid(where, f"has no key '{key}'")
    return obj


def _text(obj: object, where: str) -> str:
    if not isinstance(obj, str):
        raise _Invalid(where, f"must be text, not {describe(obj)}")
    return obj


def _list(obj: object, where: str, what: str, size: int | None) -> list:
    if not isinstance(obj, list):
        raise _Invalid(where, f"must be a list of {what}, not {describe(obj)}")
    if size is not None and len(obj) != size:
        raise _Invalid(where, f"has {len(obj)} entries, not {size}")
    return obj


def _ints(obj: object, where: str, size: int | None = None) -> np.ndarray:
    """A list of JSON integers (not 1.0, not true) as int64."""
    values = _list(obj, where, "integers", size)
    if not set(map(type, values)) <= {int}:  # type() and not isinstance(): true is no 1
        i = next(i for i, v in enumerate(values) if type(v) is not int)
        raise _Invalid(f"{where}[{i}]", f"must be an integer, not {describe(values[i])}")
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        raise _Invalid(where, "holds an integer too large") from None


def _reals(obj: object, where: str, size: int | None = None, *, nulls: bool = False,
           finite: bool = True, nonnegative: bool = False) -> np.ndarray:
    """A list of JSON numbers as float64; with ``nulls``, null is NaN (missing)."""
    what = "numbers or nulls" if nulls else "numbers"
    values = _list(obj, where, what, size)
    allowed = {int, float, type(None)} if nulls else {int, float}
    if not set(map(type, values)) <= allowed:
        i = next(i for i, v in enumerate(values) if type(v) not in allowed)
        raise _Invalid(f"{where}[{i}]", f"must be a number{' or null' * nulls}, not "
                       f"{describe(values[i])}", i)
    try:  # None becomes NaN
        out = np.array(values, dtype=np.float64).reshape(len(values))
    except OverflowError:
        raise _Invalid(where, "holds a number too large for a float") from None
    given = np.array([v is not None for v in values], dtype=bool) if nulls else True
    bad = given & ((~np.isfinite(out) if finite else np.isnan(out))
                   | (nonnegative & (out < 0)))
    if np.any(bad):
        i = int(flat_nonzero(bad)[0])
        raise _Invalid(f"{where}[{i}]", f"must be a finite number{' >= 0' * nonnegative}, "
                       f"not {describe(values[i])}", i)
    return out


def _number(obj: object, where: str) -> float:
    """A finite JSON number >= 0 (a growing parameter)."""
    return float(_reals([obj], where, nonnegative=True)[0])


def check_document(doc: object, source: str) -> dict:
    """Check a parsed model document completely; returns its parts ready to use (``schema``,
    ``params``, ``tree``, ``training`` = (X, y, weights) or None).

    Raises
    ------
    ModelFileError
        Not a treecert model, a version this treecert cannot read, or any field that breaks
        the layout (the message names it).
    """
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelFileError(
            f"{source}: not a treecert model (no \"format\": \"{FORMAT}\" key).",
            "Pass a file written by 'treecert train'.",
        )
    version = doc.get("format_version")
    if type(version) is not int:
        raise ModelFileError(f"{source}: format_version is missing or not an integer.")
    if version > FORMAT_VERSION:
        shown = str(version) if version < 10**6 else f"({describe(version)})"
        raise ModelFileError(
            f"{source}: model format version {shown} is newer than this "
            f"treecert ({__version__}) reads (up to version {FORMAT_VERSION}).",
            "Upgrade treecert.",
        )
    if version < 1:
        raise ModelFileError(f"{source}: unknown model format version {describe(version)}.")
    try:
        _object(doc, "the document", _TOP_REQUIRED, _TOP_OPTIONAL)
        if "treecert_version" in doc:
            _text(doc["treecert_version"], "treecert_version")
        if doc.get("method") is not None:
            _text(doc["method"], "method")
        for key in ("pruning", "calibration", "extra"):
            if doc.get(key) is not None and not isinstance(doc[key], dict):
                raise _Invalid(key, f"must be an object or null, not {describe(doc[key])}")
            _check_numbers(doc.get(key), key)
        schema = _check_schema(doc["schema"])
        params = _check_params(doc["params"])
        tree = _check_tree(doc["tree"], schema)
        training = None
        if doc.get("training_data") is not None:
            training = _check_training(doc["training_data"], schema)
    except _Invalid as bad:
        raise ModelFileError(f"{source}: corrupt treecert model: {bad.where} {bad.why}.",
                             _HINT) from None
    if training is not None and data_sha256(*training) != doc["training_data"]["sha256"]:
        raise ModelFileError(
            f"{source}: the embedded training data does not match its sha256; "
            "the file is corrupt."
        )
    return {"schema": schema, "params": params, "tree": tree, "training": training}


def _check_numbers(obj: object, where: str) -> None:
    """Every number in a free-form record (pruning, calibration) is one a model file can
    hold and Python can compute with: finite (JSON reads ``1e400`` as infinity, which no
    model file may be written with) and, if an integer, within int64. The methods check
    the meaning of their calibration states where they read them."""
    stack = [(obj, where)]
    while stack:
        value, at = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, f"{at}.{k}") for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            raise _Invalid(at, f"is {describe(value)}, not a finite number")
        elif type(value) is int and not -_INT64 <= value < _INT64:
            raise _Invalid(at, "holds an integer too large")


def _check_attribute(obj: object, where: str) -> Attribute:
    a = _object(obj, where, ("name", "kind"), ("values", "date_format", "nominal_from"))
    name = _text(a["name"], f"{where}.name")
    kind = a["kind"]
    if kind not in _KINDS:
        raise _Invalid(f"{where}.kind", f"must be one of {', '.join(_KINDS)}, not "
                       f"{describe(kind)}")
    values = a.get("values", [])
    if not isinstance(values, list):
        raise _Invalid(f"{where}.values", f"must be a list, not {describe(values)}")
    if kind != "nominal" and values:
        raise _Invalid(f"{where}.values", f"are given for a {kind} attribute")
    for i, v in enumerate(values):
        _text(v, f"{where}.values[{i}]")
    if len(set(values)) != len(values):
        raise _Invalid(f"{where}.values", "repeat a value")
    date_format = a.get("date_format")
    if date_format is not None:
        _text(date_format, f"{where}.date_format")
    nominal_from = a.get("nominal_from")  # --nominal's conversion; absent in older files
    if nominal_from is not None and (kind != "nominal"
                                     or nominal_from not in ("numeric", "string")):
        raise _Invalid(f"{where}.nominal_from", f"must be numeric or string for a nominal "
                       f"attribute, not {describe(nominal_from)}")
    return Attribute(name, kind, tuple(values), date_format, nominal_from)


def _check_schema(obj: object) -> Schema:
    s = _object(obj, "schema", ("attributes", "class_attribute"), ("relation",))
    relation = _text(s.get("relation", ""), "schema.relation")
    if not isinstance(s["attributes"], list):
        raise _Invalid("schema.attributes", f"must be a list, not "
                       f"{describe(s['attributes'])}")
    attrs = tuple(_check_attribute(a, f"schema.attributes[{j}]")
                  for j, a in enumerate(s["attributes"]))
    cls = _check_attribute(s["class_attribute"], "schema.class_attribute")
    if cls.kind != "nominal" or len(cls.values) < 2:
        raise _Invalid("schema.class_attribute", "must be nominal with at least two values")
    names = [a.name for a in attrs] + [cls.name]
    if len(set(names)) != len(names):
        raise _Invalid("schema", "names two attributes alike")
    return Schema(attrs, cls, relation)


def _check_params(obj: object) -> dict:
    """The learner's settings, each checked by its rule (:data:`LEARNER_RULES`)."""
    p = _object(obj, "params", (), tuple(LEARNER_RULES))
    try:
        return check_all(LEARNER_RULES, p, "params", trusted=False)
    except ConfigError as bad:  # "params <key> must be ...": the field, then why
        where, _, why = bad.message.removeprefix("params ").partition(" ")
        raise _Invalid(f"params.{where}", why.rstrip(".")) from None


def _check_tree(obj: object, schema: Schema) -> Tree:
    t = _object(obj, "tree", _TREE_KEYS)
    feature = _ints(t["feature"], "tree.feature")
    n = feature.size
    if n < 1:
        raise _Invalid("tree.feature", "is empty; a tree has at least its root")
    threshold = _reals(t["threshold"], "tree.threshold", n, nulls=True)
    children_ptr = _ints(t["children_ptr"], "tree.children_ptr", n + 1)
    children = _ints(t["children"], "tree.children", n - 1)  # every node but the root, once
    vb_ptr = _ints(t["value_branch_ptr"], "tree.value_branch_ptr", n + 1)
    value_branch = _ints(t["value_branch"], "tree.value_branch")
    for name, ptr, size in (("children_ptr", children_ptr, n - 1),
                            ("value_branch_ptr", vb_ptr, value_branch.size)):
        if ptr[0] != 0 or ptr[-1] != size or np.any(np.diff(ptr) < 0):
            raise _Invalid(f"tree.{name}", f"must rise from 0 to {size}")
    K = schema.n_classes
    rows = _list(t["counts"], "tree.counts", "lists", n)
    if not all(type(row) is list and len(row) == K for row in rows):
        i = next(i for i, row in enumerate(rows) if type(row) is not list or len(row) != K)
        _list(rows[i], f"tree.counts[{i}]", "numbers", K)  # weighted counts, one per class
    try:
        counts = _reals(list(chain.from_iterable(rows)), "tree.counts", nonnegative=True)
    except _Invalid as bad:  # name the node and the class, not the flat index
        if bad.index is None:
            raise
        i, k = divmod(bad.index, K)
        raise _Invalid(f"tree.counts[{i}][{k}]", bad.why) from None
    counts = counts.reshape(n, K)
    if counts[0].sum() <= 0:
        raise _Invalid("tree.counts[0]", "is all zero; the root holds the training weight")
    n_children = np.diff(children_ptr)
    parents = np.repeat(np.arange(n), n_children)
    bad = flat_nonzero((children <= parents) | (children >= n))
    if bad.size:
        i = int(bad[0])
        raise _Invalid(f"tree.children[{i}]", f"is {children[i]}, not a node after its parent "
                       f"{parents[i]}")
    if np.bincount(children, minlength=n).max(initial=0) > 1:  # np.unique loads numpy.ma
        raise _Invalid("tree.children", "names a node twice")
    kinds = [a.kind for a in schema.attributes]
    n_values = schema.n_values()
    for i in _suspects(feature, threshold, n_children, vb_ptr, value_branch, kinds, n_values):
        _check_node(i, int(feature[i]), threshold[i], int(n_children[i]),
                    value_branch[vb_ptr[i]:vb_ptr[i + 1]], kinds, n_values)
    return Tree(feature, threshold, children_ptr, children, vb_ptr, value_branch, counts)


def _suspects(feature: np.ndarray, threshold: np.ndarray, n_children: np.ndarray,
              vb_ptr: np.ndarray, value_branch: np.ndarray, kinds: list[str],
              n_values: np.ndarray) -> np.ndarray:
    """The nodes that may break :func:`_check_node`'s rules, found with whole-array tests
    (a tree may have a million nodes); :func:`_check_node` then says what is wrong."""
    n_vb = np.diff(vb_ptr)
    in_range = (feature >= -1) & (feature < len(kinds))
    f = np.where(in_range, feature, -1)
    kind = np.array([*kinds, "leaf"])[f]  # index -1: leaves (and out-of-range features)
    no_thr = np.isnan(threshold)
    n_vals = np.append(n_values, 0)[f]
    node_of = np.repeat(np.arange(feature.size), n_vb)
    bad_branch = np.zeros(feature.size, dtype=bool)
    bad_branch[node_of[(value_branch < 0) | (value_branch >= n_children[node_of])]] = True
    leaf = kind == "leaf"
    numeric = (kind == "numeric") | (kind == "date")
    nominal = kind == "nominal"
    ok = in_range & np.where(
        leaf, (n_children == 0) & (n_vb == 0) & no_thr,
        (n_children >= 2) & np.where(
            numeric, ~no_thr & (n_children == 2) & (n_vb == 0),
            nominal & no_thr & (n_vb == n_vals) & ~bad_branch))
    return flat_nonzero(~ok)


def _check_node(i: int, f: int, threshold: float, n_children: int, branches: np.ndarray,
                kinds: list[str], n_values: np.ndarray) -> None:
    """One node's test against the schema: a leaf tests nothing; a numeric test has a
    finite threshold and two children; a nominal test a branch for every declared value."""
    where = f"tree node {i}"
    if not -1 <= f < len(kinds):
        raise _Invalid(f"tree.feature[{i}]", f"is {f}, but the schema has {len(kinds)} "
                       "attributes")
    if f < 0:
        if n_children or branches.size or not np.isnan(threshold):
            raise _Invalid(where, "is a leaf (feature -1) with a test")
        return
    kind = kinds[f]
    if n_children < 2:
        raise _Invalid(where, f"tests attribute {f} but has {n_children} children")
    if kind in ("numeric", "date"):
        if np.isnan(threshold) or n_children != 2 or branches.size:
            raise _Invalid(where, f"tests {kind} attribute {f}: it needs a threshold, two "
                           "children and no value branches")
    elif kind == "nominal":
        if not np.isnan(threshold) or branches.size != n_values[f]:
            raise _Invalid(where, f"tests nominal attribute {f}: it needs no threshold and "
                           f"a branch for each of its {n_values[f]} values")
        if np.any((branches < 0) | (branches >= n_children)):
            raise _Invalid(where, f"sends a value to a branch it does not have "
                           f"({n_children} children)")
    else:
        raise _Invalid(where, f"tests {kind} attribute {f}, which a tree cannot split on")


def _check_training(obj: object, schema: Schema) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    td = _object(obj, "training_data", _TRAINING_KEYS)
    n = td["n_samples"]
    if type(n) is not int or not 0 <= n < _INT64:
        raise _Invalid("training_data.n_samples", f"must be an integer >= 0, not "
                       f"{describe(n)}")
    sha = _text(td["sha256"], "training_data.sha256")
    if len(sha) != 64:
        raise _Invalid("training_data.sha256", "must be 64 hexadecimal digits")
    y = _ints(td["class"], "training_data.class", n)
    if np.any((y < 0) | (y >= schema.n_classes)):
        raise _Invalid("training_data.class", f"must hold class codes 0..{schema.n_classes - 1}")
    columns = _object(td["columns"], "training_data.columns",
                      tuple(a.name for a in schema.attributes))
    X = np.empty((n, schema.n_features))
    for j, a in enumerate(schema.attributes):
        where = f"training_data.columns[{describe(a.name)}]"
        x = _floats(columns[a.name], where, n)
        known = x[~np.isnan(x)]
        if a.kind == "nominal" and np.any((known != np.round(known)) | (known < 0)
                                          | (known >= len(a.values))):
            raise _Invalid(where, f"must hold value codes 0..{len(a.values) - 1} or null")
        if a.kind == "string" and known.size:
            raise _Invalid(where, "must be all null (a string attribute)")
        X[:, j] = x
    w = _floats(td["weights"], "training_data.weights", n)
    if not np.all(np.isfinite(w) & (w >= 0)):
        raise _Invalid("training_data.weights", "must be finite numbers >= 0")
    return X, y, w


def _floats(obj: object, where: str, size: int) -> np.ndarray:
    """A column written by either format version (a list of numbers and nulls, or base64
    little-endian float64, NaN = missing)."""
    if isinstance(obj, dict):
        _object(obj, where, ("encoding", "data"))
        if obj["encoding"] != "base64-f8le":
            raise _Invalid(f"{where}.encoding", f"is unknown: {describe(obj['encoding'])}")
        try:
            raw = base64.b64decode(_text(obj["data"], f"{where}.data"), validate=True)
        except (binascii.Error, ValueError):
            raise _Invalid(f"{where}.data", "is not base64") from None
        if len(raw) != 8 * size:
            raise _Invalid(f"{where}.data", f"holds {len(raw)} bytes, not {8 * size} "
                           f"({size} float64 values)")
        return np.frombuffer(raw, dtype="<f8").astype(np.float64)
    if not isinstance(obj, list):
        raise _Invalid(where, f"must be a list or an encoded column, not {describe(obj)}")
    return _reals(obj, where, size, nulls=True, finite=False)


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def read_model(path: str | Path) -> Model:
    """Load a model file, with one-line errors naming the file for every failure."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelFileError(f"{p}: no such model file.") from None
    except IsADirectoryError:
        raise ModelFileError(f"{p}: is a directory, not a model file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{p}: cannot read model file ({exc}).") from None
    try:
        # strict JSON: NaN and Infinity, which Python's json reads by default, are refused
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ModelFileError(
            f"{p}: not a treecert model: invalid JSON at line {exc.lineno} ({exc.msg})."
        ) from None
    except RecursionError:
        raise ModelFileError(f"{p}: not a treecert model: JSON nested too deeply.") from None
    except ValueError as exc:  # NaN/Infinity, an integer of thousands of digits
        why = "a number too long" if "digits" in str(exc) else str(exc)
        raise ModelFileError(f"{p}: not a treecert model: invalid JSON ({why}).") from None
    return Model.from_json(doc, source=str(p))
