"""The numeric half of the split search: the best cut of every (node, numeric column).

:class:`NumericSearch` is mixed into :class:`~treecert.tree.split_search.SplitFinder`, whose
``y``, ``eligible``, ``params`` and ``n_classes`` it reads. It scores a
:class:`~treecert.tree.segments._Batch` whose numeric columns are sorted within every node:
class weights are cumulated along the sorted columns, and every (node, column)'s best cut is
found with a few array operations and segmented reductions.

* Only Fayyad-Irani boundary cuts are scored at first: a cut between two valid cuts that
  moves rows of a single class lies on a convex stretch of the gain, so it never beats both
  neighbours; the skipped cuts next to a column's (near-)best cut are scored afterwards,
  since rounding to 10 decimals could make them tie. J48's MDL term still counts every
  valid cut.
* Integer weights (the usual case) are cumulated in integers, and ``x ln x`` of integer
  counts is read from a table.
* Ineligible rows (the TPCE test instance) count in the class weights but never give a
  threshold (:meth:`NumericSearch._ineligible_cuts`).
"""

from __future__ import annotations

import numpy as np

from treecert.tree.impurity import _LN2, _ROUND, _impurity, _split_info, _sum_cols, _xlogx
from treecert.tree.segments import (
    _Batch,
    _ranges,
    _segment_cumsum,
    first_max_of_runs,
    flat_nonzero,
    run_starts,
)

# Score only Fayyad-Irani boundary cuts first (False: every cut; for tests).
_PRUNE = True
# Largest total weight for which x ln x of integer counts is looked up in a table.
_TABLE_MAX = 2.0**22
#: J48 keeps a numeric test only if its MDL-corrected gain is not within Weka's SMALL of 0
#: (``C45Split``: ``if (Utils.smOrEq(m_infoGain, 0)) return``; ``smOrEq(a, b)`` is
#: ``a - b < 1e-6``): a column whose best cut gains nothing — or rounding noise, 1e-16 —
#: is no candidate, and does not count in the average gain.
MIN_NUMERIC_GAIN = 1e-6
#: J48 offers a cut between two sorted values only if they are more than 1e-5 apart
#: (``C45Split.handleNumericAttribute``: ``value(i - 1) + 1e-5 < value(i)``); the
#: ``threshold="j48"`` rule follows it, the other rules cut between any distinct values.
J48_MIN_GAP = 1e-5


def distinct_cuts(a: np.ndarray, b: np.ndarray, rule: str) -> np.ndarray:
    """Whether a cut lies between the sorted neighbours ``a`` and ``b`` (``b`` follows
    ``a``): ``a < b``, or J48's ``a + 1e-5 < b`` under ``rule == "j48"``. NaN gives False.
    The grower and every cut search of the transductive engines ask it, so that they offer
    the same cuts."""
    if rule == "j48":
        return a + J48_MIN_GAP < b
    return a < b


def no_cuts(G: int, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`NumericSearch._numeric_batch`'s (ok, gain, score, threshold) of G nodes × p
    columns before any cut is found: none ok, gains 0, no threshold."""
    return (np.zeros((G, p), dtype=bool), np.zeros((G, p)), np.zeros((G, p)),
            np.full((G, p), np.nan))


def chosen_cut_ratio(gain: np.ndarray, n_cuts: np.ndarray, left: np.ndarray,
                     right: np.ndarray, known: np.ndarray, total: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gain ratio of each column's chosen cut (J48's ``C45Split``): the gain less the MDL
    term log2(#valid cuts) / N, kept only at or above :data:`MIN_NUMERIC_GAIN`, and divided
    by the split information of its branch weights ``left`` and ``right`` (the unknown
    weight, N less the ``known``, counts as a third branch). Returns (corrected gain, ok,
    score). The grower's search and the engine's shared label searches both score with it."""
    gain = gain - np.log2(n_cuts) / total  # J48's MDL correction
    ok = gain >= MIN_NUMERIC_GAIN
    si = _split_info([left, right], total - known, total)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(si > 0, gain / si, 0.0)
    return gain, ok, score


class NumericSearch:
    """The numeric cut search of :class:`~treecert.tree.split_search.SplitFinder`."""

    def _xlogx_table(self, n: int) -> np.ndarray:
        """``_xlogx(i)`` for i = 0..n (at least), cached."""
        table = getattr(self, "_table", None)
        if table is None or table.size <= n:
            table = _xlogx(np.arange(max(n + 1, 1024), dtype=float))
            self._table = table
        return table

    def _numeric_batch(self, b: _Batch):
        """Best cut of every (node, numeric column): (ok, gain, score, threshold), (G, p)."""
        params = self.params
        K = self.n_classes
        gini = params.criterion == "gini"
        G, seg, S, V, ys = b.G, b.seg, b.S, b.V, b.Y
        p, M = S.shape
        out_ok, out_gain, out_score, out_thr = no_cuts(G, p)
        if M < 2:
            return out_ok, out_gain, out_score, out_thr
        exact, node = b.exact, b.node
        starts = seg[:-1]
        lens = seg[1:] - seg[:-1]
        y_e = self.y[b.rows]
        # Class weights cumulated along every sorted column, restarted at each node. With
        # integer weights in integers (exact, half the memory); else in floats, exactly as
        # a per-node cumsum.
        if b.integral:
            w_e = b.w.astype(np.int32)
            unit = bool(np.all(w_e == 1))
            ws = None if unit else w_e[S]
            dtype = np.int32

            def class_weights(k, out):
                if unit:
                    out[...] = ys == k
                else:  # np.where(ys == k, ws, 0)
                    out[...] = 0
                    np.copyto(out, ws, where=ys == k)
        else:
            w_e = b.w
            ws = b.w[S]
            dtype = float

            def class_weights(k, out):
                np.multiply(ws, ys == k, out=out)  # w * 1.0 or w * 0.0

        # The eligible weight and every class's weight cumulated as one stack (n, p, M): one
        # call per inexact segment for all n, not n.
        el_s = None  # the eligibility of every sorted entry
        derive_last = b.we is None and bool(exact.all())
        n_sums = K - 1 if derive_last else K
        positions = b.we is None and b.integral and unit
        first = 0 if positions else 1  # the eligible weight's place in the stack
        sums = np.empty((first + n_sums, p, M), dtype=dtype)
        totals = np.empty((first + n_sums, G))
        if positions:  # the eligible weight before each cut is its position
            CE = (np.arange(M) - starts.repeat(lens) + 1).astype(np.int32)
        elif b.we is None:
            sums[0] = ws
            totals[0] = np.bincount(node, weights=w_e, minlength=G)
        else:
            el = self.eligible[b.rows]
            el_s = el[S]
            if ws is None:
                sums[0] = el_s
            else:  # np.where(el_s, ws, 0)
                sums[0] = 0
                np.copyto(sums[0], ws, where=el_s)
            totals[0] = np.bincount(node, weights=w_e * el, minlength=G)
        for k in range(n_sums):
            class_weights(k, sums[first + k])
        # every class's node totals in one pass: each (node, class) bin adds its entries in
        # order, as a per-class pass does (whose other entries add exact zeros)
        totals[first:] = np.bincount(node * K + y_e, weights=w_e, minlength=G * K).reshape(
            G, K).T[:n_sums]
        _segment_cumsum(sums, seg, exact, totals)
        if not positions:
            CE = sums[0]
        C = list(sums[first:])
        if derive_last:  # exact sums: the last class is the rest, bit for bit (in any order:
            # one reduction over the stack, not K - 1 columns stacked along a new last axis)
            C.append(CE - np.add.reduce(sums[first:], axis=0, dtype=sums.dtype) if C
                     else np.broadcast_to(CE, (p, M)).copy())
        # Known values come first in each segment (NaN sorts last).
        if np.isnan(V[:, seg[1:] - 1]).any():  # (p, G): the length less the (few) unknowns
            unknown = flat_nonzero(np.isnan(V))
            n_known = lens - np.bincount(unknown // M * G + node[unknown % M],
                                         minlength=p * G).reshape(p, G)
        else:
            n_known = np.broadcast_to(lens, (p, G))
        has = n_known > 0
        last = np.maximum(starts + n_known - 1, 0)
        rowj = np.arange(p)[:, None]
        KC = [np.where(has, C[k][rowj, last], 0) for k in range(K)]  # (p, G)
        KE = np.where(has, CE[last] if CE.ndim == 1 else CE[rowj, last], 0)
        KCf = [c.astype(float) for c in KC]
        # Cut i lies between sorted positions i and i+1 of one node.
        pos_node = node[:-1]

        def per_cut(a):  # (p, G) -> (p, M - 1): the value of each cut's node
            return a if G == 1 else a.repeat(lens, axis=1)[:, :-1]

        valid = distinct_cuts(V[:, :-1], V[:, 1:], params.threshold)
        if G > 1:
            valid &= node[1:] == pos_node
        left_e = CE[..., :-1]
        if params.criterion == "gain_ratio":
            min_split = np.clip(0.1 * KE.astype(float) / K, params.min_leaf, 25.0)
            ms_pos = per_cut(min_split)
            valid &= per_cut(KE >= 2 * min_split)
        else:
            ms_pos = float(params.min_leaf)
        valid &= left_e >= ms_pos
        valid &= per_cut(KE) - left_e >= ms_pos
        inel = None
        if self.eligible is not None:
            inel_seg = np.bincount(node, weights=~self.eligible[b.rows], minlength=G) > 0
            if inel_seg.any():
                el_s = el_s if b.we is not None else self.eligible[b.rows][S]
                inel = self._ineligible_cuts(b, inel_seg, valid, el_s)
        total_w = b.total_w
        parent = _impurity(KCf, gini).ravel()
        table = None
        if b.integral and not gini and float(total_w.max()) < _TABLE_MAX:
            table = self._xlogx_table(int(total_w.max()))  # x ln x of integer counts
        KCr = [c.ravel().astype(np.intp) if b.integral else c.ravel() for c in KC]
        Cr = [c.ravel() for c in C]

        def cut_counts(jj, ii, gi):
            """Class weights (left, right, known) of the cuts (column jj, position ii, node
            gi): per-class lists, in floats."""
            kt, ft = jj * G + gi, jj * M + ii
            L = [c[ft] for c in Cr]
            KCt = [c[kt] for c in KCr]
            R = [KCt[k] - L[k] for k in range(K)]
            if b.integral:
                L = [c.astype(float) for c in L]
                R = [c.astype(float) for c in R]
                KCt = [c.astype(float) for c in KCt]
            return L, R, KCt

        def cut_gain(jj, ii, gi):
            """Gain of the cuts (column jj, position ii, node gi)."""
            kt = jj * G + gi
            if table is not None:
                L = [c[jj * M + ii].astype(np.intp) for c in Cr]
                R = [KCr[k][kt] - L[k] for k in range(K)]
                imp_l = (table[_sum_cols(L)] - _sum_cols([table[c] for c in L])) / _LN2
                imp_r = (table[_sum_cols(R)] - _sum_cols([table[c] for c in R])) / _LN2
                return (parent[kt] - imp_l - imp_r) / total_w[gi]
            L, R, _ = cut_counts(jj, ii, gi)
            return (parent[kt] - _impurity(L, gini) - _impurity(R, gini)) / total_w[gi]

        # Fayyad & Irani: moving the cut across rows of one class changes the gain convexly,
        # so a cut whose neighbouring cuts are valid and which moves rows of one class only
        # is never above both neighbours: skip it. The runs of skipped cuts next to a
        # (near-)best cut are scored afterwards, as rounding to 10 decimals could tie them.
        W = M - 1
        prune = _PRUNE and W > 2
        cand = valid
        if prune:
            skip = np.zeros_like(valid)
            skip[:, 1:-1] = valid[:, :-2] & valid[:, 1:-1] & valid[:, 2:]
            skip[:, 1:-1] &= ys[:, 1:-2] == ys[:, 2:-1]
            cand = valid & ~skip
        fc = flat_nonzero(cand)
        if fc.size == 0:
            return out_ok, out_gain, out_score, out_thr
        jj = np.arange(p).repeat(np.count_nonzero(cand, axis=1))
        ii = fc - jj * W
        gi = pos_node[ii]
        key = jj * G + gi
        gain = cut_gain(jj, ii, gi)
        rgain = gain.round(_ROUND)
        n = key.size
        new = run_starts(key)
        # per (column, node) group: its first best cut and rounded maximum; gmax_at: the
        # maximum of each candidate's group
        k, gmax, gmax_at = first_max_of_runs(rgain, flat_nonzero(new))
        gj, gg, i_best, g_best = jj[k], gi[k], ii[k], gain[k]
        if prune:
            ht = flat_nonzero(gain >= gmax_at - 2e-10)
            hpos = jj[ht] * W + ii[ht]
            flat_skip = skip.ravel()
            right = (ii[ht] < W - 1) & flat_skip[np.minimum(hpos + 1, p * W - 1)]
            left = (ii[ht] > 0) & flat_skip[np.maximum(hpos - 1, 0)]
            if right.any() or left.any():
                # A run of skipped cuts ends at the neighbouring boundary cut of its group.
                nxt = np.minimum(ht + 1, n - 1)
                prv = np.maximum(ht - 1, 0)
                lo = np.stack([ii[prv] + 1, ii[ht] + 1], axis=1).ravel()
                ln = np.stack([np.where(left, ii[ht] - ii[prv] - 1, 0),
                               np.where(right, ii[nxt] - ii[ht] - 1, 0)], axis=1).ravel()
                owner = ht.repeat(2).repeat(ln)
                ni = _ranges(lo, ln)
                nj, ng = jj[owner], gi[owner]
                ngain = cut_gain(nj, ni, ng)
                nr = ngain.round(_ROUND)
                grp = new.cumsum()[owner] - 1
                nf = flat_nonzero(run_starts(grp))
                ngrp = grp[nf]
                nk, nmax, _ = first_max_of_runs(nr, nf)
                # Merge with the boundary cuts' first maximum, in position order.
                take = (nmax > gmax[ngrp]) | ((nmax == gmax[ngrp]) & (ni[nk] < i_best[ngrp]))
                tg = ngrp[take]
                i_best[tg] = ni[nk[take]]
                g_best[tg] = ngain[nk[take]]
        ok = np.ones(gj.size, dtype=bool)
        if params.criterion == "gain_ratio":
            valid_pad = np.zeros((p, M), dtype=bool)
            valid_pad[:, :-1] = valid
            n_cuts = np.add.reduceat(valid_pad, starts, axis=1, dtype=np.int64)[gj, gg]
            L, R, KCt = cut_counts(gj, i_best, gg)
            g_best, ok, score = chosen_cut_ratio(g_best, n_cuts, _sum_cols(L), _sum_cols(R),
                                                 _sum_cols(KCt), total_w[gg])
        else:
            score = g_best
        vi = V[gj, i_best]
        vn = V[gj, i_best + 1]
        thr = vi if params.threshold == "lower" else (vi + vn) / 2.0
        if inel is not None and inel[1].size:  # the chosen cut of a flagged node is valid
            at = np.minimum(np.searchsorted(inel[1], gj * W + i_best), inel[1].size - 1)
            thr = np.where(inel[0][gg], inel[2][at], thr)
        thr = np.where(thr < vn, thr, vi)
        out_ok[gg, gj] = ok
        out_gain[gg, gj] = g_best
        out_score[gg, gj] = score
        out_thr[gg, gj] = thr
        return out_ok, out_gain, out_score, out_thr

    def _ineligible_cuts(self, b: _Batch, inel_seg: np.ndarray, valid: np.ndarray,
                         el_s: np.ndarray):
        """Cuts of nodes holding ineligible rows: thresholds from eligible values only.

        Restricts ``valid`` in place; returns (node flag, the flagged nodes' valid cuts as
        flat indices of ``valid`` ascending, their thresholds). Only valid cuts can be
        chosen, so only they are looked at (few: most columns have many ties), and an
        eligible neighbour is its own nearest: only the ineligible ones are looked up.
        ``el_s``: the eligibility of every sorted entry.
        """
        V, seg, node = b.V, b.seg, b.node
        W = V.shape[1] - 1
        cut = flat_nonzero(valid & inel_seg[node[:-1]])
        left = cut + cut // W  # the cut's left entry, flat in V (row j: j * M + i)
        bad = ~(el_s & ~np.isnan(V)).ravel()  # ineligible or unknown entries
        bad_at = flat_nonzero(bad)
        prev_bad, nxt_bad = _nearest_eligible_values(V, bad_at, seg, node)
        Vf = V.ravel()
        Vi, Vn = Vf[left], Vf[left + 1]
        prev, nxt = Vi.copy(), Vn.copy()
        lb, rb = bad[left], bad[left + 1]
        prev[lb] = prev_bad[np.searchsorted(bad_at, left[lb])]
        nxt[rb] = nxt_bad[np.searchsorted(bad_at, left[rb] + 1)]
        ok = np.isfinite(prev) & np.isfinite(nxt)
        if self.params.threshold == "lower":
            thr = prev
            ok &= prev == Vi
        else:
            with np.errstate(invalid="ignore"):
                thr = (prev + nxt) / 2.0
            ok &= (Vi <= thr) & (thr < Vn)
        off = cut[~ok]
        valid[off // W, off % W] = False
        return inel_seg, cut, thr


def _nearest_eligible_values(V: np.ndarray, bad: np.ndarray, seg: np.ndarray,
                             node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per ineligible entry of ``V`` (p, M) (``bad``: flat indices, ascending): the value of
    the last eligible position before it in its node (-inf if none), and of the first
    eligible position after it in its node (inf if none). Runs of consecutive ineligible
    entries share theirs: O(ineligible entries), as ``ufunc.accumulate`` costs ~15 ns per
    element."""
    M = V.shape[1]
    if not bad.size:
        return np.empty(0), np.empty(0)
    col = bad % M
    start = np.ones(bad.size, dtype=bool)
    start[1:] = (bad[1:] != bad[:-1] + 1) | (col[1:] == 0)  # runs stay within a row
    end = np.ones(bad.size, dtype=bool)
    end[:-1] = start[1:]
    run = np.cumsum(start) - 1
    row_start = bad - col
    prev_pos = col[start][run] - 1
    nxt_pos = col[end][run] + 1
    owner = node[col]
    Vf = V.ravel()
    prev = np.where(prev_pos >= seg[owner], Vf[row_start + np.maximum(prev_pos, 0)], -np.inf)
    nxt = np.where(nxt_pos < seg[owner + 1], Vf[row_start + np.minimum(nxt_pos, M - 1)],
                   np.inf)
    return prev, nxt
