"""BENCHMARKS.md table "scale": CPU time and peak memory of TPCE, K&K and Venn on large data.

    python benchmarks/engine_scale.py all                 # the page's table (about 24 min)
    python benchmarks/engine_scale.py all --quick         # 2,000-row cases, one fold, 5 rows
    python benchmarks/engine_scale.py cv letter tpce [--max-folds 2] [--sample 200]
    python benchmarks/engine_scale.py build big [--test 500]

Cases (seeded, learnable but noisy: class-dependent Gaussian means, integer-valued
attributes as in the UCI sets they imitate, 5 % of the labels replaced at random):

* ``letter``  — 20 000 rows × 16 numeric attributes (integers 0–15), 26 balanced classes;
* ``shuttle`` — 58 000 rows × 9 numeric attributes (integers), 7 classes, class 0 holding
  80 % of the rows and the rest split unevenly;
* ``big``     — 100 000 rows × 20 numeric attributes (2 decimals), 5 classes.

``cv`` runs ``fit`` on nine folds and ``predict`` on the tenth for each fold (seeded
permutation folds), in one process, and prints one JSON line: CPU seconds
(``time.process_time``) per fold and in total, and the peak resident memory
(``ru_maxrss``). ``--max-folds k`` stops after k folds and ``--sample m`` predicts only
m rows of each test fold (the total is then extrapolated and marked ≈). ``build`` times
a plain tree, the batched engine's build (base tree and the certificate tables of the
first test row's paths; later tables are built when a walk first reaches them, in the
prediction's time) and TPCE prediction of ``--test`` rows, with the peak memory. ``all``
runs every case in a fresh process each and prints the page's two tables. ``--rows N``
shrinks every case to N rows. Every process runs under the command line's malloc
thresholds (``--allocator default``: glibc's own; ``venn_cost.apply``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
from run import add_quick, quick
from venn_cost import add_allocator, apply

CASES = {
    "letter": {"n": 20_000, "p": 16, "k": 26, "major": None, "sep": 1.5, "scale": 2.0,
               "integer": (0, 15)},
    "shuttle": {"n": 58_000, "p": 9, "k": 7, "major": 0.80, "sep": 3.0, "scale": 8.0,
                "integer": (-60, 60)},
    "big": {"n": 100_000, "p": 20, "k": 5, "major": None, "sep": 1.0, "scale": 1.0,
            "integer": None},
}


#: ``--rows``: the cases shrunk (quick mode), case -> rows
ROWS: dict[str, int] = {}


def synthetic(case: str, seed: int = 0):
    """The case's Dataset: class-dependent Gaussian means, 5 % label noise."""
    from treecert.data.schema import Attribute, Dataset, Schema

    c = CASES[case]
    n, p, k = ROWS.get(case, c["n"]), c["p"], c["k"]
    rng = np.random.default_rng(seed)
    if c["major"] is None:
        prior = np.full(k, 1.0 / k)
    else:  # one class holds `major`, the rest decreasing geometrically
        rest = 0.5 ** np.arange(k - 1)
        prior = np.concatenate([[c["major"]], (1 - c["major"]) * rest / rest.sum()])
    y = rng.choice(k, size=n, p=prior)
    means = rng.normal(size=(k, p)) * c["sep"] * c["scale"]
    X = means[y] + rng.normal(size=(n, p)) * c["scale"]
    if c["integer"] is not None:
        lo, hi = c["integer"]
        X = np.clip(np.round(X + (lo + hi) / 2), lo, hi)
    else:
        X = X.round(2)
    noisy = rng.random(n) < 0.05
    y[noisy] = rng.integers(0, k, size=int(noisy.sum()))
    schema = Schema(tuple(Attribute(f"a{j}", "numeric") for j in range(p)),
                    Attribute("class", "nominal", tuple(f"c{j}" for j in range(k))))
    return Dataset(schema, X.astype(float), y.astype(np.int64), np.ones(n))


def fold_ids(n: int, folds: int = 10) -> np.ndarray:
    """The seeded permutation folds of every synthetic case (one home for the scripts that
    time, count or profile a fold of them)."""
    return np.random.default_rng(1).permutation(n) % folds


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_cv(case: str, method: str, folds: int, max_folds: int | None,
           sample: int | None, only: int | None = None) -> dict:
    from treecert.methods import make_method

    data = synthetic(case)
    fold = fold_ids(data.n_samples, folds)
    times = []
    chosen = range(folds if max_folds is None else min(folds, max_folds))
    for f in chosen if only is None else [only]:
        test = np.flatnonzero(fold == f)
        part = test if sample is None else test[:sample]
        t0 = time.process_time()
        m = make_method(method).fit(data.subset(np.flatnonzero(fold != f)))
        t1 = time.process_time()
        m.predict(data.subset(part))
        t2 = time.process_time()
        times.append((t1 - t0) + (t2 - t1) * test.size / part.size)
        print(json.dumps({"fold": f, "fit_s": round(t1 - t0, 2), "predict_s": round(t2 - t1, 2),
                          "rows": int(part.size), "of": int(test.size),
                          "peak_mib": round(peak_mib())}), file=sys.stderr, flush=True)
    total = sum(times) * folds / len(times)
    import treecert

    return {"case": case, "method": method, "rows": data.n_samples,
            "code": os.path.dirname(os.path.dirname(os.path.abspath(treecert.__file__))),
            "folds_run": len(times), "folds": folds,
            "sampled_rows": sample, "cpu_s_per_fold": [round(t, 2) for t in times],
            "cpu_s_total": round(total, 1),
            "extrapolated": len(times) < folds or sample is not None,
            "peak_mib": round(peak_mib())}


def run_build(case: str, n_test: int) -> dict:
    from treecert.methods import make_method
    from treecert.transductive.batch_engine import BatchEngine
    from treecert.tree.classifier import DecisionTree

    data = synthetic(case)
    rng = np.random.default_rng(2)
    test_idx = rng.choice(data.n_samples, size=n_test, replace=False)
    train = data.subset(np.setdiff1d(np.arange(data.n_samples), test_idx))
    test = data.subset(test_idx)
    t0 = time.process_time()
    DecisionTree().fit(train)
    plain = time.process_time() - t0
    rss_plain = peak_mib()
    t0 = time.process_time()
    eng = BatchEngine(train, DecisionTree())
    eng._competitors()
    eng.grow_batch(test.X[:1], test.y[:1])  # the first walk: its paths' tables
    build = time.process_time() - t0
    rss_build = peak_mib()
    del eng
    t0 = time.process_time()
    make_method("tpce").fit(train).predict(test)
    tpce = time.process_time() - t0
    return {"case": case, "train_rows": train.n_samples, "plain_tree_s": round(plain, 2),
            "engine_build_s": round(build, 2), "build_ratio": round(build / plain, 2),
            "peak_mib_after_plain": round(rss_plain), "peak_mib_after_build": round(rss_build),
            "tpce_test_rows": n_test, "tpce_fit_predict_s": round(tpce, 1),
            "peak_mib": round(peak_mib())}


def subprocess_json(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _tables(cvs: list[dict], build: dict) -> str:
    """The page's two tables from ``all``'s results."""
    def cpu(r: dict) -> str:
        return f"{'≈' if r['extrapolated'] else ''}{r['cpu_s_total']:.1f}"

    out = ["| case | rows | tpce CV, CPU s | kk CV, CPU s | venn CV, CPU s |"
           " peak MiB (tpce / kk / venn) |", "|---|---:|---:|---:|---:|---|"]
    for case in dict.fromkeys(r["case"] for r in cvs):
        by = {r["method"]: r for r in cvs if r["case"] == case}
        out.append(f"| {case} | {by['tpce']['rows']:,} | {cpu(by['tpce'])} | {cpu(by['kk'])} | "
                   f"{cpu(by['venn'])} | "
                   + " / ".join(f"{by[m]['peak_mib']:.0f}" for m in ("tpce", "kk", "venn"))
                   + " |")
    out += ["", "| case | training rows | plain tree, CPU s | engine build, CPU s |"
            " build / plain | TPCE fit + predict, CPU s (test rows) | peak MiB |",
            "|---|---:|---:|---:|---:|---:|---:|",
            f"| {build['case']} | {build['train_rows']:,} | {build['plain_tree_s']:.2f} | "
            f"{build['engine_build_s']:.2f} | {build['build_ratio']:.2f} | "
            f"{build['tpce_fit_predict_s']:.1f} ({build['tpce_test_rows']}) | "
            f"{build['peak_mib']:.0f} |"]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("cv", "build", "all"))
    ap.add_argument("case", nargs="?", choices=tuple(CASES))
    ap.add_argument("method", nargs="?", default="tpce")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--max-folds", type=int)
    ap.add_argument("--test", type=int, default=500)
    ap.add_argument("--sample", type=int, help="predict only this many rows of each fold "
                    "(the fold's prediction time is scaled up)")
    ap.add_argument("--only-fold", type=int, help="run this fold alone (cv)")
    ap.add_argument("--rows", type=int, help="shrink every case to this many rows")
    ap.add_argument("--code", help="import treecert from this checkout (an older commit, "
                    "extracted with git archive) instead of this one")
    add_allocator(ap)
    add_quick(ap)
    args = ap.parse_args()
    if args.code:  # nothing of treecert is imported before this point
        sys.path.insert(0, os.path.abspath(args.code))
    if quick(args):
        args.rows, args.max_folds, args.sample, args.test = 2000, 1, 5, 5
    if args.what == "cv" and not args.case:
        sys.exit("engine_scale.py: cv needs a case: " + ", ".join(CASES))
    if args.rows:
        ROWS.update(dict.fromkeys(CASES, args.rows))
    apply(args.allocator)
    if args.what == "cv":
        print(json.dumps(run_cv(args.case, args.method, args.folds, args.max_folds,
                                args.sample, args.only_fold)))
    elif args.what == "build":
        print(json.dumps(run_build(args.case or "big", args.test)))
    else:
        print(f"load average {os.getloadavg()}", file=sys.stderr, flush=True)
        extra = ["--allocator", args.allocator]
        extra += [] if args.max_folds is None else ["--max-folds", str(args.max_folds)]
        extra += [] if args.sample is None else ["--sample", str(args.sample)]
        extra += [] if args.rows is None else ["--rows", str(args.rows)]
        cvs = []
        for case in ("letter", "shuttle"):
            for method in ("tpce", "kk", "venn"):
                cvs.append(subprocess_json(["cv", case, method, *extra]))
                print(json.dumps(cvs[-1]), file=sys.stderr, flush=True)
        build = subprocess_json(["build", "big", "--test", str(args.test), "--allocator",
                                 args.allocator, *([] if args.rows is None else
                                                   ["--rows", str(args.rows)])])
        print(json.dumps(build), file=sys.stderr, flush=True)
        print(f"load average {os.getloadavg()}", file=sys.stderr, flush=True)
        print(_tables(cvs, build))


if __name__ == "__main__":
    main()
