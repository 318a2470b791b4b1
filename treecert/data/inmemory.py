"""In-memory tables — numpy arrays, pandas DataFrames, lists of rows — as the matrix of a
:class:`~treecert.data.schema.Dataset`: the input side of the Python estimator
(:mod:`treecert.estimator`).

:func:`read_matrix` checks a 2-D input as scikit-learn's ``check_array`` does (shape, at least
one row and one column, no complex numbers, no sparse matrices, no infinities) and reads each
column either as numbers or as labels:

- pandas ``category``, ``bool``/``boolean``, ``object`` and ``string`` columns, numpy ``bool``
  and string arrays give labels; a categorical column keeps its categories' order;
- numeric columns give numbers; an object column (numpy or pandas) gives numbers when every
  value is a number, labels when any value is a string or a bool;
- ``NaN``, ``None``, ``pd.NA`` and ``NaT`` are missing values, which the tree learner
  handles as C4.5 does (fractional instances).

:func:`learn_encoding` turns the columns read at fit time into a :class:`FeatureEncoding`:
labels become nominal attributes (values sorted, or in the categories' order), numbers
numeric ones unless the column is named in ``nominal`` (then one value per distinct number,
like ``--nominal`` and Weka's NumericToNominal). :meth:`FeatureEncoding.transform` maps later
inputs the same way; a nominal value not seen in fit is read as missing, as ``treecert
predict`` reads unseen values in files.
"""

from __future__ import annotations

import numbers
import warnings
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from treecert.data.alignment import unseen_warning
from treecert.data.schema import Attribute
from treecert.data.table import _fmt_num
from treecert.errors import InputError, ParameterError

__all__ = ["FeatureEncoding", "Matrix", "check_feature_names", "label_of", "learn_encoding",
           "read_matrix", "read_target", "read_weights", "to_frame"]

_NUMERIC_INFERRED = {"integer", "floating", "mixed-integer-float", "decimal", "empty"}
_LABEL_INFERRED = {"string", "boolean", "bytes"}


@dataclass
class Matrix:
    """A 2-D input read column by column.

    ``numbers[j]`` is a float64 array (NaN = missing) when column ``j`` was read as numbers,
    else None and ``labels[j]`` is an object array of ``str`` (None = missing);
    ``categories[j]`` is the declared order of a pandas categorical column. ``feature_names``
    are the column names when the input is a DataFrame whose column names are all strings
    (scikit-learn's ``feature_names_in_``); ``names`` are the attribute names (those, or
    ``x0``, ``x1``, ...). ``index`` is a DataFrame's index, kept for outputs.
    """

    shape: tuple[int, int]
    numbers: list[np.ndarray | None]
    labels: list[np.ndarray | None]
    categories: list[tuple[str, ...] | None]
    names: tuple[str, ...]
    feature_names: tuple[str, ...] | None = None
    index: object = None


def label_of(v: object) -> str:
    """One value as a nominal label: numbers as Weka's CSVLoader writes them (``1`` for 1.0),
    so that labels read from numbers and from strings meet."""
    if isinstance(v, bool | np.bool_):
        return str(bool(v))
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return _fmt_num(float(v))
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def _labels_of(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    out = np.full(values.shape[0], None, dtype=object)
    out[~missing] = [label_of(v) for v in values[~missing]]
    return out


def _object_column(col: np.ndarray, what: str, name: str) -> tuple[np.ndarray | None,
                                                                    np.ndarray | None]:
    """(numbers, labels) of an object column: labels if any value is a string or a bool."""
    missing = np.asarray(pd.isna(col), dtype=bool)
    present = col[~missing]
    kind = pd.api.types.infer_dtype(present, skipna=False)
    if kind in _LABEL_INFERRED or (
        kind not in _NUMERIC_INFERRED
        and any(isinstance(v, str | bytes | bool | np.bool_) for v in present)
    ):
        return None, _labels_of(col, missing)
    try:
        numbers = np.where(missing, np.nan, col).astype(np.float64)
    except (TypeError, ValueError) as exc:
        # TypeError as numpy raises it ("float() argument must be a string or a real number,
        # not 'dict'"): a value is neither a number nor a label.
        raise TypeError(
            f"{what}, column {name!r}: {exc}; a column must hold numbers or labels (strings)."
        ) from exc
    return numbers, None


def _is_sparse(X: object) -> bool:
    return type(X).__module__.startswith("scipy.sparse") or hasattr(X, "tocsr")


def _check_finite(numbers: np.ndarray, what: str, name: str) -> None:
    if np.isinf(numbers).any():
        raise InputError(
            f"Input {what} contains infinity (column {name!r}); treecert reads NaN as a "
            "missing value but cannot split on infinite ones.",
            "Replace them, e.g. with NaN.",
        )


def _check_shape(shape: tuple[int, ...], what: str) -> None:
    if len(shape) == 1:
        raise InputError(
            f"{what}: expected a 2-D array (n_samples, n_features), got a 1-D array of shape "
            f"{shape}. Reshape your data with X.reshape(-1, 1) if it holds a single feature "
            "or X.reshape(1, -1) if it holds a single sample."
        )
    if len(shape) != 2:
        raise InputError(
            f"{what}: expected a 2-D array (n_samples, n_features), got shape {shape}."
        )
    if shape[0] == 0:
        raise InputError(f"{what}: 0 sample(s) (shape={shape}) while a minimum of 1 is required.")
    if shape[1] == 0:
        raise InputError(
            f"{what}: 0 feature(s) (shape={shape}) while a minimum of 1 is required."
        )


def _frame_matrix(df: pd.DataFrame, what: str) -> Matrix:
    _check_shape(df.shape, what)
    cols = list(df.columns)
    all_str = all(isinstance(c, str) for c in cols)
    names = tuple(str(c) for c in cols)
    numbers: list[np.ndarray | None] = []
    labels: list[np.ndarray | None] = []
    categories: list[tuple[str, ...] | None] = []
    for j, name in enumerate(names):
        s = df.iloc[:, j]
        dt = s.dtype
        num = lab = cats = None
        if isinstance(dt, pd.CategoricalDtype):
            cats = tuple(label_of(c) for c in dt.categories)
            codes = s.cat.codes.to_numpy()
            lab = np.where(codes >= 0, np.asarray((*cats, ""), dtype=object)[codes], None)
        elif pd.api.types.is_bool_dtype(dt):
            vals = s.to_numpy(dtype=object)
            lab = _labels_of(vals, np.asarray(pd.isna(vals), dtype=bool))
        elif pd.api.types.is_complex_dtype(dt):
            raise InputError(f"{what}, column {name!r}: Complex data not supported.")
        elif pd.api.types.is_numeric_dtype(dt):
            num = s.to_numpy(dtype=np.float64, na_value=np.nan)
        elif pd.api.types.is_object_dtype(dt) or pd.api.types.is_string_dtype(dt):
            num, lab = _object_column(s.to_numpy(dtype=object), what, name)
        else:
            raise InputError(
                f"{what}, column {name!r}: a {dt} column cannot be learned from; treecert "
                "reads numbers, and strings, bools or categories as nominal values.",
                "Convert it to numbers or to strings first.",
            )
        if num is not None:
            _check_finite(num, what, name)
        numbers.append(num)
        labels.append(lab)
        categories.append(cats)
    return Matrix(df.shape, numbers, labels, categories, names,
                  tuple(cols) if all_str else None, df.index)


def read_matrix(X: object, what: str = "X") -> Matrix:
    """Read a 2-D input column by column (see the module docstring).

    Raises
    ------
    InputError (a ValueError)
        Not 2-D, no rows or no columns, sparse, complex, infinite values.
    TypeError
        A column holds values that are neither numbers nor labels (e.g. dicts).
    """
    if X is None:
        raise InputError(f"{what}: expected a 2-D array (n_samples, n_features), got None.")
    if _is_sparse(X):
        raise InputError(
            f"{what}: sparse input is not supported; trees read every value.",
            "Pass a dense array (X.toarray()).",
        )
    if not isinstance(X, pd.DataFrame) and hasattr(X, "to_pandas") and hasattr(X, "columns"):
        X = X.to_pandas()  # polars, pyarrow
    if isinstance(X, pd.DataFrame):
        return _frame_matrix(X, what)
    if isinstance(X, pd.Series):
        _check_shape((len(X),), what)
    arr = np.asarray(X)
    if arr.dtype.kind in "US":
        # Lists of rows mixing numbers and strings become strings in numpy; keep each value
        # as given so that each column is judged on its own.
        arr = np.asarray(X, dtype=object)
    if arr.dtype.kind == "c":
        raise InputError(f"{what}: Complex data not supported.")
    _check_shape(arr.shape, what)
    n, d = arr.shape
    names = tuple(f"x{j}" for j in range(d))
    numbers: list[np.ndarray | None] = [None] * d
    labels: list[np.ndarray | None] = [None] * d
    if arr.dtype.kind == "b":
        labels = [_labels_of(arr[:, j], np.zeros(n, dtype=bool)) for j in range(d)]
    elif arr.dtype.kind in "iuf":
        full = np.asarray(arr, dtype=np.float64)
        numbers = [full[:, j] for j in range(d)]
    elif arr.dtype.kind == "O":
        for j in range(d):
            numbers[j], labels[j] = _object_column(arr[:, j], what, names[j])
    else:
        raise InputError(
            f"{what}: an array of dtype {arr.dtype} cannot be learned from; treecert reads "
            "numbers, and strings, bools or categories as nominal values."
        )
    for j in range(d):
        if numbers[j] is not None:
            _check_finite(numbers[j], what, names[j])
    return Matrix((n, d), numbers, labels, [None] * d, names)


def _nominal_mask(nominal: object, m: Matrix) -> np.ndarray:
    """The ``nominal`` parameter as a boolean mask over the columns."""
    d = m.shape[1]
    mask = np.zeros(d, dtype=bool)
    if nominal is None:
        return mask
    items = [nominal] if isinstance(nominal, str | int) else list(nominal)  # type: ignore[arg-type]
    if len(items) == d and all(isinstance(v, bool | np.bool_) for v in items):
        return np.asarray(items, dtype=bool)
    for item in items:
        if isinstance(item, str):
            if item not in m.names:
                raise ParameterError(
                    f"nominal: no column {item!r}; the columns are {', '.join(m.names)}."
                )
            mask[m.names.index(item)] = True
        elif isinstance(item, int | np.integer) and not isinstance(item, bool):
            if not -d <= int(item) < d:
                raise ParameterError(f"nominal: column index {item} is out of range for "
                                     f"{d} columns.")
            mask[int(item)] = True
        else:
            raise ParameterError(
                f"nominal: expected column names, column indices or a boolean mask of "
                f"{d} values, got {item!r}."
            )
    return mask


@dataclass(frozen=True)
class ColumnEncoding:
    """How one input column becomes one attribute. ``numbers`` holds the distinct numbers
    of a numeric column made nominal (value ``i`` is ``numbers[i]``)."""

    name: str
    nominal: bool
    values: tuple[str, ...] = ()
    numbers: tuple[float, ...] | None = None

    @property
    def attribute(self) -> Attribute:
        if self.nominal:
            return Attribute(self.name, "nominal", self.values)
        return Attribute(self.name, "numeric")


@dataclass(frozen=True)
class FeatureEncoding:
    """The columns' encodings learnt at fit time (one per input column, in order)."""

    columns: tuple[ColumnEncoding, ...]

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        return tuple(c.attribute for c in self.columns)

    @property
    def nominal_mask(self) -> np.ndarray:
        return np.array([c.nominal for c in self.columns], dtype=bool)

    def transform(self, m: Matrix, what: str = "X") -> np.ndarray:
        """The float matrix (n_samples, n_features) of ``m``: numbers, or nominal codes into
        the attribute's values; NaN = missing or a nominal value not seen in fit."""
        out = np.empty(m.shape, dtype=np.float64)
        unseen: dict[str, Counter[str]] = {}
        for j, enc in enumerate(self.columns):
            num, lab = m.numbers[j], m.labels[j]
            if not enc.nominal:
                if num is None:
                    example = next((v for v in lab if v is not None), None)  # type: ignore[union-attr]
                    raise InputError(
                        f"{what}, column {enc.name!r}: the column was numeric in fit but "
                        f"holds text ({example!r}).",
                        "Pass numbers, or refit with the column nominal.",
                    )
                out[:, j] = num
                continue
            if lab is None:
                lab = _labels_of(num, np.isnan(num))  # type: ignore[arg-type]
            if enc.numbers is not None and num is not None:
                codes = pd.Index(enc.numbers).get_indexer(num)
            else:
                codes = pd.Index(enc.values).get_indexer(lab)
            given = np.array([v is not None for v in lab], dtype=bool)
            unseen[enc.name] = Counter(lab[(codes < 0) & given].tolist())
            col = codes.astype(np.float64)
            col[codes < 0] = np.nan
            out[:, j] = col
        for line in unseen_warning(what, [c.name for c in self.columns], unseen):
            # A value fit never saw cannot be placed in the tree: it is read as missing, as
            # ``treecert predict`` does, and said once, not silently.
            warnings.warn(line, UserWarning, stacklevel=4)
        return out


def learn_encoding(m: Matrix, nominal: object = None) -> tuple[FeatureEncoding, np.ndarray]:
    """Each column's kind and nominal values from the input of fit; returns the encoding and
    the encoded float matrix (n_samples, n_features).

    ``nominal``: None, column names, column indices or a boolean mask — numeric columns to
    read as nominal (one value per distinct number, in ascending order).
    """
    forced = _nominal_mask(nominal, m)
    columns = []
    for j, name in enumerate(m.names):
        num, lab, cats = m.numbers[j], m.labels[j], m.categories[j]
        if lab is not None:
            values = cats if cats is not None else tuple(sorted({v for v in lab if v is not None}))
            columns.append(ColumnEncoding(name, True, values))
        elif forced[j]:
            distinct = np.unique(num[~np.isnan(num)])  # type: ignore[index]
            columns.append(ColumnEncoding(name, True, tuple(_fmt_num(v) for v in distinct.tolist()),
                                          tuple(distinct.tolist())))
        else:
            columns.append(ColumnEncoding(name, False))
    encoding = FeatureEncoding(tuple(columns))
    return encoding, encoding.transform(m)


def to_frame(data) -> tuple[pd.DataFrame, pd.Series]:
    """A :class:`~treecert.data.schema.Dataset` as the estimator's input: ``X`` a DataFrame
    (nominal attributes as ``category`` columns in the declared order of their values,
    numeric and date ones as floats; NaN = missing) and ``y`` a Series of class labels (None
    where the class is missing). Fitting on them grows the tree ``treecert train`` grows on
    the file whenever the declared class order is sorted (the estimator sorts its classes,
    as scikit-learn does)."""
    columns = {}
    for j, attr in enumerate(data.schema.attributes):
        x = data.X[:, j]
        if attr.is_nominal:
            codes = np.where(np.isnan(x), -1, x).astype(np.int64)
            columns[attr.name] = pd.Categorical.from_codes(codes, categories=list(attr.values))
        else:
            columns[attr.name] = x
    classes = np.asarray(data.schema.classes, dtype=object)
    y = pd.Series(np.where(data.y >= 0, classes[np.maximum(data.y, 0)], None),
                  name=data.schema.class_attribute.name, dtype=object)
    return pd.DataFrame(columns), y


# ------------------------------------------------------------------------------------------
# the target, the weights and the column names
# ------------------------------------------------------------------------------------------


def _check_label_values(arr: np.ndarray) -> None:
    """Reject float or object targets scikit-learn would not call class labels: missing or
    infinite values, non-integer numbers (a regression target), other objects."""
    if arr.dtype.kind == "f":
        values = arr
    else:
        flat = list(arr)
        if any(v is None or (isinstance(v, float | np.floating) and np.isnan(v))
               for v in flat):
            raise InputError("Input y contains NaN (or None); every row needs a label.")
        if not all(isinstance(v, str | bool | np.bool_ | numbers.Real) for v in flat):
            raise InputError("Unknown label type: y holds values that are neither strings "
                             "nor numbers.")
        if any(isinstance(v, str) for v in flat):
            if not all(isinstance(v, str) for v in flat):
                raise InputError("Unknown label type: y mixes strings and numbers.")
            return
        values = np.asarray([float(v) for v in flat])
    if np.isnan(values).any():
        raise InputError("Input y contains NaN; every row needs a label.")
    if np.isinf(values).any():
        raise InputError("Input y contains infinity; every row needs a label.")
    if not np.all(values == np.round(values)):
        raise InputError(
            "Unknown label type: continuous. treecert learns classes: y must hold labels "
            "(strings, integers, booleans), not measurements."
        )


def read_target(y: object, n: int, who: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(classes, codes, was_column)`` of a classification target of ``n`` labels, checked
    as scikit-learn checks classifiers' targets: ``classes`` sorted (``numpy.unique``),
    ``codes`` (n,) into them; ``was_column`` when ``y`` had shape (n, 1) (the caller warns,
    as scikit-learn does). ``who`` names the estimator in messages."""
    if y is None:
        raise InputError(f"{who} requires y to be passed, but the target y is None.")
    arr = np.asarray(y)
    was_column = arr.ndim == 2 and arr.shape[1] == 1
    if was_column:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise InputError(f"y should be a 1d array, got an array of shape {arr.shape} "
                         "instead; treecert learns one class per row.")
    if arr.shape[0] != n:
        raise InputError(f"X has {n} rows but y has {arr.shape[0]} labels; give one label "
                         "per row.")
    kind = arr.dtype.kind
    if kind == "c":
        raise InputError("y: Complex data not supported.")
    if kind in "fO":
        _check_label_values(arr)
    elif kind not in "biuUS":
        raise InputError(f"Unknown label type: y has dtype {arr.dtype}.")
    try:
        classes, codes = np.unique(arr, return_inverse=True)
    except TypeError:
        raise InputError("Unknown label type: y mixes labels that cannot be compared "
                         "(e.g. strings and numbers).") from None
    return classes, codes.reshape(-1).astype(np.int64), was_column


def read_weights(sample_weight: object, n: int) -> np.ndarray:
    """Instance weights (n,): ones for None; finite, >= 0, not all zero."""
    if sample_weight is None:
        return np.ones(n)
    try:
        w = np.array(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("sample_weight: expected numbers.") from None
    if w.shape != (n,):
        raise InputError(f"sample_weight.shape == {w.shape}, expected ({n},).")
    if not np.isfinite(w).all() or (w < 0).any():
        raise InputError("sample_weight: every weight must be finite and >= 0.")
    if not (w > 0).any():
        raise InputError("sample_weight: every weight is zero; at least one must be positive.")
    return w


def check_feature_names(fitted: tuple[str, ...] | None, names: tuple[str, ...] | None,
                        who: str) -> None:
    """scikit-learn's rules for column names, with its messages: a warning when only one
    of fit and now had names, an :class:`InputError` when the names differ."""
    if fitted is None and names is None:
        return
    if fitted is None:
        warnings.warn(f"X has feature names, but {who} was fitted without feature names",
                      UserWarning, stacklevel=4)
        return
    if names is None:
        warnings.warn(f"X does not have valid feature names, but {who} was fitted with "
                      "feature names", UserWarning, stacklevel=4)
        return
    if tuple(fitted) == tuple(names):
        return
    message = "The feature names should match those that were passed during fit.\n"
    unexpected = sorted(set(names) - set(fitted))
    missing = sorted(set(fitted) - set(names))

    def listed(items: list[str]) -> str:
        return "".join(f"- {s}\n" for s in items[:5]) + ("- ...\n" if len(items) > 5 else "")

    if unexpected:
        message += "Feature names unseen at fit time:\n" + listed(unexpected)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + listed(missing)
    if not unexpected and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise InputError(message)
