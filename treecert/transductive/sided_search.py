"""Searches of one node's training rows R served for every test row x that reaches it
(the Venn machine's searches of x's nodes, beyond the label search of
:mod:`treecert.transductive.batch_engine`).

The label search (:mod:`treecert.transductive.label_search`) shares a search among the labels of
one x; yet below a changed test — and at the base node where it changes — many different
x search the very same rows R (segment-challenge: 20 000 label-nodes per 10-fold Venn
run, 3 100 distinct R, five sixths of the rows × labels in R already searched for
another x). Where x enters, only through which side of each cut it lies on:

* x is ineligible, so R's cuts (columns, thresholds, admissibility) and R's class counts
  either side of each are x's own (``label_search`` module docstring), and a cut's gain
  with (x, c) is one of two numbers — x on its left (``x <= threshold``) or on its right —
  computed here once per (cut, label c) with the label search's arithmetic
  (``cut_tables.nimp``: the same class counts, operations and order), so bit for bit
  the gain the label search computes;
* a column's thresholds increase along its cuts, so x is right of a prefix of them and
  left of the rest: the grower's choice in that column, the first cut of largest gain
  rounded to 10 decimals, is the better of the prefix's best with x right and the
  suffix's best with x left (the prefix on a tie: its cuts come first), read from
  running maxima kept per (cut, label);
* the columns' bests go to the grower's own selection (``SplitFinder._choose``), as in
  the label search.

The label search's Fayyad–Irani pruning changes no choice (it loses no first-best cut), so the
exhaustive scoring here chooses the same tests. A table costs a few of the label
search's searches of R (every cut, both sides, all K labels), so it is built only once at least
:data:`MIN_X` test rows have searched R — from the label search's table of R, kept in the
shared cache by the label search of an earlier one — and kept in that byte-bounded
cache (:data:`~treecert.transductive.budget.TABLE_BYTES`) for later batches. It covers
what the label search covers without nominal columns or gain ratio (:func:`covers`). The Venn
machine's engine (:class:`~treecert.methods.venn_fast.TreeVennBatch`) searches through it.
"""

from __future__ import annotations

import numpy as np

from treecert.transductive import label_search
from treecert.transductive.budget import key_bytes
from treecert.transductive.cut_tables import nimp_plus_each, xlogx_of
from treecert.transductive.node_search import row_keys
from treecert.tree.impurity import _ROUND, _impurity_last
from treecert.tree.numeric_search import _TABLE_MAX
from treecert.tree.segments import flat_nonzero, offsets, run_starts

#: Test rows searching the same training rows R from which R's table serves them
#: (segment-challenge's Venn CV, counted per batch: 2 → 10.0 s, 3 → 9.8, 5 → 9.3,
#: 8 → 9.5; the label search alone 11.6).
MIN_X = 5


def covers(finder, weights: np.ndarray) -> bool:
    """Whether the tables apply to this finder's nodes, given that the label search does:
    numeric columns only (nominal tests take the label search), a criterion whose choice is
    the largest gain (gain ratio's MDL correction and split information are the label
    search's alone), and every node's gains reading x ln x from the grower's table (or Gini)
    whatever else its batch holds — training weights below that table's bound."""
    return (finder.nominal_idx.size == 0 and finder.numeric_idx.size > 0
            and finder.params.criterion != "gain_ratio"
            and (finder.params.criterion == "gini" or float(np.sum(weights)) + 1.0 < _TABLE_MAX))


class SidedCuts:
    """Every cut of a node's training rows R with, per label c, its gain with (x, c) left
    of it and right of it, and the running bests along each column (module docstring)."""

    def __init__(self, finder, table) -> None:
        """From the label search's :class:`~treecert.transductive.cut_tables.NodeTable` of R."""
        K = finder.n_classes
        gini = finder.params.criterion == "gini"
        tw = table.N + 1.0
        xlogx = xlogx_of(finder, tw)
        eye = np.eye(K)
        parent = _impurity_last(table.T[None, :] + eye, gini)  # (K,): R ∪ {(x, c)}
        n = table.col.size
        # N·impurity (n, K) of each cut's side holding (x, c)
        self.col, self.thr = table.col, table.thr
        self.left = (parent[None, :] - nimp_plus_each(table.left, gini, xlogx)
                     - table.e_right[:, None]) / tw
        self.right = (parent[None, :] - table.e_left[:, None]
                      - nimp_plus_each(table.right, gini, xlogx)) / tw
        self.rounded_left = np.round(self.left, _ROUND)
        self.rounded_right = np.round(self.right, _ROUND)
        self.start = np.searchsorted(self.col, np.arange(finder.numeric_idx.size + 1))
        self.prefix_best = _first_best_so_far(self.rounded_right, self.col)
        last = n - 1 - np.arange(n)  # the suffixes, read backwards
        self.suffix_best = last[_first_best_so_far(self.rounded_left[last], self.col[last],
                                                   ties_later=True)][last]

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.col, self.thr, self.left, self.right, self.start,
                                      self.prefix_best, self.suffix_best, self.rounded_left,
                                      self.rounded_right))

    def best(self, finder, x: np.ndarray, labels: np.ndarray, ok, gain, thr) -> None:
        """Each numeric column's best cut for x with every class in ``labels`` into rows of
        ``ok``, ``gain`` and ``thr`` (len(labels), p) (the grower's candidates)."""
        has = flat_nonzero(self.start[1:] > self.start[:-1])
        if not has.size:
            return
        right_of = self.thr < x[finder.numeric_idx[self.col]]  # x right of a prefix
        pos = self.start[has] + np.add.reduceat(right_of, self.start[has])
        lab = np.asarray(labels, dtype=np.int64)[:, None]
        before = np.maximum(pos - 1, 0)[None, :]
        after = np.minimum(pos, self.col.size - 1)[None, :]
        i_pre = self.prefix_best[before, lab]
        i_suf = self.suffix_best[after, lab]
        pre_ok = (pos > self.start[has])[None, :]
        suf_ok = (pos < self.start[has + 1])[None, :]
        take_pre = pre_ok & ~(suf_ok & (self.rounded_left[i_suf, lab]
                                        > self.rounded_right[i_pre, lab]))
        cut = np.where(take_pre, i_pre, i_suf)
        ok[:, has] = True
        gain[:, has] = np.where(take_pre, self.right[i_pre, lab], self.left[i_suf, lab])
        thr[:, has] = self.thr[cut]


def _first_best_so_far(r: np.ndarray, col: np.ndarray, ties_later: bool = False) -> np.ndarray:
    """Per entry i and label: the index of the first entry of largest ``r`` (gains rounded
    to 10 decimals, (n, K)) among the entries of i's column ``col`` up to i (with
    ``ties_later``, the last such entry: read backwards, the first in the original order).

    The rounded gains, multiples of 1e-10 below 55 in magnitude, are exact integers m
    (``rint(r · 1e10)``, as ``np.round`` made them) below 2^39; a column's entries, offset
    by 2^40 × its rank among the columns met so far, all exceed those of earlier columns,
    so one running maximum restarts at each column."""
    first = run_starts(col)
    key = np.rint(r * 1e10).astype(np.int64) + (first.cumsum() << 40)[:, None]
    best = np.maximum.accumulate(key, axis=0)
    before = np.vstack([np.full((1, r.shape[1]), np.iinfo(np.int64).min), best[:-1]])
    new = (key >= before) if ties_later else (key > before)
    return np.maximum.accumulate(np.where(new, np.arange(r.shape[0])[:, None], 0), axis=0)


def search_groups(finder, groups: list, cache, keys: list | None = None) -> list:
    """Per group ``(rows, w, x, labels)`` (as :func:`label_search.search_groups`, with its
    ``keys``): the grower's split of R ∪ {(x, c)} for every c in ``labels`` — or None for
    the whole group when R has no table yet (the label search has not searched R, or its
    table left the cache): the caller searches those with the label search, which keeps R's
    table for the next time."""
    served, tables = [], []
    if keys is None:
        keys = row_keys(groups, x_last=False)
    for i, key in enumerate(keys):
        sided = cache.get(("sided", *key))
        if sided is None:
            table = cache.get(key)
            if table is None:
                continue
            sided = SidedCuts(finder, table)
            cache.put(("sided", *key), sided, sided.nbytes() + key_bytes(key))
        served.append(i)
        tables.append(sided)
    out: list = [None] * len(groups)
    if not served:
        return out
    p = finder.numeric_idx.size
    m = np.array([len(groups[i][3]) for i in served], dtype=np.int64)
    L = int(m.sum())
    ok, gain, thr = np.zeros((L, p), dtype=bool), np.zeros((L, p)), np.full((L, p), np.nan)
    bounds = offsets(m)
    for k, (i, sided) in enumerate(zip(served, tables, strict=True)):
        s = slice(bounds[k], bounds[k + 1])
        sided.best(finder, groups[i][2], groups[i][3], ok[s], gain[s], thr[s])
    choice = finder._choose(ok, gain, gain.copy(), thr, np.zeros((L, 0), dtype=np.int64))
    for k, i in enumerate(served):
        out[i] = [choice.split(j) for j in range(bounds[k], bounds[k + 1])]
    return out


def search_nodes(finder, nodes: list, rank: np.ndarray, cache,
                 keys: list | None = None) -> list:
    """The grower's split of every node ``(rows, w, x, c)`` (as
    :func:`label_search.search_nodes`, with its ``keys``). R's table serves x's nodes of
    R when it is kept, and once at least :data:`MIN_X` x have searched R, in this call and
    earlier ones (counted in ``cache``) — built from the label search's cut table of R, kept
    since an earlier call or left by the label search of the first x of this one; the label
    search searches the rest."""
    by_r: dict[tuple, dict[bytes, list[int]]] = {}
    out: list = [None] * len(nodes)
    if keys is None:
        keys = row_keys(nodes)
    for i, (_, _, x, _) in enumerate(nodes):
        if not np.isnan(x).any() and label_search.shares(finder, nodes[i][0].size - 1):
            by_r.setdefault(keys[i], {}).setdefault(x.tobytes(), []).append(i)
    served = []  # nodes of one (R, x), for R's table
    for r_key, by_x in by_r.items():
        members = list(by_x.values())
        before = cache.get(("x searched", *r_key), 0)  # x of earlier batches
        if ("sided", *r_key) in cache:
            served += members
        elif before + len(members) >= MIN_X:
            served += members[(1 if before == 0 or r_key not in cache else 0):]
        else:
            cache.put(("x searched", *r_key), before + len(members), key_bytes(r_key) + 64)
    by_label = np.ones(len(nodes), dtype=bool)
    for m in served:
        by_label[m] = False
    _label_search(finder, nodes, keys, flat_nonzero(by_label), rank, cache, out)
    groups = [(nodes[m[0]][0][:-1], nodes[m[0]][1][:-1], nodes[m[0]][2],
               [nodes[i][3] for i in m]) for m in served]
    unserved = []  # R's cut table left the cache meanwhile
    for m, splits in zip(served, search_groups(finder, groups, cache,
                                               [keys[m[0]] for m in served]), strict=True):
        if splits is None:
            unserved += m
            continue
        for i, split in zip(m, splits, strict=True):
            out[i] = split
    _label_search(finder, nodes, keys, np.array(unserved, dtype=np.int64), rank, cache, out)
    return out


def _label_search(finder, nodes: list, keys: list, idx: np.ndarray, rank: np.ndarray, cache,
                  out: list) -> None:
    """The label search's splits of ``nodes[idx]`` into ``out``."""
    found = label_search.search_nodes(finder, [nodes[i] for i in idx], rank, cache,
                                      [keys[i] for i in idx])
    for i, split in zip(idx, found, strict=True):
        out[i] = split
