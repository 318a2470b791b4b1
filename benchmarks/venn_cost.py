"""The Venn machine's cost against a plain tree's, 10-fold CV with the shared folds (issue
#13's aim: Venn ≤ 5× a plain tree's CV; soybean's Venn CV under 10 minutes).

Run from the repository root::

    python benchmarks/venn_cost.py                                   # this checkout
    python benchmarks/venn_cost.py --before /tmp/old --sample 20    # and an older checkout

Each figure is the CPU time (``time.process_time``) of one whole 10-fold run of one method
— fit and predict, what ``treecert evaluate DATA --method M --folds DATA.folds.csv`` runs —
in a fresh process per (dataset, method, code), so no engine is cached across them.
``--before DIR`` also times the Venn machine of the code in DIR (a checkout of an older
commit; only its ``treecert`` package is imported) on ``--sample`` test rows per fold,
scaled to the fold (the fit is timed once per fold, unscaled) on the datasets of
``--sampled`` (by default those with unknown values: the one-(x, j)-at-a-time path it had
takes minutes per fold there), whole elsewhere. Every process runs under the command
line's malloc thresholds, as ``treecert evaluate`` does (``--allocator default``: glibc's
own, what a library caller gets; :mod:`allocator`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import allocator

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
DATASETS = ("credit-g", "vote", "segment-challenge", "soybean")


def data_with_folds(name: str):
    """The dataset ``name`` of ``tests/data`` and its fixed fold ids (``NAME.folds.csv``)."""
    from treecert.data.folds import read_fold_ids
    from treecert.data.loading import load_dataset

    data = load_dataset(DATA / f"{name}.arff")
    folds = DATA / f"{name}.folds.csv"
    return data, read_fold_ids(folds.read_text(), data.n_samples, str(folds))


def cv_seconds(name: str, spec: str, sample: int = 0) -> float:
    """CPU seconds of the 10-fold CV of ``spec`` on ``name`` (in this process)."""
    import numpy as np

    from treecert.evaluation.experiment import Protocol, evaluate
    from treecert.methods import make_method

    data, ids = data_with_folds(name)
    if not sample:
        t0 = time.process_time()
        evaluate(data, [spec], protocol=Protocol(kind="folds", fold_ids=ids), dataset_name=name)
        return time.process_time() - t0
    total = 0.0
    for f in np.unique(ids):  # the fit once per fold, the prediction scaled to the fold
        test = np.flatnonzero(ids == f)
        pick = test[:: max(1, test.size // sample)][:sample]
        t0 = time.process_time()
        method = make_method(spec).fit(data.subset(np.flatnonzero(ids != f)))
        t1 = time.process_time()
        method.predict(data.subset(pick))
        total += t1 - t0 + (time.process_time() - t1) * test.size / pick.size
    return total


def _run(code: Path, name: str, spec: str, sample: int, warm: int = 0,
         malloc: str = "command-line"):
    """:func:`cv_seconds` in a fresh process importing ``treecert`` from ``code``, with the
    allocator ``malloc`` (:mod:`allocator`); with ``warm``, the list of ``warm`` whole runs
    one after the other in that process."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    args = ["--one", name, spec, str(sample), "--allocator", malloc] + (
        ["--warm", str(warm)] if warm else [])
    out = subprocess.run([sys.executable, __file__, *args],
                         env=env, cwd=code, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _warm(args) -> None:
    """``--warm N``: N whole 10-fold runs per (dataset, method, code) in one process each,
    the later ones without a fresh process's first-call costs, which weigh on a sub-second
    denominator."""
    codes = [("this", ROOT)] + ([("before", args.before)] if args.before else [])
    for name in args.datasets:
        for label, code in codes:
            for spec in ("frequency", "venn"):
                times = _run(code, name, spec, 0, args.warm, args.allocator)
                print(f"{name} {label} {spec}: " + ", ".join(f"{t:.3f}" for t in times),
                      flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--before", type=Path, help="an older checkout to time as well")
    ap.add_argument("--sample", type=int, default=20, help="--before: test rows per fold")
    ap.add_argument("--sampled", nargs="*", default=["vote", "soybean"],
                    help="--before: the datasets timed on --sample rows per fold")
    ap.add_argument("--warm", type=int, default=0,
                    help="time N whole runs in one process per method instead (no table)")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    allocator.add_option(ap)
    args = ap.parse_args()
    if args.one:
        allocator.apply(args.allocator)
        name, spec, sample = args.one
        if args.warm:
            print(json.dumps([cv_seconds(name, spec, 0) for _ in range(args.warm)]))
        else:
            print(json.dumps(cv_seconds(name, spec, int(sample))))
        return
    if args.warm:
        _warm(args)
        return
    print(f"load: {os.getloadavg()}", file=sys.stderr)
    head = "| dataset | plain tree CV, CPU s | `venn` CV, CPU s | × plain tree |"
    rule = "|---|---:|---:|---:|"
    if args.before:
        head += " `venn` before, CPU s | × plain tree | speed-up |"
        rule += "---:|---:|---:|"
    lines = [head, rule]
    for name in args.datasets:
        plain = _run(ROOT, name, "frequency", 0, malloc=args.allocator)
        venn = _run(ROOT, name, "venn", 0, malloc=args.allocator)
        line = f"| {name} | {plain:.2f} | {venn:.2f} | {venn / plain:.1f} |"
        if args.before:
            sampled = name in args.sampled
            old = _run(args.before, name, "venn", args.sample if sampled else 0,
                       malloc=args.allocator)
            note = f" (≈, {args.sample} rows/fold)" if sampled else ""
            line += f" {old:.1f}{note} | {old / plain:.1f} | {old / venn:.1f}× |"
        lines.append(line)
        print(line, file=sys.stderr, flush=True)
    print(f"load: {os.getloadavg()}", file=sys.stderr)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
