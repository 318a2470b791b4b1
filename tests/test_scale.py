"""Scale-out: streaming predict, --shard + merge, --scheduler (Dask), --resume.

Every test checks bytes: a chunked, sharded, resumed or distributed run must write exactly
what the plain in-memory run writes.
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from conftest import SAMPLE_DATA
from conftest import run_cli as run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treecert import api
from treecert.cli.main import main
from treecert.data.alignment import load_for_schema
from treecert.data.stream import SchemaReader, _safe_cut
from treecert.tree.model import read_model


def in_memory(model_path, data, method=None, id_column=None) -> str:
    """The reference: the whole file loaded at once, scored at once."""
    model = read_model(model_path)
    frame = api.predict(model, load_for_schema(data, model.schema, id_column=id_column),
                        method=method, id_column=id_column)
    buf = io.StringIO()
    frame.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()


def _weather_csv(rows: list[tuple], path) -> None:
    lines = ["id,outlook,temperature,humidity,windy,play"]
    for r in rows:
        lines.append(",".join(r))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


_IDS = st.text(alphabet='ab,"\n é', max_size=4).map(
    lambda s: '"' + s.replace('"', '""') + '"')
_ROW = st.tuples(
    _IDS,
    st.sampled_from(["sunny", "overcast", "rainy", "foggy", "?", ""]),
    st.sampled_from(["85", "64.5", "?", "71", "1e2"]),
    st.sampled_from(["85", "70", "", "96"]),
    st.sampled_from(["TRUE", "FALSE", "?"]),
    st.sampled_from(["yes", "no", "?"]),
)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_ROW, min_size=1, max_size=30), chunk=st.integers(1, 200),
       method=st.sampled_from(["laplace", "naive_bayes", "frequency"]))
def test_streamed_predict_equals_in_memory(rows, chunk, method, weather_model, tmp_path,
                                           capsys):
    data = tmp_path / "w.csv"
    _weather_csv(rows, data)
    code, out, err = run(["predict", weather_model, data, "--id", "id", "--method", method,
                          "--chunk-size", chunk], capsys)
    assert code == 0, err
    assert out == in_memory(weather_model, data, method, "id")
    # the unseen-value warning is summed over the chunks: the same line as the whole file
    whole = load_for_schema(data, read_model(weather_model).schema, id_column="id")
    assert [ln for ln in err.splitlines() if ln.startswith("Warning")] == \
        [f"Warning: {w}" for w in whole.warnings]


@pytest.mark.parametrize("method", ["tpce", "kk"])
def test_streamed_transductive_equals_in_memory(method, weather_model, tmp_path, capsys):
    data = SAMPLE_DATA / "weather.numeric.arff"
    code, out, _ = run(["predict", weather_model, data, "--method", method], capsys)
    assert code == 0
    assert out == in_memory(weather_model, data, method)


def test_shards_concatenate_to_the_whole_output(tmp_path, capsys):
    model = tmp_path / "iris.json"
    assert main(["train", str(SAMPLE_DATA / "iris.arff"), "-o", str(model), "-q"]) == 0
    small = tmp_path / "small.csv"
    small.write_text("".join((SAMPLE_DATA / "iris.csv").open().readlines()[:11]))
    # 13 shards of 10 rows: three are empty (the header only)
    for data, n in ((SAMPLE_DATA / "iris.csv", 1), (SAMPLE_DATA / "iris.csv", 4), (small, 13)):
        whole = in_memory(model, data)
        parts = []
        for i in range(n):
            out = tmp_path / f"part{i}.csv"
            assert main(["predict", str(model), str(data), "--shard",
                         f"{i}/{n}", "--chunk-size", "700", "-o", str(out), "-q"]) == 0
            parts.append(out.read_text())
        # each part's header names its shard in place of 'row'; its other lines are the
        # whole run's (tail -n +2)
        assert all(p.splitlines()[0] == whole.splitlines()[0].replace(
            "row", f"row (shard {i}/{n} of {len(whole.splitlines()) - 1} rows)", 1)
            for i, p in enumerate(parts))
        assert whole.split("\n", 1)[0] + "\n" + "".join(
            p.split("\n", 1)[1] for p in parts) == whole
        merged = tmp_path / "merged.csv"
        assert main(["merge", *map(str, (tmp_path / f"part{i}.csv" for i in range(n))),
                     "-o", str(merged), "-q"]) == 0
        assert merged.read_text() == whole


@pytest.mark.parametrize(("line", "bad", "error"), [
    (30, ",extra", "line 31: expected 5 fields (as in the header), found 6."),
    (20, "hot", "column 'temperature' holds 'hot' (data row 20) but is numeric"),
])
def test_errors_in_a_later_chunk_name_the_file_line(line, bad, error, weather_model, tmp_path,
                                                    capsys):
    good = ",".join(["sunny", "85", "85", "FALSE", "no"])
    lines = ["outlook,temperature,humidity,windy,play"] + [good] * 40
    lines[line] = good + bad if bad.startswith(",") else f"sunny,{bad},85,FALSE,no"
    data = tmp_path / "bad.csv"
    data.write_text("\n".join(lines) + "\n")
    whole = run(["predict", weather_model, data], capsys)
    chunked = run(["predict", weather_model, data, "--chunk-size", "64"], capsys)
    assert whole[0] == chunked[0] == 2
    assert chunked[2] == whole[2]
    assert chunked[2].startswith(f"Error: {data}")
    assert error in chunked[2]


def test_safe_cut_never_splits_a_quoted_newline():
    assert _safe_cut('a,b\n"x\ny",1\n"z\n') == len('a,b\n"x\ny",1\n')
    assert _safe_cut("no newline") == 0
    assert _safe_cut('"open\n') == 0


def test_shard_option_errors(weather_model, capsys):
    for bad in ("3/3", "1", "a/b", "-1/2"):
        code, _, err = run(["predict", weather_model, SAMPLE_DATA / "iris.csv", "--shard",
                            bad], capsys)
        assert code == 2
        assert err.strip() == (f"Error: --shard {bad!r} is not I/N with 0 <= I < N. Write "
                               "e.g. --shard 0/4 for the first of four shards.")


def test_gzip_and_latin1_stream_like_the_whole_file(weather_model, tmp_path, capsys):
    import gzip

    text = "id,outlook,temperature,humidity,windy,play\n" + "".join(
        f"caf\xe9{i},sunny,{60 + i},{70 + i},TRUE,no\n" for i in range(30))
    latin = tmp_path / "l.csv"
    latin.write_bytes(text.encode("latin-1"))
    gz = tmp_path / "g.csv.gz"
    gz.write_bytes(gzip.compress(text.encode("utf-8")))
    for path in (latin, gz):
        code, out, _ = run(["predict", weather_model, path, "--id", "id", "--chunk-size",
                            "50"], capsys)
        assert code == 0
        assert out == in_memory(weather_model, path, None, "id")
        assert "caf\xe9" in out


def test_reader_counts_rows_like_the_loader(weather_model, tmp_path):
    data = tmp_path / "w.csv"
    _weather_csv([('"a\nb"', "sunny", "85", "85", "TRUE", "no")] * 7, data)
    reader = SchemaReader(data, read_model(weather_model).schema, chunk_bytes=10)
    assert reader.count_rows() == 7
    assert [c.row_offset for c in reader.chunks((2, 5))] == [2, 3, 4]


def test_stdin_streams(weather_model, tmp_path):
    data = tmp_path / "w.csv"
    _weather_csv([(f"r{i}", "rainy", str(60 + i), "80", "TRUE", "yes") for i in range(40)],
                 data)
    proc = subprocess.run([sys.executable, "-m", "treecert", "predict", str(weather_model), "-",
                           "--chunk-size", "100", "--id", "id"], input=data.read_bytes(),
                          capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == in_memory(weather_model, data, None, "id")


def test_predictions_do_not_depend_on_jobs(weather_model, capsys):
    data = SAMPLE_DATA / "weather.numeric.arff"
    one = run(["predict", weather_model, data, "--method", "tpce"], capsys)[1]
    two = run(["predict", weather_model, data, "--method", "tpce", "--jobs", "2"], capsys)[1]
    assert one == two
    assert np.isfinite(np.loadtxt(io.StringIO(one), delimiter=",", skiprows=1,
                                  usecols=(3, 4))).all()


# ---------------------------------------------------------------- evaluate / compare units
EVAL = ["evaluate", str(SAMPLE_DATA / "weather.numeric.arff"), "--method", "laplace",
        "--method", "tpce", "--folds", "3", "--no-timing", "-q"]
FILES = ("predictions.csv", "metrics.csv", "metrics.json")


def _same_files(a, b, names=FILES):
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_evaluate_shards_merge_to_the_unsharded_run(tmp_path):
    assert main([*EVAL, "-o", str(tmp_path / "whole")]) == 0
    for i in range(3):
        assert main([*EVAL, "--shard", f"{i}/3", "-o", str(tmp_path / f"s{i}")]) == 0
        assert not (tmp_path / f"s{i}" / "metrics.csv").exists()
    parts = [str(tmp_path / f"s{i}") for i in range(3)]
    assert main(["merge", *parts, "-o", str(tmp_path / "merged"), "-q"]) == 0
    _same_files(tmp_path / "whole", tmp_path / "merged")


def test_merge_names_a_missing_unit(tmp_path, capsys):
    assert main([*EVAL, "--shard", "0/2", "-o", str(tmp_path / "s0")]) == 0
    code, _, err = run(["merge", tmp_path / "s0", "-o", tmp_path / "m"], capsys)
    assert code == 2
    assert err.strip() == (
        "Error: weather.numeric: unit method 'tpce' repeat 0 fold 1 is in none of the "
        "directories. Is a shard unfinished or failed? Run it again (with --resume), then "
        "merge.")


def test_resume_finishes_a_partial_run_identically(tmp_path, capsys):
    assert main([*EVAL, "-o", str(tmp_path / "whole")]) == 0
    partial = tmp_path / "partial"
    assert main([*EVAL, "--shard", "1/2", "-o", str(partial)]) == 0  # half the units, as if
    recorded = sorted(p.name for p in (partial / "units").glob("*.npz"))  # interrupted
    assert 0 < len(recorded) < 6
    assert main([*EVAL, "--resume", "-o", str(partial)]) == 0
    _same_files(tmp_path / "whole", partial)
    # a resumed run with other options is refused, not mixed in
    code, _, err = run([*EVAL[:-2], "--folds", "4", "--resume", "-o", partial], capsys)
    assert code == 2
    assert "holds results of a different run" in err


def test_compare_shards_merge_to_the_unsharded_run(tmp_path, capsys):
    args = ["compare", "--data", SAMPLE_DATA / "weather.nominal.arff", "--data",
            SAMPLE_DATA / "labor.arff", "--method", "laplace", "--method", "frequency",
            "--no-timing", "-q"]
    code, whole_md, _ = run([*args, "-o", tmp_path / "whole"], capsys)
    assert code == 0
    for i in range(2):
        assert run([*args, "--shard", f"{i}/2", "-o", tmp_path / "shared"], capsys)[0] == 0
    code, merged_md, _ = run(["merge", tmp_path / "shared", "-o", tmp_path / "shared", "-q"],
                             capsys)
    assert code == 0
    assert merged_md == whole_md
    _same_files(tmp_path / "whole", tmp_path / "shared",
                ("metrics.csv", "comparison.csv", "comparison.json", "comparison.md"))


# ---------------------------------------------------------------- Dask
def test_scheduler_output_equals_single_process(weather_model, tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    data = SAMPLE_DATA / "weather.numeric.arff"
    local = run(["predict", weather_model, data, "--method", "tpce"], capsys)[1]
    assert main([*EVAL, "-o", str(tmp_path / "local")]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as cluster:
        code, remote, err = run(["predict", weather_model, data, "--method", "tpce",
                                 "--scheduler", cluster.scheduler_address], capsys)
        assert code == 0, err
        assert main([*EVAL, "-o", str(tmp_path / "dask"), "--scheduler",
                     cluster.scheduler_address]) == 0
    assert remote == local
    _same_files(tmp_path / "local", tmp_path / "dask")


def test_scheduler_unreachable_is_one_line(weather_model, capsys, monkeypatch):
    pytest.importorskip("distributed")
    from treecert import parallel

    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", 1.0)
    code, _, err = run(["predict", weather_model, SAMPLE_DATA / "weather.numeric.arff",
                        "--scheduler", "tcp://127.0.0.1:9", "-q"], capsys)
    assert code == 2
    assert err.startswith("Error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert len(err.strip().splitlines()) == 1


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), data=st.data())
def test_write_frame_equals_pandas_to_csv(n, data):
    import pandas as pd

    from treecert.data.csv_writer import write_frame

    floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                       st.sampled_from([0.1, 0.2, 1e-05, 1e16, -0.0]))
    few = data.draw(st.lists(floats, min_size=1, max_size=3))
    text = st.text(alphabet='ab,"\n\r é', max_size=3)
    frame = pd.DataFrame({
        "row": np.arange(n),
        "label": data.draw(st.lists(text, min_size=n, max_size=n)),
        "p": data.draw(st.lists(st.sampled_from(few), min_size=n, max_size=n)),
        "q": data.draw(st.lists(floats, min_size=n, max_size=n)),
        "k": data.draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)),
    })
    if data.draw(st.booleans()):
        frame = frame.drop(columns=["q"])  # few distinct tails: the grouped path
    buf = io.StringIO()
    write_frame(frame, buf, header=True)
    if not any("\r" in v for v in frame["label"]):
        assert buf.getvalue() == frame.to_csv(index=False, lineterminator="\n")
    else:  # pandas leaves a bare \r unquoted (unreadable); write_frame quotes it
        assert parsed(buf.getvalue()) == parsed(frame.to_csv(index=False,
                                                            lineterminator="\r\n"))


def parsed(text: str) -> list[list[str]]:
    """The records of CSV text (quoted line breaks kept)."""
    import csv

    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.fixture(scope="module")
def iris_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "iris.json"
    assert main(["train", str(SAMPLE_DATA / "iris.arff"), "-o", str(path), "-q"]) == 0
    return path


def _fuzz_settings():
    from test_fuzz import FUZZ

    return FUZZ


STREAM_TRIED = [0]


@_fuzz_settings()
@given(text=__import__("test_fuzz")._mutations(__import__("test_fuzz").IRIS_CSV),
       chunk=st.integers(1, 400))
def test_malformed_csv_streamed_never_crashes(text, chunk, iris_model, tmp_path_factory, capsys):
    """Bad CSV through the chunked reader: exit 0, or one line 'Error: ...' and exit 2 and
    no output file; and when it succeeds, the bytes of the whole-file path."""
    STREAM_TRIED[0] += 1
    work = tmp_path_factory.mktemp("fz")
    data, out = work / "in.csv", work / "out.csv"
    data.write_text(text, encoding="utf-8")
    code, _, err = run(["predict", iris_model, data, "--chunk-size", chunk, "-o", out, "-q"],
                       capsys)
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("Error: ") and len(err.strip().splitlines()) == 1
        assert not out.exists()
    else:
        try:
            expected = in_memory(iris_model, data)
        except Exception:  # the whole-file path may name another (earlier) error first
            return
        assert out.read_text() == expected


def test_report_stream_fuzz_count():
    print(f"streamed CSV fuzz inputs tried: {STREAM_TRIED[0]}")


def test_a_venn_product_runs_on_one_blas_thread_and_numpy_keeps_its_own():
    """one_blas_thread limits numpy's BLAS to one thread for the product (its helper threads
    would spin ~0.1 s after each) and gives back the count the
    user's numpy had (two here, set before numpy loads, as a notebook's numpy has one per
    core)."""
    import json
    import os

    code = (
        "import json, numpy\n"
        "from threadpoolctl import threadpool_info\n"
        "from treecert.parallel import one_blas_thread\n"
        "def counts():\n"
        "    return [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']\n"
        "before = counts()\n"
        "with one_blas_thread():\n"
        "    inside = counts()\n"
        "print(json.dumps([before, inside, counts()]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["OPENBLAS_NUM_THREADS"] = "2"
    before, inside, after = json.loads(subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True,
        check=True).stdout)
    if not before or max(before) < 2:
        pytest.skip(f"numpy's BLAS runs one thread here already ({before})")
    assert inside == [1] * len(before)
    assert after == before
