"""The fast grower must grow exactly the trees of the straightforward one.

* Golden trees: every dataset in tests/data × a set of growing settings was grown with the original
  (per-node ``argsort``) grower and saved under ``tests/fixtures/golden_trees/``; regrowing
  must give the same arrays (thresholds and counts to 1e-12) and the same training rows per
  node. Regenerate (only after an intended change of behaviour) with
  ``python tests/test_grow_equivalence.py --regenerate``.
* Property tests on random data: ``grow`` (presorted, level by level) against a plain
  node-by-node grower built on ``SplitFinder.best_split`` and ``route_rows``; and the chosen
  split of a node against a brute-force enumeration of every admissible test.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import DATASETS, random_datasets

import treecert.tree.numeric_search as numeric_search
from treecert.tree.arrays import Tree
from treecert.tree.grow import GrownNodes, branch_known_weights, grow, route_rows
from treecert.tree.split_search import GrowParams, SplitFinder

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "golden_trees"

# name -> (GrowParams keywords, variant). Variant "sub": train on the rows outside fold 0
# with non-dyadic weights and every 7th row ineligible (the TPCE situation).
SETTINGS = {
    "ig_mid": ({"criterion": "info_gain", "threshold": "midpoint"}, None),
    "gr_lower": ({"criterion": "gain_ratio", "threshold": "lower"}, None),
    "gini": ({"criterion": "gini"}, None),
    "ig_binary": ({"criterion": "info_gain", "binary_splits": True}, None),
    "ig_minleaf1": ({"criterion": "info_gain", "min_leaf": 1.0}, None),
    "ig_sub": ({"criterion": "info_gain"}, "sub"),
    "gr_sub": ({"criterion": "gain_ratio", "threshold": "lower", "binary_splits": True}, "sub"),
}


def load_arff(path: Path):
    """(X, y, is_nominal, n_values, n_classes) with liac-arff; class last, None = missing."""
    import arff

    with open(path) as fh:
        d = arff.load(fh)
    kinds = [t for _, t in d["attributes"]]
    rows = d["data"]
    X = np.full((len(rows), len(kinds)), np.nan)
    for j, t in enumerate(kinds):
        for i, row in enumerate(rows):
            v = row[j]
            if v is not None:
                X[i, j] = t.index(v) if isinstance(t, list) else float(v)
    is_nominal = np.array([isinstance(t, list) for t in kinds[:-1]])
    n_values = np.array([len(t) if isinstance(t, list) else 0 for t in kinds[:-1]])
    y = np.where(np.isnan(X[:, -1]), -1, X[:, -1]).astype(np.int64)
    return X[:, :-1], y, is_nominal, n_values, len(kinds[-1])


def synthetic(name: str):
    """Larger generated data sets (numpy's legacy RandomState is stable across versions):
    ``synth-clean`` — 4000 rows, 6 numeric attributes (some with many ties), 2 classes;
    ``synth-missing`` — 2500 rows, 4 numeric and 3 nominal attributes, 3 classes, 4% of the
    values missing."""
    rs = np.random.RandomState(20261121)
    n = 4000 if name == "synth-clean" else 2500
    z = rs.randn(n, 4)
    cols = [z[:, 0], z[:, 1], np.round(z[:, 2], 1), rs.randint(0, 21, n).astype(float)]
    if name == "synth-clean":
        cols += [rs.randint(-2, 3, n) * 0.5, rs.exponential(1.0, n)]
        score = z[:, 0] * z[:, 1] + np.sin(2 * z[:, 2]) + 0.05 * cols[3] + 0.8 * rs.randn(n)
        y = (score > 0.5).astype(np.int64)
        n_values = [0] * 6
        n_classes = 2
    else:
        n_values = [0, 0, 0, 0, 3, 5, 12]
        cols += [rs.randint(0, v, n).astype(float) for v in n_values[4:]]
        score = z[:, 0] + 0.6 * (cols[4] == 1) - 0.4 * (cols[6] % 3) + 0.7 * rs.randn(n)
        y = np.digitize(score, [-0.5, 0.6]).astype(np.int64)
        n_classes = 3
    X = np.column_stack(cols)
    X[rs.rand(*X.shape) < (0.04 if name == "synth-missing" else 0.0)] = np.nan
    n_values = np.array(n_values)
    folds = np.arange(n) % 10
    return X, y, n_values > 0, n_values, n_classes, folds


SYNTHETIC = ("synth-clean", "synth-missing")


def grow_case(path: Path, setting: str) -> tuple[GrownNodes, int]:
    """Grow the tree of one golden case (as ``DecisionTree.fit`` does)."""
    if path.stem in SYNTHETIC:
        X, y, is_nominal, n_values, n_classes, folds = synthetic(path.stem)
    else:
        X, y, is_nominal, n_values, n_classes = load_arff(path)
        folds = None
    kw, variant = SETTINGS[setting]
    n = X.shape[0]
    w = np.ones(n)
    eligible = None
    rows = y >= 0
    if variant == "sub":
        if folds is None:
            folds = np.loadtxt(path.with_suffix(".folds.csv"), dtype=np.int64).reshape(-1)
        rows &= folds != 0
        w = 1.0 + (np.arange(n) % 3) / 3.0
        eligible = np.arange(n) % 7 != 3
    finder = SplitFinder(X, y, is_nominal, n_values, n_classes, GrowParams(**kw),
                         eligible=eligible, n_total_rows=n)
    idx = np.flatnonzero(rows)
    return grow(finder, idx, w[idx]), n_classes


def _row_weight_sums(g: GrownNodes) -> list[float]:
    return [float(g.rows_w[a:b].sum()) for a, b in itertools.pairwise(g.rows_ptr)]


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def golden_record(g: GrownNodes, n_classes: int) -> dict:
    return {
        "n_classes": n_classes,
        "tree": Tree.from_grown(g).to_json(),
        "rows_ptr": g.rows_ptr.tolist(),
        "rows_idx_sha256": _digest(g.rows_idx.astype("<i8")),
        "rows_w_sum": _row_weight_sums(g),
    }


def golden_cases() -> list[tuple[str, str]]:
    return sorted((p.stem.split("__")[0], p.stem.split("__")[1])
                  for p in GOLDEN.glob("*.json"))


def regenerate() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    paths = sorted(DATASETS.glob("*.arff")) + [Path(f"{s}.arff") for s in SYNTHETIC]
    for path in paths:
        for setting in SETTINGS:
            g, k = grow_case(path, setting)
            out = GOLDEN / f"{path.stem}__{setting}.json"
            out.write_text(json.dumps(golden_record(g, k), separators=(",", ":")))
            print(out.name, g.feature.size)


@pytest.mark.parametrize(("dataset", "setting"), golden_cases())
def test_golden_tree(dataset, setting):
    expect = json.loads((GOLDEN / f"{dataset}__{setting}.json").read_text())
    g, _ = grow_case(DATASETS / f"{dataset}.arff", setting)
    got = Tree.from_grown(g).to_json()
    want = expect["tree"]
    for key in ("feature", "children_ptr", "children", "value_branch_ptr", "value_branch"):
        assert got[key] == want[key], key
    thr = np.array([np.nan if t is None else t for t in got["threshold"]])
    thr_want = np.array([np.nan if t is None else t for t in want["threshold"]])
    np.testing.assert_allclose(thr, thr_want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["counts"], want["counts"], rtol=0, atol=1e-12)
    assert g.rows_ptr.tolist() == expect["rows_ptr"]
    assert _digest(g.rows_idx.astype("<i8")) == expect["rows_idx_sha256"]
    np.testing.assert_allclose(_row_weight_sums(g), expect["rows_w_sum"], rtol=0, atol=1e-12)


def test_golden_trees_exist():
    names = {d for d, _ in golden_cases()}
    assert set(SYNTHETIC) <= names
    assert {p.stem for p in DATASETS.glob("*.arff")} <= names
    assert len(golden_cases()) == len(names) * len(SETTINGS)


# ---------------------------------------------------------------- plain node-by-node grower
def grow_plain(finder: SplitFinder, idx: np.ndarray, w: np.ndarray) -> GrownNodes:
    """The straightforward grower: one ``best_split`` (fresh sort) per node, depth first."""
    params, X, y, K = finder.params, finder.X, finder.y, finder.n_classes
    feature, threshold, children, vbs, counts, depths, rows = [], [], [], [], [], [], []

    def new_node(nidx, nw, d):
        feature.append(-1)
        threshold.append(np.nan)
        children.append([])
        vbs.append(np.empty(0, dtype=np.int64))
        counts.append(np.bincount(y[nidx], weights=nw, minlength=K).astype(float))
        depths.append(d)
        rows.append((nidx, nw))
        return len(feature) - 1

    stack = [new_node(idx, w, 0)]
    while stack:
        node = stack.pop()
        nidx, nw = rows[node]
        cnt = counts[node]
        total = cnt.sum()
        elig_w = nw.sum() if finder.eligible is None else (nw * finder.eligible[nidx]).sum()
        if (total <= 0 or elig_w < 2 * params.min_leaf
                or cnt.max() >= total - 1e-9 * max(total, 1.0)
                or (params.max_depth is not None and depths[node] >= params.max_depth)):
            continue
        split = finder.best_split(nidx, nw)
        if split is None:
            continue
        feature[node], threshold[node] = split.feature, split.threshold
        if split.value_branch is not None:
            vbs[node] = split.value_branch
        known = branch_known_weights(X, nidx, nw, split)
        kids = [new_node(ci, cw, depths[node] + 1)
                for ci, cw in route_rows(X, nidx, nw, split, known)]
        children[node] = kids
        stack.extend(reversed(kids))
    n = len(feature)
    ptr = lambda sizes: np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)  # noqa: E731
    return GrownNodes(
        feature=np.array(feature, dtype=np.int64), threshold=np.array(threshold),
        children_ptr=ptr([len(c) for c in children]),
        children=np.array([c for cs in children for c in cs], dtype=np.int64),
        value_branch_ptr=ptr([v.size for v in vbs]),
        value_branch=np.concatenate(vbs).astype(np.int64),
        counts=np.array(counts).reshape(n, K), depth=np.array(depths, dtype=np.int64),
        rows_ptr=ptr([r[0].size for r in rows]),
        rows_idx=np.concatenate([r[0] for r in rows]).astype(np.int64),
        rows_w=np.concatenate([r[1] for r in rows]).astype(float),
    )


def assert_same_grown(a: GrownNodes, b: GrownNodes) -> None:
    for key in ("feature", "children_ptr", "children", "value_branch_ptr", "value_branch",
                "depth", "rows_ptr", "rows_idx"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)
    for key in ("threshold", "counts", "rows_w"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)


def _finder(data, params, eligible=None):
    return SplitFinder(data.X, data.y, data.schema.nominal_mask(), data.schema.n_values(),
                       data.schema.n_classes, params, eligible=eligible,
                       n_total_rows=data.n_samples)


_PARAMS = st.builds(
    GrowParams,
    criterion=st.sampled_from(["info_gain", "gain_ratio", "gini"]),
    min_leaf=st.sampled_from([0.0, 1.0, 2.0, 3.5]),
    max_depth=st.sampled_from([None, None, 1, 3]),
    min_gain=st.sampled_from([0.0, 0.0, 0.05]),
    binary_splits=st.booleans(),
    threshold=st.sampled_from(["midpoint", "lower", "j48"]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_datasets(max_rows=60), _PARAMS, st.sampled_from([None, 0.0, 0.3, 0.7]),
       st.integers(0, 2**32 - 1))
def test_grow_matches_plain_grower(data, params, p_inelig, seed):
    rng = np.random.default_rng(seed)
    eligible = None if p_inelig is None else rng.random(data.n_samples) >= p_inelig
    finder = _finder(data, params, eligible)
    if rng.random() < 0.2:  # a bootstrap sample: repeated rows, in increasing order
        idx = np.sort(rng.integers(0, data.n_samples, data.n_samples))
    else:
        idx = np.flatnonzero(rng.random(data.n_samples) < 0.9)
    if idx.size == 0:
        idx = np.arange(data.n_samples)
    w = data.weights[idx] * rng.choice([1.0, 1.0, 0.7, 1 / 3], idx.size)
    assert_same_grown(grow(finder, idx, w), grow_plain(finder, idx, w))


@settings(max_examples=60, deadline=None)
@given(random_datasets(max_rows=40), _PARAMS, st.integers(0, 2**32 - 1))
def test_grow_on_unsorted_rows_matches_plain_grower(data, params, seed):
    # Rows given in any order (the incremental engine may do so): same tree, same rows.
    rng = np.random.default_rng(seed)
    finder = _finder(data, params)
    idx = rng.permutation(data.n_samples)
    w = data.weights[idx]
    assert_same_grown(grow(finder, idx, w), grow_plain(finder, idx, w))


def _same_split(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return (a.feature == b.feature and a.n_branches == b.n_branches and a.score == b.score
            and np.array_equal(a.threshold, b.threshold, equal_nan=True)
            and (a.value_branch is None) == (b.value_branch is None)
            and (a.value_branch is None or np.array_equal(a.value_branch, b.value_branch)))


@settings(max_examples=300, deadline=None)
@given(random_datasets(max_rows=60), _PARAMS, st.sampled_from([None, 0.3]), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_boundary_cut_search_matches_scoring_every_cut(data, params, p_inelig, jitter, seed):
    # Scoring only Fayyad-Irani boundary cuts (then the runs next to the best) must choose
    # exactly what scoring every admissible cut chooses, score bits included.
    rng = np.random.default_rng(seed)
    X = data.X.copy()
    if jitter:  # mostly distinct values: long runs of one class between boundary cuts
        num = ~data.schema.nominal_mask()
        X[:, num] += rng.random((X.shape[0], int(num.sum()))) * 0.01
    eligible = None if p_inelig is None else rng.random(data.n_samples) >= p_inelig
    finder = SplitFinder(X, data.y, data.schema.nominal_mask(), data.schema.n_values(),
                         data.schema.n_classes, params, eligible=eligible)
    for _ in range(3):
        idx = np.flatnonzero(rng.random(data.n_samples) < 0.85)
        w = rng.choice([1.0, 1.0, 2.0, 0.7], idx.size)
        fast = finder.best_split(idx, w)
        try:
            numeric_search._PRUNE = False
            full = finder.best_split(idx, w)
        finally:
            numeric_search._PRUNE = True
        assert _same_split(fast, full), (fast, full)


# ---------------------------------------------------------------- brute force per node
def _h(counts) -> float:
    """N * impurity of a class-count vector (entropy bits or Gini)."""
    counts = [c for c in counts if c > 0]
    n = sum(counts)
    return 0.0 if n <= 0 else n * math.log2(n) - sum(c * math.log2(c) for c in counts)


def _g(counts) -> float:
    n = sum(counts)
    return 0.0 if n <= 0 else n - sum(c * c for c in counts) / n


def _si(branches, unknown, total) -> float:
    return (_h([*branches, unknown])) / total


def brute_force_best(data, idx, w, params, eligible):
    """Every admissible test of a node scored from scratch: [(feature, gain, score, cut)]."""
    X, y, K = data.X[idx], data.y[idx], data.schema.n_classes
    elig = np.ones(idx.size, bool) if eligible is None else eligible[idx]
    imp = _g if params.criterion == "gini" else _h
    total = float(w.sum())
    many = 0.3 * data.n_samples
    nominal = data.schema.nominal_mask()
    multi_val = (not (~nominal).any()) and bool(np.all(
        data.schema.n_values()[nominal] >= many))
    out = []
    for f in range(X.shape[1]):
        col = X[:, f]
        known = ~np.isnan(col)
        kc = np.bincount(y[known], weights=w[known], minlength=K)
        wk = kc.sum()
        known_elig = float((w * elig)[known].sum())
        if nominal[f]:
            nv = int(data.schema.n_values()[f])
            codes = col[known].astype(int)
            cnt = np.zeros((nv, K))
            np.add.at(cnt, (codes, y[known]), w[known])
            el = np.bincount(codes, weights=(w * elig)[known], minlength=nv)
            tests = []
            if not params.binary_splits:
                if (el >= params.min_leaf).sum() >= 2:
                    tests.append((list(range(nv)), [list(c) for c in cnt]))
            else:
                for v in range(nv):
                    if el[v] >= params.min_leaf and el.sum() - el[v] >= params.min_leaf:
                        tests.append((v, [list(cnt[v]), list(kc - cnt[v])]))
            scored = []
            for key, parts in tests:
                g = (imp(kc) - sum(imp(c) for c in parts)) / total
                si = _si([sum(c) for c in parts], total - wk, total)
                score = g / si if params.criterion == "gain_ratio" and si > 0 else (
                    0.0 if params.criterion == "gain_ratio" else g)
                scored.append((f, g, score, key, multi_val or nv < many))
            if scored:  # one test per attribute: its best value (binary) or the multiway test
                out.append(max(scored, key=lambda s: round(s[2], 9)))
            continue
        ev = np.unique(col[known & elig])
        cuts = []
        for a, b in itertools.pairwise(ev):
            cut = a if params.threshold == "lower" else (a + b) / 2
            if not a <= cut < b:
                cut = a
            left = known & (col <= cut)
            le = float((w * elig)[left].sum())
            if params.criterion == "gain_ratio":
                ms = min(max(0.1 * known_elig / K, params.min_leaf), 25.0)
                if known_elig < 2 * ms:
                    continue
            else:
                ms = params.min_leaf
            if le >= ms and known_elig - le >= ms:
                cuts.append((cut, left))
        if not cuts:
            continue
        # The column's cut: the best gain (first on near-ties); J48's MDL penalty after.
        scored = []
        for cut, left in cuts:
            lc = np.bincount(y[left], weights=w[left], minlength=K)
            g = (imp(kc) - imp(lc) - imp(kc - lc)) / total
            scored.append((g, cut, lc))
        g, cut, lc = max(scored, key=lambda s: round(s[0], 9))
        if params.criterion == "gain_ratio":
            g -= math.log2(len(cuts)) / total
            if g < 1e-6:  # J48: Utils.smOrEq(m_infoGain, 0)
                continue
            si = _si([lc.sum(), wk - lc.sum()], total - wk, total)
            score = g / si if si > 0 else 0.0
        else:
            score = g
        out.append((f, g, score, cut, True))
    if params.criterion == "gain_ratio":
        counted = [c[1] for c in out if c[4]]
        if not counted:
            return []
        avg = sum(counted) / len(counted)
        out = [c for c in out if c[1] >= avg - 1e-3 and c[2] > 1e-6]
    else:
        out = [c for c in out if c[1] > 1e-12]
    return [c for c in out if c[1] > params.min_gain]


@settings(max_examples=300, deadline=None)
@given(random_datasets(max_rows=50), _PARAMS, st.sampled_from([None, 0.3]),
       st.integers(0, 2**32 - 1))
def test_best_split_is_the_brute_force_optimum(data, params, p_inelig, seed):
    assert_brute_force_best(data, params, p_inelig, seed)


def assert_brute_force_best(data, params, p_inelig, seed) -> None:
    """The finder's best split of a random part of ``data`` is the brute force's."""
    rng = np.random.default_rng(seed)
    eligible = None if p_inelig is None else rng.random(data.n_samples) >= p_inelig
    idx = np.flatnonzero(rng.random(data.n_samples) < 0.8)
    if idx.size < 2:
        return
    w = data.weights[idx]
    split = _finder(data, params, eligible).best_split(idx, w)
    tests = brute_force_best(data, idx, w, params, eligible)
    if not tests:
        assert split is None
        return
    assert split is not None
    best = max(t[2] for t in tests)
    assert split.score == pytest.approx(best, rel=1e-9, abs=1e-9)
    mine = [t for t in tests if t[0] == split.feature]
    assert mine and mine[0][2] == pytest.approx(split.score, rel=1e-9, abs=1e-9)
    # Ties go to the lowest attribute among the (near-)best.
    assert split.feature in {t[0] for t in tests if t[2] >= best - 1e-9}
    assert split.feature <= min(t[0] for t in tests if t[2] >= best - 1e-13)


@settings(max_examples=150, deadline=None)
@given(random_datasets(max_rows=50), _PARAMS, st.integers(0, 2**32 - 1))
def test_columns_of_every_width_score_as_alone(data, params, seed):
    """Multiway columns of fewer than eight values are scored together, read to the widest
    of them (:func:`~treecert.tree.split_search._columns_by_width`): every column's
    candidate is the one it gets scored with its own width's columns alone — a column of
    one declared value (never two branches, even with ``min_leaf`` 0) and one of seven
    values among them."""
    from treecert.data.schema import Attribute, Dataset, Schema

    rng = np.random.default_rng(seed)
    one = np.where(rng.random(data.n_samples) < 0.1, np.nan, 0.0)
    seven = rng.integers(0, 7, data.n_samples).astype(float)
    X = np.column_stack([one, data.X, seven])
    attrs = (Attribute("one", "nominal", ("v0",)), *data.schema.attributes,
             Attribute("seven", "nominal", tuple(f"v{k}" for k in range(7))))
    data = Dataset(Schema(attrs, data.schema.class_attribute), X, data.y, data.weights)
    finder = _finder(data, dataclasses.replace(params, binary_splits=False))
    idx = np.flatnonzero(rng.random(data.n_samples) < 0.8)
    Y = np.zeros((idx.size, data.schema.n_classes))
    Y[np.arange(idx.size), data.y[idx]] = data.weights[idx]
    total = float(data.weights[idx].sum())
    merged = finder._nominal(idx, Y, data.weights[idx], total)
    nvs = finder.n_values[finder.nominal_idx]
    finder._same_width = [(nv, np.flatnonzero(nvs == nv)) for nv in np.unique(nvs).tolist()]
    alone = finder._nominal(idx, Y, data.weights[idx], total)
    assert [c[:3] + c[5:] for c in merged] == [c[:3] + c[5:] for c in alone]
    assert all(c[0] != 0 for c in merged)  # the one-valued column: never two branches


if __name__ == "__main__":
    if "--regenerate" in sys.argv:
        regenerate()


def test_xlogx_is_x_ln_x_with_zero_at_zero():
    """The grower's x ln x: 0 at 0 (the sign of -0.0 kept, as a masked log keeps it), x ln x
    elsewhere (numpy's log may differ from libm's by an ulp), and a (signed) 0 for a
    negative, as Weka's ``ContingencyTables.lnFunc`` counts a weight at or below 0."""
    from treecert.tree.impurity import _xlogx

    values = [0.0, 1.0, 2.5, 7.0, 1e-300, 3.0e5]
    got = _xlogx(np.array(values))
    assert got.tolist() == pytest.approx([v * math.log(v) if v else 0.0 for v in values],
                                         rel=1e-15)
    assert got[0] == 0.0 and not np.signbit(got[0])
    assert np.signbit(_xlogx(np.array([-0.0])))[0]
    assert _xlogx(np.array([-1.0, -1e-17])).tolist() == [0.0, 0.0]
    assert _xlogx(np.arange(4)).tolist() == pytest.approx(
        [0.0, 0.0, 2 * math.log(2), 3 * math.log(3)], rel=1e-15)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.floats(0.0, 0.3),
       scale=st.sampled_from([1e-3, 1.0, 1e6]))
def test_xlogx_of_mostly_zeros_equals_the_dense_path_bit_for_bit(seed, share, scale):
    """Large arrays of mostly zeros (class counts padded to every value and class) take the
    log of their non-zero elements alone: every element — signed zeros, negatives (0),
    counts — is the dense path's, bit for bit, also of views (transposed, sliced: found by
    the UCI exact-paths test)."""
    import treecert.tree.impurity as impurity

    rng = np.random.default_rng(seed)
    a = rng.random((rng.integers(1, 40), 7, 19)) * scale
    a[rng.random(a.shape) > share] = 0.0
    a[rng.random(a.shape) < 0.01] = -0.0
    a[rng.random(a.shape) < 0.002] = -1.0
    size, share_limit = impurity._SPARSE_SIZE, impurity._SPARSE_SHARE
    try:
        for view in (a, a.transpose(2, 0, 1), a[:, 1:6, ::2]):  # views: strides apart
            impurity._SPARSE_SIZE, impurity._SPARSE_SHARE = 0, 1.0  # the sparse path
            got = impurity._xlogx(view)
            impurity._SPARSE_SIZE = view.size + 1  # the dense path
            want = impurity._xlogx(view)
            np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
    finally:
        impurity._SPARSE_SIZE, impurity._SPARSE_SHARE = size, share_limit


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nv=st.integers(1, 19))
def test_split_info_along_an_axis_is_the_per_branch_one(seed, nv):
    """The nominal scores' split information of every value at once (w ln w along the
    values' axis, summed by _lastsum) adds the same numbers as the per-branch list
    (sequential below 8 branches, pairwise from there)."""
    from treecert.tree.impurity import _lastsum, _split_info, _split_info_of, _xlogx

    rng = np.random.default_rng(seed)
    br = rng.random((5, 3, nv)) * rng.choice([1.0, 1 / 3, 250.0])
    br[rng.random(br.shape) < 0.3] = 0.0
    total = br.sum(axis=(1, 2))[:, None] + rng.random((5, 1))
    unknown = total - br.sum(axis=2)
    np.testing.assert_array_equal(_split_info_of(_lastsum(_xlogx(br)), unknown, total),
                                  _split_info([br[..., v] for v in range(nv)], unknown, total))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       n=st.one_of(st.sampled_from([7, 8, 9, 15, 16, 17, 128, 129, 136, 144]),
                   st.integers(1, 300)), shape=st.sampled_from(
    [(1,), (7,), (3, 5)]))
def test_columns_are_summed_as_numpy_sums_a_last_axis(seed, n, shape):
    """_sum_cols replays numpy's sum of a last axis (sequential below 8 terms, pairwise
    from there, halves over 128) array by array: the same bits as stacking and summing,
    on terms of mixed signs and magnitudes where any other order rounds differently."""
    from treecert.tree.impurity import _sum_cols

    rng = np.random.default_rng(seed)
    cols = [rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 9, shape) for _ in range(n)]
    np.testing.assert_array_equal(_sum_cols(cols), np.stack(cols, axis=-1).sum(axis=-1))


@settings(max_examples=150, deadline=None)
@given(data=random_datasets(min_rows=6, max_rows=40, max_classes=3, missing=True),
       seed=st.integers(0, 2**32 - 1))
def test_route_entries_lists_route_batch_s_routes(data, seed):
    """The flat pairs of :func:`~treecert.tree.grow.route_entries` are
    :func:`~treecert.tree.grow.route_batch`'s per-branch lists, in order, with the same
    weights bit for bit: random nodes over the rows (some not split), numeric and nominal
    tests (multiway and binary), unknown values and fractional weights."""
    from treecert.tree.grow import route_batch, route_entries

    rng = np.random.default_rng(seed)
    n, p = data.X.shape
    G = int(rng.integers(1, 5))
    ne = np.sort(rng.integers(0, G, n))
    rows = rng.permutation(n)
    w = rng.choice([1.0, 0.5, 1 / 3, 0.7], n)
    nominal = data.schema.nominal_mask()
    feature = rng.integers(-1, p, G)
    threshold = np.where(nominal[np.maximum(feature, 0)], np.nan, rng.integers(0, 8, G) / 2)
    n_branches = np.zeros(G, dtype=np.int64)
    value_branch = {}
    for g in np.flatnonzero(feature >= 0).tolist():
        if nominal[feature[g]]:
            nv = len(data.schema.attributes[feature[g]].values)
            vb = np.arange(nv) if rng.random() < 0.5 else (np.arange(nv) != 0).astype(np.int64)
            value_branch[g], n_branches[g] = vb, int(vb.max()) + 1
        else:
            n_branches[g] = 2
    args = (data.X, nominal, rows, w, ne, G, feature, threshold, n_branches, value_branch)
    routed, flat = route_batch(*args), route_entries(*args)
    if flat is None:
        assert routed == []
        return
    entry, to, weight, branch, to_all = flat
    assert len(routed) == to_all.shape[1]
    for b, (ent, cw) in enumerate(routed):
        np.testing.assert_array_equal(entry[to == b], ent)
        np.testing.assert_array_equal(weight[to == b], cw)
    assert np.all(np.diff(to) >= 0)
    known = branch >= 0
    np.testing.assert_array_equal(np.isnan(data.X[rows, np.maximum(feature[ne], 0)])
                                  | (feature[ne] < 0), ~known)


def _zero_gain_column_data():
    """Six rows (found by the brute-force test) where a numeric column gains nothing but
    rounding (1.5e-16) and, counted in the average gain, would let a nominal column into
    gain ratio's pool: ``J48 -U -M 0`` (Weka 3.6.14) grows num1 <= 1 (num1 <= 0: c1;
    num1 > 0: c0), num1 > 1: c1."""
    from treecert.data.schema import Attribute, Dataset, Schema

    binary = ("v0", "v1")
    schema = Schema((Attribute("num0", "numeric"), Attribute("num1", "numeric"),
                     Attribute("nom0", "nominal", binary), Attribute("nom1", "nominal", binary),
                     Attribute("nom2", "nominal", binary)),
                    Attribute("class", "nominal", ("c0", "c1")))
    X = np.array([[0.5, 1.0, 1, 1, 0], [0.0, 1.5, 0, 0, 0], [0.0, 1.0, 0, 1, 0],
                  [0.5, 1.5, 0, 0, 0], [0.0, 0.0, 0, 1, 1], [0.0, 0.5, 0, 0, 1]], dtype=float)
    return Dataset(schema, X, np.array([0, 1, 0, 1, 1, 0]), np.ones(6), source="<zero gain>")


def test_a_numeric_test_gaining_less_than_wekas_small_is_no_candidate():
    """J48 drops a numeric column whose MDL-corrected gain is within 1e-6 of 0
    (``C45Split``: ``Utils.smOrEq(m_infoGain, 0)``), so it does not count in the average
    gain either: the grower grows J48's tree on :func:`_zero_gain_column_data`, where
    counting num0's rounding noise would put nom0 at the root."""
    from treecert.tree.classifier import DecisionTree

    data = _zero_gain_column_data()
    learner = DecisionTree(criterion="gain_ratio", min_leaf=0.0, threshold="lower")
    finder = learner.make_finder(data)
    batch = finder._single_batch(np.arange(6), np.ones(6))
    ok, gain, _, _ = finder._numeric_batch(batch)
    assert 0 < gain[0, 0] < 1e-12 and not ok[0, 0] and ok[0, 1]
    tree = learner.fit(data).tree_
    assert tree.feature.tolist() == [1, 1, -1, -1, -1]
    assert tree.threshold[:2].tolist() == [1.0, 0.0]


def test_engines_drop_a_numeric_test_gaining_less_than_wekas_small():
    """The batched engine's gain-ratio paths keep J48's rule of
    :func:`test_a_numeric_test_gaining_less_than_wekas_small_is_no_candidate`: the searches
    of many labels (``label_search._ratio_cuts``) and the certificates' intervals
    (``RatioScores._numeric_intervals``) admit an MDL-corrected gain of 2e-6, not 5e-7, and
    a certificate never relies on one within rounding of the limit; and every x of a grid,
    either class, gives what whole trees give, bit for bit."""
    from types import SimpleNamespace

    from treecert.transductive import label_search
    from treecert.transductive.ratio_scores import RatioScores

    mdl = math.log2(3) / 7.0  # three cuts, 7 rows with x
    gc = np.array([[5e-7, 2e-6, 1e-6 + 1e-12]])
    ok, gain, score = np.zeros((1, 3), bool), mdl + gc, np.zeros((1, 3))
    tabs = [SimpleNamespace(col=np.repeat(np.arange(3), 3))]
    one = np.zeros(3, dtype=np.int64)
    label_search._ratio_cuts(tabs, one[:1], np.array([[3.0, 4.0]]), np.array([7.0]), ok, gain,
                             score, one, np.arange(3), np.full(3, 3.0), 3)
    assert ok.tolist() == [[False, True, True]]
    ok, sure = np.zeros((1, 3), bool), np.ones(1, bool)
    arrays = [np.zeros((1, 3)) for _ in range(4)]
    RatioScores._numeric_intervals(SimpleNamespace(n_cuts=np.full(3, 3)), gc, gc, gc, ok,
                                   *arrays, sure)
    assert ok.tolist() == [[False, True, True]] and not sure[0]
    from conftest import assert_engines_agree

    from treecert.transductive.engine import TransductiveEngine
    from treecert.tree.classifier import DecisionTree

    data = _zero_gain_column_data()
    grid = np.array(list(itertools.product([0.0, 0.25, 0.5], [0.0, 0.75, 1.0, 1.5],
                                           [0, 1], [0, 1], [0, 1])), dtype=float)
    X, labels = np.repeat(grid, 2, axis=0), np.tile([0, 1], grid.shape[0])
    for threshold in ("lower", "midpoint"):
        learner = DecisionTree(criterion="gain_ratio", min_leaf=0.0, threshold=threshold)
        assert_engines_agree(TransductiveEngine(data, learner), X, labels)


def test_a_multiway_test_of_many_heavy_values_is_admissible():
    """A nominal column of 256 values, each held by two rows: 256 branches of ``min_leaf``
    weight (a count no small integer type holds), so its multiway test is admissible —
    for a few nodes and for many at once."""
    from treecert.data.schema import Attribute, Dataset, Schema
    from treecert.tree.classifier import DecisionTree
    from treecert.tree.segments import _Batch

    n, nv = 512, 256
    schema = Schema((Attribute("many", "nominal", tuple(f"v{i}" for i in range(nv))),),
                    Attribute("class", "nominal", ("p", "q")))
    X = (np.arange(n) // 2).astype(float)[:, None]
    data = Dataset(schema, X, (np.arange(n) // 2 % 2).astype(np.int64), np.ones(n),
                   source="<many>")
    finder = DecisionTree(criterion="info_gain", min_leaf=2.0).make_finder(data)
    for nodes in (1, 256):
        rows = np.tile(np.arange(n), nodes)
        batch = _Batch(np.arange(nodes + 1) * n, rows, np.ones(rows.size), None, None, None,
                       None)
        ok = finder._nominal_batch(batch)[0]
        assert ok.shape == (nodes, 1) and ok.all()
