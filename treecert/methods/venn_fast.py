"""The tree Venn machine for a whole batch of test objects at once.

The Venn machine needs, for every test object x and tentative label j, the tree grown on
D ∪ {(x, j)} (x ineligible for thresholds) — B·K trees per batch — and, unlike TPCE, the
forecasts of all n + 1 examples in each.
:class:`treecert.transductive.batch_engine.BatchEngine` grows x's path with
certified-unchanged tests and batched exact searches, and the leaves of the subtrees without
x hanging off it once each (memoised,
:class:`~treecert.transductive.leaf_forest.LeafForest`); on numeric data the nodes holding x
whose training rows many x of a batch search are served from one table per row set
(:mod:`treecert.transductive.sided_search`); this module turns those trees into
Venn matrix rows: the base tree's leaves outside the changed part, the hanging subtrees'
leaves and x's leaf are the groups of examples ("atoms") sharing a forecast, and the rows of
the whole batch are discretised together (:func:`~treecert.methods.venn_types.venn_rows_atoms`).
The forecasts are computed once per leaf (most atoms of a batch are the base tree's leaves),
and with integer weights a row's atoms of one forecast vector — a class's pure leaves — are
merged first (:func:`~treecert.methods.venn_types.merge_atoms`: every class sum is then exact
in any order, so the rows keep their bits; on letter-shaped data 2 000 atoms become ~550).
Where a chunk's jobs change fewer leaves than the base tree has forecast vectors (letter-shaped
data: ~52 changes a job against ~540 vectors), the rows come instead from the base tree's leaves
once and each job's changes — the leaves it drops, its hanging leaves and x's leaf
(:func:`~treecert.methods.venn_types.venn_rows_delta`, exact for the same integer counts).

Results equal the one-(x, j)-at-a-time reference bit for bit (``tests/test_venn.py``).
With unknown values — in D or in x — an example's forecast mixes every leaf it reaches, so
the forecast taxonomy needs whole trees: :mod:`treecert.transductive.venn_forest` grows the
trees of a batch of (x, j) together as one DAG (a node's (rows, weights) grown once however
many trees hold it; nodes that differ only by x share their nominal tallies) and routes every
example down every tree at once; the Venn rows are discretised as above. The first batch's
forest also grows the tree on D, whose size the method reports (:attr:`base_leaves`), so it
is not grown a second time. That too equals the reference bit for bit
(``tests/test_venn_missing.py``).
"""

from __future__ import annotations

import numpy as np

from treecert.methods.venn_types import (
    NonZeroCounts,
    exact_sums,
    merge_atoms,
    venn_rows_atoms,
    venn_rows_delta,
)
from treecert.transductive import label_search, sided_search
from treecert.transductive.batch_engine import BatchEngine
from treecert.transductive.edited_trees import batch_forest, has_edits
from treecert.transductive.venn_forest import Forecasts, grow_forest, n_leaves
from treecert.tree.leaf_estimates import leaf_proba
from treecert.tree.segments import counted_unique, flat_nonzero, offsets, unique_rows

#: Test rows × K jobs × base-tree leaves × K classes per chunk of Venn rows: bounds the
#: atoms' count and forecast arrays (~32 MB each) whatever the number of test rows (the
#: jobs themselves are grown a walk part at a time: :meth:`TreeVennBatch.venn_matrices`).
_ATOMS_PER_BATCH = 1 << 22
#: Test rows × K jobs × (n + 1) examples per batch of whole trees (unknown values): bounds
#: the (job, example) pairs' arrays and a tree level's entries (~1.2 pairs each for C4.5's
#: fractions), and with K classes more the mixed forecasts (at most 2^23 pairs × classes,
#: 64 MB); the trees of one batch share their common nodes.
_PAIRS_PER_BATCH = 1 << 20
#: Venn rows come from the base tree's leaves and each job's changes
#: (:meth:`TreeVennBatch._delta_rows`) while the jobs change fewer leaves than this many
#: times the base tree's forecast vectors a job; else from each job's atoms.
DELTA_CHANGES = 1.0


class TreeVennBatch(BatchEngine):
    """Venn matrices of a batch of test objects from the trees on D ∪ {(x, j)}."""

    #: Leaves of the tree on D, once a forest has grown it alongside the trees of its jobs
    #: (:meth:`_whole_tree_matrices`): the method's size without growing that tree again.
    base_leaves: int | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: the base tree's leaves' forecast vectors, distinct (``unique_rows``), per
        #: (kind, alpha, m) of the delta rows (:meth:`_delta_rows`)
        self._base_vectors: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def walks(self) -> bool:
        """Whether complete rows walk the base tree (complete training data, no collapse or
        cp); elsewhere the forecast taxonomy grows whole trees (edited:
        :func:`~treecert.transductive.edited_trees.batch_forest`) and the leaf taxonomy
        takes the engine's exact paths."""
        return self.base_sub is not None and not has_edits(self.learner)

    #: Whether x's nodes of numeric data are searched through per-R tables
    #: (:mod:`treecert.transductive.sided_search`); None until the first search.
    _sided: bool | None = None

    def _search(self, finder, items: list, rank: np.ndarray, Xq: np.ndarray,
                labels: np.ndarray) -> list:
        """The grower's split of every node holding x, as the engine's: where the label
        search covers numeric data, a training row set R searched before serves every later x
        from its table of gains with x either side of each cut (the Venn machine's x
        reach the same R: many change a base test, or to the same competitor)."""
        if self._sided is None:
            self._sided = (label_search.covers(finder, self.w)
                           and sided_search.covers(finder, self.w))
        if not self._sided:
            return super()._search(finder, items, rank, Xq, labels)
        return sided_search.search_nodes(
            finder, [(rows, w, Xq[job], int(labels[job])) for job, _, rows, w, _, _ in items],
            rank, self._tables, [key for *_, key in items])

    # -------------------------------------------------------------- Venn rows
    def venn_matrices(self, Q: np.ndarray, taxonomy: str, kind: str, alpha: float,
                      m: float, columns: list[int]) -> np.ndarray:
        """Venn matrices (B, K, K) of the rows of ``Q`` (the leaf taxonomy: complete rows on
        complete training data only)."""
        K = self.K
        B = Q.shape[0]
        whole = np.isnan(Q).any(axis=1) | (not self.walks)
        if taxonomy == "forecast" and whole.any():
            out = np.empty((B, K, K))
            out[whole] = self._whole_tree_matrices(Q[whole], kind, alpha, m, columns)
            if not whole.all():
                out[~whole] = self.venn_matrices(Q[~whole], taxonomy, kind, alpha, m, columns)
            return out
        if taxonomy == "leaf":  # x's leaf's frequencies, normalised as the engine's
            jobs = self.grow_batch(np.repeat(Q, K, axis=0), np.tile(np.arange(K), B))
            rows = np.array([job["x_counts"] / job["x_counts"].sum() for job in jobs])
            rows /= rows.sum(axis=1, keepdims=True)
            return rows.reshape(B, K, K)
        # every (x, j) holds about one atom per leaf of the base tree: the atoms are taken
        # in chunks of rows that bound them; the jobs are grown a walk part at a time (or a
        # chunk, if larger), as a part's searches share their rounds and tables (fold 0
        # of letter-shaped data, grown 104 jobs a call, cost 1.3x 910; shuttle's fold 6,
        # 161 jobs, 1.1x 315)
        chunk = max(1, _ATOMS_PER_BATCH // (K * K * max(1, self.base_sub.leaves.size)))
        per = max(chunk, self.part_jobs // K)
        order = self.walk_order(Q)  # the batches by region of the base tree (caches)
        Q = Q[order]
        out = np.empty((B, K, K))
        for top in range(0, B, per):
            end = min(B, top + per)
            labels = np.tile(np.arange(K), end - top)
            grown = self._grow_in_order(np.repeat(Q[top:end], K, axis=0), labels,
                                        np.full(labels.size, -1, dtype=np.int64), False)
            for lo in range(top, end, chunk):
                hi = min(end, lo + chunk)
                out[order[lo:hi]] = self._rows_of_jobs(
                    grown[(lo - top) * K:(hi - top) * K], labels[:(hi - lo) * K], kind,
                    alpha, m, columns).reshape(hi - lo, K, K)
        return out

    def _rows_of_jobs(self, jobs: list[dict], labels: np.ndarray, kind: str, alpha: float,
                      m: float, columns: list[int]) -> np.ndarray:
        """Venn rows (len(jobs), K) of grown jobs (:meth:`grow_batch`'s records; ``labels``
        their tentative labels), from the atoms of their trees."""
        K = self.K
        kept: dict[tuple[int, int], np.ndarray] = {}  # (cut, base leaf) -> kept base leaves
        for job in jobs:
            key = (job["cut"], job["base_leaf"])
            if key not in kept:
                kept[key] = self._kept_leaves(job)
        if kind != "m_estimate":  # the forecasts do not depend on the job's label
            delta = self._delta_rows(jobs, kept, kind, alpha, m, columns)
            if delta is not None:
                return delta
        pool, n_inst, atom_ptr, x_atom, src = self._atoms(jobs, kept)
        label = np.repeat(labels, np.diff(atom_ptr))
        # forecasts once per (pool entry[, label]): most atoms are the base tree's leaves
        key = src * K + label if kind == "m_estimate" else src
        # counted, no sort (the keys lie below the pool's size); any atom of a key serves
        # as its representative: they share a forecast
        _, inv = counted_unique(key, pool.shape[0] * (K if kind == "m_estimate" else 1))
        rep = np.empty(int(inv.max()) + 1 if inv.size else 0, dtype=np.int64)
        rep[inv] = np.arange(inv.size)
        values = self._forecasts(pool[src[rep]], label[rep], kind, alpha, m)
        counts = NonZeroCounts.of_rows(pool, src)  # the atoms' pool[src], never built
        vid = unique_rows(values)[1][inv.ravel()]
        vid[x_atom] = vid.max() + 1 + np.arange(x_atom.size)  # x's atoms stay their own
        first, counts, n_inst, atom_ptr, x_atom = merge_atoms(vid, counts, n_inst, atom_ptr,
                                                              x_atom)
        return venn_rows_atoms(values[inv.ravel()[first]], counts, n_inst, atom_ptr, x_atom,
                               columns, vid[first])

    def _whole_tree_matrices(self, Q, kind, alpha, m, columns) -> np.ndarray:
        """Venn matrices from whole trees on D ∪ {(x, j)} (unknown values in D or x):
        grown together (:func:`grow_forest`), every example forecast in each
        (:class:`Forecasts`); a job's examples reaching one leaf whole form one atom when
        the weights are integers (their class sums are then exact in any order) — one atom
        for all the leaves of one forecast vector, unless the m-estimate's prior makes it
        depend on the job — every other example its own, and x its own, last."""
        n, K = self.n, self.K
        B = Q.shape[0]
        pairs = min(_PAIRS_PER_BATCH, 8 * _PAIRS_PER_BATCH // K)  # and pairs × K <= 2^23
        per = max(1, pairs // ((n + 1) * K))
        out = np.empty((B, K, K))
        y_pair = np.concatenate([self.y, [0]])
        w_pair = np.concatenate([self.w, [1.0]])
        for lo in range(0, B, per):
            hi = min(B, lo + per)
            J = (hi - lo) * K
            labels = np.tile(np.arange(K), hi - lo)
            Xq = np.repeat(Q[lo:hi], K, axis=0)
            finder, rank = self._augmented(Xq, labels)
            if has_edits(self.learner):  # collapse/cp: every job's edited tree
                forest = batch_forest(self, Xq, labels, np.full(J, -1), finder, rank)
            else:
                roots = self._roots(J, np.full(J, -1))
                alone = self.base_leaves is None  # and the tree on D, for the method's size
                if alone:
                    roots.append((np.arange(n), self.w))
                forest = grow_forest(finder, roots, rank)
                if alone:
                    self.base_leaves = n_leaves(forest, J)
            job = np.repeat(np.arange(J), n + 1)
            row = np.tile(np.arange(n + 1), J)
            F = Forecasts(forest, finder.X, np.where(row < n, row, n + job), job, kind, alpha,
                          m)
            leaf = F.leaf
            N = forest.counts.shape[0]
            span = N + n + 1  # per job: its leaves, then one slot per example, x last
            lone = (leaf >= 0) & (row < n) & self.integral
            if F.per_node is not None and lone.any():  # leaves with one forecast: one atom
                used = np.unique(leaf[lone])
                ids = np.zeros(N, dtype=np.int64)
                ids[used] = unique_rows(F.per_node[used])[1]
                leaf = ids[leaf]
            slot = np.where(lone, leaf, N + row)
            uniq, first, inv = np.unique(job * span + slot, return_index=True,
                                         return_inverse=True)
            inv = inv.ravel()
            cls = np.tile(y_pair, J)
            cls[row == n] = labels
            A = uniq.size
            counts = np.bincount(inv * K + cls, weights=np.tile(w_pair, J),
                                 minlength=A * K).reshape(A, K)
            n_inst = np.bincount(inv, minlength=A).astype(float)
            atom_ptr = np.searchsorted(uniq // span, np.arange(J + 1))
            out[lo:hi] = venn_rows_atoms(F.take(first), counts, n_inst, atom_ptr, atom_ptr[1:] - 1,
                                         columns).reshape(hi - lo, K, K)
        return out

    def _atoms(self, jobs, kept: dict):
        """(pool, n_inst, atom_ptr, x_atom, src) of the groups of examples sharing a leaf
        of each job's tree on D ∪ {(x, j)}: the base leaves outside ``cut``, the hanging
        subtrees' leaves, and x's leaf with x (last); job i's atoms are
        ``atom_ptr[i]:atom_ptr[i + 1]``; ``src`` is each atom's place in a pool of leaves
        whose class counts are ``pool`` (atoms of one place are one leaf: an atom's
        counts are ``pool[src]``). ``kept``: per (cut, base leaf), the base leaves its jobs
        keep (:meth:`_kept_leaves`)."""
        base = self.base_sub
        n_base = base.leaves.size
        pool_c = [base.tree.counts[base.leaves]]
        pool_n = [base.n_inst[base.leaves]]
        size = n_base
        where: dict[int, np.ndarray] = {}  # leaf set id -> its places in the pool
        places: dict[tuple[int, int], np.ndarray] = {}  # (cut, base leaf) -> kept places
        parts = []
        for job in jobs:
            key = (job["cut"], job["base_leaf"])
            if key not in places:
                places[key] = flat_nonzero(kept[key])
            own = [places[key]]
            for s in job["hanging"]:
                if s not in where:
                    leaf_counts, leaf_rows = self.leaf_sets[s]
                    pool_c.append(leaf_counts)
                    pool_n.append(leaf_rows)
                    where[s] = np.arange(size, size + leaf_rows.size)
                    size += leaf_rows.size
                own.append(where[s])
            parts.append(own)
        x_place = size + np.arange(len(jobs))
        pool_c.append(np.array([job["x_counts"] for job in jobs]).reshape(-1, self.K))
        pool_n.append(np.array([job["x_inst"] for job in jobs], dtype=float))
        for own, q in zip(parts, x_place, strict=True):
            own.append(q[None])
        lens = np.array([sum(p.size for p in own) for own in parts], dtype=np.int64)
        atom_ptr = offsets(lens)
        take = np.concatenate([p for own in parts for p in own])
        return (np.vstack(pool_c), np.concatenate(pool_n)[take], atom_ptr, atom_ptr[1:] - 1,
                take)

    def _kept_leaves(self, job: dict) -> np.ndarray:
        """Which of the base tree's leaves (``base_sub.leaves``) a job's tree keeps: all but
        those below its ``cut``, or but x's ``base_leaf`` (x joined it)."""
        base = self.base_sub
        if job["cut"] >= 0:
            gone = np.zeros(base.tree.n_nodes, dtype=bool)
            gone[base.leaf_of_row[base.rows[job["cut"]]]] = True
            return ~gone[base.leaves]
        if job["base_leaf"] >= 0:
            return base.leaves != job["base_leaf"]
        return np.ones(base.leaves.size, dtype=bool)

    def _delta_rows(self, jobs: list[dict], kept: dict, kind: str, alpha: float, m: float,
                    columns: list[int]) -> np.ndarray | None:
        """:meth:`_rows_of_jobs` from the base tree's leaves once and each job's difference
        from them (:func:`~treecert.methods.venn_types.venn_rows_delta`): the leaves it
        drops, and its hanging subtrees' leaves and x's leaf. None unless every count and
        instance number is an integer (sums below 2^53), where that is exact — or where the
        jobs change more leaves than the base tree has forecast vectors (a job's atoms,
        merged by vector, are then fewer than its changes: shuttle-shaped data, ~820
        changes a job against 88 vectors; letter-shaped, ~52 against 543)."""
        base = self.base_sub
        base_counts = base.tree.counts[base.leaves]
        base_n = base.n_inst[base.leaves]
        labels = np.zeros(1, dtype=np.int64)  # unused: the forecasts ignore the label here
        vectors = self._base_vectors.get((kind, alpha, m))
        if vectors is None:  # the base tree's: the same for every chunk
            vectors = unique_rows(self._forecasts(base_counts, labels, kind, alpha, m))
            self._base_vectors[kind, alpha, m] = vectors
        dropped = {key: flat_nonzero(~keep) for key, keep in kept.items()}
        removed = [dropped[job["cut"], job["base_leaf"]] for job in jobs]
        # a job's new leaves: its hanging sets' leaves, then x's leaf, last
        new_ptr = offsets(np.array([sum(self.leaf_sets[s][1].size for s in job["hanging"]) + 1
                                    for job in jobs], dtype=np.int64))
        changes = sum(r.size for r in removed) + int(new_ptr[-1])
        if changes >= DELTA_CHANGES * len(jobs) * vectors[0].shape[0]:
            return None
        new_counts = np.vstack([c for job in jobs for c in
                                (*(self.leaf_sets[s][0] for s in job["hanging"]),
                                 np.asarray(job["x_counts"], dtype=float).reshape(1, self.K))])
        new_inst = np.concatenate([n for job in jobs for n in
                                   (*(self.leaf_sets[s][1] for s in job["hanging"]),
                                    np.array([job["x_inst"]], dtype=float))])
        if not exact_sums(base_counts, base_n, new_counts, new_inst):
            return None
        return venn_rows_delta(
            vectors, base_counts, base_n,
            np.concatenate(removed), offsets(np.array([r.size for r in removed],
                                                      dtype=np.int64)),
            self._forecasts(new_counts, labels, kind, alpha, m), new_counts, new_inst,
            new_ptr, columns)

    def _forecasts(self, counts, labels, kind, alpha, m):
        """Leaf estimates of the atoms (``labels``: the tentative label of each atom's
        job), normalised exactly as ``Tree.predict_proba`` does."""
        prior = None
        if kind == "m_estimate":  # the prior is the class frequency of D ∪ {(x, j)}
            root = self.base_sub.tree.counts[0]
            prior = root[None, :] + np.eye(self.K)[labels]
            prior = prior / prior.sum(axis=1, keepdims=True)
        est = leaf_proba(counts, kind, alpha=alpha, m=m, prior=prior)
        return est / est.sum(axis=1, keepdims=True)
