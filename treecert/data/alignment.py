"""Test and prediction data against a trained model's schema: :func:`load_for_schema` reads
a file and :func:`align_to_schema` fits its table to the schema.

Columns are matched by name, so their order may differ from training; each model attribute
is read as the kind it has in the model. A nominal value the model never saw reads as
missing and is counted in one warning (:func:`unseen_warning`); a missing column, a column
of another kind or an unknown class label raises
:class:`~treecert.errors.SchemaMismatchError`. The chunked reader of
:mod:`treecert.data.stream` aligns each chunk with the same code.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from treecert.data.csv_reader import StrColumns, _csv_numbers
from treecert.data.dates import DEFAULT_DATE_FORMAT, _format_date, _parse_dates
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.data.sources import _read_table
from treecert.data.table import _NAN, _Column, _factorize, _fmt_num, _listing, _number, _Table
from treecert.errors import DataError, SchemaMismatchError, describe

__all__ = ["align_to_schema", "load_for_schema"]


def load_for_schema(
    path: str | Path,
    schema: Schema,
    *,
    fmt: str | None = None,
    id_column: str | None = None,
) -> Dataset:
    """Read test or prediction data and align it to a trained model's ``schema``.

    Columns are matched by name, so their order may differ from training. Every column
    that is not a schema attribute (and ``id_column`` in any case) goes to ``extra`` as
    strings, so identifiers can be copied to outputs. The class column is optional.

    Parameters
    ----------
    path : str or Path
        The file, or ``"-"`` for CSV on stdin.
    schema : Schema
        The schema the model was trained on.
    fmt : {"arff", "csv"}, optional
        Overrides the format the file name implies.
    id_column : str, optional
        A column that must exist and whose values are kept in ``extra``.

    Returns
    -------
    Dataset
        With ``schema`` itself as its schema. A nominal value the model never saw is read
        as missing and counted in one entry of ``warnings``; ``has_class`` is False and
        ``y`` is all -1 when the file has no class column.

    Raises
    ------
    SchemaMismatchError
        A model attribute is missing, has a different kind (numeric in the model, text in
        the file, ...), or a class label is one the model does not know.
    DataError
        The file cannot be read or has a syntax error.
    """
    table = _read_table(path, fmt, schema_str_columns(schema))
    return align_to_schema(table, schema, id_column=id_column)


def schema_str_columns(schema: Schema) -> StrColumns:
    """Which CSV columns to keep as text when reading data for ``schema``: every
    non-numeric model attribute, the class, and any column the model does not know."""
    nominal_like = {a.name for a in schema.attributes if a.kind != "numeric"}
    known = set(schema.feature_names) | {schema.class_attribute.name}

    def str_columns(names: list[str]) -> set[str]:
        return nominal_like | {schema.class_attribute.name} | (set(names) - known)

    return str_columns


def align_to_schema(
    table: _Table,
    schema: Schema,
    *,
    id_column: str | None = None,
    row_offset: int = 0,
    unseen: dict[str, Counter[str]] | None = None,
) -> Dataset:
    """The rows of ``table`` (as read) aligned to ``schema``: the body of
    :func:`load_for_schema`, shared with the chunked reader of :mod:`treecert.data.stream`.

    ``row_offset`` is the number of data rows before this table in its file (for messages);
    when ``unseen`` is given, unseen nominal values are counted into it and no warning is
    attached (the caller reports the total with :func:`unseen_warning`).
    """
    known = set(schema.feature_names) | {schema.class_attribute.name}
    src, names = table.source, table.names
    trained_on = _listing(schema.feature_names)
    if id_column is not None and id_column not in names:
        raise DataError(f"{src}: id column {id_column!r} not found; the columns are "
                        f"{_listing(names)}.")
    counts: dict[str, Counter[str]] = {} if unseen is None else unseen
    xs: list[np.ndarray] = []
    extra: dict[str, np.ndarray] = {}
    for attr in schema.attributes:
        if attr.name not in names:
            near = [n for n in names if n.lower() == attr.name.lower()]
            raise SchemaMismatchError(
                f"{src}: column {attr.name!r} is missing; the model was trained on "
                f"{trained_on}.",
                f"The file has {near[0]!r}; names are case-sensitive." if near else None,
            )
        xs.append(_test_attribute(attr, table.column(attr.name), table, counts, trained_on,
                                  row_offset))
    y = np.full(table.weights.size, -1, dtype=np.int64)
    has_class = schema.class_attribute.name in names
    position = None
    if has_class:
        y = _test_classes(schema, table.column(schema.class_attribute.name), table,
                          row_offset)
        before = set(names[:names.index(schema.class_attribute.name)])
        position = sum(a.name in before for a in schema.attributes)
    string_attrs = {a.name for a in schema.attributes if a.kind == "string"}
    for col in table.columns:
        name = col.attr.name
        if name not in known or name == id_column or name in string_attrs:
            extra[name] = _labels(col)
    notes = [] if unseen is not None else unseen_warning(src, schema.feature_names, counts)
    X = np.column_stack(xs) if xs else np.empty((table.weights.size, 0))
    return Dataset(schema, X.astype(np.float64, copy=False), y, table.weights, extra,
                   source=src, has_class=has_class, warnings=notes, class_position=position)


def unseen_warning(src: str, names: list[str], unseen: dict[str, Counter[str]]) -> list[str]:
    """The one warning line counting nominal values not seen in training (or none);
    ``names`` are the model's attribute names, in the order the line lists them."""
    if not any(unseen.values()):
        return []
    order = {name: j for j, name in enumerate(names)}
    total = sum(sum(c.values()) for c in unseen.values())
    parts = [f"{name}: " + ", ".join(f"{v!r} \u00d7{k}" for v, k in unseen[name].most_common())
             for name in sorted((n for n in unseen if unseen[n]), key=order.__getitem__)]
    detail = "; ".join(parts)
    if len(detail) > 200:
        detail = detail[:200].rsplit(",", 1)[0] + ", ..."
    values = "value" if total == 1 else "values"
    return [f"{src}: {total} {values} not seen in training read as missing ({detail})"]


def _test_attribute(
    attr: Attribute, col: _Column, table: _Table, unseen: dict[str, Counter[str]],
    trained_on: str, row_offset: int = 0,
) -> np.ndarray:
    src, file_kind = table.source, col.attr.kind
    if table.is_csv:
        file_kind = "numeric" if col.values.dtype == np.float64 else "text"

    def mismatch(why: str) -> SchemaMismatchError:
        return SchemaMismatchError(f"{src}: column {attr.name!r} {why}; the model was "
                                   f"trained on {trained_on}.")

    if attr.kind == "string":
        return np.full(col.values.size, np.nan)
    if attr.kind == "nominal":
        if file_kind in ("numeric", "date") and not table.is_csv \
                and file_kind != attr.nominal_from:  # --nominal's conversion, as in training
            raise mismatch(f"is {file_kind} here but nominal in the model")
        labels = _labels(col)
        lookup = {v: float(k) for k, v in enumerate(attr.values)}
        x = _map_labels(col, lookup, _NAN, -1.0, np.float64)
        bad = x < 0
        if bad.any():
            unseen.setdefault(attr.name, Counter()).update(labels[bad].tolist())
            x[bad] = np.nan
        return x
    if attr.kind == "numeric":
        if table.is_csv:
            numbers = _csv_numbers(col.values)
            if numbers is None:
                row = next(i for i, v in enumerate(col.values) if v is not None
                           and not _is_number(v))
                raise mismatch(f"holds {describe(col.values[row])} (data row "
                               f"{row + 1 + row_offset}) but is numeric in the model")
            return numbers
        if file_kind != "numeric":
            raise mismatch(f"is {file_kind} here but numeric in the model")
        return col.values
    # date
    if not table.is_csv:
        if file_kind != "date":
            raise mismatch(f"is {file_kind} here but a date in the model")
        return col.values
    parsed, bad_i = _parse_dates(_labels(col), attr.date_format or DEFAULT_DATE_FORMAT)
    if bad_i >= 0:
        raise mismatch(f"holds {describe(_labels(col)[bad_i])} (data row "
                       f"{bad_i + 1 + row_offset}), not a date in the model's format "
                       f"{attr.date_format!r}")
    return parsed


def _map_labels(col: _Column, lookup: dict, missing, unknown, dtype) -> np.ndarray:
    """``[missing if v is None else lookup.get(v, unknown) for v in _labels(col)]`` as an
    array of ``dtype``, looking up each distinct label once (a million rows hold a handful
    of class labels): through the reader's ``coded`` table when it has one, else after
    factorising the labels.
    """
    if col.coded is not None:
        codes, uniques = col.coded
    else:
        codes, uniques = _factorize(_labels(col))
    table = np.array([missing if u is None else lookup.get(u, unknown) for u in uniques],
                     dtype=dtype)
    return table[codes]


def _is_number(v: str) -> bool:
    try:
        return not math.isnan(_number(v))
    except ValueError:
        return False


def _test_classes(schema: Schema, col: _Column, table: _Table, row_offset: int = 0
                  ) -> np.ndarray:
    cls = schema.class_attribute
    if not table.is_csv and col.attr.kind not in ("nominal", "string", cls.nominal_from):
        raise SchemaMismatchError(
            f"{table.source}: class column {cls.name!r} is {col.attr.kind} here but "
            f"nominal in the model ({_listing(cls.values)})."
        )
    labels = _labels(col)
    lookup = {v: k for k, v in enumerate(cls.values)}
    y = _map_labels(col, lookup, -1, -2, np.int64)
    bad = np.flatnonzero(y == -2)
    if bad.size:
        i = int(bad[0])
        raise SchemaMismatchError(
            f"{table.source}: class label {describe(labels[i])} in data row "
            f"{i + 1 + row_offset} is not one the model knows ({_listing(cls.values)}).",
            "Correct the label, or drop the class column to predict without scoring.",
        )
    return y


def _labels(col: _Column) -> np.ndarray:
    """A column's values as strings (None = missing), for ``extra`` and label matching."""
    a, v = col.attr, col.values
    if v.dtype == object:
        return v
    if a.kind == "nominal":
        table = np.array([*a.values, None], dtype=object)
        return table[np.where(np.isnan(v), -1, v).astype(np.int64)]
    if a.kind == "date":
        fmt = a.date_format or DEFAULT_DATE_FORMAT
        return np.array([None if math.isnan(s) else _format_date(s, fmt) for s in v.tolist()],
                        dtype=object)
    return np.array([None if math.isnan(s) else _fmt_num(s) for s in v.tolist()],
                    dtype=object)
