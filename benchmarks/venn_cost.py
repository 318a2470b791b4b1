"""BENCHMARKS.md table "venn_cost": the Venn machine's 10-fold CV against a plain tree's.

    python benchmarks/venn_cost.py --warm 6          # the page's table
    python benchmarks/venn_cost.py --quick           # vote only, two warm runs

Each figure is the CPU time (``time.process_time``) of one whole 10-fold run of one method
(fit and predict, what ``treecert evaluate DATA --method M --folds DATA.folds.csv`` runs)
on ``tests/data``. *Fresh*: a fresh process per (dataset, method), so no engine is cached
and numpy's and the package's first-call costs are paid, as by a command. *Warm* (with
``--warm N``): N whole runs in one process, the median of runs 2..N, as a library process's
later runs. ``--before DIR`` also times the Venn machine of an older checkout in DIR (fresh
only; on ``--sample`` test rows per fold, scaled, for the datasets of ``--sampled``).
Every process runs under the command line's malloc thresholds, as ``treecert evaluate``
does (``--allocator default``: glibc's own, what a library caller gets; :func:`apply`).
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

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
DATASETS = ("credit-g", "vote", "segment-challenge", "soybean")
ALLOCATORS = ("command-line", "default")


def add_allocator(ap: argparse.ArgumentParser) -> None:
    """The ``--allocator`` option of the scripts that time what a command runs."""
    ap.add_argument("--allocator", choices=ALLOCATORS, default="command-line",
                    help="glibc's malloc thresholds: the command line's (what `treecert "
                    "evaluate` runs with; the default) or glibc's own (a library caller's)")


def apply(choice: str) -> None:
    """Set the malloc thresholds of ``choice`` in this process, before anything is timed.

    Every ``treecert`` command sets glibc's thresholds at its entry point
    (``treecert.cli.main.HOLD_BYTES``: freed memory stays in the heap for reuse); under
    glibc's own dynamic thresholds a batch's temporaries of a few MB are handed back and
    faulted in again page by page. Nothing changes off glibc.
    """
    if choice == "command-line":
        from treecert.cli.main import HOLD_BYTES
        from treecert.parallel import set_malloc_thresholds

        set_malloc_thresholds(HOLD_BYTES, HOLD_BYTES)


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
    allocator ``malloc`` (:func:`apply`); with ``warm``, the list of ``warm`` whole runs
    one after the other in that process."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    args = ["--one", name, spec, str(sample), "--allocator", malloc] + (
        ["--warm", str(warm)] if warm else [])
    out = subprocess.run([sys.executable, __file__, *args],
                         env=env, cwd=code, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--before", type=Path, help="an older checkout to time as well")
    ap.add_argument("--sample", type=int, default=20, help="--before: test rows per fold")
    ap.add_argument("--sampled", nargs="*", default=["vote", "soybean"],
                    help="--before: the datasets timed on --sample rows per fold")
    ap.add_argument("--warm", type=int, default=0,
                    help="also N whole runs in one process per method (the warm columns)")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    add_allocator(ap)
    add_quick(ap)
    args = ap.parse_args()
    if args.one:
        apply(args.allocator)
        name, spec, sample = args.one
        if args.warm:
            print(json.dumps([cv_seconds(name, spec, 0) for _ in range(args.warm)]))
        else:
            print(json.dumps(cv_seconds(name, spec, int(sample))))
        return
    if quick(args):
        args.datasets, args.warm = ["vote"], 2
    if not args.datasets:
        sys.exit("venn_cost.py: no dataset to run (--datasets is empty)")
    print(f"load: {os.getloadavg()}", file=sys.stderr)
    warm = args.warm > 1
    head = ("| dataset | plain tree CV, CPU s (fresh / warm) | `venn` CV, CPU s (fresh / warm) |"
            " × plain tree (fresh / warm) |" if warm else
            "| dataset | plain tree CV, CPU s | `venn` CV, CPU s | × plain tree |")
    rule = "|---|---:|---:|---:|"
    if args.before:
        head += " `venn` before, CPU s | × plain tree | speed-up |"
        rule += "---:|---:|---:|"
    lines = [head, rule]
    for name in args.datasets:
        plain = _run(ROOT, name, "frequency", 0, malloc=args.allocator)
        venn = _run(ROOT, name, "venn", 0, malloc=args.allocator)
        if warm:
            wp, wv = (float(np.median(_run(ROOT, name, spec, 0, args.warm,
                                           args.allocator)[1:]))
                      for spec in ("frequency", "venn"))
            line = (f"| {name} | {plain:.3f} / {wp:.3f} | {venn:.3f} / {wv:.3f} | "
                    f"{venn / plain:.1f} / {wv / wp:.1f} |")
        else:
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
