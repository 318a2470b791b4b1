"""Nominal tallies shared among the nodes of many jobs: one ``bincount`` per distinct set of
training rows, not one per (x, c).

The exact batched paths (:mod:`treecert.transductive.exact_paths`) search every node holding
x, for every job (x, c) — with missing values (C4.5's fractional instances) no certificate
applies. Most of a nominal search is the tally: the class weight of every (node, column,
value), a ``bincount`` over rows × columns. But the nodes of a batch repeat their training
rows: the K labels of one x share a node until their tests part (x's class never moves a
row: C4.5's branch fractions come from the branches' *known weights*, which x's value sets,
not its class); at the root every job holds all of D; below it, every x that enters a branch
the same way (its value known and leading there, or unknown) finds the same rows with the
same weights. So the tally is taken once per distinct (training rows, weights) and x is
added to it.

Bit for bit the grower's: ``bincount`` adds a cell's weights one after the other in the
order of the node's rows, and x — the node's last row, ineligible — comes last in every
cell, so the grower's cell sum is fl(training rows' sum + x's weight), which is what adding
x's weight to the shared sum gives; x's eligible weight is 0 (adding 0.0 changes no sum).
The per-value N·impurity is taken once per group as well and recomputed only in x's cells
(it is elementwise over the class axis: a group's numbers are each node's). Everything else
is the grower's own scoring (:meth:`treecert.tree.split_search.SplitFinder._nominal_nodes`),
on the same chunks of nodes: memory stays within twice the grower's (the groups' tallies
beside the nodes').
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from treecert.tree.impurity import _impurity_last
from treecert.tree.segments import _Batch
from treecert.tree.split_search import SplitFinder


class SharedTallies(SplitFinder):
    """A :class:`SplitFinder` (the same state) whose nominal tallies are taken once per
    distinct set of training rows among the nodes of a batch (module docstring). A node's
    "x" is its last row when that row is ineligible; nodes without one share too."""

    @classmethod
    def of(cls, finder: SplitFinder) -> SharedTallies:
        """The finder ``finder`` (its arrays, not copies) with shared tallies."""
        out = cls.__new__(cls)
        out.__dict__.update(finder.__dict__)
        out._chunk = None
        return out

    def _nominal_tally(self, b: _Batch, g0: int, g1: int) -> tuple[np.ndarray, np.ndarray]:
        """The grower's tallies of nodes g0..g1-1: one per group of equal training rows and
        weights (found by their bytes), x's weight added to its cells."""
        seg = b.seg[g0:g1 + 1]
        lo, hi = seg[:-1], seg[1:]
        last = b.rows[np.where(hi > lo, hi - 1, 0)]  # rows exist: a nominal search ran
        has_x = (hi > lo) & (False if self.eligible is None else ~self.eligible[last])
        end = hi - has_x  # the node's training rows: lo..end
        group = np.empty(g1 - g0, dtype=np.int64)
        firsts: dict[tuple[bytes, bytes], int] = {}
        reps: list[int] = []
        for g, (a, e) in enumerate(zip(lo.tolist(), end.tolist(), strict=True)):
            key = (b.rows[a:e].tobytes(), b.w[a:e].tobytes())
            got = firsts.get(key)
            if got is None:
                got = firsts[key] = len(reps)
                reps.append(g)
            group[g] = got
        r = np.array(reps, dtype=np.int64)
        lens = end[r] - lo[r]
        take = np.concatenate([np.arange(lo[g], end[g]) for g in r]) if r.size else \
            np.empty(0, np.int64)
        rseg = np.zeros(r.size + 1, dtype=np.int64)
        np.cumsum(lens, out=rseg[1:])
        # the groups' rows as a batch (what the tally reads of one: no sums, no sorts)
        sub = SimpleNamespace(seg=rseg, rows=b.rows[take], w=b.w[take],
                              we=None if b.we is None else b.we[take],
                              node=np.repeat(np.arange(r.size), lens))
        shared, shared_elig = super()._nominal_tally(sub, 0, r.size)
        # bincount of no entries (every shared row unknown here) is int64 zeros: x's float
        # weight is added below, so take float64 zeros (the same values)
        shared = shared.astype(float, copy=False)
        shared_elig = shared_elig.astype(float, copy=False)
        counts, elig = shared[group], shared_elig[group]
        # x, last in every cell it enters: its weight added to the shared sums
        gx = np.flatnonzero(has_x)
        xg = xj = xv = np.empty(0, np.int64)
        if gx.size:
            xr = last[gx]
            codes = self.X[np.ix_(xr, self.nominal_idx)]
            gi, xj = np.nonzero(~np.isnan(codes))
            xg, xv = gx[gi], codes[gi, xj].astype(np.int64)
            counts[xg, xj, xv, self.y[xr[gi]]] += b.w[hi[xg] - 1]
        # N·impurity per (node, column, value): the groups' once, x's cells apart — all
        # columns in one call each (elementwise over the class axis: the same numbers)
        gini = self.params.criterion == "gini"
        by_col = np.argsort(xj, kind="stable")
        xg, xj, xv = xg[by_col], xj[by_col], xv[by_col]
        self._chunk = _Chunk(counts, group, _impurity_last(shared, gini), xg, xv,
                             _impurity_last(counts[xg, xj, xv], gini),
                             np.searchsorted(xj, np.arange(self.nominal_idx.size + 1)))
        return counts, elig

    def _value_impurity(self, cnt: np.ndarray, j: int, gini: bool) -> np.ndarray:
        """The groups' per-value N·impurity, with each node's own where x's value is.
        Counts that are not the last tally's (no caller passes any) are scored directly:
        the same numbers either way."""
        ch = self._chunk
        if ch is None or cnt.shape[0] != ch.group.size or not np.may_share_memory(cnt, ch.counts):
            return super()._value_impurity(cnt, j, gini)
        out = ch.shared_imp[ch.group, j, :cnt.shape[1]]
        lo, hi = ch.col_ptr[j], ch.col_ptr[j + 1]
        out[ch.xg[lo:hi], ch.xv[lo:hi]] = ch.x_imp[lo:hi]
        return out


@dataclass
class _Chunk:
    """The last tally: the nodes' counts, each node's group, the groups' N·impurity per
    (column, value), x's cells (node, value; by column: ``col_ptr``) and their
    N·impurity."""

    counts: np.ndarray
    group: np.ndarray
    shared_imp: np.ndarray
    xg: np.ndarray
    xv: np.ndarray
    x_imp: np.ndarray
    col_ptr: np.ndarray
