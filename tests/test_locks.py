"""Locks on -o directories, with real concurrent processes.

A whole evaluate run and the shards of a run never share a directory unknowingly: while one
holds it, the other is refused (exit 2, one line). The lock file ``.treecert.lock`` is
removed when the run ends (success, error, SIGTERM), and of two runs started together into
one directory neither exits 1: one writes, the other is refused with exit 2.

A run's lock is seen in ``/proc/locks`` (the test itself takes no lock, which would race
with the runs), and a run is frozen with SIGSTOP while it holds its directory, so the
second run meets it there whatever the machine's load.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_DATA

pytestmark = pytest.mark.skipif(not Path("/proc/locks").exists() or sys.platform != "linux",
                                reason="needs Linux's /proc/locks")

DATA = str(SAMPLE_DATA / "credit-g.arff")
SLOW = ["evaluate", DATA, "--method", "tpce", "--folds", "10", "--no-timing", "-q"]
FAST = ["evaluate", str(SAMPLE_DATA / "weather.nominal.arff"), "--method", "laplace",
        "--folds", "2", "--no-timing", "-q"]
BUSY = ("Error: {out}: in use by another treecert run. Wait until that run has finished, or "
        "choose another -o directory (only the --shard parts of one run may share one).\n")


def start(args, cwd) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "treecert", *map(str, args)], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(args, cwd) -> tuple[int, str]:
    proc = start(args, cwd)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err.decode()


def holds_lock(pid: int, directory: Path) -> bool:
    try:
        ino = os.stat(directory / ".treecert.lock").st_ino
    except FileNotFoundError:
        return False
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields:  # a waiter: not held
            continue
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[4] == str(pid) and \
                fields[5].rsplit(":", 1)[-1] == str(ino):
            return True
    return False


def wait_for_lock(proc: subprocess.Popen, directory: Path) -> None:
    deadline = time.monotonic() + 120
    while not holds_lock(proc.pid, directory):
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, "the run never took its lock"
        time.sleep(0.02)


@pytest.mark.parametrize(("first", "second"), [([], ["--shard", "0/2"]),
                                               (["--shard", "0/2"], [])])
def test_a_whole_run_and_a_shard_never_share_a_directory(first, second, tmp_path):
    out = tmp_path / "out"
    proc = start([*SLOW, *first, "-o", out], tmp_path)
    try:
        wait_for_lock(proc, out)
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            code, err = finish([*SLOW, *second, "-o", out], tmp_path)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        assert (code, err) == (2, BUSY.format(out=out))
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not (out / ".treecert.lock").exists()


def test_the_lock_file_is_removed_after_an_error_and_a_signal(tmp_path):
    out = tmp_path / "out"
    code, _ = finish([*FAST, "-o", out], tmp_path)
    assert code == 0 and not (out / ".treecert.lock").exists()
    code, err = finish([*FAST, "--folds", "99", "-o", out], tmp_path)  # refused after reading
    assert code == 2 and not (out / ".treecert.lock").exists()
    proc = start([*SLOW, "-o", tmp_path / "slow"], tmp_path)
    wait_for_lock(proc, tmp_path / "slow")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err.decode()) == (128 + signal.SIGTERM, "Terminated.\n")
    assert not (tmp_path / "slow" / ".treecert.lock").exists()


def test_concurrent_writers_exit_0_or_2(tmp_path):
    """Runs started together into one directory, again and again: every one writes (0) or is
    refused with one line (2); none exits 1, and no lock file is left."""
    codes = []
    for trial in range(4):
        out = tmp_path / f"out{trial}"
        args = [[*FAST, "-o", out], [*FAST, "-o", out], [*FAST, "--shard", "0/2", "-o", out]]
        procs = [start(a, tmp_path) for a in args]
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            err = err.decode()
            codes.append(proc.returncode)
            assert proc.returncode in (0, 2), err
            if proc.returncode == 2:
                assert err == BUSY.format(out=out)
        assert not (out / ".treecert.lock").exists()
    assert 0 in codes
