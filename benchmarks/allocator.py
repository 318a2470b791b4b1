"""The allocator the benchmarks time under: by default the command line's.

Every ``treecert`` command sets glibc's malloc thresholds at its entry point
(:data:`treecert.cli.main.HOLD_BYTES`: freed memory stays in the heap for reuse), so a
benchmark that stands for ``treecert evaluate`` or ``predict`` sets them too;
``--allocator default`` times what a library caller (a notebook, the estimator) gets with
glibc's own dynamic thresholds, under which a batch's temporaries of a few MB are handed
back and faulted in again page by page (vote's TPCE CV: ~10 000 faults, ~20 % of its CPU
time; BENCHMARKS.md, session 33). An older checkout timed with ``--before`` needs
``HOLD_BYTES`` (2df9a7b or later) unless the default is chosen. Nothing changes off glibc.
"""

from __future__ import annotations

import argparse

CHOICES = ("command-line", "default")


def add_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--allocator", choices=CHOICES, default="command-line",
                    help="glibc's malloc thresholds: the command line's (what `treecert "
                    "evaluate` runs with; the default) or glibc's own (a library caller's)")


def apply(choice: str) -> None:
    """Set the thresholds of ``choice`` in this process (before anything is timed)."""
    if choice == "command-line":
        from treecert.cli.main import HOLD_BYTES
        from treecert.parallel import set_malloc_thresholds

        set_malloc_thresholds(HOLD_BYTES, HOLD_BYTES)
