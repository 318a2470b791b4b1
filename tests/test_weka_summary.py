"""What a Weka user compares: the folds of ``-x K -s SEED``, kappa, the confusion matrix and
the per-class table of Weka's summary.

``tests/fixtures/weka_folds.json`` holds the folds Weka 3.6.14 gives (made by
``tests/fixtures/WekaFolds.java``, which runs Weka's own ``randomize``, ``stratify`` and
``testCV``); where Weka is installed the same program runs live on more datasets.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DATASETS, FIXTURES, run_cli

from treecert.data.folds import weka_folds
from treecert.data.loading import load_dataset
from treecert.evaluation.confusion import confusion_tables, confusion_text
from treecert.evaluation.point_metrics import kappa

WEKA_JAR = Path("/usr/share/java/weka.jar")


@pytest.mark.parametrize("case", sorted(json.loads((FIXTURES / "weka_folds.json").read_text())))
def test_weka_folds_are_wekas(case):
    name, _, k, _, seed = case.split()
    expected = json.loads((FIXTURES / "weka_folds.json").read_text())[case]
    y = load_dataset(DATASETS / f"{name}.arff").y
    np.testing.assert_array_equal(weka_folds(y, int(k), int(seed)), expected)


@pytest.mark.skipif(shutil.which("javac") is None or not WEKA_JAR.exists(),
                    reason="needs Weka (Debian package weka) and a JDK")
@pytest.mark.parametrize("name", ["credit-g", "soybean", "segment-challenge", "breast-cancer"])
def test_weka_folds_live(name, tmp_path):
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", str(WEKA_JAR),
                    str(FIXTURES / "WekaFolds.java")], check=True)
    for k, seed in [(10, 1), (3, 42)]:
        out = subprocess.run(["java", "-cp", f"{WEKA_JAR}:{tmp_path}", "WekaFolds",
                              str(DATASETS / f"{name}.arff"), str(k), str(seed)],
                             capture_output=True, text=True, check=True).stdout
        y = load_dataset(DATASETS / f"{name}.arff").y
        np.testing.assert_array_equal(weka_folds(y, k, seed), np.array(out.split(), dtype=int))


def test_kappa_by_hand():
    """Truth a a a b, predicted a a b b: p_o = 3/4; true shares (3/4, 1/4), predicted
    (1/2, 1/2), p_e = 3/8 + 1/8 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2."""
    proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]])
    assert kappa(np.array([0, 0, 0, 1]), proba) == pytest.approx(0.5)
    assert kappa(np.array([0, 0, 0, 0]), np.tile([1.0, 0.0], (4, 1))) == 1.0


def test_labor_summary_equals_wekas(tmp_path, capsys):
    """J48's 10-fold CV of labor under Weka's folds: treecert's --j48 grows J48's trees, so
    its accuracy, kappa, confusion matrix and per-class table are those `java
    weka.classifiers.trees.J48 -t labor.arff -x 10 -s 1 -i` prints (Weka 3.6.14):
    73.6842 %, kappa 0.4415, [[14 6] [9 28]], bad 0.7 / 0.243 / 0.609 / 0.7 / 0.651,
    good 0.757 / 0.3 / 0.824 / 0.757 / 0.789, weighted 0.737 / 0.28 / 0.748 / 0.737 / 0.74."""
    out = tmp_path / "labor"
    code, _, err = run_cli(["evaluate", str(DATASETS / "labor.arff"), "--method", "frequency",
                            "--j48", "--weka-folds", "--no-timing", "-q", "-o", str(out)],
                           capsys)
    assert code == 0, err
    metrics = pd.read_csv(out / "metrics.csv")
    assert metrics["accuracy"][0] == pytest.approx(42 / 57)
    assert metrics["kappa"][0] == pytest.approx(0.4415, abs=1e-4)
    confusion = pd.read_csv(out / "confusion.csv")
    assert confusion[["bad", "good"]].to_numpy().tolist() == [[14, 6], [9, 28]]
    per_class = pd.read_csv(out / "per_class.csv").set_index("class")
    columns = ["tp_rate", "fp_rate", "precision", "recall", "f_measure"]
    weka = {"bad": [0.7, 0.243, 0.609, 0.7, 0.651], "good": [0.757, 0.3, 0.824, 0.757, 0.789],
            "(weighted avg)": [0.737, 0.28, 0.748, 0.737, 0.74]}
    for label, values in weka.items():
        np.testing.assert_allclose(per_class.loc[label, columns].to_numpy(float), values,
                                   atol=5e-4)
    text = (out / "confusion.txt").read_text()
    assert "  a  b   <-- classified as\n 14  6 |  a = bad\n  9 28 |  b = good\n" in text


def test_confusion_tables_by_hand():
    preds = pd.DataFrame({"dataset": "d", "method": "m",
                          "actual": ["x", "x", "y", "z", None],
                          "predicted": ["x", "y", "y", "y", "x"]})
    confusion, per_class = confusion_tables(preds, ["x", "y", "z"])
    assert confusion[["x", "y", "z"]].to_numpy().tolist() == [[1, 1, 0], [0, 1, 0], [0, 1, 0]]
    rows = per_class.set_index("class")
    assert rows.loc["y", "precision"] == pytest.approx(1 / 3)
    assert rows.loc["z", "f_measure"] == 0.0  # never predicted, never right: 0, not NaN
    assert rows.loc["(weighted avg)", "recall"] == pytest.approx(0.5)
    assert rows.loc["(weighted avg)", "support"] == 4
    assert "b = y" in confusion_text(confusion, ["x", "y", "z"])


def test_weka_folds_exclude_a_folds_file(capsys):
    code, _, err = run_cli(["evaluate", str(DATASETS / "iris.arff"), "--method", "laplace",
                            "--weka-folds",
                            "--folds-file", str(DATASETS / "iris.folds.csv")], capsys)
    assert code == 2
    assert "choose one of --loo, --folds-file, --test and --weka-folds" in err
