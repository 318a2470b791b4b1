"""BENCHMARKS.md table "cluster": ``predict --method tpce`` on local and Dask workers.

    python benchmarks/scale_tpce.py --rows 100000    # the page's table
    python benchmarks/scale_tpce.py --quick          # 300 test rows from 500 training rows

Synthetic test rows scored from a 5,000-row training set (``scale_common``): one local
worker, two local workers (``--jobs 2``) and a two-worker Dask ``LocalCluster`` on loopback
(``--scheduler``; needs ``distributed``), in the same run. Memory is the peak RSS summed
over the predict command's process tree (its joblib workers included) and, for the Dask
run, the two worker processes; CPU is summed over the same processes. On a loaded machine
the wall-clock speed-up is not the parallel efficiency; the CPU column (1.00 = no parallel
overhead) is. The three outputs are checked to be byte-identical.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import sys
from pathlib import Path

from run import add_quick, quick
from scale_common import measure, tpce_predict_setup


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--train-rows", type=int, default=5_000)
    add_quick(ap)
    args = ap.parse_args()
    if quick(args):
        args.rows, args.train_rows = 300, 500
    if args.rows < 1:
        sys.exit("scale_tpce.py: nothing to run (--rows must be >= 1)")
    work, base = tpce_predict_setup(str(Path(__file__).resolve().parents[1]), args.rows,
                                    args.train_rows, "treecert-tpce-")
    rows = []
    load = os.getloadavg()
    for label, extra in (("1 local worker", ["--jobs", "1"]),
                         ("2 local workers (--jobs 2)", ["--jobs", "2"])):
        out = work / f"out-{len(rows)}.csv"
        wall, cpu, mem = measure([*base, *extra, "-o", str(out)])
        rows.append((label, wall, cpu, mem, out))
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, protocol="tcp",
                      host="127.0.0.1", dashboard_address="127.0.0.1:0") as cluster:
        pids = [w.process.pid for w in cluster.workers.values()]
        out = work / "out-dask.csv"
        wall, cpu, mem = measure([*base, "--scheduler", cluster.scheduler_address, "-o",
                                  str(out)], extra_pids=pids)
        rows.append(("2-worker Dask LocalCluster (--scheduler)", wall, cpu, mem, out))
    same = all(filecmp.cmp(rows[0][4], r[4], shallow=False) for r in rows[1:])
    if not same:
        sys.exit("scale_tpce.py: the three runs wrote different predictions")
    print(f"{args.rows:,} test rows, {args.train_rows:,} training rows; load average "
          f"before/after: {load[0]:.1f} / {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("| run | wall s | rows/s (wall) | speed-up vs 1 worker (wall) | CPU s | "
          "rows per CPU-s | CPU vs 1 worker | peak MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, wall, cpu, mem, _ in rows:
        print(f"| {label} | {wall:.1f} | {args.rows / wall:,.0f} | {rows[0][1] / wall:.2f} | "
              f"{cpu:.1f} | {args.rows / cpu:,.0f} | {cpu / rows[0][2]:.2f} | {mem:.0f} |")


if __name__ == "__main__":
    main()
