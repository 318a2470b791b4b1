"""The best cut of every node of a one-column batch, counted per run of equal values.

:meth:`NumericSearch._numeric_batch <treecert.tree.numeric_search.NumericSearch._numeric_batch>`
cumulates every class's weight along every sorted entry (classes × entries). A cut can only
lie between two different values, so :func:`run_cuts` tallies the class weights of each
*run* of equal values of a node (one ``bincount``) and cumulates those instead (classes ×
runs): on columns of few distinct values (letter's 16, shuttle's 121) a large node has
far fewer runs than entries. The ensembles' grower (:mod:`treecert.tree.batch_grow`)
searches each (node, drawn column) pair as a segment of such a batch.

It chooses what ``_numeric_batch`` chooses, bit for bit, where every weight is an integer
(``_Batch.integral``, the bootstrap ensembles' case) and no row is ineligible: the class
weights before a cut are then exact integers whichever way they are summed, and the gain of
a cut is computed from them by the same expressions (``x ln x`` from the same table, the
same order of additions over classes); the first cut of largest rounded gain is the one the
search over every cut finds (Fayyad-Irani's skipping there only saves work).
"""

from __future__ import annotations

import numpy as np

from treecert.tree.impurity import _LN2, _ROUND, _impurity, _sum_cols
from treecert.tree.numeric_search import _TABLE_MAX, chosen_cut_ratio, distinct_cuts, no_cuts
from treecert.tree.segments import first_max_of_runs, flat_nonzero, run_starts


def run_cuts(finder, seg: np.ndarray, V: np.ndarray, y: np.ndarray, w: np.ndarray,
             total_w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ok, gain, score, threshold), each (G,), of G segments ``seg`` of one numeric column:
    each segment's values ``V`` sorted (unknown last), their classes ``y`` and integer
    weights ``w``, and its total weight ``total_w`` (known and unknown values), every row
    eligible."""
    params = finder.params
    K = finder.n_classes
    gini = params.criterion == "gini"
    G = seg.size - 1
    ok_out, gain_out, score_out, thr_out = (a[:, 0] for a in no_cuts(G, 1))
    M = V.size
    if M < 2:
        return ok_out, gain_out, score_out, thr_out
    # runs of equal values within a node (each unknown value a run of its own, last)
    start = run_starts(V)
    start[seg[:-1][seg[1:] > seg[:-1]]] = True
    first = flat_nonzero(start)
    run = np.cumsum(start) - 1
    R = first.size
    if w.size and bool(np.all(w == 1.0)):
        counts = np.bincount(y * R + run, minlength=K * R)
        run_w = np.diff(np.append(first, M))
    else:
        counts = np.bincount(y * R + run, weights=w, minlength=K * R).astype(np.int64)
        run_w = np.bincount(run, weights=w, minlength=R).astype(np.int64)
    # (classes, runs): cumulated along the last axis, exact integers, across the nodes
    cum = np.cumsum(counts.reshape(K, R), axis=1)
    cum_w = np.cumsum(run_w)
    run_node = np.searchsorted(seg, first, side="right") - 1
    run_last = np.empty(R, dtype=np.int64)  # each run's last sorted position
    run_last[:-1] = first[1:] - 1
    run_last[-1] = M - 1
    # what the runs of the nodes before a node add up to, taken off its own sums
    node_first_run = np.searchsorted(first, seg[:-1])
    before = np.zeros((K, G), dtype=np.int64)
    before_w = np.zeros(G, dtype=np.int64)
    has_before = node_first_run > 0
    before[:, has_before] = cum[:, node_first_run[has_before] - 1]
    before_w[has_before] = cum_w[node_first_run[has_before] - 1]
    left_w = cum_w - before_w[run_node]
    known = ~np.isnan(V[first])
    # known class weights of each node: the sums at its last known run (known runs first)
    kr = flat_nonzero(known)
    kr_node = run_node[kr]
    last = run_starts(kr_node[::-1])[::-1]
    last_known = np.full(G, -1, dtype=np.int64)
    last_known[kr_node[last]] = kr[last]
    has = last_known >= 0
    KC = np.where(has, cum[:, np.maximum(last_known, 0)] - before, 0)  # (K, G)
    KE = np.where(has, left_w[np.maximum(last_known, 0)], 0)
    # a cut follows run r when run r + 1 is in the same node and known
    nxt = np.minimum(np.arange(R) + 1, R - 1)
    valid = (np.arange(R) < R - 1) & (run_node[nxt] == run_node) & known[nxt] & known
    valid &= distinct_cuts(V[run_last], V[first[nxt]], params.threshold)  # J48's 1e-5 gap
    if params.criterion == "gain_ratio":
        min_split = np.clip(0.1 * KE.astype(float) / K, params.min_leaf, 25.0)
        ms = min_split[run_node]
        valid &= (KE >= 2 * min_split)[run_node]
    else:
        ms = float(params.min_leaf)
    valid &= left_w >= ms
    valid &= KE[run_node] - left_w >= ms
    cut = flat_nonzero(valid)
    if not cut.size:
        return ok_out, gain_out, score_out, thr_out
    gi = run_node[cut]
    # ``_numeric_batch``'s expressions (``cut_gain``): each class one array, added in order
    parent = _impurity(list(KC.astype(float)), gini)
    Lc = cum[:, cut]
    Lc -= before[:, gi]
    Rc = KC[:, gi] - Lc
    if not gini and float(total_w.max()) < _TABLE_MAX:
        table = finder._xlogx_table(int(total_w.max()))
        lw = left_w[cut]
        imp_l = (table[lw] - _sum_cols(list(table[Lc]))) / _LN2
        imp_r = (table[KE[gi] - lw] - _sum_cols(list(table[Rc]))) / _LN2
    else:
        imp_l = _impurity(list(Lc.astype(float)), gini)
        imp_r = _impurity(list(Rc.astype(float)), gini)
    gain = (parent[gi] - imp_l - imp_r) / total_w[gi]
    new = run_starts(gi)
    grp = flat_nonzero(new)
    k, _, _ = first_max_of_runs(gain.round(_ROUND), grp)
    gg = gi[k]
    g_best = gain[k]
    ok = np.ones(gg.size, dtype=bool)
    if params.criterion == "gain_ratio":
        n_cuts = np.diff(np.append(grp, cut.size))
        g_best, ok, score = chosen_cut_ratio(
            g_best, n_cuts, _sum_cols(list(Lc[:, k].astype(float))),
            _sum_cols(list(Rc[:, k].astype(float))), _sum_cols(list(KC[:, gg].astype(float))),
            total_w[gg])
    else:
        score = g_best
    r = cut[k]
    vi = V[run_last[r]]
    vn = V[first[r + 1]]
    thr = vi if params.threshold == "lower" else (vi + vn) / 2.0
    thr = np.where(thr < vn, thr, vi)
    ok_out[gg] = ok
    gain_out[gg] = g_best
    score_out[gg] = score
    thr_out[gg] = thr
    return ok_out, gain_out, score_out, thr_out
