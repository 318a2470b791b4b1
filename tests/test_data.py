"""Tests for treecert.data: ARFF/CSV reading, schema alignment, trainability, ARFF writing."""

from __future__ import annotations

import gzip
import io
import math
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from conftest import DATASETS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treecert.data.alignment import load_for_schema
from treecert.data.arff_reader import _arff_rows_fast, _parse_arff, _parse_arff_header
from treecert.data.arff_writer import write_arff
from treecert.data.csv_reader import _parse_csv
from treecert.data.dates import DEFAULT_DATE_FORMAT, _format_date
from treecert.data.loading import _train_attribute, check_trainable, load_dataset
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.data.table import _Table
from treecert.errors import ConfigError, DataError, SchemaMismatchError

FIXTURES = Path(__file__).parent / "fixtures" / "data"
SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def fixture(name: str) -> str:
    """Fixture path relative to the cwd, so messages show just the file name."""
    return str(FIXTURES / name)


def message(exc_info: pytest.ExceptionInfo) -> str:
    return str(exc_info.value).replace(str(FIXTURES) + "/", "")


# ------------------------------------------------------------------------- UCI datasets
# The table in tests/data/README.md: rows, numeric, nominal, declared classes, classes
# present, smallest and largest class, missing values.
UCI_TABLE = {
    "breast-cancer": (286, 0, 9, 2, 2, 85, 201, True),
    "contact-lenses": (24, 0, 4, 3, 3, 4, 15, False),
    "credit-g": (1000, 7, 13, 2, 2, 300, 700, False),
    "diabetes": (768, 8, 0, 2, 2, 268, 500, False),
    "glass": (214, 9, 0, 7, 6, 9, 76, False),
    "ionosphere": (351, 34, 0, 2, 2, 126, 225, False),
    "iris": (150, 4, 0, 3, 3, 50, 50, False),
    "labor": (57, 8, 8, 2, 2, 20, 37, True),
    "segment-challenge": (1500, 19, 0, 7, 7, 204, 236, False),
    "segment-test": (810, 19, 0, 7, 7, 94, 126, False),
    "soybean": (683, 0, 35, 19, 19, 8, 92, True),
    "unbalanced": (856, 32, 0, 2, 2, 12, 844, False),
    "vote": (435, 0, 16, 2, 2, 168, 267, True),
    "wdbc": (569, 30, 0, 2, 2, 212, 357, False),
    "weather.nominal": (14, 0, 4, 2, 2, 5, 9, False),
    "weather.numeric": (14, 2, 2, 2, 2, 5, 9, False),
    "wine": (178, 13, 0, 3, 3, 48, 71, False),
}



@pytest.mark.parametrize("name", sorted(UCI_TABLE))
def test_uci_dataset_matches_weka_counts(name: str) -> None:
    rows, n_num, n_nom, declared, present, smallest, largest, missing = UCI_TABLE[name]
    ds = load_dataset(DATASETS / f"{name}.arff")
    kinds = [a.kind for a in ds.schema.attributes]
    assert ds.n_samples == rows
    assert (kinds.count("numeric"), kinds.count("nominal")) == (n_num, n_nom)
    assert ds.schema.n_classes == declared
    sizes = np.bincount(ds.y, minlength=declared)
    assert (ds.y >= 0).all()
    assert np.count_nonzero(sizes) == present
    assert (sizes[sizes > 0].min(), sizes.max()) == (smallest, largest)
    assert bool(np.isnan(ds.X).any()) == missing
    assert np.all(ds.weights == 1.0)
    folds = (DATASETS / f"{name}.folds.csv").read_text().split()
    assert len(folds) == rows
    check_trainable(ds)


@pytest.mark.parametrize("name", sorted(UCI_TABLE))
def test_uci_dataset_fast_path_equals_exact_tokenizer(name: str) -> None:
    text = (DATASETS / f"{name}.arff").read_text()
    _, attrs, offset, _ = _parse_arff_header(text, name)
    assert _arff_rows_fast(text[offset:], attrs) is not None  # the fast path is taken
    assert_tables_equal(_parse_arff(text, name), _parse_arff(text, name, fast=False))


def test_glass_keeps_declared_class_order() -> None:
    ds = load_dataset(DATASETS / "glass.arff")
    assert ds.schema.classes[:2] == ("build wind float", "build wind non-float")
    assert ds.schema.classes[-1] == "headlamps"


def assert_tables_equal(a: _Table, b: _Table) -> None:
    assert a.relation == b.relation
    assert [c.attr for c in a.columns] == [c.attr for c in b.columns]
    for ca, cb in zip(a.columns, b.columns, strict=True):
        if ca.values.dtype == object or cb.values.dtype == object:
            assert ca.values.tolist() == cb.values.tolist(), ca.attr.name
        else:
            np.testing.assert_array_equal(ca.values, cb.values, err_msg=ca.attr.name)
    np.testing.assert_array_equal(a.weights, b.weights)


# ----------------------------------------------------------------------- ARFF features
def test_weka_features_file() -> None:
    ds = load_dataset(fixture("weka_features.arff"))
    s = ds.schema
    assert s.relation == "weka features"
    assert [(a.name, a.kind) for a in s.attributes] == [
        ("the name", "string"), ("num val", "numeric"), ("count", "numeric"),
        ("color", "nominal"), ("when", "date"), ("stamp", "date"),
    ]
    assert s.attributes[3].values == ("red", "dark blue", "light'green")
    assert s.attributes[4].date_format == "yyyy-MM-dd HH:mm:ss"
    assert s.attributes[5].date_format == DEFAULT_DATE_FORMAT
    assert s.classes == ("yes", "no")
    t = datetime(2001, 4, 3, 12, 12, 12, tzinfo=UTC).timestamp()
    expected = np.array([
        [np.nan, 1.5, 3, 0, t, t],
        [np.nan, np.nan, 4, 1, np.nan, np.nan],
        [np.nan, 2.5, 0, 2, 0, 0],  # sparse: omitted numeric = 0, omitted date = epoch
        [np.nan, 7, 0, 0, 0, 0],  # sparse: omitted nominal = first declared value
        [np.nan, -100, 0, 0, 86400, 1],  # tab-separated
    ])
    np.testing.assert_array_equal(ds.X, expected)
    np.testing.assert_array_equal(ds.y, [0, 1, 1, 0, -1])
    np.testing.assert_array_equal(ds.weights, [1, 0.5, 1, 3, 1])
    assert ds.extra["the name"].tolist() == ["row one", "row\ttwo", "row three", None, "row five"]
    assert ds.warnings == []


def arff(body: str, header: str = "@attribute a numeric\n@attribute c {x, y}\n") -> str:
    return f"@relation r\n{header}@data\n{body}"


def parse(text: str, fast: bool = True) -> _Table:
    return _parse_arff(text, "t.arff", fast=fast)


def test_keywords_types_and_quotes_are_case_and_style_insensitive() -> None:
    text = (
        "% leading comment\n@RELATION Test\n"
        "@ATTRIBUTE \"a b\" INTEGER\n@Attribute 'c,d' Real\n"
        "@attribute e{ 'p q' ,\"r\\\"s\" }\n@attribute f string\n@DaTa\n"
        "1 , 2.5e1,'p q', '%not a comment'\n3\t4\t\"r\\\"s\"\t'it\\'s'  % comment\n"
    )
    for fast in (True, False):
        t = parse(text, fast)
        assert t.names == ["a b", "c,d", "e", "f"]
        assert t.columns[2].attr.values == ("p q", 'r"s')
        np.testing.assert_array_equal(t.columns[0].values, [1, 3])
        np.testing.assert_array_equal(t.columns[1].values, [25, 4])
        np.testing.assert_array_equal(t.columns[2].values, [0, 1])
        assert t.columns[3].values.tolist() == ["%not a comment", "it's"]


def test_question_mark_quoted_is_a_value_unquoted_is_missing() -> None:
    header = "@attribute a {'?', x}\n@attribute c {x, y}\n"
    t = parse(arff("'?',x\n?,y\n", header))
    np.testing.assert_array_equal(t.columns[0].values, [0, np.nan])


def test_crlf_line_endings_and_trailing_separators() -> None:
    t = parse(arff("1,x,\r\n2 , y\r\n\r\n"))
    np.testing.assert_array_equal(t.columns[0].values, [1, 2])
    np.testing.assert_array_equal(t.columns[1].values, [0, 1])


def test_sparse_rows_default_to_zero_not_missing() -> None:
    header = "@attribute a numeric\n@attribute b {u, v}\n@attribute s string\n@attribute c {x, y}\n"
    t = parse(arff("{}\n{0 ?, 3 y}, {2}\n{1 v,2 'w'}\n", header))
    np.testing.assert_array_equal(t.columns[0].values, [0, np.nan, 0])
    np.testing.assert_array_equal(t.columns[1].values, [0, 0, 1])
    assert t.columns[2].values.tolist() == [None, None, "w"]
    np.testing.assert_array_equal(t.columns[3].values, [0, 1, 0])
    np.testing.assert_array_equal(t.weights, [1, 2, 1])


def test_nonstandard_number_forms_read_like_java() -> None:
    t = parse(arff("NaN,x\nInfinity,x\n-Infinity,y\n1e-3,y\n"))
    np.testing.assert_array_equal(t.columns[0].values, [np.nan, np.inf, -np.inf, 0.001])


def test_true_false_are_not_numbers_but_stay_nominal_labels() -> None:
    header = "@attribute a numeric\n@attribute c {TRUE, FALSE}\n"
    for fast in (True, False):
        t = parse(arff("1,TRUE\n0,FALSE\n", header), fast)
        np.testing.assert_array_equal(t.columns[0].values, [1, 0])
        np.testing.assert_array_equal(t.columns[1].values, [0, 1])
        with pytest.raises(DataError, match=r"line 7: 'TRUE' is not a number"):
            parse(arff("1,TRUE\n0,FALSE\nTRUE,TRUE\n", header), fast)


def test_mixed_dense_and_sparse_rows_report_the_first_bad_line() -> None:
    text = arff("{0 5}\n1,x\n{0 bad}\nworse,y\n")
    with pytest.raises(DataError, match=r"line 7: 'bad' is not a number"):
        parse(text)
    t = parse(arff("{0 5}\n1,y\n{1 y}\n"))
    np.testing.assert_array_equal(t.columns[0].values, [5, 1, 0])
    np.testing.assert_array_equal(t.columns[1].values, [0, 1, 1])


def test_sparse_row_with_a_word_for_an_index_is_a_data_error() -> None:
    # Found by the ARFF fuzz test: a non-numeric index escaped the fast path as ValueError.
    with pytest.raises(DataError, match=r"line 6: expected an attribute index .*'@relation'"):
        parse(arff("{0 5, 1 x}\n{@relation 1, 1 y}\n"))


def test_date_formats() -> None:
    header = (
        "@attribute d date 'dd/MM/yy HH:mm'\n@attribute e date \"MMM d, yyyy 'at' h a\"\n"
        "@attribute c {x, y}\n"
    )
    t = parse(arff("'03/04/01 12:12', 'Apr 3, 2001 at 1 PM', x\n", header))
    assert t.columns[0].values[0] == datetime(2001, 4, 3, 12, 12, tzinfo=UTC).timestamp()
    assert t.columns[1].values[0] == datetime(2001, 4, 3, 13, tzinfo=UTC).timestamp()
    assert _format_date(t.columns[1].values[0], "MMM d, yyyy 'at' h a") == "Apr 3, 2001 at 1 PM"
    assert _format_date(0.5, "yyyy-MM-dd HH:mm:ss.SSS") == "1970-01-01 00:00:00.500"


@pytest.mark.parametrize(
    ("body", "header", "expected"),
    [
        ("1,x\n1,2,x\n", None,
         "t.arff, line 6: expected 2 values (one per @attribute), found 3. "
         "Quote values that contain spaces or commas."),
        ("1,x\n\n2\n", None,
         "t.arff, line 7: expected 2 values (one per @attribute), found 1. "
         "Write ? for a missing value."),
        ("1,x\nabc,y\n", None,
         "t.arff, line 6: 'abc' is not a number (attribute 'a' is numeric). "
         "Write ? for a missing value, or declare the attribute nominal."),
        ("1_000,x\n", None, "t.arff, line 5: '1_000' is not a number"),
        ("1,z\n", None, "t.arff, line 5: value 'z' is not declared for nominal attribute 'c'."),
        ("1,'x\n", None, "t.arff, line 5: a quoted value is not closed."),
        ("{0 1, 5 x}\n", None, "t.arff, line 5: sparse index 5 is out of range"),
        ("{1 x, 0 1}\n", None, "t.arff, line 5: sparse indices must increase"),
        ("{0 1\n", None, "t.arff, line 5: the sparse row is not closed"),
        ("1,x,{-2}\n", None, "t.arff, line 5: instance weight '-2' is not a non-negative"),
        ("1,x,{2\n", None, "t.arff, line 5: malformed instance weight."),
        ("1,x\n", "@attribute a float\n@attribute c {x}\n",
         "t.arff, line 2: unknown type 'float' for attribute 'a'."),
        ("1,x\n", "@attribute a numeric\n@attribute c {x, y\n",
         "t.arff, line 3: the values of nominal attribute 'c' are not closed with '}'."),
        ("1,x\n", "@attribute a numeric\n@attribute a {x}\n",
         "t.arff, line 3: attribute 'a' is declared twice."),
        ("1,x\n", "@attribute a numeric\n@attribute c {x, x}\n",
         "t.arff, line 3: value 'x' is declared twice for 'c'."),
        ("1,x\n", "@attribute b relational\n@end b\n",
         "t.arff, line 2: relational attribute 'b' is not supported"),
        ("1,x\n", "@attribute d date 'yyyy-QQ'\n@attribute c {x}\n",
         "t.arff, line 2: date format 'yyyy-QQ' of 'd': pattern letter 'Q' is not supported."),
        ("bad,x\n", "@attribute d date\n@attribute c {x}\n",
         "t.arff, line 5: 'bad' is not a date in the format \"yyyy-MM-dd'T'HH:mm:ss\""),
        ("1,x\n", "@attribute a numeric\n@atribute c {x}\n",
         "t.arff, line 3: expected '@attribute' or '@data', found '@atribute c {x}'."),
    ],
)
def test_arff_syntax_errors_name_file_and_line(body: str, header: str | None,
                                               expected: str) -> None:
    text = arff(body) if header is None else arff(body, header)
    for fast in (True, False):
        with pytest.raises(DataError) as exc:
            parse(text, fast)
        assert str(exc.value).startswith(expected)


def test_syntax_error_fixture_names_line() -> None:
    with pytest.raises(DataError) as exc:
        load_dataset(fixture("syntax_error.arff"))
    assert message(exc) == (
        "syntax_error.arff, line 10: value 'foggy' is not declared for nominal attribute "
        "'outlook'. Declared values: sunny, overcast, rainy. Add it to the @attribute line "
        "or correct the value."
    )


def test_missing_relation_and_missing_data() -> None:
    with pytest.raises(DataError, match=r"t.arff, line 1: expected '@relation NAME'"):
        parse("a,b\n1,2\n")
    with pytest.raises(DataError) as exc:
        load_dataset(fixture("missing_data_line.arff"))
    assert message(exc).startswith(
        "missing_data_line.arff, line 3: the file ends without an '@data' line."
    )
    with pytest.raises(DataError) as exc:
        load_dataset(fixture("no_data.arff"))
    assert message(exc) == "no_data.arff: no data rows after '@data'. Add at least one instance."


def test_numeric_class_is_rejected_unless_made_nominal() -> None:
    with pytest.raises(DataError) as exc:
        load_dataset(fixture("numeric_class.arff"))
    assert message(exc).startswith(
        "numeric_class.arff: class attribute 'performance' is numeric; treecert learns "
        "classification trees; declare it nominal."
    )
    ds = load_dataset(fixture("numeric_class.arff"), nominal=["performance", "cache"])
    assert ds.schema.classes == ("198", "269")
    assert ds.schema.attributes[0] == Attribute("cache", "nominal", ("32", "256"),
                                                nominal_from="numeric")
    np.testing.assert_array_equal(ds.X[:, 0], [1, 0])


def test_string_attribute_goes_to_extra_and_is_not_trainable() -> None:
    ds = load_dataset(fixture("string_attribute.arff"))
    assert ds.schema.attributes[0] == Attribute("comment", "string")
    assert np.isnan(ds.X[:, 0]).all()
    assert ds.extra["comment"].tolist() == ["loved it, would buy again", "broke after a week",
                                            None]
    with pytest.raises(DataError) as exc:
        check_trainable(ds)
    assert message(exc) == (
        "string_attribute.arff: attribute 'comment' is a string attribute; a tree cannot "
        "split on free text. Drop it with --ignore comment."
    )
    check_trainable(load_dataset(fixture("string_attribute.arff"), ignore=["comment"]))


def test_class_name_ignore_and_unknown_names() -> None:
    ds = load_dataset(fixture("weather_train.csv"), class_name="windy", ignore=["humidity"])
    assert ds.schema.feature_names == ["outlook", "temperature", "play"]
    assert ds.schema.classes == ("FALSE", "TRUE")
    ds = load_dataset(fixture("weather_train.csv"), ignore=["play"])
    assert ds.schema.class_attribute.name == "windy"  # the last column left
    with pytest.raises(DataError) as exc:
        load_dataset(fixture("weather_train.csv"), ignore=["Humidity"])
    assert message(exc) == (
        "weather_train.csv: no column named 'Humidity' (given to ignore); the columns are "
        "outlook, temperature, humidity, windy, play. Names are case-sensitive."
    )
    with pytest.raises(DataError) as exc:
        load_dataset(fixture("no_class.csv"), class_name="play")
    assert message(exc) == (
        "no_class.csv: class column 'play' not found; the columns are outlook, temperature, "
        "humidity. Names are case-sensitive; by default the last column is the class."
    )


# ----------------------------------------------------------------------- CSV
def test_csv_inference_and_labels(tmp_path: Path) -> None:
    f = tmp_path / "w.csv"
    f.write_text(
        'a,b,c,d,cls\n1,x,TRUE, 2.5 ,1\n2,"y, z",FALSE,NA,2\n?,x,True,,1\n3,?,TRUE,1e3,NA\n'
    )
    ds = load_dataset(f)
    s = ds.schema
    assert [(a.name, a.kind, a.values) for a in s.attributes] == [
        ("a", "numeric", ()), ("b", "nominal", ("x", "y, z")),
        ("c", "nominal", ("TRUE", "FALSE", "True")), ("d", "numeric", ()),
    ]
    assert s.classes == ("1", "2")  # the class column is labels, in order of appearance
    assert s.relation == "w"
    np.testing.assert_array_equal(ds.X[:, 0], [1, 2, np.nan, 3])
    np.testing.assert_array_equal(ds.X[:, 1], [0, 1, 0, np.nan])
    np.testing.assert_array_equal(ds.X[:, 3], [2.5, np.nan, np.nan, 1000])
    np.testing.assert_array_equal(ds.y, [0, 1, 0, -1])
    forced = load_dataset(f, nominal=["a"])
    assert forced.schema.attributes[0].values == ("1", "2", "3")


def test_csv_errors() -> None:
    with pytest.raises(DataError) as exc:
        load_dataset(fixture("empty.csv"))
    assert message(exc).startswith("empty.csv: the file is empty.")
    with pytest.raises(DataError) as exc:
        load_dataset(fixture("ragged.csv"))
    assert message(exc) == (
        "ragged.csv, line 3: expected 3 fields (as in the header), found 4. Every row needs "
        "one field per column; quote values that contain commas."
    )
    with pytest.raises(DataError, match=r"header_only\.csv: no data rows after the header row"):
        load_dataset(fixture("header_only.csv"))


def test_csv_short_row_is_reported_not_padded(tmp_path: Path) -> None:
    f = tmp_path / "short.csv"
    f.write_text("a,b,c\n1,2,x\n3,4\n5,6,y\n")
    with pytest.raises(DataError, match=r"short.csv, line 3: expected 3 fields .*found 2"):
        load_dataset(f)


def test_stdin_and_gzip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (FIXTURES / "weather_train.csv").read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    from_stdin = load_dataset("-")
    assert from_stdin.source == "<stdin>" and from_stdin.n_samples == 7
    gz = tmp_path / "weather.csv.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    np.testing.assert_array_equal(load_dataset(gz).X, from_stdin.X, strict=True)
    other = tmp_path / "weather.txt"
    other.write_text(text)
    assert load_dataset(other).n_samples == 7  # a name that does not say: read by content
    assert load_dataset(other, fmt="csv").n_samples == 7
    with pytest.raises(ConfigError):
        load_dataset(other, fmt="xls")
    with pytest.raises(DataError, match=r"nope\.csv: no such file"):
        load_dataset(tmp_path / "nope.csv")


# ----------------------------------------------------------------------- check_trainable
def test_check_trainable_messages() -> None:
    with pytest.raises(DataError) as exc:
        check_trainable(load_dataset(fixture("single_class.csv")))
    assert message(exc) == (
        "only one class ('yes') in single_class.csv: a tree needs at least two classes to "
        "tell apart. Check that 'play' is the class column."
    )
    with pytest.raises(DataError) as exc:
        check_trainable(load_dataset(fixture("all_missing_attribute.csv")))
    assert message(exc) == (
        "all_missing_attribute.csv: attribute 'humidity' has no known values (all 4 "
        "missing); a tree cannot split on it. Drop it with --ignore humidity."
    )
    unlabeled = load_for_schema(fixture("test_no_class.csv"),
                                load_dataset(fixture("weather_train.csv")).schema)
    with pytest.raises(DataError, match="no row has a known class; 'play' is missing"):
        check_trainable(unlabeled)
    check_trainable(load_dataset(fixture("weather_train.csv")))


# ----------------------------------------------------------------------- load_for_schema
@pytest.fixture
def weather_schema() -> Schema:
    return load_dataset(fixture("weather_train.csv")).schema


def test_for_schema_aligns_by_name(weather_schema: Schema) -> None:
    ds = load_for_schema(fixture("test_reordered.csv"), weather_schema, id_column="id")
    assert ds.schema is weather_schema and ds.has_class
    np.testing.assert_array_equal(ds.X, [[np.nan, 72, 80, 0], [0, np.nan, 70, np.nan],
                                         [np.nan, 71, np.nan, 1]])
    np.testing.assert_array_equal(ds.y, [1, 0, -1])
    assert list(ds.extra) == ["id", "note"]
    assert ds.extra["id"].tolist() == ["d1", "d2", "d3"]
    assert [w.replace(str(FIXTURES) + "/", "") for w in ds.warnings] == [
        "test_reordered.csv: 3 values not seen in training read as missing "
        "(outlook: 'foggy' \u00d72; windy: 'maybe' \u00d71)"
    ]


def test_for_schema_arff_maps_labels_not_codes(weather_schema: Schema) -> None:
    ds = load_for_schema(fixture("test_reordered.arff"), weather_schema)
    np.testing.assert_array_equal(ds.X, [[np.nan, 71, 90, 1], [1, 81, 75, 0]])
    np.testing.assert_array_equal(ds.y, [0, 1])  # 'no', 'yes' in the model's order
    assert len(ds.warnings) == 1 and "1 value not seen" in ds.warnings[0]


def test_for_schema_without_class(weather_schema: Schema) -> None:
    ds = load_for_schema(fixture("test_no_class.csv"), weather_schema, id_column="id")
    assert not ds.has_class
    np.testing.assert_array_equal(ds.y, [-1, -1])
    assert ds.extra["id"].tolist() == ["n1", "n2"]
    with pytest.raises(DataError, match="id column 'key' not found"):
        load_for_schema(fixture("test_no_class.csv"), weather_schema, id_column="key")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("test_missing_column.csv",
         "test_missing_column.csv: column 'humidity' is missing; the model was trained on "
         "outlook, temperature, humidity, windy."),
        ("test_kind_changed.csv",
         "test_kind_changed.csv: column 'temperature' holds 'hot' (data row 2) but is numeric "
         "in the model; the model was trained on outlook, temperature, humidity, windy."),
        ("test_kind_changed.arff",
         "test_kind_changed.arff: column 'temperature' is nominal here but numeric in the "
         "model; the model was trained on outlook, temperature, humidity, windy."),
        ("test_unknown_class.csv",
         "test_unknown_class.csv: class label 'maybe' in data row 2 is not one the model "
         "knows (no, yes). Correct the label, or drop the class column to predict without "
         "scoring."),
    ],
)
def test_for_schema_mismatches(weather_schema: Schema, name: str, expected: str) -> None:
    with pytest.raises(SchemaMismatchError) as exc:
        load_for_schema(fixture(name), weather_schema)
    assert message(exc) == expected


def test_for_schema_reads_nominal_csv_columns_as_labels(tmp_path: Path) -> None:
    train = tmp_path / "train.csv"
    train.write_text("code,size,cls\n1,1.5,a\n2,2.5,b\n")
    schema = load_dataset(train, nominal=["code"]).schema
    test = tmp_path / "test.csv"
    test.write_text("size,code\n3,2\n4,1.0\n")
    ds = load_for_schema(test, schema)
    np.testing.assert_array_equal(ds.X, [[1, 3], [np.nan, 4]])
    assert "'1.0'" in ds.warnings[0]


def test_for_schema_reads_csv_dates_in_the_model_format(tmp_path: Path) -> None:
    fmt = "dd.MM.yyyy"
    schema = Schema((Attribute("day", "date", date_format=fmt),),
                    Attribute("cls", "nominal", ("a", "b")))
    test = tmp_path / "days.csv"
    test.write_text("day\n03.04.2001\n?\n")
    ds = load_for_schema(test, schema)
    np.testing.assert_array_equal(ds.X[:, 0], [datetime(2001, 4, 3, tzinfo=UTC).timestamp(),
                                               np.nan])
    test.write_text("day\n2001-04-03\n")
    with pytest.raises(SchemaMismatchError, match="not a date in the model's format"):
        load_for_schema(test, schema)


# ----------------------------------------------------------------------- write_arff
def test_write_arff_is_readable_and_weka_shaped(tmp_path: Path) -> None:
    ds = load_dataset(fixture("weka_features.arff"))
    out = io.StringIO()
    write_arff(ds, out)
    text = out.getvalue()
    assert "@attribute 'the name' string" in text
    assert "@attribute color {red,'dark blue','light\\047green'}" in text  # liac-arff reads it
    assert "@attribute when date 'yyyy-MM-dd HH:mm:ss'" in text
    assert "'row\\ttwo',?,4,'dark blue',?,?,no,{0.5}" in text
    path = tmp_path / "copy.arff.gz"
    write_arff(ds, path)
    back = load_dataset(path)
    assert back.schema == ds.schema
    np.testing.assert_array_equal(back.X, ds.X)
    np.testing.assert_array_equal(back.weights, ds.weights)
    assert back.extra["the name"].tolist() == ds.extra["the name"].tolist()


# ----------------------------------------------------------------------- properties
labels = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)


@st.composite
def datasets(draw: st.DrawFn) -> Dataset:
    n = draw(st.integers(1, 6))
    kinds = draw(st.lists(st.sampled_from(["numeric", "nominal", "date", "string"]),
                          max_size=4))
    attr_names = draw(st.lists(names, min_size=len(kinds) + 1, max_size=len(kinds) + 1,
                               unique=True))
    attrs, columns, extra = [], [], {}
    for name, kind in zip(attr_names, kinds, strict=False):
        if kind == "nominal":
            values = draw(st.lists(labels, min_size=1, max_size=4, unique=True))
            attrs.append(Attribute(name, kind, tuple(values)))
            codes = draw(st.lists(st.integers(-1, len(values) - 1), min_size=n, max_size=n))
            columns.append([math.nan if c < 0 else float(c) for c in codes])
        elif kind == "numeric":
            attrs.append(Attribute(name, kind))
            columns.append(draw(st.lists(st.floats(allow_nan=True), min_size=n, max_size=n)))
        elif kind == "date":
            attrs.append(Attribute(name, kind, date_format=DEFAULT_DATE_FORMAT))
            secs = draw(st.lists(st.one_of(st.none(), st.integers(-2**31, 2**33)),
                                 min_size=n, max_size=n))
            columns.append([math.nan if s is None else float(s) for s in secs])
        else:
            attrs.append(Attribute(name, kind))
            columns.append([math.nan] * n)
            extra[name] = np.array(draw(st.lists(st.one_of(st.none(), labels), min_size=n,
                                                 max_size=n)), dtype=object)
    classes = tuple(draw(st.lists(labels, min_size=1, max_size=3, unique=True)))
    y = draw(st.lists(st.integers(-1, len(classes) - 1), min_size=n, max_size=n))
    weights = draw(st.lists(st.sampled_from([1.0, 1.0, 0.0, 0.5, 2.0, 1e-3, 12345.678]),
                            min_size=n, max_size=n))
    schema = Schema(tuple(attrs), Attribute(attr_names[-1], "nominal", classes),
                    relation=draw(labels))
    X = np.array(columns, dtype=np.float64).T.reshape(n, len(attrs))
    return Dataset(schema, X, np.array(y, dtype=np.int64), np.array(weights), extra,
                   source="generated")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ds=datasets())
def test_write_then_load_round_trips(ds: Dataset) -> None:
    out = io.StringIO()
    write_arff(ds, out)
    back = _parse_arff(out.getvalue(), "round.arff")
    exact = _parse_arff(out.getvalue(), "round.arff", fast=False)
    assert_tables_equal(back, exact)
    result = _load_text(out.getvalue())
    assert result.schema == ds.schema
    np.testing.assert_array_equal(result.X, ds.X)
    np.testing.assert_array_equal(result.y, ds.y)
    np.testing.assert_array_equal(result.weights, ds.weights)
    assert {k: v.tolist() for k, v in result.extra.items()} == {
        k: v.tolist() for k, v in ds.extra.items()
    }


def _load_text(text: str, suffix: str = ".arff") -> Dataset:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"data{suffix}"
        path.write_text(text, encoding="utf-8", newline="")
        return load_dataset(path)


cells = st.one_of(
    st.sampled_from(["?", "x", "'y z'", "  x", "1", "-2.5", "1e3", "'1'", "TRUE", "''"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.lists(cells, min_size=3, max_size=3), min_size=1, max_size=6),
       kinds=st.lists(st.sampled_from(["numeric", "nominal", "string"]), min_size=3,
                      max_size=3))
def test_arff_fast_path_equals_exact_tokenizer(rows: list[list[str]], kinds: list[str]) -> None:
    decl = {"numeric": "numeric", "string": "string",
            "nominal": "{x, 'y z', '1', TRUE, ''}"}
    header = "".join(f"@attribute a{j} {decl[k]}\n" for j, k in enumerate(kinds))
    text = arff("\n".join(",".join(r) for r in rows) + "\n", header)
    try:
        exact = parse(text, fast=False)
    except DataError as err:
        with pytest.raises(DataError) as exc:
            parse(text)
        assert str(exc.value) == str(err)
        return
    assert_tables_equal(parse(text), exact)


csv_cells = st.one_of(
    st.sampled_from(["", "?", "NA", "x", '"y, z"', " x ", "1", "-2.5", "1e3", "TRUE",
                     "False", "nan", "inf"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.lists(csv_cells, min_size=3, max_size=3), min_size=1, max_size=6))
def test_csv_fast_path_equals_csv_module(rows: list[list[str]]) -> None:
    text = "a,b,c\n" + "\n".join(",".join(r) for r in rows) + "\n"
    if not any(any(c.strip() for c in r) for r in rows):
        return  # only blank rows: both readers report "no data rows"
    fast = _parse_csv(text, "t.csv", lambda names: {"c"}, fast=True)  # pandas, whatever the size
    exact = _parse_csv(text, "t.csv", lambda names: {"c"}, fast=False)
    for cf, ce in zip(fast.columns, exact.columns, strict=True):
        af, xf = _train_attribute(cf, fast, False)
        ae, xe = _train_attribute(ce, exact, False)
        assert af == ae
        np.testing.assert_array_equal(xf, xe)


# ----------------------------------------------------------------------- sample data
@pytest.mark.skipif(not SAMPLE.is_dir(), reason="sample_data not present")
def test_sample_data_loads() -> None:
    for name in ["iris", "weather.nominal", "weather.numeric", "credit-g", "vote", "soybean",
                 "labor", "diabetes"]:
        ds = load_dataset(SAMPLE / f"{name}.arff")
        assert len((SAMPLE / f"{name}.folds.csv").read_text().split()) == ds.n_samples
    iris = load_dataset(SAMPLE / "iris.csv")
    iris_arff = load_dataset(SAMPLE / "iris.arff")
    np.testing.assert_array_equal(iris.X, iris_arff.X)
    np.testing.assert_array_equal(iris.y, iris_arff.y)
    assert iris.schema.classes == iris_arff.schema.classes
    new = load_for_schema(SAMPLE / "iris_new.csv", iris.schema, id_column="id")
    assert not new.has_class and new.warnings == []
    assert new.extra["id"].size == new.n_samples
