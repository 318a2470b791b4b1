"""Read ARFF and CSV files into a :class:`~treecert.schema.Dataset`, and write ARFF.

The ARFF reader follows the token rules of Weka 3.8's ``ArffLoader`` (commas and white
space separate values, ``'`` and ``"`` quote with backslash escapes, ``%`` starts a comment,
sparse rows ``{i v, ...}``, instance weights ``{w}``), so a file Weka reads gives the same
instances here. Plain dense data sections, which is what nearly every large file has, are
handed to ``pandas.read_csv``; anything that parser could read differently from Weka
(sparse rows, weights, escapes, short rows, ...) falls back to an exact tokenizer, which is
also the one that reports errors with line numbers. CSV files follow Weka's ``CSVLoader``:
a header row, numeric columns where every known value is a number, other columns nominal
with values in order of first appearance.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import re
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from treecert.data.schema import Attribute, Dataset, Schema
from treecert.errors import ConfigError, DataError, SchemaMismatchError

__all__ = [
    "DEFAULT_DATE_FORMAT",
    "check_trainable",
    "load_dataset",
    "load_for_schema",
    "write_arff",
]

DEFAULT_DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss"
"""Weka's date format when an ARFF ``date`` attribute declares none."""

_CSV_MISSING = ("", "?", "NA")
_NAN = float("nan")


# --------------------------------------------------------------------------- tables
@dataclass
class _Column:
    """One column as read, before it is fitted to a schema.

    ARFF columns are typed by their declaration (``values``: float64 numbers, date seconds
    or nominal codes; object for strings). CSV columns carry ``kind="string"`` and are
    either float64 (every value already parsed as a number) or object arrays of stripped
    strings with ``None`` for missing; the kind is decided later.
    """

    attr: Attribute
    values: np.ndarray


@dataclass
class _Table:
    source: str
    relation: str
    columns: list[_Column]
    weights: np.ndarray
    is_csv: bool

    @property
    def names(self) -> list[str]:
        return [c.attr.name for c in self.columns]

    def column(self, name: str) -> _Column:
        return self.columns[self.names.index(name)]


def _listing(names: Sequence[str], limit: int = 25) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def _fmt_num(v: float) -> str:
    """A number as Weka's CSVLoader would label it: ``1`` rather than ``1.0``."""
    if math.isnan(v):
        return "?"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


# --------------------------------------------------------------------------- input
def data_format(path: str | Path, fmt: str | None = None) -> str:
    """``arff`` or ``csv``: ``fmt`` if given, else from the file name (``.gz`` allowed);
    standard input (``-``) is CSV."""
    if fmt is not None:
        fmt = fmt.lower()
        if fmt not in ("arff", "csv"):
            raise ConfigError(f"unknown data format {fmt!r}; use 'arff' or 'csv'.")
        return fmt
    if str(path) == "-":
        return "csv"
    stem = Path(path).name.lower().removesuffix(".gz")
    if stem.endswith(".arff"):
        return "arff"
    if stem.endswith(".csv"):
        return "csv"
    raise DataError(
        f"{path}: cannot tell the format from the file name; "
        "expected .arff, .csv, .arff.gz or .csv.gz.",
        "Rename the file or give the format explicitly.",
    )


def _read_input(path: str | Path, fmt: str | None) -> tuple[str, str, str]:
    """Return ``(text, source, fmt)``; ``source`` is the name used in messages."""
    fmt = data_format(path, fmt)
    if str(path) == "-":
        stream = sys.stdin
        raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()
        return _decode(raw), "<stdin>", fmt
    source = str(path)
    gz = Path(path).name.lower().endswith(".gz")
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise DataError(f"{source}: no such file.", "Check the path.") from None
    except OSError as exc:
        raise DataError(f"{source}: cannot read the file: {exc.strerror}.") from None
    if gz:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataError(f"{source}: not a valid gzip file ({exc}).") from None
    return _decode(raw), source, fmt


def _decode(raw: bytes) -> str:
    # Weka reads with the platform charset, which is UTF-8 almost everywhere; old UCI files
    # in Latin-1 still load instead of failing on one accented byte.
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


StrColumns = Callable[[list[str]], set[str]]


def _read_table(path: str | Path, fmt: str | None, str_columns: StrColumns) -> _Table:
    text, source, fmt = _read_input(path, fmt)
    if not text.strip():
        raise DataError(
            f"{source}: the file is empty.",
            "A CSV file needs a header row and data rows; an ARFF file a header and @data.",
        )
    if fmt == "arff":
        table = _parse_arff(text, source)
    else:
        table = _parse_csv(text, source, str_columns)
    if table.weights.size == 0:
        where = "after '@data'" if fmt == "arff" else "after the header row"
        raise DataError(f"{source}: no data rows {where}.", "Add at least one instance.")
    return table


# --------------------------------------------------------------------------- ARFF tokens
# Weka's StreamTokenizer: chars 0..32 and ',' separate, '{' '}' are tokens of their own,
# quotes may use backslash escapes, '%' starts a comment (outside quotes). Every character
# that is not a separator belongs to some alternative, so findall() skips separators only;
# a lone quote is the token of an unclosed quoted value.
_TOKENS_RE = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[{}]|[^\x00-\x20,'"%{}]+|%.*|['"]""",
    re.DOTALL,
)
_SPECIAL_RE = re.compile(r"['\"%{}]")
_SEP_RE = re.compile(r"[\x00-\x20,]+")
_ESC_RE = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class _Brace:
    def __init__(self, char: str) -> None:
        self.char = char

    def __repr__(self) -> str:
        return self.char


_OPEN = _Brace("{")
_CLOSE = _Brace("}")

Token = str | _Brace | None  # None is an unquoted '?'

_WORDS: dict[str, Token] = {"{": _OPEN, "}": _CLOSE, "?": None}
_WORDS_HEADER: dict[str, Token] = {"{": _OPEN, "}": _CLOSE}


def _unescape_one(m: re.Match[str]) -> str:
    s = m.group(1)
    if s[0] in "01234567":
        if len(s) == 3 and s[0] > "3":  # Java reads at most \377
            return chr(int(s[:2], 8)) + s[2]
        return chr(int(s, 8))
    return _ESCAPES.get(s, s)


def _tokenize(line: str, where: str, *, missing: bool = True) -> list[Token]:
    """Split one line like Weka does; ``missing`` turns an unquoted ``?`` into None."""
    words = _WORDS if missing else _WORDS_HEADER
    if _SPECIAL_RE.search(line) is None:
        return [words.get(t, t) for t in _SEP_RE.split(line) if t]
    toks = _TOKENS_RE.findall(line)
    if "'" in toks or '"' in toks:
        raise DataError(
            f"{where}: a quoted value is not closed.",
            "Close the quote; a quote inside a value is written \\' or \\\".",
        )
    if "%" not in line and "\\" not in line:
        return [t[1:-1] if t[0] in "'\"" else words.get(t, t) for t in toks]
    out: list[Token] = []
    for t in toks:
        if t[0] == "%":
            break
        if t[0] in "'\"":
            t = t[1:-1]
            out.append(_ESC_RE.sub(_unescape_one, t) if "\\" in t else t)
        else:
            out.append(words.get(t, t))
    return out


# --------------------------------------------------------------------------- ARFF header
def _parse_arff(text: str, source: str, *, fast: bool = True) -> _Table:
    """Parse a whole ARFF text; ``fast=False`` forces the exact tokenizer (for tests)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    relation, attrs, offset, data_line = _parse_arff_header(text, source)
    data = text[offset:]
    parsed = _arff_rows_fast(data, attrs) if fast else None
    if parsed is None:
        parsed = _arff_rows_slow(data, data_line + 1, attrs, source)
    values, weights = parsed
    columns = [_Column(a, v) for a, v in zip(attrs, values, strict=True)]
    return _Table(source, relation, columns, weights, is_csv=False)


def _parse_arff_header(text: str, source: str) -> tuple[str, list[Attribute], int, int]:
    """Return the relation, the attributes, the offset after ``@data`` and its line."""
    relation: str | None = None
    attrs: list[Attribute] = []
    pos, lineno, size = 0, 0, len(text)
    while pos < size:
        end = text.find("\n", pos)
        end = size if end < 0 else end
        line, pos = text[pos:end], end + 1
        lineno += 1
        where = f"{source}, line {lineno}"
        toks = _tokenize(line, where, missing=False)
        if not toks:
            continue
        keyword = toks[0].lower() if isinstance(toks[0], str) else ""
        if relation is None:
            if keyword != "@relation":
                raise DataError(
                    f"{where}: expected '@relation NAME', found {line.strip()[:40]!r}.",
                    "An ARFF file starts with @relation, then @attribute lines, then @data.",
                )
            if len(toks) < 2 or not isinstance(toks[1], str):
                raise DataError(f"{where}: '@relation' needs a name.")
            relation = toks[1]
        elif keyword == "@attribute":
            attr = _parse_attribute(toks, where)
            if any(a.name == attr.name for a in attrs):
                raise DataError(
                    f"{where}: attribute {attr.name!r} is declared twice.",
                    "Attribute names must be unique.",
                )
            attrs.append(attr)
        elif keyword == "@data":
            if not attrs:
                raise DataError(f"{where}: no @attribute lines before '@data'.")
            return relation, attrs, min(pos, size), lineno
        else:
            raise DataError(
                f"{where}: expected '@attribute' or '@data', found {line.strip()[:40]!r}.",
                "Comment lines start with %.",
            )
    raise DataError(
        f"{source}, line {lineno}: the file ends without an '@data' line.",
        "The @attribute lines must be followed by a line '@data' and the data rows.",
    )


def _parse_attribute(toks: list[Token], where: str) -> Attribute:
    if len(toks) < 3 or not isinstance(toks[1], str):
        raise DataError(f"{where}: '@attribute' needs a name and a type.")
    name, kind = toks[1], toks[2]
    if kind is _OPEN:
        values: list[str] = []
        for tok in toks[3:]:
            if tok is _CLOSE:
                break
            if not isinstance(tok, str):
                raise DataError(f"{where}: unexpected {tok!r} in the values of {name!r}.")
            if tok in values:
                raise DataError(f"{where}: value {tok!r} is declared twice for {name!r}.")
            values.append(tok)
        else:
            raise DataError(
                f"{where}: the values of nominal attribute {name!r} are not closed with '}}'.",
                "A nominal declaration must fit on one line: {a, b, 'c d'}.",
            )
        return Attribute(name, "nominal", tuple(values))
    type_name = kind.lower() if isinstance(kind, str) else ""
    if type_name in ("numeric", "real", "integer"):
        return Attribute(name, "numeric")
    if type_name == "string":
        return Attribute(name, "string")
    if type_name == "date":
        fmt = toks[3] if len(toks) > 3 and isinstance(toks[3], str) else DEFAULT_DATE_FORMAT
        try:
            _java_date_parts(fmt)
        except ValueError as exc:
            raise DataError(f"{where}: date format {fmt!r} of {name!r}: {exc}.") from None
        return Attribute(name, "date", date_format=fmt)
    if type_name == "relational":
        raise DataError(
            f"{where}: relational attribute {name!r} is not supported; "
            "treecert reads flat tables.",
            "Flatten the bags into ordinary attributes first.",
        )
    raise DataError(
        f"{where}: unknown type {kind!r} for attribute {name!r}.",
        "Use numeric, integer, real, string, date [format] or {value, ...}.",
    )


# --------------------------------------------------------------------------- ARFF data
def _arff_rows_fast(data: str, attrs: list[Attribute]) -> tuple[list, np.ndarray] | None:
    """Parse a plain dense data section with pandas, or return None if it may not be one.

    pandas and Weka differ on sparse rows, weights, escapes, a quoted ``'?'``, empty fields
    and short rows; each is either excluded up front or detected afterwards (a short row
    leaves ``''`` in the last column, read without NA conversion), and then the exact
    tokenizer takes over.
    """
    if "{" in data or "\\" in data or "\x00" in data:
        return None
    has_single, has_double = "'" in data, '"' in data
    if has_single and has_double:
        return None
    quote = '"' if has_double else "'"
    if (has_single or has_double) and f"{quote}?{quote}" in data:
        return None
    if any("" in a.values or "?" in a.values for a in attrs):
        return None
    out = _read_dense(data, attrs, quote, numbers_as_text=False)
    if out is None:
        return None
    # pandas reads TRUE/false as 1/0 even in a float column. Only a column holding 0 or 1
    # can have been fooled, and only if such a word occurs; then numbers are read as text.
    suspects = any(a.kind == "numeric" and ((x == 0) | (x == 1)).any()
                   for a, x in zip(attrs, out[0], strict=True))
    if suspects:
        lowered = data.lower()
        if "true" in lowered or "false" in lowered:
            return _read_dense(data, attrs, quote, numbers_as_text=True)
    return out


def _read_dense(
    data: str, attrs: list[Attribute], quote: str, *, numbers_as_text: bool
) -> tuple[list, np.ndarray] | None:
    last = len(attrs) - 1
    dtype: dict[int, object] = {}
    na_values: dict[int, list[str]] = {}
    for j, a in enumerate(attrs):
        if a.kind == "nominal":
            # Explicit categories keep labels as text ('1', 'TRUE' stay strings); '?' is a
            # category of its own so an undeclared value or a short row's '' reads as NaN.
            dtype[j], na_values[j] = pd.CategoricalDtype([*a.values, "?"]), []
        elif a.kind == "numeric":
            dtype[j] = object if numbers_as_text else np.float64
            na_values[j] = ["?"]
        else:
            dtype[j], na_values[j] = object, [] if j == last else ["?"]
    try:
        with warnings.catch_warnings():
            # pandas warns (and will raise) on values outside the categories; both mean
            # "not a plain file" here.
            warnings.simplefilter("ignore")
            df = pd.read_csv(
                io.StringIO(data), sep=",", header=None, names=list(range(len(attrs))),
                index_col=False, quotechar=quote, doublequote=False, skipinitialspace=True,
                comment="%", skip_blank_lines=True, keep_default_na=False,
                na_values=na_values, dtype=dtype, engine="c",
            )
    except (ValueError, TypeError, pd.errors.ParserError):
        return None
    out: list[np.ndarray] = []
    for j, a in enumerate(attrs):
        col = df[j]
        if a.kind == "numeric":
            if col.dtype == object:
                numbers = pd.to_numeric(col, errors="coerce").to_numpy(np.float64)
                if (np.isnan(numbers) & col.notna().to_numpy()).any():
                    return None
                out.append(numbers)
            elif col.dtype == np.float64:
                out.append(col.to_numpy(np.float64))
            else:
                return None
        elif a.kind == "nominal":
            codes = col.cat.codes.to_numpy()
            if (codes < 0).any():  # undeclared, or '' from a short row
                return None
            x = codes.astype(np.float64)
            x[codes == len(a.values)] = np.nan  # '?'
            out.append(x)
        else:
            raw = col.to_numpy(dtype=object, na_value=None)
            if any(v == "" for v in raw):
                return None
            if j == last:
                raw = np.array([None if v == "?" else v for v in raw], dtype=object)
            if a.kind == "date":
                parsed, bad = _parse_dates(raw, a.date_format or DEFAULT_DATE_FORMAT)
                if bad >= 0:
                    return None
                raw = parsed
            out.append(raw)
    return out, np.ones(len(df), dtype=np.float64)


def _arff_rows_slow(
    data: str, first_line: int, attrs: list[Attribute], source: str
) -> tuple[list, np.ndarray]:
    """Tokenize every data line exactly as Weka does; errors name the line.

    Dense rows are kept as token lists; sparse rows as (row, column, token) triples, so a
    sparse file costs time per given value, not per cell.
    """
    n = len(attrs)
    dense: list[list[Token]] = []
    dense_rows: list[int] = []
    sparse: tuple[list[int], list[int], list[Token]] = ([], [], [])
    weights: list[float] = []
    lines: list[int] = []
    for i, line in enumerate(data.split("\n")):
        if not line:
            continue
        where = f"{source}, line {first_line + i}"
        toks = _tokenize(line, where)
        if not toks:
            continue
        if toks[0] is _OPEN:
            k = _sparse_row(toks, n, where, len(weights), sparse)
        else:
            row, k = toks[:n], n
            if _OPEN in row or _CLOSE in row:
                row = row[: next(j for j, t in enumerate(row) if isinstance(t, _Brace))]
            if len(row) < n:
                raise DataError(
                    f"{where}: expected {n} values (one per @attribute), found {len(row)}.",
                    "Write ? for a missing value.",
                )
            dense.append(row)
            dense_rows.append(len(weights))
        weights.append(_row_weight(toks[k:], n, where))
        lines.append(first_line + i)
    size = len(weights)
    line_of = np.array(lines, dtype=np.int64)
    dense_cols: list[Sequence[Token]] = list(zip(*dense, strict=True)) if dense else [()] * n
    sp_rows, sp_cols = np.array(sparse[0], dtype=np.int64), np.array(sparse[1], dtype=np.int64)
    sp_toks = np.empty(len(sparse[2]), dtype=object)
    sp_toks[:] = sparse[2]
    order = np.argsort(sp_cols, kind="stable")
    bounds = np.searchsorted(sp_cols[order], np.arange(n + 1))
    values = []
    for j, a in enumerate(attrs):
        picked = order[bounds[j]:bounds[j + 1]]
        rows = np.concatenate([np.array(dense_rows, dtype=np.int64), sp_rows[picked]])
        toks_j = [*dense_cols[j], *sp_toks[picked].tolist()]
        if dense and picked.size:  # mixed dense and sparse rows: report the first line
            first = np.argsort(rows, kind="stable")
            rows, toks_j = rows[first], [toks_j[t] for t in first]
        given = _convert(a, toks_j, line_of[rows], source)
        if a.kind == "string":
            column = np.full(size, None, dtype=object)  # Weka: index 0 of the string table
        else:  # an omitted value is 0: the number 0, the epoch, the first nominal value
            column = np.full(size, 0.0 if a.kind != "nominal" or a.values else np.nan)
        column[rows] = given
        values.append(column)
    return values, np.array(weights, dtype=np.float64)


def _sparse_row(
    toks: list[Token], n: int, where: str, row: int,
    out: tuple[list[int], list[int], list[Token]],
) -> int:
    """Append a sparse row's ``{index value, ...}`` entries to ``out``; return tokens used."""
    if _CLOSE in toks:  # the usual well-formed row, checked with whole-list operations
        close = toks.index(_CLOSE)
        indices, values = toks[1:close:2], toks[2:close:2]
        try:
            digits = "".join(indices)  # type: ignore[arg-type]
            idx = [int(t) for t in indices]  # type: ignore[arg-type]
        except (TypeError, ValueError):  # not plain indices: the checked path says why
            idx = []
        if (
            idx and len(indices) == len(values) and digits.isascii() and digits.isdigit()
            and idx[-1] < n and all(a < b for a, b in pairwise(idx))
            and _OPEN not in values
        ):
            out[0].extend([row] * len(idx))
            out[1].extend(idx)
            out[2].extend(values)
            return close + 1
    # Anything else goes token by token, to name exactly what is wrong.
    i, previous = 1, -1
    while True:
        if i >= len(toks):
            raise DataError(f"{where}: the sparse row is not closed with '}}'.")
        tok = toks[i]
        if tok is _CLOSE:
            return i + 1
        if not (isinstance(tok, str) and tok.isascii() and tok.isdigit()):
            raise DataError(
                f"{where}: expected an attribute index in the sparse row, found {tok!r}.",
                "Sparse rows are written {index value, ...} with 0-based indices.",
            )
        index = int(tok)
        if index >= n:
            raise DataError(
                f"{where}: sparse index {index} is out of range; "
                f"there are {n} attributes (0..{n - 1}).",
            )
        if index <= previous:
            raise DataError(f"{where}: sparse indices must increase; {index} follows "
                            f"{previous}.")
        if i + 1 >= len(toks) or isinstance(toks[i + 1], _Brace):
            raise DataError(f"{where}: sparse index {index} has no value.")
        out[0].append(row)
        out[1].append(index)
        out[2].append(toks[i + 1])
        previous, i = index, i + 2


def _row_weight(rest: list[Token], n: int, where: str) -> float:
    """The instance weight written ``{w}`` after a row's values (Weka 3.8), else 1."""
    if not rest:
        return 1.0
    if rest[0] is _OPEN:
        if len(rest) == 3 and isinstance(rest[1], str) and rest[2] is _CLOSE:
            try:
                weight = float(rest[1])
            except ValueError:
                weight = _NAN
            if not (weight >= 0 and math.isfinite(weight)):
                raise DataError(
                    f"{where}: instance weight {rest[1]!r} is not a non-negative number."
                )
            return weight
        raise DataError(
            f"{where}: malformed instance weight.",
            "Write the weight in braces after the last value: ..., {2.5}",
        )
    extra = sum(1 for t in rest if not isinstance(t, _Brace))
    raise DataError(
        f"{where}: expected {n} values (one per @attribute), found {n + extra}.",
        "Quote values that contain spaces or commas.",
    )


def _convert(attr: Attribute, col: Sequence[Token], lines: np.ndarray, source: str):
    """Turn one column of tokens into its typed array, naming the line of a bad value."""
    if attr.kind == "string":
        out = np.empty(len(col), dtype=object)
        out[:] = col
        return out
    if attr.kind == "nominal":
        lookup = {v: float(k) for k, v in enumerate(attr.values)}
        codes = np.array([_NAN if t is None else lookup.get(t, -1.0)  # type: ignore[arg-type]
                          for t in col], dtype=np.float64)
        bad = np.flatnonzero(codes < 0)
        if bad.size:
            i = int(bad[0])
            raise DataError(
                f"{source}, line {lines[i]}: value {col[i]!r} is not declared for nominal "
                f"attribute {attr.name!r}.",
                f"Declared values: {_listing(attr.values)}. Add it to the @attribute line "
                "or correct the value.",
            )
        return codes
    if attr.kind == "date":
        strings = np.empty(len(col), dtype=object)
        strings[:] = col
        parsed, bad_i = _parse_dates(strings, attr.date_format or DEFAULT_DATE_FORMAT)
        if bad_i >= 0:
            raise DataError(
                f"{source}, line {lines[bad_i]}: {strings[bad_i]!r} is not a date in the "
                f"format {attr.date_format!r} of attribute {attr.name!r}.",
                "Fix the value or the format in the @attribute line.",
            )
        return parsed
    tokens = pd.Series(col, dtype=object)
    numbers = np.array(pd.to_numeric(tokens, errors="coerce"), dtype=np.float64)
    for i in np.flatnonzero(np.isnan(numbers) & tokens.notna().to_numpy()):
        token = str(col[i])
        try:  # forms pandas leaves out but Java reads: 'NaN', 'Infinity', ...
            numbers[i] = _number(token)
        except ValueError:
            raise DataError(
                f"{source}, line {lines[i]}: {token!r} is not a number "
                f"(attribute {attr.name!r} is numeric).",
                "Write ? for a missing value, or declare the attribute nominal.",
            ) from None
    return numbers


# --------------------------------------------------------------------------- dates
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _java_date_parts(pattern: str) -> list[tuple[str, int | str]]:
    """Split a Java ``SimpleDateFormat`` pattern into ``(letter, count)``/``("", text)``."""
    parts: list[tuple[str, int | str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            if pattern.startswith("''", i):
                parts.append(("", "'"))
                i += 2
                continue
            text, i = [], i + 1
            while True:
                if i >= len(pattern):
                    raise ValueError("unterminated quote")
                if pattern.startswith("''", i):
                    text.append("'")
                    i += 2
                elif pattern[i] == "'":
                    i += 1
                    break
                else:
                    text.append(pattern[i])
                    i += 1
            parts.append(("", "".join(text)))
        elif c.isascii() and c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            if c not in "yMdHkhKmsSaEDzZX":
                raise ValueError(f"pattern letter {c!r} is not supported")
            parts.append((c, j - i))
            i = j
        else:
            parts.append(("", c))
            i += 1
    return parts


def _strptime_format(pattern: str) -> str:
    codes = {"d": "%d", "H": "%H", "k": "%H", "h": "%I", "K": "%I", "m": "%M", "s": "%S",
             "S": "%f", "a": "%p", "D": "%j", "z": "%Z", "Z": "%z", "X": "%z"}
    out = []
    for letter, arg in _java_date_parts(pattern):
        if not letter:
            out.append(str(arg).replace("%", "%%"))
        elif letter == "y":
            out.append("%y" if arg == 2 else "%Y")
        elif letter == "M":
            out.append("%m" if int(arg) <= 2 else "%b" if arg == 3 else "%B")
        elif letter == "E":
            out.append("%a" if int(arg) <= 3 else "%A")
        else:
            out.append(codes[letter])
    return "".join(out)


def _parse_dates(strings: np.ndarray, pattern: str) -> tuple[np.ndarray, int]:
    """Seconds since the epoch (UTC) for each string; also the first bad index, or -1.

    Weka parses with the JVM's time zone; treecert uses UTC so a file gives the same
    numbers on every machine.
    """
    fmt = _strptime_format(pattern)
    series = pd.Series(strings, dtype=object)
    known = series.notna().to_numpy()
    stamps = pd.to_datetime(series, format=fmt, utc=True, errors="coerce")
    # Whole seconds and the fraction separately: nanosecond counts beyond 2**53 are not
    # exact as floats, and dates must round-trip through write_arff exactly.
    nanos = (stamps - pd.Timestamp(0, tz="UTC")).to_numpy(dtype="timedelta64[ns]")
    missing = np.isnat(nanos)
    ns = np.where(missing, 0, nanos.astype(np.int64))
    seconds = (ns // 10**9).astype(np.float64) + (ns % 10**9) / 1e9
    seconds[missing] = np.nan
    for i in np.flatnonzero(known & np.isnan(seconds)):
        try:  # outside pandas' nanosecond range, or a format pandas rejects
            stamp = datetime.strptime(strings[i], fmt)
        except ValueError:
            return seconds, int(i)
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        seconds[i] = stamp.timestamp()
    return seconds, -1


def _format_date(seconds: float, pattern: str) -> str:
    if math.isnan(seconds):
        return "?"
    t = datetime.fromtimestamp(seconds, tz=UTC)
    out = []
    for letter, arg in _java_date_parts(pattern):
        n = int(arg) if letter else 0
        if not letter:
            out.append(str(arg))
        elif letter == "y":
            out.append(f"{t.year % 100:02d}" if n == 2 else f"{t.year:0{n}d}")
        elif letter == "M":
            out.append(f"{t.month:0{n}d}" if n <= 2 else _MONTHS[t.month - 1][: 3 if n == 3
                                                                                else None])
        elif letter == "E":
            out.append(_DAYS[t.weekday()][: 3 if n <= 3 else None])
        else:
            value = {"d": t.day, "H": t.hour, "k": t.hour or 24, "h": (t.hour % 12) or 12,
                     "K": t.hour % 12, "m": t.minute, "s": t.second,
                     "S": t.microsecond // 1000, "D": t.timetuple().tm_yday}.get(letter)
            if value is not None:
                out.append(f"{value:0{n}d}")
            else:
                out.append({"a": "AM" if t.hour < 12 else "PM", "z": "UTC", "Z": "+0000",
                            "X": "Z"}[letter])
    return "".join(out)


# --------------------------------------------------------------------------- CSV
def csv_header(text: str) -> tuple[list[str], int]:
    """The header row of CSV ``text`` — its first row with a non-blank cell (blank rows
    before it are skipped) — and the number of lines up to its end."""
    reader = csv.reader(io.StringIO(text), skipinitialspace=True)
    header: list[str] = []
    for header in reader:
        if any(h.strip() for h in header):
            break
    return header, reader.line_num


def _parse_csv(text: str, source: str, str_columns: StrColumns, *, fast: bool = True,
               line_offset: int = 0) -> _Table:
    """Parse CSV text; ``str_columns(names)`` says which columns to keep as strings.

    ``fast=False`` forces the csv-module reader (for tests). ``line_offset`` is added to the
    line numbers of data-row errors: a chunk of a larger file (see :mod:`treecert.stream`)
    is its header plus rows that start that many lines further down.
    """
    header, header_lines = csv_header(text)
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
    columns = _csv_fast(text, names, header_lines, keep) if fast and "\x00" not in text else None
    if columns is None:
        columns = _csv_slow(text, source, names, line_offset)
    relation = "stdin" if source == "<stdin>" else Path(source).name
    for suffix in (".gz", ".GZ", ".csv", ".CSV"):
        relation = relation.removesuffix(suffix)
    n_rows = len(columns[0]) if columns else 0
    return _Table(
        source, relation,
        [_Column(Attribute(name, "string"), col) for name, col in zip(names, columns,
                                                                       strict=True)],
        np.ones(n_rows, dtype=np.float64), is_csv=True,
    )


def _strip_missing(raw: Iterable[object], kind: str | None = None) -> np.ndarray:
    """Object array of stripped strings, None where the value is missing (blank, ?, NA).
    ``kind``: pandas' ``infer_dtype`` of ``raw`` when the caller has it already."""
    if kind is None and isinstance(raw, np.ndarray):
        kind = pd.api.types.infer_dtype(raw, skipna=True)
    if kind == "string":
        # The same, stripping each distinct value once: most of reading a label column.
        codes, uniques = pd.factorize(pd.Series(raw, dtype=object), use_na_sentinel=True)
        table = np.array([*(u.strip() for u in uniques), None], dtype=object)
        table[[v in _CSV_MISSING for v in table[:-1]] + [True]] = None
        return table[codes]
    stripped = ("" if v is None else str(v).strip() for v in raw)
    return np.array([None if v in _CSV_MISSING else v for v in stripped], dtype=object)


def _csv_fast(text: str, names: list[str], skip: int, keep: set[str]) -> list | None:
    """Parse with pandas; None when a short row might hide among the NA-filled cells.

    pandas pads a short row silently, so the commas outside quotes are counted: with no row
    too long (pandas raises on those), every row is complete exactly when the count is
    ``(k - 1)`` per row.
    """
    k = len(names)
    dtype = {j: object for j, name in enumerate(names) if name in keep}
    try:
        # A row longer than the header makes pandas warn and drop data: take that as "not
        # plain", and let the exact reader report the line.
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(text), header=None, names=list(range(k)), skiprows=skip,
                index_col=False, skipinitialspace=True, skip_blank_lines=True,
                keep_default_na=False, na_values=list(_CSV_MISSING), dtype=dtype,
                engine="c",
            )
    except (ValueError, pd.errors.ParserError, pd.errors.ParserWarning):
        return None
    parts = text.split("\n", skip)
    body = parts[skip] if len(parts) > skip else ""
    if '"' in body:
        body = re.sub(r'"[^"]*"', "", body)
    if body.count(",") != (k - 1) * len(df):
        return None
    out: list[np.ndarray] = []
    for j in range(k):
        col = df[j]
        if col.dtype.kind in "fiu" and names[j] not in keep:
            out.append(col.to_numpy(np.float64))
            continue
        raw = col.to_numpy(dtype=object, na_value=None)
        kind = pd.api.types.infer_dtype(raw, skipna=True) if col.dtype == object else None
        if col.dtype.kind == "b" or (
                kind is not None and kind not in ("string", "empty")
                and any(isinstance(v, bool | np.bool_) for v in raw)):
            return None  # pandas read True/False as booleans; keep the spelling
        out.append(_strip_missing(raw, kind))
    return out


def _csv_slow(text: str, source: str, names: list[str], line_offset: int = 0
              ) -> list[np.ndarray]:
    """The reference reader (the csv module); reports a ragged row with its line."""
    reader = csv.reader(io.StringIO(text), skipinitialspace=True)
    for row in reader:
        if any(v.strip() for v in row):
            break  # the header
    rows = []
    for row in reader:
        if len(row) != len(names):
            if not any(v.strip() for v in row):
                continue
            raise DataError(
                f"{source}, line {reader.line_num + line_offset}: expected {len(names)} fields "
                f"(as in the header), found {len(row)}.",
                "Every row needs one field per column; quote values that contain commas.",
            )
        rows.append(row)
    if not rows:
        return [np.empty(0, dtype=object) for _ in names]
    return [_strip_missing(col) for col in zip(*rows, strict=True)]


def _number(token: str) -> float:
    """``float(token)`` without Python's extras Java rejects (``1_000``, non-ASCII digits)."""
    if "_" in token or not token.isascii():
        raise ValueError(token)
    return float(token)


def _csv_numbers(raw: np.ndarray) -> np.ndarray | None:
    """Float values of a CSV column if every known value is a number, else None."""
    if raw.dtype == np.float64:
        return raw
    numbers = np.array(pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce"),
                       dtype=np.float64)
    known = np.array([v is not None for v in raw], dtype=bool)
    for i in np.flatnonzero(np.isnan(numbers) & known):
        try:
            numbers[i] = _number(raw[i])
        except ValueError:
            return None
        if math.isnan(numbers[i]):  # 'nan' is a label here, not a number
            return None
    return numbers


def _nominal_first_seen(name: str, raw: np.ndarray) -> tuple[Attribute, np.ndarray]:
    """A nominal attribute from strings, values in order of first appearance."""
    if raw.dtype == np.float64:
        raw = np.array([None if math.isnan(v) else _fmt_num(v) for v in raw.tolist()],
                       dtype=object)
    codes, uniques = pd.factorize(pd.Series(raw, dtype=object), use_na_sentinel=True)
    x = codes.astype(np.float64)
    x[codes < 0] = np.nan
    return Attribute(name, "nominal", tuple(str(u) for u in uniques)), x


def _numeric_to_nominal(name: str, x: np.ndarray) -> tuple[Attribute, np.ndarray]:
    """Like Weka's NumericToNominal: one value per distinct number, in ascending order."""
    distinct = np.unique(x[~np.isnan(x)])
    codes = np.searchsorted(distinct, x).astype(np.float64)
    codes[np.isnan(x)] = np.nan
    return Attribute(name, "nominal", tuple(_fmt_num(v) for v in distinct.tolist())), codes


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


# --------------------------------------------------------------------------- public API
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


def _class_codes(col: _Column, table: _Table, forced: bool) -> tuple[Attribute, np.ndarray]:
    a = col.attr
    if table.is_csv or (forced and a.kind == "string"):
        attr, codes = _nominal_first_seen(a.name, col.values)
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
        numbers = None if forced else _csv_numbers(v)
        if numbers is not None:
            return Attribute(a.name, "numeric"), numbers
        return _nominal_first_seen(a.name, v)
    if forced and a.kind == "numeric":
        return _numeric_to_nominal(a.name, v)
    if forced and a.kind == "string":
        return _nominal_first_seen(a.name, v)
    if forced and a.kind == "date":
        raise DataError(f"{table.source}: date attribute {a.name!r} cannot be made nominal.")
    if a.kind == "string":
        return a, np.full(v.size, np.nan)
    return a, v


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
    :func:`load_for_schema`, shared with the chunked reader of :mod:`treecert.stream`.

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
    if has_class:
        y = _test_classes(schema, table.column(schema.class_attribute.name), table,
                          row_offset)
    string_attrs = {a.name for a in schema.attributes if a.kind == "string"}
    for col in table.columns:
        name = col.attr.name
        if name not in known or name == id_column or name in string_attrs:
            extra[name] = _labels(col)
    notes = [] if unseen is not None else unseen_warning(src, schema, counts)
    X = np.column_stack(xs) if xs else np.empty((table.weights.size, 0))
    return Dataset(schema, X.astype(np.float64, copy=False), y, table.weights, extra,
                   source=src, has_class=has_class, warnings=notes)


def unseen_warning(src: str, schema: Schema, unseen: dict[str, Counter[str]]) -> list[str]:
    """The one warning line counting nominal values not seen in training (or none)."""
    if not any(unseen.values()):
        return []
    order = {a.name: j for j, a in enumerate(schema.attributes)}
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
        if file_kind in ("numeric", "date") and not table.is_csv:
            raise mismatch(f"is {file_kind} here but nominal in the model")
        labels = _labels(col)
        lookup = {v: float(k) for k, v in enumerate(attr.values)}
        x = _map_labels(labels, lookup, _NAN, -1.0).astype(np.float64)
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
                raise mismatch(f"holds {col.values[row]!r} (data row {row + 1 + row_offset}) "
                               "but is numeric in the model")
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
        raise mismatch(f"holds {_labels(col)[bad_i]!r} (data row {bad_i + 1 + row_offset}), "
                       f"not a date in the model's format {attr.date_format!r}")
    return parsed


def _map_labels(labels: np.ndarray, lookup: dict, missing, unknown) -> np.ndarray:
    """``[missing if v is None else lookup.get(v, unknown) for v in labels]`` as an array,
    looking up each distinct label once (a million rows hold a handful of class labels)."""
    codes, uniques = pd.factorize(pd.Series(labels, dtype=object), use_na_sentinel=True)
    table = np.array([*(lookup.get(u, unknown) for u in uniques), missing], dtype=object)
    return table[codes]


def _is_number(v: str) -> bool:
    try:
        return not math.isnan(_number(v))
    except ValueError:
        return False


def _test_classes(schema: Schema, col: _Column, table: _Table, row_offset: int = 0
                  ) -> np.ndarray:
    cls = schema.class_attribute
    if not table.is_csv and col.attr.kind not in ("nominal", "string"):
        raise SchemaMismatchError(
            f"{table.source}: class column {cls.name!r} is {col.attr.kind} here but "
            f"nominal in the model ({_listing(cls.values)})."
        )
    labels = _labels(col)
    lookup = {v: k for k, v in enumerate(cls.values)}
    y = _map_labels(labels, lookup, -1, -2).astype(np.int64)
    bad = np.flatnonzero(y == -2)
    if bad.size:
        i = int(bad[0])
        raise SchemaMismatchError(
            f"{table.source}: class label {labels[i]!r} in data row {i + 1 + row_offset} is not "
            f"one the model knows ({_listing(cls.values)}).",
            "Correct the label, or drop the class column to predict without scoring.",
        )
    return y


def check_trainable(dataset: Dataset) -> None:
    """Raise :class:`DataError` if a tree cannot be learned from ``dataset``.

    Checked here rather than in the learner so the message can say which column to fix.

    Parameters
    ----------
    dataset : Dataset
        Training data, as returned by :func:`load_dataset`.

    Raises
    ------
    DataError
        A string attribute (free text cannot be split on), no row with a known class,
        fewer than two classes among those rows, or an attribute with no known value.
    """
    src, schema = dataset.source, dataset.schema
    strings = [a.name for a in schema.attributes if a.kind == "string"]
    if strings:
        it = "it" if len(strings) == 1 else "them"
        raise DataError(
            f"{src}: {'attribute' if len(strings) == 1 else 'attributes'} "
            f"{_listing([repr(s) for s in strings])} "
            f"{'is a string attribute' if len(strings) == 1 else 'are string attributes'}; "
            "a tree cannot split on free text.",
            f"Drop {it} with --ignore {','.join(strings)}.",
        )
    cls = schema.class_attribute.name
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
    empty = [schema.attributes[j].name for j in np.flatnonzero(np.isnan(dataset.X).all(axis=0))]
    if empty:
        one = len(empty) == 1
        raise DataError(
            f"{src}: {'attribute' if one else 'attributes'} {_listing([repr(e) for e in empty])}"
            f" {'has' if one else 'have'} no known values (all {dataset.n_samples} missing); "
            "a tree cannot split on "
            f"{'it' if one else 'them'}.",
            f"Drop {'it' if one else 'them'} with --ignore {','.join(empty)}.",
        )


# --------------------------------------------------------------------------- writing
def _quote(s: str) -> str:
    """Quote like Weka's ``Utils.quote``, plus any character its tokenizer splits on."""
    if s == "" or s == "?" or re.search(r"[\x00-\x20,'\"%{}\\]", s):
        s = (s.replace("\\", "\\\\").replace("'", "\\'").replace('"', '\\"')
             .replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
             .replace("%", "\\%"))
        return f"'{s}'"
    return s


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
    ``Utils.quote``, so :func:`load_dataset` reads back the same ``X``, ``y``, weights
    (written ``{w}`` when not 1) and schema.
    """
    schema = dataset.schema
    lines = [f"@relation {_quote(schema.relation)}", ""]
    for a in (*schema.attributes, schema.class_attribute):
        if a.kind == "nominal":
            decl = "{" + ",".join(_quote(v) for v in a.values) + "}"
        elif a.kind == "date":
            decl = f"date {_quote(a.date_format or DEFAULT_DATE_FORMAT)}"
        else:
            decl = a.kind
        lines.append(f"@attribute {_quote(a.name)} {decl}")
    lines += ["", "@data"]
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
    class_table = np.array([*(_quote(v) for v in schema.classes), "?"], dtype=object)
    columns.append(class_table[np.where(dataset.y < 0, -1, dataset.y)].tolist())
    rows = [",".join(r) for r in zip(*columns, strict=True)] if columns else []
    for i in np.flatnonzero(dataset.weights != 1.0):
        rows[i] += ",{" + _fmt_num(float(dataset.weights[i])) + "}"
    text = "\n".join(lines + rows) + "\n"
    if isinstance(path_or_file, str | Path):
        target = Path(path_or_file)
        if target.name.endswith(".gz"):
            with gzip.open(target, "wt", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        else:
            target.write_text(text, encoding="utf-8", newline="\n")
    else:
        path_or_file.write(text)
