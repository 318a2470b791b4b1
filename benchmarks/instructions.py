"""Instructions of a cross-validation, counted by valgrind's callgrind: repeatable on a
noisy machine, where CPU seconds of small changes are not (BENCHMARKS.md, session 22).

    python benchmarks/instructions.py DATASET SPEC NFOLDS [--held-out] [--code DIR] [--datasets DIR]

Fits and predicts folds 0..NFOLDS-1 of ``DATASET``'s fixed folds (``DATASET.arff`` and
``DATASET.folds.csv`` in ``--datasets``, default ``../shared/datasets``) with method
``SPEC`` (with ``--held-out``, as ``treecert evaluate`` runs them: all folds from one
engine where the method serves them so, else one fit per fold), in a process run under
callgrind (``PYTHONHASHSEED=0``), and prints the instructions of the folds: the whole
process less the same process with no fold run (imports and loading). ``--code`` runs
another checkout's treecert (default: this one). Needs valgrind (Debian's ``valgrind``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

RUN = """
import sys
from treecert.data.folds import read_fold_ids
from treecert.data.loading import load_dataset
from treecert.methods import make_method
import numpy as np
path, spec, folds, held_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
data = load_dataset(path + ".arff")
with open(path + ".folds.csv") as handle:
    ids = read_fold_ids(handle.read(), data.n_samples, path)
tests = [np.flatnonzero(ids == f) for f in range(folds)]
method = make_method(spec)
if folds and held_out and method.serves_held_out(data, [ids.size - t.size for t in tests]):
    method.fit(data).predict_held_out(tests)
else:
    for f in range(folds):
        make_method(spec).fit(data.subset(ids != f)).predict(data.subset(ids == f))
"""


def collected(code: str, path: str, spec: str, folds: int, held_out: bool = False) -> int:
    """Instructions of one process running ``folds`` folds under callgrind."""
    return counted(code, RUN, [path, spec, str(folds), str(int(held_out))])


def counted(code: str, run: str, args: list[str]) -> int:
    """Instructions of one process running the script ``run`` with ``args`` under
    callgrind, importing treecert from ``code``."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "run.py")
        with open(script, "w") as handle:
            handle.write(run)
        env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=code)
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
             sys.executable, script, *args],
            env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if found is None:
        raise SystemExit("callgrind printed no count:\n" + done.stderr[-2000:])
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("spec")
    ap.add_argument("folds", type=int)
    ap.add_argument("--held-out", action="store_true",
                    help="the folds as evaluate runs them (one engine for all, if served)")
    ap.add_argument("--code", default=os.path.dirname(HERE))
    ap.add_argument("--datasets",
                    default=os.path.join(os.path.dirname(HERE), "..", "shared", "datasets"))
    args = ap.parse_args()
    path = os.path.join(os.path.abspath(args.datasets), args.dataset)
    code = os.path.abspath(args.code)
    total = collected(code, path, args.spec, args.folds, args.held_out)
    start = collected(code, path, args.spec, 0, args.held_out)
    how = " held out" if args.held_out else ""
    print(f"{args.dataset} {args.spec} {args.folds} folds{how}: "
          f"{(total - start) // 1_000_000} M instructions ({code})")


if __name__ == "__main__":
    main()
