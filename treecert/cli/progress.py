"""The progress of predict, evaluate and compare on stderr: a bar (rich) on a terminal;
off one (a batch job's log), predict says a line at most every ``TREECERT_PROGRESS_SECONDS``
(10) seconds, and evaluate and compare a line per unit (:mod:`treecert.cli.evaluate`)."""

from __future__ import annotations

import os
import sys
import time

from treecert.cli.common import _state, stderr_console


class _RowProgress:
    """A progress bar in rows on stderr (a terminal only, not --quiet), with rate and ETA.

    Rows finished inside a chunk are reported by :func:`treecert.parallel.reporting` (the
    transductive methods' per-instance work); the rest of a chunk when it is done. Without
    a known total the total is estimated from the fraction of the input read.
    """

    def __init__(self, description: str, total: int | None, unit: str = "rows") -> None:
        self.total, self.done, self.unit = total, 0, unit
        self.description = description
        self.progress = None
        self.every = None  # seconds between log lines off a terminal (rows only)
        self.fraction = 0.0  # of the input read, when the total is not known
        if not _state["quiet"] and not sys.stderr.isatty() and unit == "rows":
            self.every = _log_interval()
            self.started = self.said = time.monotonic()
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
        if self.every is not None and rows and time.monotonic() - self.said >= self.every:
            self._log_line()
        if self.progress is not None:
            speed = self.progress.tasks[0].speed
            self.progress.update(self.task, completed=self.done,
                                 rate=f"{speed:,.1f} {self.unit}/s" if speed else "")

    def _log_line(self) -> None:
        """One line for a log: rows done (of the total, when known), rate, time left."""
        from treecert.cli.common import say

        self.said = now = time.monotonic()
        rate = self.done / max(now - self.started, 1e-9)
        line = f"{self.description}: {self.done:,} {self.unit}"
        left = None
        if self.total:
            line += f" of {self.total:,} ({100 * self.done / self.total:.0f}%)"
            left = (self.total - self.done) / rate if rate > 0 else None
        elif 0 < self.fraction < 1:
            line += f" ({100 * self.fraction:.0f}% of the input read)"
            left = (now - self.started) * (1 - self.fraction) / self.fraction
        line += f", {rate:,.1f} {self.unit}/s"
        if left is not None and left > 0:
            line += f", about {_duration(left)} left"
        say(line)

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
            self.fraction = chunk.fraction
            if self.progress is not None and self.total is None and chunk.fraction > 0:
                # rows so far / fraction of the file read so far: the estimated total
                seen = before + chunk.data.n_samples
                self.progress.update(self.task, total=max(seen, round(seen / chunk.fraction)))
            tracking = self.progress is not None or self.every is not None
            with reporting(self.advance if tracking else None):
                yield
            self.advance(chunk.data.n_samples - (self.done - before))

        return scope()


def _log_interval() -> float:
    """Seconds between progress lines off a terminal: ``TREECERT_PROGRESS_SECONDS`` (10)."""
    try:
        return max(0.0, float(os.environ.get("TREECERT_PROGRESS_SECONDS", "10")))
    except ValueError:
        return 10.0


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "under 1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
