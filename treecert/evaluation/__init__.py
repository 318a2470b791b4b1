"""Experiments: evaluation protocols (k-fold, leave-one-out, folds files, test sets), the
metrics of the four papers, statistics and comparison tables, plots, per-unit records for
resuming and sharding, and the per-instance predictions table.

Runs any certainty method through the one :class:`~treecert.methods.base.Method` interface.
May import :mod:`treecert.methods` and everything below it, never :mod:`treecert.api` or
:mod:`treecert.cli`.
"""
