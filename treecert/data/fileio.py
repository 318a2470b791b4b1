"""Writing outputs safely: atomically, never over an input file, and as strict JSON.

A batch job killed mid-write must not leave a half-written CSV or model that a later step
reads as complete, so every output goes to a temporary file in the target directory and is
renamed into place only when complete. JSON outputs are strict (no NaN or Infinity):
:func:`nan_to_none` prepares a document for ``json.dumps(..., allow_nan=False)``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from treecert.errors import ConfigError


def check_not_input(output: str | Path, inputs: list[str | Path]) -> None:
    """Refuse to write ``output`` over any of ``inputs``."""
    if str(output) == "-":
        return
    out = Path(output)
    for inp in inputs:
        if str(inp) == "-":
            continue
        src = Path(inp)
        same = out.resolve() == src.resolve()
        if not same and out.exists() and src.exists():
            with contextlib.suppress(OSError):
                same = os.path.samefile(out, src)
        if same:
            raise ConfigError(
                f"{output}: refusing to overwrite an input file.", "Choose another -o path."
            )


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it over ``path`` on success only.

    ``path == "-"`` writes to stdout instead.
    """
    if str(path) == "-":
        stream = sys.stdout if "b" not in mode else sys.stdout.buffer
        yield stream
        stream.flush()
        return
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.exists():
        raise ConfigError(f"{path}: directory {directory} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        kwargs = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` atomically to ``path`` (or stdout for ``-``)."""
    with atomic_writer(path) as fh:
        fh.write(text)


def nan_to_none(obj):
    """``obj`` ready for strict JSON: NaN and ±inf become None and numpy scalars Python ones,
    recursively through dicts and lists (pruning records in model files, comparisons)."""
    import numpy as np

    if isinstance(obj, dict):
        return {k: nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [nan_to_none(v) for v in obj]
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, np.generic):
        return nan_to_none(obj.item())
    return obj


def write_frame(frame, fh: IO[str], *, header: bool = True) -> None:
    """``frame.to_csv(fh, index=False, header=header, lineterminator="\\n")``, faster.

    Values are formatted as pandas formats them (floats by numpy's shortest round-trip
    ``astype(str)``, NaN as ''), quoted as pandas quotes them (QUOTE_MINIMAL), but each
    distinct value is formatted once, and when the rows after their first column (``row``)
    take few distinct values — a leaf method's rows are one per (leaf, actual class) —
    each distinct tail is formatted once: formatting is most of the cost of writing a
    million rows. Frames with other column types (booleans, missing labels, ...) are left
    to pandas.
    """
    import csv

    import numpy as np
    import pandas as pd

    kinds = []
    for name in frame.columns:
        values = frame[name].to_numpy()
        kind = values.dtype.kind
        if kind == "O" and pd.api.types.infer_dtype(values, skipna=False) != "string":
            kind = "?"
        if kind not in "fiuO":
            frame.to_csv(fh, index=False, header=header, lineterminator="\n")
            return
        kinds.append(kind)
    writer = csv.writer(fh, lineterminator="\n")
    if header:
        writer.writerow([str(c) for c in frame.columns])
    if len(frame) == 0:
        return
    plain = all(not any(ch in "\x00".join(pd.unique(frame[name].to_numpy())) for ch in ',"\r\n')
                for name, kind in zip(frame.columns, kinds, strict=True) if kind == "O")
    if not plain or frame.shape[1] < 2:
        writer.writerows(zip(*_text_columns(frame), strict=True))
        return
    # nothing to quote: plain joins, twice the csv module's speed
    combos = _repeated_tails(frame)
    if combos is not None:  # few distinct rows after the first column
        codes, first = combos
        head = _text_columns(frame.iloc[:, :1])[0]
        tails = np.array([",".join(r) for r in zip(*_text_columns(frame.iloc[first, 1:]),
                                                 strict=True)], dtype=object)[codes].tolist()
        fh.write("\n".join(map(",".join, zip(head, tails, strict=True))) + "\n")
    else:
        fh.write("\n".join(map(",".join, zip(*_text_columns(frame), strict=True))) + "\n")


def _text_columns(frame) -> list[list[str]]:
    """Every column as the strings pandas' to_csv writes (before quoting)."""
    import numpy as np

    out = []
    for name in frame.columns:
        values = frame[name].to_numpy()
        if values.dtype.kind == "f":
            # distinct by bits: -0.0 and 0.0 are written differently
            bits = values.astype(np.float64).view(np.uint64)
            uniques, index, inverse = np.unique(bits, return_index=True, return_inverse=True)
            if uniques.size * 4 < values.size:
                text = values[index].astype(str)[inverse]
            else:
                text = values.astype(str)
            nan = np.isnan(values)
            if nan.any():
                text[nan] = ""
            out.append(text.tolist())
        elif values.dtype.kind in "iu":
            out.append(values.astype(str).tolist())
        else:
            out.append(values.tolist())
    return out


def _repeated_tails(frame):
    """(codes, first rows) if the rows without their first column take few distinct values:
    ``codes[i]`` numbers row i's values, ``first[c]`` is the first row with values ``c``;
    else None. Exact: every column is factorised (floats by their bits) and the codes
    combined, so no two different rows share a code.
    """
    import numpy as np
    import pandas as pd

    n = len(frame)
    combined = np.zeros(n, dtype=np.int64)
    for name in frame.columns[1:]:
        values = frame[name].to_numpy()
        if values.dtype.kind == "f":
            values = values.astype(np.float64).view(np.uint64)  # -0.0 is not 0.0 here
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        combined, groups = pd.factorize(combined * (uniques.size + 1) + codes)
        if groups.size * 8 > n:
            return None
    first = np.zeros(groups.size, dtype=np.int64)
    first[combined[::-1]] = np.arange(n)[::-1]  # the first row of every group
    return combined, first
