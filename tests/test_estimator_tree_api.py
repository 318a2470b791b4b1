"""``TreecertClassifier``'s tree API (``feature_importances_``, ``apply``, ``decision_path``,
``get_depth``, ``get_n_leaves``) on a tree worked out by hand; ``save``/``load`` of the
command line's model file, served by the real ``treecert predict``; parameters that do not
apply are ignored with one warning each, so a grid over ``prune`` x ``cf`` fits."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from treecert import api
from treecert.errors import ParameterError
from treecert.estimator import TreecertClassifier
from treecert.methods import METHODS
from treecert.tree.model import read_model


def hand_data():
    """Ten rows: a nominal ``a`` (values r, g, b, in that order) and a number ``x``.

    ====  ====  ====  =====
    row   a     x     class
    ====  ====  ====  =====
    0-2   r     0     yes
    3-5   g     0     no
    6-7   b     1, 2  yes
    8-9   b     3, 4  no
    ====  ====  ====  =====
    """
    X = pd.DataFrame({"a": pd.Categorical(list("rrrgggbbbb"), categories=["r", "g", "b"]),
                      "x": [0.0, 0, 0, 0, 0, 0, 1, 2, 3, 4]})
    y = np.array(["yes"] * 3 + ["no"] * 3 + ["yes", "yes", "no", "no"])
    return X, y


def test_tree_api_on_a_hand_checked_tree():
    """The tree, by hand (information gain in bits, min_leaf 2).

    Root: 5 yes / 5 no, entropy 1. Splitting on ``a`` leaves r (3 yes) and g (3 no) pure
    and b at 2/2, gain 1 - 4/10 = 0.6; the best cut of ``x`` (x <= 2.5: 5 yes, 3 no | 2 no)
    gains 1 - 0.8 H(5/8) = 0.24. So node 0 tests ``a``: children 1 (r), 2 (g), 3 (b), in the
    order of a's values. Node 3 (x = 1, 2, 3, 4 with yes, yes, no, no) cuts at 2.5, gain 1:
    leaves 4 (x <= 2.5, 2 yes) and 5 (2 no). Depth 2, 4 leaves.

    Importances (weighted entropy decrease N_t H(t) - sum N_c H(c)): node 0 on ``a``:
    10 * 1 - (3 * 0 + 3 * 0 + 4 * 1) = 6; node 3 on ``x``: 4 * 1 - 0 = 4. Normalised:
    a 0.6, x 0.4.

    A row with ``a`` missing and x = 1 goes down r, g and b with weights 3/10, 3/10, 4/10
    and, in b, to leaf 4: its heaviest leaf is 4 (0.4). A row (b, x missing) reaches leaves
    4 and 5 with 1/2 each: the tie goes to the smaller id, 4.
    """
    X, y = hand_data()
    est = TreecertClassifier(method="frequency").fit(X, y)
    tree = est.method_.model_.tree_
    np.testing.assert_array_equal(tree.feature, [0, -1, -1, 1, -1, -1])
    np.testing.assert_array_equal(tree.children, [1, 2, 3, 4, 5])
    assert tree.threshold[3] == 2.5

    np.testing.assert_allclose(est.feature_importances_, [0.6, 0.4], rtol=1e-12)
    assert est.get_depth() == 2 and est.get_n_leaves() == 4
    assert est.method_.size == 4 and isinstance(est.method_.size, int)

    rows = pd.DataFrame({"a": pd.Categorical(["r", "g", "b", "b", None, "b"],
                                             categories=["r", "g", "b"]),
                         "x": [0.0, 0, 1, 4, 1, np.nan]})
    np.testing.assert_array_equal(est.apply(rows), [1, 2, 4, 5, 4, 4])
    path = est.decision_path(rows)
    assert path.format == "csr" and path.shape == (6, 6)
    np.testing.assert_array_equal(path.toarray(), [
        [1, 1, 0, 0, 0, 0],
        [1, 0, 1, 0, 0, 0],
        [1, 0, 0, 1, 1, 0],
        [1, 0, 0, 1, 0, 1],
        [1, 0, 0, 1, 1, 0],
        [1, 0, 0, 1, 1, 0],
    ])
    # the same leaves as ``predict --explain``'s leaf column
    model = api.train(est._train_data, leaf="frequency")
    runner = api.predictor(model, explain=True)
    data, _ = est._predict_data(rows)
    explained = api.predict_with(runner, model, data)
    np.testing.assert_array_equal(explained["leaf"], est.apply(rows))


def test_importances_of_a_column_the_tree_left_out_and_of_one_leaf():
    X, y = hand_data()
    X = X.assign(empty=np.nan)
    with pytest.warns(UserWarning, match="no known value"):
        est = TreecertClassifier(method="laplace", criterion="gini").fit(X, y)
    imp = est.feature_importances_
    assert imp.shape == (3,) and imp[2] == 0 and imp.sum() == pytest.approx(1)
    stump = TreecertClassifier(max_depth=0).fit(*hand_data())
    assert stump.get_depth() == 0 and stump.get_n_leaves() == 1
    np.testing.assert_array_equal(stump.feature_importances_, [0, 0])


def test_methods_without_one_tree_say_so():
    X, y = hand_data()
    est = TreecertClassifier(method="bagging", random_state=0).fit(X, y)
    assert isinstance(est.method_.size, float)
    assert not hasattr(est, "feature_importances_")
    with pytest.raises(ParameterError, match="does not predict with one tree"):
        est.apply(X)
    # tpce: the tree grown on the training data alone
    tpce = TreecertClassifier(method="tpce").fit(X, y)
    assert tpce.get_n_leaves() == 4 and tpce.get_depth() == 2


def test_docstring_lists_every_registered_method():
    for name in METHODS:
        assert f"``{name}``" in TreecertClassifier.__doc__


def mixed_frame(n=80, seed=3):
    """Numbers, a categorical and missing values in both; integer labels."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n)
    num = rng.normal(size=n)
    y = ((num > 0) ^ (colour == "blue")).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    num[rng.random(n) < 0.1] = np.nan
    colour = pd.Categorical(np.where(rng.random(n) < 0.1, None, colour),
                            categories=["red", "green", "blue"])
    return pd.DataFrame({"num": num, "colour": colour, "other": rng.normal(size=n)}), y


@pytest.mark.parametrize("params", [
    {"method": "laplace"},
    {"method": "m_estimate", "prune": "ebp", "cf": 0.1},
    {"method": "frequency", "prune": "ccp"},
    {"method": "kk"},
    {"method": "binning"},
])
def test_saved_model_is_served_by_treecert_predict(params, tmp_path, capsys):
    """``fit(X, y).save(path)``, then ``treecert predict path data.csv`` with the CSV
    written from the same X: the estimator's probabilities to 1e-12; ``load`` gives them
    back exactly, with the classes and parameters."""
    X, y = mixed_frame()
    est = TreecertClassifier(**params).fit(X, y)
    model, csv, out = tmp_path / "m.json", tmp_path / "data.csv", tmp_path / "p.csv"
    est.save(model)
    X.to_csv(csv, index=False)
    code, _, err = run_cli(["predict", model, csv, "-o", out, "-q"], capsys)
    assert code == 0, err
    served = pd.read_csv(out)
    proba = est.predict_proba(X)
    for k, label in enumerate(est.classes_):
        np.testing.assert_allclose(served[f"p_{label}"], proba[:, k], rtol=0, atol=1e-12)

    back = TreecertClassifier.load(model)
    np.testing.assert_array_equal(back.predict_proba(X), proba)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.classes_.dtype == est.classes_.dtype
    assert back.get_params() == est.get_params()
    assert list(back.feature_names_in_) == ["num", "colour", "other"]


def test_saved_tree_is_the_pruned_tree(tmp_path):
    X, y = mixed_frame()
    est = TreecertClassifier(method="laplace", prune="ebp").fit(X, y)
    est.save(tmp_path / "m.json")
    model = read_model(tmp_path / "m.json")
    assert model.method == "laplace" and model.pruning["method"] == "ebp"
    assert model.tree.n_leaves == est.get_n_leaves()


def test_load_a_model_of_treecert_train(weather_model):
    """A ``treecert train`` file loads as an estimator predicting as ``treecert predict``."""
    model = read_model(weather_model)
    est = TreecertClassifier.load(weather_model)
    assert est.get_params()["method"] == "laplace" and est.get_params()["min_leaf"] == 1
    X = pd.DataFrame(model.training_data.X, columns=[a.name for a in model.schema.attributes])
    for a in model.schema.attributes:
        if a.kind == "nominal":
            X[a.name] = pd.Categorical.from_codes(np.nan_to_num(X[a.name], nan=-1).astype(int),
                                                  a.values)
    table = api.predict(model, model.training_data)
    np.testing.assert_allclose(est.predict_proba(X), table[[f"p_{c}" for c in
                                                            model.schema.classes]], atol=0)


def ignored_messages(**params):
    X, y = hand_data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TreecertClassifier(**params).fit(X, y)
    return [str(w.message) for w in caught if "ignored" in str(w.message)]


@pytest.mark.parametrize("params, expected", [
    ({"prune": "none", "cf": 0.1},
     ["cf=0.1 is ignored: it applies to prune='ebp' only, and prune is 'none'."]),
    ({"prune": "ccp", "cf": 0.1},
     ["cf=0.1 is ignored: it applies to prune='ebp' only, and prune is 'ccp'."]),
    ({"prune": "ebp", "cf": 0.1}, []),
    ({"method": "tpce", "alpha": 0.5},
     ["alpha=0.5 is ignored: method 'tpce' has no option 'alpha'."]),
    ({"method": "laplace", "n_trees": 3},
     ["n_trees=3 is ignored: method 'laplace' has no option 'trees'."]),
    ({"method": "kk", "prune": "ebp"},
     ["prune='ebp' is ignored: method 'kk' has no option 'prune'."]),
])
def test_parameters_that_do_not_apply_are_ignored_with_one_warning(params, expected):
    assert ignored_messages(**params) == expected


def test_ignored_parameter_changes_nothing():
    X, y = hand_data()
    with pytest.warns(UserWarning, match="cf=0.1 is ignored"):
        a = TreecertClassifier(cf=0.1).fit(X, y)
    b = TreecertClassifier().fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_explicit_options_that_do_not_apply_are_still_refused():
    X, y = hand_data()
    for params in ({"method": "laplace:cf=0.1"}, {"method_options": {"cf": 0.1}},
                   {"method": "tpce", "method_options": {"alpha": 0.5}}):
        with pytest.raises(ParameterError):
            TreecertClassifier(**params).fit(X, y)


def test_grid_over_prune_and_cf_fits_every_point():
    GridSearchCV = pytest.importorskip("sklearn.model_selection").GridSearchCV
    X, y = mixed_frame()
    grid = {"prune": ["none", "ebp", "ccp"], "cf": [None, 0.1, 0.4]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search = GridSearchCV(TreecertClassifier(), grid, cv=3, error_score="raise").fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert len(scores) == 9 and np.isfinite(scores).all()


def test_saved_then_pruned_by_the_command_line_loads_as_the_file_says(tmp_path, capsys):
    X, y = mixed_frame()
    est = TreecertClassifier(method="laplace").fit(X, y)
    est.save(tmp_path / "m.json")
    code, _, err = run_cli(["prune", tmp_path / "m.json", "--method", "ebp", "-o",
                            tmp_path / "p.json", "-q"], capsys)
    assert code == 0, err
    back = TreecertClassifier.load(tmp_path / "p.json")
    pruned = api.prune(read_model(tmp_path / "m.json"), "ebp")
    assert back.get_n_leaves() == pruned.tree.n_leaves < est.get_n_leaves()
    assert back.get_params()["method"] == "laplace" and back.get_params()["prune"] == "none"
    assert list(back.feature_names_in_) == ["num", "colour", "other"]
    table = api.predict(pruned, back._predict_data(X)[0])
    np.testing.assert_array_equal(back.predict_proba(X), table[["p_0", "p_1"]])
