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
