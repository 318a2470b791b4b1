"""Training data: :func:`load_dataset` reads a file into a :class:`~treecert.data.schema.Dataset`
with a fresh schema, and :func:`check_trainable` says what keeps a tree from being learned.

Loading picks the class column (the last one by default, like Weka's ``-c last``), drops
ignored columns and types every attribute: ARFF attributes as declared, CSV ones numeric
when every known value is a number and nominal otherwise; ``nominal`` turns numbers into
labels (Weka's NumericToNominal). Test data is read against that schema by
:mod:`treecert.data.alignment`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np

from treecert.data.csv_reader import _csv_numbers
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.data.sources import _read_table
from treecert.data.table import _Column, _fmt_num, _listing, _Table
from treecert.errors import ConfigError, DataError, describe

__all__ = ["check_class_count", "check_trainable", "drop_empty_attributes", "load_dataset"]


def load_dataset(
    path: str | Path,
    *,
    class_name: str | None = None,
    nominal: Iterable[str] = (),
    ignore: Iterable[str] = (),
    fmt: str | None = None,
) -> Dataset:
    """Read a training file (ARFF or CSV) into a :class:`Dataset`.

    Parameters
    ----------
    path : str or Path
        The file; ``"-"`` reads CSV from stdin. ``.arff``/``.csv`` (optionally ``.gz``)
        decide the format unless ``fmt`` is given.
    class_name : str, optional
        The class attribute; by default the last column left after ``ignore`` (Weka's
        ``-c last``). It must be nominal: treecert learns classification trees. A CSV class
        column is always read as labels, so ``1`` stays ``'1'``.
    nominal : iterable of str
        Columns to read as nominal although they hold numbers (Weka's NumericToNominal for
        ARFF, with values in ascending order; labels in order of appearance for CSV).
    ignore : iterable of str
        Columns to drop before anything else, like Weka's Remove filter.
    fmt : {"arff", "csv"}, optional
        Overrides the format the file name implies.

    Returns
    -------
    Dataset
        ``schema.attributes`` are the non-class columns in file order, string ones
        included (their X column is NaN and their text goes to ``extra``). Rows with a
        missing class keep ``y = -1``; the learner drops them.

    Raises
    ------
    DataError
        The file cannot be read, has a syntax error (message names the line), has no data
        rows, or a named column does not exist.
    """
    nominal, ignore = tuple(nominal), tuple(ignore)

    def str_columns(names: list[str]) -> set[str]:
        kept = [n for n in names if n not in ignore]
        return {*nominal, class_name if class_name is not None else (kept or [""])[-1]}

    table = _read_table(path, fmt, str_columns)
    src, names = table.source, table.names
    for option, given in (("ignore", ignore), ("nominal", nominal)):
        unknown = [g for g in given if g not in names]
        if unknown:
            raise DataError(
                f"{src}: no column named {_listing([repr(u) for u in unknown])} "
                f"(given to {option}); the columns are {_listing(names)}.",
                "Names are case-sensitive.",
            )
    kept = [c for c in table.columns if c.attr.name not in ignore]
    if class_name is None:
        if not kept:
            raise DataError(f"{src}: every column is ignored; nothing is left to learn.")
        class_col = kept[-1]
    elif class_name not in names:
        raise DataError(
            f"{src}: class column {class_name!r} not found; the columns are "
            f"{_listing(names)}.",
            "Names are case-sensitive; by default the last column is the class.",
        )
    elif class_name in ignore:
        raise DataError(f"{src}: the class column {class_name!r} cannot also be ignored.")
    else:
        class_col = table.column(class_name)

    class_attr, y = _class_codes(class_col, table, class_col.attr.name in nominal)
    attrs, xs, extra = [], [], {}
    for col in kept:
        if col is class_col:
            continue
        attr, x = _train_attribute(col, table, col.attr.name in nominal)
        if attr.kind == "string":
            extra[attr.name] = col.values
        attrs.append(attr)
        xs.append(x)
    schema = Schema(tuple(attrs), class_attr, relation=table.relation)
    X = np.column_stack(xs) if xs else np.empty((table.weights.size, 0))
    return Dataset(schema, X.astype(np.float64, copy=False), y, table.weights, extra,
                   source=src, has_class=True)


def drop_empty_attributes(dataset: Dataset) -> Dataset:
    """``dataset`` without the attributes that have no known value in the rows with a
    class, with one line in its ``warnings`` naming them: J48 trains on such files (Weka's
    supermarket.arff) and never splits on those attributes, so the command line does the
    same. String attributes are kept (:func:`check_trainable` names them), and so is
    everything when no row has a class (:func:`check_trainable` says so)."""
    labelled = dataset.y >= 0
    attrs = dataset.schema.attributes
    if not labelled.any():
        return dataset
    empty = [j for j, a in enumerate(attrs)
             if a.kind != "string" and np.isnan(dataset.X[labelled, j]).all()]
    if not empty:
        return dataset
    one = len(empty) == 1
    warning = (f"{dataset.source}: {'attribute' if one else 'attributes'} "
               f"{_listing([repr(attrs[j].name) for j in empty])} "
               f"{'has' if one else 'have'} no known values (all {int(labelled.sum())} "
               "missing); left out, as J48 does.")
    keep = [j for j in range(len(attrs)) if j not in set(empty)]
    schema = replace(dataset.schema, attributes=tuple(attrs[j] for j in keep))
    return replace(dataset, schema=schema, X=dataset.X[:, keep],
                   warnings=[*dataset.warnings, warning])


def _class_codes(col: _Column, table: _Table, forced: bool) -> tuple[Attribute, np.ndarray]:
    a = col.attr
    if table.is_csv or (forced and a.kind == "string"):
        attr, codes = _nominal_first_seen(a.name, col.values)
        if forced and a.kind == "string":
            attr = replace(attr, nominal_from="string")
    elif a.kind == "nominal":
        attr, codes = a, col.values
    elif forced and a.kind == "numeric":
        attr, codes = _numeric_to_nominal(a.name, col.values)
    else:
        raise DataError(
            f"{table.source}: class attribute {a.name!r} is {a.kind}; treecert learns "
            "classification trees; declare it nominal.",
            f"Write @attribute {a.name} {{value1, value2, ...}}, or pass it as nominal "
            f"(--nominal {a.name}).",
        )
    return attr, np.where(np.isnan(codes), -1, codes).astype(np.int64)


def _train_attribute(col: _Column, table: _Table, forced: bool) -> tuple[Attribute, np.ndarray]:
    a, v = col.attr, col.values
    if table.is_csv:
        numbers = _csv_numbers(v)
        if numbers is not None and not forced:
            return Attribute(a.name, "numeric"), numbers
        attr, x = _nominal_first_seen(a.name, v)
        if numbers is not None:  # an ARFF test file may declare it numeric
            attr = replace(attr, nominal_from="numeric")
        return attr, x
    if forced and a.kind == "numeric":
        return _numeric_to_nominal(a.name, v)
    if forced and a.kind == "string":
        attr, x = _nominal_first_seen(a.name, v)
        return replace(attr, nominal_from="string"), x
    if forced and a.kind == "date":
        raise DataError(f"{table.source}: date attribute {a.name!r} cannot be made nominal.")
    if a.kind == "string":
        return a, np.full(v.size, np.nan)
    return a, v


def _nominal_first_seen(name: str, raw: np.ndarray) -> tuple[Attribute, np.ndarray]:
    """A nominal attribute from strings, values in order of first appearance."""
    if raw.dtype == np.float64:
        raw = np.array([None if math.isnan(v) else _fmt_num(v) for v in raw.tolist()],
                       dtype=object)
    first_seen: dict = {}  # value -> code, in order of first appearance (pandas.factorize)
    x = np.array([np.nan if v is None or (isinstance(v, float) and v != v)
                  else first_seen.setdefault(v, len(first_seen)) for v in raw.tolist()],
                 dtype=np.float64)
    return Attribute(name, "nominal", tuple(str(u) for u in first_seen)), x


def _numeric_to_nominal(name: str, x: np.ndarray) -> tuple[Attribute, np.ndarray]:
    """Like Weka's NumericToNominal: one value per distinct number, in ascending order."""
    distinct = np.unique(x[~np.isnan(x)])
    codes = np.searchsorted(distinct, x).astype(np.float64)
    codes[np.isnan(x)] = np.nan
    return Attribute(name, "nominal", tuple(_fmt_num(v) for v in distinct.tolist()),
                     nominal_from="numeric"), codes


#: The largest total instance weight of a training set: products and squares of class
#: counts stay finite far beyond it.
MAX_TOTAL_WEIGHT = 1e150


def check_trainable(dataset: Dataset, *, sample: bool = False) -> None:
    """Raise :class:`DataError` if a tree cannot be learned from ``dataset``.

    Checked here rather than in the learner so the message can say which column to fix.

    Parameters
    ----------
    dataset : Dataset
        Training data, as returned by :func:`load_dataset`.
    sample : bool
        ``dataset`` is a resample of data that passed this check (an ensemble's bootstrap
        sample): an attribute without a known value in it is allowed, since the tree grown
        on it simply never tests that attribute; the user's data had values for it.

    Raises
    ------
    DataError
        No attribute besides the class (everything ignored, or a file that is not
        comma-separated), a string attribute (free text cannot be split on), no row with a
        known class, fewer than two classes among those rows, no positive instance weight,
        instance weights too large to sum, or an attribute with no known value.
    """
    src, schema = dataset.source, dataset.schema
    cls = schema.class_attribute.name
    strings = [a.name for a in schema.attributes if a.kind == "string"]
    if len(strings) == schema.n_features:
        raise DataError(f"{src}: no attribute to learn from besides the class "
                        f"{describe(cls)}.", _no_attribute_hint(cls, strings))
    if strings:
        it = "it" if len(strings) == 1 else "them"
        raise DataError(
            f"{src}: {'attribute' if len(strings) == 1 else 'attributes'} "
            f"{_listing([repr(s) for s in strings])} "
            f"{'is a string attribute' if len(strings) == 1 else 'are string attributes'}; "
            "a tree cannot split on free text.",
            f"Drop {it} with --ignore {','.join(strings)}.",
        )
    if dataset.n_samples == 0:
        raise DataError(f"{src}: no data rows.", "Add at least one instance.")
    present = np.unique(dataset.y[dataset.y >= 0])
    if present.size == 0:
        raise DataError(
            f"{src}: no row has a known class; {cls!r} is missing in all "
            f"{dataset.n_samples} rows.",
            f"Check that {cls!r} is the class column.",
        )
    if present.size < 2:
        raise DataError(
            f"only one class ({schema.classes[int(present[0])]!r}) in {src}: a tree needs "
            "at least two classes to tell apart.",
            f"Check that {cls!r} is the class column.",
        )
    with np.errstate(over="ignore"):  # an infinite sum is refused just below
        total = float(np.sum(dataset.weights[dataset.y >= 0], dtype=np.float64))
    if not total <= MAX_TOTAL_WEIGHT:  # also inf: 1e308 twice
        raise DataError(
            f"{src}: the instance weights sum to {total:g}, beyond the {MAX_TOTAL_WEIGHT:g} "
            "a tree can compute with (entropies and counts would overflow).",
            "Scale the weights down: only their ratios matter (and min_leaf, a weight).",
        )
    if not np.any(dataset.weights[dataset.y >= 0] > 0):
        raise DataError(
            f"{src}: every row with a known class has instance weight 0; there is nothing "
            "to learn from.",
            "Give rows a positive weight (ARFF: {w} after a row's values).",
        )
    empty = [schema.attributes[j].name for j in np.flatnonzero(np.isnan(dataset.X).all(axis=0))]
    if empty and not sample:
        one = len(empty) == 1
        raise DataError(
            f"{src}: {'attribute' if one else 'attributes'} {_listing([repr(e) for e in empty])}"
            f" {'has' if one else 'have'} no known values (all {dataset.n_samples} missing); "
            "a tree cannot split on "
            f"{'it' if one else 'them'}.",
            f"Drop {'it' if one else 'them'} with --ignore {','.join(empty)}.",
        )


#: The most classes ``train``/``evaluate``/``compare`` take without ``--max-classes``.
DEFAULT_MAX_CLASSES = 1000
#: The fewest labelled rows on which a class with a value for most rows is taken for an ID.
_ID_MIN_ROWS = 20


def check_class_count(dataset: Dataset, max_classes: int | None = None) -> None:
    """Raise :class:`DataError` if the class looks like an identifier or has too many values,
    before any tree is grown: growing costs memory and time in rows x classes (3,000 rows
    of an ID column as the class: 770 MB), and the default class is the last column.

    Parameters
    ----------
    dataset : Dataset
        Training data.
    max_classes : int, optional
        None: refuse more than :data:`DEFAULT_MAX_CLASSES` (1000) classes, or a class with
        more values than half the labelled rows (at least 20 rows): every row (nearly) its
        own class is an identifier. An explicit number: refuse more classes than that only
        (0: no limit), which is how a user says that many classes are intended.
    """
    if max_classes is not None and max_classes < 0:
        raise ConfigError(f"--max-classes must be 0 (no limit) or more, got {max_classes}.")
    y = dataset.y[dataset.y >= 0]
    n, k = y.size, int(np.unique(y).size)
    cls = describe(dataset.schema.class_attribute.name)
    src = dataset.source
    if max_classes is None:
        if n >= _ID_MIN_ROWS and 2 * k > n:
            raise DataError(
                f"{src}: the class {cls} has {k} distinct values in {n} rows; it looks like "
                "an identifier, not a class (a tree's cost grows with rows x classes).",
                f"Choose the class column with --class NAME, or give --max-classes {k} if "
                "these are the classes.")
        limit = DEFAULT_MAX_CLASSES
    else:
        limit = max_classes
    if limit and k > limit:
        raise DataError(
            f"{src}: the class {cls} has {k} distinct values, more than the limit of "
            f"{limit} (a tree's cost grows with rows x classes).",
            f"Choose the class column with --class NAME, or give --max-classes {k} (0: no "
            "limit) if these are the classes.")


def _no_attribute_hint(cls: str, strings: list[str]) -> str:
    separators = [name for sep, name in ((";", "';'"), ("\t", "tabs"), ("|", "'|'"))
                  if sep in cls]
    if separators:
        return (f"The header reads as one column: is the file separated by {separators[0]}? "
                "treecert reads comma-separated CSV; convert the separators to commas.")
    if strings:
        return "The other columns are strings, which a tree cannot split on."
    return "Keep at least one column besides the class (check --ignore)."
