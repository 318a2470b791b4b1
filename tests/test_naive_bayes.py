"""Naive Bayes (Weka's NaiveBayes): hand-computed cases, weights, missing values, and an
optional bit-level parity check against Weka itself."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import DATASETS, make_dataset
from scipy.stats import norm

from treecert.data.loading import load_dataset
from treecert.methods import make_method
from treecert.methods.naive_bayes import NaiveBayes, weka_precision


def test_nominal_laplace_counts_by_hand():
    # class no: s 1, r 2 (3 rows); yes: s 2 (2 rows). Prior (3+1)/7, (2+1)/7;
    # P(s|no) = 2/5, P(s|yes) = 3/4 -> no ∝ 8/35, yes ∝ 9/28 -> yes = 45/77.
    data = make_dataset({"o": ["s", "s", "r", "s", "r"]}, ["yes", "yes", "no", "no", "no"])
    nb = NaiveBayes().fit(data)
    test = np.array([[0.0], [np.nan]])  # s, missing (prior only)
    np.testing.assert_allclose(nb.predict_proba(test), [[32 / 77, 45 / 77], [4 / 7, 3 / 7]],
                               rtol=1e-12)


def test_numeric_normal_with_weka_precision_by_hand():
    # values 1, 2 (yes) and 3, 5 (no): precision = (5 - 1) / 3; values rounded to it;
    # likelihood = normal probability of the precision-wide interval around the value.
    data = make_dataset({"v": [1.0, 2.0, 3.0, 5.0]}, ["yes", "yes", "no", "no"])
    nb = NaiveBayes().fit(data)
    prec = 4 / 3
    assert weka_precision(np.array([1.0, 2.0, 3.0, 5.0])) == pytest.approx(prec)

    def fit(vals):
        r = np.rint(np.array(vals) / prec) * prec
        mean = r.mean()
        sd = max(np.sqrt(abs((r * r).sum() - mean * r.sum()) / r.size), prec / 6)
        return mean, sd

    x = np.rint(2.4 / prec) * prec
    lik = []
    for vals in ([3.0, 5.0], [1.0, 2.0]):  # class order: no, yes
        mean, sd = fit(vals)
        lik.append(norm.cdf((x - mean + prec / 2) / sd) - norm.cdf((x - mean - prec / 2) / sd))
    joint = np.array(lik) * np.array([3 / 6, 3 / 6])
    np.testing.assert_allclose(nb.predict_proba(np.array([[2.4]]))[0], joint / joint.sum(),
                               rtol=1e-9)


def test_weight_two_equals_a_duplicated_row():
    cols = {"o": ["s", "r", "s", "r"], "v": [1.0, 2.5, 3.0, 4.0]}
    y = ["yes", "no", "no", "yes"]
    weighted = make_dataset(cols, y, weights=[2.0, 1.0, 1.0, 1.0])
    dup = make_dataset({k: [v[0], *v] for k, v in cols.items()}, [y[0], *y])
    X = np.array([[0.0, 2.0], [1.0, 3.5], [np.nan, 1.0]])
    np.testing.assert_allclose(NaiveBayes().fit(weighted).predict_proba(X),
                               NaiveBayes().fit(dup).predict_proba(X), rtol=1e-12)


def test_missing_values_are_skipped_per_attribute():
    data = make_dataset({"o": ["s", None, "r", "s"], "v": [1.0, 2.0, None, 4.0]},
                        ["yes", "no", "no", "yes"])
    only_o = make_dataset({"o": ["s", None, "r", "s"]}, ["yes", "no", "no", "yes"])
    # a test row whose numeric value is missing is scored on the nominal attribute alone
    np.testing.assert_allclose(NaiveBayes().fit(data).predict_proba(np.array([[0.0, np.nan]])),
                               NaiveBayes().fit(only_o).predict_proba(np.array([[0.0]])))


def test_discretize_uses_mdl_bins():
    v = [1.0, 1.1, 1.2, 1.3, 1.4, 5.0, 5.1, 5.2, 5.3, 5.4] * 2
    y = (["no"] * 5 + ["yes"] * 5) * 2
    nb = NaiveBayes(discretize=True).fit(make_dataset({"v": v}, y))
    assert nb.cuts_[0].tolist() == [3.2]
    # bin counts: no = [10, 0], yes = [0, 10]; Laplace: P(bin 0 | no) = 11/12
    p = nb.predict_proba(np.array([[2.0]]))[0]
    np.testing.assert_allclose(p, [11 / 12, 1 / 12] / np.sum([11 / 12, 1 / 12]))


def test_method_round_trips_through_json():
    data = load_dataset(DATASETS / "labor.arff")
    nb = NaiveBayes(discretize=True).fit(data)
    again = NaiveBayes.from_json(nb.to_json(), data.schema)
    np.testing.assert_array_equal(nb.predict_proba(data), again.predict_proba(data))
    pred = make_method("naive_bayes").fit(data).predict(data)
    np.testing.assert_allclose(pred.proba.sum(axis=1), 1.0)


WEKA_JAR = Path("/usr/share/java/weka.jar")
JAVA_SOURCE = """
import weka.core.*; import weka.core.converters.ConverterUtils.DataSource;
import weka.classifiers.bayes.NaiveBayes;
public class NBDist {
  public static void main(String[] a) throws Exception {
    Instances tr = DataSource.read(a[0]); tr.setClassIndex(tr.numAttributes() - 1);
    Instances te = DataSource.read(a[1]); te.setClassIndex(te.numAttributes() - 1);
    NaiveBayes nb = new NaiveBayes(); nb.setUseSupervisedDiscretization(a.length > 2);
    nb.buildClassifier(tr);
    for (int i = 0; i < te.numInstances(); i++) {
      double[] d = nb.distributionForInstance(te.instance(i));
      StringBuilder s = new StringBuilder();
      for (int k = 0; k < d.length; k++) { if (k > 0) s.append(","); s.append(d[k]); }
      System.out.println(s);
    }
  }
}
"""


@pytest.mark.skipif(not (WEKA_JAR.exists() and shutil.which("javac")),
                    reason="needs Weka and javac (Debian packages weka and default-jdk-headless)")
@pytest.mark.parametrize("name", ["labor", "iris"])
@pytest.mark.parametrize("discretize", [False, True])
def test_weka_parity(name, discretize, tmp_path):
    (tmp_path / "NBDist.java").write_text(JAVA_SOURCE)
    subprocess.run(["javac", "-cp", str(WEKA_JAR), "NBDist.java"], cwd=tmp_path, check=True)
    path = str(DATASETS / f"{name}.arff")
    args = ["java", "-cp", f"{WEKA_JAR}:{tmp_path}", "NBDist", path, path]
    out = subprocess.run(args + (["D"] if discretize else []), capture_output=True, text=True,
                         check=True).stdout
    weka = np.array([[float(v) for v in line.split(",")] for line in out.split()])
    data = load_dataset(path)
    ours = NaiveBayes(discretize=discretize).fit(data).predict_proba(data)
    np.testing.assert_allclose(ours, weka, atol=1e-9)
