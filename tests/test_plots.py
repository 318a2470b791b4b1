"""What a reader of the plots sees, read from the matplotlib Figures the drawing functions
return (no image comparison): titles naming the dataset and the protocol, curves identical
to another said in the legend, the macro-average ROC panel when classes are left out,
reliability points sized by their bins' rows and light when few, Venn and empirical-Bayes
bounds drawn, and prune --plot's leaf count equal to the command's."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLE_DATA
from conftest import run_cli as run

pytest.importorskip("matplotlib")

from treecert.evaluation import plot_curves as C
from treecert.evaluation import plots as P


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _predictions(n_classes: int, n: int = 300, seed: int = 0, bounds: bool = False):
    """Predictions of three methods: laplace, kk (the same probabilities) and venn (other
    probabilities, with lower_/upper_ columns when ``bounds``). Class k has about
    n / 2**(k+1) rows, so the classes differ in size."""
    rng = np.random.default_rng(seed)
    classes = tuple(f"c{k}" for k in range(n_classes))
    sizes = np.maximum(n // 2 ** np.arange(1, n_classes + 1), 3)
    y = np.repeat(np.arange(n_classes), sizes)
    frames = []
    base = rng.dirichlet(np.ones(n_classes), size=y.size)
    base[np.arange(y.size), y] += rng.uniform(0, 1.5, y.size)
    base /= base.sum(axis=1, keepdims=True)
    other = rng.dirichlet(np.ones(n_classes), size=y.size)
    for method, p in (("laplace", base), ("kk", base), ("venn", other)):
        frame = pd.DataFrame({"method": method, "repeat": 0, "fold": 0,
                              "row": np.arange(y.size), "actual": [classes[k] for k in y]})
        for k, c in enumerate(classes):
            frame[f"p_{c}"] = p[:, k]
        if bounds and method == "venn":
            for k, c in enumerate(classes):
                frame[f"lower_{c}"] = np.clip(p[:, k] - 0.1, 0, 1)
                frame[f"upper_{c}"] = np.clip(p[:, k] + 0.1, 0, 1)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True), classes


RUN = {"dataset": {"name": "credit-g", "rows": 1000},
       "protocol": {"kind": "folds", "seed": 1, "fold_ids": [0, 1, 2] * 3}}


def _legend_texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() is not None
            for t in ax.get_legend().get_texts()]


@pytest.mark.parametrize(("protocol", "source", "expected"), [
    ({"kind": "cv", "seed": 1, "folds": 10, "repeats": 1}, None,
     "stratified 10-fold CV (seed 1)"),
    ({"kind": "cv", "seed": 1, "folds": 10, "repeats": 3}, None,
     "stratified 10-fold CV (seed 1), repeat 0 of 3 shown"),
    ({"kind": "weka", "seed": 1, "folds": 10, "repeats": 1}, None,
     "Weka's 10-fold CV (-x 10 -s 1)"),
    ({"kind": "folds", "seed": 1, "fold_ids": [0, 1, 2, 0]}, "credit-g.folds.csv",
     "3-fold CV (credit-g.folds.csv)"),
    ({"kind": "loo", "seed": 1}, None, "leave-one-out"),
    ({"kind": "test", "seed": 1, "test": {"rows": 268}}, "test.arff",
     "holdout: tested on test.arff (268 rows)"),
])
def test_the_protocol_in_words(protocol, source, expected):
    assert P.describe_protocol(protocol, source) == expected


def test_a_comparisons_protocols_in_words():
    from treecert.cli.compare import _protocols

    folds = {"protocol": {"kind": "folds", "seed": 1, "fold_ids": [0, 1]}}
    loo = {"protocol": {"kind": "loo", "seed": 1}}
    assert _protocols([folds, folds]) == "2-fold CV (NAME.folds.csv)"
    assert _protocols([folds, folds, loo]) == \
        "2-fold CV (NAME.folds.csv) (2 datasets); leave-one-out (1 dataset)"


def test_run_title_names_dataset_rows_and_protocol():
    assert P.run_title(RUN, "credit-g.folds.csv") == \
        "credit-g (1000 rows) — 3-fold CV (credit-g.folds.csv)"


def test_binary_roc_titled_and_identical_curve_said_in_the_legend():
    frame, classes = _predictions(2)
    fig = C.roc_figure(frame, classes, P.run_title(RUN, "credit-g.folds.csv"))
    title = fig._suptitle.get_text()
    assert "credit-g" in title and "3-fold CV (credit-g.folds.csv)" in title
    labels = _legend_texts(fig)
    assert len(labels) == 3
    assert labels[0].startswith("laplace: ")
    assert labels[1].startswith("kk = laplace, identical: ")
    assert labels[2].startswith("venn: ")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "false positive rate"
    assert ax.get_ylabel() == "true positive rate"


def test_curves_drawing_the_same_line_are_identical():
    """Two perfect rankings through different thresholds draw the same two segments."""
    a = C._corners(np.array([0, 0, 0, 0, 0.5, 1.0]), np.array([0, 0.5, 1, 1, 1, 1.0]))
    b = C._corners(np.array([0, 0, 1.0]), np.array([0, 1, 1.0]))
    assert P.identical_to([a, b]) == [None, 0]
    c = C._corners(np.array([0, 0.1, 1.0]), np.array([0, 1, 1.0]))
    assert P.identical_to([a, c]) == [None, None]


def test_many_classes_get_averages_and_say_which_classes_are_shown():
    frame, classes = _predictions(12, n=2000)
    fig = C.roc_figure(frame, classes, "soybean")
    titles = [ax.get_title() for ax in fig.axes if ax.axison]
    assert titles[:2] == ["macro-average over all 12 classes",
                          "micro-average over all 12 classes"]
    assert len(titles) == 2 + C.MAX_CLASS_PANELS
    assert titles[2].startswith("class c0 vs rest (1000 of ")  # the largest class first
    assert "7 of 12 classes shown (the largest)" in fig._suptitle.get_text().replace("\n", " ")
    # the macro AUC label is the mean of the one-vs-rest AUCs (the metrics' macro auc)
    y, p = C._proba(frame[frame["method"] == "venn"], classes)
    from treecert.evaluation.point_metrics import roc_auc

    macro = np.mean([roc_auc(p[:, k], y == k) for k in range(12)])
    assert f"venn: {macro:.3f}" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_few_classes_are_all_shown():
    frame, classes = _predictions(3)
    fig = C.roc_figure(frame, classes)
    assert "all 3 classes shown" in fig._suptitle.get_text()
    assert len([ax for ax in fig.axes if ax.axison]) == 5


def _binned(bounds: bool = True):
    """Binary predictions whose forecasts fall in three bins of 100, 30 and 1 rows."""
    frame, classes = _predictions(2, n=262, bounds=bounds)  # 131 + 65 rows
    f = np.r_[np.full(100, 0.05), np.full(30, 0.45), 0.95, np.full(65, 0.05)]
    frame["p_c1"] = np.tile(f, 3)
    venn = frame["method"] == "venn"
    frame.loc[venn, "p_c1"] += 0.02  # in the same bins, but not laplace's points
    frame["p_c0"] = 1 - frame["p_c1"]
    if bounds:
        frame.loc[venn, "lower_c1"] = frame.loc[venn, "p_c1"] - 0.04
        frame.loc[venn, "upper_c1"] = frame.loc[venn, "p_c1"] + 0.1
    return frame, classes


def test_reliability_points_sized_by_rows_light_when_few_and_bounds_drawn():
    frame, classes = _binned()
    fig = C.reliability_figure(frame, classes, "equal_width",
                               P.run_title(RUN, "credit-g.folds.csv"))
    assert "credit-g (1000 rows) — 3-fold CV" in fig._suptitle.get_text()
    panels = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title().split("\n")[0] for ax in panels] == \
        ["laplace", "kk = laplace, identical", "venn"]
    for ax, method in zip(panels, ["laplace", "kk", "venn"], strict=True):
        pt = C._reliability_points(frame[frame["method"] == method], classes, "equal_width")
        points = ax.collections[-1]  # the scatter is drawn last
        sizes = points.get_sizes()
        assert len(sizes) == pt["n"].size
        assert sorted(pt["n"]) == [1, 30, 165]
        assert np.allclose(sizes, C._area(pt["n"], 165))  # area in proportion to the rows
        assert sizes[pt["n"] == 165][0] > 20 * sizes[pt["n"] == 1][0]
        alpha = points.get_facecolors()[:, 3]
        assert np.all((alpha < 0.5) == (pt["n"] < C.LIGHT_ROWS))
    # venn's bounds: one vertical bar per bin from its mean lower to its mean upper bound
    bars = [c for c in panels[2].collections if c is not panels[2].collections[-1]]
    assert len(bars) == 1 and len(bars[0].get_segments()) == panels[2].collections[-1] \
        .get_offsets().shape[0]
    assert all(len(ax.collections) == 1 for ax in panels[:2])  # no bounds, no bars
    pt = C._reliability_points(frame[frame["method"] == "venn"], classes, "equal_width")
    inside = int(((pt["lower"] <= pt["y"]) & (pt["y"] <= pt["upper"])).sum())
    assert panels[2].get_title().endswith(f"observed within the bounds in {inside} of 3 bins")
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "[lower, upper] bounds, bin means" in legend
    assert f"light: < {C.LIGHT_ROWS} rows" in legend
    assert any(re.fullmatch(r"\d+ rows", t) for t in legend)


def test_top_label_reliability_for_many_classes():
    frame, classes = _predictions(4)
    fig = C.reliability_figure(frame, classes)
    assert "predicted class" in fig._suptitle.get_text()
    assert fig.axes[0].get_ylabel() == "observed accuracy (predicted class right)"


def test_scatter_title_names_datasets_and_protocol():
    table = pd.DataFrame({"laplace": [0.1, 0.2], "kk": [0.15, 0.18]}, index=["iris", "vote"])
    (name, fig), = list(P.scatter_figures({"brier": table}, "10-fold CV (NAME.folds.csv)"))
    assert name == "scatter_brier_laplace_vs_kk.png"
    title = fig._suptitle.get_text().replace("\n", " ")
    assert "brier: laplace vs kk, one point per dataset (2 datasets)" in title
    assert "10-fold CV (NAME.folds.csv)" in title
    assert fig.legends[0].get_title().get_text() == \
        "above the diagonal: kk's brier is higher (kk worse)"


@pytest.fixture(scope="module")
def credit_model(tmp_path_factory):
    from treecert.cli.main import main

    model = tmp_path_factory.mktemp("c") / "credit-g.json"
    assert main(["train", str(SAMPLE_DATA / "credit-g.arff"), "--leaf", "laplace", "-o",
                 str(model), "-q"]) == 0
    return model


@pytest.mark.parametrize("selection", [["--holdout", "0.2"], ["--cv", "3"]])
def test_prune_plot_rings_the_leaf_count_the_command_prints(credit_model, tmp_path, capsys,
                                                            monkeypatch, selection):
    """The holdout's ringed point is a subtree of the tree regrown without the holdout
    (177 leaves on credit-g); its α prunes the whole tree to 173, the number the command
    prints, and the plot's label and annotation say 173."""
    drawn = []
    monkeypatch.setattr(P, "save_figure", lambda fig, path: drawn.append(fig) or path)
    code, _, err = run(["prune", credit_model, "--method", "ccp", *selection,
                        "--plot", tmp_path / "cp.png", "-o", tmp_path / "p.json"], capsys)
    assert code == 0, err
    printed = int(re.search(r"-> (\d+) leaves", err).group(1))
    fig, = drawn
    ax = fig.axes[0]
    annotated = [t.get_text() for t in ax.texts]
    assert annotated == [f"{printed} leaves"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(t.startswith(f"chosen: the pruned model has {printed} leaves") for t in legend)
    title = fig._suptitle.get_text().replace("\n", " ")
    assert str(credit_model) in title and "german_credit, 1000 rows" in title
    if selection[0] == "--holdout":
        import json

        record = json.loads((tmp_path / "p.json").read_text())["pruning"]
        regrown = record["holdout_sequence"][record["chosen"]]["leaves"]
        assert regrown != printed  # the case the label explains
        assert any(f"this point: {regrown} leaves of the regrown tree" in t for t in legend)
        assert "holdout 0.2" in title
    else:
        assert "3-fold cross-validation" in title


def test_evaluate_plots_titles_name_the_fold_file(tmp_path, monkeypatch):
    from treecert.cli.main import main

    titles = []
    monkeypatch.setattr(C, "save_figure",
                        lambda fig, path: titles.append(fig._suptitle.get_text()) or path)
    assert main(["evaluate", str(SAMPLE_DATA / "iris.arff"), "--method", "laplace",
                 "--folds-file", str(SAMPLE_DATA / "iris.folds.csv"), "--no-timing",
                 "--plots", "-o", str(tmp_path / "ev"), "-q"]) == 0
    assert len(titles) == 2
    assert all(t.startswith("iris (150 rows) — 10-fold CV (iris.folds.csv)") for t in titles)
