"""Read ARFF text into a :class:`~treecert.data.table._Table`: Weka's tokenizer, the header
(``@relation``, ``@attribute`` declarations) and the dense and sparse data rows.

The reader follows the token rules of Weka 3.8's ``ArffLoader`` (commas and white space
separate values, ``'`` and ``"`` quote with backslash escapes, ``%`` starts a comment, sparse
rows ``{i v, ...}``, instance weights ``{w}``), so a file Weka reads gives the same instances
here. Plain dense data sections, which is what nearly every large file has, are handed to
``pandas.read_csv``; anything that parser could read differently from Weka (sparse rows,
weights, escapes, short rows, ...) falls back to an exact tokenizer, which is also the one
that reports errors with line numbers. Opening the file is :mod:`treecert.data.sources`;
writing ARFF is :mod:`treecert.data.arff_writer`.
"""

from __future__ import annotations

import io
import math
import re
import sys
import warnings
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from treecert.data.dates import DEFAULT_DATE_FORMAT, _java_date_parts, _parse_dates
from treecert.data.schema import Attribute
from treecert.data.table import _NAN, _check_text, _Column, _listing, _number, _Table
from treecert.errors import DataError, describe

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
_ESC_RE = re.compile(r"\\([0-7]{1,3}|u[0-9a-fA-F]{4}|.)", re.DOTALL)
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
    if len(s) == 5 and s[0] == "u":  # \uxxxx, as liac-arff reads (and writes surrogates)
        return chr(int(s[1:], 16))
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


#: Data sections this long or longer are read by pandas (:func:`_arff_rows_fast`) when
#: they may be, shorter ones too once pandas is imported; below it the exact tokenizer
#: (about 0.1 CPU-s per MB, a fifth of pandas' speed) costs less than pandas' import
#: (about 0.3 CPU-s). Both give the same table.
PANDAS_MIN_CHARS = 1 << 22

# --------------------------------------------------------------------------- ARFF header
def _parse_arff(text: str, source: str, *, fast: bool | None = None) -> _Table:
    """Parse a whole ARFF text; ``fast`` chooses the reader of its data (see
    :func:`_arff_table`)."""
    text = _unix_newlines(text)
    _check_text(text, source)
    relation, attrs, offset, data_line = _parse_arff_header(text, source)
    return _arff_table(text[offset:], data_line + 1, relation, attrs, source, fast=fast)


def _unix_newlines(text: str) -> str:
    """Weka ends a line at CR LF, CR or LF; the parsers below split at LF."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _arff_table(data: str, first_line: int, relation: str, attrs: list[Attribute],
                source: str, *, fast: bool | None = None) -> _Table:
    """The rows of (part of) a data section, whose first line is line ``first_line`` of
    the file: the whole section of :func:`_parse_arff`, or one block of the streamed
    reader (:mod:`treecert.data.stream`), which cuts the section at line ends — an ARFF
    row never spans lines — so both read the same rows. ``fast`` chooses the reader: True
    pandas where it may (:func:`_arff_rows_fast`), False the exact tokenizer (for tests),
    None by the section's size (:data:`PANDAS_MIN_CHARS`)."""
    if fast is None:
        fast = len(data) >= PANDAS_MIN_CHARS or "pandas" in sys.modules
    parsed = _arff_rows_fast(data, attrs) if fast else None
    if parsed is None:
        parsed = _arff_rows_slow(data, first_line, attrs, source)
    values, weights = parsed
    columns = [_Column(a, v) for a, v in zip(attrs, values, strict=True)]
    return _Table(source, relation, columns, weights, is_csv=False)


def _parse_arff_header(text: str, source: str, *, complete: bool = True
                       ) -> tuple[str, list[Attribute], int, int] | None:
    """Return the relation, the attributes, the offset after ``@data`` and its line.

    ``complete=False``: ``text`` is the start of a file (whole lines) being read; None if
    it ends before the ``@data`` line (read more and call again).
    """
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
    if not complete:
        return None
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
    if "{" in data or "\\" in data:
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
    import pandas as pd  # here, not at the top: a CSV `predict` never needs it

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
                f"{where}: expected an attribute index in the sparse row, found {describe(tok)}.",
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
                    f"{where}: instance weight {describe(rest[1])} is not a non-negative number."
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
                f"{source}, line {lines[i]}: value {describe(col[i])} is not declared for nominal "
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
                f"{source}, line {lines[bad_i]}: {describe(strings[bad_i])} is not a date in the "
                f"format {attr.date_format!r} of attribute {attr.name!r}.",
                "Fix the value or the format in the @attribute line.",
            )
        return parsed
    numbers = _plain_numbers(col)
    if numbers is not None:
        return numbers
    import pandas as pd

    tokens = pd.Series(col, dtype=object)
    numbers = np.array(pd.to_numeric(tokens, errors="coerce"), dtype=np.float64)
    for i in np.flatnonzero(np.isnan(numbers) & tokens.notna().to_numpy()):
        token = str(col[i])
        try:  # forms pandas leaves out but Java reads: 'NaN', 'Infinity', ...
            numbers[i] = _number(token)
        except ValueError:
            raise DataError(
                f"{source}, line {lines[i]}: {describe(token)} is not a number "
                f"(attribute {attr.name!r} is numeric).",
                "Write ? for a missing value, or declare the attribute nominal.",
            ) from None
    return numbers


_SPACE = re.compile(r"\s")
_INT = re.compile(r"[+-]?[0-9]+")


def _plain_numbers(col: list) -> np.ndarray | None:
    """A numeric attribute's tokens (None = missing) as floats without pandas: what
    ``pandas.to_numeric`` and then Java's reading of what it leaves out (``_number``) give,
    for tokens of ASCII without spaces or underscores: ``float`` of each, except that a
    column of int64 integers without a missing value reads ``-0`` as 0.0 (pandas reads it
    as an int64). None for any other column, or a token that is not a number (the caller finds
    it and says so)."""
    known = [v for v in col if v is not None]
    joined = "\x00".join(known)
    if "_" in joined or not joined.isascii() or _SPACE.search(joined):
        return None
    try:
        values = np.array(known, dtype=object).astype(np.float64)
    except (ValueError, TypeError):
        return None
    if len(known) < len(col):
        numbers = np.full(len(col), _NAN)
        numbers[[v is not None for v in col]] = values
        return numbers
    if np.signbit(values[values == 0]).any() and all(_INT.fullmatch(v) for v in known):
        if not all(-(1 << 63) <= int(v) < 1 << 63 for v in known):
            return None  # pandas' reading of integers past int64 is left to pandas
        values = values + 0.0  # pandas' int64 column: -0 is 0
    return values
