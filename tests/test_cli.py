"""The command line through its real entry point: exit codes and exact error lines."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES, SAMPLE_DATA
from conftest import run_cli as run

from treecert.cli.main import app

DATA = FIXTURES / "data"
MODELS = FIXTURES / "models"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["train", DATA / "empty.csv"],
         "Error: {d}/empty.csv: the file is empty. A CSV file needs a header row and data rows; "
         "an ARFF file a header and @data."),
        (["train", DATA / "ragged.csv"],
         "Error: {d}/ragged.csv, line 3: expected 3 fields (as in the header), found 4. Every "
         "row needs one field per column; quote values that contain commas."),
        (["train", DATA / "syntax_error.arff"],
         "Error: {d}/syntax_error.arff, line 10: value 'foggy' is not declared for nominal "
         "attribute 'outlook'. Declared values: sunny, overcast, rainy. Add it to the "
         "@attribute line or correct the value."),
        (["train", DATA / "single_class.csv"],
         "Error: only one class ('yes') in {d}/single_class.csv: a tree needs at least two "
         "classes to tell apart. Check that 'play' is the class column."),
        (["train", DATA / "no_class.csv", "--class", "nope"],
         "Error: {d}/no_class.csv: class column 'nope' not found; the columns are outlook, "
         "temperature, humidity. Names are case-sensitive; by default the last column is the "
         "class."),
        (["train", DATA / "does_not_exist.csv"],
         "Error: {d}/does_not_exist.csv: no such file. Check the path."),
    ],
)
def test_training_errors_are_one_line_with_exit_2(args, line, capsys, tmp_path):
    code, _, err = run([*args, "-o", tmp_path / "m.json"], capsys)
    assert code == 2
    assert err.strip() == line.format(d=DATA)
    assert not (tmp_path / "m.json").exists()


def test_numeric_class_error(capsys, tmp_path):
    code, _, err = run(["train", DATA / "numeric_class.arff", "-o", tmp_path / "m.json"], capsys)
    assert code == 2
    assert err.startswith(f"Error: {DATA}/numeric_class.arff: class attribute 'performance' is "
                          "numeric")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("model", "line"),
    [
        ("not_json.json", "not a treecert model: invalid JSON at line 1 (Expecting value)."),
        ("truncated.json", "not a treecert model: invalid JSON at line 2 (Expecting value)."),
        ("not_a_model.json", 'not a treecert model (no "format": "treecert-model" key). Pass a '
                             "file written by 'treecert train'."),
        ("newer_version.json", "model format version 99 is newer than this treecert (0.1.0) "
                               "reads (up to version 2). Upgrade treecert."),
        ("missing.json", "no such model file."),
    ],
)
def test_model_file_errors(model, line, capsys):
    code, out, err = run(["predict", MODELS / model, SAMPLE_DATA / "weather.nominal.arff"],
                         capsys)
    assert code == 2
    assert err.strip() == f"Error: {MODELS / model}: {line}"
    assert out == ""


def test_schema_mismatch_errors(capsys, tmp_path):
    model = tmp_path / "wt.json"
    assert run(["train", DATA / "weather_train.csv", "-o", model, "-q"], capsys)[0] == 0
    code, _, err = run(["predict", model, DATA / "test_missing_column.csv"], capsys)
    assert code == 2
    assert err.strip() == (f"Error: {DATA}/test_missing_column.csv: column 'humidity' is "
                           "missing; the model was trained on outlook, temperature, humidity, "
                           "windy.")
    code, _, err = run(["predict", model, DATA / "test_kind_changed.csv"], capsys)
    assert code == 2
    assert "column 'temperature' holds 'hot' (data row 2) but is numeric in the model" in err
    code, _, err = run(["predict", model, DATA / "test_unknown_class.csv"], capsys)
    assert code == 2
    assert "class label 'maybe' in data row 2 is not one the model knows" in err


def test_usage_errors_exit_2(capsys):
    assert run(["train"], capsys)[0] == 2
    from treecert.methods import METHODS

    assert run(["evaluate", SAMPLE_DATA / "iris.arff", "--method", "nope"], capsys)[2].strip() \
        == f"Error: unknown method 'nope'. Choose one of: {', '.join(sorted(METHODS))}."
    assert run([], capsys)[0] == 2


def test_never_writes_over_an_input(capsys):
    before = (SAMPLE_DATA / "iris.arff").read_bytes()
    code, _, err = run(["train", SAMPLE_DATA / "iris.arff", "-o", SAMPLE_DATA / "iris.arff"],
                       capsys)
    assert code == 2
    assert "refusing to overwrite an input file" in err
    assert (SAMPLE_DATA / "iris.arff").read_bytes() == before


def test_train_predict_show_round_trip(capsys, tmp_path):
    model = tmp_path / "iris.json"
    assert run(["train", SAMPLE_DATA / "iris.arff", "-o", model, "--leaf", "laplace"],
               capsys)[0] == 0
    code, out, _ = run(["predict", model, SAMPLE_DATA / "iris.csv"], capsys)
    assert code == 0
    frame = pd.read_csv(pd.io.common.StringIO(out))
    assert list(frame.columns[:3]) == ["row", "actual", "predicted"]
    p = frame[[c for c in frame.columns if c.startswith("p_")]].to_numpy()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert (frame["certainty"] == p.max(axis=1)).all()
    code, out, _ = run(["predict", model, SAMPLE_DATA / "iris_new.csv", "--id", "id"], capsys)
    assert code == 0 and out.splitlines()[0].startswith("row,id,predicted,p_Iris-setosa")
    code, out, _ = run(["show", model, "--format", "json"], capsys)
    summary = json.loads(out)
    assert {"nodes", "leaves", "depth", "params"} <= set(summary)
    assert run(["show", model], capsys)[1].startswith("petallength <= 2.45: Iris-setosa (50.0)")
    assert run(["show", model, "--format", "dot"], capsys)[1].startswith("digraph")


def test_predict_reads_csv_from_stdin(tmp_path):
    model = tmp_path / "iris.json"
    subprocess.run([sys.executable, "-m", "treecert", "train", str(SAMPLE_DATA / "iris.arff"),
                    "-o", str(model), "-q"], check=True)
    res = subprocess.run([sys.executable, "-m", "treecert", "predict", str(model), "-"],
                         input=(SAMPLE_DATA / "iris.csv").read_text(), capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.splitlines()) == 151


def test_real_entry_point_error_and_no_traceback(tmp_path):
    res = subprocess.run([sys.executable, "-m", "treecert", "train", str(DATA / "empty.csv"),
                          "-o", str(tmp_path / "m.json")], capture_output=True, text=True)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1


def test_golden_v1_model_keeps_loading(capsys):
    code, out, _ = run(["predict", MODELS / "golden_v1.json", SAMPLE_DATA /
                        "weather.nominal.arff"], capsys)
    assert code == 0
    assert out.splitlines()[:3] == [
        "row,actual,predicted,p_yes,p_no,certainty",
        "0,no,no,0.2,0.8,0.8",
        "1,no,no,0.2,0.8,0.8",
    ]


def test_every_command_has_help_with_an_example(capsys):
    import typer.main

    command = typer.main.get_command(app)
    for name in command.commands:
        code, out, _ = run([name, "--help"], capsys)
        assert code == 0
        assert "Example:" in out, name


def test_readme_mentions_every_command():
    import typer.main

    readme = (SAMPLE_DATA.parent / "README.md").read_text()
    for name in typer.main.get_command(app).commands:
        assert f"treecert {name}" in readme, name


def test_the_malloc_thresholds_go_to_glibc_and_nowhere_else(monkeypatch):
    """parallel.set_malloc_thresholds hands both thresholds to glibc's mallopt; off Linux,
    or where no glibc (or no mallopt) is found, it changes nothing."""
    import ctypes

    from treecert import parallel

    calls = []

    class FakeLibc:
        def mallopt(self, param, value):
            calls.append((param, value))
            return 1

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLibc())
    assert parallel.set_malloc_thresholds(1 << 30, 1 << 30)
    assert calls == [(-3, 1 << 30), (-1, 1 << 30)]  # M_MMAP_THRESHOLD, M_TRIM_THRESHOLD

    def no_libc(name):
        raise OSError("no libc")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert not parallel.set_malloc_thresholds(1 << 30, 1 << 30)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: object())  # a libc without mallopt
    assert not parallel.set_malloc_thresholds(1 << 30, 1 << 30)
    monkeypatch.setattr(sys, "platform", "darwin")
    calls.clear()
    assert not parallel.set_malloc_thresholds(1 << 30, 1 << 30) and not calls


def test_the_entry_point_keeps_freed_memory_for_reuse(monkeypatch, capsys):
    """Every command's process asks glibc to serve allocations below 1 GiB from the heap and
    keep what is freed (the allocator's figures are in BENCHMARKS.md)."""
    from treecert.cli import main as cli_main

    called = []
    monkeypatch.setattr(cli_main, "set_malloc_thresholds",
                        lambda mmap_bytes, trim_bytes: called.append((mmap_bytes, trim_bytes)))
    monkeypatch.setattr(sys, "argv", ["treecert", "--help"])
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    with pytest.raises(SystemExit):
        cli_main.run()
    assert called == [(1 << 30, 1 << 30)]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_glibc_accepts_the_command_lines_thresholds():
    """The real mallopt takes both (in a process of its own: they last for the process)."""
    out = subprocess.run([sys.executable, "-c", "from treecert.cli.main import HOLD_BYTES as h; "
                          "from treecert.parallel import set_malloc_thresholds as s; "
                          "print(s(h, h))"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_that_cuts_a_close_short_still_stops_the_run(monkeypatch, capsys, signame):
    """The signal handler raises anywhere, also inside a file's close: the cleanup that
    unwinds may then fail on the released descriptor. That OSError ("Bad file descriptor")
    is the signal's stop — temporaries removed, 128 + signum, its one line — not exit 2."""
    import errno
    import signal

    import typer

    import treecert.cli.main as cli_main
    import treecert.data.fileio as fileio

    signum = getattr(signal, signame)
    real = typer.main.get_command

    def cut_short(*args, **kwargs):
        try:
            raise cli_main.Interrupted(signum)
        finally:
            raise OSError(errno.EBADF, "Bad file descriptor")

    def command(app_):
        got = real(app_)
        got.main = cut_short
        return got

    removed = []
    monkeypatch.setattr(typer.main, "get_command", command)
    monkeypatch.setattr(fileio, "remove_temporaries", lambda: removed.append(True))
    assert cli_main.main(["show", "x"]) == 128 + signum
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [cli_main._STOPPING[signame]] and removed == [True]
