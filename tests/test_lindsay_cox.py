"""Lindsay & Cox's protocol and Kukar & Kononenko's threshold: hand-worked cases.

compare's relative layout (their Table 1), the ERC trend line and its slope, the Venn machine
on a pruned base tree, with x eligible as a threshold and online, and K&K's supervised
reliable/unreliable threshold.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli


def test_compare_relative_to_gives_mean_and_median_percent_change(tmp_path, capsys):
    """Three datasets, two methods. accuracy: a (0.6 - 0.8)/0.8 = -25 %, b (0.55 - 0.5)/0.5
    = +10 %, c 0 % -> mean -5 %, median 0 %. log_loss: a (1 - 2)/2 = -50 %, b (1 - 4)/4 =
    -75 %, c has base 0 and is left out -> mean = median = -62.5 % over n = 2."""
    metrics = tmp_path / "m.csv"
    metrics.write_text("dataset,method,accuracy,log_loss\n"
                       "a,frequency,0.8,2.0\na,venn,0.6,1.0\n"
                       "b,frequency,0.5,4.0\nb,venn,0.55,1.0\n"
                       "c,frequency,0.9,0\nc,venn,0.9,0.5\n")
    code, out, _ = run_cli(["compare", metrics, "--relative-to", "frequency",
                            "-o", tmp_path / "out"], capsys)
    assert code == 0
    assert "| venn | -5.0 | -62.5 |" in out  # the mean table comes first
    assert "| venn | +0.0 | -62.5 |" in out
    rel = pd.read_csv(tmp_path / "out" / "relative.csv").set_index("metric")
    assert rel.loc["accuracy", "mean_pct"] == pytest.approx(-5.0)
    assert rel.loc["accuracy", "median_pct"] == pytest.approx(0.0)
    assert rel.loc["log_loss", "n"] == 2
    doc = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert doc["relative_to"] == "frequency"


def test_compare_relative_to_names_a_method_as_given_under_j48(tmp_path, capsys):
    """--j48 adds J48's pruning to every spec that prunes; --relative-to frequency still
    names the run's frequency:prune=ebp,cf=0.25."""
    from conftest import SAMPLE_DATA

    code, out, _ = run_cli(["compare", "--data", SAMPLE_DATA / "labor.arff", "--j48",
                            "--method", "frequency", "--method", "laplace", "--relative-to",
                            "frequency", "--metric", "log_loss", "-q"], capsys)
    assert code == 0
    assert "## Mean % change against frequency:prune=ebp,cf=0.25" in out
    assert "| laplace:prune=ebp,cf=0.25 | " in out


def test_compare_relative_to_an_absent_method_is_a_one_line_error(tmp_path, capsys):
    metrics = tmp_path / "m.csv"
    metrics.write_text("dataset,method,accuracy\na,frequency,0.8\na,venn,0.6\n")
    code, _, err = run_cli(["compare", metrics, "--relative-to", "laplace"], capsys)
    assert code == 2
    assert "Error: --relative-to: no method 'laplace' in the results." in err


# ---------------------------------------------------------------------------- ERC trend line
def test_erc_slope_is_the_nu_weighted_least_squares_line_through_every_class_bins():
    """Eight binary forecasts P(1) = 0.1 ×3 (labels 0, 0, 1), 0.6 ×4 (0, 1, 1, 1), 0.9 ×1
    (1); 10 equal-width bins. Class 1's ERC points (φ, ρ, ν): (0.1, 1/3, 3/8),
    (0.6, 3/4, 4/8), (0.9, 1, 1/8); class 0's mirror them: (0.9, 2/3), (0.4, 1/4), (0.1, 0)
    with the same ν. Pooled, the weighted means are (1/2, 1/2); with weights 3, 4, 1 (twice)
    and deviations φ − ½ = −0.4, 0.1, 0.4, ρ − ½ = −1/6, 1/4, 1/2:
    Sxy ∝ 3(0.4/6) + 4(0.025) + 0.2 = 0.5 and Sxx ∝ 3(0.16) + 4(0.01) + 0.16 = 0.68, so the
    slope is 0.5 / 0.68 = 25/34 and the intercept ½ − ½·25/34 = 9/68.
    The reliability plot's line for class 1 alone: means φ̄ = 0.45, ρ̄ = 5/8,
    Sxx ∝ 3(0.35²) + 4(0.15²) + 0.45² = 0.66, Sxy ∝ 3(0.35)(7/24) + 4(0.15)(1/8)
    + 0.45(3/8) = 0.55: slope 5/6, intercept 5/8 − 0.45·5/6 = 1/4."""
    from treecert.evaluation.metric_table import compute_metrics
    from treecert.evaluation.reliability import erc_slope, reliability_curve, weighted_trend

    y = np.array([0, 0, 1, 0, 1, 1, 1, 1])
    p1 = np.array([0.1, 0.1, 0.1, 0.6, 0.6, 0.6, 0.6, 0.9])
    proba = np.column_stack([1 - p1, p1])
    assert erc_slope(y, proba) == pytest.approx(25 / 34)
    assert compute_metrics(y, proba)["erc_slope"] == pytest.approx(25 / 34)
    c = reliability_curve(y, proba, 1)
    a, b = weighted_trend(c.mean_forecast, c.observed_frequency, c.weight)
    assert (a, b) == pytest.approx((0.25, 5 / 6))
    perfect = np.array([0.0, 1.0])
    assert erc_slope(np.array([0, 1]), np.column_stack([1 - perfect, perfect])) == 1.0
    assert np.isnan(erc_slope(y, np.full((8, 2), 0.5)))  # one forecast value: no line


def test_compare_ranks_erc_slope_by_its_distance_from_one(tmp_path, capsys):
    metrics = tmp_path / "m.csv"
    metrics.write_text("dataset,method,erc_slope\na,x,0.5\na,y,1.2\nb,x,0.9\nb,y,1.05\n")
    code, out, _ = run_cli(["compare", metrics, "--metric", "erc_slope"], capsys)
    assert code == 0
    assert "closer to 1 for erc_slope" in out
    assert "| erc_slope | x | y | 0 | 0 | 2 |" in out  # |0.5-1| > |1.2-1|, |0.9-1| > |1.05-1|


# ---------------------------------------------------------------------------- Venn machine
def _tiny(ys, a=None):
    from conftest import make_dataset

    return make_dataset({"a": a if a is not None else [1.0] * len(ys)}, ys)


def test_online_venn_predicts_each_row_from_the_rows_before_it():
    """Training labels yes, yes, no; test rows labelled no, no, yes; min_leaf 10, so every
    tree on these few rows is one leaf, all n + 1 forecasts are equal, MDL finds no cut and
    all examples share x's type: row j of the Venn matrix is the class counts c of the bag
    plus x with label j, over n + 1. Hence p_l = (c_l + 1/2) / (n + 1) and
    [lower, upper] = [c_l, c_l + 1] / (n + 1).

    * row 0, bag (no 1, yes 2), n = 3: p_no = 1.5/4 = 0.375, interval [1/4, 2/4];
    * row 1, row 0 (no) learnt: (2, 2), n = 4: p_no = 2.5/5 = 0.5, [2/5, 3/5];
    * row 2, row 1 (no) learnt: (3, 2), n = 5: p_no = 3.5/6, [3/6, 4/6].

    Offline every row has row 0's forecast."""
    from treecert.methods import make_method

    train, test = _tiny(["yes", "yes", "no"]), _tiny(["no", "no", "yes"])
    params = {"min_leaf": 10.0}
    online = make_method("venn:online=true", params).fit(train).predict(test)
    np.testing.assert_allclose(online.proba[:, 0], [1.5 / 4, 2.5 / 5, 3.5 / 6])
    np.testing.assert_allclose(online.lower[:, 0], [1 / 4, 2 / 5, 3 / 6])
    np.testing.assert_allclose(online.upper[:, 0], [2 / 4, 3 / 5, 4 / 6])
    offline = make_method("venn", params).fit(train).predict(test)
    np.testing.assert_allclose(offline.proba[:, 0], [0.375] * 3)
    # the exact path learns the same way
    exact = make_method("venn:online=true,x_threshold=true,prune=ebp", params)
    np.testing.assert_allclose(exact.fit(train).predict(test).proba, online.proba)


def test_online_venn_needs_labelled_rows():
    from treecert.errors import ConfigError
    from treecert.methods import make_method

    test = _tiny(["no", "yes"])
    test.y[1] = -1
    method = make_method("venn:online=true", {"min_leaf": 10.0}).fit(_tiny(["yes", "no"]))
    with pytest.raises(ConfigError, match="online=true learns every row"):
        method.predict(test)


@pytest.fixture(scope="module")
def diabetes_split():
    from conftest import SAMPLE_DATA

    from treecert.data.loading import load_dataset

    d = load_dataset(SAMPLE_DATA / "diabetes.arff")
    return d.subset(np.arange(0, 300)), d.subset(np.arange(700, 720))


J48 = {"criterion": "gain_ratio", "threshold": "lower", "collapse": True}


def test_exact_path_without_its_options_equals_the_fast_machine(diabetes_split):
    """The refit path with x ineligible and no pruning grows the engine's trees: the fast
    machine's matrices, bit for bit (both taxonomies)."""
    from treecert.methods import make_method
    from treecert.methods.venn_refit import refit_matrices

    train, test = diabetes_split
    for spec in ("venn", "venn:taxonomy=leaf"):
        m = make_method(spec, J48).fit(train)
        np.testing.assert_allclose(refit_matrices(m, test.X), m.matrices(test), atol=1e-12)


def test_x_threshold_and_pruning_grow_and_prune_the_tree_on_the_bag(diabetes_split):
    """x_threshold=true, prune=ebp: row j is the Venn row of the forecasts of J48's pruned
    tree learnt on D ∪ {(x, j)} by the plain learner (x an ordinary example)."""
    from treecert.methods import make_method
    from treecert.methods.venn import venn_row
    from treecert.methods.venn_refit import with_row
    from treecert.pruning.common import PruneOptions
    from treecert.pruning.prune import prune_tree
    from treecert.tree.classifier import DecisionTree

    train, test = diabetes_split
    m = make_method("venn:x_threshold=true,prune=ebp", J48).fit(train)
    got = m.matrices(test.subset(np.arange(3)))
    for i in range(3):
        for j in range(2):
            aug = with_row(train, test.X[i], j)
            tree = DecisionTree(**J48).fit(aug).tree_
            tree, _ = prune_tree(tree, PruneOptions("ebp"), data=aug)
            row = venn_row(tree.predict_proba(aug.X), aug.y, aug.weights, 2)
            np.testing.assert_allclose(got[i, j], row, atol=1e-12)
    assert m.size < make_method("venn", J48).fit(train).size  # the pruned tree's leaves


def test_venn_protocol_options_are_checked():
    from treecert.errors import ConfigError
    from treecert.methods import make_method

    with pytest.raises(ConfigError, match="not naive_bayes"):
        make_method("venn:base=naive_bayes,prune=ebp").fit(_tiny(["yes", "no"]))
    with pytest.raises(ConfigError, match="prune must be one of none, ccp, ebp"):
        make_method("venn:prune=nope").fit(_tiny(["yes", "no"]))


# ---------------------------------------------------------------------------- K&K threshold
def test_kk_threshold_maximises_the_information_gain_about_correctness():
    """Reliabilities 0.2, 0.4, 0.6, 0.8, 0.9 of predictions wrong, wrong, right, wrong,
    right. H(2 right of 5) = 0.97095 bits. Cuts (left part | right part, weighted entropy):
    after 0.2: 0 + 4/5·H(2/4) = 0.8, gain 0.171; after 0.4: 0 + 3/5·H(2/3) = 0.551, gain
    0.420; after 0.6: 3/5·H(1/3) + 2/5·H(1/2) = 0.951, gain 0.020; after 0.8:
    4/5·H(1/4) + 0 = 0.649, gain 0.322. The best cut is between 0.4 and 0.6: t = 0.5.
    Labelled reliable: 0.6, 0.8, 0.9; the label is right for 4 of 5 (not 0.8)."""
    from treecert.evaluation.metric_table import compute_metrics
    from treecert.methods.kk import gain_threshold

    score = np.array([0.8, 0.2, 0.9, 0.6, 0.4])  # any order
    correct = np.array([False, False, True, True, False])
    assert gain_threshold(score, correct, np.ones(5)) == pytest.approx(0.5)
    # nothing to separate: all reliable when mostly right, else none
    assert gain_threshold(score, np.ones(5, bool), np.ones(5)) == 0.0
    assert gain_threshold(np.full(3, 0.5), np.array([False, False, True]), np.ones(3)) == np.inf
    y = np.array([1, 1, 0, 0, 1])  # predicted class 0 each time: right where y = 0
    proba = np.tile([0.7, 0.3], (5, 1))
    m = compute_metrics(y, proba, reliable=np.where(score >= 0.5, "yes", "no"))
    assert m["reliable_accuracy"] == pytest.approx(4 / 5)
    assert m["reliable_share"] == pytest.approx(3 / 5)


def test_kk_reliable_label_in_predict_and_its_accuracy_in_evaluate(tmp_path, capsys):
    from conftest import SAMPLE_DATA

    data = SAMPLE_DATA / "diabetes.arff"
    out = tmp_path / "ev"
    code, _, _ = run_cli(["evaluate", data, "--folds", "3", "--method", "kk:reliable_cv=3",
                          "-o", out, "-q"], capsys)
    assert code == 0
    preds = pd.read_csv(out / "predictions.csv")
    assert set(preds["reliable"]) <= {"yes", "no"}
    right = (preds["actual"] == preds["predicted"]) == (preds["reliable"] == "yes")
    row = pd.read_csv(out / "metrics.csv").iloc[0]
    assert row["reliable_accuracy"] == pytest.approx(right.mean())
    assert row["reliable_share"] == pytest.approx((preds["reliable"] == "yes").mean())
    model = tmp_path / "m.json"
    assert run_cli(["train", data, "-o", model, "-q"], capsys)[0] == 0
    code, csv, _ = run_cli(["predict", model, data, "--method", "kk:reliable_cv=3"], capsys)
    assert code == 0 and ",reliable" in csv.splitlines()[0]
    code, _, err = run_cli(["evaluate", SAMPLE_DATA / "iris.arff", "--loo", "--method",
                            "kk:reliable_cv=3"], capsys)
    assert code == 2 and "cannot run under leave-one-out" in err
