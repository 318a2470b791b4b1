"""The leaf forest: trees grown on training rows alone, level by level, leaves only.

For the Venn machine, the trees on D ∪ {(x, c)} also need the subtrees without x that hang
off x's paths; :class:`LeafForest` grows them all together, a level per round, in the same
batched split searches as the paths (:mod:`treecert.transductive.node_search`).
"""

from __future__ import annotations

import numpy as np

from treecert.transductive.node_search import _segments, counts_and_stops
from treecert.tree.grow import entry_branches, split_arrays
from treecert.tree.segments import flat_nonzero


class LeafForest:
    """Trees grown on training rows alone — the subtrees that hang off x's paths — level by
    level, keeping only their leaves (the Venn machine needs nothing else of them).

    Roots may be added at any time; every round, :meth:`open_nodes` settles the nodes that
    stop and hands back the others for a split search, which the caller batches with its
    own (:meth:`~treecert.transductive.batch_engine.BatchEngine.grow_batch` searches x's
    paths in the same call), and :meth:`advance` routes their rows by the tests found.
    Stopping uses the level-wise grower's exact per-node sums, so every tree is
    ``grow(finder, rows, weights, depth=depth)`` (``tests/test_batch_engine.py`` checks its
    leaves).
    """

    def __init__(self, finder) -> None:
        self.finder = finder
        self.K = finder.n_classes
        self._is_nominal = np.zeros(finder.X.shape[1], dtype=bool)
        self._is_nominal[finder.nominal_idx] = True
        self._roots: list[tuple[int, np.ndarray, np.ndarray, int]] = []
        self.rows = np.empty(0, np.int64)
        self.w = np.empty(0)
        self.lens = np.empty(0, np.int64)
        self.depth = np.empty(0, np.int64)
        self.owner = np.empty(0, np.int64)
        self._found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._open = np.empty(0, np.int64)

    def add(self, owner: int, rows: np.ndarray, w: np.ndarray, depth: int) -> None:
        """A tree to grow from training ``rows`` (sorted, no missing values) at ``depth``."""
        self._roots.append((owner, rows, w, depth))

    def open_nodes(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Settle this round's nodes that stop; the others' ``(rows, weights)``."""
        if self._roots:
            self.rows = np.concatenate([self.rows, *[r for _, r, _, _ in self._roots]])
            self.w = np.concatenate([self.w, *[v for _, _, v, _ in self._roots]])
            self.lens = np.concatenate([self.lens, [r.size for _, r, _, _ in self._roots]])
            self.depth = np.concatenate([self.depth, [d for *_, d in self._roots]])
            self.owner = np.concatenate([self.owner, [o for o, *_ in self._roots]])
            self.lens, self.depth, self.owner = (a.astype(np.int64) for a in
                                                 (self.lens, self.depth, self.owner))
            self._roots = []
        self.seg, self.node = _segments(self.lens)
        self.counts, stop = counts_and_stops(self.finder, self.rows, self.w, self.seg,
                                             self.node, self.depth)
        self._keep_leaves(stop)
        self._open = flat_nonzero(~stop)
        seg, rows, w = self.seg, self.rows, self.w
        return [(rows[seg[g]:seg[g + 1]], w[seg[g]:seg[g + 1]]) for g in self._open]

    def _keep_leaves(self, leaf: np.ndarray) -> None:
        leaf = leaf & (self.lens > 0)  # an empty branch of a multiway test holds no example
        self._found.append((self.owner[leaf], self.counts[leaf], self.lens[leaf].astype(float)))

    def advance(self, splits: list) -> None:
        """Route the open nodes' rows by their tests (None: the node is a leaf), all nodes'
        entries at once (the grower's :func:`~treecert.tree.grow.entry_branches`)."""
        G = self.lens.size
        feature, threshold, n_br, value_branch = split_arrays(G, self._open.tolist(), splits)
        unsplit = np.zeros(G, dtype=bool)
        unsplit[self._open] = True
        unsplit &= feature < 0
        self._keep_leaves(unsplit)
        parents = flat_nonzero(feature >= 0)
        if not parents.size:
            self.rows, self.w = self.rows[:0], self.w[:0]
            self.lens, self.depth, self.owner = self.lens[:0], self.depth[:0], self.owner[:0]
            return
        branch = entry_branches(self.finder.X, self._is_nominal, self.rows, self.node, G,
                                feature, threshold, n_br, value_branch)[0]
        width = int(n_br.max())
        moving = flat_nonzero(branch >= 0)
        key = self.node[moving] * width + branch[moving]
        order = moving[np.argsort(key, kind="stable")]  # parent-major, rows kept in order
        slots = parents[:, None] * width + np.arange(width)[None, :]
        slots = slots[np.arange(width)[None, :] < n_br[parents][:, None]]
        parent = slots // width
        self.lens = np.bincount(key, minlength=self.lens.size * width)[slots]
        self.owner, self.depth = self.owner[parent], self.depth[parent] + 1
        self.rows, self.w = self.rows[order], self.w[order]

    @property
    def growing(self) -> bool:
        return bool(self._roots) or self.lens.size > 0

    def leaves(self, n_owners: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per owner id: ``(counts (L, K), n_rows (L,))`` of its leaves, breadth-first."""
        own = np.concatenate([o for o, _, _ in self._found] + [np.empty(0, np.int64)])
        cnt = np.concatenate([c for _, c, _ in self._found] + [np.empty((0, self.K))])
        num = np.concatenate([n for _, _, n in self._found] + [np.empty(0)])
        by_owner = np.argsort(own, kind="stable")
        bounds = np.searchsorted(own[by_owner], np.arange(n_owners + 1))
        return [(cnt[by_owner[bounds[i]:bounds[i + 1]]], num[by_owner[bounds[i]:bounds[i + 1]]])
                for i in range(n_owners)]
