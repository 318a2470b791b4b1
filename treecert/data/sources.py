"""Input sources: which format a path holds, its decoded text, and the table parsed from it.

A path ending in ``.arff`` or ``.csv`` (optionally ``.gz``) is read as its name says; standard
input (``-``) and names that do not say (``/dev/stdin``, ``<(...)``, ``data.txt``) are read by
their content: gzip's magic bytes are decompressed, and a first line (after blank lines and
``%`` comments) of ``@relation`` is ARFF, anything else CSV; ``--input-format`` decides
instead. The text is read whole, decoded (UTF-8, else Latin-1 as old UCI files need) and
handed to :mod:`treecert.data.arff_reader` or :mod:`treecert.data.csv_reader`. Both
:func:`~treecert.data.loading.load_dataset` and
:func:`~treecert.data.alignment.load_for_schema` start from ``_read_table``.
"""

from __future__ import annotations

import gzip
import os
import sys
import zlib
from pathlib import Path

from treecert.data.arff_reader import _parse_arff
from treecert.data.csv_reader import StrColumns, _parse_csv
from treecert.data.table import _Table
from treecert.errors import ConfigError, DataError

#: The first bytes of every gzip stream.
GZIP_MAGIC = b"\x1f\x8b"
#: How much of an input whose name does not give its format is read to tell it.
SNIFF_BYTES = 1 << 16


def data_format(path: str | Path, fmt: str | None = None) -> str | None:
    """``arff`` or ``csv``: ``fmt`` if given (``auto`` = not given), else from the file
    name (``.gz`` allowed); None when the name does not say (standard input, ``data.txt``):
    then the content decides (:func:`sniff_format`)."""
    if fmt is not None and fmt.lower() != "auto":
        fmt = fmt.lower()
        if fmt not in ("arff", "csv"):
            raise ConfigError(f"unknown data format {fmt!r}; use 'arff', 'csv' or 'auto'.")
        return fmt
    if str(path) == "-":
        return None
    stem = Path(path).name.lower().removesuffix(".gz")
    if stem.endswith(".arff"):
        return "arff"
    if stem.endswith(".csv"):
        return "csv"
    return None


def sniff_format(head: bytes) -> tuple[bool, str]:
    """(gzip-compressed?, ``arff`` or ``csv``) from the first bytes of an input: gzip's
    magic number, then the first line that is neither blank nor a ``%`` comment —
    ``@relation`` starts an ARFF file (Weka's rule: the keyword is case-insensitive),
    anything else is a CSV header. Comments alone are ARFF's (a CSV has no comments)."""
    compressed, fmt = _sniff(head)
    return compressed, fmt or ("arff" if _comments_only(head, compressed) else "csv")


def format_decided(head: bytes) -> bool:
    """Whether ``head``, the first bytes of a stream, already hold the line that decides
    its format (so a reader of a pipe need not wait for more)."""
    return _sniff(head)[1] is not None


def _sniff(head: bytes) -> tuple[bool, str | None]:
    compressed = head[:2] == GZIP_MAGIC
    text = _head_text(head, compressed)
    for line in text.split("\n")[:-1]:  # whole lines only
        line = line.strip()
        if line and not line.startswith("%"):
            return compressed, "arff" if line[:9].lower() == "@relation" else "csv"
    return compressed, None


def _head_text(head: bytes, compressed: bool) -> str:
    if compressed:
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, SNIFF_BYTES)
        except zlib.error:
            return ""  # the reader says what is wrong with the stream
    return head.decode("latin-1").lstrip("\xef\xbb\xbf").replace("\r", "\n")


def _comments_only(head: bytes, compressed: bool) -> bool:
    lines = [line.strip() for line in _head_text(head, compressed).split("\n")]
    return any(lines) and all(not line or line.startswith("%") for line in lines)


def _read_input(path: str | Path, fmt: str | None) -> tuple[str, str, str]:
    """Return ``(text, source, fmt)``; ``source`` is the name used in messages."""
    fmt = data_format(path, fmt)
    if str(path) == "-":
        stream = sys.stdin
        raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()
        source, gz = "<stdin>", raw[:2] == GZIP_MAGIC
    else:
        source = str(path)
        try:
            raw = Path(path).read_bytes()
        except FileNotFoundError:
            raise DataError(f"{source}: no such file.", "Check the path.") from None
        except OSError as exc:
            raise DataError(f"{source}: cannot read the file: {exc.strerror}.") from None
        gz = Path(path).name.lower().endswith(".gz") or (fmt is None
                                                         and raw[:2] == GZIP_MAGIC)
    if fmt is None:
        fmt = sniff_format(raw[:SNIFF_BYTES])[1]
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
