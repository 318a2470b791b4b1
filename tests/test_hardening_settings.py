"""Settings and numbers: what the user gets for each bad option, parameter or number.

Every case runs through the real entry point (:func:`treecert.cli.main.main`; the
estimator's through ``TreecertClassifier.fit``) and checks the exit code, the one line said
and that no output file is written. The classes, and what each gives:

=====================================================  =======================================
input                                                  what the user gets
=====================================================  =======================================
a method option out of its range or type               exit 2, ``Error: method 'SPEC': KEY
(``bagging:trees=-1``, ``seed=-1``, ``venn:min_leaf=0``)  must be RANGE, not VALUE.`` (+ why)
an option given twice (``laplace:alpha=1,alpha=2``)    exit 2, ``... option alpha is given
                                                       twice. Give each option once.``
work above an option's bound, on the command line      exit 0 and ``Warning: ... asks for more
(``binning:bins=1001``)                                work than 1000; this may take long.``
work above the hard limit (``trees=100000000``)        exit 2, the range line
a tree option that is not a finite number (``--cp      exit 2, ``Error: --cp must be a finite
1e400``); a run option out of range (``--seed -1``)    number >= 0, not inf.``
a legitimate extreme (``--cp 1e308``, ``tpce:cp=1e308``)  exit 0: the root-only tree, at once, no
                                                       numpy warning (cp >= 1 prunes to root)
a 400- or 5000-digit integer in a CSV column           exit 0: read as a number (infinity past
                                                       float range, as ``1e400`` is)
instance weights summing past 1e150 (``{1e308}``)      exit 2, ``Error: FILE: the instance
                                                       weights sum to inf, ...``
a model file's ``method`` out of range                 exit 2, ``Error: MODEL: method ...``
a model file's ``method`` above a work bound           exit 2: a model file may not ask for
(``bagging:trees=5000``)                               more than the bound (the CLI may, warned)
a model file's ``params`` beyond float range           exit 2, ``Error: MODEL: corrupt treecert
(``cp: 10**400``); beyond int64 but legitimate         model: params.cp must be ...``; a legit
(``min_leaf: 2**70``)                                  float is used as one (exit 0)
a pruning record or calibration holding ``1e400``      exit 2, ``... pruning.alpha is inf, not
                                                       a finite number.``
a calibration state out of range (binning ``freq``     exit 2, ``Error: MODEL: the model's
-1, venn ``weights`` null, venn ``y`` 1e308)           calibration state is corrupt (...)``
--j48 with a spec that sets ``cf``                     the spec's cf is used; the preset adds
                                                       only ``prune=ebp``
=====================================================  =======================================

The same rule answers in all three places: the command line, the estimator (a
``ParameterError``, a ``ValueError``) and the model reader.
"""

from __future__ import annotations

import csv
import io
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLE_DATA, weighted_arff
from conftest import run_cli as run

from treecert.errors import ParameterError

WEATHER = SAMPLE_DATA / "weather.nominal.arff"
WEATHER_NUMERIC = SAMPLE_DATA / "weather.numeric.arff"
IRIS = SAMPLE_DATA / "iris.arff"
TREES = "trees must be an integer >= 0 and <= 100000, not {}. 0 means as many trees as classes."
SEED = "seed must be an integer >= 0 and <= 4294967295, not -1."
MIN_LEAF = ("min_leaf must be a finite number > 0 and <= 1e+150, not 0.0. With min_leaf 0, a "
            "tree grown with x may give x a leaf of its own; use min_leaf > 0 (the default is "
            "2).")


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def evaluate(spec: str, tmp_path: Path, *extra) -> list:
    out = tmp_path / "ev"
    return ["evaluate", WEATHER, "--method", spec, "--folds", "2", "--no-timing", "-o", out,
            "-q", *extra]


@pytest.mark.parametrize(("spec", "message"), [
    ("bagging:trees=-1", TREES.format(-1)),
    ("bagging:trees=100000000", TREES.format(100000000)),
    ("bagging:seed=-1", SEED),
    ("venn:min_leaf=0", MIN_LEAF),
    ("tpce:min_leaf=0", MIN_LEAF),
    ("laplace:alpha=1,alpha=2", "option alpha is given twice. Give each option once."),
    ("laplace:alpha=1e400", "alpha must be a finite number >= 0 and <= 1e+150, not inf."),
    ("laplace:alpha=nan", "alpha must be a finite number >= 0 and <= 1e+150, not nan."),
    ("frequency:prune=ebp,cf=0.9", "cf must be a finite number > 0 and <= 0.5, not 0.9. J48 "
                                   "ignores larger values; 0.25 is its default."),
    ("bagging:trees=" + "9" * 5000, None),
])
def test_a_bad_method_option_is_one_line(spec, message, tmp_path, capsys):
    code, _, err = run(evaluate(spec, tmp_path), capsys)
    assert code == 2
    line = one_error(err)
    if message is None:  # an integer past Python's 4300 digits: not read as one
        assert line.startswith("Error: method ") and "expected an integer" in line
    else:
        assert line == f"Error: method {spec!r}: {message}"
    assert not (tmp_path / "ev").exists()


def test_work_above_a_bound_runs_with_a_warning_from_the_command_line(tmp_path, capsys):
    code, _, err = run(evaluate("binning:bins=1001", tmp_path)[:-1], capsys)
    assert code == 0
    assert ("Warning: method 'binning:bins=1001': bins = 1001 asks for more work than 1000; "
            "this may take long.") in err.splitlines()


@pytest.mark.parametrize("method", ["tpce", "kk", "venn", "laplace"])
def test_a_huge_cp_prunes_to_the_root_at_once(method, tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow is a failure
        code, _, err = run(["evaluate", IRIS, "--method", f"{method}:cp=1e308", "--folds", "2",
                            "--no-timing", "-o", tmp_path / "ev", "-q"], capsys)
        assert (code, err) == (0, "")
        code, _, err = run(["train", IRIS, "--cp", "1e308", "-o", tmp_path / "m.json", "-q"],
                           capsys)
    assert (code, err) == (0, "")
    assert json.loads((tmp_path / "m.json").read_text())["tree"]["feature"] == [-1]


@pytest.mark.parametrize("flag", ["--cp", "--min-leaf", "--min-gain"])
def test_a_tree_option_past_float_range_is_one_line(flag, tmp_path, capsys):
    for command in (["train", IRIS, "-o", tmp_path / "m.json"],
                    evaluate("tpce", tmp_path)):
        code, _, err = run([*command, flag, "1e400"], capsys)
        assert code == 2
        assert one_error(err).startswith(f"Error: {flag} must be a finite number >= 0")
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "ev").exists()


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--seed", "-1", "--seed must be an integer >= 0 and <= 4294967295, not -1."),
    ("--repeat", "0", "--repeat must be an integer >= 1 and <= 1000000, not 0."),
    ("--bias-variance", "-1", "--bias-variance must be an integer >= 0 and <= 1000000, not -1."),
])
def test_a_run_option_out_of_range_is_one_line(flag, value, message, tmp_path, capsys):
    code, _, err = run([*evaluate("laplace", tmp_path), flag, value], capsys)
    assert (code, one_error(err)) == (2, f"Error: {message}")
    assert not (tmp_path / "ev").exists()


@pytest.mark.parametrize("digits", [400, 5000])
def test_a_huge_integer_in_a_csv_column_is_a_number(digits, tmp_path, capsys):
    lines = (SAMPLE_DATA / "iris.csv").read_text().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    rows[0][0] = "9" * digits  # an integer column? every value of it an integer
    for r in rows[1:]:
        r[0] = str(round(float(r[0])))
    data = tmp_path / "big.csv"
    data.write_text(lines[0] + "\n" + "".join(",".join(r) + "\n" for r in rows))
    code, _, err = run(["train", data, "-o", tmp_path / "m.json", "-q"], capsys)
    assert (code, err) == (0, "")


def test_instance_weights_too_large_to_sum(tmp_path, capsys):
    data = weighted_arff(WEATHER_NUMERIC, tmp_path / "heavy.arff", "1e308")
    code, _, err = run(["train", data, "-o", tmp_path / "m.json"], capsys)
    assert code == 2
    assert one_error(err) == (
        f"Error: {data}: the instance weights sum to inf, beyond the 1e+150 a tree can compute "
        "with (entropies and counts would overflow). Scale the weights down: only their "
        "ratios matter (and min_leaf, a weight).")
    assert not (tmp_path / "m.json").exists()


# ------------------------------------------------------------------ model files
@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, dict]:
    """A plain, a binning- and a venn-calibrated model of iris, as JSON documents."""
    from treecert.cli.main import main

    tmp = tmp_path_factory.mktemp("models")
    assert main(["train", str(IRIS), "-o", str(tmp / "plain.json"), "-q"]) == 0
    for method in ("binning", "venn"):
        assert main(["calibrate", str(tmp / "plain.json"), "--method", method, "--cv", "3",
                     "-o", str(tmp / f"{method}.json"), "-q"]) == 0
    return {p.stem: json.loads(p.read_text()) for p in tmp.glob("*.json")}


CORRUPT = "corrupt treecert model: "
AGAIN = " The file was changed after treecert wrote it; train or calibrate the model again."
STATE = "the model's calibration state is corrupt ({}). Calibrate the original model again " \
        "with 'treecert calibrate'."


@pytest.mark.parametrize(("kind", "path", "value", "message"), [
    ("plain", ("method",), "bagging:trees=-1", "method 'bagging:trees=-1': " + TREES.format(-1)),
    ("plain", ("method",), "bagging:seed=-1", "method 'bagging:seed=-1': " + SEED),
    ("plain", ("method",), "bagging:trees=100000000",
     "method 'bagging:trees=100000000': " + TREES.format(100000000)),
    ("plain", ("method",), "bagging:trees=5000",
     "method 'bagging:trees=5000': trees = 5000 asks for more work than 1000, the most a model "
     "file may ask for. Ask for it on the command line (--method), where it runs with a "
     "warning."),
    ("plain", ("method",), "venn:min_leaf=0", "method 'venn:min_leaf=0': " + MIN_LEAF),
    ("plain", ("method",), "laplace:alpha=1,alpha=2",
     "method 'laplace:alpha=1,alpha=2': option alpha is given twice. Give each option once."),
    ("plain", ("params", "cp"), "raw:" + "1" + "0" * 400,
     CORRUPT + "params.cp must be a finite number >= 0, not an integer of 401 digits." + AGAIN),
    ("plain", ("params", "min_leaf"), "raw:1e400",
     CORRUPT + "params.min_leaf must be a finite number >= 0 and <= 1e+150, not inf." + AGAIN),
    ("plain", ("pruning",), "raw:{\"alpha\": 1e400}",
     CORRUPT + "pruning.alpha is inf, not a finite number." + AGAIN),
    ("binning", ("calibration", "state", "bins"), "raw:1e400",
     CORRUPT + "calibration.state.bins is inf, not a finite number." + AGAIN),
    ("binning", ("calibration", "state", "classes", 0, "freq", 0), -1,
     STATE.format("classes[0].freq holds -1, not a finite number in [0, 1]")),
    ("venn", ("calibration", "state", "weights", 0), None,
     STATE.format("weights holds null, not a number")),
    ("venn", ("calibration", "state", "y", 0), 1e308,
     STATE.format("y holds 1e+308, not an integer")),
])
def test_a_tampered_setting_in_a_model_file_is_one_line(kind, path, value, message, models,
                                                        tmp_path, capsys):
    model = write_tampered(models[kind], path, value, tmp_path)
    out = tmp_path / "p.csv"
    code, _, err = run(["predict", model, IRIS, "-o", out], capsys)
    assert code == 2
    assert one_error(err) == f"Error: {model}: {message}"
    assert not out.exists()


def write_tampered(doc: dict, path: tuple, value, tmp_path: Path) -> Path:
    """``doc`` with the field at ``path`` set to ``value`` (``"raw:TEXT"``: TEXT written
    into the JSON as it is, e.g. ``1e400``, which Python's json reads as infinity)."""
    doc = json.loads(json.dumps(doc))
    target = doc
    for key in path[:-1]:
        target = target[key]
    raw = value[4:] if isinstance(value, str) and value.startswith("raw:") else None
    target[path[-1]] = "@@RAW@@" if raw is not None else value
    text = json.dumps(doc)
    if raw is not None:
        text = text.replace('"@@RAW@@"', raw)
    model = tmp_path / "tampered.json"
    model.write_text(text)
    return model


@pytest.mark.parametrize(("path", "value"), [(("params", "min_leaf"), 2**70),
                                             (("params", "alpha"), 2**65),
                                             (("method",), "tpce:cp=1e308")])
def test_a_legitimate_extreme_in_a_model_file_is_used(path, value, models, tmp_path, capsys):
    """An integer past int64 where a float is meant is that float (a root-only tree for a
    min_leaf of 2**70); a cp past 1 prunes to the root: results, not errors."""
    model = write_tampered(models["plain"], path, value, tmp_path)
    code, _, err = run(["predict", model, IRIS, "-o", tmp_path / "p.csv", "-q"], capsys)
    assert (code, err) == (0, "")


# ------------------------------------------------------------------ presets and help
def test_j48_keeps_the_cf_the_spec_gives(tmp_path, capsys):
    def metrics(*args) -> list[str]:
        code, out, _ = run(["evaluate", IRIS, "--folds", "3", "--no-timing", "-q", *args],
                           capsys)
        assert code == 0
        return next(csv.DictReader(io.StringIO(out)))["brier"]

    mine = metrics("--method", "frequency:cf=0.1", "--j48")
    assert mine == metrics("--method", "frequency:prune=ebp,cf=0.1", "--j48")
    assert mine != metrics("--method", "frequency", "--j48")  # cf 0.25, the preset's


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_help_names_only_the_command_s_own_flags(command, capsys):
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0
    assert "--cf" not in out and "--no-raise" not in out


# ------------------------------------------------------------------ the estimator
@pytest.mark.parametrize(("params", "message"), [
    ({"method": "bagging", "n_trees": -1}, "method 'bagging': " + TREES.format(-1)),
    ({"method": "bagging", "random_state": 2**40},
     "method 'bagging': seed must be an integer >= 0 and <= 4294967295, not an integer of "
     "13 digits."),
    ({"method": "tpce", "min_leaf": 0}, "method 'tpce': " + MIN_LEAF),
    ({"min_leaf": 10**400}, "min_leaf: an integer of 401 digits is too large for a float."),
    ({"cp": float("inf")}, "the tree's cp must be a finite number >= 0, not inf."),
])
def test_the_estimator_checks_by_the_same_rules(params, message):
    from treecert import TreecertClassifier

    X = np.arange(40, dtype=float).reshape(20, 2)
    y = np.arange(20) % 2
    with pytest.raises(ParameterError) as info:
        TreecertClassifier(**params).fit(X, y)
    assert str(info.value) == message
