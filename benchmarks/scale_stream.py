"""Streaming prediction: leaf-method ``treecert predict`` on large CSV files vs plain
``pandas.read_csv`` of the same file, in the same run; peak memory at two file sizes.

    nice -n 10 python benchmarks/scale_stream.py --rows 1000000 250000 --repeat 3

Both are timed as whole commands (interpreter start and imports included, as a user runs
them); the figures are medians of ``--repeat`` runs, wall-clock and CPU (user + system)
time, the latter being what a loaded shared machine disturbs least. Memory is the peak RSS
of the process. A streamed predict should hold about the same memory for both sizes, while
read_csv's grows with the file.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from scale_common import measure, write_synthetic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 250_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--method", default="laplace")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="treecert-scale-"))
    train = work / "train.csv"
    write_synthetic(train, 5_000, seed=1)
    model = work / "model.json"
    measure([sys.executable, "-m", "treecert", "train", str(train), "-o", str(model),
             "--leaf", "laplace", "-q"])
    print("| rows | file MB | read_csv wall s | read_csv CPU s | read_csv peak MiB | "
          "predict wall s | predict CPU s | predict rows/s (CPU) | predict peak MiB | "
          "speed vs read_csv (wall) | speed vs read_csv (CPU) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.rows:
        data = work / f"test-{n}.csv"
        write_synthetic(data, n, seed=2)
        read = [measure([sys.executable, "-c",
                         f"import pandas; pandas.read_csv({str(data)!r})"])
                for _ in range(args.repeat)]
        pred = [measure([sys.executable, "-m", "treecert", "predict", str(model), str(data),
                         "--method", args.method, "-o", str(work / "out.csv"), "-q"])
                for _ in range(args.repeat)]
        r_s, r_c = (statistics.median(m[i] for m in read) for i in (0, 1))
        p_s, p_c = (statistics.median(m[i] for m in pred) for i in (0, 1))
        print(f"| {n:,} | {data.stat().st_size / 1e6:.0f} | {r_s:.2f} | {r_c:.2f} | "
              f"{max(m[2] for m in read):.0f} | {p_s:.2f} | {p_c:.2f} | {n / p_c:,.0f} | "
              f"{max(m[2] for m in pred):.0f} | {r_s / p_s:.2f} | {r_c / p_c:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
