"""How often the batched engine builds a node table (``cut_tables.NodeTable``) it had built
before: the rows of every node table built while one fold of a synthetic large case is
predicted, against the rows of the distinct tables (by their training rows and weights).
The difference is work the table cache (``budget.TABLE_BYTES``) lost to eviction, or
that two derivations of the same rows could not share.

    python benchmarks/table_builds.py shuttle tpce 6 [--sample 2000] [--code /tmp/old]

Prints one JSON line: CPU seconds of the prediction, tables built and distinct, their
rows, and the same for tables of at least 512 training rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case")
    ap.add_argument("method")
    ap.add_argument("fold", type=int)
    ap.add_argument("--sample", type=int, help="predict only the first rows of the fold")
    ap.add_argument("--code", default=os.path.join(HERE, ".."),
                    help="import treecert from this checkout")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.code))
    from treecert.methods import make_method
    from treecert.transductive import label_search

    sys.path.insert(1, HERE)  # after treecert: engine_scale puts its own checkout first
    import engine_scale

    built: dict[bytes, list[int]] = {}  # digest -> [builds, rows]
    original = label_search.node_tables

    def counted(finder, nodes, rank, with_x=True):
        for rows, w in nodes:
            h = hashlib.blake2b(rows.tobytes(), digest_size=16)
            h.update(w.tobytes())
            h.update(bytes([with_x]))
            entry = built.setdefault(h.digest(), [0, rows.size])
            entry[0] += 1
        return original(finder, nodes, rank, with_x)

    label_search.node_tables = counted
    data = engine_scale.synthetic(args.case)
    fold = engine_scale.fold_ids(data.n_samples)
    test = np.flatnonzero(fold == args.fold)[:args.sample]
    model = make_method(args.method).fit(data.subset(np.flatnonzero(fold != args.fold)))
    t0 = time.process_time()
    model.predict(data.subset(test))
    cpu = time.process_time() - t0
    builds = np.array([b for b, _ in built.values()], dtype=np.int64)
    rows = np.array([r for _, r in built.values()], dtype=np.int64)
    big = rows >= 512
    print(json.dumps({
        "case": args.case, "method": args.method, "fold": args.fold, "rows": int(test.size),
        "code": os.path.abspath(args.code), "cpu_s": round(cpu, 1),
        "tables_built": int(builds.sum()), "tables_distinct": int(builds.size),
        "rows_built": int((builds * rows).sum()), "rows_distinct": int(rows.sum()),
        "big_built": int(builds[big].sum()), "big_distinct": int(big.sum()),
        "big_rows_built": int((builds * rows)[big].sum())}))


if __name__ == "__main__":
    main()
