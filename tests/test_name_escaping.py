"""Names through every output format parse back, whatever they hold.

Attribute names, nominal values and class labels with quotes, commas, spaces, braces, ``%``,
backslashes, line breaks, unicode and lone surrogates are written into an ARFF file, trained
on, and sent through every output: ``show`` (text, DOT, JSON), ``predict --format csv|arff``
and ``evaluate -o DIR``. Each output is valid UTF-8 and parses back: CSV with the csv
module (one field per header name on every row), ARFF with liac-arff and treecert's reader
(every name declared once), JSON with the json module, and DOT with a small check of its
quoting rules (every statement one line, every string closed; Graphviz's ``dot`` too
where it is installed).
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import arff
import numpy as np
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treecert.cli.main import main
from treecert.data.arff_writer import unique_names, write_arff
from treecert.data.fileio import encodable
from treecert.data.loading import load_dataset
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.tree.model import read_model

_CHARS = st.one_of(
    st.sampled_from([*list("\"',{}% \t\\?@\n\r;|=<>!"), "\x00"]),
    # lone surrogates as Python's surrogateescape decodes undecodable bytes (a pair of
    # surrogates would not survive JSON, which reads it as one character)
    st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF),
    st.characters(blacklist_categories=("Cs",)),
)
_NAME = st.one_of(st.text(_CHARS, min_size=1, max_size=6),
                  st.sampled_from(["certainty", "classification", "distribution_a", "row",
                                   "actual", "p_a", "a"]))


def _distinct(n: int):
    return st.lists(_NAME, min_size=n, max_size=n, unique=True)


# One DOT statement per line: the header, the node default, a node, an edge, the end.
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_DOT_LINE = re.compile(
    rf"digraph treecert \{{|  node \[shape=box, fontname=Helvetica\];|\}}|"
    rf"  n\d+ \[label={_STRING}(?:, style=rounded)?\];|  n\d+ -> n\d+ \[label={_STRING}\];")


def check_dot(text: str) -> None:
    for line in text.removesuffix("\n").split("\n"):  # Graphviz ends lines at \n only
        assert _DOT_LINE.fullmatch(line), line
    if shutil.which("dot"):
        done = subprocess.run(["dot", "-Tsvg"], input=text.encode(), capture_output=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr.decode(errors="replace")


def check_csv(text: str, names: list[str] | None = None) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert all(len(r) == len(rows[0]) for r in rows)
    if names is not None:
        assert rows[0] == names
    return rows


def _dataset(names: list[str], values: list[str], labels: list[str]) -> Dataset:
    """12 rows: a numeric attribute, a nominal one that decides the class, the class."""
    k = len(labels)
    nominal = np.arange(12) % len(values)
    y = nominal % k
    X = np.column_stack([np.arange(12, dtype=float) / 2, nominal.astype(float)])
    schema = Schema((Attribute(names[0], "numeric"), Attribute(names[1], "nominal",
                                                               tuple(values))),
                    Attribute(names[2], "nominal", tuple(labels)), relation=names[0])
    return Dataset(schema, X, y.astype(np.int64), np.ones(12), source="<names>")


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # strict: every output is valid UTF-8


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(names=_distinct(3), values=_distinct(3), labels=_distinct(2))
def test_names_parse_back_from_every_output(names, values, labels, capsys):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        data = base / "data.arff"
        write_arff(_dataset(names, values, labels), data)
        model = base / "m.json"
        assert main(["train", str(data), "--min-leaf", "1", "-o", str(model), "-q"]) == 0
        schema = read_model(model).schema
        assert [a.name for a in schema.attributes] == names[:2]
        assert schema.class_attribute.name == names[2] and schema.classes == tuple(labels)
        assert schema.attributes[1].values == tuple(values)

        for fmt, check in (("text", None), ("dot", check_dot), ("json", json.loads)):
            out = base / f"show.{fmt}"
            assert main(["show", str(model), "--format", fmt, "-o", str(out)]) == 0
            text = _read(out)
            if check is not None:
                check(text)

        out = base / "p.csv"
        assert main(["predict", str(model), str(data), "-o", str(out), "-q"]) == 0
        rows = check_csv(_read(out), ["row", "actual", "predicted",
                                      *(f"p_{encodable(c)}" for c in labels), "certainty"])
        assert len(rows) == 13
        assert [r[2] for r in rows[1:]] == [encodable(labels[i % 3 % 2]) for i in range(12)]

        out = base / "p.arff"
        code, _, err = run_cli(["predict", model, data, "--format", "arff", "-o", out],
                               capsys)
        assert code == 0, err
        text = _read(out)
        doc = arff.loads(text)
        declared = [name for name, _ in doc["attributes"]]
        assert len(declared) == len(set(declared)) == 4 + len(labels) + 1
        assert len(doc["data"]) == 12
        # treecert reads it back, the names exactly
        back = load_dataset(out, class_name="classification")
        assert back.schema.classes == tuple(labels)
        read = [a.name for a in back.schema.attributes]
        assert read[3:] == [*(f"distribution_{c}" for c in labels), "certainty"]
        assert read[:3] == unique_names(names, [*read[3:], "classification"])

        out = base / "ev"
        assert main(["evaluate", str(data), "--method", "laplace", "--folds", "2",
                     "--no-timing", "-o", str(out), "-q"]) == 0
        for name in ("predictions.csv", "metrics.csv", "metrics_folds.csv"):
            check_csv(_read(out / name))
        json.loads(_read(out / "metrics.json"))


def test_a_data_attribute_named_like_a_prediction_column_is_renamed(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("certainty,classification,distribution_a,distribution_a_1,cls\n"
                    + "".join(f"{i},{'xy'[i % 2]},{i % 3},{i % 5},{'ab'[i % 2]}\n"
                              for i in range(12)))
    model = tmp_path / "m.json"
    assert run_cli(["train", data, "--min-leaf", "1", "-o", model, "-q"], capsys)[0] == 0
    out = tmp_path / "p.arff"
    code, _, err = run_cli(["predict", model, data, "--format", "arff", "-o", out], capsys)
    assert code == 0
    assert err.splitlines()[0] == (
        "Warning: 'certainty' as 'certainty_1', 'classification' as 'classification_1', "
        "'distribution_a' as 'distribution_a_2': renamed in the ARFF output, whose prediction "
        "columns have those names.")
    declared = [name for name, _ in arff.loads(out.read_text())["attributes"]]
    assert declared == ["certainty_1", "classification_1", "distribution_a_2",
                        "distribution_a_1", "cls", "classification", "distribution_a",
                        "distribution_b", "certainty"]
    back = load_dataset(out, class_name="classification")
    assert back.n_samples == 12 and back.schema.classes == ("a", "b")


def test_lone_surrogates_from_a_model_file_are_escaped_in_every_output(tmp_path, capsys):
    """A model file may hold a lone surrogate (JSON's \\udcff); no output may fail to encode
    it or write it as a byte that is not UTF-8."""
    data = tmp_path / "d.arff"
    write_arff(_dataset(["n\udcff", "v\udcfe", "c\udcfd"], ["x\udcff", "y", "z"],
                        ["a\udcff", "b"]), data)
    model = tmp_path / "m.json"
    assert run_cli(["train", data, "--min-leaf", "1", "-o", model, "-q"], capsys)[0] == 0
    assert "\\udcff" in model.read_text()
    for args, name in ((["show", model, "--format", "text"], "s.txt"),
                       (["show", model, "--format", "dot"], "s.dot"),
                       (["predict", model, data], "p.csv"),
                       (["predict", model, data, "--format", "arff"], "p.arff")):
        out = tmp_path / name
        code, _, err = run_cli([*args, "-o", out], capsys)
        assert code == 0, err
        text = _read(out)
        assert "\\udcff" in text
    check_dot(_read(tmp_path / "s.dot"))
    assert check_csv(_read(tmp_path / "p.csv"))[0][3] == "p_a\\udcff"
    back = load_dataset(tmp_path / "p.arff", class_name="classification")
    assert back.schema.classes == ("a\udcff", "b")


def test_a_carriage_return_in_a_label_is_quoted_in_csv_outputs(tmp_path, capsys):
    data = tmp_path / "d.arff"
    write_arff(_dataset(["n", "v", "c"], ["x", "y", "z"], ["a\rb", "c\r\nd"]), data)
    model = tmp_path / "m.json"
    assert run_cli(["train", data, "--min-leaf", "1", "-o", model, "-q"], capsys)[0] == 0
    out = run_cli(["predict", model, data], capsys)[1]
    rows = check_csv(out)
    assert rows[0][3:5] == ["p_a\rb", "p_c\r\nd"] and len(rows) == 13
    ev = tmp_path / "ev"
    assert run_cli(["evaluate", data, "--method", "laplace", "--folds", "2", "-o", ev, "-q"],
                   capsys)[0] == 0
    rows = check_csv(_read(ev / "predictions.csv"))
    assert {r[rows[0].index("actual")] for r in rows[1:]} == {"a\rb", "c\r\nd"}
