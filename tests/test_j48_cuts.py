"""J48's cut rule (``threshold="j48"``, :mod:`treecert.tree.j48_cuts`), by hand.

Every expected tree below is the one ``java weka.classifiers.trees.J48 -U -M 1`` (Weka
3.6.14) prints for the same rows; the live comparison over the shared ARFF files is
``tests/test_j48_parity.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import DATASETS, make_dataset, run_cli

from treecert.tree.classifier import DecisionTree
from treecert.tree.j48_cuts import j48_route_bounds, j48_split_point
from treecert.tree.render import to_text

# Two groups: in g = b, x = 1..4 are "no" and 10..13 "yes"; g = a holds x = 0, 6, 20, 21.
X_COL = [1, 2, 3, 4, 10, 11, 12, 13, 0, 0, 6, 6, 20, 20, 21, 21]
G_COL = ["b"] * 8 + ["a"] * 8
Y = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]


def _tree_text(rule: str) -> list[str]:
    data = make_dataset({"g": G_COL, "x": X_COL}, Y)
    tree = DecisionTree(criterion="gain_ratio", threshold=rule, min_leaf=1).fit(data).tree_
    return to_text(tree, data.schema).splitlines()[:6]


def test_split_point_is_the_largest_training_value_not_above_the_midpoint():
    """The node g = b cuts between its values 4 and 10: midpoint 7. The whole training
    set's largest x <= 7 is 6 (a row of g = a), so J48 prints ``x <= 6``, where the node's
    lower value gives 4 and the midpoint 7. The root cuts between 13 and 20 (midpoint
    16.5): 13 is the largest value <= 16.5."""
    j48 = ["x <= 13", "|   g = b", "|   |   x <= 6: no (4.0)", "|   |   x > 6: yes (4.0)",
           "|   g = a: yes (4.0)", "x > 13: no (4.0)"]
    assert _tree_text("j48") == j48
    assert _tree_text("lower")[2] == "|   |   x <= 4: no (4.0)"
    assert _tree_text("midpoint")[2] == "|   |   x <= 7: no (4.0)"


def test_values_between_the_rules_go_where_j48_sends_them():
    data = make_dataset({"g": G_COL, "x": X_COL}, Y)
    rows = np.array([[0.0, 5.0], [0.0, 6.5]])  # g = b; x = 5 and x = 6.5
    for rule, expected in [("j48", [0, 1]), ("lower", [1, 1]), ("midpoint", [0, 0])]:
        est = DecisionTree(criterion="gain_ratio", threshold=rule, min_leaf=1).fit(data)
        assert est.predict(rows).tolist() == expected, rule


def test_no_cut_between_values_1e5_apart_or_closer():
    """1.0 and 1.000005 are 5e-6 apart: J48 offers no cut there and keeps a leaf
    (``: no (6.0/3.0)``); the other rules cut between any two distinct values."""
    data = make_dataset({"x": [1.0, 1.0, 1.0, 1.000005, 1.000005, 1.000005]},
                        [0, 0, 0, 1, 1, 1])
    assert DecisionTree(criterion="gain_ratio", threshold="j48",
                        min_leaf=1).fit(data).tree_.n_leaves == 1
    assert DecisionTree(criterion="gain_ratio", threshold="lower",
                        min_leaf=1).fit(data).tree_.n_leaves == 2


def test_split_point_scan_by_hand():
    # largest value with v - split < 1e-6: 0.3 for 0.35; unknown values are skipped
    assert j48_split_point(np.array([0.3, 0.1, np.nan, 0.5, 0.2]), 0.35) == 0.3
    # a value less than 1e-6 above the split still counts (Utils.smOrEq)
    assert j48_split_point(np.array([1.0, 2.0000005, 3.0]), 2.0) == 2.0000005
    # values within 1e-6 of each other: the first one the scan meets stays (Utils.gr)
    assert j48_split_point(np.array([2.0000005, 2.0, 1.0]), 2.5) == 2.0000005
    assert j48_split_point(np.array([2.0, 2.0000005, 1.0]), 2.5) == 2.0


def test_routing_tolerance_is_wekas():
    """J48 sends x left when ``x - t < 1e-6``: with t = 0.001588, x = 0.001589 differs by
    9.99999...e-7 and goes left (a wdbc fold's test row does), x = 0.0015891 right."""
    t = 0.001588
    bound = j48_route_bounds(np.array([t, np.nan]))
    assert np.isnan(bound[1])
    assert 0.001589 <= bound[0] < 0.0015891
    assert bound[0] - t < 1e-6 and not np.nextafter(bound[0], np.inf) - t < 1e-6


def test_model_file_keeps_j48_routing(tmp_path, capsys):
    """A --j48 model read back routes as J48: its tree is flagged from the stored
    ``threshold: j48`` parameter."""
    from treecert.api import load_model_json

    path = tmp_path / "m.json"
    data = tmp_path / "d.csv"
    data.write_text("g,x,class\n" + "".join(f"{g},{x},{'yes' if c else 'no'}\n"
                                            for g, x, c in zip(G_COL, X_COL, Y, strict=True)))
    code, _, err = run_cli(["train", data, "-o", path, "--j48", "--prune", "none",
                            "--min-leaf", "1", "-q"], capsys)
    assert code == 0, err
    assert json.loads(path.read_text())["params"]["threshold"] == "j48"
    model = load_model_json(path.read_text())
    assert model.estimator.tree_.j48_cuts
    assert model.estimator.predict(np.array([[0.0, 5.0], [0.0, 6.5]])).tolist() == [0, 1]


@pytest.mark.parametrize("rule", ["midpoint", "lower"])
def test_other_rules_route_by_the_threshold(rule):
    data = make_dataset({"g": G_COL, "x": X_COL}, Y)
    assert not DecisionTree(threshold=rule).fit(data).tree_.j48_cuts


def test_transductive_methods_grow_with_lower_under_j48(tmp_path, capsys):
    """The engines (tpce, kk, venn, certified_tree) have no J48 cut rule: --j48 gives them
    threshold=lower in their spec, and asking for threshold j48 is refused."""
    from treecert.cli.options import j48_spec

    assert j48_spec("tpce") == "tpce:threshold=lower"
    assert j48_spec("venn:threshold=midpoint") == "venn:threshold=midpoint,prune=ebp,cf=0.25"
    assert j48_spec("laplace") == "laplace:prune=ebp,cf=0.25"
    weather = DATASETS / "weather.numeric.arff"
    code, _, err = run_cli(["evaluate", weather, "--j48", "--method", "tpce", "--folds", "2",
                            "--no-timing", "-q", "-o", tmp_path / "ok"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["evaluate", weather, "--threshold", "j48", "--method", "tpce",
                            "--folds", "2", "-q", "-o", tmp_path / "no"], capsys)
    assert code == 2
    assert err.strip() == ("Error: method 'tpce' regrows its trees in the transductive engine, "
                           "which has no J48 cut rule; threshold j48 does not apply. Give it "
                           "threshold=lower: --method 'tpce:threshold=lower'.")
