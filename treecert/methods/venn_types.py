"""Venn types from forecasts: Weka's MDL discretisation on grouped data, and a Venn-matrix
row from groups of examples ("atoms") that share a forecast.

The tree Venn machine sees its n + 1 forecasts as a few hundred leaves, not as n + 1 rows;
:func:`mdl_cuts_grouped` finds exactly the cut points that
:func:`treecert.discretize.mdl_cut_points` (Weka's ``Discretize``, Fayyad & Irani 1993)
finds on the expanded rows, with far less work per (x, j). Both the batched machine and the
one-(x, j)-at-a-time reference go through :func:`venn_row_atoms`, so they agree bit for bit.
"""

from __future__ import annotations

import numpy as np

_LN2 = np.log(2.0)


# ------------------------------------------------------------------------------ MDL on groups
def _lnf(x: np.ndarray) -> np.ndarray:
    """x·ln x, 0 for x <= 0 — the same operations as Weka's ``lnFunc`` in
    :mod:`treecert.discretize`, for a whole matrix at once."""
    out = np.zeros(x.shape)
    np.log(x, out=out, where=x > 0)
    return out * x


def _entropy_rows(counts: np.ndarray) -> np.ndarray:
    """:func:`treecert.discretize._entropy_rows` with one log call: same operation order."""
    L = _lnf(counts)
    ret = np.zeros(counts.shape[0])
    tot = np.zeros(counts.shape[0])
    for j in range(counts.shape[1]):
        ret -= L[:, j]
        tot += counts[:, j]
    nz = np.abs(tot) >= 1e-6
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(nz, (ret + _lnf(tot)) / (tot * _LN2), 0.0)


def _entropy_conditioned(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """:func:`treecert.discretize._entropy_conditioned`, same operation order."""
    ret = np.zeros(left.shape[0])
    total = np.zeros(left.shape[0])
    for side in (left, right):
        L = _lnf(side)
        row_sum = np.zeros(left.shape[0])
        for j in range(side.shape[1]):
            ret = ret + L[:, j]
            row_sum = row_sum + side[:, j]
        ret = ret - _lnf(row_sum)
        total = total + row_sum
    nz = np.abs(total) >= 1e-6
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(nz, -ret / (total * _LN2), 0.0)


def mdl_cuts_grouped(values: np.ndarray, counts: np.ndarray, n_inst: np.ndarray) -> np.ndarray:
    """Weka's Fayyad–Irani MDL cut points (:func:`treecert.discretize.mdl_cut_points`) from
    data grouped by distinct value.

    Parameters
    ----------
    values : (m,) strictly increasing distinct values.
    counts : (m, K) weighted class counts of each value.
    n_inst : (m,) number of instances of each value.

    Candidate cuts lie only between distinct values, so the class counts at each candidate,
    hence every entropy, are those of the ungrouped search; with integer weights the sums are
    exact and the cut points equal ``mdl_cut_points`` on the expanded data bit for bit (a
    property test checks it).
    """
    cuts: list[float] = []
    stack = [(0, values.size)]
    log2_3k = {k: np.log(3.0**k - 2.0) / _LN2 for k in range(1, counts.shape[1] + 1)}
    while stack:
        a, b = stack.pop()
        n_i = int(n_inst[a:b].sum())
        if b - a < 2 or n_i < 2:
            continue
        c = counts[a:b]
        cum_left = np.cumsum(c, axis=0)
        prior = cum_left[-1]
        cum_right = prior[None, :] - cum_left
        ent = _entropy_conditioned(cum_left[:-1], cum_right[:-1])
        k = int(np.argmin(ent))
        three = _entropy_rows(np.vstack([prior, cum_left[k], cum_right[k]]))
        prior_e, best_e = float(three[0]), float(ent[k])
        if not best_e < prior_e:
            continue
        # Fayyad & Irani's criterion exactly as discretize._fayyad_irani_accepts
        kk = int(np.count_nonzero(prior > 0))
        k1 = int(np.count_nonzero(cum_left[k] > 0))
        k2 = int(np.count_nonzero(cum_right[k] > 0))
        delta = log2_3k[kk] - (kk * prior_e - k2 * float(three[2]) - k1 * float(three[1]))
        wsum = float(np.cumsum(c.sum(axis=1))[-1])
        if not (prior_e - best_e) > (np.log(float(n_i - 1)) / _LN2 + delta) / wsum:
            continue
        cuts.append((values[a + k] + values[a + k + 1]) / 2.0)
        stack.append((a, a + k + 1))
        stack.append((a + k + 1, b))
    return np.sort(np.asarray(cuts, dtype=float))


def venn_row_atoms(values: np.ndarray, counts: np.ndarray, n_inst: np.ndarray, x_atom: int,
                   columns: list[int]) -> np.ndarray:
    """A Venn-matrix row from *atoms*: groups of examples sharing one forecast vector.

    ``values`` (A, K) forecasts, ``counts`` (A, K) weighted class counts, ``n_inst`` (A,)
    numbers of examples; ``x_atom`` holds the test object. Each forecast column in
    ``columns`` is MDL-discretised against the labels (as Weka's filter would on the
    expanded examples); the row is the class frequency of the atoms binned like x's.
    """
    same = np.ones(values.shape[0], dtype=bool)
    for c in columns:
        u, inv = np.unique(values[:, c], return_inverse=True)
        K = counts.shape[1]
        grouped = np.zeros((u.size, K))
        for k in range(K):
            grouped[:, k] = np.bincount(inv, weights=counts[:, k], minlength=u.size)
        cuts = mdl_cuts_grouped(u, grouped, np.bincount(inv, weights=n_inst, minlength=u.size))
        if cuts.size:
            b = np.searchsorted(cuts, values[:, c], side="left")
            same &= b == b[x_atom]
    row = counts[same].sum(axis=0)
    return row / row.sum()
