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
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["metrics"][0]["method"] == "laplace:alpha=0.5"
    assert doc["run"]["methods"] == ["laplace:alpha=0.5"]


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


# ---------------------------------------------------------------- outputs that explain
WEATHER = str(SAMPLE_DATA / "weather.numeric.arff")
EVAL3 = ["evaluate", WEATHER, "--method", "laplace", "--method", "tpce", "--folds", "3",
         "--no-timing", "-q"]
RUN_FILES = ("predictions.csv", "metrics.csv", "metrics.json", "metrics_folds.csv",
             "metrics_summary.csv")


def test_per_fold_metrics_summary_and_run_metadata(tmp_path):
    from treecert._version import __version__
    from treecert.tree.model import data_sha256

    out = tmp_path / "ev"
    assert main([*EVAL3, "--seed", "3", "-o", str(out)]) == 0
    folds = pd.read_csv(out / "metrics_folds.csv")
    assert list(folds.columns[:5]) == ["dataset", "method", "repeat", "fold", "n_test"]
    assert {"brier", "auc", "accuracy", "leaves"} <= set(folds.columns)
    assert len(folds) == 6 and folds.groupby("method")["n_test"].sum().tolist() == [14, 14]
    # each fold's metrics are those of its own rows in predictions.csv
    preds = pd.read_csv(out / "predictions.csv")
    for _, row in folds.iterrows():
        mine = preds[(preds["method"] == row["method"]) & (preds["fold"] == row["fold"])]
        assert row["accuracy"] == pytest.approx((mine["actual"] == mine["predicted"]).mean())
    summary = pd.read_csv(out / "metrics_summary.csv")
    assert list(summary.columns) == ["dataset", "method", "metric", "folds", "mean", "std",
                                     "min", "max"]
    brier = summary[(summary["method"] == "tpce") & (summary["metric"] == "brier")].iloc[0]
    values = folds.loc[folds["method"] == "tpce", "brier"]
    assert brier["folds"] == 3
    assert brier["mean"] == pytest.approx(values.mean())
    assert brier["std"] == pytest.approx(values.std(ddof=1))
    # metrics.csv keeps its columns; metrics.json says what the run was
    assert list(pd.read_csv(out / "metrics.csv").columns[:3]) == ["dataset", "method",
                                                                  "accuracy"]
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["format"] == "treecert-metrics" and doc["version"] == 1
    run = doc["run"]
    data = load_dataset(WEATHER)
    assert run["treecert_version"] == __version__
    assert run["dataset"] == {"name": "weather.numeric", "rows": 14,
                              "sha256": data_sha256(data.X, data.y, data.weights)}
    assert run["protocol"] == {"kind": "cv", "seed": 3, "folds": 3, "repeats": 1}
    assert run["methods"] == ["laplace", "tpce"]
    assert run["tree_params"]["min_leaf"] == 2.0 and run["timing"] is False
    assert [m["method"] for m in doc["metrics"]] == ["laplace", "tpce"]


def test_new_files_are_byte_identical_across_reruns_shards_and_resume(tmp_path):
    for name in ("a", "b"):
        assert main([*EVAL3, "-o", str(tmp_path / name)]) == 0
    for i in range(2):
        assert main([*EVAL3, "--shard", f"{i}/2", "-o", str(tmp_path / f"s{i}")]) == 0
    assert main(["merge", str(tmp_path / "s0"), str(tmp_path / "s1"),
                 "-o", str(tmp_path / "merged"), "-q"]) == 0
    # a run interrupted after half its units (shard 1/2's), then resumed
    assert main([*EVAL3, "--resume", "-o", str(tmp_path / "s1")]) == 0
    for other in ("b", "merged", "s1"):
        for f in RUN_FILES:
            assert (tmp_path / "a" / f).read_bytes() == (tmp_path / other / f).read_bytes(), f


def test_leave_one_out_writes_no_per_fold_metrics(tmp_path):
    out = tmp_path / "loo"
    assert main(["evaluate", WEATHER, "--method", "laplace", "--loo", "-o", str(out),
                 "-q"]) == 0
    assert not (out / "metrics_folds.csv").exists()
    assert not (out / "metrics_summary.csv").exists()
    assert json.loads((out / "metrics.json").read_text())["run"]["protocol"]["kind"] == "loo"


def test_reliability_and_roc_pngs_and_labelled_scatter(tmp_path, monkeypatch):
    axes = pytest.importorskip("matplotlib.axes")
    out = tmp_path / "ev"
    assert main(["evaluate", str(SAMPLE_DATA / "iris.arff"), "--method", "laplace",
                 "--method", "frequency", "--folds", "3", "--no-timing", "--plots",
                 "-o", str(out), "-q"]) == 0
    assert sorted(p.name for p in out.glob("*.png")) == ["reliability.png", "roc.png"]
    assert (out / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    labels = []
    original = axes.Axes.annotate
    monkeypatch.setattr(axes.Axes, "annotate",
                        lambda self, text, *a, **k: labels.append(text) or
                        original(self, text, *a, **k))
    assert main(["compare", "--data", WEATHER, "--data", str(SAMPLE_DATA / "labor.arff"),
                 "--method", "laplace", "--method", "frequency", "--metric", "brier",
                 "--no-timing", "--plots", "-o", str(tmp_path / "cmp"), "-q"]) == 0
    assert sorted(labels) == ["labor", "weather.numeric"]
    assert len(list((tmp_path / "cmp").glob("scatter_*.png"))) == 1


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_plots_check_matplotlib_before_any_work(command, tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    args = [WEATHER] if command == "evaluate" else ["--data", WEATHER]
    out = tmp_path / "out"
    code = main([command, *args, "--method", "laplace", "--plots", "-o", str(out), "-q"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "Error: --plots needs matplotlib, which is not installed. Install it with: pip "
        "install 'treecert[plot]'.")
    assert not out.exists()


def test_repeat_with_a_fold_file_runs_every_repeat(tmp_path, capsys):
    """--repeat 3 with a fold file runs 3 repeats: repeat 0 on the file's folds, repeats
    1 and 2 on new stratified folds (seed + repeat), said on stderr and in metrics.json."""
    from conftest import DATASETS, run_cli

    data, ff = DATASETS / "iris.arff", DATASETS / "iris.folds.csv"
    out = tmp_path / "ev"
    code, _, err = run_cli(["evaluate", data, "--folds-file", ff, "--repeat", "3",
                            "--method", "laplace", "--no-timing", "-o", out], capsys)
    assert code == 0
    assert ("iris: repeat 0 uses the folds of " + str(ff) + "; repeats 1-2 use new "
            "stratified 10-fold splits (seed 1 + repeat).") in err
    folds = pd.read_csv(out / "metrics_folds.csv")
    assert sorted(folds["repeat"].unique()) == [0, 1, 2]
    assert len(folds) == 30
    assert pd.read_csv(out / "metrics.csv")["repeats"].tolist() == [3]
    proto = json.loads((out / "metrics.json").read_text())["run"]["protocol"]
    assert proto["kind"] == "folds" and proto["repeats"] == 3
    assert proto["later_repeats"] == "stratified folds, seed + repeat"
    # repeat 0 is the file's folds: its fold metrics equal a single run's
    single = tmp_path / "one"
    assert run_cli(["evaluate", data, "--folds-file", ff, "--method", "laplace",
                    "--no-timing", "-o", single], capsys)[0] == 0
    one = pd.read_csv(single / "metrics_folds.csv")
    pd.testing.assert_frame_equal(folds[folds["repeat"] == 0].reset_index(drop=True),
                                  one, check_dtype=False)


def test_compare_repeat_with_fold_files_runs_every_repeat(tmp_path, capsys):
    from conftest import DATASETS, run_cli

    out = tmp_path / "cmp"
    code, _, err = run_cli(["compare", "--data", DATASETS / "iris.arff", "--data",
                            DATASETS / "weather.nominal.arff", "--method", "laplace",
                            "--method", "frequency", "--repeat", "3", "-o", out], capsys)
    assert code == 0
    assert err.count("use new stratified") == 2
    metrics = pd.read_csv(out / "metrics.csv")
    assert metrics["repeats"].tolist() == [3] * 4


def test_compare_loo_runs_leave_one_out_on_every_dataset(tmp_path, capsys):
    """compare --loo: the TPCE paper's protocol; the fold files beside the data are not
    used, and the metrics equal evaluate --loo's."""
    from conftest import DATASETS, run_cli

    out = tmp_path / "cmp"
    code, _, _ = run_cli(["compare", "--data", DATASETS / "weather.nominal.arff",
                          "--method", "laplace", "--method", "tpce", "--loo", "-o", out],
                         capsys)
    assert code == 0
    ev = tmp_path / "ev"
    assert run_cli(["evaluate", DATASETS / "weather.nominal.arff", "--loo", "--method",
                    "laplace", "--method", "tpce", "-o", ev], capsys)[0] == 0
    cols = ["method", "brier", "log_loss", "auc"]
    pd.testing.assert_frame_equal(pd.read_csv(out / "metrics.csv")[cols],
                                  pd.read_csv(ev / "metrics.csv")[cols])
    run = json.loads((out / "units" / "0-weather.nominal" / "run.json").read_text())
    assert run["run"]["protocol"]["kind"] == "loo"


def test_repeat_with_loo_is_refused(capsys):
    from conftest import DATASETS, run_cli

    code, _, err = run_cli(["evaluate", DATASETS / "weather.nominal.arff", "--loo",
                            "--repeat", "2", "--method", "laplace"], capsys)
    assert code == 2
    assert "--repeat does not apply to --loo" in err
