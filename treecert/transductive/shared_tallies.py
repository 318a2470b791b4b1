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
What the scores read of the tallies — per-value N·impurity and weight (elementwise over
the class axis), the class weights of the known values (summed over the values, one after
the other) — is taken once per group as well and recomputed only where x enters (its cells;
for the sums over values, x's class in its columns): a group's numbers are each node's. With
entropy, x ln x too is taken once per group — of its counts, its values' weights and its known
parts' class weights — and only x's class (x's cell) recomputed per node: x ln x is elementwise,
so every sum over classes adds the very terms a node's own gets. The nodes'
(G, q, V, K) counts are never built (the one-vs-rest scores of binary splits excepted).
Everything else is the grower's own scoring
(:meth:`treecert.tree.split_search.SplitFinder._nominal_scores`, through its hooks), on the
same chunks of nodes.

The numeric columns' sorts are shared the same way (:meth:`SharedTallies.sorted_batch`,
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

from treecert.transductive.node_search import _groups, _segments, sorted_values
from treecert.tree.impurity import _entropy_of_terms, _impurity_last, _lastsum, _xlogx
from treecert.tree.segments import _Batch, _ranges, flat_nonzero, offsets
from treecert.tree.split_search import SplitFinder, sum_over_values


class SharedTallies(SplitFinder):
    """A :class:`SplitFinder` (the same state) whose nominal tallies are taken once per
    distinct set of training rows among the nodes of a batch (module docstring). A node's
    "x" is its last row when that row is ineligible; nodes without one share too."""

    @classmethod
    def of(cls, finder: SplitFinder) -> SharedTallies:
        """The finder ``finder`` (its arrays, not copies) with shared tallies; its nominal
        codes made on ``finder`` itself first, so that every such copy shares them."""
        if finder.nominal_idx.size:
            finder.nominal_codes()
        out = cls.__new__(cls)
        out.__dict__.update(finder.__dict__)
        out._chunk = None
        return out

    def sorted_batch(self, rows: np.ndarray, seg: np.ndarray, rank: np.ndarray,
                     keys: np.ndarray | None = None):
        """(S, V, Y) of the batch of nodes ``rows``/``seg``, as ``evaluate_nodes`` builds
        them: :meth:`shared_sort`, and each sorted entry's value and class
        (:func:`~treecert.transductive.node_search.sorted_values`)."""
        S = self.shared_sort(rows, seg, rank, keys)
        V, Y, _ = sorted_values(self, rows, S)
        return S, V, Y

    def shared_sort(self, rows: np.ndarray, seg: np.ndarray, rank: np.ndarray,
                    keys: np.ndarray | None = None) -> np.ndarray:
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
        group, reps = _row_groups(keys, lo, end, lambda a, e: rows[a:e].tobytes())
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
        gx = flat_nonzero(has_x)
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

    def _nominal_tally(self, b: _Batch, g0: int, g1: int) -> tuple[_Chunk, np.ndarray]:
        """The grower's tallies of nodes g0..g1-1: one per group of equal training rows and
        weights (found by their bytes, one node per key where the batch names its nodes'
        contents), x's weight added to its cells — held per group (:class:`_Chunk`, which
        answers the scores' hooks) —, and every node's eligible weights for binary splits
        (None for multiway tests, whose admissibility reads the groups')."""
        seg = b.seg[g0:g1 + 1]
        lo, hi = seg[:-1], seg[1:]
        last = b.rows[np.where(hi > lo, hi - 1, 0)]  # rows exist: a nominal search ran
        has_x = self._holds_x(b.rows, lo, hi)
        end = hi - has_x  # the node's training rows: lo..end
        group, r = _row_groups(None if b.keys is None else b.keys[g0:g1], lo, end,
                               lambda a, e: (b.rows[a:e].tobytes(), b.w[a:e].tobytes()))
        lens = end[r] - lo[r]
        take = _ranges(lo[r], lens)
        rseg = offsets(lens)
        # the groups' rows as a batch (what the tally reads of one: no sums, no sorts);
        # training rows only — x, a node's one ineligible row, is left out —, so their
        # eligible weights are their weights (we None)
        sub = SimpleNamespace(seg=rseg, rows=b.rows.take(take), w=b.w.take(take), we=None,
                              node=np.repeat(np.arange(r.size), lens))
        shared, shared_elig = super()._nominal_tally(sub, 0, r.size)
        # bincount of no entries (every shared row unknown here) is int64 zeros: x's float
        # weight is added below, so take float64 zeros (the same values)
        shared = shared.astype(float, copy=False)
        # every node's eligible weights (x's: 0) only for the one-vs-rest scores; the
        # multiway admissibility reads the groups' (_multiway_ok)
        elig = (shared_elig.astype(float, copy=False).take(group, axis=0)
                if self.params.binary_splits else None)
        # x's cells: (node, column, value) where its value is known, its class and weight
        gx = flat_nonzero(has_x)
        xg = xj = xv = xy = np.empty(0, np.int64)
        xw = np.empty(0)
        if gx.size:
            xr = last[gx]
            codes = self.X.take(xr, axis=0).take(self.nominal_idx, axis=1)
            xj, gi = np.nonzero(~np.isnan(codes.T))  # by column (_Chunk.per_node reads them so)
            xg, xv, xy = gx[gi], codes[gi, xj].astype(np.int64), self.y[xr[gi]]
            xw = b.w[hi[xg] - 1]
        self._chunk = _Chunk.of(shared, group, (xg, xj, xv, xy, xw),
                                self.params.criterion == "gini",
                                self.params.criterion == "gain_ratio", shared_elig)
        return self._chunk, elig

    # The hooks of the nominal scores, answered from the last tally (module docstring); any
    # other counts (no caller passes any) are scored directly: the same numbers either way.
    def _node_counts(self, counts) -> np.ndarray:
        return counts.node_counts() if isinstance(counts, _Chunk) else counts

    def _known_counts(self, counts) -> np.ndarray:
        if isinstance(counts, _Chunk):
            return counts.known_counts()
        return super()._known_counts(counts)

    def _known_impurity(self, counts, gini: bool,
                        known_counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(counts, _Chunk) and counts.known_imp is not None:
            return counts.known_w, counts.known_imp
        return super()._known_impurity(counts, gini, known_counts)

    def _multiway_ok(self, counts, elig: np.ndarray, js: slice | np.ndarray,
                     nv: int) -> np.ndarray:
        if isinstance(counts, _Chunk) and counts.shared_elig is not None:
            # per group: x's eligible weight is 0, so a node's is its group's
            return super()._multiway_ok(None, counts.shared_elig, js, nv).take(counts.group,
                                                                               axis=0)
        return super()._multiway_ok(counts, elig, js, nv)

    def _value_impurity(self, counts, js: slice | np.ndarray, nv: int,
                        gini: bool) -> np.ndarray:
        if isinstance(counts, _Chunk):
            return counts.per_node("value_imp", js, nv)
        return super()._value_impurity(counts, js, nv, gini)

    def _value_weights(self, counts, js: slice | np.ndarray, nv: int) -> np.ndarray:
        if isinstance(counts, _Chunk):
            return counts.per_node("value_w", js, nv)
        return super()._value_weights(counts, js, nv)

    def _value_weight_terms(self, counts, js: slice | np.ndarray, nv: int) -> np.ndarray:
        if isinstance(counts, _Chunk) and counts.value_wlogw is not None:
            return counts.per_node("value_wlogw", js, nv)
        return super()._value_weight_terms(counts, js, nv)


def _row_groups(keys: np.ndarray | None, lo: np.ndarray, end: np.ndarray,
                content) -> tuple[np.ndarray, np.ndarray]:
    """Each node's group among nodes of equal ``content(lo, end)`` (their training rows:
    bytes), numbered in order of first appearance, and each group's first node, as
    :func:`~treecert.transductive.node_search._groups`. With ``keys`` (equal keys: equal
    contents, :class:`~treecert.tree.segments._Batch`), only one node per key is read."""
    if keys is None:
        return _groups([content(a, e) for a, e in zip(lo.tolist(), end.tolist(), strict=True)])
    of_key, key_reps = _groups(keys.tolist())  # one node per key, the first
    group, reps = _groups([content(a, e) for a, e in zip(lo[key_reps].tolist(),
                                                          end[key_reps].tolist(), strict=True)])
    return group[of_key], key_reps[reps]


# Chunks of at most this many (node, column, value) cells gather every node's numbers of
# all columns at once (:meth:`_Chunk.per_node`): a call per width costs more there.
_SMALL_CHUNK = 2**14


class _Chunk(NamedTuple):
    """A tally of G nodes held per group of nodes with the same training rows: the groups'
    class weights per (column, value) ``shared`` (R, q, V, K), each node's ``group``, x's
    cells ``x_cells`` (node, column, value, class, weight; by column), and what the scores
    read: N·impurity, weight and w ln w per (column, value) as pairs (per group (R, q, V),
    at x's cells (#x cells,)) — a node's numbers are its group's but at its x's cells, and
    every node's are gathered only for the columns a score reads (:meth:`per_node`: each
    width apart, not padded to V) —; the weight and N·impurity of the known values per
    (node, column), found per group and redone where x enters; and the groups' eligible
    weights, which x (weight 0) never changes, so that which multiway tests are admissible
    is found once per group. Every node's class weights of the known values (G, q, K) are
    built only for the scores that read them (:meth:`known_counts`)."""

    shared: np.ndarray
    group: np.ndarray
    x_cells: tuple
    value_imp: tuple
    value_w: tuple | None
    known_shared: np.ndarray  # the groups' class weights of the known values (R, q, K)
    x_known: np.ndarray  # x's class's weight of the known values in each of x's cells
    known_w: np.ndarray | None = None
    known_imp: np.ndarray | None = None
    value_wlogw: tuple | None = None
    shared_elig: np.ndarray | None = None  # the groups' eligible weights (R, q, V)
    gathered: dict | None = None  # small chunks: every node's (G, q, V), by name

    @classmethod
    def of(cls, shared: np.ndarray, group: np.ndarray, x_cells: tuple, gini: bool,
           ratio: bool, shared_elig: np.ndarray | None = None) -> _Chunk:
        # gathers and stores by flat indices (``take``/``put``: several times faster than
        # indexing with arrays, the same numbers)
        xg, xj, xv, xy, xw = x_cells
        R, q, V, K = shared.shape
        at = np.arange(xg.size)
        gx = group[xg]
        x_col = gx * q + xj  # x's (group, column) among R·q, and (node, column) among G·q
        node_col = xg * q + xj
        x_cell = x_col * V + xv  # ... and with x's value
        # x's cells: the group's counts, x's weight added to its class — the grower's cell
        # sums (x is the node's last row: added last)
        cells = shared.reshape(R * q * V, K).take(x_cell, axis=0)  # (#x cells, K)
        cells[at, xy] += xw
        # the known values' class weights, summed over the values one after the other as
        # the grower sums them (sum_over_values): only x's class differs where x enters
        known_shared = sum_over_values(shared)  # (R, q, K)
        x_class = shared.reshape(-1).take(  # (#x cells, V): x's class per value
            (x_col * (V * K) + xy)[:, None] + np.arange(0, V * K, K))
        x_class[at, xv] += xw
        x_known = sum_over_values(x_class[:, :, None])[:, 0]
        if gini:  # (no split information with Gini)
            value_imp = (_impurity_last(shared, gini), _impurity_last(cells, gini))
            return cls(shared, group, x_cells, value_imp, None, known_shared, x_known,
                       shared_elig=shared_elig, gathered={})
        # entropy: _impurity_last's operations, x ln x taken once per group (elementwise:
        # the same numbers) and only for x's class where x enters
        xl = _xlogx(shared)
        w_shared, w_cells = _lastsum(shared), _lastsum(cells)
        wl_shared, wl_cells = _xlogx(w_shared), _xlogx(w_cells)
        xl_cells = xl.reshape(R * q * V, K).take(x_cell, axis=0)
        xl_cells[at, xy] = _xlogx(cells[at, xy])
        value_imp = (_entropy_of_terms(wl_shared, xl), _entropy_of_terms(wl_cells, xl_cells))
        # the values' weights and their w ln w (the split information's terms)
        value_w = (w_shared, w_cells)
        value_wlogw = (wl_shared, wl_cells) if ratio else None
        # the known values' weight and N·impurity: a group's (R, q) where x's value is
        # unknown; where x enters, its row of class weights with x's class replaced (each
        # row summed alone, as over every node's (G, q, K): the same numbers)
        xl_known = _xlogx(known_shared)
        known_w_shared = _lastsum(known_shared)
        known_w = known_w_shared.take(group, axis=0)
        known_imp = _entropy_of_terms(_xlogx(known_w_shared), xl_known).take(group, axis=0)
        x_rows = known_shared.reshape(R * q, K).take(x_col, axis=0)  # (#x cells, K)
        x_rows[at, xy] = x_known
        x_w = _lastsum(x_rows)
        xl_rows = xl_known.reshape(R * q, K).take(x_col, axis=0)
        xl_rows[at, xy] = _xlogx(x_known)
        known_w.reshape(-1)[node_col] = x_w
        known_imp.reshape(-1)[node_col] = _entropy_of_terms(_xlogx(x_w), xl_rows)
        return cls(shared, group, x_cells, value_imp, value_w, known_shared, x_known, known_w,
                   known_imp, value_wlogw, shared_elig, {})

    def per_node(self, name: str, js: slice | np.ndarray, nv: int) -> np.ndarray:
        """Every node's per-value numbers (G, len(js), nv) of the columns ``js`` (all of
        ``nv`` values) from the pair ``name`` (per group, at x's cells): its group's, with
        its x's cells in place. A small chunk gathers all columns once (fewer calls); a
        large one only the columns asked for, x's cells of ``js`` found by bounds (they are
        listed by column), not by a pass over all of them."""
        shared_values, x_values = getattr(self, name)
        xg, xj, xv, _, _ = self.x_cells
        G, (_, q, V) = self.group.size, shared_values.shape
        if G * q * V <= _SMALL_CHUNK:
            full = self.gathered.get(name)
            if full is None:
                full = shared_values.take(self.group, axis=0)
                full.reshape(-1)[(xg * q + xj) * V + xv] = x_values
                self.gathered[name] = full
            return full[:, js, :nv]
        first = np.searchsorted(xj, np.arange(q + 1))  # x's cells of column j: first[j]..
        if isinstance(js, slice):
            at = np.arange(first[js.start], first[js.stop])
            col, width = xj[at] - js.start, js.stop - js.start
        else:
            at = _ranges(first[js], first[js + 1] - first[js])
            place = np.zeros(q, dtype=np.int64)
            place[js] = np.arange(js.size)
            col, width = place[xj[at]], js.size
        out = shared_values[:, js, :nv].take(self.group, axis=0)
        out.reshape(-1)[(xg[at] * width + col) * nv + xv[at]] = x_values[at]
        return out

    def known_counts(self) -> np.ndarray:
        """Every node's class weights of the known values per column (G, q, K)."""
        xg, xj, _, xy, _ = self.x_cells
        known = self.known_shared.take(self.group, axis=0)
        known[xg, xj, xy] = self.x_known
        return known

    def node_counts(self) -> np.ndarray:
        """Every node's counts (G, q, V, K), for the one-vs-rest scores that read them."""
        xg, xj, xv, xy, xw = self.x_cells
        counts = self.shared.take(self.group, axis=0)
        counts[xg, xj, xv, xy] += xw
        return counts
