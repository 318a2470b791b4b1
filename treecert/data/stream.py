"""Reading data for a model in chunks, so ``predict`` runs in memory bounded by the chunk.

A CSV file (plain, ``.gz`` or stdin) is read in blocks of about ``chunk_bytes`` characters,
cut at record boundaries; each block, with the header line in front, goes through the same
code as a whole file (:func:`treecert.data.csv_reader._parse_csv`, then
:func:`treecert.data.alignment.align_to_schema`), with line and row numbers offset so
messages name the same lines. So the rows, values and messages are those of
:func:`treecert.data.alignment.load_for_schema` on the whole file; the unseen-value warning
is summed over the chunks. Memory is about ``chunk_bytes`` of text and the pandas/numpy
arrays of one block (a few times the block), whatever the file size.

An ARFF file is read the same way: its header (``@relation`` … ``@data``) once, by
:func:`treecert.data.arff_reader._parse_arff_header`, then blocks of whole lines of the
data section, each parsed by :func:`treecert.data.arff_reader._arff_table` — the function
that parses the data section of a whole file — with its line numbers, and aligned like a
CSV block. An ARFF row, dense or sparse ``{i v, ...}``, never spans lines (a quote is
closed on its line or is an error), so cutting at line ends splits no row; Weka's CR and
CR LF line ends become LF before the cut, as they do for a whole file.

A CSV record boundary is a newline preceded by an even number of ``"``: a newline inside a
quoted field is not one. A block in which no such newline is found (a stray quote, or one
line longer than the file's other lines together) grows until it ends: at worst the file is
parsed in one piece, as a whole file is.
"""

from __future__ import annotations

import codecs
import gzip
import itertools
import os
import stat
import sys
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from treecert.data.alignment import align_to_schema, schema_str_columns, unseen_warning
from treecert.data.arff_reader import (
    PANDAS_MIN_CHARS,
    _arff_table,
    _parse_arff_header,
    _unix_newlines,
)
from treecert.data.csv_reader import _parse_csv, csv_header
from treecert.data.schema import Dataset, Schema
from treecert.data.sources import (
    GZIP_MAGIC,
    SNIFF_BYTES,
    data_format,
    format_decided,
    sniff_format,
)
from treecert.data.table import _check_text, _Column, _Table
from treecert.errors import ConfigError, DataError

DEFAULT_CHUNK_BYTES = 1 << 20
"""About 1 MiB of text per chunk (~15,000 rows of ten numbers)."""


@dataclass
class Chunk:
    """Rows ``row_offset .. row_offset + data.n_samples`` of the file, aligned to the
    schema; ``fraction`` is how much of the input has been read (for progress)."""

    row_offset: int
    data: Dataset
    fraction: float


def _safe_cut(buf: str) -> int:
    """Index just after the last newline in ``buf`` that ends a record, or 0 if none.

    ``buf`` starts at a record boundary; a newline ends a record when an even number of
    quote characters precedes it (quotes inside quoted fields are doubled).
    """
    pos = buf.rfind("\n")
    if pos < 0:
        return 0
    if '"' not in buf:
        return pos + 1
    quotes = buf.count('"', 0, pos)
    while quotes % 2:
        prev = buf.rfind("\n", 0, pos)
        if prev < 0:
            return 0
        quotes -= buf.count('"', prev, pos)
        pos = prev
    return pos + 1


def _line_cut(buf: str) -> int:
    """Index just after the last newline in ``buf`` (ARFF: every line end ends a row)."""
    return buf.rfind("\n") + 1


class SchemaReader:
    """Data for ``schema`` from ``path`` ('-' = standard input), chunk by chunk. An input
    whose name does not give its format (stdin, ``data.txt``) is told by its first bytes
    (:func:`~treecert.data.sources.sniff_format`), which are kept and read again.

    Iterate :meth:`chunks` (optionally only rows [lo, hi)); afterwards ``warnings`` holds
    what :func:`~treecert.data.alignment.load_for_schema` would have warned about the whole
    file.
    :meth:`count_rows` reads a file once to count its data rows (for ``--shard``).
    """

    def __init__(self, path: str | Path, schema: Schema, *, fmt: str | None = None,
                 id_column: str | None = None, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> None:
        self.path = str(path)
        self.schema = schema
        self.id_column = id_column
        self.chunk_bytes = max(1, chunk_bytes)
        self.warnings: list[str] = []
        self.stdin = self.path == "-"
        self.source = "<stdin>" if self.stdin else self.path
        # Read once, like stdin: a pipe or device given by name (``<(...)``, /dev/stdin on
        # a pipe) gives its bytes only once.
        self._once = self.stdin or not _regular(self.path)
        self._stream: IO[bytes] | None = None
        self._head = b""  # stdin's first bytes, read to tell its format
        self._gzip = self.path.lower().endswith(".gz")
        self.format = data_format(self.path, fmt)
        if self.format is None:
            self._gzip, self.format = sniff_format(self._first_bytes())
        elif self._once:
            self._gzip = self._first_bytes()[:2] == GZIP_MAGIC
        self._encoding: str | None = "utf-8-sig" if self._once else None
        self._block_rows: list[int] | None = None

    # ------------------------------------------------------------------ input
    def _first_bytes(self) -> bytes:
        """The input's first bytes: a stream's are kept for :meth:`_open` to give again."""
        if self._once:  # what has arrived, until the line that decides the format has
            stream = self._once_stream()
            read = getattr(stream, "read1", stream.read)
            while len(self._head) < SNIFF_BYTES and not format_decided(self._head):
                block = read(SNIFF_BYTES - len(self._head))
                if not block:
                    break
                self._head += block
            return self._head
        raw = self._open_file()
        try:
            return raw.read(SNIFF_BYTES)
        except OSError as exc:
            raise DataError(f"{self.source}: cannot read the file: {exc.strerror}.") from None
        finally:
            raw.close()

    def _open_file(self) -> IO[bytes]:
        try:
            return open(self.path, "rb")
        except FileNotFoundError:
            raise DataError(f"{self.source}: no such file.", "Check the path.") from None
        except OSError as exc:
            raise DataError(f"{self.source}: cannot read the file: {exc.strerror}.") from None

    def _once_stream(self) -> IO[bytes]:
        """Standard input, or the pipe named by the path, opened once."""
        if self._stream is None:
            if self.stdin:
                self._stream = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
            else:
                self._stream = self._open_file()
        return self._stream

    def _open(self) -> tuple[IO[bytes], IO[bytes]]:
        """(stream of file bytes, the raw file whose position measures progress)."""
        if self._once:
            raw = _Prefixed(self._head, self._once_stream())
        else:
            raw = self._open_file()  # closed by _bytes
        if self._gzip:
            return gzip.GzipFile(fileobj=raw, mode="rb"), raw
        return raw, raw

    def _bytes(self) -> Iterator[tuple[bytes, float]]:
        """Blocks of the file's bytes (decompressed), with the fraction read so far."""
        stream, raw = self._open()
        size = None
        if not self._once:
            try:
                size = Path(self.path).stat().st_size or None
            except OSError:
                size = None
        try:
            while True:
                try:
                    block = stream.read(self.chunk_bytes)
                except (OSError, EOFError, zlib.error) as exc:
                    raise DataError(f"{self.source}: not a valid gzip file ({exc}).") from None
                if not block:
                    return
                fraction = 0.0
                if size is not None:
                    try:
                        fraction = min(1.0, raw.tell() / size)
                    except (OSError, ValueError):
                        fraction = 0.0
                yield block, fraction
        finally:
            if not self._once:
                stream.close()
                raw.close()

    def _detect_encoding(self) -> str:
        """UTF-8 (a BOM dropped) if the whole file decodes as UTF-8, else Latin-1 — the
        rule of :func:`treecert.data._decode`, decided before any row is handed out."""
        decoder = codecs.getincrementaldecoder("utf-8-sig")()
        try:
            for block, _ in self._bytes():
                if block.isascii() and not decoder.getstate()[0]:
                    continue  # plain ASCII is UTF-8 (and nothing is pending from before)
                decoder.decode(block)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return "latin-1"
        return "utf-8-sig"

    def _text(self) -> Iterator[tuple[str, float]]:
        if self._encoding is None:
            self._encoding = self._detect_encoding()
        decoder = codecs.getincrementaldecoder(self._encoding)()
        try:
            for block, fraction in self._bytes():
                yield decoder.decode(block), fraction
            yield decoder.decode(b"", final=True), 1.0
        except UnicodeDecodeError as exc:
            raise DataError(f"{self.source}: not UTF-8 text ({exc.reason} at byte "
                            f"{exc.start} of a block).",
                            "Convert it to UTF-8, or give it as a file.") from None

    def _arff_text(self) -> Iterator[tuple[str, float]]:
        """:meth:`_text` with Weka's line ends (CR LF, CR) made LF, as for a whole file
        (:func:`~treecert.data.arff_reader._unix_newlines`); a CR ending a piece waits for
        the next one, which may start with its LF."""
        held = ""
        for text, fraction in self._text():
            text = held + text
            held = "\r" if text.endswith("\r") else ""
            yield _unix_newlines(text[:len(text) - len(held)]), fraction
        if held:
            yield "\n", 1.0

    def _header(self, text: str, done: bool):
        """(header, lines it takes) at the start of ``text`` (whole lines), or None if the
        text ends before it does. CSV: the header row's text; ARFF: (relation, attributes,
        line of ``@data``)."""
        if self.format == "csv":
            lines = csv_header(text, self.source)[1]  # the header lines _parse_csv skips
            return "\n".join(text.split("\n", lines)[:lines]) + "\n", lines
        _check_text(text, self.source)
        found = _parse_arff_header(text, self.source, complete=done)
        if found is None:
            return None
        relation, attrs, _, data_line = found
        return (relation, attrs, data_line), data_line

    # ------------------------------------------------------------------ blocks
    def _blocks(self) -> Iterator[tuple[object, int, str, float]]:
        """(header, lines before the block, block of whole records, fraction read)."""
        buf, header, lines_before = "", None, 0
        arff = self.format == "arff"
        pieces, cut_at = (self._arff_text(), _line_cut) if arff else (self._text(), _safe_cut)
        done = False
        while not done:
            try:
                text, fraction = next(pieces)
            except StopIteration:
                done, text, fraction = True, "", 1.0
            buf += text
            if header is None:
                cut = len(buf) if done else cut_at(buf)
                if not buf[:cut].strip():
                    if done:
                        break
                    continue
                found = self._header(buf[:cut], done)
                if found is None:
                    continue
                header, lines = found
                parts = buf.split("\n", lines)
                buf = parts[lines] if len(parts) > lines else ""
            cut = len(buf) if done else cut_at(buf)
            if cut:
                block, buf = buf[:cut], buf[cut:]
                yield header, lines_before, block, fraction
                lines_before += block.count("\n")
        if header is None:
            hint = "A CSV file needs a header row and data rows; an ARFF file a header and @data."
            raise DataError(f"{self.source}: the file is empty.", hint)

    def _tables(self, skip=None) -> Iterator[tuple[int, _Table | None, float]]:
        """(rows, table or None if not parsed, fraction) for every block; ``skip(k)`` says
        that block k (whose row count :meth:`count_rows` recorded) need not be parsed."""
        str_columns = schema_str_columns(self.schema)
        read = 0  # characters of ARFF data so far: past PANDAS_MIN_CHARS, pandas reads on
        for k, (header, lines_before, block, fraction) in enumerate(self._blocks()):
            if skip is not None and skip(k):
                yield self._block_rows[k], None, fraction
                continue
            if not block or block.isspace():  # (``not block.strip()`` copies the block)
                yield 0, None, fraction
                continue
            if self.format == "arff":
                relation, attrs, data_line = header
                _check_text(block, self.source, data_line + lines_before)
                read += len(block)
                table = _arff_table(block, data_line + 1 + lines_before, relation, attrs,
                                    self.source, fast=True if read >= PANDAS_MIN_CHARS else None)
            else:
                table = _parse_csv(header + block, self.source, str_columns,
                                   line_offset=lines_before)
            yield table.weights.size, table, fraction

    # ------------------------------------------------------------------ public
    def count_rows(self) -> int:
        """The number of data rows (reads the file once; not possible on stdin)."""
        if self._once:
            raise ConfigError(f"--shard needs a data file, not {self.source}: each shard "
                              "reads the file to count its rows.")
        counts = [rows for rows, _, _ in self._tables()]
        self._block_rows = counts
        total = sum(counts)
        if total == 0:
            raise self._no_rows()
        return total

    def _no_rows(self) -> DataError:
        where = "after '@data'" if self.format == "arff" else "after the header row"
        return DataError(f"{self.source}: no data rows {where}.", "Add at least one instance.")

    def chunks(self, rows: tuple[int, int] | None = None) -> Iterator[Chunk]:
        """The data in chunks, in file order; only rows [lo, hi) when ``rows`` is given."""
        lo, hi = rows if rows is not None else (0, None)
        unseen: dict[str, Counter[str]] = {}
        offset, any_rows = 0, False
        counts, skip = self._block_rows, None
        if counts is not None:
            starts = list(itertools.accumulate(counts, initial=0))

            def skip(k: int) -> bool:
                return starts[k + 1] <= lo or (hi is not None and starts[k] >= hi)

        for n, table, fraction in self._tables(skip):
            any_rows = any_rows or n > 0
            a, b = max(lo, offset), n + offset if hi is None else min(hi, n + offset)
            if table is not None and b > a:
                if (a, b) != (offset, offset + n):
                    table = _slice(table, a - offset, b - offset)
                data = align_to_schema(table, self.schema, id_column=self.id_column,
                                       row_offset=a, unseen=unseen)
                yield Chunk(a, data, fraction)
            offset += n
            if hi is not None and offset >= hi:
                break
        if not any_rows and counts is None:
            raise self._no_rows()
        self.warnings = unseen_warning(self.source, self.schema.feature_names, unseen)


def _regular(path: str) -> bool:
    """Whether ``path`` is a regular file (or does not exist: opening it will say so)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


class _Prefixed:
    """A byte stream read again from its start: the bytes already read (``head``), then the
    rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head, self._stream = head, stream

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._stream.read(size)
        if size is None or size < 0:
            out, self._head = self._head + self._stream.read(), b""
            return out
        out, self._head = self._head[:size], self._head[size:]
        return out

    def tell(self) -> int:  # progress on stdin is not measured (its size is unknown)
        raise OSError("stdin has no position")


def _slice(table: _Table, a: int, b: int) -> _Table:
    return _Table(table.source, table.relation,
                  [_Column(c.attr, c.values[a:b],
                           None if c.coded is None else (c.coded[0][a:b], c.coded[1]))
                   for c in table.columns],
                  table.weights[a:b], table.is_csv)
