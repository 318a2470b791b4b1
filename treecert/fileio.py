"""Writing outputs safely: atomically, and never over an input file.

A batch job killed mid-write must not leave a half-written CSV or model that a later step
reads as complete, so every output goes to a temporary file in the target directory and is
renamed into place only when complete.
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


def write_frame(frame, fh: IO[str], *, header: bool = True) -> None:
    """``frame.to_csv(fh, index=False, header=header, lineterminator="\\n")``, faster.

    Float columns are formatted as pandas formats them (numpy's shortest round-trip
    ``astype(str)``, '' for NaN), but each distinct value only once: a leaf method's
    probabilities take few values, and formatting is most of the cost of writing a million
    rows. Rows then go through the csv module with pandas' quoting (QUOTE_MINIMAL). Frames
    with other column types (missing labels, booleans, ...) are left to pandas.
    """
    import csv

    import numpy as np
    import pandas as pd

    columns, texts = [], []
    for name in frame.columns:
        values = frame[name].to_numpy()
        kind = values.dtype.kind
        if kind == "f":
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
            columns.append(text.tolist())
        elif kind in "iu":
            columns.append(values.astype(str).tolist())
        elif kind == "O" and pd.api.types.infer_dtype(values, skipna=False) == "string":
            columns.append(values.tolist())
            texts.append(values)
        else:
            frame.to_csv(fh, index=False, header=header, lineterminator="\n")
            return
    writer = csv.writer(fh, lineterminator="\n")
    if header:
        writer.writerow([str(c) for c in frame.columns])
    plain = all(not any(ch in "\x00".join(pd.unique(values)) for ch in ',"\r\n')
                for values in texts)
    if plain and len(columns) > 1:  # nothing to quote: plain joins, twice the csv module's speed
        if not columns[0]:
            return
        combos = _repeated_tails(frame)
        if combos is not None:  # few distinct rows after the first column (a leaf method)
            codes, first = combos
            tails = np.array([",".join(col[i] for col in columns[1:]) for i in first],
                             dtype=object)[codes].tolist()
            fh.write("\n".join(map(",".join, zip(columns[0], tails, strict=True))) + "\n")
        else:
            fh.write("\n".join(map(",".join, zip(*columns, strict=True))) + "\n")
    else:
        writer.writerows(zip(*columns, strict=True))


def _repeated_tails(frame):
    """(codes, first rows) if the rows without their first column take few distinct values:
    ``codes[i]`` numbers row i's values, ``first[c]`` is a row with values ``c``; else None.

    Rows are grouped by a 64-bit hash and then checked column by column, so a collision
    cannot merge different rows (it only means no grouping is used).
    """
    import numpy as np
    import pandas as pd

    tail = frame.iloc[:, 1:]
    hashes = pd.util.hash_pandas_object(tail, index=False).to_numpy()
    codes, uniques = pd.factorize(hashes)
    if uniques.size * 8 > len(frame):
        return None
    first = np.zeros(uniques.size, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(frame))[::-1]  # the first row of every group
    for name in tail.columns:
        values = tail[name].to_numpy()
        if values.dtype.kind == "f":
            values = values.astype(np.float64).view(np.uint64)  # -0.0 is not 0.0 here
        same = values == values[first[codes]]
        if not same.all():
            return None
    return codes, first
