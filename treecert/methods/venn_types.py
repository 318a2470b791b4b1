"""Venn types from forecasts: Weka's MDL discretisation on grouped data, and a Venn-matrix
row from groups of examples ("atoms") that share a forecast.

The tree Venn machine sees its n + 1 forecasts as a few hundred leaves, not as n + 1 rows;
:func:`mdl_cuts_segments` finds exactly the cut points that
:func:`treecert.data.discretize.mdl_cut_points` (Weka's ``Discretize``, Fayyad & Irani 1993)
finds on the expanded rows, with far less work per (x, j). Both the batched machine and the
one-(x, j)-at-a-time reference go through :func:`venn_rows_atoms`, so they agree bit for
bit.
"""

from __future__ import annotations

import numpy as np

from treecert.data.discretize import _LOG2, _entropy_conditioned, _entropy_rows
from treecert.parallel import one_blas_thread
from treecert.tree.segments import _ranges, counted_unique, flat_nonzero, offsets, unique_rows


# ------------------------------------------------------------------------------ MDL on groups
def mdl_cuts_segments(values: np.ndarray, counts: np.ndarray, n_inst: np.ndarray,
                      seg_ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weka's Fayyad–Irani MDL cut points (:func:`treecert.data.discretize.mdl_cut_points`) of
    many independent samples at once, each given grouped by distinct value.

    Parameters
    ----------
    values : (G,) distinct values, strictly increasing within each segment.
    counts : (G, K) weighted class counts of each value.
    n_inst : (G,) number of instances of each value.
    seg_ptr : (S + 1,) segment s is groups ``seg_ptr[s]:seg_ptr[s + 1]``.

    Returns ``(segment, cut)`` arrays, one entry per cut point (unordered).

    Candidate cuts lie only between distinct values, so the class counts at each candidate,
    hence every entropy, are those of the ungrouped search; with integer weights the sums are
    exact and the cut points equal ``mdl_cut_points`` on the expanded data bit for bit (a
    property test checks it). The recursion runs breadth-first over all open intervals of
    all segments: one round of array operations per level instead of one per interval.
    """
    out_seg, out_cut = [], []
    for seg, cut in _mdl_levels(values, counts, n_inst, seg_ptr):
        out_seg.append(seg)
        out_cut.append(cut)
    if not out_seg:
        return np.empty(0, np.int64), np.empty(0)
    return np.concatenate(out_seg), np.concatenate(out_cut)


def mdl_bins_segments(values: np.ndarray, counts: np.ndarray, n_inst: np.ndarray,
                      seg_ptr: np.ndarray, probe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per segment of :func:`mdl_cuts_segments`, the bin ``(lo, hi]`` of its MDL cut points
    that holds ``probe[s]``: the nearest cut below it and the nearest at or above it
    (``-inf``/``inf`` where none) — the same bounds as from every cut, with less work.

    A Venn row needs x's bin alone, so the recursion follows only the interval that can
    still hold one of those cuts. A cut c between the interval's values v_k < v_{k+1} lies
    in [v_k, v_{k+1}] (the rounded midpoint), the left part's cuts at most v_k, the right
    part's at least v_{k+1}. With ``probe > c``, c bounds the bin from below and the left
    part's cuts, all at most c, can neither bound it better nor from above; otherwise c
    bounds it from above and the right part's cuts, all at least c, can neither bound it
    better nor lie below it. So the followed part's cuts narrow the bin, the other's never
    change it (``tests/test_venn.py`` checks the bins against every cut)."""
    lo = np.full(seg_ptr.size - 1, -np.inf)
    hi = np.full(seg_ptr.size - 1, np.inf)
    for seg, cut in _mdl_levels(values, counts, n_inst, seg_ptr, probe):
        above = probe[seg] > cut
        lo[seg[above]] = cut[above]
        hi[seg[~above]] = cut[~above]
    return lo, hi


def _mdl_levels(values, counts, n_inst, seg_ptr, probe=None):
    """The breadth-first MDL recursion of :func:`mdl_cuts_segments`: per level, the
    ``(segment, cut)`` of every accepted cut; both parts of a cut are recursed into, or,
    given ``probe``, the part on the probe's side only (:func:`mdl_bins_segments`)."""
    K = counts.shape[1]
    log2_3k = np.array([np.nan] + [np.log(3.0**k - 2.0) / _LOG2 for k in range(1, K + 1)])
    inst_cum = np.concatenate([[0.0], np.cumsum(n_inst)])  # instance counts: exact sums
    seg = np.arange(seg_ptr.size - 1)
    a, b = seg_ptr[:-1].astype(np.int64), seg_ptr[1:].astype(np.int64)
    while a.size:
        n_i = inst_cum[b] - inst_cum[a]
        live = (b - a >= 2) & (n_i >= 2)
        seg, a, b, n_i = seg[live], a[live], b[live], n_i[live]
        if not a.size:
            return
        length = b - a
        # Intervals are zero-padded to a common length: group them by length (within a
        # factor of 4) when one long interval would pad many short ones.
        if a.size * int(length.max()) <= 4 * int(length.sum()):
            groups = [np.arange(a.size)]
        else:
            bucket = np.ceil(np.log2(length) / 2.0)
            groups = [flat_nonzero(bucket == u) for u in np.unique(bucket)]
        accept = np.zeros(a.size, dtype=bool)
        k = np.zeros(a.size, dtype=np.int64)
        for g in groups:
            accept[g], k[g] = _best_cuts(counts, a[g], length[g], n_i[g], log2_3k)
        seg, a, b, k = seg[accept], a[accept], b[accept], k[accept]
        cut = (values[a + k] + values[a + k + 1]) / 2.0
        yield seg, cut
        if probe is None:
            seg, a, b = np.concatenate([seg, seg]), np.concatenate([a, a + k + 1]), \
                np.concatenate([a + k + 1, b])
        else:
            above = probe[seg] > cut
            a, b = np.where(above, a + k + 1, a), np.where(above, b, a + k + 1)


def _best_cuts(counts, a, length, n_i, log2_3k):
    """For intervals ``[a, a + length)`` of grouped values: the entropy-minimising cut
    after position k of each, and whether Fayyad & Irani's criterion accepts it — the
    operations of :func:`treecert.data.discretize.mdl_cut_points` on one interval, padded."""
    span = np.arange(int(length.max()))
    inside = span[None, :] < length[:, None]
    idx = np.minimum(a[:, None] + span[None, :], counts.shape[0] - 1)
    c = np.where(inside[..., None], counts[idx], 0.0)  # (I, L, K), zero-padded
    cum_left = np.cumsum(c, axis=1)
    rows = np.arange(a.size)
    prior = cum_left[rows, length - 1]
    cum_right = prior[:, None, :] - cum_left
    ent = _entropy_conditioned(cum_left[:, :-1], cum_right[:, :-1])
    ent[~inside[:, 1:]] = np.inf  # only cuts between two values of the interval
    k = np.argmin(ent, axis=1)
    best_e = ent[rows, k]
    three = _entropy_rows(np.stack([prior, cum_left[rows, k], cum_right[rows, k]], axis=1))
    prior_e = three[:, 0]
    # Fayyad & Irani's criterion exactly as discretize._fayyad_irani_accepts
    kk = np.count_nonzero(prior > 0, axis=1)
    k1 = np.count_nonzero(cum_left[rows, k] > 0, axis=1)
    k2 = np.count_nonzero(cum_right[rows, k] > 0, axis=1)
    delta = log2_3k[kk] - (kk * prior_e - k2 * three[:, 2] - k1 * three[:, 1])
    wsum = np.cumsum(c.sum(axis=2), axis=1)[rows, length - 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        accept = (best_e < prior_e) & (
            (prior_e - best_e) > (np.log(n_i - 1.0) / _LOG2 + delta) / wsum)
    return accept, k


def exact_sums(*arrays: np.ndarray) -> bool:
    """Whether every entry is a non-negative integer and all of them sum below 2^53: then
    every partial sum of them — in any order, differences too — is exact."""
    return (all(bool(np.all(a >= 0)) and bool(np.all(a == np.floor(a))) for a in arrays)
            and sum(float(a.sum()) for a in arrays) < 2.0**53)


def merge_atoms(vid: np.ndarray, counts: np.ndarray | NonZeroCounts, n_inst: np.ndarray,
                atom_ptr: np.ndarray, x_atom: np.ndarray):
    """The atoms of each Venn row that share a forecast vector (the same ``vid``; x's atom
    must have an id of its own) merged into one, when that cannot change a bit of
    :func:`venn_rows_atoms`: with integer counts (sums below 2^53) every class sum it
    takes — per value group in the MDL, per bin in the row — is exact in any order, and
    atoms with one forecast vector fall in the same group of every column. A tree's pure
    leaves of one class are one atom then (letter-shaped data: 2 000 leaves, ~550 atoms).
    With other counts nothing is merged.

    ``counts`` (A, K) may be given as its :class:`NonZeroCounts`. Returns ``(first, counts,
    n_inst, atom_ptr, x_atom)`` of the merged atoms, ``first`` an original atom of each
    (for its forecast)."""
    R = atom_ptr.size - 1
    cells = counts if isinstance(counts, NonZeroCounts) else NonZeroCounts(counts)
    value = cells.value  # zeros are integers >= 0 adding nothing: the nonzero cells decide
    if not exact_sums(value) or not vid.size:
        return np.arange(vid.size), cells, n_inst, atom_ptr, x_atom
    owner = np.repeat(np.arange(R), np.diff(atom_ptr))
    span = int(vid.max()) + 1
    key = owner * span + vid
    if R * span <= 8 * key.size + 1024:  # counted, no sort; any atom of a group serves
        uniq, inv = counted_unique(key, R * span)  # as its first: they share a forecast
        first = np.empty(uniq.size, dtype=np.int64)
        first[inv] = np.arange(key.size)
    else:
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        inv = inv.ravel()
    A = uniq.size
    merged = cells.sum_by(inv, A)
    ptr = np.searchsorted(uniq // span, np.arange(R + 1))
    return first, merged, np.bincount(inv, weights=n_inst, minlength=A), ptr, inv[x_atom]


#: Class-count cells (groups × classes) of the forecast columns discretised together by
#: one :func:`mdl_cuts_segments` call in :func:`venn_rows_atoms` (~32 MiB).
MDL_CELLS = 1 << 22


def venn_rows_atoms(values: np.ndarray, counts: np.ndarray | NonZeroCounts, n_inst: np.ndarray,
                    atom_ptr: np.ndarray, x_atom: np.ndarray, columns: list[int],
                    vid: np.ndarray | None = None) -> np.ndarray:
    """Venn-matrix rows (R, K) from *atoms*: groups of examples sharing one forecast vector.

    ``values`` (A, K) forecasts, ``counts`` (A, K) weighted class counts (or their
    :class:`NonZeroCounts`), ``n_inst`` (A,)
    numbers of examples; row r's atoms are ``atom_ptr[r]:atom_ptr[r + 1]`` and
    ``x_atom[r]`` (an absolute atom index) holds its test object. Each forecast column in
    ``columns`` is MDL-discretised against the labels, per row, as Weka's filter would on the
    row's expanded examples; the row is the class frequency of the atoms binned like x's.
    Every (column, row) is one segment of a :func:`mdl_cuts_segments` call, columns taken
    together up to :data:`MDL_CELLS` grouped counts (a row holds a few distinct forecasts
    per column, so one call per column would be mostly per-call overhead). ``vid`` (A,),
    ids from 0 with equal ids for equal forecast vectors, lets the atoms be grouped by
    counting instead of sorting (:func:`_value_groups`).
    """
    R = atom_ptr.size - 1
    owner = np.repeat(np.arange(R), np.diff(atom_ptr))
    same = np.ones(values.shape[0], dtype=bool)
    cells = counts if isinstance(counts, NonZeroCounts) else NonZeroCounts(counts)
    rep = None  # an atom of each forecast vector id: the same for every column
    if vid is not None and vid.size:
        rep = np.zeros(int(vid.max()) + 1, dtype=np.int64)
        rep[vid] = np.arange(vid.size)
    kept: list = []  # each column's groups, until its bins come

    def column_groups():
        for col in columns:
            v = values[:, col]
            group, distinct, seg_ptr = _value_groups(v, owner, R, vid, rep)
            G = distinct.size
            kept.append((group, distinct, seg_ptr))
            yield (distinct, seg_ptr, cells.sum_by(group, G),
                   np.bincount(group, weights=n_inst, minlength=G), v[x_atom])

    for lo, hi in x_bins(column_groups(), len(columns), cells.K):
        group, distinct, seg_ptr = kept.pop(0)
        # a group is one row's atoms of one value: in x's bin or not, all together
        at = np.repeat(np.arange(R), np.diff(seg_ptr))
        same &= ((lo[at] < distinct) & (distinct <= hi[at]))[group]
    rows = cells.sum_by(owner, R, keep=same)
    return rows / rows.sum(axis=1, keepdims=True)


def x_bins(column_groups, n_columns: int, K: int):
    """Per forecast column, in order, x's bins ``(lo, hi)`` (R,) of the R rows: the
    columns' groups — each ``(values, seg_ptr (R + 1,), class counts, n_inst, x's value
    per row)``, a row's groups its segment, values ascending — discretised together up to
    :data:`MDL_CELLS` grouped counts (:func:`mdl_bins_segments`)."""
    part: list = []
    for i, groups in enumerate(column_groups):
        part.append(groups)
        if i + 1 < n_columns and sum(c[0].size for c in part) * K < MDL_CELLS:
            continue
        offset = np.cumsum([0] + [c[0].size for c in part])
        seg_ptr = np.concatenate([c[1][:-1] + o for c, o in zip(part, offset, strict=False)]
                                 + [offset[-1:]])
        # x's bin is (lo, hi]: the nearest cuts below and at-or-above its forecast
        lo, hi = mdl_bins_segments(*(np.concatenate([c[k] for c in part]) for k in (0, 2, 3)),
                                   seg_ptr, np.concatenate([c[4] for c in part]))
        R = part[0][1].size - 1
        for k in range(len(part)):
            yield lo[k * R:(k + 1) * R], hi[k * R:(k + 1) * R]
        part = []


def venn_rows_delta(base_vectors: tuple[np.ndarray, np.ndarray], base_counts: np.ndarray,
                    base_n: np.ndarray, removed: np.ndarray, removed_ptr: np.ndarray,
                    new_values: np.ndarray, new_counts: np.ndarray, new_n: np.ndarray,
                    new_ptr: np.ndarray, columns: list[int]) -> np.ndarray:
    """:func:`venn_rows_atoms` of rows that share most of their atoms: row r's atoms are the
    base atoms (``base_*``) less those at ``removed[removed_ptr[r]:removed_ptr[r + 1]]``,
    plus its new atoms ``new_ptr[r]:new_ptr[r + 1]``, the last of them holding x.
    ``base_vectors``: :func:`~treecert.tree.segments.unique_rows` of the base atoms'
    forecasts (the same for every chunk of jobs: their caller keeps it).

    Only for integer counts and instance numbers (sums below 2^53): every sum is then exact
    in any order, so each (row, value) group's class counts can be the base atoms' of that
    value, less the removed ones', plus the new ones' — the same numbers, the same bits —
    and the row the base atoms' in x's bins less the removed plus the new. A tree's rows
    on D ∪ {(x, j)} keep nearly every leaf of the tree on D (letter-shaped data: ~540
    atoms a row, ~5 values a forecast column), so the work per row is its groups and its
    own atoms, not all of them again. ``tests/test_venn.py`` checks it against
    :func:`venn_rows_atoms` of the atoms written out."""
    R, K = new_ptr.size - 1, base_counts.shape[1]
    rem_row = np.repeat(np.arange(R), np.diff(removed_ptr))
    new_row = np.repeat(np.arange(R), np.diff(new_ptr))
    x_new = new_ptr[1:] - 1
    classes = np.arange(K)
    # base atoms of one forecast vector share every bin: their counts summed once
    vectors, vid = base_vectors
    inside = np.ones((R, vectors.shape[0]), dtype=bool)  # base vectors in x's bins
    inside_new = np.ones(new_row.size, dtype=bool)
    ranks: list = []

    # class counts, instances and atoms (integers) of each base vector and of each
    # changed atom, as nonzero cells (a leaf holds few classes)
    def stats(counts, n):
        return np.column_stack([counts, n, np.ones(n.size)])

    vector_stats = np.bincount((vid[:, None] * (K + 2) + np.arange(K + 2)).ravel(),
                               weights=stats(base_counts, base_n).ravel(),
                               minlength=vectors.shape[0] * (K + 2)).reshape(-1, K + 2)
    new_vectors, new_vid = unique_rows(new_values)
    changed = np.vstack([-stats(base_counts[removed], base_n[removed]),
                         stats(new_counts, new_n)])
    cell = flat_nonzero(changed)
    entry, slot = np.divmod(cell, K + 2)
    # each change's forecast vector: a base one, or a new one after them
    changes = (np.concatenate([rem_row, new_row])[entry],
               np.concatenate([vid[removed], vectors.shape[0] + new_vid])[entry], slot,
               changed.ravel()[cell])
    cell = flat_nonzero(vector_stats)
    groups = _delta_groups(vectors, (*np.divmod(cell, K + 2), vector_stats.ravel()[cell]),
                           new_vectors, changes, new_vid[x_new], R, columns, ranks)
    for lo, hi in x_bins(groups, len(columns), K):
        distinct, r_vec, r_new = ranks.pop(0)
        within = (lo[:, None] < distinct[None, :]) & (distinct[None, :] <= hi[:, None])
        inside &= within[:, r_vec]
        inside_new &= within[new_row, r_new[new_vid]]
    with one_blas_thread():  # integer sums: exact in any order
        rows = inside.astype(float) @ vector_stats[:, :K]
    rows -= np.bincount((rem_row[:, None] * K + classes).ravel(),
                        weights=(base_counts[removed]
                                 * inside[rem_row, vid[removed]][:, None]).ravel(),
                        minlength=R * K).reshape(R, K)
    rows += np.bincount((new_row[:, None] * K + classes).ravel(),
                        weights=(new_counts * inside_new[:, None]).ravel(),
                        minlength=R * K).reshape(R, K)
    return rows / rows.sum(axis=1, keepdims=True)


def _delta_groups(vectors, vector_stats, new_vectors, changes, x_vector, R, columns, ranks):
    """Per column, :func:`x_bins`' groups of :func:`venn_rows_delta`'s R rows: the base
    vectors' stats (class counts, instances, atoms: their nonzero cells ``vector_stats``)
    per value, plus each row's changes (``changes``: nonzero cells of the removed base
    atoms' negated stats and the new atoms' stats, each with its row and its forecast
    vector: base vectors first, then the new ones). Appends each column's values and its
    vectors' ranks to ``ranks``."""
    vec, slot, value = vector_stats
    c_row, c_vector, c_slot, c_value = changes
    width = int(max(slot.max(initial=0), c_slot.max(initial=0))) + 1
    n_base = vectors.shape[0]
    for col, (distinct, rank) in zip(columns, _column_ranks(np.vstack([vectors, new_vectors]),
                                                            columns), strict=True):
        U = distinct.size
        r_vec, r_new = rank[:n_base], rank[n_base:]
        ranks.append((distinct, r_vec, r_new))
        # per (row, value): the base's, less the removed atoms', plus the new atoms' — a
        # row's groups at the base's values (B of them) in a dense (R, B) table, at values
        # only new atoms hold (a row's own few) apart: the table never grows with them
        base_values = flat_nonzero(np.bincount(r_vec, minlength=U))
        B = base_values.size
        column = np.full(U, -1)
        column[base_values] = np.arange(B)
        c_rank = rank[c_vector]
        c_col = column[c_rank]
        dense = c_col >= 0  # removed atoms are base atoms: apart, only additions
        table = (np.bincount(column[r_vec[vec]] * width + slot, weights=value,
                             minlength=B * width)[None, :]
                 + np.bincount(((c_row * B + c_col) * width + c_slot)[dense],
                               weights=c_value[dense],
                               minlength=R * B * width).reshape(R, B * width))
        table = table.reshape(R * B, width)
        present = flat_nonzero(table[:, -1] > 0)
        apart, where = np.unique((c_row * U + c_rank)[~dense], return_inverse=True)
        sums = np.bincount(where.ravel() * width + c_slot[~dense], weights=c_value[~dense],
                           minlength=apart.size * width).reshape(-1, width)
        key = np.concatenate([present // B * U + base_values[present % B], apart])
        order = np.argsort(key, kind="stable")  # by row, then value (keys are distinct)
        key = key[order]
        stats = np.concatenate([table[present], sums])[order]
        yield (distinct[key % U], np.searchsorted(key // U, np.arange(R + 1)),
               stats[:, :-2], stats[:, -2], new_vectors[x_vector, col])


def _column_ranks(a: np.ndarray, columns: list[int]):
    """Per column of ``a`` (no NaN) in ``columns``: ``np.unique(a[:, col],
    return_inverse=True)`` — its distinct values ascending and each entry's index among
    them — from one sort of all the columns (a call per column was mostly numpy's
    per-call work: ~5 distinct forecasts a column)."""
    sub = a[:, columns]
    order = np.argsort(sub, axis=0, kind="stable")
    ordered = np.take_along_axis(sub, order, axis=0)
    new = np.ones(sub.shape, dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    rank = np.empty(sub.shape, dtype=np.int64)
    np.put_along_axis(rank, order, np.cumsum(new, axis=0) - 1, axis=0)
    for j in range(len(columns)):
        yield ordered[new[:, j], j], rank[:, j]


def _value_groups(v: np.ndarray, owner: np.ndarray, R: int, vid: np.ndarray | None,
                  rep: np.ndarray | None):
    """The atoms grouped by (row, value ``v``), groups numbered in that order: each atom's
    group, each group's value, and each row's first group (R + 1,). With ``vid`` (and
    ``rep``, an atom of each id) the values are ranked among the few distinct forecasts and
    the groups counted (no sort of the atoms) when rows × distinct values is not much more
    than the atoms."""
    if rep is not None:
        values, rank = np.unique(v[rep], return_inverse=True)
        U = values.size
        if R * U <= 8 * v.size + 1024:
            keys, group = counted_unique(owner * U + rank.ravel()[vid], R * U)
            return group, values[keys % U], np.searchsorted(keys // U, np.arange(R + 1))
    order = np.lexsort((v, owner))
    vs, os = v[order], owner[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = (os[1:] != os[:-1]) | (vs[1:] != vs[:-1])
    group = np.empty(order.size, dtype=np.int64)
    group[order] = np.cumsum(first) - 1
    return group, vs[first], np.searchsorted(os[first], np.arange(R + 1))


class NonZeroCounts:
    """The nonzero cells of atoms' class counts (A, K), in row-major order, for summing
    per group of atoms many times over (once per forecast column).

    A group's class count is each cell summed from zero in atom order — the order a
    per-class ``bincount``, or ``counts[mask].sum(axis=0)``, adds them. Leaving out the
    zero terms changes no bit: s + 0 = s for every partial sum s, and a sum started at +0
    is never -0 (x + y = -0 needs x = y = -0). Atoms of a tree's leaves hold a few classes
    each, so this is a fraction of the A·K cells (letter-shaped data: K = 26)."""

    def __init__(self, counts: np.ndarray) -> None:
        self.K = counts.shape[1]
        flat = np.asarray(counts, dtype=float).ravel()
        cell = flat_nonzero(flat)  # row-major: atoms in order, classes ascending
        self.atom, self.cls = np.divmod(cell, self.K)
        self.value = flat[cell]

    @classmethod
    def of_rows(cls, table: np.ndarray, take: np.ndarray) -> NonZeroCounts:
        """``NonZeroCounts(table[take])`` without building ``table[take]``: each row's
        nonzero cells found once and gathered per atom — the same cells in the same order
        (atoms in order, classes ascending). Atoms repeat a few pool rows (a base tree's
        leaves, for every job) many times over."""
        K = table.shape[1]
        flat = np.asarray(table, dtype=float).ravel()
        nonzero = flat_nonzero(flat)  # row-major: rows in order, classes ascending
        ptr = offsets(np.bincount(nonzero // K, minlength=table.shape[0]))
        lens = np.diff(ptr)[take]
        cell = _ranges(ptr[:-1][take], lens)
        out = cls.__new__(cls)
        out.K = K
        out.atom = np.repeat(np.arange(take.size), lens)
        out.cls = (nonzero % K)[cell]
        out.value = flat[nonzero][cell]
        return out

    def sum_by(self, group: np.ndarray, G: int, keep: np.ndarray | None = None) -> np.ndarray:
        """Per group, the class counts (G, K) of its atoms (``group`` per atom), the atoms
        where ``keep`` is false left out."""
        atom, cls, value = self.atom, self.cls, self.value
        if keep is not None:
            sel = keep[atom]
            atom, cls, value = atom[sel], cls[sel], value[sel]
        return np.bincount(group[atom] * self.K + cls, weights=value,
                           minlength=G * self.K).reshape(G, self.K)


def type_columns(n_classes: int) -> list[int]:
    """Forecast columns that define the types: class 1 for two classes, else all."""
    return [1] if n_classes == 2 else list(range(n_classes))


def venn_row(F: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """One row of the Venn matrix: class frequencies among the examples whose MDL-binned
    forecasts equal those of the last example (the test object with its tentative label).

    Parameters
    ----------
    F : (n + 1, K) forecasts of the bag; the last row is x.
    y : (n + 1,) labels (x's tentative label last).
    w : (n + 1,) weights.
    """
    counts = np.zeros((y.size, n_classes))
    counts[np.arange(y.size), y] = w
    return venn_rows_atoms(F, counts, np.ones(y.size), np.array([0, y.size]),
                           np.array([y.size - 1]), type_columns(n_classes))[0]


#: Atoms × classes² per batched Venn-row call: bounds the MDL's work arrays (~4 MB each).
_CELLS_PER_CALL = 1 << 19


def bag_venn_matrices(forecasts, y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """Venn matrices (B, K, K), one per item of ``forecasts``: an array (K, m + 1, K) — or
    (1, m + 1, K) when the forecasts do not depend on the tentative label — of the bag's
    forecasts under each tentative label j: m examples with labels ``y`` and weights ``w``,
    then the test object (label j, weight 1). Each row is :func:`venn_row`; the rows of many
    test objects go through one :func:`venn_rows_atoms` call."""
    K = n_classes
    m1 = y.size + 1
    base = np.zeros((m1, K))
    base[np.arange(m1 - 1), y] = w
    per_call = max(1, _CELLS_PER_CALL // (m1 * K * K))  # test objects per call
    out, values = [], []

    def flush():
        R = len(values)
        counts = np.tile(base, (R, 1))
        x_atom = np.arange(1, R + 1) * m1 - 1
        counts[x_atom, np.arange(R) % K] = 1.0
        out.append(venn_rows_atoms(np.vstack(values), counts, np.ones(R * m1),
                                   np.arange(R + 1) * m1, x_atom, type_columns(K)))
        values.clear()

    for F in forecasts:
        values.extend(np.broadcast_to(F, (K, m1, K)))
        if len(values) >= per_call * K:
            flush()
    if values:
        flush()
    return (np.concatenate(out) if out else np.zeros((0, K))).reshape(-1, K, K)
