"""Start-up cost: what the command line imports, not how long it takes.

Every shell call pays for the modules it imports: pandas alone is about 0.65 CPU-s, numpy
0.2, rich 0.1, pydantic (typer's converter of option values) 0.17. ``--help`` must build
the whole app without any of them; the plain option values must be converted without
pydantic, to exactly the values typer's own converter gives; a short ``predict`` and a
leaf method's ``evaluate`` of a small file run without pandas.
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pandas", "scipy", "rich", "pydantic", "joblib", "matplotlib", "sklearn")


def _loaded_after(code: str) -> list[str]:
    """The heavy modules loaded once ``code`` has run in a fresh interpreter."""
    probe = (f"import sys\n{code}\n"
             f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def test_importing_the_app_and_api_loads_no_heavy_module():
    assert _loaded_after("import treecert.cli.main, treecert.api, treecert") == []


@pytest.mark.parametrize("args", [["--help"], ["predict", "--help"], ["evaluate", "--help"]])
def test_help_builds_every_option_without_heavy_modules(args):
    code = ("import contextlib, io\n"
            "from treecert.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    assert main({args!r}) == 0\n"
            "text = out.getvalue()\n"
            "assert 'Usage: treecert' in text, text")
    assert _loaded_after(code) == []


def test_full_help_still_lists_every_option(capsys):
    from conftest import run_cli

    code, out, _ = run_cli(["predict", "--help"], capsys)
    assert code == 0
    for flag in ("--output", "--id", "--method", "--loss", "--shard", "--jobs", "--scheduler",
                 "--chunk-size", "--quiet"):
        assert flag in out, flag


def test_a_command_converts_its_options_without_pydantic(tmp_path):
    """`show` reads a model (numpy) but converts its options without pydantic."""
    model = tmp_path / "w.json"
    code = ("import contextlib, io\n"
            "from treecert.cli.main import main\n"
            f"assert main(['train', {str(ROOT / 'sample_data/weather.nominal.arff')!r}, "
            f"'-o', {str(model)!r}, '-q', '--min-leaf', '1', '--cp', '0.0']) == 0\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['show', {str(model)!r}, '--format', 'text']) == 0")
    loaded = _loaded_after(code)
    assert "pydantic" not in loaded
    assert "rich" not in loaded  # -q: nothing said, so no console made


# ----------------------------------------------------------------- plain option values
_SPELLINGS = st.one_of(
    st.sampled_from(["3", "-3", "+3", "007", " 3", "3 ", "3.0", "1e3", "1E-3", "1_000", "inf",
                     "-inf", "nan", "NaN", "Infinity", ".5", "-.5", "5.", "0x10", "", "abc",
                     "\u0663", "1e999", "9" * 30, "-0", "-0.0", "1e-400"]),
    st.from_regex(r"-?[0-9]{0,20}(\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?", fullmatch=True),
    st.integers(-10**20, 10**20), st.floats(allow_nan=False), st.booleans(),
    st.text(max_size=5),
)


@functools.cache
def _typer_converter(annotation):
    from typer._coercion import build_runtime_param, resolve_type_descriptor
    from typer.models import OptionInfo

    return build_runtime_param(resolve_type_descriptor(annotation, OptionInfo()))


def _typer_value(annotation, value):
    from typer._click.exceptions import BadParameter

    try:
        return _typer_converter(annotation)._coerce_value(value, None, None)
    except BadParameter as exc:
        return f"error: {exc}"


@settings(max_examples=200, deadline=None)
@given(annotation=st.sampled_from([int, float, str, bool]), value=_SPELLINGS)
def test_plain_values_are_what_typer_makes_of_them(annotation, value):
    pytest.importorskip("typer._coercion")
    from treecert.cli.plain_values import _plain

    fast = _plain(annotation, value)
    if fast is NotImplemented:  # typer's own converter decides: nothing to compare
        return
    expected = _typer_value(annotation, value)
    assert type(fast) is type(expected)
    assert fast == expected or (fast != fast and expected != expected)


def test_list_values_are_what_typer_makes_of_them():
    pytest.importorskip("typer._coercion")
    from treecert.cli.plain_values import _plain

    for value in (("a", "b"), ["x"], ()):
        assert _plain(list[str], value) == _typer_value(list[str], value)
    assert _plain(list[str], (1, "a")) is NotImplemented


def test_other_spellings_get_typers_errors(capsys):
    from conftest import run_cli

    code, _, err = run_cli(["predict", "m.json", "d.csv", "--jobs", "two"], capsys)
    assert code == 2
    assert "Input should be a valid integer" in err or "is not a valid integer" in err


# ----------------------------------------------------------------- predict without pandas
@pytest.fixture(scope="module")
def iris_model(tmp_path_factory):
    from treecert.cli.main import main

    path = tmp_path_factory.mktemp("startup") / "iris.json"
    assert main(["train", str(ROOT / "sample_data/iris.arff"), "-o", str(path), "-q"]) == 0
    return path


@pytest.mark.parametrize("method", [[], ["--method", "laplace"], ["--method", "m_estimate"]])
def test_predict_of_a_short_csv_with_a_leaf_method_does_not_import_pandas(iris_model, tmp_path,
                                                                          method):
    """The whole `predict` call (read, align, score, write) runs on numpy alone."""
    five = tmp_path / "five.csv"
    five.write_text("".join((ROOT / "sample_data/iris.csv").read_text().splitlines(True)[:6]))
    out = tmp_path / "out.csv"
    args = ["predict", str(iris_model), str(five), "-o", str(out), "-q", *method]
    code = ("from treecert.cli.main import main\n"
            f"assert main({args!r}) == 0")
    loaded = _loaded_after(code)
    assert "pandas" not in loaded and "scipy" not in loaded, loaded
    assert len(out.read_text().splitlines()) == 6


def test_predict_writes_the_bytes_of_the_pandas_table(iris_model, tmp_path, capsys):
    """The CLI's pandas-free table is, byte for byte, ``api.predict``'s DataFrame as CSV."""
    from conftest import run_cli

    from treecert import api
    from treecert.data.alignment import load_for_schema
    from treecert.tree.model import read_model

    data = tmp_path / "d.csv"
    rows = (ROOT / "sample_data/iris_new.csv").read_text().splitlines(True)
    data.write_text(rows[0] + "".join(rows[1:]).replace("5.1", "?", 1))
    model = read_model(iris_model)
    for method in ("laplace", "frequency"):
        code, out, _ = run_cli(["predict", str(iris_model), str(data), "--id", "id",
                                "--method", method], capsys)
        assert code == 0
        frame = api.predict(model, load_for_schema(data, model.schema, id_column="id"),
                            id_column="id", method=method)
        assert out == frame.to_csv(index=False, lineterminator="\n")


_CELLS = st.one_of(
    st.sampled_from(["", "?", "NA", " NA", "NA ", "x", " x ", "-0", "0", "+1", "007", "1.",
                     ".5", "-.0", "-0.0", "1e5", "1E-3", "1e400", "4.9e-325", "1e999999", "inf",
                     "-Infinity", "nan", "True", "false", "1 ", " 1", "1_0", "0x10", "9" * 20,
                     "18446744073709551615", "-9223372036854775809", "\u0661", '"q"', '"1"',
                     '"a,b"', "1\t", "e5", "+", "."]),
    st.floats(allow_nan=False).map(repr), st.integers(-10**6, 10**6).map(str),
    st.from_regex(r"-?[0-9]{0,20}(\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?", fullmatch=True),
)


def _same_tables(a, b) -> None:
    assert a.names == b.names
    for ca, cb in zip(a.columns, b.columns, strict=True):
        assert ca.values.dtype == cb.values.dtype, ca.attr.name
        if ca.values.dtype == object:
            assert ca.values.tolist() == cb.values.tolist(), ca.attr.name
        else:  # by bits: -0.0 and 0.0 differ in a copied --id column
            assert ca.values.view(np.uint64).tolist() == cb.values.view(np.uint64).tolist()


def _parsed(text, fast):
    from treecert.data.csv_reader import _parse_csv
    from treecert.errors import DataError

    try:
        return _parse_csv(text, "t.csv", lambda names: {"c"}, fast=fast)
    except DataError as exc:
        return str(exc)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.lists(_CELLS, min_size=2, max_size=4), min_size=1, max_size=6),
       same_cell=st.booleans(), blank=st.sampled_from(["", "\n", "  \n"]),
       newline=st.sampled_from(["\n", "\r\n"]))
def test_small_csv_engine_reads_what_pandas_reads(rows, same_cell, blank, newline):
    """Below PANDAS_MIN_CHARS the csv module reads the text (pandas not imported); the table
    must be the one pandas' engine gives, column types and float bits included (or the text
    is handed to pandas), and the errors the same."""
    if same_cell:  # whole columns of one spelling: pandas' int / float / bool columns
        rows = [[r[0]] * len(rows[0]) for r in rows]
    text = newline.join(["a,b,c", *(",".join(r) for r in rows)]) + newline + blank
    small, pandas_engine = _parsed(text, None), _parsed(text, True)
    if isinstance(pandas_engine, str):
        assert small == pandas_engine
        return
    _same_tables(small, pandas_engine)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(st.none(), _CELLS.map(str.strip)), max_size=6))
def test_csv_numbers_reads_as_pandas_to_numeric(values):
    """_csv_numbers without pandas: the reading of ``pandas.to_numeric`` (then Java's
    ``_number`` for what it leaves out) that it replaced."""
    import math

    import pandas as pd

    from treecert.data.csv_reader import _CSV_MISSING, _csv_numbers
    from treecert.data.table import _number

    raw = np.array([None if v in _CSV_MISSING else v for v in values], dtype=object)
    expected = np.array(pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce"),
                        dtype=np.float64)
    known = np.array([v is not None for v in raw], dtype=bool)
    for i in np.flatnonzero(np.isnan(expected) & known):
        try:
            expected[i] = _number(raw[i])
        except ValueError:
            expected = None
            break
        if math.isnan(expected[i]):
            expected = None
            break
    got = _csv_numbers(raw)
    if expected is None:
        assert got is None
    else:
        assert got.view(np.uint64).tolist() == expected.view(np.uint64).tolist()


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 80), data=st.data())
def test_write_columns_equals_pandas_to_csv(n, data):
    """The writer of `predict` without pandas: the bytes of DataFrame.to_csv, with the
    columns a prediction table holds (strings with None, booleans, ints, floats)."""
    import io

    import pandas as pd

    from treecert.data.csv_writer import write_columns

    text = st.one_of(st.none(), st.text(alphabet='ab,"\n\r é', max_size=3))
    few = data.draw(st.lists(st.floats(), min_size=1, max_size=3))
    columns = {
        "row": np.arange(n),
        "id": np.array(data.draw(st.lists(text, min_size=n, max_size=n)), dtype=object),
        "label": np.array(data.draw(st.lists(st.sampled_from(["a", "b c"]), min_size=n,
                                             max_size=n)), dtype=object),
        "p": np.array(data.draw(st.lists(st.sampled_from(few), min_size=n, max_size=n)),
                      dtype=np.float64),
        "flag": np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                         dtype=bool),
    }
    drop = data.draw(st.sets(st.sampled_from(["id", "label", "p", "flag"])))
    columns = {k: v for k, v in columns.items() if k not in drop}
    buf = io.StringIO()
    write_columns(columns, buf, header=data.draw(st.booleans()) or n == 0)
    header = buf.getvalue().startswith("row")
    frame = pd.DataFrame(columns)
    if "id" not in columns or not any(v is not None and "\r" in v for v in columns["id"]):
        assert buf.getvalue() == frame.to_csv(index=False, header=header, lineterminator="\n")
    else:  # pandas leaves a bare \r unquoted (unreadable); write_columns quotes it
        import csv

        def parsed(text):
            return list(csv.reader(io.StringIO(text, newline="")))

        assert parsed(buf.getvalue()) == parsed(frame.to_csv(index=False, header=header,
                                                             lineterminator="\r\n"))


# ----------------------------------------------------------------- evaluate without pandas
@pytest.mark.parametrize("args", [
    ["sample_data/iris.arff", "--method", "frequency", "-o", "{out}"],
    ["sample_data/iris.csv", "--method", "laplace", "--method", "m_estimate", "--repeat", "2"],
    ["sample_data/weather.nominal.arff", "--method", "frequency", "--folds", "3", "-q",
     "-o", "{out}"],
])
def test_evaluate_of_a_small_file_does_not_import_pandas(tmp_path, args):
    """A leaf method's cross-validation of a small file reads, evaluates and writes every
    result file (or the metrics on stdout) on numpy alone: no pandas, scipy or
    matplotlib (rich draws the metrics table on stderr unless -q)."""
    out = tmp_path / "out"
    argv = ["evaluate", *(str(ROOT / a) if a.startswith("sample_data") else
                          a.replace("{out}", str(out)) for a in args)]
    code = ("import contextlib, io\n"
            "from treecert.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), "
            "contextlib.redirect_stderr(io.StringIO()):\n"
            f"    assert main({argv!r}) == 0")
    loaded = _loaded_after(code)
    assert not {"pandas", "scipy", "matplotlib"} & set(loaded), loaded
    if "-o" in args:
        assert (out / "metrics_summary.csv").exists() and (out / "confusion.txt").exists()


def test_the_command_line_runs_numpy_with_one_blas_thread_unless_told():
    """numpy's import starts spinning OpenBLAS threads (0.12 CPU-s of a short `predict`)."""
    code = ("import os, sys\n"
            "sys.argv = ['treecert', '--help']\n"
            "from treecert.cli.main import run\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))")
    for env, expected in (({}, "1"), ({"OPENBLAS_NUM_THREADS": "2"}, "2")):
        environ = {k: v for k, v in os.environ.items()
                   if k != "OPENBLAS_NUM_THREADS"}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=ROOT, check=True, env={**environ, **env}).stdout
        assert out.strip().splitlines()[-1] == expected


# ----------------------------------------------------------------- messages without rich
_TEXT = st.lists(st.sampled_from([*"ab :[]\\\t\r\x07é-=,.()", "smile", "x"]),
                max_size=12).map("".join)


def _rich_print(renderable, width: int = 80, **kwargs) -> str:
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, highlight=False, soft_wrap=True, width=width).print(renderable, **kwargs)
    return buf.getvalue()


@settings(max_examples=300, deadline=None)
@given(message=_TEXT)
def test_say_writes_what_rich_would(message):
    """Off a terminal, ``say`` writes a message itself only where rich prints it as it is."""
    import contextlib
    import io

    from treecert.cli.common import _AS_IS, say, stderr_console

    stderr_console.cache_clear()  # a console on this stderr
    with contextlib.redirect_stderr(io.StringIO()) as buf:
        say(message)
    stderr_console.cache_clear()
    err = buf.getvalue()
    assert err == _rich_print(message, markup=False)
    if _AS_IS.search(message) is None:
        assert err == message + "\n"


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=_TEXT, heads=st.lists(_TEXT, min_size=1, max_size=4),
       values=st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(float("nan"))), max_size=12),
       width=st.integers(10, 120))
def test_metrics_table_off_a_terminal_is_richs(title, heads, values, width, monkeypatch):
    """The metrics table drawn without rich is, whenever it is drawn so, rich's table."""
    from treecert.cli.evaluate import _plain_table, _rich_table

    monkeypatch.setenv("COLUMNS", str(width))
    heads = ["metric", *heads]
    rows = [[f"m{i}", *(f"{v:.4f}" if v == v else "n/a" for v in values[i::3][:len(heads) - 1])]
            for i in range(3)]
    rows = [r + ["n/a"] * (len(heads) - len(r)) for r in rows]
    text = _plain_table(title, heads, rows)
    if text is None:
        return
    assert text == _rich_print(_rich_table(title, heads, rows), width=width)


@pytest.mark.parametrize("width", [30, 43, 44, 80])
def test_a_metrics_table_is_drawn_without_rich_where_it_fits(width, monkeypatch):
    from treecert.cli.evaluate import _plain_table, _rich_table

    monkeypatch.setenv("COLUMNS", str(width))
    heads, rows = ["metric", "frequency", "laplace:prune=ebp"], [["accuracy", "0.9467", "n/a"]]
    text = _plain_table("iris (cv)", heads, rows)
    assert (text is None) == (width < 44)  # the table is 44 characters wide
    assert text is None or text == _rich_print(_rich_table("iris (cv)", heads, rows),
                                               width=width)
