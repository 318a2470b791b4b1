"""Comparing methods over datasets: the layout of the TPCE paper's Tables 1-3.

Input is the ``metrics`` table of one or more ``evaluate`` runs (one row per dataset and
method). Output: the per-dataset table of each metric, wins/ties/losses and the two-sided
Wilcoxon signed-rank p-value for every pair of methods and every metric, each method's
average, and with more than two methods the Friedman test and average ranks (Demšar 2006).
Ties: an absolute difference of at most ``tol`` (default 1e-4, the papers' 4 decimals).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from treecert.data.fileio import nan_to_none
from treecert.errors import DataError
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

    def to_json(self) -> str:
        doc = {
            "tol": self.tol,
            "per_dataset": {m: t.reset_index().to_dict(orient="records")
                            for m, t in self.per_dataset.items()},
            "pairs": self.pairs.to_dict(orient="records"),
            "averages": self.averages.reset_index().to_dict(orient="records"),
            "ranks": self.ranks.to_dict(orient="records"),
        }
        return json.dumps(nan_to_none(doc), indent=2, allow_nan=False) + "\n"


def compare(metrics: pd.DataFrame, *, metric_names: tuple[str, ...] | None = None,
            tol: float = 1e-4) -> Comparison:
    """Compare every pair of methods in ``metrics`` (columns dataset, method, metrics...)."""
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
        for a, b in itertools.combinations(methods, 2):
            wtl = stats.wins_ties_losses(table[a], table[b], higher_is_better=hib, tol=tol)
            pair_rows.append({
                "metric": metric, "method_a": a, "method_b": b, "wins": wtl.wins,
                "ties": wtl.ties, "losses": wtl.losses,
                "p_value": stats.wilcoxon_p(table[a], table[b]),
            })
        if len(methods) > 2:
            ranks = stats.average_ranks(table.to_numpy(), hib)
            fr = stats.friedman(table.to_numpy())
            for meth, rk in zip(methods, ranks, strict=True):
                rank_rows.append({"metric": metric, "method": meth, "average_rank": float(rk),
                                  "friedman_stat": fr.statistic, "friedman_p": fr.pvalue})
    averages = pd.DataFrame(avg_rows).T
    averages.index.name = "metric"
    return Comparison(per_dataset, pd.DataFrame(pair_rows), averages,
                      pd.DataFrame(rank_rows), tol)


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
    out = ["## Wins / ties / losses (two-sided Wilcoxon signed-rank p)", ""]
    metrics = list(dict.fromkeys(comp.pairs["metric"])) if len(comp.pairs) else []
    better = {hib: [m for m in metrics if stats.higher_is_better(m) is hib]
              for hib in (True, False)}
    said = [f"{'higher' if hib else 'lower'} for {', '.join(ms)}"
            for hib, ms in better.items() if ms]
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
