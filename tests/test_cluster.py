"""evaluate on a cluster: costliest units first, one progress line per unit, and a Dask
worker killed mid-run changes nothing in the outputs."""

from __future__ import annotations

import operator
import os
import re
import signal

import pytest
from conftest import SAMPLE_DATA
from conftest import run_cli as run

from treecert.cli.main import main
from treecert.evaluation.experiment import unit_cost

EVAL = ["evaluate", str(SAMPLE_DATA / "weather.numeric.arff"), "--method", "laplace",
        "--method", "tpce", "--folds", "3", "--no-timing"]
FILES = ("predictions.csv", "metrics.csv", "metrics.json")
LINE = re.compile(r"^weather.numeric: unit (\d+)/6 done: (laplace|tpce) repeat 0 fold (\d) "
                  r"\(\d+\.\d\d s\)$")


def test_units_run_costliest_first_one_line_each(tmp_path, capsys):
    assert unit_cost("tpce", 100, 4, 3) > unit_cost("laplace", 100, 4, 3)
    code, _, err = run([*EVAL, "-o", tmp_path / "a"], capsys)
    assert code == 0, err
    lines = [m.groups() for m in map(LINE.match, err.splitlines()) if m]
    assert [int(n) for n, _, _ in lines] == list(range(1, 7))
    # one process: the units finish in the order they start, tpce (costlier) first, and
    # among equals in the fixed order
    assert [(m, int(f)) for _, m, f in lines] == [("tpce", f) for f in range(3)] + \
        [("laplace", f) for f in range(3)]
    code, _, err = run([*EVAL, "-q", "-o", tmp_path / "b"], capsys)
    assert code == 0
    assert err == ""


def _kill_first_unit(marker: str):
    """A Dask worker plugin: the worker process that starts the run's first treecert task
    kills itself (SIGKILL, as the OOM killer or a lost node would), once: the marker file,
    created exclusively, lets every later task (on any worker) run. Defined here so that it
    is sent to the workers by value."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class KillFirstUnit(WorkerPlugin):
        def transition(self, key, start, finish, **kwargs) -> None:
            if finish != "executing" or "_dask_task" not in str(key):
                return
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)

    return KillFirstUnit()


def test_evaluate_survives_a_killed_worker(tmp_path):
    distributed = pytest.importorskip("distributed")
    assert main([*EVAL, "-q", "-o", str(tmp_path / "local")]) == 0
    marker = tmp_path / "killed"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        pids = set(client.run(os.getpid).values())
        client.register_plugin(_kill_first_unit(str(marker)), name="kill-first-unit")
        assert main([*EVAL, "-q", "-o", str(tmp_path / "dask"), "--scheduler",
                     cluster.scheduler_address]) == 0
    assert int(marker.read_text()) in pids  # a worker did die mid-run
    for name in FILES:
        assert (tmp_path / "local" / name).read_bytes() == \
            (tmp_path / "dask" / name).read_bytes(), name


def test_compare_starts_the_costliest_units_across_datasets(tmp_path, capsys):
    """compare schedules every dataset's units together: the larger dataset's units start
    before the small one's, and the results equal two separate evaluate runs."""
    small, large = tmp_path / "weather.numeric.arff", tmp_path / "labor.arff"
    for path in (small, large):  # without their folds files: --folds 3 applies
        path.write_bytes((SAMPLE_DATA / path.name).read_bytes())
    code, _, err = run(["compare", "--data", small, "--data", large, "--method", "laplace",
                        "--folds", "3", "--no-timing", "-o", tmp_path / "cmp"], capsys)
    assert code == 0, err
    order = [line.split(":")[0] for line in err.splitlines() if " done: " in line]
    assert order == ["labor"] * 3 + ["weather.numeric"] * 3  # labor given second, run first
    for path in (small, large):
        code, _, _ = run(["evaluate", path, "--method", "laplace", "--folds", "3",
                          "--no-timing", "-q", "-o", tmp_path / path.stem], capsys)
        assert code == 0
    metrics = (tmp_path / "cmp" / "metrics.csv").read_text().splitlines()
    separate = [(tmp_path / p.stem / "metrics.csv").read_text().splitlines()
                for p in (small, large)]
    assert sorted(metrics[1:]) == sorted(separate[0][1:] + separate[1][1:])


def test_tasks_whose_scattered_function_died_are_submitted_again():
    """The scheduler forgets (cancels) tasks whose input died with every worker that held
    it, rather than rerun them: the scattered function's only copy here, its worker killed
    right after the scatter. The calls are submitted again with the function scattered
    anew, and every result comes back."""
    distributed = pytest.importorskip("distributed")
    from treecert import parallel

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        pids = client.run(os.getpid)
        doomed = sorted(pids)[0]
        scatter = client.scatter
        copies = []

        def scatter_first_to_the_doomed_worker(data, **kwargs):
            if copies:
                copies.append(scatter(data, **kwargs))
                return copies[-1]
            copies.append(scatter(data, workers=[doomed], broadcast=False, hash=False))
            os.kill(pids[doomed], signal.SIGKILL)
            return copies[-1]

        client.scatter = scatter_first_to_the_doomed_worker
        got = sorted(parallel._dask_unordered(client, operator.mul, [(i, 3) for i in range(6)]))
    assert got == [(i, 3 * i) for i in range(6)]
    assert len(copies) == 2  # scattered again, once
