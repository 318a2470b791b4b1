"""``TreecertClassifier``: scikit-learn's conventions, its checks, its tools (clone,
pipelines, cross-validation, grid search), and the same results as treecert's own path.

scikit-learn is a test dependency, not a runtime one: the tests that need it skip without
it, and one test runs the estimator in a subprocess where ``import sklearn`` fails.
"""

from __future__ import annotations

import doctest
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import DATASETS, REPO

import treecert
from treecert import api
from treecert.data.inmemory import to_frame
from treecert.data.loading import load_dataset
from treecert.errors import ConfigError, DataError, InputError, ParameterError
from treecert.estimator import EXPECTED_CHECK_FAILURES, TreecertClassifier
from treecert.methods import METHODS, make_method
from treecert.tree.classifier import DecisionTree

TREE = {"criterion": "info_gain", "min_leaf": 2.0, "max_depth": None, "min_gain": 0.0,
        "cp": 0.0, "binary_splits": False, "threshold": "midpoint", "collapse": False}


def frame(name: str):
    data = load_dataset(DATASETS / f"{name}.arff")
    X, y = to_frame(data)
    return data, X, y


def blobs(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


# ------------------------------------------------------------------ scikit-learn's checks


def test_check_estimator_passes_every_check_with_the_default_method():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(TreecertClassifier(), on_fail=None, on_skip=None)
    bad = [(r["check_name"], repr(r["exception"])) for r in results
           if r["status"] not in ("passed", "skipped")]
    assert not bad
    assert sum(r["status"] == "passed" for r in results) >= 55


@pytest.mark.slow
@pytest.mark.parametrize("method", [m for m in METHODS if m != "laplace"])
def test_check_estimator_with_every_method(method):
    """Every registered method passes, except the checks EXPECTED_CHECK_FAILURES documents
    as contradicting the method; those must really fail (the list stays honest)."""
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimator

    expected = EXPECTED_CHECK_FAILURES.get(method, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(TreecertClassifier(method=method), on_fail=None,
                                  on_skip=None, expected_failed_checks=expected)
    status = {r["check_name"]: r["status"] for r in results}
    assert not [(r["check_name"], repr(r["exception"])) for r in results
                if r["status"] == "failed"]
    assert all(status[name] == "xfail" for name in expected), status


def test_dataframe_column_names_are_checked_as_scikit_learn_does():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

    check_dataframe_column_names_consistency("TreecertClassifier", TreecertClassifier())


def test_the_docstring_example_runs():
    import treecert.estimator

    assert doctest.testmod(treecert.estimator).failed == 0


# ------------------------------------------------------------------ scikit-learn's tools


def test_clone_copies_the_parameters_and_not_the_fit():
    pytest.importorskip("sklearn")
    from sklearn.base import clone, is_classifier

    est = TreecertClassifier(method="bagging", n_trees=3, loss=np.array([[0, 1], [5, 0]]),
                             method_options={"leaf": "frequency"}, random_state=4)
    est.fit(*blobs())
    copy = clone(est)
    assert is_classifier(copy)
    assert not hasattr(copy, "method_")
    params, copied = est.get_params(), copy.get_params()
    assert params.keys() == copied.keys()
    np.testing.assert_array_equal(copied.pop("loss"), params.pop("loss"))
    assert copied == params
    X, y = blobs(seed=1)
    np.testing.assert_array_equal(copy.fit(X, y).predict_proba(X),
                                  clone(copy).fit(X, y).predict_proba(X))


def test_cross_val_score_on_a_dataframe_with_nominal_columns():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import cross_val_score

    _, X, y = frame("vote")
    scores = cross_val_score(TreecertClassifier(), X, y, cv=5)
    assert scores.shape == (5,)
    assert scores.mean() > 0.9


def test_pipeline_with_a_column_transformer_passing_a_categorical_column_through():
    """Scaled numeric columns and a categorical column passed through (numpy output: an
    object array) give the tree of the DataFrame itself (scaling keeps every partition)."""
    pytest.importorskip("sklearn")
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    _, X, y = frame("credit-g")
    numeric = [c for c in X.columns if X[c].dtype == float]
    nominal = ["checking_status", "purpose"]
    X = X[numeric + nominal].astype(dict.fromkeys(nominal, object))
    scale = ColumnTransformer([("num", StandardScaler(), numeric)], remainder="passthrough")
    pipe = make_pipeline(scale, TreecertClassifier()).fit(X, y)
    est = pipe[-1]
    assert est.nominal_features_.tolist() == [False] * len(numeric) + [True, True]
    direct = TreecertClassifier().fit(X, y)
    np.testing.assert_array_equal(pipe.predict_proba(X), direct.predict_proba(X))
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.6
    # With pandas output the names and dtypes reach the estimator.
    pipe = make_pipeline(scale.set_output(transform="pandas"), TreecertClassifier()).fit(X, y)
    assert pipe[-1].feature_names_in_[-1] == "remainder__purpose"
    assert pipe[-1].nominal_features_.sum() == 2


def test_grid_search_over_a_tree_and_a_method_parameter():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import GridSearchCV

    _, X, y = frame("diabetes")
    grid = GridSearchCV(TreecertClassifier(),
                        {"min_leaf": [2, 20], "method": ["laplace", "m_estimate"]},
                        cv=3, scoring="neg_log_loss").fit(X, y)
    assert grid.best_params_["min_leaf"] in (2, 20)
    assert len(grid.cv_results_["params"]) == 4
    assert grid.predict(X).shape == (len(y),)


def test_pickle_round_trip_of_a_transductive_method():
    X, y = blobs(40)
    est = TreecertClassifier(method="kk").fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_certainty(X), est.predict_certainty(X))


@pytest.mark.parametrize("method", ["tpce", "kk", "venn"])
def test_transductive_methods_predict_from_read_only_memory(method):
    """joblib memory-maps a fitted estimator's arrays read-only when it sends it to a
    worker; the engine, which writes each test row into its arrays, gets its own copy."""
    X, y = blobs(30)
    est = TreecertClassifier(method=method).fit(X, y)
    expected = est.predict_proba(X)
    est.method_.engine_.X.setflags(write=False)
    np.testing.assert_array_equal(est.predict_proba(X), expected)


# ------------------------------------------------------------------ the same results


@pytest.mark.parametrize("name", ["vote", "diabetes", "credit-g"])
def test_same_probabilities_as_decision_tree_and_api(name):
    """The DataFrame of an ARFF file grows the tree DecisionTree and api.train grow on the
    file (credit-g declares its classes unsorted: the columns are reordered)."""
    data, X, y = frame(name)
    est = TreecertClassifier().fit(X, y)
    order = [data.schema.classes.index(c) for c in est.classes_]
    ref = DecisionTree(leaf="laplace").fit(data).predict_proba(data)[:, order]
    np.testing.assert_array_equal(est.predict_proba(X), ref)
    table = api.predict(api.train(data, leaf="laplace"), data)
    np.testing.assert_array_equal(est.predict_proba(X),
                                  table[[f"p_{c}" for c in est.classes_]].to_numpy())
    if tuple(est.classes_) == data.schema.classes:  # else a tied leaf names another class
        assert est.export_text() == api.show(api.train(data, leaf="laplace"))


def test_same_rows_as_the_command_line(tmp_path):
    """``treecert train`` + ``treecert predict`` on vote.arff: the same predicted class and
    certainty for every row."""
    _, X, y = frame("vote")
    model, out = tmp_path / "vote.json", tmp_path / "predictions.csv"
    for args in (["train", str(DATASETS / "vote.arff"), "-o", str(model), "--leaf", "laplace"],
                 ["predict", str(model), str(DATASETS / "vote.arff"), "-o", str(out)]):
        subprocess.run([sys.executable, "-m", "treecert", *args], cwd=REPO, check=True,
                       capture_output=True)
    cli = pd.read_csv(out)
    mine = TreecertClassifier().fit(X, y).predict_with_certainty(X)
    assert (mine["predicted"].to_numpy() == cli["predicted"].to_numpy()).all()
    np.testing.assert_allclose(mine["certainty"].to_numpy(), cli["certainty"].to_numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("method", ["tpce", "kk", "venn", "bagging", "empirical_bayes"])
def test_same_predictions_as_the_registered_method(method):
    data, X, y = frame("iris")
    est = TreecertClassifier(method=method).fit(X, y)
    runner = make_method(method, TREE).fit(data)
    expected = runner.predict(data)
    got = est.predict_with_certainty(X)
    np.testing.assert_allclose(est.predict_proba(X), expected.proba, rtol=0, atol=1e-15)
    if expected.certainty is not None:
        np.testing.assert_allclose(est.predict_certainty(X), expected.certainty, atol=1e-15)
    for column, values in expected.columns.items():
        np.testing.assert_allclose(got[column].to_numpy(dtype=float), values, atol=1e-15)
    if expected.lower is not None:
        lower, upper = est.predict_proba_bounds(X)
        np.testing.assert_allclose(lower, expected.lower, atol=1e-15)
        np.testing.assert_allclose(upper, expected.upper, atol=1e-15)
        assert {f"lower_{c}" for c in est.classes_} <= set(got.columns)


def test_pruning_and_loss_match_the_method_options():
    data, X, y = frame("diabetes")  # classes declared sorted: the same stratified holdout
    L = np.array([[0.0, 1.0], [5.0, 0.0]])  # missing a positive costs 5
    est = TreecertClassifier(prune="ccp", loss=L, method_options={"holdout": 0.3}).fit(X, y)
    runner = make_method("laplace:prune=ccp,holdout=0.3", {**TREE, "loss": L}).fit(data)
    np.testing.assert_array_equal(est.predict_proba(X), runner.predict(data).proba)
    assert est.method_.size == runner.size < TreecertClassifier().fit(X, y).method_.size
    # predict: the class of minimum expected loss, not the most probable one
    proba = est.predict_proba(X)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmin(proba @ L, axis=1)])
    assert (est.predict(X) != est.classes_[np.argmax(proba, axis=1)]).any()
    negative, positive = est.classes_
    as_dict = {positive: {positive: 0, negative: 5}, negative: {negative: 0, positive: 1}}
    same = TreecertClassifier(prune="ccp", loss=as_dict, method_options={"holdout": 0.3})
    np.testing.assert_array_equal(same.fit(X, y).predict_proba(X), proba)
    table = est.predict_with_certainty(X)
    np.testing.assert_array_equal(table["predicted"], est.predict(X))
    np.testing.assert_allclose(table["expected_loss"],
                               (proba @ L)[np.arange(len(y)), np.argmin(proba @ L, axis=1)])


def test_method_spec_options_and_parameters_are_one_and_the_same():
    X, y = blobs()
    a = TreecertClassifier(method="laplace:alpha=0.5").fit(X, y).predict_proba(X)
    b = TreecertClassifier(alpha=0.5).fit(X, y).predict_proba(X)
    c = TreecertClassifier(method_options={"alpha": 0.5}).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, TreecertClassifier().fit(X, y).predict_proba(X))


def test_random_state_seeds_the_randomised_methods():
    X, y = blobs(80)
    def proba(**kw):
        return TreecertClassifier(method="bagging", n_trees=5, **kw).fit(X, y).predict_proba(X)

    np.testing.assert_array_equal(proba(), proba(random_state=1))  # None: the CLI's seed 1
    np.testing.assert_array_equal(proba(random_state=7), proba(random_state=7))
    assert not np.array_equal(proba(random_state=7), proba(random_state=8))
    assert proba(random_state=np.random.RandomState(0)).shape == (80, 2)


# ------------------------------------------------------------------ inputs


def test_labels_of_any_type_come_back_as_given():
    X, y = blobs()
    for labels in (np.array(["no", "yes"]), np.array([-1, 1]), np.array([False, True]),
                   np.array(["no", "yes"], dtype=object), np.array([3.0, 7.0])):
        est = TreecertClassifier().fit(X, labels[y])
        np.testing.assert_array_equal(est.classes_, labels)
        assert est.predict(X).dtype == labels.dtype
        assert est.score(X, labels[y]) > 0.9


def test_missing_values_unseen_values_and_all_missing_columns():
    df = pd.DataFrame({
        "colour": pd.Categorical(["red", "blue", None, "red", "blue", "red", "blue", "red"],
                                 categories=["red", "blue"]),
        "size": [1.0, 2.0, 3.0, np.nan, 5.0, 6.0, 7.0, 8.0],
        "empty": [np.nan] * 8,
        "flag": [True, False, True, False, True, False, True, False],
    })
    y = ["a", "b", "a", "a", "b", "a", "b", "a"]
    with pytest.warns(UserWarning, match="'empty' have no known value"):
        est = TreecertClassifier(min_leaf=1).fit(df, y)
    assert est.nominal_features_.tolist() == [True, False, False, True]
    assert [a.name for a in est.schema_.attributes] == ["colour", "size", "flag"]
    assert est.schema_.attributes[0].values == ("red", "blue")
    unseen = df.iloc[:2].astype({"colour": object})
    unseen["colour"] = ["green", None]
    missing = df.iloc[:2].copy()
    missing["colour"] = None
    # An unseen value is read as missing, and said once (the None is missing, not unseen).
    with pytest.warns(UserWarning) as caught:
        from_unseen = est.predict_proba(unseen)
    assert [str(w.message) for w in caught] == [
        "X: 1 value not seen in training read as missing (colour: 'green' \u00d71)"]
    np.testing.assert_array_equal(from_unseen, est.predict_proba(missing))


def test_lists_of_rows_with_strings_and_numbers_and_forced_nominal_columns():
    rows = [["a", 1, 10.5], ["b", 2, 11.0], ["a", 1, 9.0], ["b", 3, 12.5], ["a", 2, 8.0],
            ["b", 3, 13.0]]
    y = [0, 1, 0, 1, 0, 1]
    est = TreecertClassifier(min_leaf=1).fit(rows, y)
    assert est.nominal_features_.tolist() == [True, False, False]
    est = TreecertClassifier(min_leaf=1, nominal=[1]).fit(rows, y)
    assert est.schema_.attributes[1].values == ("1", "2", "3")
    assert est.predict([["a", 3, 9.0]]).shape == (1,)
    with pytest.raises(ParameterError, match="no column 'x9'"):
        TreecertClassifier(nominal=["x9"]).fit(rows, y)


def test_zero_weights_are_rows_left_out():
    X, y = blobs(40)
    w = np.r_[np.zeros(10), np.ones(30)]
    a = TreecertClassifier().fit(X, y, sample_weight=w).predict_proba(X)
    b = TreecertClassifier().fit(X[10:], y[10:]).predict_proba(X)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("X, y, error, match", [
    (np.zeros((0, 3)), [], InputError, r"0 sample\(s\)"),
    (np.zeros((4, 0)), [0, 1, 0, 1], InputError, r"0 feature\(s\)"),
    (np.ones(4), [0, 1, 0, 1], InputError, "Reshape your data"),
    (np.array([[1.0], [np.inf], [2.0], [3.0]]), [0, 1, 0, 1], InputError, "infinity"),
    (np.ones((4, 1)), [0, 1, np.nan, 1], InputError, "NaN"),
    (np.ones((4, 1)), [0.5, 1.5, 0.5, 1.5], InputError, "Unknown label type: continuous"),
    (np.ones((4, 1)), np.array(["a", 1, "a", 1], dtype=object), InputError,
     "mixes strings and numbers"),
    (np.ones((4, 1)), [1, 1, 1, 1], InputError, "only one class"),
    (np.ones((4, 1)), [0, 1, 0], InputError, "4 rows but y has 3"),
    (np.array([[1 + 1j], [2], [3], [4]]), [0, 1, 0, 1], InputError, "Complex"),
    (np.array([[{}], [1.0], [2.0], [3.0]], dtype=object), [0, 1, 0, 1], TypeError,
     "argument must be a string or a real number"),
])
def test_bad_input_is_a_value_error_and_a_data_error(X, y, error, match):
    with pytest.raises(error, match=match) as info:
        TreecertClassifier().fit(X, y)
    if error is InputError:
        assert isinstance(info.value, ValueError) and isinstance(info.value, DataError)


def test_predict_checks_the_columns():
    X, y = blobs()
    est = TreecertClassifier().fit(X, y)
    with pytest.raises(InputError, match="X has 2 features, but TreecertClassifier is "
                                         "expecting 3 features as input"):
        est.predict(X[:, :2])
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    est.fit(df, y)
    with pytest.raises(InputError, match="Feature names must be in the same order"):
        est.predict(df[["c", "b", "a"]])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(X)
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(InputError, match="sparse"):
        est.predict(sparse.csr_matrix(X))


@pytest.mark.parametrize("params, match", [
    ({"method": "nope"}, "unknown method 'nope'"),
    ({"method": "laplace:alpha=0.5", "alpha": 0.3}, "given twice"),
    ({"method": "laplace:min_leaf=5"}, "a setting of the tree"),
    ({"criterion": "entropy"}, "criterion must be one of info_gain"),
    ({"min_leaf": "two"}, "min_leaf: expected a number"),
    ({"loss": [[0, 1]]}, r"loss: expected a \(2, 2\) matrix"),
    ({"loss": {"0": {"0": 0, "1": 1}}}, "loss"),
    ({"prune": "sometimes"}, "prune must be one of none, ccp"),
    ({"random_state": "x"}, "random_state"),
    ({"method_options": {"engine": 3}}, "method_options"),
])
def test_bad_parameters_are_a_value_error_and_a_config_error(params, match):
    est = TreecertClassifier(**params)  # never raises: scikit-learn checks in fit
    with pytest.raises(ParameterError, match=match) as info:
        est.fit(*blobs())
    assert isinstance(info.value, ValueError) and isinstance(info.value, ConfigError)


def test_unfitted_and_boundless_uses_say_so():
    est = TreecertClassifier()
    with pytest.raises(ConfigError, match="not fitted yet") as info:
        est.predict_proba(np.ones((2, 3)))
    assert isinstance(info.value, ValueError) and isinstance(info.value, AttributeError)
    X, y = blobs()
    with pytest.raises(ParameterError, match="gives no probability bounds"):
        est.fit(X, y).predict_proba_bounds(X)
    with pytest.raises(ParameterError, match="no single tree"):
        TreecertClassifier(method="bagging").fit(X, y).export_text()
    np.testing.assert_array_equal(est.predict_certainty(X), est.predict_proba(X).max(axis=1))


# ------------------------------------------------------------------ packaging


def test_import_treecert_is_cheap_and_exports_the_estimator_lazily():
    code = ("import sys, treecert; print(sorted(m for m in ('pandas', 'sklearn', "
            "'treecert.estimator') if m in sys.modules)); "
            "print(treecert.TreecertClassifier.__module__, 'TreecertClassifier' in dir(treecert))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "treecert.estimator True"
    assert treecert.TreecertClassifier is TreecertClassifier
    with pytest.raises(AttributeError):
        treecert.NoSuchThing  # noqa: B018


def test_works_without_scikit_learn():
    code = """
import sys
class NoSklearn:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "sklearn":
            raise ImportError("no sklearn here")
sys.meta_path.insert(0, NoSklearn())
import numpy as np
from treecert import TreecertClassifier
from treecert.sklearn_base import HAVE_SKLEARN
X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
y = np.array(["no", "no", "no", "yes", "yes", "yes"])
clf = TreecertClassifier(min_leaf=1).fit(X, y)
print(HAVE_SKLEARN, clf.score(X, y), clf.predict([[4.5]])[0], repr(clf))
copy = TreecertClassifier(**clf.get_params()).set_params(method="frequency")
print(copy.fit(X, y).predict_proba([[4.5]]).tolist(), copy.get_params()["min_leaf"])
try:
    TreecertClassifier().predict(X)
except ValueError as exc:
    print(type(exc).__name__)
print("sklearn" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout.splitlines()
    assert out == ["False 1.0 yes TreecertClassifier(min_leaf=1)",
                   "[[0.0, 1.0]] 1", "NotFittedError", "False"]
