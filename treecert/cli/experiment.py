"""What evaluate and compare share, and merge writes again.

The evaluation protocol from the options, the --shard/--resume checks, a dataset's name from
its path, and the result files: an evaluation's predictions and metrics, a comparison's
tables.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from treecert import api
from treecert.cli.common import _load_matching, say
from treecert.data.csv_writer import frame_to_csv
from treecert.data.fileio import (
    atomic_writer,
    directory_lock,
    make_directory,
    staged_outputs,
    write_text,
)
from treecert.errors import ConfigError, OutputError


def _protocol(data_path, dataset, folds, loo, repeat, folds_file, test, seed, class_name,
              weka=False):
    from treecert.data.folds import read_fold_ids
    from treecert.evaluation.experiment import Protocol

    chosen = sum([loo, folds_file is not None, test is not None, weka])
    if chosen > 1:
        raise ConfigError("choose one of --loo, --folds-file, --test and --weka-folds.")
    if loo:
        if repeat > 1:
            raise ConfigError("--repeat does not apply to --loo (leave-one-out has one "
                              "split).", "Leave --repeat out.")
        return Protocol(kind="loo", seed=seed)
    if folds_file is not None:
        text = _read_text(folds_file)
        protocol = Protocol(kind="folds", seed=seed, repeats=repeat,
                            fold_ids=read_fold_ids(text, dataset.n_samples, folds_file))
        if repeat > 1:
            n = protocol.file_folds(dataset.y >= 0)
            later = "repeat 1 uses" if repeat == 2 else f"repeats 1-{repeat - 1} use"
            say(f"{_dataset_name(data_path)}: repeat 0 uses the folds of {folds_file}; "
                f"{later} new stratified {n}-fold splits (seed {seed} + repeat).")
        return protocol
    if test is not None:
        if repeat > 1:
            raise ConfigError("--repeat does not apply to --test (one train/test split).",
                              "Leave --repeat out.")
        return Protocol(kind="test", seed=seed,
                        test=_load_matching(test, dataset.schema, labelled="test"))
    protocol = Protocol(kind="weka" if weka else "cv", n_folds=folds, repeats=repeat, seed=seed)
    protocol.splits(dataset)  # too few rows for the folds: said now, naming no fold
    return protocol


def _run_settings(ctx, methods: list[str], tree: dict, seed: int, j48: bool):
    """The method specs and the tree parameters of an evaluate/compare run, with --j48's
    settings put in (J48's pruning into every method spec that prunes)."""
    from treecert.cli import options
    from treecert.cli.common import _check_flags, _tree_params
    from treecert.methods import METHODS, parse_method_spec

    if j48:
        tree = options.j48_settings(ctx, tree)
        methods = [options.j48_spec(m) for m in methods]
    for spec in methods:  # every option checked before any work or output
        parse_method_spec(spec, METHODS)
    _check_flags(seed=seed)
    params = _tree_params(**tree)
    params["seed"] = seed
    return list(methods), params


def _load_evaluation_data(path: str, class_name, nominal, ignore, loss, max_classes=None):
    """A dataset to evaluate on, read with the data options, and its loss matrix (None
    without --loss; the file is read against each dataset's classes)."""
    from treecert.cli.common import _load_training, _read_loss

    dataset = _load_training(path, class_name, nominal, ignore, max_classes)
    return dataset, _read_loss(loss, dataset.schema.classes)


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc}).") from None


def _unit_done(unit) -> None:
    """One stderr line per finished evaluate/compare unit (a
    :class:`~treecert.evaluation.experiment.FinishedUnit`; silenced by --quiet): a batch
    job's log shows how far the run is and which units are slow."""
    which = {"leave-one-out": "leave-one-out",
             "folds": f"repeat {unit.repeat}, all folds from one engine"}.get(
        unit.scope, f"repeat {unit.repeat} fold {unit.fold}")
    say(f"{unit.dataset}: unit {unit.done}/{unit.total} done: {unit.method} {which} "
        f"({unit.seconds:.2f} s)")


def _write_evaluation(result, outdir: Path, plots: bool, bins: str,
                      source: str | None = None) -> None:
    """predictions.csv, the metrics tables and JSON (and the plots) in ``outdir``: all of
    them once every one is written, or none (:func:`~treecert.data.fileio.staged_outputs`).
    ``source`` is the fold file or test file the plots' titles name."""
    with staged_outputs():
        _write_evaluation_files(result, outdir, plots, bins, source)


def _write_evaluation_files(result, outdir: Path, plots: bool, bins: str,
                            source: str | None = None) -> None:
    import json

    from treecert.evaluation.experiment import metrics_document
    from treecert.evaluation.results import write_csv

    make_directory(outdir)
    with atomic_writer(outdir / "predictions.csv") as fh:
        write_csv(result.table("predictions"), fh)
    for file_name, name in {"metrics.csv": "metrics", "metrics_folds.csv": "folds",
                            "metrics_summary.csv": "summary"}.items():
        table = result.table(name)
        if table is not None:
            with atomic_writer(outdir / file_name) as fh:
                write_csv(table, fh)
    write_text(outdir / "metrics.json",
               json.dumps(metrics_document(result), indent=2, allow_nan=False) + "\n")
    confusion = _confusion(result)
    if confusion is not None:
        from treecert.evaluation.confusion import confusion_text

        for file_name, table in zip(("confusion.csv", "per_class.csv"), confusion,
                                    strict=True):
            with atomic_writer(outdir / file_name) as fh:
                write_csv(table, fh)
        write_text(outdir / "confusion.txt", confusion_text(confusion[0],
                                                            list(result.classes)))
    if plots:
        from treecert.evaluation.plot_curves import reliability_plot, roc_plot
        from treecert.evaluation.plots import run_title

        title = run_title(result.run, source)
        written = [reliability_plot(result.predictions, result.classes, outdir, bins, title),
                   roc_plot(result.predictions, result.classes, outdir, title)]
        say(f"Wrote {len(written)} plots to {outdir}")


def _confusion(result):
    """The confusion and per-class tables of an evaluation's predictions (tables of
    :func:`~treecert.evaluation.confusion.confusion_records` without pandas where the
    predictions' columns are at hand), or None when no row has a known class."""
    import numpy as np

    from treecert.evaluation.confusion import confusion_records, confusion_tables
    from treecert.evaluation.results import PredictionTable, RecordTable

    table = result.table("predictions")
    columns = table.columns() if isinstance(table, PredictionTable) else None
    if columns is None:
        if not result.predictions["actual"].notna().any():
            return None
        return confusion_tables(result.predictions, list(result.classes))
    known = np.array([v is not None for v in columns["actual"].tolist()], dtype=bool)
    if not known.any():
        return None
    rows = confusion_records({k: v[known] for k, v in columns.items()}, list(result.classes))
    return tuple(RecordTable(r) for r in rows)


def _check_units_options(shard, resume, output, plots, bias_variance=0):
    """The --shard part (or None) after checking that it, --resume, --plots and -o fit
    together, and that --plots can be drawn (before any work is done)."""
    from treecert.parallel import parse_shard

    if output == "-":  # not a directory name: the metrics go to stdout without -o
        raise ConfigError("-o names a directory for the results, not standard output ('-').",
                          "Leave -o out to get the metrics on standard output.")
    if output is not None and Path(output).exists() and not Path(output).is_dir():
        raise OutputError(f"{output}: exists and is not a directory.",
                          "-o names a directory for the results; give a new or existing "
                          "directory.")
    if plots and output is None:
        raise ConfigError("--plots needs an output directory (-o DIR).")
    part = parse_shard(shard)
    if (part is not None or resume) and output is None:
        raise ConfigError(f"{'--shard' if part is not None else '--resume'} needs an output "
                          "directory (-o DIR): finished units are recorded there.")
    if part is not None and plots:
        raise ConfigError("--plots cannot be drawn by one shard.",
                          "Merge the shards, then evaluate without --shard for plots.")
    if plots:
        from treecert.evaluation.plots import require_matplotlib

        require_matplotlib()  # now, not after the whole cross-validation
    if part is not None and bias_variance:
        raise ConfigError("--bias-variance needs the whole run, not a shard.")
    return part


def _output_lock(output: str | None, part):
    """Hold the -o directory for the run: a second run into it is refused while this one
    lasts (the shards of one run, ``part`` not None, may share it)."""
    if output is None:
        return contextlib.nullcontext()
    return directory_lock(output, shared=part is not None,
                          hint="Wait until that run has finished, or choose another -o "
                               "directory (only the --shard parts of one run may share one).")


def _dataset_name(path: str) -> str:
    if path == "-":
        return "stdin"
    name = Path(path).name
    for suffix in (".gz", ".arff", ".csv"):
        name = name.removesuffix(suffix)
    return name


def _write_comparison(frames, out: Path | None, metric, tol, plots,
                      relative_to: str | None = None, protocol: str | None = None) -> None:
    import pandas as pd

    from treecert.evaluation.compare import to_markdown

    metrics = pd.concat(frames, ignore_index=True)
    comp = api.compare(metrics, metric_names=tuple(metric) if metric else None, tol=tol,
                       relative_to=relative_to)
    md = to_markdown(comp)
    with staged_outputs():  # every file of the comparison, or none
        _write_comparison_files(metrics, comp, md, out, plots, protocol)
    write_text("-", md)


def _write_comparison_files(metrics, comp, md: str, out: Path | None, plots,
                            protocol: str | None = None) -> None:
    if out is not None:
        make_directory(out)
        with atomic_writer(out / "metrics.csv") as fh:
            frame_to_csv(metrics, fh)
        with atomic_writer(out / "comparison.csv") as fh:
            frame_to_csv(comp.pairs, fh)
        if comp.relative is not None:
            with atomic_writer(out / "relative.csv") as fh:
                frame_to_csv(comp.relative, fh)
        write_text(out / "comparison.json", comp.to_json())
        write_text(out / "comparison.md", md)
        if plots:
            from treecert.evaluation import plots as P

            written = P.scatter_plots(comp.per_dataset, out, protocol)
            say(f"Wrote {len(written)} plots to {out}")
