"""evaluate's tables without pandas are pandas' tables: the same columns, bytes and records.

:mod:`treecert.evaluation.results` keeps an evaluation's tables as rows and numpy columns
and writes them without importing pandas; the DataFrames Python callers get are made from
the same rows by pandas. Every file ``evaluate`` writes must be the bytes of those frames,
whatever the methods (bounds, extra columns, methods of different columns in one run), the
protocol or the values (hypothesis). Also here: the readers' pandas-free paths of a small
evaluate (ARFF numbers, CSV class labels).
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert import api
from treecert.data.csv_writer import frame_to_csv, write_columns
from treecert.data.loading import load_dataset
from treecert.evaluation.experiment import Protocol, fold_summary
from treecert.evaluation.results import (
    PredictionTable,
    RecordTable,
    _spread,
    metrics_document,
    summary_table,
    write_csv,
)

DATA = Path(__file__).parent / "data"
LOSS = np.array([[0.0, 1.0], [5.0, 0.0]])


def _csv(table) -> str:
    buf = io.StringIO()
    write_csv(table, buf)
    return buf.getvalue()


def _frame_csv(frame) -> str:
    buf = io.StringIO()
    frame_to_csv(frame, buf)
    return buf.getvalue()


def _same_records(a: list[dict], b: list[dict]) -> None:
    assert [list(r) for r in a] == [list(r) for r in b]
    for ra, rb in zip(a, b, strict=True):
        for k in ra:
            x, y = ra[k], rb[k]
            assert type(x) is type(y) or (isinstance(x, float) and isinstance(y, float)), k
            assert x == y or (x != x and y != y), (k, x, y)


CASES = {
    "leaf": ("iris", ["frequency"], {}),
    "bounds and columns": ("labor", ["laplace", "tpce", "venn", "binning",
                                     "empirical_bayes"], {"protocol": Protocol(repeats=2)}),
    "loss": ("breast-cancer", ["laplace", "kk", "naive_bayes", "bagging"],
             {"loss": LOSS, "protocol": Protocol(n_folds=3)}),
    "loo": ("weather.nominal", ["laplace", "tpce"], {"protocol": Protocol(kind="loo")}),
    "no timing": ("contact-lenses", ["m_estimate", "certified_tree"],
                  {"timing": False, "protocol": Protocol(kind="weka", n_folds=3)}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_result_files_are_the_bytes_of_the_dataframes(case, tmp_path):
    name, methods, kwargs = CASES[case]
    data = load_dataset(DATA / f"{name}.arff")
    result = api.evaluate(data, methods, dataset_name=name, **kwargs)
    tables = {n: result.table(n) for n in ("predictions", "metrics", "folds", "summary")}
    for table in tables.values():
        assert table is None or table.columns() is not None  # written without pandas
    document = metrics_document(result)
    assert _csv(tables["predictions"]) == _frame_csv(result.predictions)
    assert _csv(tables["metrics"]) == _frame_csv(result.metrics)
    expected = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                for r in result.metrics.to_dict(orient="records")]
    assert document["metrics"] == expected
    if case == "loo":
        assert tables["folds"] is None and tables["summary"] is None
        return
    assert _csv(tables["folds"]) == _frame_csv(result.folds)
    assert _csv(tables["summary"]) == _frame_csv(fold_summary(result.folds))


@pytest.mark.parametrize("case", ["leaf", "loss"])
def test_confusion_files_are_the_bytes_of_the_dataframes(case):
    from treecert.cli.experiment import _confusion
    from treecert.evaluation.confusion import confusion_tables, confusion_text

    name, methods, kwargs = CASES[case]
    result = api.evaluate(load_dataset(DATA / f"{name}.arff"), methods, **kwargs)
    fast = _confusion(result)
    assert all(isinstance(t, RecordTable) for t in fast)
    frames = confusion_tables(result.predictions, list(result.classes))
    for table, frame in zip(fast, frames, strict=True):
        assert _csv(table) == frame.to_csv(index=False, lineterminator="\n")
    classes = list(result.classes)
    assert confusion_text(fast[0], classes) == confusion_text(frames[0], classes)


# ------------------------------------------------------------------ tables of any values
_VALUES = st.one_of(st.integers(-10**6, 10**6), st.floats(), st.booleans(),
                    st.text(alphabet='ab,"\r\n é', max_size=3), st.none(),
                    st.sampled_from([np.float64(0.5), np.int64(3), math.nan, -0.0]))


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _VALUES,
                                     max_size=4), min_size=1, max_size=5),
       one_kind=st.booleans())
def test_record_table_is_pandas_dataframe_of_the_rows(rows, one_kind):
    if one_kind:  # a kind per key, as the metric rows have
        kinds = {}
        rows = [{k: v for k, v in r.items() if kinds.setdefault(k, type(v)) is type(v)}
                for r in rows]
    table = RecordTable(rows)
    columns = table.columns()
    frame = pd.DataFrame(rows)
    if columns is None:
        return
    assert list(columns) == list(frame.columns)
    buf = io.StringIO()
    write_columns(columns, buf)
    assert buf.getvalue() == _frame_csv(frame)
    _same_records(table.records(), frame.to_dict(orient="records"))


_KINDS = {"f": st.floats(), "i": st.integers(-10**6, 10**6), "b": st.booleans(),
          "O": st.text(alphabet='ab,"\n é', max_size=3)}


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n_parts=st.integers(1, 3))
def test_prediction_table_is_pandas_concat_of_the_parts(data, n_parts):
    table = PredictionTable()
    for p in range(n_parts):
        n = data.draw(st.integers(0, 4))
        columns = {"row": np.arange(n, dtype=np.int64)}
        for name in data.draw(st.lists(st.sampled_from(["x", "y", "z"]), unique=True)):
            kind = data.draw(st.sampled_from(sorted(_KINDS)))
            values = data.draw(st.lists(_KINDS[kind], min_size=n, max_size=n))
            columns[name] = np.array(values, dtype={"f": "f8", "i": "i8"}.get(kind, kind))
        table.add({"dataset": "d", "method": f"m{p}", "repeat": p,
                   "fold": np.full(n, p)}, columns)
    columns = table.columns()
    if columns is None:
        return
    frame = table.frame()
    assert list(columns) == list(frame.columns)
    buf = io.StringIO()
    write_columns(columns, buf)
    assert buf.getvalue() == _frame_csv(frame)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(math.nan),
                                 st.floats(-1e100, 1e100)), max_size=12))
def test_fold_spread_is_pandas_mean_std_min_max(values):
    v = pd.Series(values, dtype=np.float64).dropna()
    got = _spread(v.to_numpy())
    expected = {"mean": v.mean(), "std": v.std(ddof=1), "min": v.min(), "max": v.max()}
    for k, x in expected.items():
        assert np.float64(got[k]).tobytes() == np.float64(x).tobytes() or (
            math.isnan(got[k]) and math.isnan(x)), (k, got[k], x)


def test_summary_of_mixed_metric_columns_is_pandas():
    rows = [{"dataset": "d", "method": "a", "repeat": 0, "fold": f, "n_test": 3,
             "brier": 0.1 * f, "auc": math.nan if f == 1 else 0.5 + f / 7}
            for f in range(3)]
    rows += [{"dataset": "d", "method": "b", "repeat": 0, "fold": 0, "n_test": 3,
              "brier": 0.2, "brier_low": 0.1}]
    table = summary_table(RecordTable(rows))
    assert _csv(table) == _frame_csv(fold_summary(pd.DataFrame(rows)))


# ------------------------------------------------------------------ readers without pandas
_TOKENS = st.one_of(
    st.none(),
    st.sampled_from(["-0", "0", "+1", "007", "1.", ".5", "-.0", "-0.0", "1e5", "1E-3",
                     "1e400", "4.9e-325", "1e999999", "inf", "-Infinity", "nan", "NaN",
                     "9" * 20, "18446744073709551615", "-9223372036854775809", "e5", "+",
                     ".", "1_0", "0x10", "\u0661", "x", "1 ", "Infinity"]),
    st.floats(allow_nan=False).map(repr), st.integers(-10**6, 10**6).map(str),
    st.from_regex(r"-?[0-9]{0,20}(\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(tokens=st.lists(_TOKENS, max_size=6))
def test_arff_numbers_without_pandas_are_pandas_then_java(tokens):
    """A numeric ARFF column read without pandas: what ``pandas.to_numeric`` gives, then
    Java's reading (``_number``) of what it leaves out."""
    from treecert.data.arff_reader import _plain_numbers
    from treecert.data.table import _number

    got = _plain_numbers(tokens)
    if got is None:
        return
    series = pd.Series(tokens, dtype=object)
    expected = np.array(pd.to_numeric(series, errors="coerce"), dtype=np.float64)
    for i in np.flatnonzero(np.isnan(expected) & series.notna().to_numpy()):
        expected[i] = _number(tokens[i])
    assert got.view(np.uint64).tolist() == expected.view(np.uint64).tolist()


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "", "1", "1.0"]),
                                 st.floats(allow_infinity=False)), max_size=8))
def test_csv_class_labels_are_pandas_factorize(values):
    from treecert.data.loading import _nominal_first_seen

    raw = np.array(values, dtype=object)
    attr, x = _nominal_first_seen("c", raw)
    codes, uniques = pd.factorize(pd.Series(raw, dtype=object), use_na_sentinel=True)
    assert attr.values == tuple(str(u) for u in uniques)
    np.testing.assert_array_equal(x, np.where(codes < 0, np.nan, codes))
