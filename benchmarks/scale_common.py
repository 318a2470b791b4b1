"""Helpers of BENCHMARKS.md tables "stream", "stream_arff" and "cluster": data, measuring.

``measure`` runs a command and samples the resident memory of its whole process tree
(psutil, every 50 ms), so local worker processes (joblib/loky) are counted too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_synthetic(path: Path, n: int, seed: int, n_features: int = 8) -> None:
    """``n`` rows of ``n_features`` numbers (4 decimals) and a noisy two-class label."""
    rng = np.random.RandomState(seed)
    with path.open("w") as fh:
        fh.write(",".join([f"x{j}" for j in range(n_features)] + ["class"]) + "\n")
        for lo in range(0, n, 100_000):
            X = rng.normal(size=(min(100_000, n - lo), n_features)).round(4)
            score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + rng.normal(scale=0.7, size=X.shape[0])
            y = np.where(score > 0, "pos", "neg")
            fh.write("\n".join(",".join(map(repr, r)) + "," + c
                               for r, c in zip(X.tolist(), y, strict=True)) + "\n")


def measure(cmd: list[str], extra_pids=()) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MiB) of a command.

    CPU is user + system time of the command (``wait4``) when it has no other processes;
    else of the command, its descendants and the processes ``extra_pids`` (e.g. Dask
    workers) as last sampled, every 50 ms: on a machine shared with other work the wall time
    depends on the load, the CPU time much less. Peak memory is the RSS summed over the
    same processes, sampled at the same times.
    """
    import os

    import psutil

    extra = [psutil.Process(p) for p in extra_pids]
    extra_cpu0 = {p.pid: sum(p.cpu_times()[:2]) for p in extra}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    root = psutil.Process(proc.pid)
    peak, cpu = 0, {}
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        total = 0
        try:
            for p in [root, *root.children(recursive=True), *extra]:
                try:
                    total += p.memory_info().rss
                    cpu[p.pid] = sum(p.cpu_times()[:2]) - extra_cpu0.get(p.pid, 0.0)
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        peak = max(peak, total)
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    for p in extra:  # the Dask workers outlive the command: their CPU until now
        cpu[p.pid] = sum(p.cpu_times()[:2]) - extra_cpu0[p.pid]
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}")
    own = usage.ru_utime + usage.ru_stime
    if len(cpu) <= 1:  # one process: its exact rusage
        return wall, own, peak / 2**20
    return wall, sum(cpu.values()), peak / 2**20


def tpce_predict_setup(repo: str, rows: int, train_rows: int, prefix: str
                       ) -> tuple[Path, list[str]]:
    """(work directory, predict command) of the TPCE scale benchmarks: a tree trained on
    ``train_rows`` synthetic rows, ``rows`` test rows, ``predict --method tpce -q``.

    Every process (the CLI runs, Dask workers, and the caller, whose Dask scheduler unpickles
    treecert's tasks) imports the treecert of the checkout ``repo``, installed or not.
    """
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH"))
                                               if p)
    sys.path.insert(0, repo)
    work = Path(tempfile.mkdtemp(prefix=prefix))
    train, test = work / "train.csv", work / "test.csv"
    write_synthetic(train, train_rows, seed=1)
    write_synthetic(test, rows, seed=2)
    model = work / "model.json"
    measure([sys.executable, "-m", "treecert", "train", str(train), "-o", str(model), "-q"])
    return work, [sys.executable, "-m", "treecert", "predict", str(model), str(test),
                  "--method", "tpce", "-q"]
