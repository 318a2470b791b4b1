"""The table a file is read into, before it meets a schema, and the value spellings that
every reader shares.

:class:`_Table` holds the columns exactly as read: ARFF columns typed by their declaration,
CSV columns still text or floats. :mod:`treecert.data.loading` turns a table into a training
:class:`~treecert.data.schema.Dataset`; :mod:`treecert.data.alignment` fits one to a trained
schema. Java's number spellings (``_number`` reads a number the way Java does, ``_fmt_num``
writes one the way Weka's CSVLoader labels it) and the name listing used in messages live
here because the ARFF and CSV readers, loading and alignment all use them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from treecert.data.schema import Attribute
from treecert.errors import DataError

_NAN = float("nan")


def _check_text(text: str, source: str, line_offset: int = 0) -> None:
    """Refuse text holding a NUL character (a binary file, or a corrupted one): no data file
    has one, and read on it would be split or typed in ways that hide where it is."""
    at = text.find("\x00")
    if at >= 0:
        line = text.count("\n", 0, at) + 1 + line_offset
        raise DataError(f"{source}, line {line}: the file contains a NUL character; is it a "
                        "binary file?", "Data files are text: remove the NUL bytes.")


@dataclass
class _Column:
    """One column as read, before it is fitted to a schema.

    ARFF columns are typed by their declaration (``values``: float64 numbers, date seconds
    or nominal codes; object for strings). CSV columns carry ``kind="string"`` and are
    either float64 (every value already parsed as a number) or object arrays of stripped
    strings with ``None`` for missing; the kind is decided later.

    ``coded``, when the reader factorised a text column on the way (pandas' parser does
    for a streamed block), is ``(codes, table)`` with ``values == table[codes]`` (the table
    may repeat a value): matching the column to a schema then looks each table entry up
    once instead of hashing every value again (a million-row class column).
    """

    attr: Attribute
    values: np.ndarray
    coded: tuple[np.ndarray, np.ndarray] | None = None


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


_PANDAS_MIN_VALUES = 1 << 14
"""From this many values on, :func:`_factorize` uses pandas' hash table."""

_PANDAS_LOADED_MIN_VALUES = 1 << 10
"""... and from this many on when pandas is loaded already (a streamed file's blocks of
~15,000 rows, parsed by pandas, each factorised several times on their way out)."""


def _factorize(values: np.ndarray) -> tuple[np.ndarray, list]:
    """(codes, uniques) of a 1-D array of strings and None, or of integers: ``values[i]`` is
    ``uniques[codes[i]]``, the uniques in order of first appearance, None a value like any
    other (floats: pass their bits, so that -0.0 is not 0.0; pandas' path reads a NaN in an
    object array as None).

    A dict numbers few values (no pandas import for a short ``predict``); from
    :data:`_PANDAS_MIN_VALUES` on ``pandas.factorize`` does, twice as fast — an input that
    large was, as a rule, parsed by pandas, which is then loaded; pandas is used from
    :data:`_PANDAS_LOADED_MIN_VALUES` on when it is loaded anyway. Both number the values
    in order of first appearance, so the codes are the same.
    """
    import sys

    if values.size >= _PANDAS_MIN_VALUES or (
            values.size >= _PANDAS_LOADED_MIN_VALUES and "pandas" in sys.modules):
        import pandas as pd

        # With the NA sentinel pandas skips its separate missing-value scan of an object
        # array (a third of the time); the missing values are then given their place.
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        codes = codes.astype(np.int64, copy=False)
        uniques = uniques.tolist()
        missing = codes < 0
        if values.dtype == object and missing.any():
            at = int(missing.argmax())  # None's place: after the values seen before it
            k = int(codes[:at].max()) + 1 if at else 0
            codes = np.where(codes >= k, codes + 1, codes)
            codes[missing] = k
            uniques.insert(k, None)
        return codes, uniques
    index: dict = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values.tolist()),
                        dtype=np.int64, count=values.size)
    return codes, list(index)


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


def _number(token: str) -> float:
    """``float(token)`` without Python's extras Java rejects (``1_000``, non-ASCII digits)."""
    if "_" in token or not token.isascii():
        raise ValueError(token)
    return float(token)
