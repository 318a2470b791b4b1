"""Every fold of a cross-validation from one engine (``held_out``): TPCE's and K&K's exact
batched paths on the rows outside each job's fold give what fitting on those rows gives,
bit for bit, and ``evaluate`` plans one unit per repeat where that applies.
``TREECERT_ENGINE_EXAMPLES`` raises the number of random cases (CI uses the default)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import SAMPLE_DATA as SAMPLE
from conftest import random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.folds import read_fold_ids
from treecert.data.loading import load_dataset
from treecert.evaluation import experiment
from treecert.methods import make_method
from treecert.methods.kk import KukarKononenkoMethod
from treecert.methods.tpce import TpceMethod
from treecert.transductive import held_out_folds
from treecert.transductive.batch_engine import BatchEngine
from treecert.tree.classifier import DecisionTree
from treecert.tree.split_search import counted_in_average

EXAMPLES = int(os.environ.get("TREECERT_ENGINE_EXAMPLES", "60"))


def _method(spec: str):
    method = make_method(spec)
    method.explain = True  # TPCE's K trees' estimates, K&K's Q, not only the probabilities
    return method


def _per_fold(spec: str, data, folds):
    """Fit on the rows outside each fold, predict its rows: what evaluate did per fold
    (the prediction and the model's size)."""
    out = []
    for rows in folds:
        train = np.setdiff1d(np.arange(data.n_samples), rows)
        method = _method(spec).fit(data.subset(train))
        out.append((method.predict(data.subset(rows)), method.size))
    return out


def _assert_same(got, expect):
    for (g, g_size), (e, e_size) in zip(got, expect, strict=True):
        assert g_size == e_size
        np.testing.assert_array_equal(g.proba, e.proba)
        for name in ("certainty", "lower", "upper"):
            a, b = getattr(g, name), getattr(e, name)
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)
        assert g.columns.keys() == e.columns.keys()
        for name in e.columns:
            np.testing.assert_array_equal(g.columns[name], e.columns[name])


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=random_datasets(min_rows=8, max_rows=40),
       criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
       binary=st.booleans(), min_leaf=st.sampled_from([1.0, 2.0]),
       n_folds=st.integers(2, 4), seed=st.integers(0, 2**16),
       name=st.sampled_from(["tpce", "kk"]))
def test_held_out_folds_equal_fitting_each_fold(data, criterion, binary, min_leaf, n_folds,
                                               seed, name):
    spec = (f"{name}:criterion={criterion},binary_splits={str(binary).lower()},"
            f"min_leaf={min_leaf}")
    fold_of = np.random.default_rng(seed).integers(0, n_folds, data.n_samples)
    folds = [np.flatnonzero(fold_of == f) for f in range(n_folds) if (fold_of == f).any()]
    sizes = [data.n_samples - rows.size for rows in folds]
    if name == "kk" and any(np.unique(np.delete(data.y, rows)).size < 2 for rows in folds):
        return  # a fold's inductive tree refuses one class: one engine or not
    method = _method(spec).fit(data)
    if not method.serves_held_out(data, sizes):
        learner = method.new_tree()
        rule = counted_in_average(data.schema.nominal_mask(), data.schema.n_values(),
                                  data.n_samples)
        assert BatchEngine.certifies(data, learner) or any(
            not np.array_equal(counted_in_average(data.schema.nominal_mask(),
                                                  data.schema.n_values(), s)[1], rule[1])
            or counted_in_average(data.schema.nominal_mask(), data.schema.n_values(),
                                  s)[0] != rule[0] for s in sizes)
        if name == "tpce":  # (K&K fits its inductive trees first: a fold's may refuse)
            with pytest.raises(ValueError):
                method.predict_held_out(folds)
        return
    _assert_same(method.predict_held_out(folds), _per_fold(spec, data, folds))


def test_vote_folds_from_one_engine_equal_ten_fits():
    """TPCE with both criteria, and K&K (its inductive trees per fold, sizes included)."""
    data = load_dataset(SAMPLE / "vote.arff")
    ids = read_fold_ids((SAMPLE / "vote.folds.csv").read_text(), data.n_samples, "vote")
    folds = [np.flatnonzero(ids == f) for f in range(10)]
    for spec in ("tpce", "tpce:criterion=gain_ratio", "kk"):
        method = _method(spec).fit(data)
        assert method.serves_held_out(data, [data.n_samples - f.size for f in folds])
        _assert_same(method.predict_held_out(folds), _per_fold(spec, data, folds))


def test_many_values_rule_decides_where_one_engine_serves():
    """A nominal column of 3 values counts in the average gain only from 11 rows on
    (3 < 0.3 N): all 12 rows count it, folds of 9 training rows do not — one engine built
    on all rows would not search as those folds' own fits do."""
    from conftest import make_dataset

    data = make_dataset({"a": list("xyzxyzxyzxyz"), "b": [0, 1] * 6},
                        [0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0])
    data.X[0, 1] = np.nan
    nominal, n_values = data.schema.nominal_mask(), data.schema.n_values()
    assert counted_in_average(nominal, n_values, 12)[1].tolist() == [True, True]
    assert counted_in_average(nominal, n_values, 9)[1].tolist() == [True, False]
    learner = DecisionTree(criterion="gain_ratio", min_leaf=1)
    assert not BatchEngine.certifies(data, learner)
    assert not held_out_folds.serves(data, learner, [9, 9, 9, 9], False)
    assert held_out_folds.serves(data, learner, [11, 11], False)  # 0.3 * 11 > 3 as well
    assert not held_out_folds.serves(data, DecisionTree(collapse=True), [11, 11], False)
    assert not held_out_folds.serves(data, learner, [11, 11], True)  # certified


def test_evaluate_plans_one_unit_per_repeat_where_one_engine_serves():
    data = load_dataset(SAMPLE / "vote.arff")
    protocol = experiment.Protocol(kind="cv", n_folds=5, repeats=2)
    keys = experiment.unit_keys(data, ["tpce", "laplace", "tpce:engine=naive"], protocol)
    assert [k for k in keys if k[0] == 0] == [(0, 0, -1), (0, 1, -1)]
    assert len([k for k in keys if k[0] == 1]) == len([k for k in keys if k[0] == 2]) == 10
    complete = load_dataset(SAMPLE / "diabetes.arff")
    assert all(f >= 0 for _, _, f in experiment.unit_keys(complete, ["tpce"], protocol))


def test_evaluate_output_is_the_same_either_way(monkeypatch):
    data = load_dataset(SAMPLE / "vote.arff")
    protocol = experiment.Protocol(kind="cv", n_folds=3, repeats=2)

    methods = ["tpce:criterion=gain_ratio", "laplace", "kk"]

    def run():
        return experiment.evaluate(data, methods, protocol=protocol, timing=False)

    assert [k for k in experiment.unit_keys(data, methods, protocol) if k[2] < 0] == [
        (0, 0, -1), (0, 1, -1), (2, 0, -1), (2, 1, -1)]
    grouped = run()
    for cls in (TpceMethod, KukarKononenkoMethod):
        monkeypatch.setattr(cls, "serves_held_out", lambda self, d, s: False)
    assert all(f >= 0 for _, _, f in experiment.unit_keys(data, methods, protocol))
    per_fold = run()  # K&K's leaves per fold: its inductive trees' sizes
    assert grouped.predictions.equals(per_fold.predictions)
    assert grouped.metrics.equals(per_fold.metrics)
    assert grouped.folds.equals(per_fold.folds)


def test_cli_runs_a_repeat_as_one_unit_and_its_shards_merge_alike(tmp_path, capsys):
    from conftest import run_cli

    run = [*map(str, ["evaluate", SAMPLE / "vote.arff", "--method", "tpce", "--method",
                      "laplace", "--folds", "3", "--no-timing"])]
    code, _, err = run_cli([*run, "-o", tmp_path / "whole"], capsys)
    assert code == 0, err
    assert "vote: unit 4/4 done: tpce repeat 0, all folds from one engine (" in err
    for part in ("0/2", "1/2"):
        code, _, err = run_cli([*run, "--shard", part, "-o", tmp_path / "shards"], capsys)
        assert code == 0, err
    code, _, err = run_cli(["merge", tmp_path / "shards", "-o", tmp_path / "shards"], capsys)
    assert code == 0, err
    for name in ("predictions.csv", "metrics.csv", "metrics.json", "metrics_folds.csv"):
        assert (tmp_path / "whole" / name).read_bytes() == (tmp_path / "shards" / name).read_bytes()


def test_one_engine_only_where_a_folds_own_calls_are_small():
    """A fold's jobs (test rows × classes) times its training rows, times what a search
    holds per entry: vote's 10 folds hold 44 · 2 · 392 entries, nominal columns only, far
    below a quarter of CALL_ENTRIES; 1 500 rows of 3 classes (150 · 3 · 1 351) are past it,
    and so are 300 rows of 10 numeric columns, where one engine's calls outgrow the caches."""
    from treecert.transductive import budget

    assert held_out_folds.pays(435, [391] * 10, 2)
    assert not held_out_folds.pays(1500, [1350] * 10, 3)
    assert not held_out_folds.pays(300, [270] * 10, 3, 1 + 10 * 4)  # 10 numeric columns
    numeric = load_dataset(SAMPLE / "diabetes.arff")  # 8 numeric columns, 2 classes
    numeric.X[0, 0] = np.nan  # (not certified: the exact paths)
    assert not make_method("tpce").serves_held_out(numeric, [691] * 10)
    assert budget.CALL_ENTRIES // 4 < 150 * 3 * 1351
    data = load_dataset(SAMPLE / "soybean.arff")  # 68 rows × 19 labels × 616 rows a fold
    assert not make_method("tpce").serves_held_out(data, [615] * 10)
