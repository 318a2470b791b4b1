"""Tests that no x can change: one search of training rows R serves every node R ∪ {x}.

In a round of the exact batched paths (:mod:`treecert.transductive.exact_paths`) many nodes
hold the same training rows R and differ only by their x: at the root every job holds all
of D, below it every x that entered the same branches the same way. Each is searched
exactly, since with C4.5's unknown values no certificate of the base tree applies. But x
— one ineligible instance of weight at most 1 — moves every test's score by a bounded
amount, and where R's best test leads all others by more than those bounds it is the
grower's choice for every R ∪ {x}:

* **The bound.** A test's information gain with unknown values is its *numerator* — the
  n·entropy (bits) of the known part less its branches' — over the node's total weight.
  Adding weight w ≤ 1 of class c to a count vector of weight n with n_c of class c raises
  its n·entropy by the integral of log2((n + t) / (n_c + t)) for t up to w: never less than
  0, never more than δ(n) - δ(n_c), δ(z) = (z + 1) log2(z + 1) - z log2 z (n·Gini: less
  than 2). x of class c with a known value enters the known part (raising the numerator by
  at most its parent's rise for c) and one branch (lowering it by at most the largest
  branch's rise for c); with an unknown value it moves nothing. All tests share the
  denominator (R's weight plus x's), so a test whose numerator less its largest fall for c
  exceeds every other test's numerator plus its largest rise for c, for every class c,
  stays the best with x, by more than the rounding the grower's choice
  (:meth:`~treecert.tree.split_search.SplitFinder._choose`) could tie.
* **Parents that cancel.** Two tests whose known parts have the same class counts (columns
  without unknown values in R, cuts of one column) see the same parent rise wherever x's
  value is known in both columns, and it cancels: their numerators' difference then moves
  by at most the leader's branch rise. Where x's value is known in one column only, just
  that test moves — by at most the leader's fall or the rival's rise. So such a rival
  trails by more than the larger of the two, not their sum.
* **The same tests.** x is ineligible: it never makes a test admissible or not (eligible
  weights) and never becomes a threshold (the grower's ineligible-cut rule keeps the cut
  between R's neighbouring values, with the same threshold), so R ∪ {x} offers R's tests.
* **The settled test** is the grower's own choice on R (:func:`~treecert.transductive.
  node_search.evaluate_nodes`), when every other admissible test of R — scored here in
  float arithmetic, all cuts of every numeric column and every nominal test — trails it
  so, plus a slack far above that arithmetic's rounding error, and its gain stays above
  ``min_gain`` with x. The admissibility checks are relaxed by the same slack, so a test the
  grower admits is never missed (an extra one only costs a proof); with integer weights
  they are exact (sums in any order are the grower's).

* **Gain ratio** (J48's choice: the best ratio among the tests whose gain reaches the
  average gain less 1e-3), for multiway tests of nominal columns. A test's ratio is its
  numerator over S, the n·entropy (bits) of its partition of the node's weight into the
  values' weights and the unknown weight (n·split information): the node's weight cancels.
  x of weight w ≤ 1 enters one part of it (its value's, or the unknown one), so S rises by
  at least 0 and at most the largest δ(N) - δ(part) (the same bound, over the parts), and
  the numerator moves as above. The filter compares numerators with their mean over the
  counted tests (x changes neither which tests are admissible nor which are counted) less
  1e-3 of the node's weight. So the leader is settled where, for every class of x, its
  lowest numerator clears the highest mean, its lowest ratio is above 1e-6, and it beats
  the highest ratio of every rival that the lowest mean does not shut out of the pool.
  Every test must then be admissible beyond the slack, or exactly with integer weights
  (so the counted tests are the grower's), and none may be numeric (J48's MDL correction
  and cut counts are not bounded here) or one-vs-rest (each column's best value would move
  the average).
* **Contenders** (gain ratio). Where several tests stay close — soybean's root: three
  columns within 0.3 % — no one test settles, but the same bounds shut most columns out:
  per class of x, the best lowest ratio of a test sure to be in the pool bounds the
  winner's from below, and a rival whose highest ratio stays under it, or that the pool
  shuts out, never wins. Where every remaining contender is sure to be in the pool, the
  nodes R ∪ {x} are searched over the contenders alone (:func:`among`) — each column's
  scores are its own, and the pool needs no average — which is the grower's choice.

The stopping rules are the caller's, on each node's own counts.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from treecert.transductive.node_search import _groups, evaluate_nodes
from treecert.tree.impurity import _impurity_last, unit_rise
from treecert.tree.segments import flat_nonzero
from treecert.tree.split_search import _EPS, Split, SplitFinder, _columns_by_width

#: Slack of the proof, per unit of R's weight (numerators are n·impurity): far above the
#: rounding of float scores (~1e-12), far below the leads it settles.
_SLACK = 1e-6
#: A proof is tried for training rows held by at least this many nodes of one search, and
#: more than this many rows: a failed try costs about one search of R.
SETTLE_NODES = 8
SETTLE_ROWS = 256


def covers(finder) -> bool:
    """Whether the bounds hold for the finder: information gain or Gini, or gain ratio with
    multiway tests of nominal columns only (module docstring)."""
    criterion = finder.params.criterion
    return criterion in ("info_gain", "gini") or (
        criterion == "gain_ratio" and not finder.numeric_idx.size
        and not finder.params.binary_splits)


def _rises(branches: np.ndarray, gini: bool) -> np.ndarray:
    """Per class, the most x of that class raises n·impurity of any of ``branches`` (..., B,
    K) (its branch unknown): max over b of δ(n_b) - δ(n_bc) (:func:`~treecert.tree.impurity.
    unit_rise`)."""
    if gini:
        return np.full(branches.shape[:-2] + branches.shape[-1:], 2.0)
    rise = unit_rise(branches.sum(axis=-1))[..., None] - unit_rise(branches)
    return rise.max(axis=-2)


def settled_groups(finder, items: list[tuple[np.ndarray, np.ndarray]], held: np.ndarray,
                   rank=None) -> list[Split | Contenders | None]:
    """Per item — training rows R and weights, held (with each node's own x) by ``held[i]``
    nodes about to be searched — R's :func:`settled_test` where at least
    :data:`SETTLE_NODES` nodes hold the same R of more than :data:`SETTLE_ROWS` rows, tried
    once per distinct R; else None."""
    if not items or not covers(finder):
        return [None] * len(items)
    group, firsts = _groups([(r.tobytes(), v.tobytes()) for r, v in items])
    found = {}
    for g in flat_nonzero(np.bincount(group, weights=held) >= SETTLE_NODES).tolist():
        r, v = items[int(firsts[g])]
        if r.size > SETTLE_ROWS:
            found[g] = settled_test(finder, r, v, rank)
    return [found.get(g) for g in group.tolist()]


class Contenders(NamedTuple):
    """The nominal columns (ascending) among which J48's choice lies for every node
    R ∪ {x}, each sure to pass the average-gain filter (:func:`_ratio_contenders`): the
    nodes are searched over these alone (:func:`among`)."""

    features: np.ndarray


def among(finder: SplitFinder, features: np.ndarray) -> SplitFinder:
    """``finder`` (its arrays, not copies; of its own class) searching only the nominal
    columns ``features`` of :class:`Contenders`, with the average-gain filter taken as
    passed (:attr:`~treecert.tree.split_search.SplitFinder.pool_proven`). Every score is
    the whole finder's (each column's is computed alone), and the rivals left out lose to
    the winner by more than the grower's rounding, so its choice is the whole finder's.
    Contenders are proven for nominal columns alone (:func:`covers`): no numeric column is
    searched."""
    codes, stride, columns = finder.nominal_codes()
    out = type(finder).__new__(type(finder))
    out.__dict__.update(finder.__dict__)
    out.numeric_idx = finder.numeric_idx[:0]
    keep = np.isin(finder.nominal_idx, features)
    kept = flat_nonzero(keep)
    out._nominal_codes = codes, stride, kept if columns is None else columns[kept]
    out.nominal_idx = finder.nominal_idx[keep]
    out.max_values = int(finder.n_values[out.nominal_idx].max())
    out._in_avg = finder._in_avg[finder.numeric_idx.size:][keep]
    out._fid = out.nominal_idx.astype(np.int64)
    out._same_width = _columns_by_width(finder.n_values[out.nominal_idx])
    out.pool_proven = True
    return out


def search_groups(finder: SplitFinder, found: list) -> list[tuple[SplitFinder, list[int]]]:
    """The items still to search after :func:`settled_groups` (``found``: a Split, where
    settled, else :class:`Contenders` or None), grouped by the finder that searches them:
    the whole ``finder`` for those without a proof, :func:`among` the contenders for each
    set of them."""
    whole: list[int] = []
    by: dict[bytes, tuple[SplitFinder, list[int]]] = {}
    for i, got in enumerate(found):
        if got is None:
            whole.append(i)
        elif isinstance(got, Contenders):
            key = got.features.tobytes()
            if key not in by:
                by[key] = (among(finder, got.features), [])
            by[key][1].append(i)
    return ([(finder, whole)] if whole else []) + list(by.values())


def settled_test(finder, rows: np.ndarray, w: np.ndarray,
                 rank=None) -> Split | Contenders | None:
    """The grower's test of every node R ∪ {x} (x ineligible, weight at most 1) for the
    training rows R = ``rows`` (eligible) with weights ``w``; under gain ratio, where no
    one test is proven, the :class:`Contenders` among which it lies; or None where no
    x-proof lead exists (module docstring). A leading nominal test that the grower admits
    whatever the rounding of its eligible weights is its choice without a search; the
    others are confirmed by the grower's search of R. The split's ``score`` is then NaN
    (no caller reads it: the nodes' own scores differ by x anyway)."""
    N = float(w.sum())
    feature, threshold, value, num, up, down, parent, clear, parts, parts_up = \
        candidates(finder, rows, w)
    if not num.size:
        return None
    slack = _SLACK * (N + 2.0)
    floor = max(float(finder.params.min_gain), _EPS) + 1e-9
    if finder.params.criterion == "gain_ratio":
        counted = finder._in_avg[finder.numeric_idx.size
                                 + np.searchsorted(finder.nominal_idx, feature)]
        contender = _ratio_contenders(num, up, down, parts, parts_up, counted, clear, N,
                                      slack, floor)
        if contender is None:
            return None
        if np.count_nonzero(contender) > 1:
            return Contenders(feature[contender])
        g = int(flat_nonzero(contender)[0])
        star = contender
    else:
        g = int(np.argmax(num))
        star = np.arange(num.size) == g  # the likely test: no search unless it leads
        if not _leads(num, up, down, parent, star, slack):
            return None
    if clear[g]:  # a nominal test the grower admits for certain: its choice, no search
        f, v = int(feature[g]), int(value[g])
        nv = int(finder.n_values[f])
        split = Split(f, np.nan, finder._value_branch(f, v), nv if v < 0 else min(nv, 2),
                      np.nan)
    else:
        split = evaluate_nodes(finder, [(rows, w)], rank)[0]
        if split is None:
            return None
        if split.value_branch is None:
            star = (feature == split.feature) & (threshold == split.threshold)
        else:
            v = -1 if not finder.params.binary_splits else int(flat_nonzero(
                split.value_branch == 0)[0])
            star = (feature == split.feature) & (value == v)
        if np.count_nonzero(star) != 1 or not _leads(num, up, down, parent, star, slack):
            return None
    worst = float((num[star] - down[star]).min())  # its numerator with x, at least
    return split if worst / (N + 1.0) > floor else None


def _leads(num: np.ndarray, up: np.ndarray, down: np.ndarray, parent: np.ndarray,
           star: np.ndarray, slack: float) -> bool:
    """Whether test ``star`` (a mask) beats every other with x of any class (module
    docstring): per class, its numerator less its fall above the others' plus their rise;
    above a rival with the same ``parent`` counts, by more than the larger of the two."""
    if not (~star).any():
        return True
    s = int(flat_nonzero(star)[0])
    fall, rival_up = down[s][None, :], up[~star]  # (1, K), (T-1, K)
    same = np.all(parent[~star] == parent[s], axis=1)[:, None]
    moves = np.where(same, np.maximum(fall, rival_up), fall + rival_up)
    return bool(np.all(num[s] - num[~star][:, None] - moves > slack))


def _ratio_contenders(num: np.ndarray, up: np.ndarray, down: np.ndarray, parts: np.ndarray,
                      parts_up: np.ndarray, counted: np.ndarray, clear: np.ndarray, N: float,
                      slack: float, floor: float) -> np.ndarray | None:
    """The tests that may be J48's choice on R ∪ {x} for some x (a mask), where each of
    them is sure to pass the average-gain filter; None where no such set is proven (module
    docstring: numerators and the n·split informations ``parts`` within their bounds,
    ``counted`` tests in the average gain). A test is *sure* where, for every class of x,
    its lowest numerator clears the highest mean, its lowest ratio is above 1e-6 and its
    lowest gain above ``floor``; per class, the best lowest ratio of a sure test then
    bounds the winner's ratio from below, and a rival that the lowest mean shuts out of the
    pool, or whose highest ratio is below that bound, never wins."""
    if not clear.all() or not counted.any() or not np.all(parts > slack):
        return None
    lo = num[:, None] - down - slack  # (T, K): per class of x, the numerators' range
    hi = num[:, None] + up + slack
    in_pool = np.all(lo - hi[counted].mean(axis=0) > -1e-3 * N + slack, axis=1)
    low = lo / (parts + parts_up + slack)[:, None]  # every test's lowest ratio
    sure = (in_pool & np.all(low > 1e-6 + 1e-9, axis=1)
            & (lo.min(axis=1) / (N + 1.0) > floor))
    if not sure.any():
        return None
    best_low = np.where(sure[:, None], low, -np.inf).max(axis=0)  # (K,)
    may_pool = hi - lo[counted].mean(axis=0) >= -1e-3 * (N + 1.0) - slack
    high = hi / (parts - slack)[:, None]  # every test's highest ratio
    contender = ((best_low - high <= 1e-9) & may_pool).any(axis=1)
    return contender if np.all(in_pool[contender]) else None


def _split_parts(cnt: np.ndarray, exists: np.ndarray, known: np.ndarray,
                 N: float) -> tuple[np.ndarray, np.ndarray]:
    """Per multiway test (class counts per value ``cnt`` (T, V, K), its values ``exists``,
    known class weights ``known`` (T, K), R's weight N): the n·split information of R's
    partition — each value's weight (absent ones too: x may hold them), then the unknown
    weight — and the most x can raise it, δ(N) less δ of its smallest part (δ increases)."""
    unknown = np.maximum(N - known.sum(axis=1), 0.0)
    split = np.concatenate([np.where(exists, cnt.sum(axis=2), 0.0), unknown[:, None]],
                           axis=1)
    smallest = np.minimum(np.where(exists, split[:, :-1], np.inf).min(axis=1), unknown)
    return _impurity_last(split, False), unit_rise(N) - unit_rise(smallest)


def candidates(finder, rows: np.ndarray, w: np.ndarray):
    """Every test of the node (rows, w) that the grower may admit — numeric cuts as
    (feature, threshold), nominal tests as (feature, value; -1 for a multiway test) — with
    its numerator: the known part's n·impurity less its branches' (float arithmetic;
    admissibility relaxed by the slack, exact with integer weights), per class the most x
    of that class can raise the known part's n·impurity (``up``, (T, K)) and any
    branch's (``down``), the known part's class counts (``parent``, (T, K)), whether the
    grower admits the test whatever the rounding (``clear``: nominal tests admissible by
    more than the slack; numeric cuts never, their thresholds being the grower's to place),
    and under gain ratio, for multiway tests (NaN elsewhere), the n·split information of R
    and the most x can raise it (``parts``, ``parts_up``: :func:`_split_parts`)."""
    params = finder.params
    gini = params.criterion == "gini"
    K = finder.n_classes
    X, y = finder.X, finder.y[rows]
    ew = w if finder.eligible is None else w * finder.eligible[rows]
    # integer weights sum exactly in any order: R's eligible weights are the grower's own
    exact = bool(np.all(ew == np.round(ew))) and float(ew.sum()) < 2.0**52
    margin = 0.0 if exact else _SLACK * (float(w.sum()) + 2.0)
    ml = float(params.min_leaf) - margin  # relaxed: no test the grower admits is missed
    ml_clear = float(params.min_leaf) + margin
    parts = []
    for f in finder.numeric_idx.tolist():
        v = X[rows, f]
        known = flat_nonzero(~np.isnan(v))
        if known.size < 2:
            continue
        known = known[np.argsort(v[known], kind="stable")]
        sv = v[known]
        cnt = np.zeros((known.size, K))
        cnt[np.arange(known.size), y[known]] = w[known]
        left = np.cumsum(cnt, axis=0)
        left_e = np.cumsum(ew[known])
        ok = (sv[:-1] < sv[1:]) & (left_e[:-1] >= ml) & (left_e[-1] - left_e[:-1] >= ml)
        at = flat_nonzero(ok)
        if not at.size:
            continue
        a, b = sv[at], sv[at + 1]
        thr = a if params.threshold == "lower" else (a + b) / 2.0
        thr = np.where(thr < b, thr, a)
        L = left[at]
        total = left[-1]
        num = (_impurity_last(total, gini) - _impurity_last(L, gini)
               - _impurity_last(total - L, gini))
        parts.append((np.full(at.size, f), thr, np.full(at.size, -2), num,
                      np.broadcast_to(_rises(total[None, :], gini), L.shape),
                      _rises(np.stack([L, total - L], axis=1), gini),
                      np.broadcast_to(total, L.shape), np.zeros(at.size, dtype=bool),
                      np.full(at.size, np.nan), np.full(at.size, np.nan)))
    cols = finder.nominal_idx
    if cols.size:  # every (column, value, class) in one tally
        V = max(finder.max_values, 1)
        node = SimpleNamespace(seg=np.array([0, rows.size]), rows=rows, w=w, we=ew,
                               node=np.zeros(rows.size, dtype=np.intp))
        cnt, el = SplitFinder._nominal_tally(finder, node, 0, 1)  # the grower's own tally
        cnt, el = cnt[0].astype(float, copy=False), el[0].astype(float, copy=False)
        exists = np.arange(V)[None, :] < finder.n_values[cols][:, None]
        total = cnt.sum(axis=1)
        e_total = _impurity_last(total, gini)
        e_value = _impurity_last(cnt, gini)
        up = _rises(total[:, None, :], gini)  # (q, K): the known part's rise
        if not params.binary_splits:
            at = flat_nonzero(np.count_nonzero(exists & (el >= ml), axis=1) >= 2)
            split_n = split_up = np.full(at.size, np.nan)
            if params.criterion == "gain_ratio":  # only its proof reads them
                split_n, split_up = _split_parts(cnt[at], exists[at], total[at],
                                                 float(w.sum()))
            parts.append((cols[at], np.full(at.size, np.nan), np.full(at.size, -1),
                          e_total[at] - e_value[at].sum(axis=1), up[at],
                          _rises(cnt[at], gini), total[at],
                          np.count_nonzero(exists[at] & (el[at] >= ml_clear), axis=1) >= 2,
                          split_n, split_up))
        else:
            rest_el = el.sum(axis=1)[:, None] - el
            jj, vv = np.nonzero(exists & (el >= ml) & (rest_el >= ml))
            rest = total[jj] - cnt[jj, vv]
            num = e_total[jj] - e_value[jj, vv] - _impurity_last(rest, gini)
            parts.append((cols[jj], np.full(jj.size, np.nan), vv, num, up[jj],
                          _rises(np.stack([cnt[jj, vv], rest], axis=1), gini), total[jj],
                          (el[jj, vv] >= ml_clear) & (rest_el[jj, vv] >= ml_clear),
                          np.full(jj.size, np.nan), np.full(jj.size, np.nan)))
    if not parts:
        K0 = np.empty((0, K))
        return (np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64), np.empty(0), K0,
                K0, K0, np.empty(0, dtype=bool), np.empty(0), np.empty(0))
    return tuple(np.concatenate(a) for a in zip(*parts, strict=True))
