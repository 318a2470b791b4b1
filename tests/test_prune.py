"""Pruning: hand-computed cases from the papers, J48's rules, the CLI and loss files.

Classes in the Bradford et al. examples are ordered (healthy, sick); their loss matrix
costs 10 for calling a sick person healthy and 1 for the reverse, L[true, predicted].
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FIXTURES, SAMPLE_DATA, make_dataset, random_datasets
from conftest import run_cli as run
from hypothesis import given, settings

from treecert import api
from treecert.errors import ConfigError, DataError
from treecert.pruning.ccp import ccp_path, cv_path_losses, prune_ccp
from treecert.pruning.common import PruneOptions, node_risk
from treecert.pruning.ebp import add_errs, prune_ebp
from treecert.pruning.kl import kl_distance, kl_information, prune_kl
from treecert.pruning.laplace_loss import laplace_node_loss, prune_laplace_loss
from treecert.pruning.loss import read_loss
from treecert.pruning.prune import prune_tree
from treecert.pruning.rep import prune_rep
from treecert.tree.arrays import Tree
from treecert.tree.classifier import DecisionTree
from treecert.tree.model import read_model

LOSS_DIR = FIXTURES / "loss"
WEATHER = SAMPLE_DATA / "weather.nominal.arff"
L_10_1 = np.array([[0.0, 1.0], [10.0, 0.0]])  # (healthy, sick): sick -> healthy costs 10


def hand_tree(counts, children, feature=None, threshold=None) -> Tree:
    """A tree from per-node counts and {node: [children]}; binary numeric tests
    ``x[feature] <= threshold`` (default: feature 0 at 0.5)."""
    n = len(counts)
    feature = feature or {}
    threshold = threshold or {}
    feat = np.full(n, -1, dtype=np.int64)
    thr = np.full(n, np.nan)
    ch, ptr = [], [0]
    for i in range(n):
        kids = children.get(i, [])
        if kids:
            feat[i] = feature.get(i, 0)
            thr[i] = threshold.get(i, 0.5)
        ch += kids
        ptr.append(len(ch))
    tree = Tree(feat, thr, np.array(ptr), np.array(ch, dtype=np.int64),
                np.zeros(n + 1, dtype=np.int64), np.empty(0, dtype=np.int64),
                np.array(counts, dtype=float))
    tree.validate()
    return tree


def stump(parent, left, right) -> Tree:
    return hand_tree([parent, left, right], {0: [1, 2]})


# ------------------------------------------------------------------ Bradford et al., Fig. 1


def test_fig1_left_error_pruning_prunes_loss_pruning_keeps():
    """Fig. 1 left: 100 people, 5 sick. Pruning keeps 5 errors, but the loss goes from 5
    (left leaf labelled sick) to 50. Leaf counts (healthy, sick) reconstructed from the
    text: (5, 5) and (90, 0)."""
    tree = stump([95, 5], [5, 5], [90, 0])
    assert ccp_path(tree).leaves[0] == 1  # 0/1 loss: g(root) = 0, gone at alpha = 0
    risk, pred = node_risk(tree.counts, L_10_1)
    np.testing.assert_allclose(risk, [50, 5, 0])
    np.testing.assert_array_equal(pred, [0, 1, 0])  # the left leaf says sick
    path = ccp_path(tree, L_10_1)
    np.testing.assert_allclose(path.alphas, [0, 45])
    assert path.leaves.tolist() == [2, 1]
    assert prune_ccp(tree, 0.0, L_10_1).n_leaves == 2
    assert prune_laplace_loss(tree, L_10_1)[0].n_leaves == 2


def test_fig1_right_loss_pruning_merges_leaves_with_the_same_label():
    """Fig. 1 right (counts reconstructed; the figure's numbers are not in the text): both
    leaves are labelled sick under the 10:1 loss, so loss-based pruning collapses them while
    error-based pruning keeps the split (errors 50 -> 20)."""
    tree = stump([50, 50], [40, 10], [10, 40])
    assert ccp_path(tree).leaves[0] == 2
    path = ccp_path(tree, L_10_1)
    assert path.leaves.tolist() == [1]  # R(root) = 50 = 40 + 10
    assert prune_ccp(tree, 0.0, L_10_1).n_leaves == 1


# ------------------------------------------------------------------ Bradford et al., Fig. 2


def test_fig2_left_laplace_pruning_20_0_vs_20_52():
    """Parent (20 healthy, 20 sick); children (0, 10) and (20, 10). The right child's
    Laplace distribution is 21/32, 11/32; everybody is labelled sick."""
    losses = laplace_node_loss(np.array([[20, 20], [0, 10], [20, 10]]), L_10_1)
    np.testing.assert_allclose(losses, [20.0, 10 * 1 / 12, 30 * 21 / 32])
    assert round(losses[0], 2) == 20.0
    assert round(losses[1] + losses[2], 2) == 20.52
    pruned, _ = prune_laplace_loss(stump([20, 20], [0, 10], [20, 10]), L_10_1)
    assert pruned.n_nodes == 1


def test_fig2_right_parent_label_differs_from_both_children():
    """Children (17 healthy, 1 sick) each: 18 · 18/20 = 16.2 predicting sick. The parent
    (34, 2) predicts healthy at 36 · 10 · 3/38 = 28.42 — the paper's 28.44 rounds 3/38 to
    0.079. 28.42 <= 32.4, so the subtree is pruned and the label flips to healthy."""
    counts = np.array([[34, 2], [17, 1], [17, 1]])
    losses = laplace_node_loss(counts, L_10_1)
    np.testing.assert_allclose(losses, [360 * 3 / 38, 16.2, 16.2])
    assert round(360 * round(3 / 38, 3), 2) == 28.44
    p = (counts + 1) / (counts.sum(axis=1, keepdims=True) + 2)
    assert (p @ L_10_1).argmin(axis=1).tolist() == [0, 1, 1]  # healthy; sick, sick
    assert prune_laplace_loss(hand_tree(counts, {0: [1, 2]}), L_10_1)[0].n_nodes == 1


# ------------------------------------------------------------------ cost-complexity


def small_tree() -> Tree:
    """root(10,10) -> A(8,2) [A -> (4,1), (4,1)], B(2,8) -> B1(0,6), B2(2,2) -> (2,0), (0,2).

    Node ids: 0 root, 1 A, 2 B, 3 A1, 4 A2, 5 B1, 6 B2, 7 B2a, 8 B2b."""
    counts = [[10, 10], [8, 2], [2, 8], [4, 1], [4, 1], [0, 6], [2, 2], [2, 0], [0, 2]]
    return hand_tree(counts, {0: [1, 2], 1: [3, 4], 2: [5, 6], 6: [7, 8]})


def test_ccp_sequence_matches_the_hand_worked_tree():
    """0/1 loss. A's split gains nothing (g = 0): T_1 drops it. Then g(B2) = 2/1,
    g(B) = 2/2 = 1, g(root) = (10-2)/3: B goes at alpha 1, leaving A, B with R = 4, and
    g(root) = (10 - 4)/1 = 6."""
    path = ccp_path(small_tree())
    np.testing.assert_allclose(path.alphas, [0, 1, 6])
    assert path.leaves.tolist() == [4, 2, 1]
    np.testing.assert_allclose(path.risks, [2, 4, 10])
    np.testing.assert_allclose(path.cps, [0, 0.1, 0.6])  # rpart's cp = alpha / R(root)
    assert path.node_alpha[1] == 0 and path.node_alpha[2] == 1 and path.node_alpha[0] == 6
    assert np.isinf(path.node_alpha[6])  # B2 never goes by itself: B goes first
    assert prune_ccp(small_tree(), 0.99).n_leaves == 4
    assert prune_ccp(small_tree(), 1.0).n_leaves == 2
    assert prune_ccp(small_tree(), 5.99).n_leaves == 2
    assert prune_ccp(small_tree(), 6.0).n_leaves == 1


def test_ccp_sequence_under_a_loss_matrix_by_hand():
    """L = [[0, 1], [3, 0]]. Risks: root 10 (predict 1), A 6, A1 = A2 = 3, B 2, B1 0,
    B2 2, B2a = B2b = 0. g(A) = 0, so T_1 = {A, B1, B2a, B2b} with R = 6; g(B) = 1,
    g(root) = 4/3, g(B2) = 2: B goes at 1, then g(root) = (10 - 8)/1 = 2."""
    L = np.array([[0.0, 1.0], [3.0, 0.0]])
    path = ccp_path(small_tree(), L)
    np.testing.assert_allclose(path.alphas, [0, 1, 2])
    assert path.leaves.tolist() == [4, 2, 1]
    np.testing.assert_allclose(path.risks, [6, 8, 10])


def test_cv_loss_is_l_true_predicted_not_transposed():
    """A fold tree that is one leaf predicting class 1 (counts 1:4), a held-out row of
    class 0: its loss is L[0, 1] = 1, not L[1, 0] = 10 (rpart's xerror reads
    it transposed: https://github.com/bethatkinson/rpart/issues/74)."""
    L = np.array([[0.0, 1.0], [10.0, 0.0]])
    full = stump([2, 8], [2, 0], [0, 8])
    fold_tree = hand_tree([[1, 4]], {})
    held = make_dataset({"x": [0.0]}, [0])
    total, _ = cv_path_losses(ccp_path(full, L), [(fold_tree, held, 0.5)], L)
    np.testing.assert_allclose(total, [1.0, 1.0])


def test_ccp_holdout_and_cv_choose_a_subtree_of_the_sequence():
    data = _vote()
    model = api.train(data, criterion="gain_ratio")
    path = ccp_path(model.tree)
    for kwargs in ({}, {"cv": 5}, {"cv": 5, "one_se": True}, {"holdout": 0.3, "seed": 7}):
        pruned = api.prune(model, "ccp", **kwargs)
        rec = pruned.pruning
        assert pruned.tree.n_leaves in path.leaves.tolist()
        assert rec["after"]["leaves"] == pruned.tree.n_leaves <= rec["before"]["leaves"]
        again = api.prune(model, "ccp", **kwargs)
        assert again.pruning == rec  # deterministic with a seed
    cv = api.prune(model, "ccp", cv=5).pruning
    one_se = api.prune(model, "ccp", cv=5, one_se=True).pruning
    assert one_se["after"]["leaves"] <= cv["after"]["leaves"]
    assert [r["leaves"] for r in cv["sequence"]] == path.leaves.tolist()


@settings(max_examples=25, deadline=None)
@given(random_datasets(min_rows=8, max_rows=40))
def test_ccp_at_zero_keeps_the_resubstitution_loss_and_the_sequence_is_nested(data):
    rng = np.random.default_rng(int(data.y.sum()))
    K = data.schema.n_classes
    L = rng.integers(0, 4, (K, K)).astype(float)
    np.fill_diagonal(L, 0.0)
    tree = DecisionTree(min_leaf=1).fit(data).tree_
    path = ccp_path(tree, L)
    assert np.all(np.diff(path.alphas) > 0) and np.all(np.diff(path.leaves) < 0)
    risk_full = node_risk(tree.counts, L)[0][tree.is_leaf].sum()
    t1 = prune_ccp(tree, 0.0, L)
    np.testing.assert_allclose(node_risk(t1.counts, L)[0][t1.is_leaf].sum(), risk_full,
                               atol=1e-9)
    for a, n, r in zip(path.alphas, path.leaves, path.risks, strict=True):
        t = prune_ccp(tree, a, L)
        assert t.n_leaves == n
        np.testing.assert_allclose(node_risk(t.counts, L)[0][t.is_leaf].sum(), r, atol=1e-9)


# ------------------------------------------------------------------ zero costs


def test_zero_off_diagonal_losses_prune_nothing_harmful():
    """When predicting class 1 costs nothing whatever the truth (L[0, 1] = 0), every
    subtree's loss is already 0: loss-based pruning may collapse everything, and the pruned
    tree's loss is still 0 — nothing a split bought is given up. An all-zero matrix
    likewise."""
    tree = small_tree()
    for L in (np.array([[0.0, 0.0], [1.0, 0.0]]), np.zeros((2, 2))):
        leaves_loss = node_risk(tree.counts, L)[0][tree.is_leaf].sum()
        assert leaves_loss == 0
        for pruned in (prune_ccp(tree, 0.0, L), prune_laplace_loss(tree, L)[0]):
            assert pruned.n_leaves == 1
            assert node_risk(pruned.counts, L)[0][0] == 0
    # Zero costs only for *correct* predictions (a plain 0/1-style matrix) keep useful splits.
    assert prune_ccp(tree, 0.0, 1 - np.eye(2)).n_leaves == 4


# ------------------------------------------------------------------ error-based (J48)


def test_add_errs_matches_j48_by_hand():
    # e = 0: N (1 - CF^(1/N)) — Quinlan's U_25%(0, 6) = 0.206 per case.
    assert add_errs(6, 0) == pytest.approx(6 * (1 - 0.25 ** (1 / 6)))
    assert add_errs(6, 0) == pytest.approx(1.2378, abs=1e-4)
    assert add_errs(1, 0) == pytest.approx(0.75)
    # 0 < e < 1: linear interpolation between e = 0 and e = 1.
    assert add_errs(10, 0.5) == pytest.approx(
        0.5 * add_errs(10, 0) + 0.5 * add_errs(10, 1))
    # e + 0.5 >= N: N - e.
    assert add_errs(3, 2.5) == pytest.approx(0.5)
    # Normal approximation: z = Phi^-1(0.75) = 0.6744897501960817, f = 1.5/16.
    z, f, N = 0.6744897501960817, 1.5 / 16, 16
    r = (f + z * z / (2 * N) + z * np.sqrt(f / N - f * f / N + z * z / (4 * N * N))) / (
        1 + z * z / N)
    assert add_errs(16, 1) == pytest.approx(r * N - 1, rel=1e-12)
    assert add_errs(16, 1) == pytest.approx(1.4757146, abs=1e-6)


def test_ebp_quinlans_voting_example():
    """C4.5 book ch. 4: education spending = n/y/u under physician fee freeze = n has leaves
    (6 democrats), (9 democrats), (1 republican). Subtree: 1.238 + 1.285 + 0.750 = 3.273
    extra... estimated errors; as a leaf (16 cases, 1 error): 1 + 1.476 = 2.476 -> pruned."""
    tree = hand_tree([[15, 1], [6, 0], [9, 0], [0, 1]], {0: [1, 2, 3]})
    tree.value_branch_ptr = np.array([0, 3, 3, 3, 3])
    tree.value_branch = np.array([0, 1, 2])
    tree.threshold[0] = np.nan
    subtree = add_errs(6, 0) + add_errs(9, 0) + add_errs(1, 0)
    assert subtree == pytest.approx(3.2727, abs=1e-4)
    assert 1 + add_errs(16, 1) <= subtree + 0.1
    pruned, _ = prune_ebp(tree, subtree_raising=False)
    assert pruned.n_nodes == 1
    # A lower confidence factor prunes harder, a higher one (0.5) never prunes this less.
    assert prune_ebp(tree, 0.5, subtree_raising=False)[0].n_nodes == 1


def raising_data():
    """a = 0: (b=0, class 0) x2, (b=1, class 1) x1; a = 1: (b=0, 0) x15, (b=1, 1) x15."""
    a = [0.0] * 3 + [1.0] * 30
    b = [0.0, 0.0, 1.0] + [0.0] * 15 + [1.0] * 15
    y = [0, 0, 1] + [0] * 15 + [1] * 15
    data = make_dataset({"a": a, "b": b}, y)
    tree = hand_tree([[17, 16], [2, 1], [15, 15], [15, 0], [0, 15]], {0: [1, 2], 2: [3, 4]},
                     feature={0: 0, 2: 1})
    return data, tree


def test_ebp_subtree_raising_reroutes_the_rows_by_hand():
    """The root tests a, its small branch (3 rows) is a leaf, its large branch tests b.
    E(subtree) = [1 + addErrs(3, 1)] + 2 addErrs(15, 0); E(largest branch) routes all 33
    rows through the b test: addErrs(17, 0) + addErrs(16, 0), smaller by more than 0.1, and
    E(leaf) = 16 + addErrs(33, 16) is larger: the b test is raised to the root and its leaves
    get the re-routed counts (17, 0) and (0, 16)."""
    data, tree = raising_data()
    e_tree = 1 + add_errs(3, 1) + 2 * add_errs(15, 0)
    e_largest = add_errs(17, 0) + add_errs(16, 0)
    e_leaf = 16 + add_errs(33, 16)
    assert e_largest <= e_tree + 0.1 and e_leaf > e_largest + 0.1
    pruned, info = prune_ebp(tree, data=data)
    assert info["raised"] == 1
    assert pruned.feature.tolist() == [1, -1, -1]
    np.testing.assert_allclose(pruned.counts, [[17, 16], [17, 0], [0, 16]])
    kept, info = prune_ebp(tree, data=data, subtree_raising=False)
    assert kept.n_nodes == 5 and info["raised"] == 0


def test_ebp_raising_refuses_data_that_did_not_grow_the_tree():
    data, tree = raising_data()
    data.y[0] = 1
    with pytest.raises(DataError, match="does not reproduce the tree's class counts"):
        prune_ebp(tree, data=data)
    with pytest.raises(ConfigError, match="subtree raising needs the training data"):
        prune_ebp(tree)


# ------------------------------------------------------------------ KL and REP


def test_kl_distance_by_hand():
    """Parent (3, 1) -> (2, 0), (1, 1). Laplace: (2/3, 1/3); (3/4, 1/4); (1/2, 1/2).
    KL_1 = .75 log2(1.125) + .25 log2(.75) = 0.023684; KL_2 = .5 log2(.75) + .5 log2(1.5)
    = 0.084963; weighted by 2/4 each: 0.054323 bits."""
    tree = stump([3, 1], [2, 0], [1, 1])
    assert kl_distance(tree)[0] == pytest.approx(0.054323, abs=1e-6)
    assert prune_kl(tree, 0.01, "example")[0].n_nodes == 3
    assert prune_kl(tree, 0.06, "example")[0].n_nodes == 1
    # The node unit: m·D = 4 × 0.054323 = 0.217 bits.
    assert kl_information(tree)[0] == pytest.approx(4 * 0.054323, abs=1e-5)
    assert prune_kl(tree, 0.2)[0].n_nodes == 3
    assert prune_kl(tree, 0.22)[0].n_nodes == 1
    # Children with the parent's distribution are pruned at any threshold > 0.
    assert prune_kl(stump([10, 10], [5, 5], [5, 5]), 1e-9)[0].n_nodes == 1
    assert prune_kl(stump([10, 10], [5, 5], [5, 5]), 1e-9, "example")[0].n_nodes == 1


def test_kl_node_unit_prunes_bottom_up():
    """Root (40, 40) -> A (20, 20), B (20, 20); A -> (20, 0), (0, 20). The root's split
    carries nothing (m·D = 0) but A's carries 40 × 0.733 = 29.3 bits: the node unit keeps
    the root (its child A stays a subtree) and the paper's unit cuts everything."""
    tree = hand_tree([[40, 40], [20, 20], [20, 20], [20, 0], [0, 20]], {0: [1, 2], 1: [3, 4]})
    info = kl_information(tree)
    assert info[0] == pytest.approx(0.0) and info[1] == pytest.approx(29.33, abs=0.01)
    assert prune_kl(tree, 1.0)[0].n_leaves == 3
    assert prune_kl(tree, 30.0)[0].n_leaves == 1
    assert prune_kl(tree, 0.01, "example")[0].n_leaves == 1


def test_rep_by_hand():
    """Root (5, 5) predicts class 0 (first of a tie); leaves (4, 1) -> 0 and (1, 4) -> 1.
    Pruning rows all class 0: the subtree errs on the x=1 rows (2), the leaf on none ->
    pruned. Pruning rows x=1 of class 1: subtree 0 errors, leaf 2 -> kept."""
    tree = stump([5, 5], [4, 1], [1, 4])
    all_zero = make_dataset({"x": [0.0, 0.0, 0.0, 1.0, 1.0]}, [0, 0, 0, 0, 0])
    assert prune_rep(tree, all_zero)[0].n_nodes == 1
    ones = make_dataset({"x": [1.0, 1.0]}, [1, 1])
    assert prune_rep(tree, ones)[0].n_nodes == 3
    # An empty child predicts its parent's class (Weka): here class 0, right for x=1 rows.
    empty = stump([5, 0], [5, 0], [0, 0])
    assert prune_rep(empty, make_dataset({"x": [1.0]}, [0]))[0].n_nodes == 1
    # Pruning rows x=0: class 0 twice; x=1: one of each class. 0/1 loss: leaf (class 0)
    # 1 error = subtree 1 error -> pruned. With L[1, 0] = 2 the root predicts class 1 (5 < 10)
    # and costs 3 on these rows against the subtree's 1 -> kept.
    mixed = make_dataset({"x": [0.0, 0.0, 1.0, 1.0]}, [0, 0, 1, 0])
    assert prune_rep(tree, mixed)[0].n_nodes == 1
    assert prune_rep(tree, mixed, np.array([[0.0, 1.0], [2.0, 0.0]]))[0].n_nodes == 3


# ------------------------------------------------------------------ options and records


def test_prune_options_are_checked():
    with pytest.raises(ConfigError, match="unknown pruning method 'cart'"):
        PruneOptions("cart")
    with pytest.raises(ConfigError, match="pruning option cf does not apply to 'kl'"):
        PruneOptions("kl", cf=0.1)
    with pytest.raises(ConfigError, match=r"cf must be in \(0, 0.5\]"):
        PruneOptions("ebp", cf=0.7)
    with pytest.raises(ConfigError, match="either a holdout or cross-validation"):
        PruneOptions("ccp", cv=5, holdout=0.2)
    assert PruneOptions("EBP").method == "ebp"
    assert not PruneOptions("ebp", subtree_raising=False).needs_data


def test_pruned_model_records_how_and_round_trips(tmp_path):
    data = _vote()
    model = api.train(data, criterion="gain_ratio", leaf="laplace")
    L = np.array([[0.0, 1.0], [10.0, 0.0]])
    pruned = api.prune(model, "ccp", loss=L, cv=5)
    rec = pruned.pruning
    assert rec["method"] == "ccp" and rec["options"] == {"one_se": False, "seed": 1, "cv": 5}
    assert rec["loss_used"] and rec["loss"] == {"democrat": {"democrat": 0.0,
                                                             "republican": 1.0},
                                                "republican": {"democrat": 10.0,
                                                               "republican": 0.0}}
    assert rec["before"]["leaves"] == model.tree.n_leaves
    path = tmp_path / "p.json"
    path.write_text(api.model_json(pruned))
    loaded = read_model(path)
    assert loaded.pruning == json.loads(json.dumps(rec))
    assert loaded.tree.n_leaves == rec["after"]["leaves"]
    again = api.prune(loaded, "ebp", subtree_raising=False)
    assert again.pruning["previous"]["method"] == "ccp"


def test_every_method_through_prune_tree():
    data = _vote()
    est = DecisionTree(criterion="gain_ratio", collapse=True).fit(data)
    for method in ("none", "ccp", "ebp", "laplace_loss", "kl", "rep"):
        tree, rec = prune_tree(est.tree_, PruneOptions(method), data=data,
                               params=est.get_params(), loss=L_10_1)
        tree.validate()
        assert rec["after"]["leaves"] == tree.n_leaves
        assert rec["loss_used"] == (method in ("ccp", "laplace_loss", "rep"))


def test_leaf_methods_prune_inside_evaluate():
    data = _vote()
    result = api.evaluate(
        data, ["laplace", "laplace:prune=ebp", "frequency:prune=ccp,cv=3",
               "laplace:prune=laplace_loss"], loss=L_10_1, timing=False)
    m = result.metrics.set_index("method")
    assert m.loc["laplace:prune=ebp", "leaves"] < m.loc["laplace", "leaves"]
    assert m.loc["laplace:prune=laplace_loss", "leaves"] < m.loc["laplace", "leaves"]
    # expected_loss scores the minimum-expected-loss class, as predictions.csv shows.
    preds = result.predictions[result.predictions["method"] == "laplace"]
    classes = result.classes
    p = preds[[f"p_{c}" for c in classes]].to_numpy()
    pred = np.argmin(p @ L_10_1, axis=1)
    assert (preds["predicted"].to_numpy() == np.asarray(classes)[pred]).all()
    y = preds["actual"].map({c: i for i, c in enumerate(classes)}).to_numpy()
    assert m.loc["laplace", "expected_loss"] == pytest.approx(L_10_1[y, pred].mean())


def _vote():
    from treecert.data.loading import load_dataset

    return load_dataset(SAMPLE_DATA / "vote.arff")


# ------------------------------------------------------------------ loss files and the CLI


@pytest.fixture
def weather_model(tmp_path, capsys):
    path = tmp_path / "weather.json"
    assert run(["train", WEATHER, "-o", path, "-q"], capsys)[0] == 0
    return path


@pytest.mark.parametrize(
    ("fixture", "line"),
    [
        ("missing_class.yaml",
         "loss: rows (true classes) must be exactly the classes yes, no (missing no)."),
        ("unknown_class.yaml",
         "loss: rows (true classes) must be exactly the classes yes, no (unknown maybe)."),
        ("missing_column.yaml",
         "loss.yes: columns (predicted classes) must be exactly the classes yes, no "
         "(missing no)."),
        ("negative_cost.yaml", "loss.yes.no: cost must be finite and >= 0."),
        ("not_yaml.yaml", "not valid YAML at line 3 (expected ',' or '}', but got ':')."),
        ("wrong_shape.yaml", "loss: expected a mapping true-class -> {predicted: cost}."),
    ],
)
@pytest.mark.parametrize("command", ["predict", "prune"])
def test_bad_loss_files_are_one_line_with_exit_2(fixture, line, command, weather_model,
                                                 tmp_path, capsys):
    path = LOSS_DIR / fixture
    if command == "predict":
        args = ["predict", weather_model, WEATHER, "--loss", path]
    else:
        args = ["prune", weather_model, "--method", "ccp", "--loss", path, "-o",
                tmp_path / "p.json"]
    code, out, err = run(args, capsys)
    assert code == 2
    assert err.strip() == f"Error: {path}: {line}"
    assert out == ""
    assert not (tmp_path / "p.json").exists()


def test_loss_keys_are_labels_as_written_even_yes_and_no():
    L, warns = read_loss(LOSS_DIR / "weather.yaml", ("yes", "no"))
    np.testing.assert_array_equal(L, [[0, 1], [5, 0]])
    assert warns == []
    L, _ = read_loss(LOSS_DIR / "weather.yaml", ("no", "yes"))  # any class order
    np.testing.assert_array_equal(L, [[0, 5], [1, 0]])
    _, warns = read_loss(LOSS_DIR / "diagonal.yaml", ("yes", "no"))
    assert warns == [f"{LOSS_DIR / 'diagonal.yaml'}: non-zero loss for correct predictions "
                     "(yes=1); is that intended?"]


def test_predict_with_loss_chooses_minimum_expected_loss(weather_model, capsys):
    code, out, err = run(["predict", weather_model, WEATHER, "--method", "laplace",
                          "--loss", LOSS_DIR / "weather.yaml"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "row,actual,predicted,p_yes,p_no,certainty,expected_loss"
    L = np.array([[0.0, 1.0], [5.0, 0.0]])
    for line in lines[1:]:
        _, _, predicted, p_yes, p_no, certainty, exp_loss = line.split(",")
        risks = np.array([float(p_yes), float(p_no)]) @ L
        assert predicted == ("yes", "no")[int(np.argmin(risks))]
        assert float(exp_loss) == pytest.approx(risks.min())
        assert float(certainty) == pytest.approx(float(p_yes if predicted == "yes" else p_no))


def test_prune_command(weather_model, tmp_path, capsys):
    out_path = tmp_path / "p.json"
    code, out, err = run(["prune", weather_model, "--method", "ebp", "-o", out_path], capsys)
    assert code == 0 and out == ""
    assert err.strip() == (f"{weather_model}: pruned with ebp: 5 leaves (8 nodes) -> 5 leaves "
                           f"(8 nodes); wrote {out_path}")
    code, out, err = run(["prune", weather_model, "--method", "ccp", "--cv", "3", "--table",
                          "-o", out_path, "--loss", LOSS_DIR / "weather.yaml"], capsys)
    assert code == 0
    assert out.splitlines()[0] == "alpha,cp,leaves,risk,rel_error,cv_loss,xerror,xstd"
    assert "chosen by 3-fold cross-validation" in err
    assert json.loads(out_path.read_text())["pruning"]["method"] == "ccp"
    code, _, err = run(["prune", weather_model, "--method", "kl", "--kl-threshold", "0.5", "-o",
                        out_path, "--loss", LOSS_DIR / "weather.yaml"], capsys)
    assert code == 0
    assert err.splitlines()[0] == ("Warning: pruning method kl does not use the loss matrix; "
                                   "give it to 'treecert predict --loss' to choose "
                                   "predictions by expected loss.")
    code, _, err = run(["prune", weather_model, "--method", "ebp", "--table", "-o",
                        out_path], capsys)
    assert (code, err.strip()) == (2, "Error: --table needs --method ccp.")
    code, _, err = run(["prune", weather_model, "--method", "rep", "--cf", "0.1", "-o",
                        out_path], capsys)
    assert (code, err.strip()) == (2, "Error: pruning option cf does not apply to 'rep'. It "
                                      "is an option of ebp.")


def test_prune_without_embedded_data_needs_the_right_train_file(tmp_path, capsys):
    model = tmp_path / "m.json"
    out_path = tmp_path / "p.json"
    assert run(["train", WEATHER, "-o", model, "--no-embed-data", "-q"], capsys)[0] == 0
    code, _, err = run(["prune", model, "--method", "ccp", "-o", out_path], capsys)
    assert code == 2
    assert err.strip() == ("Error: pruning with ccp needs the training data, but the model "
                           "was saved with --no-embed-data. Give the training file with "
                           "--train FILE (or retrain without --no-embed-data).")
    assert run(["prune", model, "--method", "ebp", "--no-raise", "-o", out_path], capsys)[0] == 0
    code, _, err = run(["prune", model, "--method", "ebp", "--train", WEATHER, "-o", out_path],
                       capsys)
    assert code == 0, err
    other = tmp_path / "other.arff"
    text = WEATHER.read_text().replace("sunny,hot,high,FALSE,no", "sunny,hot,high,FALSE,yes", 1)
    other.write_text(text)
    code, _, err = run(["prune", model, "--method", "ccp", "--train", other, "-o", out_path],
                       capsys)
    assert code == 2
    assert err.strip() == (f"Error: {other}: not the data this tree was grown on (class "
                           "counts differ at node 0: [10, 4] vs [9, 5]). Give the original "
                           "training file. A tree pruned with rep keeps the counts of the "
                           "rows it was grown on and cannot be pruned again with data.")


def test_train_with_prune(tmp_path, capsys):
    out_path = tmp_path / "t.json"
    code, _, err = run(["train", SAMPLE_DATA / "vote.arff", "-o", out_path, "--prune", "ebp",
                        "--criterion", "gain_ratio", "--collapse"], capsys)
    assert code == 0
    assert "pruned with ebp: " in err
    doc = json.loads(out_path.read_text())
    assert doc["pruning"]["options"] == {"cf": 0.25, "subtree_raising": True}
    code, _, err = run(["train", WEATHER, "-o", out_path, "--prune", "laplace_loss",
                        "--loss", LOSS_DIR / "weather.yaml", "-q"], capsys)
    assert code == 0 and err == ""
    assert json.loads(out_path.read_text())["pruning"]["loss"]["no"] == {"yes": 5.0, "no": 0.0}


def test_kl_units_on_the_command_line(weather_model, tmp_path, capsys):
    """--kl-unit chooses the threshold's unit; the model records it with the threshold,
    the default filled in; an unknown unit is a one-line error."""
    out_path = tmp_path / "kl.json"
    code, _, _ = run(["prune", weather_model, "--method", "kl", "-o", out_path, "-q"], capsys)
    assert code == 0
    options = json.loads(out_path.read_text())["pruning"]["options"]
    assert options == {"threshold": 1.0, "unit": "node", "log_base": 2}
    code, _, _ = run(["prune", weather_model, "--method", "kl", "--kl-unit", "example", "-o",
                      out_path, "-q"], capsys)
    assert code == 0
    options = json.loads(out_path.read_text())["pruning"]["options"]
    assert options == {"threshold": 0.01, "unit": "example", "log_base": 2}
    code, _, err = run(["prune", weather_model, "--method", "kl", "--kl-unit", "bits", "-o",
                        out_path], capsys)
    assert (code, err.strip()) == (2, "Error: unknown KL unit 'bits'. Choose one of: node, "
                                      "example.")
    code, _, err = run(["prune", weather_model, "--method", "ebp", "--kl-unit", "node", "-o",
                        out_path], capsys)
    assert code == 2 and "pruning option kl_unit does not apply to 'ebp'" in err
