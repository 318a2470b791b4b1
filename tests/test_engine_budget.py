"""Memory budgets of the batched engine change nothing but memory: with every budget shrunk
to almost nothing (every cache evicted at once, one job per part, one node per chunk of
the certificate tables) the results are bit-identical to the defaults'."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLE_DATA

from treecert.data.loading import load_dataset
from treecert.methods import make_method
from treecert.transductive import budget, engine_registry
from treecert.transductive.batch_engine import BatchEngine
from treecert.transductive.budget import ByteLRU
from treecert.transductive.node_search import appended_ranks, sorted_columns
from treecert.tree.classifier import DecisionTree


def _tiny(monkeypatch):
    for name in ("COMPETITOR_BYTES", "SCORE_BYTES", "TABLE_BYTES", "LEAF_BYTES", "SPLIT_BYTES",
                 "PATH_ENTRIES", "WALK_ENTRIES", "CHUNK_CELLS"):
        monkeypatch.setattr(budget, name, 1)
    monkeypatch.setattr(engine_registry, "_SHARED", {})


def test_byte_lru_evicts_least_recent_and_keeps_newest():
    gone = []
    c = ByteLRU(10, on_evict=gone.append)
    c.put("a", 1, 4)
    c.put("b", 2, 4)
    assert c.get("a") == 1  # a is now the most recent
    c.put("c", 3, 4)  # 12 > 10: b goes
    assert "b" not in c and gone == [2] and c.bytes == 8
    c.put("d", 4, 50)  # over budget alone: kept, the others go
    assert list(c.items) == ["d"] and c.bytes == 50
    c.put("e", 5, 1, shrink=False)  # kept until the next shrink
    assert len(c) == 2
    c.shrink(keep=0)
    assert list(c.items) == ["e"] and c.bytes == 1
    c.grow("e", 3)  # a held value grew: its size and the total follow
    c.grow("gone", 5)  # not held: nothing
    assert c.sizes["e"] == 4 and c.bytes == 4 and "gone" not in c
    c.put("f", 6, 7)  # 11 > 10: the older goes
    assert list(c.items) == ["f"] and c.bytes == 7
    c.put("g", 7, 0)
    c.clear()  # every entry, a weightless one too, each evicted
    assert not c.items and not c.sizes and c.bytes == 0 and gone[-2:] == [6, 7]


def test_appended_ranks_equal_a_stable_sort():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n, J = int(rng.integers(1, 40)), int(rng.integers(1, 15))
        X = rng.integers(0, 5, size=(n, 3)).astype(float)
        Q = rng.integers(-1, 6, size=(J, 3)).astype(float)
        rank, values = sorted_columns(X, np.arange(3))
        A = np.vstack([X, Q])
        want = np.empty((3, n + J), dtype=np.int64)
        for k in range(3):
            want[k, np.argsort(A[:, k], kind="stable")] = np.arange(n + J)
        np.testing.assert_array_equal(appended_ranks(rank, values, Q), want)


@pytest.mark.parametrize("name", ["credit-g", "diabetes"])
def test_tiny_budgets_give_identical_estimates(monkeypatch, name):
    monkeypatch.setattr(BatchEngine, "cert_min_rows", 0)
    monkeypatch.setattr(BatchEngine, "rescore_min_rows", 0)
    data = load_dataset(SAMPLE_DATA / f"{name}.arff")
    train, test = data.subset(np.arange(40, 400)), data.subset(np.arange(12))
    K = data.schema.n_classes
    X, labels = np.repeat(test.X, K, axis=0), np.tile(np.arange(K), test.n_samples)
    drop = np.repeat(np.arange(12), K)  # leave-one-out swaps of training rows 0..11
    Xl = np.repeat(train.X[:12], K, axis=0)

    def run():
        eng = BatchEngine(train, DecisionTree())
        return (eng.estimates(X, labels, np.full(labels.size, -1)),
                eng.estimates(Xl, labels, drop, count_x=False),
                eng._competitors().upper_many(np.eye(K)))

    whole = run()
    _tiny(monkeypatch)
    tiny = run()
    for a, b in zip(whole, tiny, strict=True):
        np.testing.assert_array_equal(a, b)


def test_tiny_budgets_give_identical_venn_matrices(monkeypatch):
    data = load_dataset(SAMPLE_DATA / "diabetes.arff")
    train, test = data.subset(np.arange(60, 360)), data.subset(np.arange(8))
    monkeypatch.setattr(engine_registry, "_SHARED", {})
    whole = make_method("venn").fit(train).predict(test)
    _tiny(monkeypatch)
    import treecert.methods.venn_fast as venn_fast

    monkeypatch.setattr(venn_fast, "_ATOMS_PER_BATCH", 1)  # one test row per batch
    tiny = make_method("venn").fit(train).predict(test)
    np.testing.assert_array_equal(whole.proba, tiny.proba)
    np.testing.assert_array_equal(whole.lower, tiny.lower)
    np.testing.assert_array_equal(whole.upper, tiny.upper)


def test_a_newer_engine_empties_the_older_ones_caches(monkeypatch):
    """The registry keeps two engines but one engine's caches (a cross-validation's previous
    fold): the older engine, emptied, still gives the same bytes."""
    from treecert.transductive import node_search

    monkeypatch.setattr(engine_registry, "_SHARED", {})
    monkeypatch.setattr(node_search, "MEMO_ROWS", 0)  # x's nodes kept on small data too
    data = load_dataset(SAMPLE_DATA / "iris.arff")
    K = data.schema.n_classes
    X, labels = np.repeat(data.X[:30], K, axis=0), np.tile(np.arange(K), 30)
    none = np.full(labels.size, -1)
    first = BatchEngine.shared(data.subset(np.arange(30, 150)), DecisionTree())
    before = first.estimates(X, labels, none)
    first.grow_batch(X, labels, paths_only=False)  # the Venn machine's hanging subtrees
    caches = [first.memo, first._scores, first._tables, first._x_nodes, first._splits,
              first._comp._tables, first._comp._bounds]
    assert all(len(c) > 0 for c in caches) and first.leaf_sets
    second = BatchEngine.shared(data.subset(np.arange(20, 150)), DecisionTree())
    assert second is not first and len(engine_registry._SHARED) == 2
    assert all(len(c) == 0 and c.bytes == 0 for c in caches)
    assert not first.leaf_sets
    np.testing.assert_array_equal(first.estimates(X, labels, none), before)


def test_memory_bound_is_stated_in_help(capsys):
    """predict and evaluate --help state the engine's memory bound (one home: budget)."""
    from conftest import run_cli

    from treecert.transductive.budget import memory_formula

    for command in ("predict", "evaluate"):
        code, out, _ = run_cli([command, "--help"], capsys)
        assert code == 0
        flat = " ".join(out.replace("│", " ").split())  # rich draws boxes round the text
        assert "whatever the number of test rows" in flat
        assert " ".join(memory_formula().split()[:6]) in flat
