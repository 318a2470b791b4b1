"""Write a :class:`~treecert.data.schema.Dataset` as an ARFF file that Weka 3.8 reads.

Labels are quoted like Weka's ``Utils.quote`` (and wherever the tokenizer of
:mod:`treecert.data.arff_reader` would split), numbers take their shortest exact form and
dates their declared pattern, so the file reads back as the same data.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import replace
from pathlib import Path
from typing import IO

import numpy as np

from treecert.data.dates import DEFAULT_DATE_FORMAT, _format_date
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.data.table import _fmt_num

__all__ = ["arff_header", "arff_rows", "data_columns", "predictions_dataset", "write_arff"]


def _quote(s: str) -> str:
    """Quote like Weka's ``Utils.quote``, plus any character its tokenizer splits on. Quote
    characters inside are written as the octal escapes ``\\047`` and ``\\042`` (Weka's
    tokenizer, liac-arff and treecert read them back; liac-arff takes an attribute name to
    its last quote mark followed by a space, so ``\\'`` in a name or a nominal value would
    cut it short), a NUL as ``\\000`` (the readers refuse raw NUL bytes, the mark of a
    binary file), a lone surrogate (not UTF-8) as ``\\udcff``, which liac-arff and
    treecert read back as the same character, and a leading space as ``\\040`` (liac-arff
    would take a quote mark followed by a space for the end of a name)."""
    if s == "" or s == "?" or re.search(r"[\s\x00-\x20,'\"%{}\\\ud800-\udfff]", s):
        s = (s.replace("\\", "\\\\").replace("'", "\\047").replace('"', "\\042")
             .replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
             .replace("%", "\\%").replace("\x00", "\\000"))
        if _SURROGATE.search(s):  # not UTF-8: liac-arff's escape \uxxxx (lower-case hex)
            s = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", s)
        if s[:1].isspace():  # "' " would end an attribute's name for liac-arff
            s = (f"\\{ord(s[0]):03o}" if ord(s[0]) < 0o400 else f"\\u{ord(s[0]):04x}") + s[1:]
        return f"'{s}'"
    return s


_SURROGATE = re.compile("[\ud800-\udfff]")


def write_arff(dataset: Dataset, path_or_file: str | Path | IO[str]) -> None:
    """Write ``dataset`` as an ARFF file that Weka 3.8 reads, class attribute last.

    Parameters
    ----------
    dataset : Dataset
        The data; string attributes take their text from ``dataset.extra``.
    path_or_file : str, Path or text file
        Where to write; a path ending in ``.gz`` is compressed.

    Notes
    -----
    Numbers are written in their shortest exact form and labels are quoted like Weka's
    ``Utils.quote``, so :func:`~treecert.data.loading.load_dataset` reads back the same
    ``X``, ``y``, weights (written ``{w}`` when not 1) and schema.
    """
    text = arff_header(dataset.schema) + arff_rows(dataset)
    if isinstance(path_or_file, str | Path):
        target = Path(path_or_file)
        if target.name.endswith(".gz"):
            with gzip.open(target, "wt", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        else:
            target.write_text(text, encoding="utf-8", newline="\n")
    else:
        path_or_file.write(text)


def arff_header(schema: Schema, *, with_class: bool = True) -> str:
    """The ``@relation``, ``@attribute`` (class last) and ``@data`` lines; with
    :func:`arff_rows` of one or more datasets of this schema, a whole ARFF file (written
    in pieces by streamed ``predict``). ``with_class=False`` declares the attributes only
    (a layout of :func:`predictions_dataset`, whose attributes hold every column)."""
    lines = [f"@relation {_quote(schema.relation)}", ""]
    for a in (*schema.attributes, *([schema.class_attribute] if with_class else [])):
        if a.kind == "nominal":
            decl = "{" + ",".join(_quote(v) for v in a.values) + "}"
        elif a.kind == "date":
            decl = f"date {_quote(a.date_format or DEFAULT_DATE_FORMAT)}"
        else:
            decl = a.kind
        lines.append(f"@attribute {_quote(a.name)} {decl}")
    return "\n".join([*lines, "", "@data"]) + "\n"


def arff_rows(dataset: Dataset, *, with_class: bool = True) -> str:
    """The data lines of ``dataset``, one per row (class last unless ``with_class`` is
    False, ``{w}`` when not 1)."""
    schema = dataset.schema
    n = dataset.n_samples
    columns: list[list[str]] = []
    for j, a in enumerate(schema.attributes):
        x = dataset.X[:, j]
        if a.kind == "nominal":
            table = np.array([*(_quote(v) for v in a.values), "?"], dtype=object)
            columns.append(table[np.where(np.isnan(x), -1, x).astype(np.int64)].tolist())
        elif a.kind == "date":
            fmt = a.date_format or DEFAULT_DATE_FORMAT
            columns.append([_format_date(v, fmt) for v in x.tolist()])
            columns[-1] = [v if v == "?" else _quote(v) for v in columns[-1]]
        elif a.kind == "string":
            raw = dataset.extra.get(a.name, np.full(n, None, dtype=object))
            columns.append(["?" if v is None or v != v else _quote(str(v)) for v in raw])
        else:
            columns.append([_fmt_num(v) for v in x.tolist()])
    if with_class:
        class_table = np.array([*(_quote(v) for v in schema.classes), "?"], dtype=object)
        columns.append(class_table[np.where(dataset.y < 0, -1, dataset.y)].tolist())
    rows = [",".join(r) for r in zip(*columns, strict=True)] if columns else [""] * n
    for i in np.flatnonzero(dataset.weights != 1.0):
        rows[i] += ",{" + _fmt_num(float(dataset.weights[i])) + "}"
    return "".join(r + "\n" for r in rows)


def unique_names(names: list[str], taken: list[str]) -> list[str]:
    """``names`` with each one that is in ``taken`` (or repeats an earlier one) renamed
    ``<name>_1`` (``_2``, ... the first that is free): Weka refuses a file that declares a
    name twice, so a data attribute called like a prediction column (``certainty``,
    ``classification``, ``distribution_<label>``) is renamed; the predictions keep theirs."""
    used = set(taken) | set(names)  # a new name is none of the names given
    seen: set[str] = set()
    out = []
    for name in names:
        new, k = name, 0
        if name in taken or name in seen:
            while new in used:
                k += 1
                new = f"{name}_{k}"
            used.add(new)
        seen.add(name)
        out.append(new)
    return out


def data_columns(data: Dataset, id_column: str | None = None) -> list[Attribute]:
    """The data's columns in :func:`predictions_dataset`'s output, before any renaming:
    the id column, then the model's attributes with the class (when the file has it) back
    where it stood in the file (``Dataset.class_position``; last when unknown)."""
    attrs = list(data.schema.attributes)
    if data.has_class:
        at = len(attrs) if data.class_position is None else data.class_position
        attrs.insert(at, data.schema.class_attribute)
    return [*([Attribute(id_column, "string")] if id_column is not None else []), *attrs]


def predictions_dataset(data: Dataset, columns, id_column: str | None = None) -> Dataset:
    """``predict``'s rows as a Dataset for :func:`arff_rows` (``with_class=False``), laid
    out as Weka 3.6's ``AddClassification -classification -distribution`` writes them: the
    data's attributes with the class (when the file has it) where it stood in the file,
    then ``classification``, the predicted class (nominal, the model's labels), then
    ``distribution_<label>`` per class; treecert's other numeric columns (``certainty``,
    bounds, ...) follow, and an ``--id`` column comes first, as a string attribute. Without
    a class column in the file the layout is that of ``AddClassification
    -remove-old-class``. A data attribute that has the name of one of these columns is
    renamed ``<name>_1`` (:func:`unique_names`), so that every name is declared once.

    Parameters
    ----------
    data : Dataset
        The scored rows, aligned to the model's schema.
    columns : mapping of name to array (a dict or a pandas.DataFrame)
        Their predictions (:func:`treecert.evaluation.frames.prediction_columns`): ``row``,
        the id column, ``actual``, ``predicted``, ``p_<label>``, then numeric columns.
    id_column : str, optional
        An identifier column of ``columns``, written as a string attribute first.

    Returns
    -------
    Dataset
        Every output column is one of its schema's attributes (``classification`` holds
        the predicted class's code); its class attribute is ``classification`` and ``y``
        the same codes, for a caller that reads it as a classified dataset.
    """
    schema = data.schema
    classes = schema.classes
    attrs = data_columns(data, id_column)
    extra = {} if id_column is None else {id_column: np.asarray(columns[id_column],
                                                                dtype=object)}
    data_x = {a.name: x for a, x in zip(schema.attributes, data.X.T, strict=True)}
    data_x[schema.class_attribute.name] = np.where(data.y >= 0, data.y, np.nan).astype(
        np.float64)
    first = 0 if id_column is None else 1  # the id's text is in ``extra``
    xs = [np.full(data.n_samples, np.nan)] * first + [data_x[a.name] for a in attrs[first:]]
    n_data = len(attrs)  # the id, data and class columns; the predictions' follow
    code = {c: k for k, c in enumerate(classes)}
    y = np.array([code[p] for p in columns["predicted"]], dtype=np.int64)
    classification = Attribute("classification", "nominal", classes)
    attrs.append(classification)
    xs.append(y.astype(np.float64))
    skip = {"row", "actual", "predicted", id_column, *(f"p_{c}" for c in classes)}
    for c in classes:
        attrs.append(Attribute(f"distribution_{c}", "numeric"))
        xs.append(np.asarray(columns[f"p_{c}"], dtype=np.float64))
    for name in list(columns):
        values = np.asarray(columns[name])
        if name not in skip and values.dtype.kind in "fiub":
            attrs.append(Attribute(name, "numeric"))
            xs.append(values.astype(np.float64))
    new = unique_names([a.name for a in attrs[:n_data]], [a.name for a in attrs[n_data:]])
    attrs = [replace(a, name=name) for a, name in zip(attrs[:n_data], new, strict=True)] \
        + attrs[n_data:]
    if id_column is not None:  # the id's values under its (possibly new) name
        extra = {attrs[0].name: extra[id_column]}
    out = Schema(tuple(attrs), classification, relation=schema.relation)
    X = np.column_stack(xs)
    return Dataset(out, X, y, data.weights, extra, source=data.source)
