"""Tables as CSV text: the bytes pandas' ``to_csv`` writes, without pandas and faster.

``predict`` writes its rows through :func:`write_columns` so that a short call need not
import pandas; :func:`write_frame` writes a DataFrame the same way, and
:func:`frame_to_csv` writes evaluate's and compare's tables with pandas unless a carriage
return in them needs the quoting pandas does not give.
"""

from __future__ import annotations

from typing import IO, Any


def write_frame(frame, fh: IO[str], *, header: bool = True) -> None:
    """``frame.to_csv(fh, index=False, header=header, lineterminator="\\n")``, faster: the
    DataFrame's columns through :func:`write_columns`."""
    write_columns({name: frame[name].to_numpy(dtype=object, na_value=None)
                   if frame[name].dtype.kind == "O" else frame[name].to_numpy()
                   for name in frame.columns}, fh, header=header)  # text: NaN is None


def write_columns(columns: dict[str, Any], fh: IO[str], *, header: bool = True) -> None:
    """A table of named numpy columns as CSV: the bytes ``pandas.DataFrame(columns).to_csv(
    fh, index=False, header=header, lineterminator="\\n")`` writes, without pandas.

    ``predict`` writes its rows through here so that a short call need not import pandas
    (0.45 CPU-s). Values are formatted as pandas formats them (floats by numpy's
    shortest round-trip ``astype(str)``, NaN and None as '', booleans as ``True``/``False``),
    quoted as pandas quotes them (QUOTE_MINIMAL, the csv module), but each distinct value is
    formatted once, and when the rows after their first column (``row``) take few distinct
    values — a leaf method's rows are one per (leaf, actual class) — each distinct tail is
    formatted once: formatting is most of the cost of writing a million rows. Each text
    column is factorised once, and its codes serve the type check, the quoting check and
    the grouping of the tails. Only an object column holding something other than strings
    and None (numbers, mixed types) is left to pandas, whose spelling of such values is not
    reimplemented here.
    """
    import csv

    import numpy as np

    names = list(columns)
    values = [np.asarray(columns[name]) for name in names]
    coded: dict[int, tuple[np.ndarray, list]] = {}  # text columns: (codes, distinct values)
    for j, col in enumerate(values):
        if col.dtype.kind == "O":
            text = _text_codes(col)
            if text is not None:
                coded[j] = text
        if col.dtype.kind not in "fiubO" or (col.dtype.kind == "O" and j not in coded):
            import pandas as pd  # values only pandas knows how to spell

            pd.DataFrame(dict(zip(names, values, strict=True))).to_csv(
                fh, index=False, header=header, lineterminator="\n")
            return
    carriage = any("\r" in str(c) for c in names) or any(
        "\r" in u for _, uniques in coded.values() for u in uniques if u is not None)
    writer = _CarriageQuoting(fh) if carriage else csv.writer(fh, lineterminator="\n")
    if header:
        writer.writerow([str(c) for c in names])
    n = len(values[0]) if values else 0
    if n == 0:
        return
    plain = all(not any(ch in "\x00".join(v for v in uniques if v is not None)
                        for ch in ',"\r\n')
                for _, uniques in coded.values())
    if not plain or len(values) < 2:
        writer.writerows(zip(*_text_columns(values), strict=True))
        return
    # nothing to quote: plain joins, twice the csv module's speed
    combos = _repeated_tails(values, coded)
    if combos is not None:  # few distinct rows after the first column
        codes, first = combos
        tails = np.array([f",{','.join(r)}\n" for r in zip(
            *_text_columns([v[first] for v in values[1:]]), strict=True)], dtype=object)
        head = _int_pieces(values[0]) if values[0].dtype.kind in "iu" else None
        if head is None:
            head = [np.array(_text_columns(values[:1])[0], dtype=object)]
        pieces = np.empty((n, len(head) + 1), dtype=object)
        for k, piece in enumerate(head):
            pieces[:, k] = piece
        pieces[:, -1] = tails[codes]
        fh.write("".join(pieces.ravel().tolist()))
    else:
        fh.write("\n".join(map(",".join, zip(*_text_columns(values), strict=True))) + "\n")


class _CarriageQuoting:
    """A csv writer (QUOTE_MINIMAL, lines ended by ``\\n``) that also quotes a field holding
    a carriage return: the csv module quotes only fields that hold the delimiter, the quote
    character or a character of the line terminator, and a bare ``\\r`` ends a line for
    csv readers. Each row is written with the terminator ``\\r\\n`` (so a ``\\r`` is
    quoted) and then ended with ``\\n``."""

    def __init__(self, fh: IO[str]) -> None:
        import csv
        import io

        self._fh = fh
        self._buf = io.StringIO()
        self._writer = csv.writer(self._buf, lineterminator="\r\n")

    def writerow(self, row) -> None:
        self._buf.seek(0)
        self._buf.truncate()
        self._writer.writerow(row)
        self._fh.write(self._buf.getvalue()[:-2] + "\n")

    def writerows(self, rows) -> None:
        for row in rows:
            self.writerow(row)


def frame_to_csv(frame, fh: IO[str]) -> None:
    """``frame.to_csv(fh, index=False, lineterminator="\\n")``, except that a frame with a
    carriage return in a column name or a text value goes through :func:`write_frame`,
    which quotes it (pandas, like the csv module, would not, and the file would not parse
    back)."""
    texts = [frame[c] for c in frame.columns if frame[c].dtype.kind == "O"]  # str too
    if any("\r" in str(c) for c in frame.columns) or any(
            isinstance(v, str) and "\r" in v for col in texts for v in col.unique()):
        write_frame(frame, fh)
    else:
        frame.to_csv(fh, index=False, lineterminator="\n")


def _int_pieces(ints) -> list | None:
    """Non-negative integers as the text ``str(int)`` gives, in two object arrays of pieces
    (``str(v // 100)`` or '' below 100, and the last two digits), made from a table of each
    distinct piece; None for negative integers or ones spread over more than a hundred
    times their number.

    Why: the row numbers of a million-row ``predict`` are a million distinct strings, and
    making them one by one (``str``, an f-string or ``%d``) cost 0.25–0.4 CPU-s; numbers
    that run on share their leading digits, so the pieces are numpy gathers from tables of
    1/100 of the rows and the line is one ``str.join`` (0.15 s with the tails)."""
    import numpy as np

    if ints.size == 0 or ints.min() < 0 or ints.max() >= 1 << 62:
        return None
    ints = ints.astype(np.int64, copy=False)
    hi = ints // 100
    base = max(int(hi.min()), 1)
    top = int(hi.max())
    if top - base > ints.size:
        return None
    leading = np.array(["", *map(str, range(base, top + 1))], dtype=object)
    two = np.array([f"{v:02d}" for v in range(100)], dtype=object)
    if hi.min() >= 1:  # every number has three digits or more (all rows but the first 100)
        return [leading[hi - (base - 1)], two[ints % 100]]
    small = np.array([str(v) for v in range(100)], dtype=object)
    return [leading[np.maximum(hi - base + 1, 0)],
            np.where(ints >= 100, two[ints % 100], small[np.minimum(ints, 99)])]


def _text_codes(col) -> tuple[Any, list] | None:
    """(codes, distinct values) of an object column of strings and None; None when it holds
    anything else (a NaN among the None included)."""
    from treecert.data.table import _factorize as factorize

    codes, uniques = factorize(col)
    if not all(u is None or type(u) is str for u in uniques):
        return None
    if None in uniques:  # pandas' factorisation reads NaN as None: look
        k = uniques.index(None)
        if any(v is not None for v in col[codes == k].tolist()):
            return None
    return codes, uniques


def _float_bits(values):
    """Floats as their bits, every NaN one value (-0.0 is not 0.0)."""
    import numpy as np

    values = values.astype(np.float64, copy=False)
    nan = np.isnan(values)
    if nan.any():
        values = np.where(nan, np.nan, values)
    return values.view(np.uint64)


def _factorize(values):
    """(codes, number of distinct values): ``codes[i]`` numbers ``values[i]``; floats are
    told apart by their bits (-0.0 is not 0.0, every NaN is one value)."""
    import numpy as np

    from treecert.data.table import _factorize as factorize

    if values.dtype.kind == "f":
        values = _float_bits(values)
    elif values.dtype.kind == "b":
        values = values.astype(np.int64)
    codes, uniques = factorize(values)
    return codes, len(uniques)


def _text_columns(columns: list) -> list[list[str]]:
    """Every column as the strings pandas' to_csv writes (before quoting)."""
    import numpy as np

    out = []
    for values in columns:
        kind = values.dtype.kind
        if kind == "f":
            codes, k = _factorize(values)
            if k < values.size:  # format each distinct value once (~1 µs each)
                first = np.zeros(k, dtype=np.int64)
                first[codes[::-1]] = np.arange(values.size)[::-1]
                text = values[first].astype(str)[codes]
            else:
                text = values.astype(str)
            nan = np.isnan(values)
            if nan.any():
                text[nan] = ""
            out.append(text.tolist())
        elif kind in "iub":
            out.append(values.astype(str).tolist() if kind != "b"
                       else ["True" if v else "False" for v in values.tolist()])
        else:
            out.append(["" if v is None else v for v in values.tolist()])
    return out


def _repeated_tails(columns: list, coded: dict):
    """(codes, first rows) if the rows without their first column take few distinct values:
    ``codes[i]`` numbers row i's values, ``first[c]`` is the first row with values ``c``;
    else None. ``coded`` holds the text columns' (codes, distinct values) by position.

    Exact: the rows are grouped column by column; a column whose values are the same
    within every group so far (checked, bit for bit) cannot split a group and is not
    factorised — a leaf method's probabilities and certainty follow from one of them — and
    every other column's codes are combined with the groups.
    """
    import numpy as np

    n = len(columns[0])
    group = np.zeros(n, dtype=np.int64)
    first = np.zeros(1, dtype=np.int64)
    # floats first: they tell most (a leaf's probabilities decide the predicted class), and
    # where every row has its own (a transductive method), the first says so at once
    order = sorted(range(1, len(columns)), key=lambda j: columns[j].dtype.kind != "f")
    for j in order:
        values = columns[j]
        key = coded[j][0] if j in coded else (
            _float_bits(values) if values.dtype.kind == "f" else values)
        if np.array_equal(key[first][group], key):
            continue  # the same within every group: adds nothing
        if j in coded:
            codes, k = key, len(coded[j][1])
        else:
            codes, k = _factorize(values)
        group, groups = _renumber(group * k + codes, len(first) * k)
        if groups * 8 > n:
            return None
        first = np.zeros(groups, dtype=np.int64)
        first[group[::-1]] = np.arange(n)[::-1]  # the first row of every group
    return group, first


def _renumber(key, bound: int):
    """(codes, count): ``key`` (integers in [0, bound)) renumbered 0 .. count - 1."""
    import numpy as np

    if bound > 4 * key.size:
        return _factorize(key)
    seen = np.zeros(bound, dtype=bool)
    seen[key] = True
    new = np.cumsum(seen) - 1
    return new[key], int(new[-1]) + 1
