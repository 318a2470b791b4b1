"""Nominal tallies and numeric sorts shared among the nodes of many jobs: one ``bincount``
and one sort per distinct set of training rows, not one per (x, c).

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

The numeric columns' sorts are shared the same way (:meth:`SharedTallies.shared_sort`,
which :func:`~treecert.transductive.node_search.choose_tests` uses for such a finder): each
column is sorted once per distinct set of training rows and each node's x put in at its
place — the very permutation the per-node sort gives, as value ranks are unique. The class
cumsums along the sorted columns stay per node: x's class weight enters them at x's
position, and with fractional weights the sums after it are not the shared sums plus x's
weight.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from treecert.transductive.node_search import _segments
from treecert.tree.impurity import _impurity_last
from treecert.tree.segments import _Batch, _ranges
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

    def shared_sort(self, rows: np.ndarray, seg: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """Each node's entries sorted by ``rank`` per numeric column (p, M), as
        ``evaluate_nodes`` sorts them: the training rows of every group of nodes holding the
        same ones sorted once (all groups in one sort per column), and each node's x (its
        last row, ineligible) put in at its place (ranks are unique: there is one).

        Written by gathers and one masked store, not a scatter: a node's training entries
        are its group's in the group's sorted order, shifted to the node's own entries, and
        fill the node's positions other than x's in order."""
        lo, hi = seg[:-1], seg[1:]
        has_x = self._holds_x(rows, lo, hi)
        end = hi - has_x
        group, reps = _groups([rows[a:e].tobytes() for a, e in zip(lo.tolist(), end.tolist(),
                                                                  strict=True)])
        m = (end - lo)[reps]  # each group's training rows
        gseg, gnode = _segments(m)
        grows = rows[_ranges(lo[reps], m)]
        n_all = rank.shape[1]
        key = gnode * n_all + rank[:, grows]  # (p, Σm): by group, then rank
        order = np.argsort(key, axis=1)  # entries of the groups' rows, sorted
        p = rank.shape[0]
        # every node's training entries, in its group's sorted order: the group's entry
        # gseg[g] + t is the node's lo + t
        m_node, g_start = m[group], gseg[group]
        sorted_entries = np.take(order, _ranges(g_start, m_node), axis=1)
        sorted_entries += np.repeat(lo - g_start, m_node)
        S = np.empty((p, rows.size), dtype=np.intp)
        if not has_x.any():
            S[:] = sorted_entries
            return S
        gx = np.flatnonzero(has_x)
        sorted_key = np.take(key, order + (np.arange(p) * key.shape[1])[:, None])
        x_key = group[gx] * n_all + rank[:, rows[hi[gx] - 1]]  # (p, #x)
        x_at = np.stack([np.searchsorted(sorted_key[k], x_key[k]) for k in range(p)]) \
            - g_start[gx] + lo[gx]  # x's position: after its group's rows ranked before it
        training = np.ones(S.shape, dtype=bool)
        training[np.arange(p)[:, None], x_at] = False
        S[training] = sorted_entries.ravel()  # row by row, each node's in order
        S[np.arange(p)[:, None], x_at] = hi[gx] - 1
        return S

    def _holds_x(self, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Per node: whether its last row (if any) is ineligible — its x."""
        last = rows[np.where(hi > lo, hi - 1, 0)] if rows.size else np.zeros(lo.size, np.int64)
        return (hi > lo) & (False if self.eligible is None else ~self.eligible[last])

    def _nominal_tally(self, b: _Batch, g0: int, g1: int) -> tuple[np.ndarray, np.ndarray]:
        """The grower's tallies of nodes g0..g1-1: one per group of equal training rows and
        weights (found by their bytes), x's weight added to its cells."""
        seg = b.seg[g0:g1 + 1]
        lo, hi = seg[:-1], seg[1:]
        last = b.rows[np.where(hi > lo, hi - 1, 0)]  # rows exist: a nominal search ran
        has_x = self._holds_x(b.rows, lo, hi)
        end = hi - has_x  # the node's training rows: lo..end
        group, r = _groups([(b.rows[a:e].tobytes(), b.w[a:e].tobytes())
                            for a, e in zip(lo.tolist(), end.tolist(), strict=True)])
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
        value_imp = _impurity_last(shared, gini)[group]
        value_imp[xg, xj, xv] = _impurity_last(counts[xg, xj, xv], gini)
        self._chunk = _Chunk(counts, group, value_imp)
        return counts, elig

    def _value_impurity(self, counts: np.ndarray, js: slice | np.ndarray, nv: int,
                        gini: bool) -> np.ndarray:
        """The groups' per-value N·impurity, with each node's own where x's value is.
        Counts that are not the last tally's (no caller passes any) are scored directly:
        the same numbers either way."""
        if self._chunk is None or counts is not self._chunk.counts:
            return super()._value_impurity(counts, js, nv, gini)
        return self._chunk.value_imp[:, js, :nv]


class _Chunk(NamedTuple):
    """The last tally: the nodes' counts, each node's group, and the N·impurity of every
    (node, column, value): its group's, or its own in x's cells."""

    counts: np.ndarray
    group: np.ndarray
    value_imp: np.ndarray


def _groups(keys: list) -> tuple[np.ndarray, np.ndarray]:
    """Each item's group among equal ``keys`` (numbered in order of first appearance), and
    each group's first item."""
    firsts: dict = {}
    group = np.array([firsts.setdefault(k, len(firsts)) for k in keys], dtype=np.int64)
    reps = np.zeros(len(firsts), dtype=np.int64)
    reps[group[::-1]] = np.arange(group.size)[::-1]
    return group, reps
