"""BENCHMARKS.md table "hard_cases": TPCE on missing values, gain ratio, many classes.

    python benchmarks/engine_hard_cases.py --repeat 3 --venn --cases all   # the page's table
    python benchmarks/engine_hard_cases.py --quick                         # vote, one row a fold

For every case, 10-fold CV on ``tests/data`` and its fixed folds, in-process CPU time
(``time.process_time``; everything is single-threaded), in ms per test row:

* ``evaluate``: TPCE as ``treecert evaluate`` runs it: where every job takes the exact paths
  (missing values), all folds from one engine (``predict_held_out``), else one fit per fold;
  checked bit for bit against one fit per fold;
* ``complete``: the same on the same rows made easy (unknown values filled with the
  column's mode or mean, information gain): the cost the hard case is compared with;
* ``naive``: ``engine=naive`` (a whole tree per label per row) on ``--sample`` rows per fold,
  checked bit for bit against the fast engine;
* ``peers' loop``: ``../shared/peers/naive_transductive.py``, the scikit-learn refit loop
  the peers ran (unpruned trees, one-hot with a missing-value column, its own wall-clock
  timer), on the first ``--sample`` test rows of every fold; "–" without that folder.
``--venn`` adds the Venn machine's and K&K's 10-fold CV against a plain tree's. ``--repeat
R`` times every part but the naive engine R times, interleaved, and reports medians (the
spreads go to stderr). ``--kk-loo`` prints K&K's leave-one-out against refitting the
inductive tree per row instead. Everything runs under the command line's malloc thresholds
(``--allocator default``: glibc's own; ``venn_cost.apply``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from run import add_quick, quick
from tpce_speed import sklearn_tpce_seconds
from venn_cost import add_allocator, apply

from treecert.data.folds import read_fold_ids
from treecert.data.loading import load_dataset
from treecert.data.schema import Dataset
from treecert.methods import make_method

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
PEERS = ROOT.parent / "shared" / "peers"

#: name -> (dataset, criterion, fraction of values blanked): what runs without ``--cases``
HARD_CASES = {
    "credit-g-blank2": ("credit-g", "info_gain", 0.02),
    "credit-g-gain_ratio": ("credit-g", "gain_ratio", 0.0),
    "vote": ("vote", "info_gain", 0.0),
    "breast-cancer": ("breast-cancer", "info_gain", 0.0),
    "soybean": ("soybean", "info_gain", 0.0),
    "segment-gain_ratio": ("segment-challenge", "gain_ratio", 0.0),
    "vote-gain_ratio": ("vote", "gain_ratio", 0.0),
    "soybean-gain_ratio": ("soybean", "gain_ratio", 0.0),
}
#: Complete data with information gain (the aim: >= 10x the peers' loop): run only when named
#: (their "complete" is the data itself).
CASES = {**HARD_CASES,
         "diabetes": ("diabetes", "info_gain", 0.0),
         "segment-challenge": ("segment-challenge", "info_gain", 0.0)}


def _blanked(data: Dataset, p: float, seed: int = 0) -> Dataset:
    X = data.X.copy()
    X[np.random.default_rng(seed).random(X.shape) < p] = np.nan
    return Dataset(data.schema, X, data.y, data.weights, source=data.source)


def _filled(data: Dataset) -> Dataset:
    """Unknown values replaced by the column's mode (nominal) or mean (numeric)."""
    X = data.X.copy()
    for j, attr in enumerate(data.schema.attributes):
        col = X[:, j]
        miss = np.isnan(col)
        if miss.any() and (~miss).any():
            if attr.is_nominal:
                col[miss] = np.bincount(col[~miss].astype(np.int64)).argmax()
            else:
                col[miss] = col[~miss].mean()
    return Dataset(data.schema, X, data.y, data.weights, source=data.source)


def _cv_seconds(data: Dataset, ids: np.ndarray, spec: str) -> float:
    t = 0.0
    for f in range(10):
        train, test = data.subset(np.flatnonzero(ids != f)), data.subset(np.flatnonzero(ids == f))
        t0 = time.process_time()
        make_method(spec).fit(train).predict(test)
        t += time.process_time() - t0
    return t


def _evaluate_seconds(data: Dataset, ids: np.ndarray, spec: str,
                      expect: list[np.ndarray]) -> float | None:
    """CPU seconds of the 10 folds from one engine, as evaluate runs them where the method
    serves them so (None elsewhere: evaluate fits per fold), its probabilities checked
    against ``expect`` (per fold, from one fit per fold)."""
    folds = [np.flatnonzero(ids == f) for f in range(10)]
    method = make_method(spec)
    if not method.serves_held_out(data, [data.n_samples - f.size for f in folds]):
        return None
    t0 = time.process_time()
    preds = method.fit(data).predict_held_out(folds)
    seconds = time.process_time() - t0
    for (pred, _), proba in zip(preds, expect, strict=True):
        np.testing.assert_array_equal(pred.proba, proba)
    return seconds


def _case_data(case: str) -> tuple[Dataset, np.ndarray]:
    name, _, blank = CASES[case]
    data = load_dataset(DATA / f"{name}.arff")
    ids = read_fold_ids((DATA / f"{name}.folds.csv").read_text(), data.n_samples, name)
    return (_blanked(data, blank) if blank else data), ids


def fast_seconds(case: str, code: Path | None = None,
                 malloc: str = "command-line") -> float:
    """CPU seconds of ``fast`` (10 folds, fit and predict of every test row) of the
    ``treecert`` in ``code``, in a fresh process (this checkout's when None) with the
    allocator ``malloc`` (:func:`venn_cost.apply`)."""
    env = {**os.environ, "PYTHONPATH": str(code or ROOT)}
    out = subprocess.run([sys.executable, __file__, "--fast-only", case,
                          "--allocator", malloc], env=env,
                         cwd=code or ROOT, capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def _fast_here(case: str) -> float:
    data, ids = _case_data(case)
    return _cv_seconds(data, ids, f"tpce:criterion={CASES[case][1]}")


def peers_loop_ms(case: str, sample: int) -> float:
    """ms per test row of the peers' refit loop (module docstring), NaN without it."""
    if not (PEERS / "naive_transductive.py").exists():
        return float("nan")
    sys.path.insert(0, str(PEERS))
    import naive_transductive

    naive_transductive.SHARED = DATA  # it looks in <its parent>/shared/datasets
    runs = [naive_transductive.run(CASES[case][0], f, sample) for f in range(10)]
    return 1e3 * float(np.mean([r["s_per_instance"] for r in runs]))


def _median(times: list[float]) -> float:
    return float(np.median(times))


def case_row(case: str, sample: int, venn: bool, repeat: int = 1) -> dict:
    """One table row; with ``repeat`` R, every timed part but the naive engine is run R
    times, interleaved, and its median taken (a refit loop of 20 rows moves ±40 % between
    single runs on a shared machine)."""
    criterion = CASES[case][1]
    data, ids = _case_data(case)
    n = data.n_samples
    spec = f"tpce:criterion={criterion}"
    fast_runs, sk_runs, complete_runs, evaluate_runs, peers_runs = [], [], [], [], []
    naive_s = 0.0
    n_sampled = 0
    for rep in range(repeat):
        fast_s = sk_s = 0.0
        per_fold = []
        for f in range(10):
            train = data.subset(np.flatnonzero(ids != f))
            test = data.subset(np.flatnonzero(ids == f))
            t0 = time.process_time()
            p_fast = make_method(spec).fit(train).predict(test).proba
            fast_s += time.process_time() - t0
            per_fold.append(p_fast)
            sub = test.subset(np.arange(min(sample, test.n_samples)))
            if rep == 0:
                t0 = time.process_time()
                p_naive = make_method(spec + ",engine=naive").fit(train).predict(sub).proba
                naive_s += time.process_time() - t0
                np.testing.assert_array_equal(p_fast[: sub.n_samples], p_naive)
                n_sampled += sub.n_samples
            sk_s += sklearn_tpce_seconds(train, sub)
        fast_runs.append(fast_s)
        sk_runs.append(sk_s)
        complete_runs.append(_cv_seconds(_filled(data), ids, "tpce"))
        evaluate_s = _evaluate_seconds(data, ids, spec, per_fold)
        evaluate_runs.append(fast_s if evaluate_s is None else evaluate_s)
        peers_runs.append(peers_loop_ms(case, sample))
    row = {"case": case, "n": n, "classes": data.schema.n_classes,
           "missing": float(np.isnan(data.X).mean()), "criterion": criterion,
           "fast_ms": 1e3 * _median(fast_runs) / n,
           "complete_ms": 1e3 * _median(complete_runs) / n,
           "evaluate_ms": 1e3 * _median(evaluate_runs) / n,
           "naive_ms": 1e3 * naive_s / n_sampled,
           "sklearn_ms": 1e3 * _median(sk_runs) / n_sampled,
           "peers_ms": _median(peers_runs), "repeat": repeat,
           "peers_spread": (min(peers_runs), max(peers_runs)),
           "evaluate_spread": (1e3 * min(evaluate_runs) / n, 1e3 * max(evaluate_runs) / n)}
    if venn:
        tree_s = _cv_seconds(data, ids, f"laplace:criterion={criterion}")
        row["tree_s"] = tree_s
        row["venn_s"] = _cv_seconds(data, ids, f"venn:criterion={criterion}")
        row["kk_s"] = _cv_seconds(data, ids, f"kk:criterion={criterion}")
    return row


def kk_loo_row(case: str, sample: int) -> dict:
    """K&K leave-one-out over every row: the engine's (inductive step routed through the
    tree grown without the row) against refitting the inductive tree per row, as before
    (measured on ``sample`` rows and scaled), checked bit for bit against engine=naive."""
    name, criterion, blank = CASES[case]
    data = load_dataset(DATA / f"{name}.arff")
    if blank:
        data = _blanked(data, blank)
    n = data.n_samples
    spec = f"kk:criterion={criterion}"
    t0 = time.process_time()
    method = make_method(spec).fit(data)
    got = method.predict_loo(np.arange(n))
    fast_s = time.process_time() - t0
    rows = np.linspace(0, n - 1, sample).astype(np.int64)
    t0 = time.process_time()
    for i in rows:  # the inductive step as it was: one refit per row
        method.new_tree(leaf="laplace").fit(data.subset(np.delete(np.arange(n), i))) \
            .predict_proba(data.X[i:i + 1])
    refit_ms = 1e3 * (time.process_time() - t0) / sample
    ref = make_method(spec + ",engine=naive").fit(data).predict_loo(rows[:5])
    np.testing.assert_array_equal(got.certainty[rows[:5]], ref.certainty)
    return {"case": case, "n": n, "fast_ms": 1e3 * fast_s / n, "refit_ms": refit_ms}


def _ratio(a: float, b: float) -> str:
    return "–" if np.isnan(a) or np.isnan(b) else f"{a / b:.1f}x"


def table_line(r: dict, venn: bool) -> str:
    """One row of the page's table."""
    peers = "–" if np.isnan(r["peers_ms"]) else f"{r['peers_ms']:.1f}"
    line = (f"| {r['case']} | {r['n']} | {r['classes']} | {100 * r['missing']:.1f} % | "
            f"{r['criterion']} | {r['evaluate_ms']:.2f} | {r['complete_ms']:.2f} | "
            f"{r['naive_ms']:.1f} | {peers} | "
            f"{_ratio(r['evaluate_ms'], r['complete_ms'])} | "
            f"{_ratio(r['naive_ms'], r['evaluate_ms'])} | "
            f"{_ratio(r['peers_ms'], r['evaluate_ms'])} |")
    if venn:
        line += f" {_ratio(r['venn_s'], r['tree_s'])} | {_ratio(r['kk_s'], r['tree_s'])} |"
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=2, help="naive/peers' rows per fold")
    ap.add_argument("--cases", default=",".join(HARD_CASES),
                    help=f"comma-separated, or 'all'; of: {', '.join(CASES)}")
    ap.add_argument("--venn", action="store_true")
    ap.add_argument("--kk-loo", action="store_true",
                    help="K&K leave-one-out: engine vs refitting the inductive tree per row")
    ap.add_argument("--before", type=Path, help="an older checkout: its fast engine too")
    ap.add_argument("--repeat", type=int, default=1,
                    help="time each part R times and report medians")
    ap.add_argument("--fast-only", help=argparse.SUPPRESS)  # one case's fast seconds, JSON
    add_allocator(ap)
    add_quick(ap)
    args = ap.parse_args()
    apply(args.allocator)
    if args.fast_only:
        print(json.dumps(_fast_here(args.fast_only)))
        return
    if quick(args):
        args.cases, args.sample, args.repeat, args.venn = "vote", 1, 1, True
    cases = list(CASES) if args.cases == "all" else [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown or not cases:
        sys.exit(f"engine_hard_cases.py: no case to run (--cases {args.cases!r}); "
                 f"known: {', '.join(CASES)}")
    print(f"load: {os.getloadavg()}", file=sys.stderr)
    if args.kk_loo:
        print("| case | n | K&K LOO ms/row (engine, all steps) | inductive refit ms/row (that "
              "step alone) |")
        print("|---|---:|---:|---:|")
        for case in cases:
            r = kk_loo_row(case, 40)
            print(f"| {r['case']} | {r['n']} | {r['fast_ms']:.2f} | {r['refit_ms']:.2f} |",
                  flush=True)
        return
    for case in cases if args.before else ():
        n = _case_data(case)[0].n_samples
        old, new = (fast_seconds(case, code, args.allocator) for code in (args.before, None))
        print(f"{case}: fast before {1e3 * old / n:.2f} ms/row, after {1e3 * new / n:.2f}"
              f" ms/row (fresh processes, one after the other): {old / new:.2f}x",
              file=sys.stderr, flush=True)
    print("| case | n | K | missing | criterion | evaluate ms/row | complete-data ms/row |"
          " naive ms/row | peers' loop ms/row | evaluate/complete | naive/evaluate |"
          " peers/evaluate |" + (" venn/tree | kk/tree |" if args.venn else ""))
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
          + ("---:|---:|" if args.venn else ""))
    for case in cases:
        r = case_row(case, args.sample, args.venn, args.repeat)
        print(table_line(r, args.venn), flush=True)
        print(f"{r['case']}: medians of {r['repeat']} runs; peers' loop ms/row "
              f"{r['peers_spread'][0]:.1f}-{r['peers_spread'][1]:.1f}, evaluate ms/row "
              f"{r['evaluate_spread'][0]:.2f}-{r['evaluate_spread'][1]:.2f}; fast ms/row "
              f"{r['fast_ms']:.2f}, our sklearn loop ms/row {r['sklearn_ms']:.1f}",
              file=sys.stderr, flush=True)
    print(f"load: {os.getloadavg()}", file=sys.stderr)


if __name__ == "__main__":
    main()
