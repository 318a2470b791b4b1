"""The certified walk of x down the base tree (the competitor bound and exact rescoring
of :mod:`treecert.transductive.batch_engine`): at each base node on x's path, the node's test
is certified unchanged by the competitor table
(:class:`~treecert.transductive.certificates.Competitors`) or by rescoring every candidate
for x's position (:class:`~treecert.transductive.node_scores.NodeScores`; with gain ratio
:class:`~treecert.transductive.ratio_scores.RatioScores`), and x moves on to the base
child; where neither certifies it, the job stops for an exact search. A mixin of
:class:`~treecert.transductive.batch_engine.BatchEngine`, whose attributes it reads (the
base tree, the training data, the growing parameters and the byte-bounded caches).
"""

from __future__ import annotations

import itertools

import numpy as np

from treecert.transductive.certificates import _MARGIN, Competitors, distinct_changes
from treecert.transductive.node_scores import NodeScores
from treecert.transductive.ratio_scores import RatioScores
from treecert.tree.grow import stops
from treecert.tree.impurity import _impurity_last
from treecert.tree.segments import flat_nonzero, run_starts
from treecert.tree.split_search import _EPS


class BaseWalk:
    """x's walk down the certified tests of the base tree (competitor bound, rescoring)."""

    def _competitors(self) -> Competitors | None:
        """The base tree's competitor table; None for small trees, where an exact
        (batched) search costs less than certifying."""
        if (self._comp is None and self.certified and not self.ratio
                and self.n >= self.cert_min_rows):
            self._comp = Competitors(self.base_sub, self.data, self.params, self.gini,
                                     self._rank_d)
        return self._comp

    def _node_scores(self, v: int) -> NodeScores | RatioScores:
        """Node v's rescoring tables, kept in a cache of
        :data:`~treecert.transductive.budget.SCORE_BYTES`."""
        scores = self._scores.get(v)
        if scores is None:
            comp = self._competitors()
            scores = (RatioScores(self.base_sub, v, self.data, self.params, self.finder,
                                  self._rank_d)
                      if self.ratio else
                      NodeScores(self.base_sub, v, self.data, self.params, self.gini,
                                 None if comp is None else comp.table, self._rank_d))
            self._scores.put(v, scores, scores.nbytes())
        return scores

    def _cut_neighbours(self):
        """Per base node with a numeric test: the values either side of its cut and how
        many rows hold each (a leave-one-out row alone at one of them moves the cut)."""
        if self._t1 is None:
            base = self.base_sub
            t = base.tree
            nn = t.n_nodes
            lo, hi = np.full(nn, np.nan), np.full(nn, np.nan)
            n_lo, n_hi = np.zeros(nn), np.zeros(nn)
            for v in flat_nonzero(~t.is_leaf & ~np.isnan(t.threshold)):
                vals = self.data.X[base.rows[v], t.feature[v]]
                below, above = vals[vals <= t.threshold[v]], vals[vals > t.threshold[v]]
                if below.size and above.size:
                    lo[v], hi[v] = below.max(), above.min()
                    n_lo[v], n_hi[v] = (below == lo[v]).sum(), (above == hi[v]).sum()
            self._t1 = (lo, hi, n_lo, n_hi)
        return self._t1


    def _walk(self, node, walking, labels, drop, Xq, jobs):
        """Move walking jobs down certified tests of the base tree; returns the (job, node)
        pairs that need an exact search (jobs ending in a leaf that x cannot split are
        settled)."""
        params = self.params
        floor = max(float(params.min_gain), _EPS) + _MARGIN
        base = self.base_sub
        tree = base.tree
        comp = self._competitors()
        N, N_ig1 = self._node_weights_gains()
        dropped = drop >= 0
        y_drop = np.where(dropped, self.y[np.maximum(drop, 0)], 0)
        w_drop = np.where(dropped, self.w[np.maximum(drop, 0)], 0.0)
        # change of class weights at every node on the path: +x, -row r
        change = np.eye(self.K)[labels] - w_drop[:, None] * np.eye(self.K)[y_drop]
        if comp is not None:  # every node the walk can reach, tabled at once
            act = flat_nonzero(walking)
            comp.table_paths(change[act], node[act], Xq[act])
        pending = []
        while walking.any():
            act = flat_nonzero(walking)
            v, j, r, dr = node[act], labels[act], drop[act], dropped[act]
            yr, wr, delta = y_drop[act], w_drop[act], change[act]
            leaf = tree.is_leaf[v]
            if leaf.any():
                a, vv = act[leaf], v[leaf]
                c = tree.counts[vv] + delta[leaf]
                # x's weight is not eligible; row r's was
                stop = stops(params, c, tree.counts[vv].sum(axis=1) - wr[leaf], base.depth[vv])
                if not self.integral:  # base counts minus r may round differently
                    stop &= ~dr[leaf]
                n_inst = base.n_inst[vv] + 1 - dr[leaf]
                for job, u, cc, ni, s in zip(a, vv, c, n_inst, stop, strict=True):
                    walking[job] = False
                    if s:
                        jobs[job]["base_leaf"] = int(u)
                        self._end(jobs[job], cc, ni)
                    else:
                        pending.append((int(job), int(u)))
            keep = ~leaf
            act, v, j, r, dr, yr, wr, delta = (a[keep] for a in (act, v, j, r, dr, yr, wr, delta))
            if not act.size:
                break
            child = base.children_for(v, Xq[act])
            if self.ratio:  # J48's rule: every candidate rescored (no drops, no table)
                ok = np.zeros(act.size, dtype=bool)
                again = flat_nonzero(~dr & (N[v] >= self.rescore_min_rows))
                if again.size and self.n >= self.cert_min_rows:
                    ok[again] = self._rescore(v[again], Xq[act[again]], delta[again])
                node[act[ok]] = child[ok]
                walking[act[~ok]] = False
                pending.extend((int(j_), int(u)) for j_, u in zip(act[~ok], v[~ok],
                                                                   strict=True))
                continue
            cb, cp = tree.counts[child], tree.counts[v]
            d_b = _impurity_last(cb + delta, self.gini) - _impurity_last(cb, self.gini)
            d_p = _impurity_last(cp + delta, self.gini) - _impurity_last(cp, self.gini)
            g1 = (N_ig1[v] + d_p - d_b) / (N[v] + delta.sum(axis=1))  # T1's gain with x
            ok = np.zeros(act.size, dtype=bool)
            if comp is not None:
                keys, group = distinct_changes(delta)
                upper = comp.upper_many(keys, v)[group, v]
                ok = (g1 - upper > _MARGIN) & (g1 > floor)
                # x replaces a row of its own class and values: the same class counts
                ok |= dr & (j == yr)
            safe = ~dr
            if dr.any():
                safe[dr] = self._drop_safe(v[dr], r[dr], child[dr], cp[dr] + delta[dr])
            ok &= safe
            again = flat_nonzero(~ok & safe & (N[v] >= self.rescore_min_rows))
            if again.size and comp is not None:
                ok[again] = self._rescore(v[again], Xq[act[again]], delta[again])
            node[act[ok]] = child[ok]
            walking[act[~ok]] = False
            pending.extend((int(job), int(u)) for job, u in zip(act[~ok], v[~ok], strict=True))
        return pending

    def _node_weights_gains(self) -> tuple[np.ndarray, np.ndarray]:
        """Per base node: its weight N and N · the gain of its test T1 (computed once)."""
        if self._gains is None:
            tree = self.base_sub.tree
            e_all = _impurity_last(tree.counts, self.gini)
            nonroot = flat_nonzero(tree.parent >= 0)
            child_e = np.bincount(tree.parent[nonroot], weights=e_all[nonroot],
                                  minlength=tree.n_nodes)
            self._gains = (tree.counts.sum(axis=1), e_all - child_e)
        return self._gains

    def _drop_safe(self, v, r, child, new_counts) -> np.ndarray:
        """Whether removing row r[i] (x takes its place) leaves node v[i]'s test T1 the same
        partition and admissible, and the node unstopped — what both certificates assume."""
        base = self.base_sub
        tree = base.tree
        ml = float(self.params.min_leaf)
        safe = np.full(v.size, self.integral) & (self.w[r] == 1.0)
        safe &= ~stops(self.params, new_counts, tree.counts[v].sum(axis=1) - 1.0,
                       base.depth[v])
        safe &= tree.counts[child].sum(axis=1) - 1.0 >= ml
        lo, hi, n_lo, n_hi = self._cut_neighbours()
        num = ~np.isnan(tree.threshold[v])
        val = self.data.X[r, tree.feature[v]]
        moved = ((val == lo[v]) & (n_lo[v] <= 1)) | ((val == hi[v]) & (n_hi[v] <= 1))
        safe &= ~(num & moved)
        return safe

    def _rescore(self, v: np.ndarray, Xq: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Exact rescoring for jobs at base nodes v whose competitor bound failed."""
        out = np.zeros(v.size, dtype=bool)
        min_gain = float(self.params.min_gain)
        order = v.argsort(kind="stable")
        first = flat_nonzero(run_starts(v[order]))  # each base node's jobs, a run
        for a, b in itertools.pairwise([*first.tolist(), v.size]):
            idx = order[a:b]
            u = int(v[idx[0]])
            scores = self._node_scores(u)
            out[idx] = scores.certify(Xq[idx], delta[idx], min_gain)
            self._scores.resize(u, scores.nbytes())  # its memo of changes grew
        return out
