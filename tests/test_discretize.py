"""Tests of treecert.data.discretize: Weka-exact MDL cut points and simple binning."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import DATASETS
from hypothesis import given, settings
from hypothesis import strategies as st

from treecert.data.discretize import (
    assign_bins,
    equal_frequency_edges,
    equal_width_edges,
    mdl_cut_points,
)
from treecert.errors import ConfigError, DataError

WEKA_JAR = Path("/usr/share/java/weka.jar")


def _load_arff(name: str) -> tuple[dict[str, np.ndarray], np.ndarray, int]:
    arff = pytest.importorskip("scipy.io.arff")
    data, meta = arff.loadarff(DATASETS / f"{name}.arff")
    names = meta.names()
    cls = names[-1]
    labels = list(meta[cls][1])
    y = np.array([labels.index(v.decode()) for v in data[cls]])
    cols = {n.strip("'"): data[n].astype(float) for n in names[:-1]}
    return cols, y, len(labels)


# --------------------------------------------------------------------------------------------
# Reference cut points printed by Weka 3.6.14 (Debian package `weka`):
#   weka.filters.supervised.attribute.Discretize -c last -R first-last   (default options)
# read with Discretize.getCutPoints(i) at full precision, kept here to 6 decimals.
# --------------------------------------------------------------------------------------------

WEKA_IRIS = {
    "sepallength": [5.55, 6.15],
    "sepalwidth": [2.95, 3.35],
    "petallength": [2.45, 4.75],
    "petalwidth": [0.8, 1.75],
}
WEKA_DIABETES = {
    "preg": [6.5],
    "plas": [99.5, 127.5, 154.5],
    "pres": [],
    "skin": [],
    "insu": [14.5, 121.0],
    "mass": [27.85],
    "pedi": [0.5275],
    "age": [28.5],
}
# diabetes.arff with instance weights w_i = (1 + (5 i mod 7)) / 4 (i = 0-based row) written as
# ARFF "{w}" weights.
WEKA_DIABETES_WEIGHTED = {
    "preg": [6.5],
    "plas": [99.5, 123.5, 154.5],
    "pres": [69.0],
    "skin": [31.5],
    "insu": [14.5, 125.5],
    "mass": [29.85],
    "pedi": [],
    "age": [28.5],
}
WEKA_GLASS = {  # 6 classes present (7 declared)
    "RI": [1.517335, 1.517985],
    "Na": [14.065],
    "Mg": [2.695],
    "Al": [1.39, 1.775],
    "Si": [],
    "K": [0.055, 0.615, 0.745],
    "Ca": [7.02, 8.315, 10.075],
    "Ba": [0.335],
    "Fe": [],
}


@pytest.mark.parametrize(
    ("name", "ref"),
    [("iris", WEKA_IRIS), ("diabetes", WEKA_DIABETES), ("glass", WEKA_GLASS)],
)
def test_mdl_matches_weka_reference(name: str, ref: dict[str, list[float]]) -> None:
    cols, y, k = _load_arff(name)
    assert set(cols) == set(ref)
    for att, expected in ref.items():
        got = mdl_cut_points(cols[att], y, k)
        assert got.shape == (len(expected),), (att, got)
        np.testing.assert_allclose(got, expected, rtol=0, atol=5e-7, err_msg=att)


def test_mdl_matches_weka_reference_weighted() -> None:
    cols, y, k = _load_arff("diabetes")
    w = (1 + (np.arange(y.shape[0]) * 5) % 7) / 4.0
    for att, expected in WEKA_DIABETES_WEIGHTED.items():
        got = mdl_cut_points(cols[att], y, k, sample_weight=w)
        assert got.shape == (len(expected),), (att, got)
        np.testing.assert_allclose(got, expected, rtol=0, atol=5e-7, err_msg=att)


# --------------------------------------------------------------------------------------------
# A literal (loop-by-loop) transcription of Weka's cutPointsForSubset / FayyadAndIranisMDL,
# to check the vectorised implementation on random data, ties included.
# --------------------------------------------------------------------------------------------


def _ln(x: float) -> float:
    return 0.0 if x <= 0 else x * math.log(x)


def _entropy(a: list[float]) -> float:
    ret, s = 0.0, 0.0
    for x in a:
        ret -= _ln(x)
        s += x
    return 0.0 if abs(s) < 1e-6 else (ret + _ln(s)) / (s * math.log(2))


def _cond_entropy(m: list[list[float]]) -> float:
    ret, total = 0.0, 0.0
    for row in m:
        s = 0.0
        for x in row:
            ret += _ln(x)
            s += x
        ret -= _ln(s)
        total += s
    return 0.0 if abs(total) < 1e-6 else -ret / (total * math.log(2))


def _weka_literal(v: np.ndarray, y: np.ndarray, k: int, w: np.ndarray) -> list[float]:
    order = np.argsort(v, kind="stable")
    v, y, w = v[order].tolist(), y[order].tolist(), w[order].tolist()

    def rec(first: int, last1: int) -> list[float]:
        if last1 - first < 2:
            return []
        counts = [[0.0] * k, [0.0] * k]
        n_inst = 0.0
        for i in range(first, last1):
            n_inst += w[i]
            counts[1][y[i]] += w[i]
        prior = list(counts[1])
        prior_e = _entropy(prior)
        best_e, best_i, best_counts = prior_e, -1, None
        for i in range(first, last1 - 1):
            counts[0][y[i]] += w[i]
            counts[1][y[i]] -= w[i]
            if v[i] < v[i + 1]:
                e = _cond_entropy(counts)
                if e < best_e:
                    best_e, best_i = e, i
                    best_counts = [list(counts[0]), list(counts[1])]
        gain = prior_e - best_e
        if gain <= 0:
            return []
        kk = sum(c > 0 for c in prior)
        k1 = sum(c > 0 for c in best_counts[0])
        k2 = sum(c > 0 for c in best_counts[1])
        delta = math.log(3.0**kk - 2) / math.log(2) - (
            kk * prior_e - k2 * _entropy(best_counts[1]) - k1 * _entropy(best_counts[0])
        )
        if not gain > (math.log(last1 - first - 1) / math.log(2) + delta) / n_inst:
            return []
        cut = (v[best_i] + v[best_i + 1]) / 2.0
        return [*rec(first, best_i + 1), cut, *rec(best_i + 1, last1)]

    return rec(0, len(v))


@settings(max_examples=80, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 12), st.integers(0, 5), st.integers(1, 4)),
        min_size=0,
        max_size=60,
    ),
    weighted=st.booleans(),
)
def test_mdl_vectorised_equals_literal_weka(data: list[tuple[int, int, int]], weighted: bool):
    v = np.array([d[0] / 4.0 for d in data], dtype=float)
    # the class follows the value (3 blocks) except for noisy instances, so that cuts are
    # accepted, rejected and recursed into; values are tied often
    y = np.array([d[0] // 5 if d[1] > 1 else d[1] % 3 for d in data], dtype=np.int64)
    w = np.array([d[2] / 2.0 for d in data]) if weighted else np.ones(len(data))
    got = mdl_cut_points(v, y, 3, sample_weight=w if weighted else None)
    assert got.tolist() == _weka_literal(v, y, 3, w)


def test_mdl_hand_cases() -> None:
    # perfectly separable: one cut at the midpoint; gain 1 bit > (log2 9 + log2 7 - 2) / 10
    v = np.arange(1.0, 11.0)
    y = (v > 5).astype(int)
    assert mdl_cut_points(v, y, 2).tolist() == [5.5]
    # order of the input does not matter
    perm = np.array([3, 9, 0, 5, 1, 8, 2, 7, 4, 6])
    assert mdl_cut_points(v[perm], y[perm], 2).tolist() == [5.5]
    # a single class or a constant variable: no cut
    assert mdl_cut_points(v, np.zeros(10, int), 2).size == 0
    assert mdl_cut_points(np.ones(10), y, 2).size == 0
    # missing values are ignored
    v_nan = np.concatenate([v, [np.nan, np.nan]])
    y_nan = np.concatenate([y, [0, 1]])
    assert mdl_cut_points(v_nan, y_nan, 2).tolist() == [5.5]
    # too little evidence: 1 0 1 0 ... alternating classes are not cut
    assert mdl_cut_points(np.arange(8.0), np.arange(8) % 2, 2).size == 0
    # empty input
    assert mdl_cut_points([], [], 2).size == 0


@pytest.mark.parametrize(
    ("labels", "weka"),
    [
        # x = 0, 1, 2, ...; class sequences whose mirror image swaps the classes, so the two
        # best candidates have exactly equal entropy; Weka 3.6.14 keeps the first (lowest)
        # one and then rejects the mirrored cut (mirrored choice would give 16.5 / 10.5).
        ([0] * 9 + [1, 1, 1, 0, 1, 0, 0, 0] + [1] * 9, [8.5]),
        ([1] * 9 + [0, 1] + [0] * 9, [8.5]),
    ],
)
def test_mdl_equal_entropy_tie_keeps_first_candidate(labels: list[int], weka: list[float]):
    v = np.arange(len(labels), dtype=float)
    assert mdl_cut_points(v, np.array(labels), 2).tolist() == weka


def test_mdl_recurses_into_three_bins() -> None:
    v = np.arange(30.0)
    y = np.repeat([0, 1, 2], 10)
    assert mdl_cut_points(v, y, 3).tolist() == [9.5, 19.5]


def test_mdl_input_errors() -> None:
    with pytest.raises(DataError):
        mdl_cut_points([1.0, 2.0], [0], 2)
    with pytest.raises(DataError):
        mdl_cut_points([1.0, 2.0], [0, 2], 2)
    with pytest.raises(DataError):
        mdl_cut_points([1.0, 2.0], [0, 1], 2, sample_weight=[1.0, -1.0])
    with pytest.raises(DataError):
        mdl_cut_points([[1.0, 2.0]], [0, 1], 2)
    with pytest.raises(ConfigError):
        mdl_cut_points([1.0, 2.0], [0, 1], 0)


@pytest.mark.skipif(
    not (WEKA_JAR.is_file() and shutil.which("java")),
    reason="needs Weka 3.6 and java (Debian packages weka and default-jre-headless)",
)
def test_mdl_live_weka_parity(tmp_path: Path) -> None:
    """Run Weka's filter on random tied data and compare the printed (6-decimal) bins."""
    rng = np.random.default_rng(7)
    n = 300
    y = rng.integers(0, 3, n)
    x1 = np.round(np.clip(0.3 * y + rng.normal(0, 0.25, n), 0, None) * 100) / 100
    x2 = np.round(rng.uniform(0, 1, n) * 20) / 20  # many ties, uninformative
    x3 = np.round((y == 2) * 0.6 + rng.uniform(0, 0.5, n), 2)
    rows = "\n".join(
        f"{float(a)!r},{float(b)!r},{float(c)!r},c{k}"
        for a, b, c, k in zip(x1, x2, x3, y, strict=True)
    )
    src = tmp_path / "r.arff"
    src.write_text(
        "@relation r\n@attribute x1 numeric\n@attribute x2 numeric\n@attribute x3 numeric\n"
        f"@attribute class {{c0,c1,c2}}\n@data\n{rows}\n"
    )
    out = tmp_path / "o.arff"
    subprocess.run(
        [
            "java",
            "-cp",
            str(WEKA_JAR),
            "weka.filters.supervised.attribute.Discretize",
            "-i",
            str(src),
            "-o",
            str(out),
            "-c",
            "last",
            "-R",
            "first-last",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    weka_cuts = []
    for line in out.read_text().splitlines():
        m = re.match(r"@attribute\s+(x\d)\s+\{(.*)\}", line)
        if m:
            ends = re.findall(r"-([0-9.]+)\]", m.group(2))
            weka_cuts.append([float(e) for e in ends])
    assert len(weka_cuts) == 3
    for x, ref in zip((x1, x2, x3), weka_cuts, strict=True):
        got = mdl_cut_points(x, y, 3)
        np.testing.assert_allclose(got, ref, rtol=0, atol=5e-7)


# --------------------------------------------------------------------------------------------
# equal width / equal frequency / assign
# --------------------------------------------------------------------------------------------


def test_equal_width_edges_probabilities_exact() -> None:
    e = equal_width_edges([0.2, 0.7], 10, lo=0.0, hi=1.0)
    assert e.tolist() == [k / 10 for k in range(1, 10)]
    assert e[2] == 0.3  # not 3 * 0.1 = 0.30000000000000004
    assert equal_width_edges([1.0, 3.0], 4).tolist() == [1.5, 2.0, 2.5]
    assert equal_width_edges([2.0, 2.0], 4).size == 0
    assert equal_width_edges([np.nan], 4).size == 0
    assert equal_width_edges([0.0, 1.0], 1).size == 0
    with pytest.raises(ConfigError):
        equal_width_edges([0.0, 1.0], 0)
    with pytest.raises(ConfigError):
        equal_width_edges([0.0, 1.0], 2, lo=1.0, hi=0.0)


def test_equal_frequency_edges() -> None:
    v = np.arange(1.0, 11.0)
    assert equal_frequency_edges(v, 5).tolist() == [2.5, 4.5, 6.5, 8.5]
    assert equal_frequency_edges(v[::-1], 2).tolist() == [5.5]
    # ties: cut points that would split a tied group are dropped
    assert equal_frequency_edges([1, 1, 1, 1, 1, 1, 2, 3], 4).tolist() == [1.5]
    assert equal_frequency_edges([5, 5, 5], 3).size == 0
    b = assign_bins(v, equal_frequency_edges(v, 5))
    assert np.bincount(b).tolist() == [2, 2, 2, 2, 2]


def test_assign_bins_closedness() -> None:
    edges = np.array([0.5, 1.0])
    v = np.array([0.0, 0.5, 0.7, 1.0, 2.0, np.nan])
    assert assign_bins(v, edges).tolist() == [0, 0, 1, 1, 2, -1]
    assert assign_bins(v, edges, right=False).tolist() == [0, 1, 1, 2, 2, -1]
    assert assign_bins(v, []).tolist() == [0, 0, 0, 0, 0, -1]
    with pytest.raises(ConfigError):
        assign_bins(v, [1.0, 0.5])
    with pytest.raises(DataError):
        assign_bins([np.inf], edges)
