"""PNG plots (optional extra ``treecert[plot]``): one overlaid reliability diagram, ROC
curves, the method-versus-method scatter plots of the TPCE paper's Figs. 4-6 (each point
labelled with its dataset), and rpart's ``plotcp`` for cost-complexity pruning.

Every command that draws calls :func:`require_matplotlib` before doing any work, so a
missing matplotlib is reported at once, not after a long cross-validation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from treecert.data.fileio import atomic_writer
from treecert.errors import ConfigError
from treecert.evaluation.point_metrics import roc_auc
from treecert.evaluation.reliability import reliability_curve, weighted_trend

if TYPE_CHECKING:
    import pandas as pd


def require_matplotlib(option: str = "--plots"):
    """matplotlib's pyplot on the Agg backend, or a one-line error naming ``option``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError(
            f"{option} needs matplotlib, which is not installed.",
            "Install it with: pip install 'treecert[plot]'.",
        ) from None
    return plt


def _save(fig, path: Path) -> None:
    """Write a figure as PNG like every other output: atomically, errors as one line."""
    with atomic_writer(path, "wb") as fh:
        fig.savefig(fh, format="png")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_") or "method"


def _proba(frame: pd.DataFrame, classes: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    y = frame["actual"].map({c: i for i, c in enumerate(classes)}).to_numpy(dtype=int)
    p = frame[[f"p_{c}" for c in classes]].to_numpy(dtype=float)
    return y, p


def _reliability_event(y: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(event, P(event)) as a two-class problem: the second class for binary data; for
    more classes the "top label" — is the predicted class right, forecast by its
    probability — so that every method is one curve whatever the number of classes."""
    if p.shape[1] == 2:
        return y, p
    pred = np.argmax(p, axis=1)
    conf = p[np.arange(p.shape[0]), pred]
    return (y == pred).astype(int), np.column_stack([1.0 - conf, conf])


def reliability_plot(predictions: pd.DataFrame, classes: tuple[str, ...], outdir: Path,
                     bins: str = "equal_width") -> Path:
    """``reliability.png``: every method's empirical reliability curve (Lindsay & Cox) on
    one diagram, over a panel of the number of test instances in each bin.

    Binary data: the forecasts of the second class; more classes: the predicted class's
    probability against whether it was right (:func:`_reliability_event`). Each bin is a
    point at (mean forecast, observed frequency); the diagonal is perfect calibration. A
    dotted line per method is the ERC's trend line (Lindsay & Cox sect. 3): the least-squares
    line through the points weighted by each bin's share of the instances, its slope in the
    legend (``erc_slope`` in the metrics is the same fit over every class's bins).
    The lower panel shows each method's bin counts at the same x, so a point resting on
    three instances is told apart from one resting on three hundred. First repeat only.
    """
    plt = require_matplotlib()
    first_repeat = predictions[predictions["repeat"] == predictions["repeat"].min()]
    groups = list(first_repeat.groupby("method", sort=False))
    fig, (ax, hx) = plt.subplots(2, 1, figsize=(6.2, 7.6), dpi=110, sharex=True,
                                 gridspec_kw={"height_ratios": [3, 1.2]})
    ax.plot([0, 1], [0, 1], color="black", lw=1, ls="--", label="perfect calibration")
    colors = plt.cm.tab10.colors
    width = 0.8 / (10 * max(len(groups), 1))
    for i, (method, frame) in enumerate(groups):
        event, p = _reliability_event(*_proba(frame, classes))
        curve = reliability_curve(event, p, 1, bins=bins)
        col = colors[i % len(colors)]
        ax.plot(curve.mean_forecast, curve.observed_frequency, marker="o", color=col,
                label=str(method))
        a, b = weighted_trend(curve.mean_forecast, curve.observed_frequency, curve.weight)
        if np.isfinite(b):  # the ERC's trend line, weighted by ν(b) (Lindsay & Cox sect. 3)
            ax.plot([0, 1], [a, a + b], color=col, lw=1, ls=":",
                    label=f"{method} trend (slope {b:.2f})")
        offset = (i - (len(groups) - 1) / 2) * width
        hx.bar(curve.mean_forecast + offset, curve.weight * event.size, width=width,
               color=col, alpha=0.8)
    what = (f"forecast P({classes[1]})" if len(classes) == 2
            else "forecast probability of the predicted class")
    ax.set_xlim(-0.03, 1.05)  # room for the bars of bins at 0 and 1
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel("observed frequency" if len(classes) == 2 else "observed accuracy")
    ax.set_title(f"Empirical reliability ({bins} bins)")
    ax.legend(loc="upper left", fontsize="small", title="method")
    ax.grid(alpha=0.3)
    hx.set_xlabel(f"{what} (bin mean)")
    hx.set_ylabel("instances in bin")
    hx.grid(alpha=0.3)
    fig.tight_layout()
    path = outdir / "reliability.png"
    _save(fig, path)
    plt.close(fig)
    return path


def _roc_points(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-scores, kind="stable")
    s, pos = scores[order], positive[order]
    distinct = np.r_[np.flatnonzero(np.diff(s)), s.size - 1]
    tp = np.cumsum(pos)[distinct]
    fp = np.cumsum(~pos)[distinct]
    n_pos, n_neg = max(pos.sum(), 1), max((~pos).sum(), 1)
    return np.r_[0, fp / n_neg], np.r_[0, tp / n_pos]


def roc_plot(predictions: pd.DataFrame, classes: tuple[str, ...], outdir: Path) -> Path:
    """ROC curves of every method: one panel per class (one-vs-rest), or the second class
    for binary data."""
    plt = require_matplotlib()
    first_repeat = predictions[predictions["repeat"] == predictions["repeat"].min()]
    shown = list(range(len(classes))) if len(classes) > 2 else [1]
    shown = shown[:9]
    cols = min(3, len(shown))
    rows = int(np.ceil(len(shown) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 4.3 * rows), dpi=110,
                             squeeze=False)
    for ax, k in zip(axes.ravel(), shown, strict=False):
        ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--")
        for method, frame in first_repeat.groupby("method", sort=False):
            y, p = _proba(frame, classes)
            fpr, tpr = _roc_points(p[:, k], y == k)
            auc = roc_auc(p[:, k], y == k)
            ax.plot(fpr, tpr, label=f"{method} (AUC {auc:.3f})")
        ax.set_title(f"class {classes[k]} vs rest")
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.legend(loc="lower right", fontsize="small")
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(shown):]:
        ax.axis("off")
    fig.tight_layout()
    path = outdir / "roc.png"
    _save(fig, path)
    plt.close(fig)
    return path


def scatter_plots(per_dataset: dict[str, pd.DataFrame], outdir: Path) -> list[Path]:
    """TPCE paper Figs. 4-6: for each metric and pair of methods, one point per dataset
    (method A on x, method B on y), labelled with the dataset's name, and the diagonal."""
    plt = require_matplotlib()
    written = []
    for metric, table in per_dataset.items():
        methods = list(table.columns)
        for i, a in enumerate(methods):
            for b in methods[i + 1:]:
                fig, ax = plt.subplots(figsize=(4.8, 4.8), dpi=110)
                x, yv = table[a].to_numpy(float), table[b].to_numpy(float)
                ok = np.isfinite(x) & np.isfinite(yv)
                lo = float(min(x[ok].min(), yv[ok].min())) if ok.any() else 0.0
                hi = float(max(x[ok].max(), yv[ok].max())) if ok.any() else 1.0
                pad = 0.05 * (hi - lo or 1.0)
                ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="grey", ls="--", lw=1)
                ax.scatter(x[ok], yv[ok], s=18)
                for name, xi, yi in zip(table.index[ok], x[ok], yv[ok], strict=True):
                    ax.annotate(str(name), (xi, yi), textcoords="offset points",
                                xytext=(4, 3), fontsize=7)
                ax.set_xlim(lo - pad, hi + pad)
                ax.set_ylim(lo - pad, hi + pad)
                ax.set_xlabel(f"{a}")
                ax.set_ylabel(f"{b}")
                ax.set_title(f"{metric}: one point per dataset")
                ax.grid(alpha=0.3)
                fig.tight_layout()
                path = outdir / f"scatter_{_slug(metric)}_{_slug(a)}_vs_{_slug(b)}.png"
                _save(fig, path)
                plt.close(fig)
                written.append(path)
    return written


def ccp_plot(record: dict, path: Path) -> Path:
    """rpart's ``plotcp`` for a ``ccp`` pruning record (``Model.pruning``): the validation
    error of every subtree of the weakest-link sequence with ±1 standard-error bars,
    against cp (bottom axis) and the number of leaves (top axis), the subtrees evenly
    spaced from the whole tree to the root, as rpart draws them.

    Cross-validation (``--cv K``): rpart's ``xerror ± xstd``, relative to the root's
    resubstitution loss, with its dashed line at min(xerror) + its xstd (the 1-SE rule
    picks the leftmost point under the line: the smallest such tree). Holdout: the
    holdout loss ± its standard error, for the sequence of the tree regrown without the
    holdout. The chosen subtree is ringed. cp is ``alpha / R(root)`` (rpart's scale); the
    positions are labelled with rpart's representative cp, the geometric mean of the ends
    of each subtree's interval.
    """
    plt = require_matplotlib("--plot")
    cv = "cv_loss" in record["sequence"][0]
    rows = record["sequence"] if cv else record["holdout_sequence"]
    y = np.array([r["xerror"] if cv else r["holdout_loss"] for r in rows], dtype=float)
    se = np.array([r["xstd"] if cv else r["holdout_se"] for r in rows], dtype=float)
    cps = np.array([r["cp"] for r in rows], dtype=float)
    leaves = [int(r["leaves"]) for r in rows]
    # rpart orders from the root (largest cp) to the whole tree; ours is the reverse
    order = np.arange(len(rows))[::-1]
    x = np.arange(len(rows))
    rep = np.sqrt(cps[order] * np.r_[np.inf, cps[order][:-1]])
    rep[0] = np.inf
    labels = ["Inf" if not np.isfinite(c) else f"{c:.2g}" for c in rep]
    fig, ax = plt.subplots(figsize=(max(5.5, 0.45 * len(rows) + 2), 4.6), dpi=110)
    ax.errorbar(x, y[order], yerr=se[order], fmt="o-", color="black", ecolor="grey",
                capsize=3, lw=1, ms=4)
    best = int(np.nanargmin(y))
    ax.axhline(y[best] + se[best], color="grey", ls="--", lw=1,
               label="min + 1 SE" if cv else "min holdout loss + 1 SE")
    chosen = int(np.flatnonzero(order == record["chosen"])[0])
    size = f"{leaves[record['chosen']]} leaves" + ("" if cv else " in the regrown tree")
    ax.plot(x[chosen], y[order][chosen], "o", ms=12, mfc="none", mec="tab:red",
            label=f"chosen ({size})")
    ax.set_title(f"Cost-complexity pruning: {record['selection']}", fontsize="medium")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=45 if len(rows) > 8 else 0, fontsize="small")
    ax.set_xlabel("cp")
    ax.set_ylabel("X-val relative error" if cv else "holdout loss")
    top = ax.secondary_xaxis("top")
    top.set_xticks(x)
    top.set_xticklabels([str(leaves[i]) for i in order], fontsize="small")
    top.set_xlabel("size of tree (leaves)")
    ax.legend(loc="upper right", fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path
