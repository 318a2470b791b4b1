"""What a shell script sees: help on ``-h``, a pipe whose reader stops early, one line a
unit of progress off a terminal."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO, SAMPLE_DATA

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def cli(args, env=ENV, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "treecert", *map(str, args)], cwd=REPO,
                          env=env, capture_output=True, text=True, check=False, **kwargs)


@pytest.mark.parametrize("command", [[], ["train"], ["predict"], ["evaluate"], ["compare"],
                                     ["prune"], ["calibrate"], ["show"], ["merge"]])
def test_dash_h_is_help(command):
    short, long = cli([*command, "-h"]), cli([*command, "--help"])
    assert (short.returncode, short.stderr) == (0, "")
    assert short.stdout == long.stdout
    assert short.stdout.startswith("Usage: treecert")


def test_predict_into_head_exits_141_and_says_nothing(tmp_path):
    """``treecert predict m.json big.csv | head -1``: the first line arrives, then the
    reader goes; predict ends with 141 and an empty standard error, leaving no file. (With
    --explain the output, 150 KB, is more than a pipe holds, so predict is still writing
    when head has gone; the closed pipe above checks 141 without a race.)"""
    model = tmp_path / "m.json"
    assert cli(["train", SAMPLE_DATA / "credit-g.arff", "-o", model, "-q"]).returncode == 0
    script = (f"{sys.executable} -m treecert predict {model} "
              f"{SAMPLE_DATA / 'credit-g.arff'} --explain 2>{tmp_path / 'err'} | head -1; "
              "echo ${PIPESTATUS[0]}")
    res = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    first, code = res.stdout.splitlines()
    assert first.startswith("row,actual,predicted,p_good,p_bad,certainty")
    assert code in ("141", "0")  # 0 when the pipe took all before head went (a loaded machine)
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


def _shell(script: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env=ENV, check=False)


@pytest.fixture(scope="module")
def iris_model(tmp_path_factory):
    model = tmp_path_factory.mktemp("model") / "iris.json"
    assert cli(["train", SAMPLE_DATA / "iris.arff", "-o", model, "-q"]).returncode == 0
    return model


@pytest.mark.parametrize("feed", [
    "cat {arff} | {tc} predict {model} -",                   # ARFF on stdin
    "gzip -c {arff} | {tc} predict {model} -",               # gzip ARFF on stdin
    "gzip -c {csv} | {tc} predict {model} -",                # gzip CSV on stdin
    "{tc} predict {model} <(cat {arff})",                    # a pipe given by name
    "{tc} predict {model} /dev/stdin < {arff}",              # /dev/stdin
    "cp {arff} data.txt && {tc} predict {model} data.txt",   # a name that does not say
    "cp {csv} data.txt && {tc} predict {model} data.txt --input-format csv",
])
def test_inputs_told_by_their_content(feed, iris_model, tmp_path):
    """Standard input, pipes and names without .arff/.csv are read by their content (gzip's
    magic bytes; '@relation' starts ARFF), or as --input-format says; the rows are those of
    the named file."""
    tc = f"{sys.executable} -m treecert"
    expected = cli(["predict", iris_model, SAMPLE_DATA / "iris.arff"]).stdout
    res = _shell(feed.format(tc=tc, model=iris_model, arff=SAMPLE_DATA / "iris.arff",
                             csv=SAMPLE_DATA / "iris.csv"), tmp_path)
    assert (res.returncode, res.stderr) == (0, "")
    assert res.stdout == expected


def test_an_explicit_input_format_wins(iris_model, tmp_path):
    res = _shell(f"cat {SAMPLE_DATA / 'iris.csv'} | {sys.executable} -m treecert predict "
                 f"{iris_model} - --input-format arff", tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("Error: <stdin>, line 1: expected '@relation NAME'")


def test_predict_off_a_terminal_logs_progress_lines(iris_model, tmp_path):
    """A batch job's log (stderr not a terminal) gets a progress line at most every
    TREECERT_PROGRESS_SECONDS (here 0: one per chunk), then the closing line; with the
    default interval a short run says only its closing line."""
    args = ["predict", iris_model, SAMPLE_DATA / "iris.arff", "--method", "tpce",
            "--chunk-size", "1500", "-o", tmp_path / "p.csv"]
    every = cli(args, env={**ENV, "TREECERT_PROGRESS_SECONDS": "0"})
    lines = every.stderr.splitlines()
    assert every.returncode == 0 and len(lines) >= 3, every.stderr
    assert all(line.startswith("predicting: ") and " rows" in line for line in lines[:-1])
    assert lines[-2].startswith("predicting: 150 rows")
    assert lines[-1] == f"Wrote 150 predictions to {tmp_path / 'p.csv'}"
    assert cli(args).stderr.splitlines() == lines[-1:]
