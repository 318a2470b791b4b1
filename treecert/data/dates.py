"""Weka's (Java ``SimpleDateFormat``) date patterns: dates read as seconds since the epoch
(UTC) and written back in the same pattern.

An ARFF ``date`` attribute declares its pattern (:data:`DEFAULT_DATE_FORMAT` when it
declares none). The ARFF reader, the alignment of CSV test data to a date attribute and
:func:`~treecert.data.arff_writer.write_arff` all go through these functions, so a date
round-trips exactly.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np

__all__ = ["DEFAULT_DATE_FORMAT"]

DEFAULT_DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss"
"""Weka's date format when an ARFF ``date`` attribute declares none."""


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
    import pandas as pd  # here, not at the top: a `predict` without dates never needs it

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
