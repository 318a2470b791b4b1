"""The kl-pruning table of docs/pruning.md: leaves before and after kl at its default, per dataset.

Every dataset in tests/data, one tree grown on all of it with treecert's defaults
(information gain, min_leaf 2, unpruned), pruned with ``kl`` in both units: the default
``node`` unit (m·D, bits over a node's examples, bottom-up) at 0.5, 1 (the default), 2 and
4 bits, and the paper's ``example`` unit (D, bits per example) at 0.01 (the paper's
setting) and 0.05. A cell of 1 is a tree collapsed to its root.

    python benchmarks/kl_default.py            # the markdown table (seconds)
    python benchmarks/kl_default.py --quick    # two datasets (TREECERT_QUICK=1 too)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a clone: this repository's treecert
    sys.path.insert(0, str(ROOT))

NODE = (0.5, 1.0, 2.0, 4.0)
EXAMPLE = (0.01, 0.05)


def main() -> int:
    from treecert.data.loading import load_dataset
    from treecert.pruning.kl import prune_kl
    from treecert.tree.classifier import DecisionTree

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="two datasets")
    args = ap.parse_args()
    quick = args.quick or os.environ.get("TREECERT_QUICK") == "1"
    paths = sorted((ROOT / "tests" / "data").glob("*.arff"))
    if quick:
        paths = [p for p in paths if p.stem in ("vote", "unbalanced")]
    head = (["dataset", "unpruned"] + [f"node {t:g}" + (" (default)" if t == 1 else "")
                                       for t in NODE]
            + [f"example {t:g}" for t in EXAMPLE])
    print("| " + " | ".join(head) + " |")
    print("|---" + "|---:" * (len(head) - 1) + "|")
    pruned_by_default = collapsed = 0
    for path in paths:
        tree = DecisionTree().fit(load_dataset(path)).tree_
        cells = [prune_kl(tree, t)[0].n_leaves for t in NODE]
        cells += [prune_kl(tree, t, "example")[0].n_leaves for t in EXAMPLE]
        default = cells[NODE.index(1.0)]
        pruned_by_default += default < tree.n_leaves
        collapsed += default == 1 < tree.n_leaves
        print(f"| {path.stem} | {tree.n_leaves} | " + " | ".join(map(str, cells)) + " |")
    print(f"\nAt the default (1 bit per node): {pruned_by_default} of {len(paths)} trees "
          f"pruned, {collapsed} collapsed to the root.")
    return 0 if paths else 1


if __name__ == "__main__":
    raise SystemExit(main())
