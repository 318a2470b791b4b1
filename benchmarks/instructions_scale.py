"""Instructions of predicting the first rows of one fold of a synthetic large case
(``engine_scale.py``'s ``letter``, ``shuttle`` or ``big``), counted by callgrind: the
repeatable measure of a change to the engine at scale, where a whole fold takes minutes
and its CPU time moves by half between runs on a shared machine (BENCHMARKS.md,
session 27).

    python benchmarks/instructions_scale.py CASE SPEC FOLD ROWS [--code DIR]

Fits ``SPEC`` on the other nine of ``engine_scale.py``'s seeded folds and predicts the
first ``ROWS`` rows of fold ``FOLD``, in a process run under callgrind
(``PYTHONHASHSEED=0``), and prints its instructions less those of the same process
predicting no row. ``--code`` runs another checkout's treecert. Needs valgrind.
"""

from __future__ import annotations

import argparse
import os

from instructions import HERE, counted

RUN = """
import sys
from treecert.methods import make_method  # before engine_scale, which adds its checkout
import numpy as np
sys.path.insert(1, sys.argv[5])
import engine_scale
case, spec, fold, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = engine_scale.synthetic(case)
ids = engine_scale.fold_ids(data.n_samples)
method = make_method(spec).fit(data.subset(np.flatnonzero(ids != fold)))
if rows:
    method.predict(data.subset(np.flatnonzero(ids == fold)[:rows]))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=("letter", "shuttle", "big"))
    ap.add_argument("spec")
    ap.add_argument("fold", type=int)
    ap.add_argument("rows", type=int)
    ap.add_argument("--code", default=os.path.dirname(HERE))
    args = ap.parse_args()
    code = os.path.abspath(args.code)
    run = [args.case, args.spec, str(args.fold)]
    total = counted(code, RUN, [*run, str(args.rows), HERE])
    start = counted(code, RUN, [*run, "0", HERE])
    print(f"{args.case} {args.spec} fold {args.fold}, {args.rows} rows: "
          f"{(total - start) // 1_000_000} M instructions ({code})")


if __name__ == "__main__":
    main()
