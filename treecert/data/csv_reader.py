"""Read CSV text into a :class:`~treecert.data.table._Table`, following Weka's ``CSVLoader``.

A header row names the columns; blank, ``?`` and ``NA`` cells are missing. Columns stay text
(or floats, where the reader already read numbers) until they meet a schema: then a column
is numeric where every known value is a number (:func:`_csv_numbers`), otherwise nominal
with values in order of first appearance (:mod:`treecert.data.loading`,
:mod:`treecert.data.alignment`). The csv module is the reference reader and reports a ragged
row with its line. Large texts go through ``pandas.read_csv`` (:func:`_csv_fast`, several
times faster per row); small ones (below :data:`PANDAS_MIN_CHARS`) through the csv module
with pandas' choice of numeric columns reproduced (:func:`_csv_small`), so that a short
``predict`` does not import pandas (0.45 CPU-s). Both give the same table; a text
on which that reproduction is not certain (quotes, blank-looking lines, spellings such as
``True`` or huge integers) goes to pandas whatever its size. ``tests/test_startup.py``
compares the engines. The chunked reader of :mod:`treecert.data.stream` parses each block
with the same code.
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from treecert.data.schema import Attribute
from treecert.data.table import _NAN, _check_text, _Column, _number, _Table
from treecert.errors import DataError

_CSV_MISSING = ("", "?", "NA")

PANDAS_MIN_CHARS = 1 << 16
"""Texts this long or longer are parsed by pandas (the engines agree; pandas is faster on
many rows, the csv module costs no import on few)."""

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,5})?|[+-]?(?i:inf|infinity)")
_LONG_EXPONENT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]{6,}")
_INT64 = (-(1 << 63), (1 << 63) - 1)

StrColumns = Callable[[list[str]], set[str]]


def csv_header(text: str, source: str = "<csv>") -> tuple[list[str], int]:
    """The header row of CSV ``text`` — its first row with a non-blank cell (blank rows
    before it are skipped) — and the number of lines up to its end."""
    reader = csv.reader(_lines(text), skipinitialspace=True)
    header: list[str] = []
    try:
        for header in reader:
            if any(h.strip() for h in header):
                break
    except csv.Error as exc:
        raise _csv_error(exc, source, reader.line_num) from None
    return header, reader.line_num


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` as ``io.StringIO(text)`` gives them (cut after each LF), one at
    a time: the header of a streamed block is read from its first line or two, and a
    StringIO would copy the whole block first (every block, for the header alone)."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start) + 1 or end
        yield text[start:stop]
        start = stop


def _csv_error(exc: csv.Error, source: str, line: int) -> DataError:
    """The csv module's complaint (e.g. a line break inside an unquoted field) as one line."""
    why = str(exc)
    if "new-line character" in why:  # its advice (universal-newline mode) is for programmers
        why = "a carriage return inside an unquoted value"
    return DataError(f"{source}, line {line}: not valid CSV ({why}).",
                     "Is it a text file of comma-separated values?")


def _parse_csv(text: str, source: str, str_columns: StrColumns, *, fast: bool | None = None,
               line_offset: int = 0) -> _Table:
    """Parse CSV text; ``str_columns(names)`` says which columns to keep as strings.

    ``fast`` chooses the engine: None by the text's size (:data:`PANDAS_MIN_CHARS`), True
    pandas, False the plain csv-module reader (for tests). ``line_offset`` is added to the
    line numbers of data-row errors: a chunk of a larger file (see :mod:`treecert.data.stream`)
    is its header plus rows that start that many lines further down.
    """
    _check_text(text, source, line_offset)
    header, header_lines = csv_header(text, source)
    names = [h.strip() for h in header]
    if not any(names):
        raise DataError(f"{source}: the file is empty.", "Add a header row naming the columns.")
    for j, name in enumerate(names):
        if not name:
            raise DataError(f"{source}, line {header_lines}: column {j + 1} has no name.",
                            "The first row must name every column.")
        if name in names[:j]:
            raise DataError(f"{source}, line {header_lines}: column {name!r} appears twice.",
                            "Column names must be unique.")
    keep = str_columns(names)
    columns = None
    if fast is None:
        if len(text) < PANDAS_MIN_CHARS:
            columns = _csv_small(text, source, names, header_lines, keep, line_offset)
        fast = columns is None  # large, or not certain to match pandas: pandas reads it
    if fast:
        columns = _csv_fast(text, names, header_lines, keep)
    if columns is None:
        columns = _csv_slow(text, source, names, line_offset)
    relation = "stdin" if source == "<stdin>" else Path(source).name
    for suffix in (".gz", ".GZ", ".csv", ".CSV"):
        relation = relation.removesuffix(suffix)
    # a column is its values, or (values, coded) when the reader factorised it
    pairs = [col if isinstance(col, tuple) else (col, None) for col in columns]
    n_rows = len(pairs[0][0]) if pairs else 0
    return _Table(
        source, relation,
        [_Column(Attribute(name, "string"), values, coded)
         for name, (values, coded) in zip(names, pairs, strict=True)],
        np.ones(n_rows, dtype=np.float64), is_csv=True,
    )


def _strip_missing(raw: Iterable[object], kind: str | None = None) -> np.ndarray:
    """Object array of stripped strings, None where the value is missing (blank, ?, NA).
    ``kind``: pandas' ``infer_dtype`` of ``raw`` when the caller has it already."""
    if kind is None and isinstance(raw, np.ndarray):
        import pandas as pd

        kind = pd.api.types.infer_dtype(raw, skipna=True)
    if kind == "string":
        import pandas as pd

        return _strip_coded(pd.Series(raw, dtype=object))[0]
    stripped = ("" if v is None else str(v).strip() for v in raw)
    return np.array([None if v in _CSV_MISSING else v for v in stripped], dtype=object)


def _strip_coded(column) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """:func:`_strip_missing` of a pandas column of strings and NaN, stripping each distinct
    value once (most of reading a label column), with the factorisation it came from
    (:attr:`~treecert.data.table._Column.coded`): (values, (codes, table))."""
    import pandas as pd

    codes, uniques = pd.factorize(column, use_na_sentinel=True)  # NaN: -1, the last entry
    table = np.array([*(u.strip() for u in uniques), None], dtype=object)
    table[[v in _CSV_MISSING for v in table[:-1]] + [True]] = None
    return table[codes], (codes, table)


def _csv_fast(text: str, names: list[str], skip: int, keep: set[str]) -> list | None:
    """Parse with pandas; None when a short row might hide among the NA-filled cells.

    pandas pads a short row silently, so the commas outside quotes are counted: with no row
    too long (pandas raises on those), every row is complete exactly when the count is
    ``(k - 1)`` per row — unless no row can have been padded (:func:`_may_be_padded`).
    A text column (``keep``) comes back with its factorisation (``(values, coded)``).
    """
    import pandas as pd

    k = len(names)
    dtype = {j: object for j, name in enumerate(names) if name in keep}
    try:
        # A row longer than the header makes pandas warn and drop data: take that as "not
        # plain", and let the exact reader report the line.
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(  # bytes: pandas would encode a StringIO's text itself
                io.BytesIO(text.encode()), header=None, names=list(range(k)), skiprows=skip,
                index_col=False, skipinitialspace=True, skip_blank_lines=True,
                keep_default_na=False, na_values=list(_CSV_MISSING), dtype=dtype,
                engine="c",
            )
    except (ValueError, pd.errors.ParserError, pd.errors.ParserWarning):
        return None
    out: list = []
    for j in range(k):
        col = df[j]
        if names[j] in keep:  # read as object: strings, and NaN where missing
            out.append(_strip_coded(col))
            continue
        if col.dtype.kind in "fiu":
            out.append(col.to_numpy(np.float64))
            continue
        raw = col.to_numpy(dtype=object, na_value=None)
        kind = pd.api.types.infer_dtype(raw, skipna=True) if col.dtype == object else None
        if col.dtype.kind == "b" or (
                kind is not None and kind not in ("string", "empty")
                and any(isinstance(v, bool | np.bool_) for v in raw)):
            return None  # pandas read True/False as booleans; keep the spelling
        out.append(_strip_missing(raw, kind))
    if _may_be_padded(text, out[-1]):
        parts = text.split("\n", skip)
        body = parts[skip] if len(parts) > skip else ""
        if '"' in body:
            body = re.sub(r'"[^"]*"', "", body)
        if body.count(",") != (k - 1) * len(df):
            return None
    return out


def _may_be_padded(text: str, last) -> bool:
    """Whether a short row may hide in what pandas read: unless the text has no quote and
    the last column (``_csv_fast``'s, values or (values, coded)) no missing cell.

    pandas fills a short row's missing cells at its end with NaN, so a row was short only
    if the last column has a missing cell. Without quotes, that settles it, and the comma
    count (0.1 CPU-s per million rows) is spared; with quotes, the count decides as before.
    """
    if '"' in text:
        return True
    if isinstance(last, tuple):
        return bool((last[1][0] < 0).any())
    if last.dtype == np.float64:
        return bool(np.isnan(last).any())
    return any(v is None for v in last.tolist())


def _csv_slow(text: str, source: str, names: list[str], line_offset: int = 0
              ) -> list[np.ndarray]:
    """The reference reader (the csv module); reports a ragged row with its line."""
    rows = _csv_rows(text, source, names, line_offset)
    if not rows:
        return [np.empty(0, dtype=object) for _ in names]
    return [_strip_missing(col) for col in zip(*rows, strict=True)]


def _csv_small(text: str, source: str, names: list[str], skip: int, keep: set[str],
               line_offset: int = 0) -> list[np.ndarray] | None:
    """The csv-module reader, with the columns ``pandas.read_csv`` (:func:`_csv_fast`) would
    read as numbers made float64 as pandas makes them; None where that is not certain.

    pandas reads a column not in ``keep`` as numbers when every cell is missing (exactly
    '', '?' or 'NA') or a number: as int64 when all are integers (so '-0' is 0.0, not
    -0.0), else by a correctly rounded float parser (as ``float``). The text is left to
    pandas (None) when it holds a quote, a line of blanks or a ragged row (pandas' row and
    comma checks differ: it reads a long row of blank cells next to a short row, whose
    commas add up, that the csv module refuses), or a column not in ``keep`` holds a cell
    with trailing blanks, a ``True``/``False`` spelling (pandas' booleans send the text to
    :func:`_csv_slow`), an integer beyond int64 or a long number (where the parsers might
    part).
    """
    body = text.split("\n", skip)[skip] if text.count("\n") >= skip else ""
    lines = [line for line in body.replace("\r\n", "\n").split("\n") if line]
    if '"' in body or "\r" in "".join(lines) or any(not line.strip() for line in lines):
        return None
    try:
        rows = _csv_rows(text, source, names, line_offset)
    except DataError:  # pandas may still read it (it pads some ragged rows): its call
        return None
    if len(rows) != len(lines):  # a row of blank cells dropped: pandas' count differs
        return None
    if not rows:
        return [np.empty(0, dtype=object) for _ in names]
    out = []
    for name, cells in zip(names, zip(*rows, strict=True), strict=True):
        if name not in keep:
            numbers = _pandas_numbers(cells)
            if numbers is NotImplemented:
                return None
            if numbers is not None:
                out.append(numbers)
                continue
        out.append(_strip_missing(cells))
    return out


def _pandas_numbers(cells: tuple[str, ...]):
    """The float64 column pandas reads ``cells`` (a column as the csv module split it) as,
    None if it reads them as text, NotImplemented if not certain (see :func:`_csv_small`)."""
    known = [c for c in cells if c not in _CSV_MISSING]
    for c in known:
        if (c != c.strip() or c.lower() in ("true", "false") or len(c) > 40
                or _LONG_EXPONENT.fullmatch(c)):
            return NotImplemented
    ints = [int(c) for c in known if _INT.fullmatch(c)]
    if ints and not _INT64[0] <= min(ints) <= max(ints) <= _INT64[1]:
        return NotImplemented  # pandas' int64 parse overflows, whatever the other cells
    if not all(_FLOAT.fullmatch(c) for c in known):
        return None
    if len(ints) == len(known):
        return np.array([_NAN if c in _CSV_MISSING else float(int(c)) for c in cells],
                        dtype=np.float64)
    return np.array([_NAN if c in _CSV_MISSING else float(c) for c in cells],
                    dtype=np.float64)


def _csv_rows(text: str, source: str, names: list[str], line_offset: int = 0
              ) -> list[list[str]]:
    """The data rows of CSV ``text`` as the csv module splits them (blank rows dropped);
    a row of another length than the header is a DataError naming its line."""
    reader = csv.reader(io.StringIO(text), skipinitialspace=True)
    rows = []
    try:
        for row in reader:
            if any(v.strip() for v in row):
                break  # the header
        for row in reader:
            if len(row) != len(names):
                if not any(v.strip() for v in row):
                    continue
                raise DataError(
                    f"{source}, line {reader.line_num + line_offset}: expected {len(names)} "
                    f"fields (as in the header), found {len(row)}.",
                    "Every row needs one field per column; quote values that contain commas.",
                )
            rows.append(row)
    except csv.Error as exc:
        raise _csv_error(exc, source, reader.line_num + line_offset) from None
    return rows


def _csv_numbers(raw: np.ndarray) -> np.ndarray | None:
    """Float values of a CSV column if every known value is a number, else None."""
    if raw.dtype == np.float64:
        return raw
    values = raw.tolist()
    if None not in values and all(_INT.fullmatch(v) for v in values):
        # pandas.to_numeric's reading, kept: integers (no missing value) as int64 then
        # floats, so '-0' is 0.0 (+ 0.0 does that); float() reads any number of digits,
        # correctly rounded, and one beyond float range as infinity, as in other columns
        return np.array([float(v) for v in values], dtype=np.float64) + 0.0
    numbers = np.full(len(values), _NAN)
    for i, v in enumerate(values):
        if v is None:
            continue
        try:
            numbers[i] = _number(v)
        except ValueError:
            return None
        if math.isnan(numbers[i]):  # 'nan' is a label here, not a number
            return None
    return numbers
