"""What a shell script sees: help on ``-h``, a pipe whose reader stops early, one line a
unit of progress off a terminal."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO, SAMPLE_DATA

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def cli(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "treecert", *map(str, args)], cwd=REPO,
                          env=ENV, capture_output=True, text=True, check=False, **kwargs)


@pytest.mark.parametrize("command", [[], ["train"], ["predict"], ["evaluate"], ["compare"],
                                     ["prune"], ["calibrate"], ["show"], ["merge"]])
def test_dash_h_is_help(command):
    short, long = cli([*command, "-h"]), cli([*command, "--help"])
    assert (short.returncode, short.stderr) == (0, "")
    assert short.stdout == long.stdout
    assert short.stdout.startswith("Usage: treecert")


def test_predict_into_head_exits_141_and_says_nothing(tmp_path):
    """``treecert predict m.json big.csv | head -1``: the first line arrives, then the
    reader goes; predict ends with 141 and an empty standard error, leaving no file."""
    model = tmp_path / "m.json"
    assert cli(["train", SAMPLE_DATA / "credit-g.arff", "-o", model, "-q"]).returncode == 0
    script = (f"{sys.executable} -m treecert predict {model} "
              f"{SAMPLE_DATA / 'credit-g.arff'} 2>{tmp_path / 'err'} | head -1; "
              "echo ${PIPESTATUS[0]}")
    res = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    first, code = res.stdout.splitlines()
    assert first.startswith("row,actual,predicted,p_good,p_bad,certainty")
    assert code == "141"
    assert (tmp_path / "err").read_text() == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["err", "m.json"]


def test_compare_keeps_both_files_of_one_stem(tmp_path):
    """``iris.arff`` and ``iris.csv`` in one --data-dir are two datasets in the tables, each
    named by its file, never one silently replacing the other."""
    import shutil

    for name in ("iris.arff", "iris.csv", "iris.folds.csv"):
        shutil.copy(SAMPLE_DATA / name, tmp_path / name)
    res = cli(["compare", "--data-dir", tmp_path, "--method", "frequency", "--method",
               "laplace", "--no-timing", "-q"])
    assert res.returncode == 0, res.stderr
    rows = [line.split(" | ")[0] for line in res.stdout.splitlines()
            if line.startswith("| iris")]
    assert sorted(set(rows)) == ["| iris.arff", "| iris.csv"]
