"""``treecert calibrate``: binning by hand, calibrated model files from the command line,
exact error lines, and interval-valued metrics through a real method."""

from __future__ import annotations

import io
import itertools
import json

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES, SAMPLE_DATA, make_dataset
from conftest import run_cli as run

from treecert import api
from treecert.evaluation.interval_metrics import auc_bounds_endpoints
from treecert.evaluation.metric_table import compute_metrics
from treecert.methods import make_method
from treecert.methods.binning import BinningCalibrator, out_of_fold
from treecert.tree.model import read_model

DATA = FIXTURES / "data"
DIABETES = SAMPLE_DATA / "diabetes.arff"


# ------------------------------------------------------------------------------ binning
def test_binning_by_hand_with_two_equal_frequency_bins():
    p1 = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
    y = np.array([0, 0, 1, 0, 1, 1, 0, 1])
    cal = BinningCalibrator(bins=2).fit(np.column_stack([1 - p1, p1]), y)
    np.testing.assert_allclose(cal.cuts[1], [0.5])
    np.testing.assert_allclose(cal.freq[1], [0.25, 0.75])  # class 1 in the low / high bin
    np.testing.assert_allclose(cal.freq[0], [0.25, 0.75])  # class 0 where p0 <= 0.5 / > 0.5
    # p1 = 0.35: class 1 -> 0.25, class 0 (p0 = 0.65) -> 0.75; already sums to 1
    np.testing.assert_allclose(cal.transform(np.array([[0.65, 0.35]])), [[0.75, 0.25]])
    again = BinningCalibrator.from_json(json.loads(json.dumps(cal.to_json())))
    np.testing.assert_array_equal(again.transform(np.array([[0.65, 0.35]])), [[0.75, 0.25]])


def test_binning_renormalises_and_keeps_the_base_when_all_bins_are_empty():
    cal = BinningCalibrator(bins=2)
    cal.cuts = [np.array([0.5])] * 3
    cal.freq = [np.array([0.0, 0.6]), np.array([0.1, 0.0]), np.array([0.0, 0.0])]
    cal.count = [np.ones(2)] * 3
    out = cal.transform(np.array([[0.7, 0.2, 0.1], [0.2, 0.7, 0.1]]))
    np.testing.assert_allclose(out, [[0.6 / 0.7, 0.1 / 0.7, 0.0], [0.2, 0.7, 0.1]])


def test_binning_fit_calibrates_on_out_of_fold_forecasts():
    from treecert.data.loading import load_dataset

    data = load_dataset(DIABETES)
    method = make_method("binning:base=laplace,cv=5").fit(data)
    oof = out_of_fold(make_method("laplace").spec, {}, data, 5, 1)
    ref = BinningCalibrator(0).fit(oof, data.y)
    for a, b in zip(method.calibrator_.cuts, ref.cuts, strict=True):
        np.testing.assert_array_equal(a, b)
    base = make_method("laplace").fit(data).predict(data).proba
    np.testing.assert_array_equal(method.predict(data).proba, ref.transform(base))


# ------------------------------------------------------------------------------ CLI
@pytest.fixture
def model_path(tmp_path, capsys):
    path = tmp_path / "m.json"
    code, _, _ = run(["train", DIABETES, "-o", path, "--leaf", "laplace", "-q"], capsys)
    assert code == 0
    return path


@pytest.mark.parametrize("method", ["binning:base=laplace,bins=5", "venn",
                                    "binning:base=naive_bayes"])
def test_calibrate_on_held_out_data_then_predict_from_files(method, model_path, tmp_path,
                                                            capsys):
    from treecert.data.loading import load_dataset

    data = load_dataset(DIABETES).subset(np.arange(0, 768, 6))  # 128 rows: quick
    small = tmp_path / "cal.csv"
    frame = pd.DataFrame(data.X, columns=data.schema.feature_names)
    frame["class"] = np.asarray(data.schema.classes)[data.y]
    frame.to_csv(small, index=False)
    cal_path = tmp_path / "cal.json"
    code, _, err = run(["calibrate", model_path, small, "--method", method, "-o", cal_path],
                       capsys)
    assert code == 0, err
    assert err.startswith(f"Calibrated {model_path}: method {method}; on 128 rows of")
    doc = json.loads(cal_path.read_text())
    assert doc["method"] == method and doc["calibration"]["source"] == "data"
    # the calibrated file round-trips, and predict applies the calibration by default
    assert api.model_json(read_model(cal_path)) == cal_path.read_text()
    code, out, _ = run(["predict", cal_path, small], capsys)
    assert code == 0
    frame = pd.read_csv(io.StringIO(out))
    model = read_model(model_path)
    runner = make_method(method)
    base_rows = np.flatnonzero(data.y >= 0)
    runner.calibrate(model, runner_base_proba(runner, model, data), data.y[base_rows],
                     data.weights[base_rows])
    expected = runner.predict(data)
    np.testing.assert_allclose(frame[["p_tested_negative", "p_tested_positive"]].to_numpy(),
                               expected.proba, atol=1e-12)
    if expected.lower is not None:
        np.testing.assert_allclose(frame["lower_tested_positive"], expected.lower[:, 1])
    # --method still overrides the calibration
    code, out, _ = run(["predict", cal_path, small, "--method", "laplace"], capsys)
    plain = api.predict(model, data, method="laplace")
    assert out.splitlines()[1] == plain.to_csv(index=False).splitlines()[1]


def runner_base_proba(runner, model, data):
    from treecert.methods.binning import make_base

    return make_base(runner.opts["base"], runner.spec.options, {}).adopt(model).predict(
        data).proba


def test_calibrate_with_cv_on_the_embedded_training_data(model_path, tmp_path, capsys):
    cal_path = tmp_path / "cal.json"
    code, _, err = run(["calibrate", model_path, "--cv", "5", "-o", cal_path], capsys)
    assert code == 0, err
    assert "on 5-fold out-of-fold forecasts of 768 training rows" in err
    model = read_model(cal_path)
    assert model.method == "binning" and model.calibration["source"] == "cv"
    from treecert.data.loading import load_dataset

    data = load_dataset(DIABETES)
    oof = out_of_fold(make_method("frequency").spec, {}, data, 5, 1)
    ref = BinningCalibrator(0).fit(oof, data.y)
    base = make_method("frequency").fit(data).predict(data).proba
    got = api.predict(model, data)
    np.testing.assert_allclose(got[["p_tested_negative", "p_tested_positive"]].to_numpy(),
                               ref.transform(base))


def test_calibrate_empirical_bayes_stores_the_prior(model_path, tmp_path, capsys):
    cal_path = tmp_path / "eb.json"
    code, _, err = run(["calibrate", model_path, "--method", "empirical_bayes", "--positive",
                        "tested_negative", "-o", cal_path], capsys)
    assert code == 0, err
    assert "(positive class 'tested_negative')" in err
    model = read_model(cal_path)
    state = model.calibration["state"]
    assert state["positive"] == "tested_negative"
    from treecert.data.loading import load_dataset

    data = load_dataset(DIABETES)
    frame = api.predict(model, data)
    assert {"m_ignorance", "lower_tested_positive", "upper_tested_positive"} <= set(frame)
    direct = make_method("empirical_bayes").fit(data)  # the same tree (default settings)
    np.testing.assert_allclose(
        frame[["p_tested_negative", "p_tested_positive"]].to_numpy(),
        direct.predict(data).proba, atol=1e-9)


@pytest.mark.parametrize("prune", ["ebp", "ccp,cv=5"])
def test_empirical_bayes_on_a_pruned_tree_fits_the_prior_on_the_pruned_leaves(
        prune, model_path, tmp_path, capsys):
    from treecert.data.loading import load_dataset
    from treecert.methods.empirical_bayes import fit_prior

    data = load_dataset(DIABETES)
    spec = f"empirical_bayes:prune={prune}"
    eb = make_method(spec).fit(data)
    pruned = make_method(f"frequency:prune={prune}").fit(data).model_.tree_
    unpruned = make_method("frequency").fit(data).model_.tree_
    assert eb.size == pruned.n_leaves < unpruned.n_leaves
    np.testing.assert_array_equal(eb.prior_, fit_prior(pruned.counts[pruned.is_leaf]))
    # calibrate stores the pruned tree with its prior; predict from the file alone
    cal_path = tmp_path / "eb.json"
    code, _, err = run(["calibrate", model_path, "--method", spec, "-o", cal_path], capsys)
    assert code == 0, err
    model = read_model(cal_path)
    assert model.estimator.tree_.n_leaves == pruned.n_leaves
    assert model.pruning is not None
    np.testing.assert_array_equal(model.calibration["state"]["prior"], eb.prior_)
    np.testing.assert_allclose(api.predict(model, data)[["p_tested_negative",
                                                         "p_tested_positive"]].to_numpy(),
                               eb.predict(data).proba, atol=1e-12)


def test_calibrate_venn_without_data_is_the_transductive_machine(model_path, tmp_path, capsys):
    cal_path = tmp_path / "v.json"
    code, _, err = run(["calibrate", model_path, "--method", "venn:taxonomy=leaf", "-o",
                        cal_path], capsys)
    assert code == 0, err
    assert "transductive, on the embedded training data" in err
    small = tmp_path / "few.csv"
    pd.DataFrame({"preg": [1, 8], "plas": [85, 183], "pres": [66, 64], "skin": [29, 0],
                  "insu": [0, 0], "mass": [26.6, 23.3], "pedi": [0.351, 0.672],
                  "age": [31, 32]}).to_csv(small, index=False)
    code, out, _ = run(["predict", cal_path, small], capsys)
    assert code == 0
    assert out.splitlines()[0].endswith("upper_tested_negative,upper_tested_positive")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--method", "naive_bayes", "-o", "{t}/x.json"],
         "Error: 'naive_bayes' is not a calibration method. Choose one of: binning, venn, "
         "empirical_bayes, bagging, calibrated_bagging, forest."),
        (["--cv", "3", "--method", "calibrated_bagging", "-o", "{t}/x.json"],
         "Error: calibrated_bagging calibrates out of bag, which is already cross-fitted; "
         "--cv does not apply. Drop --cv (or give held-out DATA)."),
        (["{d}", "--method", "empirical_bayes", "-o", "{t}/x.json"],
         "Error: empirical_bayes fits its prior on the model's own leaves and takes no "
         "calibration data. Drop DATA and --cv."),
        (["--method", "binning", "-o", "{t}/x.json"],
         "Error: binning needs calibration data. Give held-out DATA, or --cv K to use the "
         "training data."),
        (["{d}", "--cv", "3", "-o", "{t}/x.json"],
         "Error: give calibration DATA or --cv, not both."),
        (["{d}", "--positive", "yes", "-o", "{t}/x.json"],
         "Error: --positive applies to empirical_bayes, not to 'binning'."),
        (["--method", "venn:taxonomy=tree", "-o", "{t}/x.json"],
         "Error: venn: unknown taxonomy 'tree'. Choose forecast or leaf."),
    ],
)
def test_calibrate_errors_are_one_line_with_exit_2(args, line, model_path, tmp_path, capsys):
    argv = [a.format(d=DIABETES, t=tmp_path) for a in args]
    code, _, err = run(["calibrate", model_path, *argv], capsys)
    assert code == 2
    assert err.strip() == line
    assert not (tmp_path / "x.json").exists()


def test_calibration_data_without_the_class(tmp_path, capsys):
    model = tmp_path / "w.json"
    run(["train", DATA / "weather_train.csv", "-o", model, "--min-leaf", "1", "-q"], capsys)
    code, _, err = run(["calibrate", model, DATA / "test_no_class.csv", "-o",
                        tmp_path / "x.json"], capsys)
    assert code == 2
    assert err.strip() == (f"Error: {DATA}/test_no_class.csv: the calibration data has no "
                           "class column 'play'.")


def test_cv_needs_embedded_training_data(tmp_path, capsys):
    model = tmp_path / "m.json"
    run(["train", DIABETES, "-o", model, "--no-embed-data", "-q"], capsys)
    code, _, err = run(["calibrate", model, "--cv", "5", "-o", tmp_path / "x.json"], capsys)
    assert code == 2
    assert err.strip() == ("Error: --cv needs the training data, but the model was saved "
                           "with --no-embed-data. Give held-out calibration DATA instead.")


# ------------------------------------------------------------------------------ metrics
def test_interval_metrics_of_a_real_method_equal_brute_force():
    # empirical_bayes with the paper's interval on a handful of test rows: the exact bounds
    # that evaluate reports equal min/max over every joint choice of p1 on a grid holding
    # every interval end.
    x = [1.0, 1.5, 2.0, 2.2, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0]
    y = ["no", "yes", "no", "no", "yes", "yes", "yes", "yes", "no", "yes"]
    train = make_dataset({"x": x}, y)
    test = make_dataset({"x": [1.2, 2.1, 3.2, 5.5, None]}, ["no", "yes", "yes", "no", "yes"])
    pred = make_method("empirical_bayes:min_leaf=1,interval=paper").fit(train).predict(test)
    yy = test.y
    got = compute_metrics(yy, pred.proba, lower=pred.lower, upper=pred.upper)
    lo1, hi1 = pred.lower[:, 1], pred.upper[:, 1]
    ends = np.concatenate([lo1, hi1])
    grids = [np.unique(np.r_[np.linspace(a, b, 4), ends[(ends >= a) & (ends <= b)]])
             for a, b in zip(lo1, hi1, strict=True)]
    p1 = np.array(list(itertools.product(*grids)))
    briers = (2 * (p1 - yy) ** 2).mean(axis=1)
    logs = -np.log(np.clip(np.where(yy == 1, p1, 1 - p1), 1e-15, 1)).mean(axis=1)
    d = p1[:, yy == 1][:, :, None] - p1[:, yy == 0][:, None, :]
    aucs = ((d > 0) + 0.5 * (d == 0)).mean(axis=(1, 2))
    assert got["brier_low"] == pytest.approx(briers.min(), abs=1e-12)
    assert got["brier_high"] == pytest.approx(briers.max(), abs=1e-12)
    assert got["log_loss_low"] == pytest.approx(logs.min(), abs=1e-12)
    assert got["log_loss_high"] == pytest.approx(logs.max(), abs=1e-12)
    assert got["auc_low"] == pytest.approx(aucs.min(), abs=1e-12)
    assert got["auc_high"] == pytest.approx(aucs.max(), abs=1e-12)
    e_lo, e_hi = auc_bounds_endpoints(yy, pred.lower, pred.upper)
    assert got["auc_low"] <= e_lo <= e_hi <= got["auc_high"]


def test_evaluate_reports_interval_metrics_and_endpoint_auc(capsys):
    code, out, err = run(["evaluate", SAMPLE_DATA / "weather.numeric.arff", "--method",
                          "empirical_bayes:min_leaf=1", "--method", "venn:taxonomy=leaf",
                          "--method", "laplace", "--folds", "3", "--interval-auc", "endpoints",
                          "--no-timing", "-q"], capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out)).set_index("method")
    cols = ["brier_low", "brier_high", "log_loss_low", "log_loss_high", "auc_low", "auc_high",
            "auc_low_endpoints", "auc_high_endpoints"]
    assert frame.loc["venn:taxonomy=leaf", cols].notna().all()
    assert frame.loc["laplace", cols].isna().all()
    for m in ("empirical_bayes:min_leaf=1", "venn:taxonomy=leaf"):
        r = frame.loc[m]
        assert r.brier_low <= r.brier_high and r.log_loss_low <= r.log_loss_high
        assert r.auc_low <= r.auc_low_endpoints <= r.auc_high_endpoints <= r.auc_high
    # venn's bounds contain its probabilities, so its metrics lie within their bounds; the
    # empirical-Bayes default (Eq. 4) is centred on the uncorrected estimate instead
    r = frame.loc["venn:taxonomy=leaf"]
    assert r.brier_low <= r.brier <= r.brier_high


def test_a_corrupt_calibration_state_is_one_line(model_path, tmp_path, capsys):
    cal_path = tmp_path / "cal.json"
    run(["calibrate", model_path, "--cv", "3", "-o", cal_path, "-q"], capsys)
    doc = json.loads(cal_path.read_text())
    doc["calibration"]["state"]["classes"][0]["freq"] = [1.0]
    cal_path.write_text(json.dumps(doc))
    code, _, err = run(["predict", cal_path, DIABETES], capsys)
    assert code == 2
    assert err.strip() == (f"Error: {cal_path}: the model's calibration state is corrupt "
                           "(bins and frequencies do not fit together). Calibrate the original "
                           "model again with 'treecert calibrate'.")


def test_calibrated_bagging_stores_its_temperature(model_path, tmp_path, capsys):
    out = tmp_path / "cb.json"
    spec = "calibrated_bagging:trees=4"
    code, _, err = run(["calibrate", model_path, "--method", spec, "-o", out], capsys)
    assert code == 0, err
    assert "out of bag on 768 training rows; temperature" in err
    model = read_model(out)
    assert model.calibration["source"] == "oob"
    t = model.calibration["state"]["temperature"]
    from treecert.data.loading import load_dataset

    data = load_dataset(DIABETES)
    fitted = make_method(spec).fit(data)
    assert t == pytest.approx(fitted.temperature_, rel=1e-12)
    # predict applies the stored temperature by default; a changed state changes the output
    default = api.predict(model, data)
    np.testing.assert_allclose(default[["p_tested_negative", "p_tested_positive"]],
                               fitted.predict(data).proba)
    model.calibration["state"]["temperature"] = 2 * t
    sharper = api.predict(model, data)
    assert not np.allclose(sharper["p_tested_positive"], default["p_tested_positive"])
    # on held-out data: the temperature of the full ensemble's forecasts on that data
    code, _, err = run(["calibrate", model_path, DIABETES, "--method", spec, "-o", out], capsys)
    assert code == 0, err
    held = read_model(out).calibration
    assert held["source"] == "data" and held["n_samples"] == 768
    from treecert.methods.calibrated_bagging import fit_temperature

    mean = np.mean([tr.predict_proba(data) for tr in fitted.trees_], axis=0)
    assert held["state"]["temperature"] == pytest.approx(fit_temperature(mean, data.y),
                                                         rel=1e-12)
