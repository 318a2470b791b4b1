"""Streamed ARFF input: ``predict`` reads an ARFF file in blocks of lines through
the parser of whole files, and gets the same rows, predictions, warnings and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLE_DATA
from conftest import run_cli as run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_scale import in_memory

from treecert.cli.main import main
from treecert.data.alignment import load_for_schema
from treecert.data.stream import SchemaReader
from treecert.tree.model import read_model

HEADER = """% a comment before the header
@relation 'weather streamed'

@attribute id string
@attribute outlook {sunny, overcast, rainy}
@attribute temperature numeric
% a comment between declarations
@attribute humidity real
@attribute windy {TRUE, FALSE}
@attribute play {yes, no}

@data
"""

_ID = st.sampled_from(["plain", "'a b'", '"x,y"', r"'it\'s'", "'%not a comment'", "?",
                       "'{brace}'", "'\\t tab'"])
_DENSE = st.tuples(
    _ID,
    st.sampled_from(["sunny", "overcast", "rainy", "?", "'rainy'"]),
    st.sampled_from(["85", "64.5", "?", "1e2", "-3"]),
    st.sampled_from(["85", "70", "?"]),
    st.sampled_from(["TRUE", "FALSE", "?"]),
    st.sampled_from(["yes", "no", "?"]),
).map(lambda values: ",".join(values))
_SPARSE = st.lists(
    st.sampled_from([(1, "rainy"), (1, "?"), (2, "70"), (3, "96"), (4, "TRUE"), (5, "no"),
                     (0, "'sp id'"), (3, "?")]),
    max_size=4, unique_by=lambda iv: iv[0],
).map(lambda entries: "{" + ", ".join(f"{i} {v}" for i, v in sorted(entries)) + "}")
_LINE = st.one_of(
    _DENSE,
    _DENSE.map(lambda row: row + " {2}"),  # an instance weight
    _DENSE.map(lambda row: row + " % trailing comment"),
    _SPARSE,
    st.sampled_from(["", "% comment line", "   "]),
)


def _arff(lines: list[str], newline: str) -> str:
    return (HEADER + "\n".join(lines) + "\n").replace("\n", newline)


def _streamed(path, schema, chunk_bytes):
    """The chunks of the streamed reader put back together: (X, y, weights, extra, warnings,
    row offsets)."""
    reader = SchemaReader(path, schema, chunk_bytes=chunk_bytes, id_column="id")
    chunks = list(reader.chunks())
    data = [c.data for c in chunks]
    extra = {k: np.concatenate([d.extra[k] for d in data]) for k in data[0].extra}
    return (np.vstack([d.X for d in data]), np.concatenate([d.y for d in data]),
            np.concatenate([d.weights for d in data]), extra, reader.warnings,
            [c.row_offset for c in chunks])


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_LINE, max_size=25).filter(
           lambda ls: any(ln.strip() and not ln.startswith("%") for ln in ls)),
       chunk=st.integers(1, 300), newline=st.sampled_from(["\n", "\r\n", "\r"]))
def test_streamed_arff_equals_the_whole_file(lines, chunk, newline, weather_model, tmp_path,
                                             capsys):
    data = tmp_path / "w.arff"
    data.write_bytes(_arff(lines, newline).encode("utf-8"))
    schema = read_model(weather_model).schema
    whole = load_for_schema(data, schema, id_column="id")
    X, y, weights, extra, warnings, offsets = _streamed(data, schema, chunk)
    np.testing.assert_array_equal(X, whole.X)  # NaN where missing, in both
    np.testing.assert_array_equal(y, whole.y)
    np.testing.assert_array_equal(weights, whole.weights)
    assert extra.keys() == whole.extra.keys()
    for k in extra:
        assert extra[k].tolist() == whole.extra[k].tolist()
    assert warnings == whole.warnings
    assert offsets == sorted(offsets) and offsets[0] == 0
    # and through the command: byte-identical predictions, same warnings
    code, out, err = run(["predict", weather_model, data, "--id", "id", "--chunk-size", chunk],
                         capsys)
    assert code == 0, err
    assert out == in_memory(weather_model, data, None, "id")


def test_sample_files_stream_in_many_chunks(tmp_path, capsys):
    """Real ARFF files (quoted values, missing values, comments) give the same output in
    small chunks as in one."""
    for name, chunk in (("labor", 97),):
        model = tmp_path / f"{name}.json"
        arff = SAMPLE_DATA / f"{name}.arff"
        assert main(["train", str(arff), "-o", str(model), "-q"]) == 0
        small = run(["predict", model, arff, "--chunk-size", chunk], capsys)
        assert small[0] == 0, small[2]
        assert small[1] == in_memory(model, arff)


@pytest.mark.parametrize(("line", "row", "message"), [
    (30, "sunny,85,85,TRUE,maybe", "value 'maybe' is not declared for nominal attribute"),
    (25, "sunny,hot,85,TRUE,no", "'hot' is not a number"),
    (35, "{1 rainy, 9 x}", "sparse index 9 is out of range"),
    (28, "sunny,85,'unclosed,TRUE,no", "a quoted value is not closed"),
])
def test_an_error_in_a_later_chunk_names_the_same_line(line, row, message, weather_model,
                                                       tmp_path, capsys):
    rows = ["sunny,85,85,TRUE,no"] * 40
    rows[line] = row
    data = tmp_path / "bad.arff"
    data.write_text(HEADER.replace("@attribute id string\n", "") + "\n".join(rows) + "\n")
    whole = run(["predict", weather_model, data, "--chunk-size", "100000"], capsys)
    chunked = run(["predict", weather_model, data, "--chunk-size", "64"], capsys)
    assert whole[0] == chunked[0] == 2
    assert chunked[2] == whole[2]
    first_data_line = HEADER.count("\n")  # the header without its id line, plus 1
    assert f"line {first_data_line + line}:" in chunked[2]
    assert message in chunked[2]


@pytest.mark.parametrize(("text", "message"), [
    ("", "the file is empty."),
    ("@relation r\n@attribute a numeric\n", "the file ends without an '@data' line."),
    (HEADER + "% only a comment\n", "no data rows after '@data'."),
    ("@relation r\n@attribute a numeric\nnonsense\n@data\n1\n", "expected '@attribute'"),
])
def test_header_errors_are_those_of_the_whole_file(text, message, weather_model, tmp_path,
                                                   capsys):
    data = tmp_path / "h.arff"
    data.write_text(text)
    for chunk in ("5", "100000"):
        code, _, err = run(["predict", weather_model, data, "--chunk-size", chunk], capsys)
        assert code == 2
        assert message in err, err


def test_arff_shards_and_row_count(weather_model, tmp_path, capsys):
    data = tmp_path / "w.arff"
    data.write_text(_arff(["sunny,85,85,TRUE,no", "{0 rainy}", "% c", ""] * 10, "\n")
                    .replace("@attribute id string\n", ""))
    reader = SchemaReader(data, read_model(weather_model).schema, chunk_bytes=16)
    assert reader.count_rows() == 20
    chunks = list(reader.chunks((3, 7)))
    assert chunks[0].row_offset == 3
    assert sum(c.data.n_samples for c in chunks) == 4
    whole = run(["predict", weather_model, data], capsys)[1]
    parts = [run(["predict", weather_model, data, "--shard", f"{i}/3", "--chunk-size", "40"],
                 capsys)[1] for i in range(3)]
    # each part's header names its shard in place of 'row'; its other lines are the whole's
    assert whole.split("\n", 1)[0] + "\n" + "".join(p.split("\n", 1)[1] for p in parts) \
        == whole
    assert parts[2].startswith("row (shard 2/3 of 20 rows),")
