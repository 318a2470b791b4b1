"""Random attribute subsets in the grower, the ``forest`` method, and the stored form of the
ensembles (no tree grown at predict time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import make_dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert import api
from treecert.data.loading import load_dataset
from treecert.errors import ConfigError
from treecert.methods import make_method
from treecert.methods.ensemble import decode_trees, encode_trees
from treecert.tree.classifier import DecisionTree
from treecert.tree.feature_draw import FeatureDraw, resolve_max_features

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
_ARRAYS = ("feature", "threshold", "children_ptr", "children", "value_branch_ptr",
           "value_branch", "counts")


def _same_tree(a, b) -> bool:
    return all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True) for k in _ARRAYS)


def _random_data(seed: int, n: int, p: int, K: int, nominal: int, missing: bool):
    rng = np.random.default_rng(seed)
    cols = {}
    for j in range(p):
        if j < nominal:
            vals = [["a", "b", "c"][v] for v in rng.integers(0, 3, n)]
        else:
            vals = rng.integers(0, 6, n).astype(float).tolist()
        if missing:
            vals = [None if rng.random() < 0.1 else v for v in vals]
        cols[f"x{j}"] = vals
    y = rng.integers(0, K, n).tolist()
    return make_dataset(cols, y, classes=tuple(f"c{k}" for k in range(K)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), p=st.integers(1, 5),
       K=st.integers(2, 4), nominal=st.integers(0, 5), missing=st.booleans(),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]))
def test_drawing_every_attribute_grows_todays_tree(seed, n, p, K, nominal, missing, criterion):
    """max_features = all (the default) and a draw of all F attributes at every node both
    grow the tree grown without any draw, bit for bit."""
    data = _random_data(seed, n, p, K, min(nominal, p), missing)
    if np.unique(data.y).size < 2:
        return
    base = DecisionTree(criterion=criterion).fit(data).tree_
    assert _same_tree(base, DecisionTree(criterion=criterion, max_features="all",
                                         random_state=seed).fit(data).tree_)
    assert _same_tree(base, DecisionTree(criterion=criterion, max_features=p).fit(data).tree_)
    # the masked path with every attribute allowed
    learner = DecisionTree(criterion=criterion)
    finder = learner.make_finder(data)
    finder.feature_draw = FeatureDraw(p, p, seed)
    from treecert.tree.arrays import Tree
    from treecert.tree.grow import grow

    labelled = np.flatnonzero(data.y >= 0)
    drawn = Tree.from_grown(grow(finder, labelled, data.weights[labelled].astype(float)))
    assert _same_tree(base, drawn)


def test_max_features_values():
    assert resolve_max_features(None, 16) is None
    assert resolve_max_features("all", 16) is None
    assert resolve_max_features("sqrt", 16) == 4
    assert resolve_max_features("log2", 16) == 4
    assert resolve_max_features("3", 16) == 3
    assert resolve_max_features(0.5, 16) == 8
    assert resolve_max_features("0.25", 16) == 4
    assert resolve_max_features(1.0, 16) is None
    assert resolve_max_features(20, 16) is None
    for bad in ("half", 0, -1, 1.5, True):
        with pytest.raises(ConfigError):
            resolve_max_features(bad, 16)


def test_subsets_are_seeded_and_change_the_tree():
    data = load_dataset(DATA / "credit-g.arff")
    a = DecisionTree(max_features="sqrt", random_state=3).fit(data).tree_
    b = DecisionTree(max_features="sqrt", random_state=3).fit(data).tree_
    c = DecisionTree(max_features="sqrt", random_state=4).fit(data).tree_
    full = DecisionTree().fit(data).tree_
    assert _same_tree(a, b)
    assert not _same_tree(a, c)
    assert not _same_tree(a, full)


def test_a_node_tests_only_drawn_attributes():
    """With one attribute drawn per node, the root tests the attribute drawn for it."""
    data = load_dataset(DATA / "iris.arff")
    learner = DecisionTree(max_features=1, random_state=7)
    finder = learner.make_finder(data)
    root_mask = FeatureDraw(1, data.schema.n_features, 7).masks(1)[0]
    tree = learner.fit(data).tree_
    assert root_mask[tree.feature[0]]
    assert finder.feature_draw is not None


def test_transductive_methods_refuse_subsets():
    with pytest.raises(ConfigError, match="max_features does not apply"):
        make_method("tpce:max_features=sqrt")


def test_trees_round_trip_through_their_stored_form():
    data = load_dataset(DATA / "soybean.arff")  # nominal multiway tests, missing values
    forest = make_method("forest:trees=4").fit(data)
    trees = [t.tree_ for t in forest.trees_]
    text = json.dumps(encode_trees(trees), allow_nan=False)
    back = decode_trees(json.loads(text), data.schema.n_classes)
    assert all(_same_tree(a, b) for a, b in zip(trees, back, strict=True))


@pytest.mark.parametrize("spec", ["forest:trees=8", "calibrated_bagging:trees=6",
                                  "bagging:trees=5"])
def test_stored_ensembles_predict_without_growing(spec, monkeypatch):
    data = load_dataset(DATA / "diabetes.arff")
    model = api.train(data, method=spec)
    text = api.model_json(model)
    fitted = make_method(spec).fit(data).predict(data)

    def no_growing(*args, **kwargs):
        raise AssertionError("a tree was grown at predict time")

    monkeypatch.setattr(DecisionTree, "fit", no_growing)
    loaded = api.load_model_json(text)
    out = api.predict(loaded, data)
    classes = data.schema.classes
    np.testing.assert_array_equal(out[[f"p_{c}" for c in classes]].to_numpy(), fitted.proba)
    if fitted.certainty is not None:
        np.testing.assert_array_equal(out["certainty"].to_numpy(), fitted.certainty)


def test_a_corrupt_stored_forest_is_a_model_file_error():
    data = load_dataset(DATA / "iris.arff")
    doc = json.loads(api.model_json(api.train(data, method="forest:trees=3")))
    doc["calibration"]["state"]["trees"]["n_nodes"][0] += 1
    model = api.load_model_json(json.dumps(doc))
    from treecert.errors import ModelFileError

    with pytest.raises(ModelFileError, match="calibration state is corrupt"):
        api.predict(model, data)


def test_same_forest_with_one_or_two_jobs(tmp_path):
    """``evaluate --jobs 1`` and ``--jobs 2``: the same predictions, byte for byte."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        subprocess.run([sys.executable, "-m", "treecert", "evaluate", str(DATA / "glass.arff"),
                        "--method", "forest:trees=10", "--folds", "3", "--jobs", str(jobs),
                        "--no-timing", "-q", "-o", str(out)], check=True, env=env, cwd=REPO)
        outs.append((out / "predictions.csv").read_bytes())
    assert outs[0] == outs[1]


def test_train_method_forest_on_the_command_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    model = tmp_path / "f.json"
    subprocess.run([sys.executable, "-m", "treecert", "train", str(DATA / "iris.arff"),
                    "--method", "forest:trees=5", "-o", str(model), "-q"],
                   check=True, env=env, cwd=REPO)
    doc = json.loads(model.read_text())
    assert doc["method"] == "forest:trees=5"
    assert doc["calibration"]["state"]["trees"]["n_trees"] == 5
    assert doc["calibration"]["source"] == "oob"
    run = subprocess.run([sys.executable, "-m", "treecert", "predict", str(model),
                          str(DATA / "iris.arff"), "-o", str(tmp_path / "p.csv")],
                         env=env, cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "vote_share" in (tmp_path / "p.csv").read_text().splitlines()[0]
