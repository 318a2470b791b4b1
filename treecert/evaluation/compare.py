"""Comparing methods over datasets: the layout of the TPCE paper's Tables 1-3.

Input is the ``metrics`` table of one or more ``evaluate`` runs (one row per dataset and
method). Output: the per-dataset table of each metric, wins/ties/losses and the two-sided
Wilcoxon signed-rank p-value for every pair of methods and every metric, each method's
average, and with more than two methods the Friedman test and average ranks (Demšar 2006).
Ties: an absolute difference of at most ``tol`` (default 1e-4, the papers' 4 decimals).

With ``relative_to=BASE`` it adds Lindsay & Cox's Table 1 layout: per method and metric, the
mean and the median over datasets of the percentage change ``100 (v - v_BASE) / |v_BASE|``
from the named base method (datasets where the base is 0 or either value is missing are
left out of that cell, and ``n`` says how many datasets it has).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from treecert.data.fileio import nan_to_none
from treecert.errors import ConfigError, DataError
from treecert.evaluation import stats

DEFAULT_METRICS = ("accuracy", "brier", "log_loss", "auc", "auc_reliability", "erc_deviation")


@dataclass
class Comparison:
    """Everything ``compare`` reports."""

    per_dataset: dict[str, pd.DataFrame]  # metric -> datasets x methods
    pairs: pd.DataFrame  # metric, method_a, method_b, wins, ties, losses, p_value
    averages: pd.DataFrame  # metric x methods
    ranks: pd.DataFrame  # metric, method, average_rank, friedman_stat, friedman_p
    tol: float
    #: method, metric, mean_pct, median_pct, n (``relative_to``); None without a base.
    relative: pd.DataFrame | None = None
    relative_to: str | None = None

    def to_json(self) -> str:
        doc = {
            "tol": self.tol,
            "per_dataset": {m: t.reset_index().to_dict(orient="records")
                            for m, t in self.per_dataset.items()},
            "pairs": self.pairs.to_dict(orient="records"),
            "averages": self.averages.reset_index().to_dict(orient="records"),
            "ranks": self.ranks.to_dict(orient="records"),
        }
        if self.relative is not None:
            doc["relative_to"] = self.relative_to
            doc["relative"] = self.relative.to_dict(orient="records")
        return json.dumps(nan_to_none(doc), indent=2, allow_nan=False) + "\n"


def compare(metrics: pd.DataFrame, *, metric_names: tuple[str, ...] | None = None,
            tol: float = 1e-4, relative_to: str | None = None) -> Comparison:
    """Compare every pair of methods in ``metrics`` (columns dataset, method, metrics...);
    ``relative_to``: a method of ``metrics`` to report every other method's percentage
    changes against (:func:`relative_changes`)."""
    for col in ("dataset", "method"):
        if col not in metrics.columns:
            raise DataError(f"results table has no '{col}' column; is it an evaluate output?")
    methods = list(dict.fromkeys(metrics["method"]))
    names = [m for m in (metric_names or DEFAULT_METRICS) if m in metrics.columns]
    if not names:
        raise DataError("results table has none of the requested metrics.")
    per_dataset, pair_rows, avg_rows, rank_rows = {}, [], {}, []
    for metric in names:
        table = metrics.pivot_table(index="dataset", columns="method", values=metric,
                                    aggfunc="mean", sort=False)
        table = table.reindex(columns=methods)
        per_dataset[metric] = table
        avg_rows[metric] = table.mean(axis=0, skipna=True)
        hib = stats.higher_is_better(metric)
        scored = table  # a metric with an ideal value: its distance from it
        if metric in stats.METRIC_TARGET:
            scored = (table - stats.METRIC_TARGET[metric]).abs()
        for a, b in itertools.combinations(methods, 2):
            wtl = stats.wins_ties_losses(scored[a], scored[b], higher_is_better=hib, tol=tol)
            pair_rows.append({
                "metric": metric, "method_a": a, "method_b": b, "wins": wtl.wins,
                "ties": wtl.ties, "losses": wtl.losses,
                "p_value": stats.wilcoxon_p(scored[a], scored[b]),
            })
        if len(methods) > 2:
            ranks = stats.average_ranks(scored.to_numpy(), hib)
            fr = stats.friedman(scored.to_numpy())
            for meth, rk in zip(methods, ranks, strict=True):
                rank_rows.append({"metric": metric, "method": meth, "average_rank": float(rk),
                                  "friedman_stat": fr.statistic, "friedman_p": fr.pvalue})
    averages = pd.DataFrame(avg_rows).T
    averages.index.name = "metric"
    relative = None
    if relative_to is not None:
        if relative_to not in methods:
            raise ConfigError(f"--relative-to: no method '{relative_to}' in the results.",
                            f"Methods: {', '.join(methods)}.")
        relative = relative_changes(per_dataset, relative_to)
    return Comparison(per_dataset, pd.DataFrame(pair_rows), averages,
                      pd.DataFrame(rank_rows), tol, relative, relative_to)


def relative_changes(per_dataset: dict[str, pd.DataFrame], base: str) -> pd.DataFrame:
    """Lindsay & Cox's Table 1: per method (other than ``base``) and metric, the mean and
    median over datasets of ``100 (v - v_base) / |v_base|``, and the number ``n`` of
    datasets with both values and a non-zero base.

    The paper reports the mean; the median is given beside it because a change from a base
    near 0 (an ERC deviation of 0.003) explodes and then decides the mean alone.
    """
    rows = []
    for metric, table in per_dataset.items():
        b = table[base].to_numpy(dtype=float)
        for meth in table.columns:
            if meth == base:
                continue
            v = table[meth].to_numpy(dtype=float)
            ok = np.isfinite(v) & np.isfinite(b) & (b != 0)
            pct = 100.0 * (v[ok] - b[ok]) / np.abs(b[ok])
            rows.append({"method": meth, "metric": metric,
                         "mean_pct": float(pct.mean()) if pct.size else float("nan"),
                         "median_pct": float(np.median(pct)) if pct.size else float("nan"),
                         "n": int(pct.size)})
    return pd.DataFrame(rows, columns=["method", "metric", "mean_pct", "median_pct", "n"])


def _fmt_pct(v: float) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:+.1f}"


def relative_markdown(comp: Comparison) -> list[str]:
    """The two tables of the relative layout (mean, then median % change), methods as rows
    and metrics as columns, as Lindsay & Cox's Table 1."""
    rel = comp.relative
    if rel is None or rel.empty:
        return []
    metrics = list(dict.fromkeys(rel["metric"]))
    methods = list(dict.fromkeys(rel["method"]))
    out = []
    for col, what in (("mean_pct", "Mean"), ("median_pct", "Median")):
        cell = {(r.method, r.metric): r for r in rel.itertuples()}
        out += [f"## {what} % change against {comp.relative_to} (over datasets)", ""]
        out.append("| method | " + " | ".join(metrics) + " |")
        out.append("|---|" + "---:|" * len(metrics))
        for meth in methods:
            out.append(f"| {meth} | " + " | ".join(
                _fmt_pct(getattr(cell[meth, m], col)) for m in metrics) + " |")
        out.append("")
    n = sorted({int(v) for v in rel["n"]})
    out.append("Percentage change 100 (v − v_base) / |v_base| per dataset; datasets per cell: "
               + ", ".join(str(k) for k in n) + " (a zero or missing base is left out).")
    out.append("")
    return out


def _fmt(v: float, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "n/a"
    return f"{v:.{digits}f}"


def _fmt_p(p: float) -> str:
    if not np.isfinite(p):
        return "n/a"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def to_markdown(comp: Comparison) -> str:
    """Markdown: W/T/L + p per pair and metric, averages, ranks, then per-dataset tables."""
    out = relative_markdown(comp)
    out += ["## Wins / ties / losses (two-sided Wilcoxon signed-rank p)", ""]
    metrics = list(dict.fromkeys(comp.pairs["metric"])) if len(comp.pairs) else []
    better = {hib: [m for m in metrics if stats.higher_is_better(m) is hib
                    and m not in stats.METRIC_TARGET] for hib in (True, False)}
    said = [f"{'higher' if hib else 'lower'} for {', '.join(ms)}"
            for hib, ms in better.items() if ms]
    said += [f"closer to {stats.METRIC_TARGET[m]:g} for {m}" for m in metrics
             if m in stats.METRIC_TARGET]
    out.append(f"Ties: |difference| <= {comp.tol:g}. Counts are for method A: A wins where "
               f"it is better ({'; '.join(said) or 'no metric'}).")
    out.append("")
    out.append("| metric | method A | method B | A wins | ties | B wins | p-value |")
    out.append("|---|---|---|---:|---:|---:|---:|")
    for r in comp.pairs.itertuples():
        out.append(f"| {r.metric} | {r.method_a} | {r.method_b} | {r.wins} | {r.ties} | "
                   f"{r.losses} | {_fmt_p(r.p_value)} |")
    out += ["", "## Averages over datasets", ""]
    methods = list(comp.averages.columns)
    out.append("| metric | " + " | ".join(methods) + " |")
    out.append("|---|" + "---:|" * len(methods))
    for metric, row in comp.averages.iterrows():
        out.append(f"| {metric} | " + " | ".join(_fmt(row[m]) for m in methods) + " |")
    if not comp.ranks.empty:
        out += ["", "## Average ranks (Friedman test)", ""]
        out.append("| metric | " + " | ".join(methods) + " | Friedman p |")
        out.append("|---|" + "---:|" * (len(methods) + 1))
        for metric, grp in comp.ranks.groupby("metric", sort=False):
            rk = dict(zip(grp["method"], grp["average_rank"], strict=True))
            out.append(f"| {metric} | " + " | ".join(_fmt(rk[m], 2) for m in methods)
                       + f" | {_fmt_p(float(grp['friedman_p'].iloc[0]))} |")
    for metric, table in comp.per_dataset.items():
        out += ["", f"## {metric} per dataset", ""]
        out.append("| dataset | " + " | ".join(methods) + " |")
        out.append("|---|" + "---:|" * len(methods))
        for ds, row in table.iterrows():
            out.append(f"| {ds} | " + " | ".join(_fmt(row[m]) for m in methods) + " |")
    return "\n".join(out) + "\n"
