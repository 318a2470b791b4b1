"""Input sources: which format a path holds, its decoded text, and the table parsed from it.

A path ending in ``.arff`` or ``.csv`` (optionally ``.gz``), or ``-`` for CSV on standard
input, is read whole, decompressed, decoded (UTF-8, else Latin-1 as old UCI files need) and
handed to :mod:`treecert.data.arff_reader` or :mod:`treecert.data.csv_reader`. Both
:func:`~treecert.data.loading.load_dataset` and
:func:`~treecert.data.alignment.load_for_schema` start from ``_read_table``.
"""

from __future__ import annotations

import gzip
import os
import sys
from pathlib import Path

from treecert.data.arff_reader import _parse_arff
from treecert.data.csv_reader import StrColumns, _parse_csv
from treecert.data.table import _Table
from treecert.errors import ConfigError, DataError


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


def _size(path: str | Path) -> str:
    try:
        return f" ({os.path.getsize(path) / 2**20:,.0f} MB)" if str(path) != "-" else ""
    except OSError:
        return ""


def _decode(raw: bytes) -> str:
    # Weka reads with the platform charset, which is UTF-8 almost everywhere; old UCI files
    # in Latin-1 still load instead of failing on one accented byte.
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _read_table(path: str | Path, fmt: str | None, str_columns: StrColumns) -> _Table:
    try:
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
    except MemoryError:
        # Reading takes several times the file's size (the text, then the columns). The
        # error is raised below, once this one and the frames holding the text are gone.
        table = None
    if table is None:
        raise DataError(f"{'<stdin>' if str(path) == '-' else path}: not enough memory to "
                        f"read this file{_size(path)}.",
                        "Raise the memory limit, or give a smaller file (predict reads "
                        "CSV in chunks: --chunk-size).")
    if table.weights.size == 0:
        where = "after '@data'" if fmt == "arff" else "after the header row"
        raise DataError(f"{source}: no data rows {where}.", "Add at least one instance.")
    return table
