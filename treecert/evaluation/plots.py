"""PNG plots (optional extra ``treecert[plot]``): what every figure shares — its title
naming the dataset and the protocol, curves found identical to another's, legends below
the axes — plus the method-versus-method scatter plots of the TPCE paper's Figs. 4-6 and
rpart's ``plotcp`` for cost-complexity pruning. The reliability diagrams and ROC curves of
``evaluate --plots`` are in :mod:`treecert.evaluation.plot_curves`.

Each ``*_figure`` function returns the matplotlib Figure (tests read its texts); the
matching ``*_plot`` function draws it into a PNG file and closes it. Every command that
draws calls :func:`require_matplotlib` before doing any work, so a missing matplotlib is
reported at once, not after a long cross-validation. Drawing is deterministic: the same
inputs give the same PNG bytes.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from treecert.data.fileio import atomic_writer
from treecert.errors import ConfigError

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


def save_figure(fig, path: Path) -> Path:
    """Write a figure as PNG like every other output (atomically, errors as one line), with
    no creation-time or version metadata, so that a rerun writes the same bytes; close it."""
    plt = require_matplotlib()
    try:
        with atomic_writer(path, "wb") as fh:
            fig.savefig(fh, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_") or "method"


def describe_protocol(protocol: dict | None, source: str | None = None) -> str:
    """The protocol of a run's metadata (``metrics.json``'s ``run["protocol"]``) in words:
    ``10-fold CV (credit-g.folds.csv)``, ``stratified 10-fold CV (seed 1)``, ``leave-one-out``,
    ``holdout test file``... ``source`` names the fold file or the test file."""
    if not protocol:
        return "protocol not recorded"
    kind, seed = protocol.get("kind"), protocol.get("seed")
    repeats = int(protocol.get("repeats", 1))
    if kind == "cv":
        text = f"stratified {protocol['folds']}-fold CV (seed {seed})"
    elif kind == "weka":
        text = f"Weka's {protocol['folds']}-fold CV (-x {protocol['folds']} -s {seed})"
    elif kind == "folds":
        ids = np.asarray(protocol.get("fold_ids", []))
        k = np.unique(ids[ids >= 0]).size if ids.size else "k"
        text = f"{k}-fold CV ({source or 'fold ids of a file'})"
    elif kind == "loo":
        return "leave-one-out"
    elif kind == "test":
        rows = protocol.get("test", {}).get("rows")
        return (f"holdout: tested on {source or 'a separate test file'}"
                + (f" ({rows} rows)" if rows is not None else ""))
    else:
        text = str(kind)
    if repeats > 1:
        text += f", repeat 0 of {repeats} shown"
    return text


def run_title(run: dict | None, source: str | None = None, *, name: str | None = None) -> str:
    """First line of an evaluate figure's title: the dataset (rows) and the protocol, e.g.
    ``credit-g (1000 rows) — 10-fold CV (credit-g.folds.csv)``."""
    data = (run or {}).get("dataset", {})
    name = name or data.get("name") or "data"
    rows = data.get("rows")
    return f"{name}" + (f" ({rows} rows)" if rows else "") + \
        f" — {describe_protocol((run or {}).get('protocol'), source)}"


def wrap(text: str, width: int) -> str:
    """``text`` broken into lines of at most ``width`` characters (titles of narrow figures)."""
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


def identical_to(curves: list[tuple[np.ndarray, ...]]) -> list[int | None]:
    """For each curve (a tuple of arrays), the index of the first earlier curve with the
    same points (equal to 1e-12), or None: a curve drawn exactly on top of another is said
    in the legend instead of hiding under it."""
    out: list[int | None] = []
    for i, cur in enumerate(curves):
        same = None
        for j in range(i):
            if out[j] is None and all(a.shape == b.shape and np.allclose(a, b, rtol=0,
                                                                          atol=1e-12)
                                      for a, b in zip(cur, curves[j], strict=True)):
                same = j
                break
        out.append(same)
    return out


def identical_label(method: str, other: str) -> str:
    """The legend's words for a curve identical to another method's."""
    return f"{method} = {other}, identical"


# --------------------------------------------------------------------------- scatter


def _better(metric: str, b: str) -> str:
    """Whether a point above the diagonal favours method ``b``, in words."""
    from treecert.evaluation.stats import METRIC_DIRECTION, METRIC_TARGET

    if metric in METRIC_TARGET:
        return f" (best: closest to {METRIC_TARGET[metric]:g})"
    if metric not in METRIC_DIRECTION:
        return ""
    return f" ({b} better)" if METRIC_DIRECTION[metric] else f" ({b} worse)"


def scatter_figures(per_dataset: dict[str, pd.DataFrame], protocol: str | None = None):
    """TPCE paper Figs. 4-6: for each metric and pair of methods, one point per dataset
    (method A on x, method B on y), labelled with the dataset's name, and the diagonal.
    Yields ``(file name, Figure)``; ``protocol`` (words) goes into the title."""
    plt = require_matplotlib()
    for metric, table in per_dataset.items():
        methods = list(table.columns)
        for i, a in enumerate(methods):
            for b in methods[i + 1:]:
                fig, ax = plt.subplots(figsize=(5.4, 5.6), dpi=110, layout="constrained")
                x, yv = table[a].to_numpy(float), table[b].to_numpy(float)
                ok = np.isfinite(x) & np.isfinite(yv)
                lo = float(min(x[ok].min(), yv[ok].min())) if ok.any() else 0.0
                hi = float(max(x[ok].max(), yv[ok].max())) if ok.any() else 1.0
                pad = 0.05 * (hi - lo or 1.0)
                ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="grey", ls="--",
                        lw=1, label=f"equal {metric}")
                ax.scatter(x[ok], yv[ok], s=18, label="one dataset")
                right = lo + 0.8 * (hi - lo)  # names of the rightmost points go to the left
                for name, xi, yi in zip(table.index[ok], x[ok], yv[ok], strict=True):
                    ax.annotate(str(name), (xi, yi), textcoords="offset points",
                                xytext=(-4, 3) if xi > right else (4, 3),
                                ha="right" if xi > right else "left", fontsize=7)
                ax.set_xlim(lo - pad, hi + pad)
                ax.set_ylim(lo - pad, hi + pad)
                ax.set_xlabel(f"{metric} of {a}")
                ax.set_ylabel(f"{metric} of {b}")
                n = int(ok.sum())
                head = f"{metric}: {a} vs {b}, one point per dataset ({n} datasets)"
                fig.suptitle(wrap(head + (f"\n{protocol}" if protocol else ""), 70),
                             fontsize="medium")
                ax.grid(alpha=0.3)
                fig.legend(loc="outside lower center", ncol=2, fontsize="small",
                           title=f"above the diagonal: {b}'s {metric} is higher"
                                 + _better(metric, b), title_fontsize="small")
                yield f"scatter_{_slug(metric)}_{_slug(a)}_vs_{_slug(b)}.png", fig


def scatter_plots(per_dataset: dict[str, pd.DataFrame], outdir: Path,
                  protocol: str | None = None) -> list[Path]:
    """:func:`scatter_figures` drawn into ``outdir``."""
    return [save_figure(fig, outdir / name)
            for name, fig in scatter_figures(per_dataset, protocol)]


# --------------------------------------------------------------------------- plotcp


def ccp_figure(record: dict, title: str | None = None):
    """rpart's ``plotcp`` for a ``ccp`` pruning record (``Model.pruning``): the validation
    error of every subtree of the weakest-link sequence with ±1 standard-error bars,
    against cp (bottom axis) and the number of leaves (top axis), the subtrees evenly
    spaced from the root to the whole tree, as rpart draws them. ``title`` names the model
    and its data.

    Cross-validation (``--cv K``): rpart's ``xerror ± xstd``, relative to the root's
    resubstitution loss, with its dashed line at min(xerror) + its xstd (the 1-SE rule
    picks the leftmost point under the line: the smallest such tree). Holdout: the
    holdout loss ± its standard error, for the sequence of the tree regrown without the
    holdout. The chosen subtree is ringed and its label gives the leaf count of the pruned
    model, ``record["after"]["leaves"]``, the number the command prints: under a holdout
    the ringed point is a subtree of the regrown tree (the top axis counts its leaves),
    and its α, rescaled to the whole data, prunes the whole tree, which can keep a few
    leaves more or fewer. cp is ``alpha / R(root)`` (rpart's scale); the positions are
    labelled with rpart's representative cp, the geometric mean of the ends of each
    subtree's interval.
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
    width = max(6.0, 0.45 * len(rows) + 2.5)
    fig, ax = plt.subplots(figsize=(width, 5.6), dpi=110, layout="constrained")
    ax.errorbar(x, y[order], yerr=se[order], fmt="o-", color="black", ecolor="grey",
                capsize=3, lw=1, ms=4, label="subtree: mean ± 1 SE")
    best = int(np.nanargmin(y))
    ax.axhline(y[best] + se[best], color="grey", ls="--", lw=1,
               label="min + 1 SE" if cv else "min holdout loss + 1 SE")
    chosen = int(np.flatnonzero(order == record["chosen"])[0])
    n_after = int(record["after"]["leaves"])
    size = f"chosen: the pruned model has {n_after} leaves"
    if not cv and leaves[record["chosen"]] != n_after:
        size += (f"\n(this point: {leaves[record['chosen']]} leaves of the regrown tree; its "
                 f"α prunes the whole {record['before']['leaves']}-leaf tree to {n_after})")
    ax.plot(x[chosen], y[order][chosen], "o", ms=12, mfc="none", mec="tab:red", mew=1.5,
            label=size)
    ax.annotate(f"{n_after} leaves", (x[chosen], y[order][chosen]), textcoords="offset points",
                xytext=(0, -22), ha="center", color="tab:red", fontsize="small")
    how = f"cost-complexity pruning, α chosen by {record['selection']}"
    fig.suptitle(wrap(f"{title}\n{how}" if title else how, int(13 * width)),
                 fontsize="medium")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=45 if len(rows) > 8 else 0, fontsize="small")
    ax.set_xlabel("cp (α / resubstitution loss of the root; rpart's representative value)")
    if cv:
        ax.set_ylabel("X-val relative error (1 = the root's loss)")
    else:
        ax.set_ylabel(f"holdout loss (total over {record.get('holdout_rows', '?')} rows)")
    top = ax.secondary_xaxis("top")
    top.set_xticks(x)
    top.set_xticklabels([str(leaves[i]) for i in order], fontsize="small")
    top.set_xlabel("size of tree (leaves)" if cv else
                   "size of the tree regrown without the holdout (leaves)")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    first = labels.index("subtree: mean ± 1 SE")  # matplotlib lists error bars last
    order = [first] + [i for i in range(len(labels)) if i != first]
    fig.legend([handles[i] for i in order], [labels[i] for i in order],
               loc="outside lower center", ncol=3, fontsize="small")
    return fig


def ccp_plot(record: dict, path: Path, title: str | None = None) -> Path:
    """:func:`ccp_figure` drawn into the PNG file ``path``."""
    return save_figure(ccp_figure(record, title), path)
