"""``collapse`` and ``cp`` in the batched engine (issue #13): TPCE, K&K and the Venn machine
with J48's tree (gain ratio, threshold lower, collapse — what ``--j48`` sets) and with
``--cp 0.01``, 10-fold CV with the shared folds: the fast engine against the same method
without the edit (the engine's cost before the edit), ``engine=naive`` (a whole tree grown
and edited per (x, c)) and a plain tree's CV.

Run from the repository root::

    python benchmarks/engine_edits.py                       # every dataset, method, edit
    python benchmarks/engine_edits.py --methods tpce --datasets credit-g vote --sample 2

Each figure is the CPU time (``time.process_time``) of one whole 10-fold run — fit and
predict, what ``treecert evaluate DATA --method M --folds-file DATA.folds.csv`` runs — in a
fresh process (:func:`venn_cost._measure`); ``engine=naive`` on ``--sample`` test rows per
fold, scaled to the fold (the fit counted once per fold, unscaled).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from venn_cost import ROOT, _run

DATASETS = ("credit-g", "vote", "diabetes", "segment-challenge")
#: the tree options of each edit, and of the same tree without it
EDITS = {
    "j48": ("criterion=gain_ratio,threshold=lower,collapse=true",
            "criterion=gain_ratio,threshold=lower"),
    "cp": ("cp=0.01", ""),
}


def _spec(method: str, options: str) -> str:
    return f"{method}:{options}" if options else method


def _rows(args):
    """One table row per (dataset, edit, method), as it is measured."""
    for name in args.datasets:
        for edit in args.edits:
            edited, unedited = EDITS[edit]
            plain = _run(ROOT, name, _spec("frequency", edited), 0)
            for method in args.methods:
                fast = _run(ROOT, name, _spec(method, edited), 0)
                before = _run(ROOT, name, _spec(method, unedited), 0)
                naive = _run(ROOT, name, _spec(method, edited + ",engine=naive"), args.sample)
                yield (f"| {name} | {edit} | {method} | {plain:.2f} | {before:.2f} | "
                       f"{fast:.2f} | {naive:.1f} | {fast / before:.1f} | "
                       f"{naive / fast:.0f} | {fast / plain:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--methods", nargs="*", default=["tpce", "kk", "venn"])
    ap.add_argument("--edits", nargs="*", default=list(EDITS))
    ap.add_argument("--sample", type=int, default=2, help="naive: test rows per fold")
    args = ap.parse_args()
    loads = [os.getloadavg()]
    table = ["| dataset | edit | method | plain tree CV | unedited fast | edited fast | "
             "naive (≈) | edited / unedited | naive / edited | edited / plain |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for row in _rows(args):
        table.append(row)
        print(row, file=sys.stderr, flush=True)
    loads.append(os.getloadavg())
    print("\n".join(table) + f"\n\nload average (1, 5, 15 min) before, after: {loads}")


if __name__ == "__main__":
    main()
