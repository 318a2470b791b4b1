"""The tree Venn machine for a whole batch of test objects at once.

The Venn machine needs, for every test object x and tentative label j, the tree grown on
D ∪ {(x, j)} (x ineligible for thresholds) — B·K trees per batch — and, unlike TPCE, the
forecasts of all n + 1 examples in each. :class:`treecert.engine_batch.BatchEngine` grows
x's path with certified-unchanged tests and batched exact searches, and the subtrees without
x hanging off it once each (memoised); this module turns those trees into Venn matrix rows:
the base tree's leaves outside the changed part, the hanging subtrees' leaves and x's leaf
are the groups of examples ("atoms") sharing a forecast.

Results equal the one-(x, j)-at-a-time reference bit for bit (``tests/test_venn.py``).
Limits are the batched engine's; otherwise the caller falls back to the engine one (x, j)
at a time.
"""

from __future__ import annotations

import numpy as np

from treecert.engine_batch import BatchEngine
from treecert.leaf import leaf_proba
from treecert.methods.venn_types import venn_row_atoms


class TreeVennBatch(BatchEngine):
    """Venn matrices of a batch of test objects from the trees on D ∪ {(x, j)}."""

    # -------------------------------------------------------------- Venn rows
    def venn_matrices(self, Q: np.ndarray, taxonomy: str, kind: str, alpha: float,
                      m: float, columns: list[int]) -> np.ndarray:
        """Venn matrices (B, K, K) of the rows of ``Q``."""
        K = self.K
        B = Q.shape[0]
        jobs = self.grow_batch(np.repeat(Q, K, axis=0), np.tile(np.arange(K), B),
                               paths_only=(taxonomy == "leaf"))
        out = np.empty((B, K, K))
        for b in range(B):
            for j in range(K):
                job = jobs[b * K + j]
                if taxonomy == "leaf":  # the leaf's frequencies, normalised as the engine's
                    row = job["x_counts"] / job["x_counts"].sum()
                    out[b, j] = row / row.sum()
                    continue
                counts, n_inst, x_atom = self._atoms(job)
                values = self._forecasts(counts, j, kind, alpha, m)
                out[b, j] = venn_row_atoms(values, counts, n_inst, x_atom, columns)
        return out

    def _atoms(self, job):
        """(counts, n_inst, x_atom) of the groups of examples sharing a leaf of the tree on
        D ∪ {(x, j)}: the base leaves outside ``cut``, the hanging subtrees' leaves, and x's
        leaf with x."""
        base = self.subs[self.base]
        keep = base.leaves
        if job["cut"] >= 0:
            gone = np.zeros(base.tree.n_nodes, dtype=bool)
            gone[base.leaf_of_row[base.rows[job["cut"]]]] = True
            keep = keep[~gone[keep]]
        elif job["base_leaf"] >= 0:
            keep = keep[keep != job["base_leaf"]]
        parts_c = [base.tree.counts[keep]]
        parts_n = [base.n_inst[keep]]
        for s in job["hanging"]:
            sub = self.subs[s]
            parts_c.append(sub.tree.counts[sub.leaves])
            parts_n.append(sub.n_inst[sub.leaves])
        parts_c.append(job["x_counts"][None, :])
        parts_n.append(np.array([job["x_inst"]]))
        counts = np.vstack(parts_c)
        return counts, np.concatenate(parts_n), counts.shape[0] - 1

    def _forecasts(self, counts, j, kind, alpha, m):
        """Leaf estimates of the atoms, normalised exactly as ``Tree.predict_proba`` does."""
        prior = None
        if kind == "m_estimate":
            root = self.subs[self.base].tree.counts[0].copy()
            root[j] += 1.0
            prior = root / root.sum()
        est = leaf_proba(counts, kind, alpha=alpha, m=m, prior=prior)
        return est / est.sum(axis=1, keepdims=True)
