"""PNG plots (optional extra ``treecert[plot]``): reliability curves, ROC curves, and the
method-versus-method scatter plots of the TPCE paper's Figs. 4-6."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from treecert.data.fileio import atomic_writer
from treecert.errors import ConfigError
from treecert.evaluation.point_metrics import roc_auc
from treecert.evaluation.reliability import reliability_curve


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError(
            "--plots needs matplotlib, which is not installed.",
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


def reliability_plots(predictions: pd.DataFrame, classes: tuple[str, ...], outdir: Path,
                      bins: str = "equal_width") -> list[Path]:
    """One PNG per method: Lindsay & Cox's empirical reliability curve of every class.

    Each bin is a point at (mean forecast, observed frequency); a grey bar behind it shows
    the bin's weight (share of instances), and the diagonal is perfect calibration.
    """
    plt = _pyplot()
    written = []
    first_repeat = predictions[predictions["repeat"] == predictions["repeat"].min()]
    for method, frame in first_repeat.groupby("method", sort=False):
        y, p = _proba(frame, classes)
        shown = range(len(classes)) if len(classes) > 2 else [1]
        fig, ax = plt.subplots(figsize=(5.5, 5.5), dpi=110)
        ax.plot([0, 1], [0, 1], color="black", lw=1, ls="--", label="perfect calibration")
        colors = plt.cm.tab10.colors
        for k in shown:
            curve = reliability_curve(y, p, k, bins=bins)
            col = colors[k % len(colors)]
            ax.bar(curve.mean_forecast, curve.weight, width=0.03, color=col, alpha=0.25)
            ax.plot(curve.mean_forecast, curve.observed_frequency, marker="o", color=col,
                    label=f"{classes[k]}")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("forecast probability (bin mean)")
        ax.set_ylabel("observed frequency (bars: share of instances)")
        ax.set_title(f"Empirical reliability curve: {method}")
        ax.legend(loc="upper left", fontsize="small", title="class")
        ax.grid(alpha=0.3)
        path = outdir / f"reliability_{_slug(str(method))}.png"
        fig.tight_layout()
        _save(fig, path)
        plt.close(fig)
        written.append(path)
    return written


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
    plt = _pyplot()
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
    (method A on x, method B on y) with the diagonal."""
    plt = _pyplot()
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
