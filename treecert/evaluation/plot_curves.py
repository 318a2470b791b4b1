"""``evaluate --plots``: reliability diagrams (one small panel per method) and ROC curves
(per class, with macro- and micro-averages over every class), drawn from the predictions
of the first repeat. The shared machinery (titles, identical curves, saving) is in
:mod:`treecert.evaluation.plots`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from treecert.evaluation.plots import (
    identical_label,
    identical_to,
    require_matplotlib,
    save_figure,
    wrap,
)
from treecert.evaluation.point_metrics import roc_auc
from treecert.evaluation.reliability import reliability_bins, reliability_curve, weighted_trend

if TYPE_CHECKING:
    import pandas as pd

#: Bins resting on fewer rows than this are drawn light: their frequency is mostly noise.
LIGHT_ROWS = 10
#: Marker area (points²) of the fullest bin of a reliability figure; others in proportion.
MAX_AREA = 360.0
#: Per-class ROC panels beyond the macro- and micro-averages: the largest classes.
MAX_CLASS_PANELS = 7


def _first_repeat(predictions: pd.DataFrame) -> pd.DataFrame:
    """The labelled rows of the first repeat (the plots show one pass over the data)."""
    frame = predictions
    if "repeat" in frame.columns:
        frame = frame[frame["repeat"] == frame["repeat"].min()]
    return frame[frame["actual"].notna()]


def _proba(frame: pd.DataFrame, classes: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    y = frame["actual"].astype(str).map({c: i for i, c in enumerate(classes)})
    return y.to_numpy(dtype=int), frame[[f"p_{c}" for c in classes]].to_numpy(dtype=float)


def _bounds(frame: pd.DataFrame, classes: tuple[str, ...]):
    """(lower, upper) (n, K) when the method wrote ``lower_<label>``/``upper_<label>``
    columns (venn, empirical_bayes), else None."""
    lo = [f"lower_{c}" for c in classes]
    hi = [f"upper_{c}" for c in classes]
    if not set(lo + hi) <= set(frame.columns):
        return None
    lower, upper = frame[lo].to_numpy(dtype=float), frame[hi].to_numpy(dtype=float)
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()):
        return None
    return lower, upper


# ----------------------------------------------------------------------- reliability


def _reliability_points(frame: pd.DataFrame, classes: tuple[str, ...], bins: str) -> dict:
    """One method's diagram: per non-empty bin the mean forecast, the observed frequency,
    the number of rows and (Venn, empirical Bayes) the mean lower and upper bound.

    Binary data: the forecasts of the second class; more classes: the "top label" — the
    predicted class's probability against whether it was right — so that every method is
    one curve whatever the number of classes.
    """
    y, p = _proba(frame, classes)
    rows = np.arange(y.size)
    k = np.ones(y.size, dtype=int) if len(classes) == 2 else np.argmax(p, axis=1)
    event = (y == k).astype(int)
    f = p[rows, k]
    two = np.column_stack([1.0 - f, f])
    curve = reliability_curve(event, two, 1, bins=bins)
    out = {"x": curve.mean_forecast, "y": curve.observed_frequency,
           "n": np.rint(curve.weight * y.size).astype(int), "rows": int(y.size),
           "trend": weighted_trend(curve.mean_forecast, curve.observed_frequency,
                                   curve.weight)}
    bounds = _bounds(frame, classes)
    if bounds is not None:
        _, inv = np.unique(reliability_bins(event, two, 1, bins=bins), return_inverse=True)
        cnt = np.bincount(inv).astype(float)
        out["lower"] = np.bincount(inv, weights=bounds[0][rows, k]) / cnt
        out["upper"] = np.bincount(inv, weights=bounds[1][rows, k]) / cnt
    return out


def _nice_counts(largest: int) -> list[int]:
    """Up to three round bin sizes (1, 2 or 5 × 10^k) for the marker-size legend."""
    out = []
    for v in (largest, largest / 10, largest / 100):
        if v < 1:
            break
        e = 10 ** int(np.floor(np.log10(v)))
        out.append(int(max(m * e for m in (1, 2, 5) if m * e <= v)))
    return sorted(set(out), reverse=True)


def _area(n: np.ndarray | int, largest: int) -> np.ndarray:
    return 6.0 + MAX_AREA * np.asarray(n, dtype=float) / max(largest, 1)


_BINS = {"equal_width": "10 equal-width bins", "mdl": "MDL bins"}


def reliability_figure(predictions: pd.DataFrame, classes: tuple[str, ...],
                       bins: str = "equal_width", title: str | None = None):
    """Empirical reliability diagrams (Lindsay & Cox), one panel per method on the same
    axes: each bin a point at (mean forecast, observed frequency) whose area is
    proportional to the bin's number of rows (bins of fewer than :data:`LIGHT_ROWS` rows
    light), the diagonal of perfect calibration, and the ERC's trend line (Lindsay & Cox
    sect. 3: least squares through the points weighted by each bin's share of the rows;
    its slope in the panel's title). Methods that give bounds (venn's lower and upper
    probability, empirical_bayes's belief interval) get a band from the bin's mean lower
    to its mean upper bound: a calibrated method's point lies inside it (the panel's title
    counts the bins where it does). A method whose
    points are those of an earlier method says so in its panel's title. First repeat only;
    ``title`` (the dataset and protocol) heads the figure.
    """
    plt = require_matplotlib()
    from matplotlib.lines import Line2D

    groups = [(str(m), f) for m, f in _first_repeat(predictions).groupby("method", sort=False)]
    points = [_reliability_points(f, classes, bins) for _, f in groups]
    same = identical_to([(pt["x"], pt["y"], pt["n"]) for pt in points])
    largest = max([int(pt["n"].max()) for pt in points if pt["n"].size] or [1])
    cols = min(3, max(len(groups), 1))
    nrows = int(np.ceil(max(len(groups), 1) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(3.9 * cols, 3.9 * nrows + 2.0), dpi=110,
                             squeeze=False, sharex=True, sharey=True, layout="constrained")
    colors = plt.cm.tab10.colors
    binary = len(classes) == 2
    banded = False
    for i, ((method, _), pt, ax) in enumerate(zip(groups, points, axes.ravel(), strict=False)):
        col = colors[i % len(colors)]
        ax.plot([0, 1], [0, 1], color="black", lw=1, ls="--")
        if "lower" in pt:
            banded = True
            ax.vlines(pt["x"], pt["lower"], pt["upper"], color=col, alpha=0.35, lw=5)
        ax.plot(pt["x"], pt["y"], color=col, lw=1, alpha=0.6)
        face = np.tile(np.r_[col, 1.0], (pt["x"].size, 1))
        edge = face.copy()
        light = pt["n"] < LIGHT_ROWS
        face[light, 3], edge[light, 3] = 0.15, 0.6
        ax.scatter(pt["x"], pt["y"], s=_area(pt["n"], largest), c=face, edgecolors=edge,
                   linewidths=0.9, zorder=3)
        a, b = pt["trend"]
        if np.isfinite(b):
            ax.plot([0, 1], [a, a + b], color=col, ls=":", lw=1.3)
        head = (identical_label(method, groups[same[i]][0]) if same[i] is not None
                else method)
        slope = f"ERC slope {b:.2f}" if np.isfinite(b) else "no trend line"
        text = f"{head}\n{slope}, {pt['rows']} rows, {pt['x'].size} bins"
        if "lower" in pt:
            inside = (pt["lower"] <= pt["y"] + 1e-12) & (pt["y"] <= pt["upper"] + 1e-12)
            text += f"\nobserved within the bounds in {int(inside.sum())} of {inside.size} bins"
        ax.set_title(text, fontsize="small")
        ax.set_xlim(-0.04, 1.04)
        ax.set_ylim(-0.04, 1.04)
        ax.set_box_aspect(1)
        ax.grid(alpha=0.3)
    for j, ax in enumerate(axes.ravel()):
        if j >= len(groups):
            ax.axis("off")
            continue
        if j // cols == nrows - 1 or j + cols >= len(groups):
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel(f"forecast P({classes[1]}), bin mean" if binary else
                          "forecast P(predicted class), bin mean")
        if j % cols == 0:
            ax.set_ylabel(f"observed frequency of {classes[1]}" if binary else
                          "observed accuracy (predicted class right)")
    handles = [Line2D([], [], color="black", ls="--", lw=1, label="perfect calibration"),
               Line2D([], [], color="grey", ls=":", lw=1.3, label="ERC trend line")]
    if banded:
        handles.append(Line2D([], [], color="grey", alpha=0.35, lw=5,
                              label="[lower, upper] bounds, bin means"))
    handles += [Line2D([], [], ls="", marker="o", color="grey",
                       ms=float(np.sqrt(_area(c, largest))), label=f"{c} rows")
                for c in _nice_counts(largest)]
    handles.append(Line2D([], [], ls="", marker="o", mfc=(0.5, 0.5, 0.5, 0.15),
                          mec=(0.5, 0.5, 0.5, 0.6), ms=6, label=f"light: < {LIGHT_ROWS} rows"))
    fig.get_layout_engine().set(h_pad=0.1)  # the bottom x label clear of the legend
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles),
               fontsize="small", title="point area = rows in the bin", title_fontsize="small")
    what = (f"Reliability of P({classes[1]})" if binary else
            f"Reliability of the predicted class's probability ({len(classes)} classes)")
    fig.suptitle(wrap(f"{title}\n" if title else "", 40 * cols + 20)
                 + f"{what}: {_BINS.get(bins, bins)}", fontsize="medium")
    return fig


def reliability_plot(predictions: pd.DataFrame, classes: tuple[str, ...], outdir: Path,
                     bins: str = "equal_width", title: str | None = None) -> Path:
    """:func:`reliability_figure` drawn into ``outdir/reliability.png``."""
    return save_figure(reliability_figure(predictions, classes, bins, title),
                       Path(outdir) / "reliability.png")


# ------------------------------------------------------------------------------- ROC


def _roc_points(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false positive rate, true positive rate) at every distinct threshold, from (0, 0)."""
    order = np.argsort(-scores, kind="stable")
    s, pos = scores[order], positive[order]
    distinct = np.r_[np.flatnonzero(np.diff(s)), s.size - 1]
    tp = np.cumsum(pos)[distinct]
    fp = np.cumsum(~pos)[distinct]
    n_pos, n_neg = max(pos.sum(), 1), max((~pos).sum(), 1)
    return np.r_[0, fp / n_neg], np.r_[0, tp / n_pos]


def _corners(fpr: np.ndarray, tpr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The curve's corners: its points less those on a straight run between their
    neighbours (ROC curves are monotone), so that two methods that draw the same line
    through different thresholds compare equal."""
    moved = np.r_[True, (np.diff(fpr) != 0) | (np.diff(tpr) != 0)]
    fpr, tpr = fpr[moved], tpr[moved]  # repeated points first: a corner may be repeated
    if fpr.size < 3:
        return fpr, tpr
    dx, dy = np.diff(fpr), np.diff(tpr)
    cross = dx[:-1] * dy[1:] - dy[:-1] * dx[1:]
    keep = np.r_[True, np.abs(cross) > 1e-12, True]
    return fpr[keep], tpr[keep]


def _macro_roc(y: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Macro-average ROC: every class's one-vs-rest true positive rate interpolated on the
    union of their false positive rates and averaged (classes with rows of both kinds), and
    the mean of their AUCs (``auc`` in the metrics)."""
    curves, aucs = [], []
    for k in range(p.shape[1]):
        pos = y == k
        if pos.any() and (~pos).any():
            curves.append(_roc_points(p[:, k], pos))
            aucs.append(roc_auc(p[:, k], pos))
    if not curves:
        return np.array([0.0, 1.0]), np.array([0.0, 1.0]), float("nan")
    grid = np.unique(np.concatenate([f for f, _ in curves]))
    tpr = np.mean([np.interp(grid, f, t) for f, t in curves], axis=0)
    return np.r_[0.0, grid], np.r_[0.0, tpr], float(np.mean(aucs))


def _micro_roc(y: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Micro-average ROC: every (row, class) pair one decision, scored by its probability."""
    pos = (y[:, None] == np.arange(p.shape[1])[None, :]).ravel()
    scores = p.ravel()
    fpr, tpr = _roc_points(scores, pos)
    return fpr, tpr, roc_auc(scores, pos)


def _roc_panels(classes: tuple[str, ...], y_all: np.ndarray) -> tuple[list, str]:
    """The panels (title, curve function of (y, p)) and the note saying which classes are
    shown: binary data one panel (the second class); more, the macro- and micro-averages
    over every class and then the largest classes, at most :data:`MAX_CLASS_PANELS`."""
    K = len(classes)
    n = y_all.size
    counts = np.bincount(y_all, minlength=K)

    def one(k):
        def curve(y, p):
            pos = y == k
            fpr, tpr = _roc_points(p[:, k], pos)
            return fpr, tpr, roc_auc(p[:, k], pos)
        return curve

    if K == 2:
        return [(f"{classes[1]} (positive, {counts[1]} rows) vs {classes[0]} "
                 f"({counts[0]} rows)", one(1))], ""
    order = np.argsort(-counts, kind="stable")
    shown = order[:MAX_CLASS_PANELS]
    panels = [(f"macro-average over all {K} classes", _macro_roc),
              (f"micro-average over all {K} classes", _micro_roc)]
    panels += [(f"class {classes[k]} vs rest ({counts[k]} of {n} rows)", one(int(k)))
               for k in shown]
    if len(shown) < K:
        note = (f"{len(shown)} of {K} classes shown (the largest); the macro- and "
                f"micro-average panels cover all {K}")
    else:
        note = f"all {K} classes shown, after their macro- and micro-averages"
    return panels, note


def roc_figure(predictions: pd.DataFrame, classes: tuple[str, ...], title: str | None = None):
    """ROC curves of every method, first repeat. Binary data: one panel, the second class
    positive. More classes: a macro-average panel (the mean of the one-vs-rest curves;
    its AUC is the metrics' macro ``auc``) and a micro-average panel over every class, then
    one-vs-rest panels for the largest classes; a line under the title says how many of
    the classes are shown. A curve with the same corners as an earlier method's is drawn
    dashed over it and its legend label says ``kk = laplace, identical``. Each panel's
    legend sits in its lower right corner, the area only a worse-than-random curve enters.
    Earlier methods are drawn with thicker lines, so that a curve lying close under a later
    one still shows at its edges.
    """
    plt = require_matplotlib()
    groups = [(str(m), _proba(f, classes))
              for m, f in _first_repeat(predictions).groupby("method", sort=False)]
    y_all = groups[0][1][0] if groups else np.zeros(0, dtype=int)
    panels, note = _roc_panels(classes, y_all)
    cols = min(3, len(panels))
    nrows = int(np.ceil(len(panels) / cols))
    width = 4.4 * cols + (1.2 if cols == 1 else 0)
    fig, axes = plt.subplots(nrows, cols, figsize=(width, 4.3 * nrows + 0.6), dpi=110,
                             squeeze=False, layout="constrained")
    colors = plt.cm.tab10.colors
    for ax, (head, curve) in zip(axes.ravel(), panels, strict=False):
        ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--")
        drawn = [curve(y, p) for _, (y, p) in groups]
        same = identical_to([_corners(f, t) for f, t, _ in drawn])
        for i, ((method, _), (fpr, tpr, auc)) in enumerate(zip(groups, drawn, strict=True)):
            col = colors[i % len(colors)]
            if same[i] is None:  # earlier methods thicker: a curve close under another shows
                lw = 1.2 + 1.8 * (len(groups) - 1 - i) / max(len(groups) - 1, 1)
                ax.plot(fpr, tpr, color=col, lw=lw, label=f"{method}: {auc:.3f}")
            else:
                ax.plot(fpr, tpr, color=col, lw=1.6, ls=(0, (3, 3)),
                        label=f"{identical_label(method, groups[same[i]][0])}: {auc:.3f}")
        ax.set_title(head, fontsize="small")
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_box_aspect(1)
        ax.legend(loc="lower right", fontsize="x-small", title="AUC",
                  title_fontsize="x-small", framealpha=0.85)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    lines = [title] if title else []
    lines.append("ROC curves" + (f" — {note}" if note else ""))
    fig.suptitle(wrap("\n".join(lines), int(12.5 * width)), fontsize="medium")
    return fig


def roc_plot(predictions: pd.DataFrame, classes: tuple[str, ...], outdir: Path,
             title: str | None = None) -> Path:
    """:func:`roc_figure` drawn into ``outdir/roc.png``."""
    return save_figure(roc_figure(predictions, classes, title), Path(outdir) / "roc.png")
