"""The numeric search's cuts in nodes holding ineligible rows (the TPCE test row, unknown
values) take their thresholds from eligible values only: the vectorised lookup, which looks
only at valid cuts and only up the ineligible entries next to them, gives what the
definition gives, cut by cut, for both threshold rules."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.tree.numeric_search import NumericSearch


def _reference(V, good, seg, node, valid, inel_seg, rule):
    """valid restricted, and the threshold of every remaining valid cut of a flagged node,
    from the definition: the nearest eligible known value either side within the node."""
    valid = valid.copy()
    thr = {}
    p, M = V.shape
    for j in range(p):
        for i in range(M - 1):
            g = node[i]
            if not (valid[j, i] and inel_seg[g]):
                continue
            left = [V[j, t] for t in range(seg[g], i + 1) if good[j, t]]
            right = [V[j, t] for t in range(i + 1, seg[g + 1]) if good[j, t]]
            prev = left[-1] if left else -np.inf
            nxt = right[0] if right else np.inf
            ok = np.isfinite(prev) and np.isfinite(nxt)
            if rule == "lower":
                t = prev
                ok = ok and prev == V[j, i]
            else:
                with np.errstate(invalid="ignore"):
                    t = (prev + nxt) / 2.0
                ok = ok and V[j, i] <= t < V[j, i + 1]
            if ok:
                thr[j * (M - 1) + i] = t
            else:
                valid[j, i] = False
    return valid, thr


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(1, 3),
       lens=st.lists(st.integers(0, 9), min_size=1, max_size=6),
       rule=st.sampled_from(["midpoint", "lower"]))
def test_ineligible_cuts_follow_the_definition(seed, p, lens, rule):
    rng = np.random.default_rng(seed)
    lens = np.array(lens)
    seg = np.r_[0, np.cumsum(lens)]
    M = int(seg[-1])
    if M < 2:
        return
    node = np.repeat(np.arange(lens.size), lens)
    # few levels (ties), huge values (midpoints that overflow), inf, unknowns sorted last
    levels = np.array([-np.inf, -1e308, -2.0, -1.0, 0.0, 0.5, 1.0, 1e308, np.inf])
    V = levels[rng.integers(0, levels.size, (p, M))]
    V[rng.random((p, M)) < 0.2] = np.nan
    for j in range(p):
        for g in range(lens.size):
            V[j, seg[g]:seg[g + 1]] = np.sort(V[j, seg[g]:seg[g + 1]])
    el_s = rng.random((p, M)) < 0.7
    valid = (V[:, :-1] < V[:, 1:]) & (node[1:] == node[:-1]) & (rng.random((p, M - 1)) < 0.8)
    inel_seg = rng.random(lens.size) < 0.7
    finder = SimpleNamespace(params=SimpleNamespace(threshold=rule))
    b = SimpleNamespace(V=V, seg=seg, node=node)
    want_valid, want_thr = _reference(V, el_s & ~np.isnan(V), seg, node, valid, inel_seg,
                                      rule)
    got_valid = valid.copy()
    flag, cut, thr = NumericSearch._ineligible_cuts(finder, b, inel_seg, got_valid, el_s)
    np.testing.assert_array_equal(flag, inel_seg)
    np.testing.assert_array_equal(got_valid, want_valid)
    assert np.all(np.diff(cut) > 0)
    got_thr = dict(zip(cut.tolist(), thr.tolist(), strict=True))
    for c, t in want_thr.items():  # the thresholds of every cut still valid, bit for bit
        assert np.float64(got_thr[c]).tobytes() == np.float64(t).tobytes()
