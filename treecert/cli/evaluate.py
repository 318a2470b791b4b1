"""``treecert evaluate``: cross-validate methods on one dataset; metrics, predictions, plots."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from treecert import api
from treecert.cli import options
from treecert.cli.common import (
    _check_flags,
    _state,
    say,
    stderr_console,
    stderr_is_terminal,
)
from treecert.cli.experiment import (
    _check_units_options,
    _dataset_name,
    _load_evaluation_data,
    _output_lock,
    _protocol,
    _run_settings,
    _unit_done,
    _write_evaluation,
)
from treecert.cli.progress import _RowProgress
from treecert.data.fileio import atomic_writer


def _metrics_table(result, title: str) -> None:
    if _state["quiet"]:
        return
    from treecert.evaluation.results import RecordTable

    metrics = result.table("metrics")
    columns = metrics.columns() if isinstance(metrics, RecordTable) else None
    if columns is None:
        columns = {c: result.metrics[c].to_numpy() for c in result.metrics.columns}
    skip = {"dataset", "method", "repeats", "n_test"}
    heads = ["metric", *(str(name) for name in columns["method"])]
    rows = [[c, *(f"{v:.4f}" if v == v else "n/a" for v in columns[c])]
            for c in columns if c not in skip]
    text = None if stderr_is_terminal() else _plain_table(title, heads, rows)
    if text is not None:
        sys.stderr.write(text)
        sys.stderr.flush()
        return
    stderr_console().print(_rich_table(title, heads, rows))


def _rich_table(title: str, heads: list[str], rows: list[list[str]]):
    """The metrics table as a rich Table: the first column left, the others right."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column(heads[0])
    for name in heads[1:]:
        table.add_column(name, justify="right", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def _plain_table(title: str, heads: list[str], rows: list[list[str]]) -> str | None:
    """The metrics table as rich draws it off a terminal (the title on a line of its own,
    heavy head, the first column left-justified, the others right-justified), when rich
    would draw it so: every text plain ASCII that rich's markup and emoji codes leave as
    it is, without spaces at its ends, and the table no wider than rich's console
    (:func:`_console_width`); else None. Drawn here, the table costs no import of rich
    (0.03 CPU-s)."""
    texts = [title, *heads, *(cell for row in rows for cell in row)]
    if any(not t.isascii() or not t.isprintable() or "[" in t or "\\" in t
           or t != t.strip() or _EMOJI.search(t) for t in texts):
        return None
    widths = [max(len(row[j]) for row in [heads, *rows]) for j in range(len(heads))]
    if sum(widths) + 3 * len(widths) + 1 > _console_width():
        return None

    def line(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + right + "\n"

    def cells(edge: str, row: list[str]) -> str:
        padded = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                                         strict=True)]
        return edge + edge.join(f" {c} " for c in padded) + edge + "\n"

    return ((f"{title}\n" if title else "") + line("┏", "━", "┳", "┓") + cells("┃", heads)
            + line("┡", "━", "╇", "┩") + "".join(cells("│", row) for row in rows)
            + line("└", "─", "┴", "┘"))


_EMOJI = re.compile(r":\S*:")


def _console_width() -> int:
    """The width rich's console takes: $COLUMNS, else the size of the first of standard
    input, output and error that is a terminal, else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


@options.insert(options.DATA_OPTIONS, options.RUN_OPTIONS, options.TREE_OPTIONS,
                before="quiet")
def evaluate(
    ctx: typer.Context,
    data: Annotated[str, typer.Argument(help="Data: ARFF or CSV.")],
    method: options.MethodSpecs,
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="Directory for predictions.csv, "
                                                        "metrics.csv/.json and plots.")
    ] = None,
    folds: options.Folds = 10,
    weka_folds: options.WekaFolds = False,
    loo: Annotated[bool, typer.Option("--loo", help="Leave-one-out.")] = False,
    folds_file: Annotated[
        str | None, typer.Option(help="One fold id per data row (e.g. NAME.folds.csv).")
    ] = None,
    test: Annotated[
        str | None, typer.Option(help="Train on DATA, test on this file.")
    ] = None,
    seed: options.Seed = 1,
    bias_variance: Annotated[
        int, typer.Option(help="Bias-variance decomposition over R bootstrap samples.")
    ] = 0,
    plots: Annotated[bool, typer.Option("--plots", help="PNG plots into the -o dir.")] = False,
    quiet: options.Quiet = False,
    *, class_name, max_classes, nominal, ignore, loss, repeat, bins, interval_auc,
    j48,  # DATA_OPTIONS
    no_timing, jobs, shard, resume, scheduler,  # options.RUN_OPTIONS
    **tree,  # options.TREE_OPTIONS; the three groups inserted before --quiet
) -> None:
    """Cross-validate methods and report Brier, log-loss, AUC, AUC reliability, ERC.

    Without -o the metrics CSV goes to stdout. With the default seed (1), 10-fold CV uses
    the same folds as the shared NAME.folds.csv files.

    Transductive methods (tpce, kk, venn): ENGINE_MEMORY

    Example: treecert evaluate sample_data/credit-g.arff --method frequency --method laplace
    -o results/credit-g
    """
    from treecert.evaluation import runs
    from treecert.parallel import backend

    _state["quiet"] = quiet
    _check_flags(repeat=repeat, bias_variance=bias_variance)
    part = _check_units_options(shard, resume, output, plots, bias_variance)
    method, params = _run_settings(ctx, method, tree, seed, j48)
    dataset, loss_matrix = _load_evaluation_data(data, class_name, nominal, ignore, loss,
                                                 max_classes)
    protocol = _protocol(data, dataset, folds, loo, repeat, folds_file, test, seed, class_name,
                         weka_folds)
    name = _dataset_name(data)
    store, only = None, None
    with _output_lock(output, part):
        if output is not None:
            store, keys = runs.open_run(Path(output) / "units", dataset, method, protocol,
                                        params, name, loss_matrix, bins, interval_auc,
                                        not no_timing, fresh=not (resume or part))
            only = runs.shard_keys(keys, part)
        with backend(scheduler), _RowProgress("evaluating", None, unit="units") as bar:
            result = api.evaluate(
                dataset, method, protocol=protocol, tree_params=params, loss=loss_matrix,
                bins=bins, bias_variance=bias_variance, jobs=jobs, dataset_name=name,
                timing=not no_timing, progress=bar.set, interval_auc=interval_auc,
                store=store, only=only, on_unit=_unit_done,
            )
        if result is None:
            say(f"Shard {shard}: recorded {len(only)} of {len(keys)} units in {output}/units; "
                "when every shard is done, run 'treecert merge' on the output directories.")
            return
        _metrics_table(result, f"{name} ({protocol.kind})")
        if output is None:
            from treecert.evaluation.results import write_csv

            with atomic_writer("-") as fh:
                write_csv(result.table("metrics"), fh)
        else:
            source = folds_file if folds_file is not None else test
            _write_evaluation(result, Path(output), plots, bins,
                              None if source is None else Path(source).name)
            say(f"Wrote {len(result.table('predictions'))} predictions and metrics to "
                f"{output}")
