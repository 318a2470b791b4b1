"""The Venn Probability Machine: hand-worked rows, the batched tree machine against the
one-(x, j)-at-a-time reference, grouped MDL against Weka's, incremental Naive Bayes."""

from __future__ import annotations

import os
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from conftest import SAMPLE_DATA, make_dataset, random_datasets
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.discretize import mdl_cut_points
from treecert.data.loading import load_dataset
from treecert.data.schema import Attribute, Dataset, Schema
from treecert.methods import make_method, venn_fast, venn_types
from treecert.methods.naive_bayes import NaiveBayes
from treecert.methods.venn import _NBVenn, bag_venn_matrices, summarise, type_columns, venn_row
from treecert.methods.venn_types import (
    NonZeroCounts,
    mdl_bins_segments,
    mdl_cuts_segments,
    merge_atoms,
    venn_rows_atoms,
    venn_rows_delta,
)
from treecert.tree.segments import unique_rows

#: ``TREECERT_VENN_EXAMPLES`` raises the number of random cases of the machine's property
#: tests (CI uses the defaults).
EXAMPLES = int(os.environ.get("TREECERT_VENN_EXAMPLES", "30"))
TEST_DATA = Path(__file__).parent / "data"


def test_venn_row_by_hand():
    # 10 examples forecast 0.1 (class 0), 10 forecast 0.9 (class 1), x forecast 0.9: the MDL
    # cut at 0.5 puts x with the ten class-1 examples.
    p1 = np.r_[np.full(10, 0.1), np.full(10, 0.9), 0.9]
    F = np.column_stack([1 - p1, p1])
    y = np.r_[np.zeros(10, int), np.ones(10, int), 0]
    assert mdl_cut_points(p1, y, 2).tolist() == [0.5]
    np.testing.assert_allclose(venn_row(F, y, np.ones(21), 2), [1 / 11, 10 / 11])
    y[-1] = 1
    np.testing.assert_allclose(venn_row(F, y, np.ones(21), 2), [0.0, 1.0])


def test_venn_row_without_a_cut_is_the_overall_frequency():
    F = np.tile([0.5, 0.5], (5, 1))
    y = np.array([0, 1, 1, 0, 1])
    np.testing.assert_allclose(venn_row(F, y, np.ones(5), 2), [0.4, 0.6])


def test_summarise_column_means_and_ranges():
    M = np.array([[[0.5, 0.5], [0.0, 1.0]]])
    proba, lower, upper = summarise(M)
    np.testing.assert_allclose(proba, [[0.25, 0.75]])
    np.testing.assert_allclose(lower, [[0.0, 0.5]])
    np.testing.assert_allclose(upper, [[0.5, 1.0]])


@pytest.mark.parametrize("engine", ["fast", "naive"])
def test_leaf_taxonomy_by_hand(engine):
    # Train v = 1, 2 (A), 3, 4 (B), x = 2.6 (the TPCE toy): label A puts x in the leaf
    # {x, 3} = [A 1, B 1]; label B in the pure leaf {x, 3, 4} = [A 0, B 3].
    train = make_dataset({"v": [1.0, 2.0, 3.0, 4.0]}, ["A", "A", "B", "B"], classes=("A", "B"))
    test = make_dataset({"v": [2.6]}, ["A"], classes=("A", "B"))
    pred = make_method(f"venn:taxonomy=leaf,min_leaf=1,engine={engine}").fit(train).predict(test)
    np.testing.assert_allclose(pred.proba, [[0.25, 0.75]])
    np.testing.assert_allclose(pred.lower, [[0.0, 0.5]])
    np.testing.assert_allclose(pred.upper, [[0.5, 1.0]])


@settings(max_examples=max(30, EXAMPLES), deadline=None)
@given(
    data=random_datasets(min_rows=8, max_rows=40, missing=False),
    criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
    min_leaf=st.sampled_from([1.0, 2.0]),
    binary=st.booleans(),
    base=st.sampled_from(["frequency", "laplace", "m_estimate"]),
    taxonomy=st.sampled_from(["forecast", "leaf"]),
    delta=st.sampled_from([None, 0.0, np.inf]),
)
def test_batched_tree_machine_equals_one_at_a_time(data, criterion, min_leaf, binary, base,
                                                   taxonomy, delta):
    """``delta``: the rows from each job's atoms (0), from the base tree's leaves and each
    job's changes wherever the counts allow (inf), or as the machine chooses (None)."""
    if delta is not None:
        with patch.object(venn_fast, "DELTA_CHANGES", delta):
            test_batched_tree_machine_equals_one_at_a_time.hypothesis.inner_test(
                data, criterion, min_leaf, binary, base, taxonomy, None)
        return
    n = data.n_samples
    test_rows = np.arange(n) % 8 == 0
    train, test = data.subset(np.flatnonzero(~test_rows)), data.subset(np.flatnonzero(test_rows))
    spec = (f"venn:base={base},taxonomy={taxonomy},criterion={criterion},min_leaf={min_leaf},"
            f"binary_splits={binary}")
    fast = make_method(spec).fit(train)
    assert fast.batch_ is not None
    naive = make_method(spec + ",engine=naive").fit(train)
    a, b = fast.predict(test), naive.predict(test)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)


def test_hanging_nodes_whose_splits_are_all_known_still_grow():
    """A round of the leaf forest whose open nodes all have known splits (memoised by
    rows) while x's paths are done: the forest grows them itself rather than stop early
    (found by the property test above: one hanging leaf was lost)."""
    attrs = (Attribute("num0", "numeric"),
             *(Attribute(f"nom{j}", "nominal", ("v0", "v1")) for j in range(3)))
    X = np.array([[0.0, 0, 1, 0], [0.5, 0, 1, 0], [0.5, 1, 1, 0], [0.5, 0, 0, 1],
                  [0.0, 0, 0, 0], [0.0, 1, 1, 1], [0.5, 1, 0, 0], [0.5, 0, 0, 0],
                  [0.0, 0, 0, 1], [0.0, 1, 0, 0], [0.5, 1, 1, 0]])
    y = np.array([0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0])
    data = Dataset(Schema(attrs, Attribute("class", "nominal", ("c0", "c1"))), X, y,
                   np.ones(11), source="<case>")
    test_rows = np.arange(11) % 8 == 0
    train = data.subset(np.flatnonzero(~test_rows))
    test = data.subset(np.flatnonzero(test_rows))
    spec = "venn:criterion=info_gain,min_leaf=1.0"
    a = make_method(spec).fit(train).predict(test)
    b = make_method(spec + ",engine=naive").fit(train).predict(test)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.lower, b.lower)


def test_batched_machine_equals_reference_on_diabetes():
    data = load_dataset(SAMPLE_DATA / "diabetes.arff")
    train, test = data.subset(np.arange(60, 400)), data.subset(np.arange(6))
    for taxonomy in ("forecast", "leaf"):
        a = make_method(f"venn:taxonomy={taxonomy}").fit(train).predict(test)
        b = make_method(f"venn:taxonomy={taxonomy},engine=naive").fit(train).predict(test)
        np.testing.assert_array_equal(a.proba, b.proba)


def test_batched_machine_equals_reference_with_seven_classes():
    """Segment-challenge (7 classes, numeric): many pure leaves share a forecast vector, so
    a row's atoms are merged (integer weights) before the MDL."""
    data = load_dataset(TEST_DATA / "segment-challenge.arff")
    train, test = data.subset(np.arange(10, 210)), data.subset(np.arange(4))
    a, b = _fast_and_naive("venn", train, test)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)


def _fast_and_naive(spec: str, train, test):
    """The predictions of the method ``spec`` with its default engine and with the naive one."""
    return (make_method(spec).fit(train).predict(test),
            make_method(spec + ("," if ":" in spec else ":") + "engine=naive")
            .fit(train).predict(test))


@pytest.mark.parametrize(("name", "budget"), [("diabetes", "_ATOMS_PER_BATCH"),
                                              ("vote", "_PAIRS_PER_BATCH")])
def test_venn_rows_in_small_batches_are_the_same(monkeypatch, name, budget):
    """One test row per batch: the walked trees on complete data (diabetes), the whole
    trees with unknown values (vote)."""
    import treecert.methods.venn_fast as venn_fast

    data = load_dataset(SAMPLE_DATA / f"{name}.arff")
    train, test = data.subset(np.arange(60, 240)), data.subset(np.arange(7))
    whole = make_method("venn").fit(train).predict(test)
    monkeypatch.setattr(venn_fast, budget, 1)
    apart = make_method("venn").fit(train).predict(test)
    np.testing.assert_array_equal(whole.proba, apart.proba)
    np.testing.assert_array_equal(whole.lower, apart.lower)


def test_missing_values_grow_whole_trees_in_a_batch():
    train = make_dataset({"v": [1.0, 2.0, None, 4.0, 5.0, 6.0]},
                         ["A", "A", "B", "B", "B", "A"], classes=("A", "B"))
    test = make_dataset({"v": [None, 3.0]}, ["A", "B"], classes=("A", "B"))
    fast = make_method("venn:min_leaf=1").fit(train)
    assert fast.batch_ is not None and not fast.batch_.walks  # batched whole trees
    naive = make_method("venn:min_leaf=1,engine=naive").fit(train)
    np.testing.assert_array_equal(fast.predict(test).proba, naive.predict(test).proba)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.booleans())
def test_grouped_mdl_equals_weka_mdl(seed, n_classes, weighted):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    v = np.round(rng.random(n) * rng.integers(1, 20)) / 7
    y = (rng.random(n) * n_classes * (0.3 + v / max(v.max(), 1e-9))).astype(int) % n_classes
    w = rng.integers(1, 4, n).astype(float) if weighted else np.ones(n)
    u, inv = np.unique(v, return_inverse=True)
    counts = np.zeros((u.size, n_classes))
    for k in range(n_classes):
        counts[:, k] = np.bincount(inv, weights=w * (y == k), minlength=u.size)
    got = np.sort(mdl_cuts_segments(u, counts, np.bincount(inv, minlength=u.size).astype(float),
                                    np.array([0, u.size]))[1])
    np.testing.assert_array_equal(got, mdl_cut_points(v, y, n_classes, w))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.integers(1, 6))
def test_mdl_bin_of_a_probe_equals_the_bin_from_every_cut(seed, n_classes, n_segments):
    """The recursion that follows only the probe's side finds the same bin (lo, hi] as
    every cut point does: probes at a value, between values, outside them, and values one
    ulp apart (whose midpoint rounds onto one of them)."""
    rng = np.random.default_rng(seed)
    values, counts, n_inst, ptr, probe = [], [], [], [0], []
    for _ in range(n_segments):
        G = int(rng.integers(1, 60))
        if rng.random() < 0.3:  # adjacent floats: cuts equal to a value
            u = np.nextafter(0.5, 1.0, dtype=float) + np.arange(G) * np.spacing(0.5)
        else:
            u = np.unique(np.round(rng.random(G) * rng.integers(2, 40)) / 7)
        G = u.size
        c = np.zeros((G, n_classes))
        inst = rng.integers(1, 5, G)
        for g in range(G):  # classes drifting with the value: MDL finds cuts
            p = np.ones(n_classes)
            p[int(g * n_classes / G)] += 6
            c[g] = np.bincount(rng.choice(n_classes, inst[g], p=p / p.sum()),
                               minlength=n_classes)
        pick = rng.random()
        probe.append(u[rng.integers(0, G)] if pick < 0.5 else
                     (u[0] - 1 if pick < 0.6 else u[-1] + 1 if pick < 0.7
                      else rng.uniform(u[0], u[-1])))
        values.append(u)
        counts.append(c)
        n_inst.append(inst.astype(float))
        ptr.append(ptr[-1] + G)
    V, C, N, P = np.concatenate(values), np.vstack(counts), np.concatenate(n_inst), np.array(ptr)
    probe = np.array(probe)
    seg, cut = mdl_cuts_segments(V, C, N, P)
    lo, hi = mdl_bins_segments(V, C, N, P, probe)
    for s in range(n_segments):
        mine = cut[seg == s]
        below, above = mine[mine < probe[s]], mine[mine >= probe[s]]
        assert lo[s] == (below.max() if below.size else -np.inf)
        assert hi[s] == (above.min() if above.size else np.inf)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.integers(1, 8))
def test_batched_venn_rows_equal_weka_mdl_row_by_row(seed, n_classes, n_rows):
    """Many Venn rows at once (one segmented MDL per forecast column) equal each row
    computed alone from its expanded examples with Weka's MDL (mdl_cut_points)."""
    rng = np.random.default_rng(seed)
    values, counts, n_inst, x_atom, ptr = [], [], [], [], [0]
    want = []
    columns = type_columns(n_classes)
    for _ in range(n_rows):
        # few distinct forecasts, as leaves give (atoms share values), or all distinct, as
        # Naive Bayes gives (long intervals beside short ones in the batched recursion)
        distinct = rng.random() < 0.3
        A = int(rng.integers(1, 120 if distinct else 30))
        levels = 10**6 if distinct else int(rng.integers(1, 6)) + 1
        p = rng.integers(0, levels, (A, n_classes)).astype(float) + 0.5
        F = p / p.sum(axis=1, keepdims=True)
        inst = rng.integers(1, 5, A)
        c = np.zeros((A, n_classes))
        for a in range(A):  # integer class counts, drawn from the forecast: MDL finds cuts
            sharp = F[a] ** 3 / (F[a] ** 3).sum()
            c[a] = np.bincount(rng.choice(n_classes, inst[a], p=sharp), minlength=n_classes)
        xa = int(rng.integers(0, A))
        # the reference: expand the atoms to examples and discretise each column
        y = np.concatenate([np.repeat(np.arange(n_classes), c[a].astype(int)) for a in range(A)])
        owner = np.concatenate([np.full(int(inst[a]), a) for a in range(A)])
        same = np.ones(A, dtype=bool)
        for col in columns:
            cuts = mdl_cut_points(F[owner, col], y, n_classes)
            b = np.searchsorted(cuts, F[:, col], side="left")
            same &= b == b[xa]
        row = c[same].sum(axis=0)
        want.append(row / row.sum())
        values.append(F)
        counts.append(c)
        n_inst.append(inst.astype(float))
        x_atom.append(ptr[-1] + xa)
        ptr.append(ptr[-1] + A)
    got = venn_rows_atoms(np.vstack(values), np.vstack(counts), np.concatenate(n_inst),
                          np.array(ptr), np.array(x_atom), columns)
    np.testing.assert_array_equal(got, np.array(want))
    # atoms grouped by counting their forecast vectors' ids, and every column discretised
    # in a call of its own: the same rows
    V = np.vstack(values)
    vid = np.unique(V, axis=0, return_inverse=True)[1].ravel()
    with patch.object(venn_types, "MDL_CELLS", 1):
        np.testing.assert_array_equal(
            venn_rows_atoms(V, np.vstack(counts), np.concatenate(n_inst), np.array(ptr),
                            np.array(x_atom), columns, vid), got)
    # atoms of one row with one forecast vector merged (integer counts): the same rows
    vid[x_atom] = vid.max() + 1
    for ids in (vid, vid * 10**6):  # ids counted, or too sparse to count: sorted
        first, *merged = merge_atoms(ids, np.vstack(counts), np.concatenate(n_inst),
                                     np.array(ptr), np.array(x_atom))
        assert merged[2][-1] <= len(vid)
        np.testing.assert_array_equal(V[first], V[np.unique(np.c_[np.repeat(
            np.arange(len(ptr) - 1), np.diff(ptr)), vid], axis=0, return_index=True)[1]])
        np.testing.assert_array_equal(venn_rows_atoms(V[first], *merged, columns), got)
    # the counts as atoms gathered from a pool of rows (the batched machine's leaves):
    # the same nonzero cells as the dense gather's, the same rows
    C = np.vstack(counts)
    pool = np.vstack([C, np.zeros((1, C.shape[1])), C[::-1]])  # zero and repeated rows
    take = np.concatenate([np.flatnonzero((C != 0).any(axis=1)), [C.shape[0]]])
    take = np.random.default_rng(len(take)).permutation(np.r_[take, take[:3]])
    sparse, dense = NonZeroCounts.of_rows(pool, take), NonZeroCounts(pool[take])
    for name in ("atom", "cls", "value"):
        np.testing.assert_array_equal(getattr(sparse, name), getattr(dense, name))
    gathered = NonZeroCounts.of_rows(C, np.arange(C.shape[0]))
    first, *merged = merge_atoms(vid, gathered, np.concatenate(n_inst), np.array(ptr),
                                 np.array(x_atom))
    np.testing.assert_array_equal(venn_rows_atoms(V[first], *merged, columns), got)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 6))
def test_column_ranks_are_numpys_unique_per_column(seed, n_rows, n_cols):
    """One sort of all the forecast columns gives each column's np.unique (values and
    inverse): few distinct values, so ties in every column."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=(n_rows, n_cols + 2)) / rng.integers(1, 4)
    columns = sorted(rng.choice(n_cols + 2, size=n_cols, replace=False).tolist())
    got = list(venn_types._column_ranks(a, columns))
    assert len(got) == len(columns)
    for col, (distinct, rank) in zip(columns, got, strict=True):
        want, inverse = np.unique(a[:, col], return_inverse=True)
        np.testing.assert_array_equal(distinct, want)
        np.testing.assert_array_equal(rank, inverse.ravel())


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 5), st.integers(1, 6))
def test_venn_rows_from_base_atoms_and_changes_equal_the_atoms_written_out(seed, n_classes,
                                                                          n_rows):
    """Rows given as the base atoms less some plus their own (x's last), integer counts:
    the same bits as venn_rows_atoms of each row's atoms — base atoms that share a
    forecast vector, new atoms with a base atom's forecast, removed atoms whose value
    then leaves the row, classes no atom holds."""
    rng = np.random.default_rng(seed)
    K = n_classes
    columns = type_columns(K)

    def forecasts(n):  # a few levels: atoms share values and vectors
        p = rng.integers(0, int(rng.integers(1, 4)) + 1, (n, K)).astype(float) + 0.5
        return p / p.sum(axis=1, keepdims=True)

    L = int(rng.integers(1, 40))
    base_values = forecasts(L)
    base_values[rng.integers(0, L, L // 3)] = base_values[0]
    base_counts = rng.integers(0, 4, (L, K)).astype(float) * (rng.random((L, K)) < 0.6)
    base_n = base_counts.sum(axis=1) + rng.integers(0, 2, L)
    removed, rem_ptr, new_values, new_counts, new_n, new_ptr = [], [0], [], [], [], [0]
    want_values, want_counts, want_n, atom_ptr, x_atom = [], [], [], [0], []
    for _ in range(n_rows):
        gone = np.flatnonzero(rng.random(L) < rng.random() * 0.5)
        m = int(rng.integers(0, 5)) + 1  # its own atoms, x's last
        v = forecasts(m)
        if rng.random() < 0.5:
            v[0] = base_values[int(rng.integers(0, L))]
        c = rng.integers(0, 4, (m, K)).astype(float)
        c[-1, int(rng.integers(0, K))] += 1  # x
        n = c.sum(axis=1) + rng.integers(0, 2, m)
        removed.append(gone)
        rem_ptr.append(rem_ptr[-1] + gone.size)
        new_values.append(v)
        new_counts.append(c)
        new_n.append(n)
        new_ptr.append(new_ptr[-1] + m)
        keep = np.setdiff1d(np.arange(L), gone)
        want_values += [base_values[keep], v]
        want_counts += [base_counts[keep], c]
        want_n += [base_n[keep], n]
        atom_ptr.append(atom_ptr[-1] + keep.size + m)
        x_atom.append(atom_ptr[-1] - 1)
    got = venn_rows_delta(unique_rows(base_values), base_counts, base_n,
                          np.concatenate(removed), np.array(rem_ptr), np.vstack(new_values),
                          np.vstack(new_counts), np.concatenate(new_n), np.array(new_ptr),
                          columns)
    want = venn_rows_atoms(np.vstack(want_values), np.vstack(want_counts),
                           np.concatenate(want_n), np.array(atom_ptr), np.array(x_atom),
                           columns)
    np.testing.assert_array_equal(got, want)


def test_incremental_naive_bayes_equals_refitting():
    rng = np.random.default_rng(5)
    n = 40
    data = make_dataset(
        {"a": rng.normal(size=n).round(2).tolist(),
         "b": [["p", "q", "r"][i % 3] if i % 7 else None for i in range(n)],
         "c": [float(v) if i % 5 else None for i, v in enumerate(rng.integers(0, 9, n))]},
        [int(v) for v in rng.integers(0, 3, n)], classes=("x", "y", "z"),
    )
    machine = _NBVenn(data, discretize=False)
    for x in (data.X[3], np.array([0.123, np.nan, 4.0]), np.array([9.0, 1.0, np.nan])):
        M = np.empty((3, 3))
        Xa = np.vstack([data.X, x])
        for j in range(3):
            ya = np.r_[data.y, j]
            wa = np.ones(n + 1)
            aug = Dataset(data.schema, Xa, ya, wa)
            M[j] = venn_row(NaiveBayes().fit(aug).predict_proba(Xa), ya, wa, 3)
        got = bag_venn_matrices([machine.forecasts(x)], data.y, data.weights, 3)[0]
        np.testing.assert_allclose(got, M, atol=1e-12)


def test_venn_naive_bayes_discretised_runs():
    data = load_dataset(SAMPLE_DATA / "iris.arff")
    train, test = data.subset(np.arange(0, 150, 3)), data.subset(np.arange(1, 150, 25))
    pred = make_method("venn:base=naive_bayes,discretize=true").fit(train).predict(test)
    np.testing.assert_allclose(pred.proba.sum(axis=1), 1.0)
    assert np.all(pred.lower <= pred.proba) and np.all(pred.proba <= pred.upper)


@settings(max_examples=30, deadline=None)
@given(data=random_datasets(min_rows=8, max_rows=40, missing=True),
       criterion=st.sampled_from(["info_gain", "gain_ratio"]), binary=st.booleans())
def test_leaf_taxonomy_with_missing_values_equals_whole_trees(data, criterion, binary):
    """Rows with unknown values, and training data with them, take the engine's exact
    batched paths: x's leaves' frequencies mixed by its shares, as whole trees give."""
    n = data.n_samples
    test_rows = np.arange(n) % 5 == 0
    train, test = data.subset(np.flatnonzero(~test_rows)), data.subset(np.flatnonzero(test_rows))
    spec = f"venn:taxonomy=leaf,criterion={criterion},min_leaf=1,binary_splits={binary}"
    a = make_method(spec).fit(train).predict(test)
    b = make_method(spec + ",engine=naive").fit(train).predict(test)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.lower, b.lower)


def test_gain_ratio_on_numeric_data_equals_reference_when_row_sets_repeat():
    """Many test rows search the same training rows R (numeric data): the per-R tables of
    :mod:`treecert.transductive.sided_search` score gains only, so under gain ratio the label
    search (MDL correction, split information) must serve them."""
    data = load_dataset(SAMPLE_DATA / "diabetes.arff")
    train, test = data.subset(np.arange(60, 400)), data.subset(np.arange(24))
    a, b = _fast_and_naive("venn:criterion=gain_ratio", train, test)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.lower, b.lower)
