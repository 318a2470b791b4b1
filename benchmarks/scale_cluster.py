"""``treecert predict --method tpce`` on 1, 2 and 4 Dask worker processes of this machine,
and a model of the speed-up at 8-64 workers from the measured task times and transfer sizes.

    nice -n 10 python benchmarks/scale_cluster.py --rows 100000

Synthetic data as ``scale_tpce.py`` (a tree on 5,000 training rows, ``--rows`` test rows of
8 numeric attributes and two classes). First one local process without Dask (the
reference), then, for each worker count, a fresh ``LocalCluster`` of one-thread worker
processes, each pinned to one core (``os.sched_setaffinity``, worker i on core i mod the
number of cores: with more workers than cores they share cores, which the table says).
CPU is summed over the predict process and the workers; the scheduler and the nannies run in
this process and its CPU (with the sampler's) is reported apart. Every output is checked to
be byte-identical to the local one.

The model: a run costs the client's serial part S (reading, parsing, writing, starting:
its CPU in the 1-worker run), the compute P (the local process's CPU less S), each worker's
one-off start B (imports and the engine build: the 1-worker run's worker CPU less P), Dask's
per-task overhead (task counts and times from the scheduler's task stream), and per chunk
the scattered work object (measured: its pickled size) sent to each of w workers plus the
results sent back, at an assumed network bandwidth; the tasks of a chunk end together, so
half a task's time is lost per chunk. ``--treecert DIR`` runs another checkout (e.g. the
commit before a change).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path

from scale_common import measure, tpce_predict_setup

#: Assumed per-task scheduling overhead (Dask's documentation: about 1 ms a task) and
#: network bandwidth between client and workers (1 GbE; 10 GbE divides the transfer by 10).
TASK_OVERHEAD_S = 0.001
BANDWIDTH_BPS = 125e6


def payload_bytes(model_path: Path, test: Path) -> tuple[int, int]:
    """(pickled size of the work object of the first chunk, number of chunks): what the
    client scatters to every worker per chunk."""
    import cloudpickle

    from treecert import api, parallel
    from treecert.data.stream import SchemaReader
    from treecert.tree.model import read_model

    model = read_model(model_path)
    reader = SchemaReader(test, model.schema)
    chunks = list(reader.chunks(None))
    runner = api.predictor(model, method="tpce")
    sizes = []

    class Captured(Exception):
        pass

    def spy(work, n, jobs=1):
        sizes.append(len(cloudpickle.dumps(work)))
        raise Captured

    real = parallel.map_chunks
    parallel.map_chunks = spy
    try:
        runner.predict(chunks[0].data)
    except Captured:
        pass
    finally:
        parallel.map_chunks = real
    return sizes[0], len(chunks)


def dask_run(base: list[str], out: Path, n_workers: int) -> dict:
    """One predict on a fresh pinned ``LocalCluster`` of ``n_workers``: wall, CPU (client +
    workers), this process's CPU (scheduler, nannies, sampler), the tasks' wall times."""
    import psutil
    from distributed import Client, LocalCluster

    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      protocol="tcp", host="127.0.0.1", dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client:
        workers = [w.process.pid for w in cluster.workers.values()]
        if cores:
            for i, pid in enumerate(workers):
                for p in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
                    os.sched_setaffinity(p.pid, {cores[i % len(cores)]})
        client.get_task_stream(start=time.time())  # installs the scheduler's task stream

        def cpu_of(pids):
            return sum(sum(psutil.Process(p).cpu_times()[:2]) for p in pids)

        t0 = time.time()
        own0 = resource.getrusage(resource.RUSAGE_SELF)
        w0 = cpu_of(workers)
        wall, cpu, mem = measure([*base, "--scheduler", cluster.scheduler_address, "-o",
                                  str(out)], extra_pids=workers)
        w1 = cpu_of(workers)
        own1 = resource.getrusage(resource.RUSAGE_SELF)
        stream = client.get_task_stream(start=t0)
    tasks = [t for t in stream if any(s["action"] == "compute" for s in t["startstops"])]
    durations = [s["stop"] - s["start"] for t in tasks for s in t["startstops"]
                 if s["action"] == "compute"]
    return {"wall": wall, "cpu": cpu, "mem": mem, "workers_cpu": w1 - w0,
            "client_cpu": cpu - (w1 - w0),
            "scheduler": (own1.ru_utime + own1.ru_stime) - (own0.ru_utime + own0.ru_stime),
            "tasks": len(tasks), "median_task": statistics.median(durations),
            "result_bytes": sum(t.get("nbytes", 0) for t in tasks)}


def model(w: int, serial: float, compute: float, build: float, chunks: int, payload: int,
          result_bytes: int) -> float:
    """Predicted wall seconds on ``w`` workers of one core each (module docstring)."""
    tasks = chunks * 4 * w  # map_chunks cuts every chunk into 4 pieces per worker
    piece = compute / tasks
    return (serial + build + compute / w + tasks * TASK_OVERHEAD_S
            + chunks * (payload * w / BANDWIDTH_BPS + piece / 2)
            + result_bytes / BANDWIDTH_BPS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--train-rows", type=int, default=5_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--treecert", type=Path, default=Path(__file__).resolve().parents[1],
                    help="the checkout whose treecert runs (default: this one)")
    args = ap.parse_args()
    repo = str(args.treecert.resolve())
    work, base = tpce_predict_setup(repo, args.rows, args.train_rows, "treecert-cluster-")
    model_path, test = Path(base[4]), Path(base[5])
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"treecert from {repo}; {os.cpu_count()} cores; before: {uptime}", flush=True)
    local = work / "out-local.csv"
    wall1, cpu1, mem1 = measure([*base, "--jobs", "1", "-o", str(local)])
    print(f"local process: {wall1:.1f} s wall, {cpu1:.1f} CPU-s", flush=True)
    runs = {}
    for w in args.workers:
        out = work / f"out-{w}.csv"
        runs[w] = dask_run(base, out, w)
        runs[w]["same"] = filecmp.cmp(local, out, shallow=False)
        print(f"{w} workers: {runs[w]}", flush=True)
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    payload, chunks = payload_bytes(model_path, test)
    ncores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"\n{args.rows:,} test rows, {args.train_rows:,} training rows, {chunks} chunks; "
          f"after: {uptime}\n")
    print("| run | cores used | wall s | speed-up vs 1 worker (wall) | CPU s | CPU vs local "
          "process | client / workers CPU s | scheduler and nannies CPU s | tasks | "
          "median task s | peak MiB | identical |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
    print(f"| local process (no Dask) | 1 | {wall1:.1f} | | {cpu1:.1f} | 1.00 | | | | | "
          f"{mem1:.0f} | reference |")
    one = runs[min(runs)]
    for w, r in runs.items():
        note = f"{min(w, ncores)}" + (" (oversubscribed)" if w > ncores else "")
        print(f"| {w} Dask worker{'s' if w > 1 else ''} | {note} | {r['wall']:.1f} | "
              f"{one['wall'] / r['wall']:.2f} | {r['cpu']:.1f} | {r['cpu'] / cpu1:.2f} | "
              f"{r['client_cpu']:.1f} / {r['workers_cpu']:.1f} | "
              f"{r['scheduler']:.1f} | {r['tasks']} | {r['median_task']:.2f} | "
              f"{r['mem']:.0f} | {r['same']} |")
    # The model in CPU seconds (the wall clock of a loaded machine is not the work): the
    # client's CPU in the 1-worker run is the serial part S, the local process's CPU less S
    # the parallel part P, and what the worker spent beyond P its one-off start B (imports,
    # the engine build).
    serial = one["client_cpu"]
    compute = max(0.0, cpu1 - serial)
    build = max(0.0, one["workers_cpu"] - compute)
    print(f"\nModel inputs (1-worker run): serial part S = {serial:.1f} CPU-s (the predict "
          f"process), task compute P = {compute:.1f} CPU-s over {one['tasks']} tasks, "
          f"start per worker B = {build:.1f} CPU-s, work object scattered per "
          f"chunk {payload / 2**20:.2f} MiB x {chunks} chunks, results "
          f"{one['result_bytes'] / 2**20:.1f} MiB; {TASK_OVERHEAD_S * 1e3:.0f} ms per task, "
          f"{BANDWIDTH_BPS / 1e6:.0f} MB/s.\n")
    print("| workers | predicted wall s | predicted speed-up | of which transfer s | "
          "measured speed-up |")
    print("|---:|---:|---:|---:|---:|")
    t1 = model(1, serial, compute, build, chunks, payload, one["result_bytes"])
    for w in (1, 2, 4, 8, 16, 32, 64):
        tw = model(w, serial, compute, build, chunks, payload,
                   one["result_bytes"])
        transfer = chunks * payload * w / BANDWIDTH_BPS + one["result_bytes"] / BANDWIDTH_BPS
        measured = (f"{one['wall'] / runs[w]['wall']:.2f}"
                    + (" (oversubscribed)" if w > ncores else "")) if w in runs else ""
        print(f"| {w} | {tw:.1f} | {t1 / tw:.2f} | {transfer:.1f} | {measured} |")


if __name__ == "__main__":
    main()
