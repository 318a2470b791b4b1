"""The command line's options through its real entry point: --version, choice lists, one
spelling per name, compare's data options, --j48, predict --format arff, --nominal kept in
the model, attributes without a known value left out as J48 does."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pandas as pd
from conftest import FIXTURES, SAMPLE_DATA
from conftest import run_cli as run

from treecert.cli import options

DATA = FIXTURES / "data"
WEATHER = SAMPLE_DATA / "weather.numeric.arff"


def test_version(capsys):
    from treecert._version import __version__

    assert run(["--version"], capsys)[:2] == (0, f"treecert {__version__}\n")


def test_choice_lists_equal_the_library_constants():
    from typing import get_args

    from treecert.pruning.common import PRUNE_METHODS
    from treecert.tree.leaf_estimates import LEAF_ESTIMATES
    from treecert.tree.split_search import CRITERIA, THRESHOLD_RULES

    assert get_args(options.CriterionName) == CRITERIA
    assert get_args(options.ThresholdRule) == THRESHOLD_RULES
    assert get_args(options.LeafName) == LEAF_ESTIMATES
    assert get_args(options.PruneName) == PRUNE_METHODS
    from treecert.evaluation.stats import METRIC_DIRECTION
    from treecert.methods import METHODS

    assert options.METHOD_NAMES == tuple(METHODS)
    assert options.METRIC_NAMES == tuple(METRIC_DIRECTION)


def _help(command: str, capsys) -> str:
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0
    return " ".join(out.split())  # unwrapped


def test_help_shows_choices_and_registered_names(capsys):
    from treecert.evaluation.stats import METRIC_DIRECTION
    from treecert.methods import METHODS

    train = _help("train", capsys)
    for choices in ("<info_gain|gain_ratio|gini>", "<midpoint|lower|j48>",
                    "<frequency|laplace|m_estimate>", "<none|ccp|ebp|laplace_loss|kl|rep>"):
        assert choices in train
    assert "<none|ccp|ebp|laplace_loss|kl|rep>" in _help("prune", capsys)
    assert "<text|dot|json>" in _help("show", capsys)
    predict = _help("predict", capsys)
    assert "<csv|arff>" in predict
    for command in ("evaluate", "compare"):
        text = _help(command, capsys)
        assert "<equal_width|mdl>" in text and "<exact|endpoints>" in text
        for name in (*METHODS, *(METRIC_DIRECTION if command == "compare" else ())):
            assert re.search(rf"\b{name}\b", text), (command, name)
    assert all(re.search(rf"\b{name}\b", predict) for name in METHODS)
    calibrate = _help("calibrate", capsys)
    assert re.search(r"-o, --output <str> .*\[required\]", calibrate)


def test_bad_choice_is_a_usage_error(capsys, tmp_path):
    code, _, err = run(["train", WEATHER, "-o", tmp_path / "m.json", "--criterion", "nope"],
                       capsys)
    assert code == 2
    assert "Invalid value for '--criterion'" in err
    assert "'nope' is not one of 'info_gain', 'gain_ratio', 'gini'." in err


def test_m_estimate_is_one_spelling_the_old_one_warns(capsys, tmp_path):
    model = tmp_path / "m.json"
    code, _, err = run(["train", WEATHER, "-o", model, "--leaf", "m-estimate"], capsys)
    assert code == 0
    assert err.splitlines()[0] == ("Warning: --leaf m-estimate is deprecated; write m_estimate "
                                   "(the method's name everywhere else).")
    assert json.loads(model.read_text())["method"] == "m_estimate"
    code, _, err = run(["train", WEATHER, "-o", model, "--leaf", "m_estimate", "-q"], capsys)
    assert (code, err) == (0, "")


def test_threshold_means_one_thing(capsys, tmp_path):
    model, pruned = tmp_path / "m.json", tmp_path / "p.json"
    assert run(["train", WEATHER, "-o", model, "-q"], capsys)[0] == 0
    code, _, err = run(["prune", model, "--method", "kl", "--threshold", "0.1", "-o", pruned],
                       capsys)
    assert code == 2 and "No such option: --threshold" in err
    assert run(["prune", model, "--method", "kl", "--kl-threshold", "0.1", "-o", pruned, "-q"],
               capsys)[0] == 0
    assert json.loads(pruned.read_text())["pruning"]["method"] == "kl"


def test_calibrate_needs_output(capsys, tmp_path):
    model = tmp_path / "m.json"
    assert run(["train", WEATHER, "-o", model, "-q"], capsys)[0] == 0
    code, _, err = run(["calibrate", model, "--method", "binning"], capsys)
    assert code == 2 and "Missing option '-o'" in err


def test_j48_is_the_four_flags(capsys, tmp_path):
    one, four = tmp_path / "j48.json", tmp_path / "four.json"
    data = SAMPLE_DATA / "labor.arff"
    assert run(["train", data, "-o", one, "--j48", "-q"], capsys)[0] == 0
    assert run(["train", data, "-o", four, "--criterion", "gain_ratio", "--threshold", "j48",
                "--collapse", "--prune", "ebp", "--cf", "0.25", "-q"], capsys)[0] == 0
    assert one.read_bytes() == four.read_bytes()
    doc = json.loads(one.read_text())
    assert doc["pruning"]["method"] == "ebp"
    assert doc["params"]["criterion"] == "gain_ratio"
    # J48's own options combine with the preset (-C 0.1); a contradiction is refused
    assert run(["train", data, "-o", one, "--j48", "--cf", "0.1", "-q"], capsys)[0] == 0
    assert json.loads(one.read_text())["pruning"]["options"]["cf"] == 0.1
    # J48 -U -M 2 -A, the settings of docs/j48-parity.md
    assert run(["train", data, "-o", one, "--j48", "--prune", "none", "--leaf", "laplace",
                "-q"], capsys)[0] == 0
    assert run(["train", data, "-o", four, "--criterion", "gain_ratio", "--threshold", "j48",
                "--collapse", "--leaf", "laplace", "-q"], capsys)[0] == 0
    assert one.read_bytes() == four.read_bytes()
    code, _, err = run(["train", data, "-o", one, "--j48", "--criterion", "gini"], capsys)
    assert code == 2
    assert err.strip() == ("Error: --j48 sets --criterion gain_ratio, but --criterion gini was "
                           "given. Drop --criterion or --j48.")


def test_j48_in_evaluate_prunes_every_method_that_prunes(capsys):
    code, out, _ = run(["evaluate", WEATHER, "--method", "laplace", "--method",
                        "frequency:prune=none", "--method", "naive_bayes", "--j48",
                        "--folds", "2", "--no-timing", "-q"], capsys)
    assert code == 0
    methods = pd.read_csv(pd.io.common.StringIO(out))["method"].tolist()
    assert methods == ["laplace:prune=ebp,cf=0.25", "frequency:prune=none", "naive_bayes"]


def test_compare_has_evaluate_data_options(capsys, tmp_path):
    loss = tmp_path / "loss.yaml"
    loss.write_text("loss:\n  yes: {yes: 0, no: 1}\n  no: {yes: 5, no: 0}\n")
    args = ["--method", "frequency", "--method", "laplace", "--class", "play",
            "--ignore", "windy", "--nominal", "temperature", "--loss", loss, "--folds", "2",
            "--no-timing", "-q"]
    code, out, _ = run(["compare", "--data", DATA / "weather_train.csv", *args,
                        "--metric", "expected_loss", "-o", tmp_path / "c"], capsys)
    assert code == 0
    metrics = pd.read_csv(tmp_path / "c" / "metrics.csv")
    assert metrics["expected_loss"].notna().all()
    code, ev, _ = run(["evaluate", DATA / "weather_train.csv", *args], capsys)
    assert code == 0
    pd.testing.assert_frame_equal(metrics.drop(columns="dataset"),
                                  pd.read_csv(pd.io.common.StringIO(ev)).drop(columns="dataset"))
    assert ("A wins where it is better (lower for expected_loss)." in out)


def test_compare_data_dir_skips_files_that_are_not_training_data(capsys, tmp_path):
    for name in ("weather.nominal.arff", "iris_new.csv"):
        shutil.copy(SAMPLE_DATA / name, tmp_path)
    code, _, err = run(["compare", "--data-dir", tmp_path, "--method", "frequency",
                        "--method", "laplace"], capsys)
    assert code == 0
    assert err.splitlines()[0] == (f"Warning: skipping {tmp_path}/iris_new.csv: --folds 10 is "
                                   "more than the 6 labelled rows. Use --loo or fewer folds.")
    code, _, err = run(["compare", "--data", tmp_path / "iris_new.csv", "--method",
                        "frequency"], capsys)
    assert code == 2
    assert err.strip() == (f"Error: {tmp_path}/iris_new.csv: --folds 10 is more than the 6 "
                           "labelled rows. Use --loo or fewer folds.")


def test_plots_checks_matplotlib_before_any_work(capsys, tmp_path, monkeypatch):
    from treecert.errors import ConfigError
    from treecert.evaluation import plots

    def no_matplotlib(option="--plots"):
        raise ConfigError(f"{option} needs matplotlib, which is not installed.")

    monkeypatch.setattr(plots, "require_matplotlib", no_matplotlib)
    code, _, err = run(["evaluate", tmp_path / "not-read.arff", "--method", "laplace",
                        "--plots", "-o", tmp_path / "out"], capsys)
    assert (code, err) == (2, "Error: --plots needs matplotlib, which is not installed.\n")


def test_dot_labels_break_lines(capsys, tmp_path):
    model = tmp_path / "m.json"
    assert run(["train", WEATHER, "-o", model, "-q"], capsys)[0] == 0
    dot = run(["show", model, "--format", "dot"], capsys)[1]
    assert '\\n[' in dot and '\\\\n' not in dot


def test_attributes_without_known_values_are_left_out_as_j48_does(capsys, tmp_path):
    model = tmp_path / "m.json"
    data = DATA / "all_missing_attribute.arff"
    code, _, err = run(["train", data, "-o", model], capsys)
    assert code == 0
    assert err.splitlines()[0] == (f"Warning: {data}: attribute 'department 1/a' has no known "
                                   "values (all 6 missing); left out, as J48 does.")
    names = [a["name"] for a in json.loads(model.read_text())["schema"]["attributes"]]
    assert names == ["outlook", "windy"]
    code, out, _ = run(["predict", model, data], capsys)
    assert code == 0 and len(out.splitlines()) == 7
    assert run(["evaluate", data, "--method", "laplace", "--folds", "2", "-q"], capsys)[0] == 0


def test_predict_arff_is_weka_readable_and_reads_back(capsys, tmp_path):
    from treecert.data.loading import load_dataset

    model, arff = tmp_path / "iris.json", tmp_path / "pred.arff"
    assert run(["train", SAMPLE_DATA / "iris.arff", "-o", model, "--leaf", "laplace", "-q"],
               capsys)[0] == 0
    code, csv, _ = run(["predict", model, SAMPLE_DATA / "iris.arff"], capsys)
    assert code == 0
    assert run(["predict", model, SAMPLE_DATA / "iris.arff", "--format", "arff", "-o", arff,
                "--chunk-size", "1000", "-q"], capsys)[0] == 0
    text = arff.read_text()
    assert text.count("@data") == 1
    assert "@attribute classification {Iris-setosa,Iris-versicolor,Iris-virginica}" in text
    back = load_dataset(arff, class_name="classification")
    frame = pd.read_csv(pd.io.common.StringIO(csv))
    names = back.schema.feature_names
    assert names[4] == "class" and names[5:8] == [f"distribution_{c}" for c in
                                                   back.schema.classes]
    assert np.array(back.schema.classes)[back.y].tolist() == frame["predicted"].tolist()
    for c in back.schema.classes:
        np.testing.assert_array_equal(back.X[:, names.index(f"distribution_{c}")],
                                      frame[f"p_{c}"])
    np.testing.assert_array_equal(back.X[:, names.index("certainty")], frame["certainty"])
    parts = [tmp_path / f"part-{i}.arff" for i in range(2)]
    for i, part in enumerate(parts):
        assert run(["predict", model, SAMPLE_DATA / "iris.arff", "--format", "arff",
                    "--shard", f"{i}/2", "-o", part, "-q"], capsys)[0] == 0
    assert run(["merge", *parts, "-o", tmp_path / "merged.arff", "-q"], capsys)[0] == 0
    assert (tmp_path / "merged.arff").read_text() == text
    code, out, _ = run(["predict", model, SAMPLE_DATA / "iris_new.csv", "--id", "id",
                        "--format", "arff"], capsys)
    assert code == 0
    assert "@attribute id string" in out and "@attribute class " not in out
    assert out.splitlines()[-1].startswith("f6,6.7,3,5,1.8,")


def test_nominal_conversion_is_kept_in_the_model(capsys, tmp_path):
    model = tmp_path / "m.json"
    assert run(["train", WEATHER, "--nominal", "temperature", "-o", model, "-q"],
               capsys)[0] == 0
    doc = json.loads(model.read_text())
    temperature = doc["schema"]["attributes"][1]
    assert temperature["kind"] == "nominal" and temperature["nominal_from"] == "numeric"
    code, out, _ = run(["predict", model, WEATHER], capsys)
    assert code == 0 and len(out.splitlines()) == 15
    csv = tmp_path / "weather.csv"  # the same data as CSV: its numbers match the labels
    csv.write_text("outlook,temperature,humidity,windy,play\nsunny,85,85,FALSE,no\n")
    assert run(["predict", model, csv], capsys)[1].splitlines()[1] == out.splitlines()[1]
    del temperature["nominal_from"]  # a model from before the field: refused as before
    model.write_text(json.dumps(doc))
    code, _, err = run(["predict", model, WEATHER], capsys)
    assert code == 2 and "is numeric here but nominal in the model" in err
