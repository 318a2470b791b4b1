"""Outputs that explain, through the real entry point: ``show`` with leaf probabilities,
``predict --explain`` (leaf, share, size, path; TPCE's K leaf estimates, K&K's Q, Venn's
matrix) and ``prune --plot``."""

from __future__ import annotations

import io
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLE_DATA
from conftest import run_cli as run

WEATHER = SAMPLE_DATA / "weather.numeric.arff"


@pytest.fixture(scope="module")
def weather_model(tmp_path_factory):
    from treecert.cli.main import main

    model = tmp_path_factory.mktemp("m") / "weather.json"
    assert main(["train", str(WEATHER), "--min-leaf", "1", "--leaf", "laplace", "-o",
                 str(model), "-q"]) == 0
    return model


@pytest.fixture(scope="module")
def weather_missing(tmp_path_factory):
    path = tmp_path_factory.mktemp("d") / "missing.csv"
    path.write_text("outlook,temperature,humidity,windy\n"
                    "sunny,70,,TRUE\n"       # humidity unknown below outlook = sunny
                    ",70,90,FALSE\n"         # outlook unknown at the root
                    "overcast,80,80,TRUE\n"  # complete
                    "rainy,65,70,TRUE\n")
    return path


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


def test_show_prints_leaf_probabilities_in_text_and_dot(weather_model, capsys):
    code, out, _ = run(["show", weather_model], capsys)
    assert code == 0
    lines = out.splitlines()
    # Laplace (alpha 1) of 4 yes, 0 no: 5/6 and 1/6
    assert "outlook = overcast: yes (4.0) [yes 0.833, no 0.167]" in lines
    assert lines[-1] == "Leaf probabilities: laplace (alpha=1)"
    code, dot, _ = run(["show", weather_model, "--format", "dot"], capsys)
    assert code == 0
    assert r"\\n" not in dot  # an escaped backslash would show as a literal \n
    leaf = next(line for line in dot.splitlines() if "yes (4.0)" in line)
    assert leaf.endswith(r'[label="yes (4.0)\n[4, 0]\n[yes 0.833, no 0.167]", style=rounded];')


def test_predict_explain_leaf_path_and_size(weather_model, weather_missing, capsys):
    code, out, _ = run(["predict", weather_model, weather_missing, "--explain"], capsys)
    assert code == 0
    frame = _csv(out)
    assert list(frame.columns) == ["row", "predicted", "p_yes", "p_no", "certainty", "leaf",
                                   "leaf_share", "leaf_size", "path"]
    assert frame["path"].tolist() == [
        "outlook=sunny & humidity>77.5 (?)",  # the heavier share (3 of 5 rows)
        "outlook=sunny (?) & humidity>77.5",  # sunny and rainy/FALSE tie at 5/14: lower id
        "outlook=overcast",
        "outlook=rainy & windy=TRUE",
    ]
    np.testing.assert_allclose(frame["leaf_share"], [0.6, 5 / 14, 1.0, 1.0])
    np.testing.assert_allclose(frame["leaf_size"], [3.0, 3.0, 4.0, 2.0])
    assert frame["leaf"].tolist()[2:] == [2, 6]
    # the same rows without --explain: the same predictions, no extra column
    code, plain, _ = run(["predict", weather_model, weather_missing], capsys)
    pd.testing.assert_frame_equal(_csv(plain), frame[list(_csv(plain).columns)])


def test_predict_explain_tpce_shows_each_labels_leaf_estimate(weather_model,
                                                              weather_missing, capsys):
    code, out, _ = run(["predict", weather_model, weather_missing, "--method", "tpce",
                        "--explain"], capsys)
    assert code == 0
    frame = _csv(out)
    names = [f"tpce_if_{a}_p_{c}" for a in ("yes", "no") for c in ("yes", "no")]
    assert list(frame.columns[-4:]) == names
    # Eq. 1: the prediction is the mean over the K trees of their Laplace estimates
    for c in ("yes", "no"):
        mean = (frame[f"tpce_if_yes_p_{c}"] + frame[f"tpce_if_no_p_{c}"]) / 2
        np.testing.assert_allclose(frame[f"p_{c}"], mean)
    # disagreement is visible: tpce_disagree = 1 exactly where the two trees vote apart
    votes_yes = frame["tpce_if_yes_p_yes"] >= frame["tpce_if_yes_p_no"]  # argmax: a tie
    votes_no = frame["tpce_if_no_p_yes"] >= frame["tpce_if_no_p_no"]  # goes to yes
    assert ((votes_yes != votes_no).astype(int) == frame["tpce_disagree"]).all()


def test_predict_explain_kk_and_venn_components(weather_model, capsys):
    code, out, _ = run(["predict", weather_model, WEATHER, "--method", "kk", "--explain"],
                       capsys)
    assert code == 0
    frame = _csv(out)
    q = frame[["kk_q_yes", "kk_q_no"]].to_numpy()
    p = frame[["p_yes", "p_no"]].to_numpy()
    np.testing.assert_allclose(frame["kk_divergence"], np.sum((p - q) * np.log(p / q), axis=1))
    code, out, _ = run(["predict", weather_model, WEATHER, "--method", "venn", "--explain"],
                       capsys)
    assert code == 0
    frame = _csv(out)
    for c in ("yes", "no"):  # the Venn prediction is the mean of the matrix's rows
        rows = frame[[f"venn_if_yes_p_{c}", f"venn_if_no_p_{c}"]]
        np.testing.assert_allclose(frame[f"p_{c}"], rows.mean(axis=1))
        np.testing.assert_allclose(frame[f"lower_{c}"], rows.min(axis=1))


def test_predict_explain_refuses_a_method_without_one_tree(weather_model, capsys, tmp_path):
    out = tmp_path / "p.csv"
    code, _, err = run(["predict", weather_model, WEATHER, "--method", "bagging",
                        "--explain", "-o", out], capsys)
    assert code == 2
    assert err.strip() == (
        "Error: --explain: method 'bagging' does not predict with one tree (ensembles, "
        "Naive Bayes and tpce_batch's batch trees do not), so no leaf or path explains its "
        "rows. Use --explain with a tree method: frequency, laplace, m_estimate, "
        "certified_tree, tpce, kk, "
        "empirical_bayes, binning or venn over a tree.")
    assert not out.exists()


def test_predict_explain_a_tree_pruned_to_its_root(weather_model, capsys):
    code, out, _ = run(["predict", weather_model, WEATHER, "--method", "laplace:prune=ccp",
                        "--explain"], capsys)
    assert code == 0
    frame = _csv(out)
    assert set(frame["path"]) == {"(root)"} and set(frame["leaf_size"]) == {14.0}


@pytest.fixture(scope="module")
def credit_model(tmp_path_factory):
    from treecert.cli.main import main

    model = tmp_path_factory.mktemp("c") / "labor.json"
    assert main(["train", str(SAMPLE_DATA / "labor.arff"), "--min-leaf", "1", "-o",
                 str(model), "-q"]) == 0
    return model


@pytest.mark.parametrize("selection", [["--cv", "5"], ["--holdout", "0.3"]])
def test_prune_plot_draws_plotcp(credit_model, tmp_path, capsys, selection):
    pytest.importorskip("matplotlib")
    png = tmp_path / "cp.png"
    code, _, err = run(["prune", credit_model, "--method", "ccp", *selection, "--plot", png,
                        "-o", tmp_path / "p.json"], capsys)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert err.strip().endswith(f"and {png}")


def test_prune_plot_errors(credit_model, tmp_path, capsys, monkeypatch):
    code, _, err = run(["prune", credit_model, "--method", "ebp", "--plot", tmp_path / "x.png",
                        "-o", tmp_path / "p.json"], capsys)
    assert (code, err.strip()) == (2, "Error: --plot needs --method ccp.")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    code, _, err = run(["prune", credit_model, "--method", "ccp", "--plot", tmp_path / "x.png",
                        "-o", tmp_path / "p.json"], capsys)
    assert code == 2
    assert err.strip() == ("Error: --plot needs matplotlib, which is not installed. Install "
                           "it with: pip install 'treecert[plot]'.")
    assert not (tmp_path / "p.json").exists()  # checked before any work
