"""The progress bar of predict, evaluate and compare (rich, on stderr)."""

from __future__ import annotations

import sys

from treecert.cli.common import _state, stderr_console


class _RowProgress:
    """A progress bar in rows on stderr (a terminal only, not --quiet), with rate and ETA.

    Rows finished inside a chunk are reported by :func:`treecert.parallel.reporting` (the
    transductive methods' per-instance work); the rest of a chunk when it is done. Without
    a known total the total is estimated from the fraction of the input read.
    """

    def __init__(self, description: str, total: int | None, unit: str = "rows") -> None:
        self.total, self.done, self.unit = total, 0, unit
        self.progress = None
        if not _state["quiet"] and sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), console=stderr_console(),
                transient=True)
            self.task = self.progress.add_task(description, total=total, rate="")

    def __enter__(self) -> _RowProgress:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def advance(self, rows: int) -> None:
        self.done += rows
        if self.progress is not None:
            speed = self.progress.tasks[0].speed
            self.progress.update(self.task, completed=self.done,
                                 rate=f"{speed:,.1f} {self.unit}/s" if speed else "")

    def set(self, done: int, total: int) -> None:
        """Absolute progress (evaluate/compare: units done of total)."""
        if self.progress is not None:
            self.progress.update(self.task, total=total)
        self.advance(done - self.done)

    def chunk(self, chunk):
        """Context for scoring one chunk: counts its rows, in pieces where it can."""
        import contextlib

        from treecert.parallel import reporting

        @contextlib.contextmanager
        def scope():
            before = self.done
            if self.progress is not None and self.total is None and chunk.fraction > 0:
                # rows so far / fraction of the file read so far: the estimated total
                seen = before + chunk.data.n_samples
                self.progress.update(self.task, total=max(seen, round(seen / chunk.fraction)))
            with reporting(self.advance if self.progress is not None else None):
                yield
            self.advance(chunk.data.n_samples - (self.done - before))

        return scope()
