"""``api.predict_stream``: a Python caller scores a file in chunks and gets what
``treecert predict`` writes, to the byte — the command line runs the same loop and only
writes its chunks."""

from __future__ import annotations

import io

import pytest
from conftest import DATASETS, SAMPLE_DATA
from conftest import run_cli as run

from treecert import api
from treecert.data.csv_writer import write_columns
from treecert.tree.model import read_model


def _streamed_csv(stream) -> tuple[str, int]:
    """The chunks of ``stream`` written as one CSV (the header once), and how many."""
    out, n = io.StringIO(), 0
    for chunk in stream:
        write_columns(chunk.columns, out, header=n == 0)
        n += 1
    return out.getvalue(), n


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Models trained through the command line: iris (CSV input) and credit-g (ARFF input
    with nominal columns)."""
    from treecert.cli.main import main

    root = tmp_path_factory.mktemp("models")
    for name, data in (("iris", SAMPLE_DATA / "iris.arff"),
                       ("credit-g", DATASETS / "credit-g.arff")):
        assert main(["train", str(data), "-o", str(root / f"{name}.json"), "-q"]) == 0
    return root


@pytest.mark.parametrize("name, data, args", [
    ("iris", SAMPLE_DATA / "iris.csv", []),
    ("iris", SAMPLE_DATA / "iris_new.csv", ["--id", "id"]),
    ("credit-g", DATASETS / "credit-g.arff", ["--method", "laplace"]),
    ("credit-g", DATASETS / "credit-g.arff", ["--method", "tpce", "--explain"]),
])
def test_python_caller_streams_the_bytes_predict_writes(models, tmp_path, capsys, name, data,
                                                         args):
    model_path = models / f"{name}.json"
    chunk_bytes = 2000  # several chunks from every file
    if "tpce" in args:  # a slice of credit-g keeps the transductive case quick
        lines = data.read_text().splitlines(keepends=True)
        start = next(i for i, line in enumerate(lines) if line.lower().startswith("@data"))
        data = tmp_path / "credit-g-head.arff"
        data.write_text("".join(lines[:start + 61]))
    out = tmp_path / "cli.csv"
    code, _, err = run(["predict", model_path, data, "-o", out, "--chunk-size", chunk_bytes,
                        "-q", *args], capsys)
    assert code == 0, err
    opts = dict(zip(args[::2], args[1::2], strict=False))
    stream = api.predict_stream(read_model(model_path), data, chunk_bytes=chunk_bytes,
                                id_column=opts.get("--id"), method=opts.get("--method"),
                                explain="--explain" in args)
    text, n_chunks = _streamed_csv(stream)
    assert n_chunks > 1 or "iris_new" in str(data)
    assert text.encode() == out.read_bytes()
    assert stream.warnings == []


def test_shards_stream_their_rows_and_an_empty_shard_its_header(models, tmp_path, capsys):
    model_path = models / "iris.json"
    model, data = read_model(model_path), SAMPLE_DATA / "iris_new.csv"  # 6 rows
    for i, n in ((0, 4), (3, 4), (0, 9)):  # shard 0 of 9 holds no row
        out = tmp_path / f"shard{i}.csv"
        assert run(["predict", model_path, data, "-o", out, "--shard", f"{i}/{n}", "-q"],
                   capsys)[0] == 0
        stream = api.predict_stream(model, data, shard=(i, n))
        assert stream.total == 6 * (i + 1) // n - 6 * i // n
        text, n_chunks = _streamed_csv(stream)
        tagged = text.replace("row,", f"row (shard {i}/{n} of 6 rows),", 1)  # the CLI's tag
        assert n_chunks >= 1 and tagged.encode() == out.read_bytes()
        if stream.total == 0:
            assert text.count("\n") == 1 and text.startswith("row,")


def test_warnings_and_progress_hook(tmp_path, capsys):
    """The unseen-value warning of the whole file arrives once the chunks are read, as the
    command line prints it; the progress hook is entered once per chunk, around its
    scoring."""
    from contextlib import contextmanager

    model_path = tmp_path / "weather.json"
    assert run(["train", SAMPLE_DATA / "weather.nominal.arff", "-o", model_path, "-q"],
               capsys)[0] == 0
    data = tmp_path / "odd.csv"
    data.write_text("outlook,temperature,humidity,windy,play\n"
                    + "foggy,hot,high,FALSE,no\nsunny,mild,high,TRUE,yes\n" * 20)
    stream = api.predict_stream(read_model(model_path), data, chunk_bytes=300)
    seen = []

    @contextmanager
    def hook(chunk):
        seen.append(chunk.data.n_samples)
        yield

    chunks = list(stream.chunks(progress=hook))
    assert seen == [c.data.n_samples for c in chunks] and len(seen) > 1 and sum(seen) == 40
    code, _, err = run(["predict", model_path, data, "-o", tmp_path / "p.csv"], capsys)
    assert code == 0
    assert stream.warnings and all(f"Warning: {w}" in err for w in stream.warnings)
