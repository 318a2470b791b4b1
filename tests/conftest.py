"""Shared test helpers: building small datasets in memory, the datasets shipped with the
tests (``tests/data``), and running the command line (in-process, or a ``predict`` stopped
by a signal)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from treecert.data.schema import Attribute, Dataset, Schema

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DATA = REPO / "sample_data"
#: The UCI datasets (ARFF + fixed 10-fold ids) the tests use; see tests/data/README.md.
DATASETS = Path(__file__).resolve().parent / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# CI draws the same examples on every run, so a red CI names a regression, not a new draw;
# local runs draw afresh (and TREECERT_ENGINE_EXAMPLES raises the engines' counts).
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


def make_dataset(columns: dict, y, classes=("no", "yes"), weights=None) -> Dataset:
    """A Dataset from {name: list}; string lists become nominal (values sorted by first
    appearance unless given as (values, data)), numbers numeric; None = missing."""
    attrs, cols = [], []
    for name, col in columns.items():
        if isinstance(col, tuple):
            values, data = col
        elif any(isinstance(v, str) for v in col):
            values = tuple(dict.fromkeys(v for v in col if v is not None))
            data = col
        else:
            values, data = None, col
        if values is not None:
            attrs.append(Attribute(name, "nominal", tuple(values)))
            cols.append([np.nan if v is None else values.index(v) for v in data])
        else:
            attrs.append(Attribute(name, "numeric"))
            cols.append([np.nan if v is None else float(v) for v in data])
    y_codes = np.array([classes.index(v) if isinstance(v, str) else v for v in y], dtype=np.int64)
    n = len(y_codes)
    schema = Schema(tuple(attrs), Attribute("class", "nominal", tuple(classes)))
    X = np.array(cols, dtype=float).T.reshape(n, len(attrs))
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    return Dataset(schema, X, y_codes, w, source="<memory>")


WEATHER = {
    "outlook": ["sunny", "sunny", "overcast", "rainy", "rainy", "rainy", "overcast", "sunny",
                "sunny", "rainy", "sunny", "overcast", "overcast", "rainy"],
    "temperature": ["hot", "hot", "hot", "mild", "cool", "cool", "cool", "mild", "cool", "mild",
                    "mild", "mild", "hot", "mild"],
    "humidity": ["high", "high", "high", "high", "normal", "normal", "normal", "high", "normal",
                 "normal", "normal", "high", "normal", "high"],
    "windy": ["FALSE", "TRUE", "FALSE", "FALSE", "FALSE", "TRUE", "TRUE", "FALSE", "FALSE",
              "FALSE", "TRUE", "TRUE", "FALSE", "TRUE"],
}
WEATHER_PLAY = ["no", "no", "yes", "yes", "yes", "no", "yes", "no", "yes", "yes", "yes", "yes",
                "yes", "no"]


@pytest.fixture
def weather() -> Dataset:
    cols = {
        "outlook": (("sunny", "overcast", "rainy"), WEATHER["outlook"]),
        "temperature": (("hot", "mild", "cool"), WEATHER["temperature"]),
        "humidity": (("high", "normal"), WEATHER["humidity"]),
        "windy": (("TRUE", "FALSE"), WEATHER["windy"]),
    }
    return make_dataset(cols, WEATHER_PLAY, classes=("yes", "no"))


@st.composite
def random_datasets(draw, min_rows=4, max_rows=40, max_classes=4, missing=True):
    """Small random datasets with numeric and nominal attributes, missing values and
    2..max_classes classes — for property tests where two computations must agree."""
    n = draw(st.integers(min_rows, max_rows))
    n_classes = draw(st.integers(2, max_classes))
    n_num = draw(st.integers(0, 3))
    n_nom = draw(st.integers(0 if n_num else 1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    attrs, cols = [], []
    p_missing = draw(st.sampled_from([0.0, 0.1, 0.3])) if missing else 0.0
    for j in range(n_num):
        levels = draw(st.integers(2, 8))
        col = rng.integers(0, levels, n).astype(float) / 2.0
        attrs.append(Attribute(f"num{j}", "numeric"))
        cols.append(col)
    for j in range(n_nom):
        nv = draw(st.integers(2, 4))
        attrs.append(Attribute(f"nom{j}", "nominal", tuple(f"v{k}" for k in range(nv))))
        cols.append(rng.integers(0, nv, n).astype(float))
    X = np.column_stack(cols)
    X[rng.random(X.shape) < p_missing] = np.nan
    X[0] = np.column_stack(cols)[0]  # every attribute has a known value (trainable data)
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)  # every class present
    schema = Schema(tuple(attrs), Attribute("class", "nominal",
                                            tuple(f"c{k}" for k in range(n_classes))))
    weights = np.ones(n)
    if draw(st.booleans()):
        weights = rng.choice([0.5, 1.0, 2.0], n)
    return Dataset(schema, X, y.astype(np.int64), weights, source="<random>")


def assert_engines_agree(engine, X, labels, drop=None):
    """The batched engine serves the jobs, and gives what whole trees give, bit for bit,
    counting x in its leaf and not."""
    from treecert.transductive.engine import leaf_estimate

    assert engine._batch_engine() is not None
    # the whole trees once for both readings (what estimates(engine="naive") does per
    # reading): growing them is nearly all of these tests' time
    X = np.asarray(X, dtype=float)
    rows = np.full(len(labels), -1) if drop is None else np.asarray(drop)
    whole = [engine.leaves(X[i], int(labels[i]), engine="naive",
                           drop_row=None if rows[i] < 0 else int(rows[i]))
             for i in range(len(labels))]
    for count_x in (True, False):
        fast = engine.estimates(X, labels, drop, count_x=count_x, engine="fast")
        naive = np.array([leaf_estimate(leaves, engine.n_classes, count_x=count_x)
                          for leaves in whole]).reshape(fast.shape)
        np.testing.assert_array_equal(fast, naive)


@pytest.fixture(scope="module")
def weather_model(tmp_path_factory):
    """A Laplace model of weather.numeric.arff (the streaming tests' model)."""
    from treecert.cli.main import main

    path = tmp_path_factory.mktemp("m") / "weather.json"
    assert main(["train", str(SAMPLE_DATA / "weather.numeric.arff"), "-o", str(path),
                 "--leaf", "laplace", "--min-leaf", "1", "-q"]) == 0
    return path


def weighted_arff(source: Path, out: Path, weight: str) -> Path:
    """``source`` (an ARFF file) written to ``out`` with every data row given the instance
    weight ``weight`` (ARFF's ``{w}`` after a row's values)."""
    lines = source.read_text().splitlines()
    at = lines.index("@data")
    out.write_text("\n".join(lines[:at + 1] + [f"{r},{{{weight}}}" for r in lines[at + 1:]
                                                if r]) + "\n")
    return out


def run_cli(args, capsys):
    """``treecert ARGS`` through the real entry point: (exit code, stdout, stderr)."""
    from treecert.cli.main import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def leftovers(*dirs: Path) -> list[Path]:
    """Temporary output files left in ``dirs``."""
    return [p for d in dirs for p in Path(d).glob(".*.tmp")]


def _default_signals() -> None:
    """In a child: the stopping signals at their defaults. A shell without job control
    starts background commands with SIGINT ignored, and treecert leaves an ignored signal
    ignored; the test would then wait for a signal that never comes."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def stop_predict(model: Path, tmp_path: Path, signum: int, rows: int, chunk: int = 100):
    """Start ``predict`` reading CSV from a pipe, feed it ``rows`` rows, wait until its
    temporary output exists (it then blocks reading the pipe: no race), send ``signum``.
    Returns (exit code, stderr, the files left in the output directory)."""
    out_dir = Path(tmp_path) / "out"
    out_dir.mkdir(exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "treecert", "predict", str(model), "-", "-o",
         str(out_dir / "pred.csv"), "--chunk-size", str(chunk), "-q"],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_default_signals)
    try:
        proc.stdin.write(b"outlook,temperature,humidity,windy,play\n"
                         + b"sunny,hot,high,FALSE,no\n" * rows)
        proc.stdin.flush()
        while not leftovers(out_dir):
            if proc.poll() is not None:
                pytest.fail(f"predict ended early: {proc.stderr.read().decode()}")
            threading.Event().wait(0.02)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err.decode(), sorted(os.listdir(out_dir))
