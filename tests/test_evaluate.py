"""The experiment engine: metrics agree with scikit-learn computed from predictions.csv,
folds files reproduce the exact splits, same seed gives the same bytes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLE_DATA, make_dataset

from treecert.cli.main import main
from treecert.data.folds import read_fold_ids, stratified_folds
from treecert.data.loading import load_dataset
from treecert.evaluation.experiment import Protocol, evaluate


@pytest.mark.parametrize("name", ["credit-g", "iris", "soybean"])
def test_metrics_equal_sklearn_from_predictions_csv(name, tmp_path):
    skm = pytest.importorskip("sklearn.metrics")
    out = tmp_path / "ev"
    assert main(["evaluate", str(SAMPLE_DATA / f"{name}.arff"), "--method", "frequency",
                 "--method", "laplace", "-o", str(out), "-q"]) == 0
    preds = pd.read_csv(out / "predictions.csv")
    metrics = pd.read_csv(out / "metrics.csv").set_index("method")
    classes = [c[2:] for c in preds.columns if c.startswith("p_")]
    for method, frame in preds.groupby("method"):
        y = frame["actual"].map({c: i for i, c in enumerate(classes)}).to_numpy()
        p = frame[[f"p_{c}" for c in classes]].to_numpy()
        onehot = np.eye(len(classes))[y]
        row = metrics.loc[method]
        assert row["brier"] == pytest.approx(np.mean(np.sum((p - onehot) ** 2, axis=1)))
        if len(classes) == 2:
            assert row["brier"] == pytest.approx(2 * skm.brier_score_loss(y, p[:, 1]))
        assert row["log_loss"] == pytest.approx(
            skm.log_loss(y, np.clip(p, 1e-15, 1), labels=range(len(classes))))
        present = np.unique(y)
        if len(classes) == 2:
            auc = skm.roc_auc_score(y, p[:, 1])
        else:
            auc = np.mean([skm.roc_auc_score(y == k, p[:, k]) for k in present])
        assert row["auc"] == pytest.approx(auc)
        correct = (frame["actual"] == frame["predicted"]).to_numpy()
        assert row["auc_reliability"] == pytest.approx(
            skm.roc_auc_score(correct, frame["certainty"]))
        assert row["accuracy"] == pytest.approx(correct.mean())


@pytest.mark.parametrize("name", ["iris", "credit-g", "soybean", "weather.nominal"])
def test_default_stratification_reproduces_the_datasets_folds_files(name):
    data = load_dataset(SAMPLE_DATA / f"{name}.arff")
    ids = read_fold_ids((SAMPLE_DATA / f"{name}.folds.csv").read_text(), data.n_samples, name)
    np.testing.assert_array_equal(stratified_folds(data.y, 10, seed=1), ids)


def test_folds_file_gives_exact_splits_and_same_bytes(tmp_path):
    data = SAMPLE_DATA / "vote.arff"
    folds = SAMPLE_DATA / "vote.folds.csv"
    outs = []
    for k in range(2):
        out = tmp_path / f"run{k}"
        assert main(["evaluate", str(data), "--method", "laplace", "--folds-file", str(folds),
                     "-o", str(out), "--no-timing", "-q"]) == 0
        outs.append(out)
    for f in ("predictions.csv", "metrics.csv", "metrics.json"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes()
    preds = pd.read_csv(outs[0] / "predictions.csv")
    ids = np.loadtxt(folds, dtype=int)
    np.testing.assert_array_equal(preds.sort_values("row")["fold"].to_numpy(), ids)


def test_jobs_do_not_change_output():
    data = load_dataset(SAMPLE_DATA / "labor.arff")
    a = evaluate(data, ["laplace", "bagging"], timing=False)
    b = evaluate(data, ["laplace", "bagging"], timing=False, jobs=2)
    assert a.predictions.equals(b.predictions)
    assert a.metrics.equals(b.metrics)


def test_loo_and_repeats_and_test_file():
    data = make_dataset({"x": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}, [0, 0, 0, 1, 0, 1, 1, 1, 0, 1])
    loo = evaluate(data, ["laplace:min_leaf=1", "tpce:min_leaf=1"], protocol=Protocol("loo"))
    assert len(loo.predictions) == 20
    assert sorted(set(loo.predictions["fold"])) == list(range(10))
    rep = evaluate(data, ["laplace"], protocol=Protocol("cv", n_folds=2, repeats=3))
    assert rep.metrics.loc[0, "repeats"] == 3
    assert len(rep.predictions) == 30
    held = evaluate(data, ["laplace"], protocol=Protocol("test", test=data))
    assert held.metrics.loc[0, "n_test"] == 10


def test_method_text_is_written_exactly_as_given(tmp_path):
    out = tmp_path / "ev"
    assert main(["evaluate", str(SAMPLE_DATA / "iris.arff"), "--method", "laplace:alpha=0.5",
                 "-o", str(out), "-q"]) == 0
    assert set(pd.read_csv(out / "predictions.csv")["method"]) == {"laplace:alpha=0.5"}
    assert json.loads((out / "metrics.json").read_text())[0]["method"] == "laplace:alpha=0.5"


def test_expected_loss_metric(tmp_path):
    loss = tmp_path / "loss.yaml"
    loss.write_text("loss:\n  good: {good: 0, bad: 1}\n  bad: {good: 5, bad: 0}\n")
    out = tmp_path / "ev"
    assert main(["evaluate", str(SAMPLE_DATA / "credit-g.arff"), "--method", "laplace",
                 "--loss", str(loss), "-o", str(out), "-q"]) == 0
    assert "expected_loss" in pd.read_csv(out / "metrics.csv").columns


def test_compare_prints_paper_table(tmp_path, capsys):
    runs = []
    for name in ("iris", "labor", "vote"):
        out = tmp_path / name
        main(["evaluate", str(SAMPLE_DATA / f"{name}.arff"), "--method", "frequency",
              "--method", "laplace", "-o", str(out), "-q"])
        runs.append(str(out))
    capsys.readouterr()
    assert main(["compare", *runs, "-o", str(tmp_path / "cmp"), "-q"]) == 0
    md = capsys.readouterr().out
    assert "| auc | frequency | laplace |" in md
    pairs = pd.read_csv(tmp_path / "cmp" / "comparison.csv")
    assert set(pairs["metric"]) >= {"brier", "auc", "auc_reliability"}
    assert (pairs[["wins", "ties", "losses"]].sum(axis=1) == 3).all()
