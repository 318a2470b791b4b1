"""The Venn forest's split search with nominal tables shared among the nodes that differ
only by x.

The trees that :func:`~treecert.transductive.venn_forest.grow_forest` grows for one batch
of (x, j) hold many nodes whose training rows and weights are the same and which differ
only by the test row x they hold: every job's root (all of D, plus its own x), and, down x's
paths, the K labels of one x until their tests part (x's weight is 1 whatever its label, so
C4.5's fractions of the other rows are the same). The grower's nominal search tallies each
node's (attribute, value, class) weights over its rows (``bincount``); that tally is most of
the search, and here it is taken once per distinct (rows, weights) of training rows and x
is added to it.

Exactness: ``bincount`` adds a node's rows in order, from zero, into each cell; x is the
node's last row (its index, n + job, is above every training row's), so the cell x falls
in is the training rows' sum plus x's weight — the same two operands in the same order as
the table's value plus x's weight. Every count, hence every gain and every chosen test, is
the grower's bit for bit (``tests/test_venn_missing.py`` compares whole Venn matrices with
``engine=naive``). Numeric columns are searched as the grower searches them (x sits among
the rows of its value, so a shared cumulative sum would add in another order).
"""

from __future__ import annotations

import numpy as np

from treecert.transductive import budget
from treecert.tree.segments import _Batch
from treecert.tree.split_search import SplitFinder

#: Bytes of shared nominal tables kept across the calls of one forest's growth.
TABLE_BYTES = 32 * budget.MIB


class SharedTallyFinder(SplitFinder):
    """A split finder whose nominal tally is shared among nodes with the same training
    rows and weights (module docstring); rows at or above ``n_train`` are test rows, at
    most one per node and last."""

    @classmethod
    def of(cls, finder: SplitFinder, n_train: int) -> SharedTallyFinder:
        """This finder over the same arrays and settings as ``finder``."""
        new = cls.__new__(cls)
        new.__dict__.update(vars(finder))
        new.n_train = int(n_train)
        new.tables = budget.ByteLRU(TABLE_BYTES)
        return new

    def _nominal_tally(self, b: _Batch, g0: int, g1: int) -> tuple[np.ndarray, np.ndarray]:
        lo = b.seg[g0]
        seg = b.seg[g0:g1 + 1] - lo
        rows, w = b.rows[lo:b.seg[g1]], b.w[lo:b.seg[g1]]
        we = w if b.we is None else b.we[lo:b.seg[g1]]
        G = g1 - g0
        last = np.maximum(seg[1:] - 1, 0)
        has_x = (seg[1:] > seg[:-1]) & (rows[last] >= self.n_train) if rows.size else \
            np.zeros(G, dtype=bool)
        end = seg[1:] - has_x
        keys = [rows[seg[g]:end[g]].tobytes() + w[seg[g]:end[g]].tobytes() for g in range(G)]
        new: dict[bytes, int] = {}
        for g, key in enumerate(keys):
            if key not in self.tables and key not in new:
                new[key] = g
        if new:
            part = list(new.values())
            lens = end[part] - seg[:-1][part]
            take = np.concatenate([np.arange(seg[g], end[g]) for g in part])
            sub = _Batch(np.concatenate([[0], np.cumsum(lens)]), rows[take], w[take],
                         None if b.we is None else we[take], None, None, None)
            counts, elig = super()._nominal_tally(sub, 0, len(part))
            for i, key in enumerate(new):
                self.tables.put(key, (counts[i], elig[i]), counts[i].nbytes + elig[i].nbytes
                                + len(key), shrink=False)
        got = [self.tables.get(key) for key in keys]
        counts = np.stack([c for c, _ in got])
        elig = np.stack([e for _, e in got])
        self.tables.shrink()  # after this call's lookups: one call's tables may pass it
        xg = np.flatnonzero(has_x)
        if xg.size:  # x's weight added last to its (attribute, value, class) cells
            xr = rows[last[xg]]
            codes = self.X[np.ix_(xr, self.nominal_idx)]
            g_, j_ = np.nonzero(~np.isnan(codes))
            v_ = codes[g_, j_].astype(np.int64)
            node = xg[g_]
            counts[node, j_, v_, self.y[xr[g_]]] += w[last[xg]][g_]
            elig[node, j_, v_] += we[last[xg]][g_]
        return counts, elig
