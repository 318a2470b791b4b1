"""A compiled numeric split search, measured against treecert's numpy one (issue #13).

Tried in session 34 and not adopted (BENCHMARKS.md, "Session 34"): the numeric half of the
split search (:meth:`treecert.tree.numeric_search.NumericSearch._numeric_batch`) as two numba
loops, for the case the grower meets most — integer weights and an entropy criterion, where
x ln x of integer counts is read from the same table. It scores every valid cut (no
Fayyad-Irani skipping: a loop pays little per cut) and keeps the first of largest rounded
gain, in position order, as the numpy search does; the class sums are added in numpy's
order (:func:`treecert.tree.impurity._sum_cols`), the parents' impurities and gain ratio's
split information stay in numpy, so every number should be the same bits.

Run from the repository root (needs ``pip install numba``; nothing in ``treecert`` imports
it)::

    python benchmarks/compiled_search.py check     # every batch of the cases compared
    python benchmarks/compiled_search.py time      # CPU time, fresh processes alternating
    python benchmarks/compiled_search.py load      # numba's import, cached load and compile
    python benchmarks/compiled_search.py grow      # one tree on engine_scale's large data
    python benchmarks/compiled_search.py scale letter tpce   # engine_scale's fold 0, 200 rows

``check`` runs 10-fold CVs with both searches, compares each batch's four result arrays
(ok, gain, score, threshold) and the CVs' probabilities and Venn bounds bit for bit.
``time`` gives the medians of five warm CVs per process, numpy and compiled processes
alternating, three rounds. ``load`` times numba's import, the first call of each kernel
from numba's on-disk cache, and their compilation from nothing (in a temporary cache
directory). ``grow`` times one tree's growing (``DecisionTree().fit``, information gain)
on the synthetic data of ``engine_scale.py`` (``big``: 100 000 × 20, 5 classes; ``letter``:
20 000 × 16, 26 classes; ``shuttle``: 58 000 × 9, 7 classes), the second of two fits a
process, alternating as ``time`` does. ``scale CASE METHOD`` times fold 0 of
``engine_scale.py cv CASE METHOD`` on its first ``--sample`` test rows (fit plus the
prediction scaled to the fold), alternating likewise. Every process runs under the command
line's malloc thresholds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import allocator
import numpy as np
from numba import njit
from venn_cost import cv_seconds, data_with_folds

CASES = (("diabetes", "tpce"), ("diabetes", "laplace"), ("credit-g", "venn"),
         ("credit-g", "laplace"), ("segment-challenge", "tpce"),
         ("segment-challenge", "venn"), ("segment-challenge", "laplace"),
         ("credit-g", "tpce:criterion=gain_ratio"), ("diabetes", "tpce:criterion=gain_ratio"))
LN2 = np.log(2.0)


@njit(cache=True, inline="always")
def _sum_terms(t, n):
    """impurity._sum_cols of n scalars t[0..n): sequential below 8, numpy's pairwise above
    (n <= 128)."""
    if n < 8:
        s = t[0]
        for i in range(1, n):
            s = s + t[i]
        return s
    r0, r1, r2, r3, r4, r5, r6, r7 = t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]
    i = 8
    while i < n - n % 8:
        r0 += t[i]
        r1 += t[i + 1]
        r2 += t[i + 2]
        r3 += t[i + 3]
        r4 += t[i + 4]
        r5 += t[i + 5]
        r6 += t[i + 6]
        r7 += t[i + 7]
        i += 8
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        s = s + t[i]
        i += 1
    return s


@njit(cache=True)
def known_totals(V, Y, Wt, EL, seg, K):
    """Per (column, node): known class weights (K, p, G), known eligible weight, known count."""
    p = V.shape[0]
    G = seg.size - 1
    KC = np.zeros((K, p, G), dtype=np.int64)
    KE = np.zeros((p, G), dtype=np.int64)
    NK = np.zeros((p, G), dtype=np.int64)
    for j in range(p):
        for g in range(G):
            s, e = seg[g], seg[g + 1]
            n = e
            while n > s and np.isnan(V[j, n - 1]):
                n -= 1
            NK[j, g] = n - s
            for i in range(s, n):
                KC[Y[j, i], j, g] += Wt[j, i]
                if EL[j, i]:
                    KE[j, g] += Wt[j, i]
    return KC, KE, NK


@njit(cache=True)
def best_cuts(V, Y, Wt, EL, seg, K, KC, KE, NK, parent, total_w, table, min_leaf, ratio,
              lower, flagged):
    """Per (column, node): the first cut of largest rounded gain (its position, -1: none),
    its gain, its threshold and left class weights, and the number of valid cuts."""
    p, M = V.shape
    G = seg.size - 1
    best_i = np.full((p, G), -1, dtype=np.int64)
    best_g = np.zeros((p, G))
    best_thr = np.full((p, G), np.nan)
    best_L = np.zeros((K, p, G), dtype=np.int64)
    n_valid = np.zeros((p, G), dtype=np.int64)
    L = np.zeros(K, dtype=np.int64)
    tl = np.zeros(K)
    tr = np.zeros(K)
    nxt_el = np.empty(M)
    for j in range(p):
        for g in range(G):
            s = seg[g]
            n = s + NK[j, g]
            if n - s < 2:
                continue
            ke = KE[j, g]
            if ratio:
                ms = 0.1 * ke / K
                if ms < min_leaf:
                    ms = min_leaf
                if ms > 25.0:
                    ms = 25.0
                if ke < 2 * ms:
                    continue
            else:
                ms = min_leaf
            fl = flagged[g]
            if fl:  # the first eligible value after each position
                nx = np.inf
                for i in range(n - 1, s - 1, -1):
                    nxt_el[i] = nx
                    if EL[j, i]:
                        nx = V[j, i]
            for k in range(K):
                L[k] = 0
            le = 0
            prev_el = -np.inf
            kt = j * G + g
            par = parent[kt]
            tw = total_w[g]
            top = -np.inf
            for i in range(s, n - 1):
                w = Wt[j, i]
                L[Y[j, i]] += w
                if EL[j, i]:
                    le += w
                    prev_el = V[j, i]
                vi, vn = V[j, i], V[j, i + 1]
                if not (vi < vn):
                    continue
                if le < ms or ke - le < ms:
                    continue
                thr = vi if lower else (vi + vn) / 2.0
                if fl:
                    pv, nv = prev_el, nxt_el[i]
                    if not (np.isfinite(pv) and np.isfinite(nv)):
                        continue
                    if lower:
                        if pv != vi:
                            continue
                        thr = pv
                    else:
                        thr = (pv + nv) / 2.0
                        if not (vi <= thr and thr < vn):
                            continue
                n_valid[j, g] += 1
                sl = 0
                sr = 0
                for k in range(K):
                    r = KC[k, j, g] - L[k]
                    sl += L[k]
                    sr += r
                    tl[k] = table[L[k]]
                    tr[k] = table[r]
                imp_l = (table[sl] - _sum_terms(tl, K)) / LN2
                imp_r = (table[sr] - _sum_terms(tr, K)) / LN2
                gain = (par - imp_l - imp_r) / tw
                rg = np.rint(gain * 1e10) / 1e10
                if rg > top:
                    top = rg
                    best_i[j, g] = i
                    best_g[j, g] = gain
                    best_thr[j, g] = thr if thr < vn else vi
                    for k in range(K):
                        best_L[k, j, g] = L[k]
    return best_i, best_g, best_thr, best_L, n_valid


def _kernels():
    """The two loops (compiled on first call, or loaded from numba's cache)."""
    return known_totals, best_cuts


def compiled_batch(finder, b, table, kernels):
    """``_numeric_batch(b)``'s four arrays through the kernels (integer weights, entropy)."""
    from treecert.tree.impurity import _impurity, _sum_cols
    from treecert.tree.numeric_search import chosen_cut_ratio, no_cuts

    known_totals, best_cuts = kernels
    params = finder.params
    K = finder.n_classes
    G, seg, V, Y = b.G, b.seg, b.V, b.Y
    p, M = b.S.shape
    out_ok, out_gain, out_score, out_thr = no_cuts(G, p)
    if M < 2:
        return out_ok, out_gain, out_score, out_thr
    Wt = b.w.astype(np.int64)[b.S]
    el = (np.ones(b.rows.size, dtype=bool) if finder.eligible is None
          else finder.eligible[b.rows])
    EL = el[b.S]
    flagged = np.bincount(b.node, weights=~el, minlength=G) > 0
    KC, KE, NK = known_totals(V, Y, Wt, EL, seg, K)
    KCf = [KC[k].astype(float) for k in range(K)]
    parent = _impurity(KCf, False).ravel()
    ratio = params.criterion == "gain_ratio"
    bi, bg, bt, bL, nv = best_cuts(V, Y, Wt, EL, seg, K, KC, KE, NK, parent, b.total_w,
                                   table, float(params.min_leaf), ratio,
                                   params.threshold == "lower", flagged)
    gj, gg = np.nonzero(bi >= 0)
    g_best = bg[gj, gg]
    ok = np.ones(gj.size, dtype=bool)
    if ratio:
        L = [bL[k][gj, gg].astype(float) for k in range(K)]
        KCt = [KCf[k][gj, gg] for k in range(K)]
        R = [KCt[k] - L[k] for k in range(K)]
        g_best, ok, score = chosen_cut_ratio(g_best, nv[gj, gg], _sum_cols(L), _sum_cols(R),
                                             _sum_cols(KCt), b.total_w[gg])
    else:
        score = g_best
    out_ok[gg, gj] = ok
    out_gain[gg, gj] = g_best
    out_score[gg, gj] = score
    out_thr[gg, gj] = bt[gj, gg]
    return out_ok, out_gain, out_score, out_thr


def install(compare: bool) -> dict:
    """Route the numeric search through the kernels where they apply (``compare``: run
    both and check every array); returns the counts of batches served and compared."""
    from treecert.tree import numeric_search

    numpy_batch = numeric_search.NumericSearch._numeric_batch
    kernels = _kernels()
    counts = {"compiled": 0, "numpy": 0, "compared": 0}

    def batch(finder, b):
        if not (b.integral and finder.params.criterion != "gini" and b.S is not None
                and float(b.total_w.max()) < numeric_search._TABLE_MAX):
            counts["numpy"] += 1
            return numpy_batch(finder, b)
        counts["compiled"] += 1
        got = compiled_batch(finder, b, finder._xlogx_table(int(b.total_w.max())), kernels)
        if compare:
            for name, want, have in zip(("ok", "gain", "score", "threshold"),
                                        numpy_batch(finder, b), got, strict=True):
                if not np.array_equal(want, have, equal_nan=want.dtype != bool):
                    raise AssertionError(f"{name} differs")
            counts["compared"] += 1
        return got

    numeric_search.NumericSearch._numeric_batch = batch
    return counts


def _predictions(name: str, spec: str) -> list[np.ndarray]:
    from treecert.methods import make_method

    data, ids = data_with_folds(name)
    out = []
    for f in np.unique(ids):
        p = make_method(spec).fit(data.subset(np.flatnonzero(ids != f))).predict(
            data.subset(np.flatnonzero(ids == f)))
        out += [np.asarray(a) for a in (p.proba, getattr(p, "lower", None),
                                        getattr(p, "upper", None)) if a is not None]
    return out


def check() -> None:
    from treecert.tree import numeric_search

    numpy_batch = numeric_search.NumericSearch._numeric_batch
    for name, spec in CASES:
        numeric_search.NumericSearch._numeric_batch = numpy_batch
        want = _predictions(name, spec)
        counts = install(compare=True)
        have = _predictions(name, spec)
        same = all(np.array_equal(a, b) for a, b in zip(want, have, strict=True))
        print(f"{name} {spec}: {counts['compared']} batches compared, "
              f"{counts['numpy']} left to numpy; {len(want)} arrays "
              f"({sum(a.size for a in want)} numbers) {'the same' if same else 'DIFFER'}",
              flush=True)


def _one(path: str, name: str, spec: str) -> None:
    """In a fresh process: the median CPU seconds of five warm CVs (one discarded first)."""
    if path == "compiled":
        install(compare=False)
    cv_seconds(name, spec)
    print(statistics.median(cv_seconds(name, spec) for _ in range(5)))


def time_cases(rounds: int, cases) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="treecert-numba-")}
    for name, spec in cases:
        got = {"numpy": [], "compiled": []}
        for _ in range(rounds):
            for path in got:
                out = subprocess.run([sys.executable, __file__, "one", path, name, spec],
                                     env=env, capture_output=True, text=True, check=True)
                got[path].append(float(out.stdout.split()[-1]))
        a, b = (statistics.median(got[k]) for k in ("numpy", "compiled"))
        print(f"| {name} | {spec} | {a:.3f} ({min(got['numpy']):.3f}-{max(got['numpy']):.3f})"
              f" | {b:.3f} ({min(got['compiled']):.3f}-{max(got['compiled']):.3f})"
              f" | {a / b:.2f}x |", flush=True)


def _one_tree(path: str, case: str) -> None:
    """In a fresh process: CPU seconds of the second of two fits of one tree on ``case``."""
    from engine_scale import synthetic

    from treecert.tree.classifier import DecisionTree

    if path == "compiled":
        install(compare=False)
    data = synthetic(case)
    DecisionTree().fit(data)
    t0 = time.process_time()
    DecisionTree().fit(data)
    print(time.process_time() - t0)


def grow(rounds: int) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="treecert-numba-")}
    for case in ("big", "letter", "shuttle"):
        got = {"numpy": [], "compiled": []}
        for _ in range(rounds):
            for path in got:
                out = subprocess.run([sys.executable, __file__, "one-tree", path, case],
                                     env=env, capture_output=True, text=True, check=True)
                got[path].append(float(out.stdout.split()[-1]))
        a, b = (statistics.median(got[k]) for k in ("numpy", "compiled"))
        print(f"| {case} | {a:.2f} | {b:.2f} | {a / b:.2f}x |", flush=True)


def _one_fold(path: str, case: str, method: str, sample: str) -> None:
    """In a fresh process: engine_scale's CPU seconds of fold 0 (``sample`` rows)."""
    from engine_scale import run_cv

    if path == "compiled":
        install(compare=False)
    print(run_cv(case, method, 10, None, int(sample), only=0)["cpu_s_per_fold"][0])


def scale(case: str, method: str, sample: int, rounds: int) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="treecert-numba-")}
    subprocess.run([sys.executable, __file__, "one-fold", "compiled", case, method, "5"],
                   env=env, capture_output=True, check=True)  # compiled into the cache
    got = {"numpy": [], "compiled": []}
    for _ in range(rounds):
        for path in got:
            out = subprocess.run([sys.executable, __file__, "one-fold", path, case, method,
                                  str(sample)], env=env, capture_output=True, text=True,
                                 check=True)
            got[path].append(float(out.stdout.split()[-1]))
    a, b = (statistics.median(got[k]) for k in ("numpy", "compiled"))
    print(f"| {case} | {method} | {sample} | {got['numpy']} | {got['compiled']} | "
          f"{a / b:.2f}x |", flush=True)


_LOAD_ONCE = """
import sys, time
t0 = time.perf_counter()
import numba
t1 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import numpy as np
import compiled_search as cs
t2 = time.perf_counter()
V = np.array([[1.0, 2.0, 3.0]])
Y = np.zeros((1, 3), dtype=np.int64)
W = np.ones((1, 3), dtype=np.int64)
EL = np.ones((1, 3), dtype=bool)
seg = np.array([0, 3])
KC, KE, NK = cs.known_totals(V, Y, W, EL, seg, 2)
t3 = time.perf_counter()
cs.best_cuts(V, Y, W, EL, seg, 2, KC, KE, NK, np.zeros(1), np.ones(1), np.zeros(8), 2.0,
             False, False, np.zeros(1, dtype=bool))
print(t1 - t0, t3 - t2, time.perf_counter() - t3)
"""


def load() -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="treecert-numba-")}
    for what in ("compiled from nothing", "from the cache", "from the cache"):
        out = subprocess.run([sys.executable, "-c", _LOAD_ONCE, str(Path(__file__).parent)],
                             env=env, capture_output=True, text=True, check=True)
        imp, first, second = (float(x) for x in out.stdout.split())
        print(f"{what}: import numba {imp:.3f} s, first kernel {first:.3f} s, "
              f"second {second:.3f} s (wall)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("check", "time", "load", "grow", "scale", "one",
                                     "one-tree", "one-fold"))
    ap.add_argument("rest", nargs="*")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sample", type=int, default=200)
    allocator.add_option(ap)
    args = ap.parse_args()
    allocator.apply(args.allocator)
    if args.what == "check":
        check()
    elif args.what == "time":
        time_cases(args.rounds, CASES)
    elif args.what == "load":
        load()
    elif args.what == "grow":
        grow(args.rounds)
    elif args.what == "scale":
        scale(*args.rest, args.sample, args.rounds)
    elif args.what == "one-tree":
        _one_tree(*args.rest)
    elif args.what == "one-fold":
        _one_fold(*args.rest)
    else:
        _one(*args.rest)


if __name__ == "__main__":
    main()
