"""``treecert compare``: compare methods over datasets, from evaluate results or run here."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from treecert import api
from treecert.cli import options
from treecert.cli.common import _check_flags, _state, say
from treecert.cli.experiment import (
    _check_units_options,
    _dataset_name,
    _load_evaluation_data,
    _output_lock,
    _protocol,
    _run_settings,
    _unit_done,
    _write_comparison,
)
from treecert.cli.progress import _RowProgress
from treecert.data.fileio import make_directory, write_text
from treecert.errors import ConfigError, TreecertError


@options.insert(options.DATA_OPTIONS, options.RUN_OPTIONS, options.TREE_OPTIONS,
                before="quiet")
def compare(
    ctx: typer.Context,
    results: Annotated[
        list[str] | None,
        typer.Argument(help="evaluate output directories or metrics CSV files."),
    ] = None,
    data: Annotated[
        list[str] | None, typer.Option("--data", help="Run evaluate on this dataset first.")
    ] = None,
    data_dir: Annotated[
        str | None,
        typer.Option(help="Run evaluate on every .arff/.csv file here (files that are not "
                          "training data, e.g. without a class, are skipped with a warning)."),
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option("--method", metavar="NAME[:key=value,...]",
                     help="Method spec (with --data/--data-dir), repeatable; NAME one of "
                          "{METHODS}."),
    ] = None,
    metric: options.Metrics = None,
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="Directory for CSV/JSON results.")
    ] = None,
    tol: Annotated[float, typer.Option(help="Absolute tie tolerance.")] = 1e-4,
    relative_to: Annotated[
        str | None,
        typer.Option(metavar="METHOD",
                     help="Also report every other method's mean and median % change "
                          "against METHOD per metric (Lindsay & Cox's Table 1 layout); "
                          "METHOD as given to --method, or a method of the results. "
                          "-o DIR writes relative.csv."),
    ] = None,
    folds: options.Folds = 10,
    weka_folds: options.WekaFolds = False,
    loo: Annotated[bool, typer.Option("--loo", help="Leave-one-out on every dataset "
                                                    "(fold files are not used).")] = False,
    use_folds_files: Annotated[
        bool, typer.Option(help="Use NAME.folds.csv beside a dataset when it exists (not "
                                "with --weka-folds).")
    ] = True,
    seed: options.Seed = 1,
    plots: Annotated[bool, typer.Option("--plots", help="Scatter plots into the -o dir.")] = False,
    quiet: options.Quiet = False,
    *, class_name, max_classes, nominal, ignore, loss, repeat, bins, interval_auc,
    j48,  # DATA_OPTIONS
    no_timing, jobs, shard, resume, scheduler,  # options.RUN_OPTIONS
    **tree,  # options.TREE_OPTIONS; the three groups inserted before --quiet
) -> None:
    """Compare methods over datasets: wins/ties/losses, Wilcoxon p, averages, ranks.

    Either give evaluate results, or run them here with --data/--data-dir and --method.
    Markdown goes to stdout; -o DIR also writes comparison.csv/.json and metrics.csv.

    Example: treecert compare --data-dir sample_data --method frequency --method laplace
    """
    import json

    from treecert.evaluation.runs import open_run, shard_keys

    _state["quiet"] = quiet
    _check_flags(repeat=repeat)
    paths = list(data or [])
    if data_dir is not None:
        d = Path(data_dir)
        if not d.is_dir():
            raise ConfigError(f"{data_dir}: not a directory.")
        paths += sorted(str(p) for p in d.iterdir()
                        if p.suffix in (".arff", ".csv") and not p.name.endswith(".folds.csv"))
    frames = [_read_metrics(r) for r in (results or [])]
    described = [_read_run(r) for r in (results or [])] if plots else []
    part = _check_units_options(shard, resume, output, plots)
    if part is not None and frames:
        raise ConfigError("--shard runs evaluations; give --data/--data-dir, not result "
                          "directories.")
    if paths and not method:
        raise ConfigError("--data/--data-dir need at least one --method.")
    with _output_lock(output, part):  # from the first unit recorded to the last file
        if paths:
            from treecert.parallel import backend

            asked = list(method)
            method, params = _run_settings(ctx, method, tree, seed, j48)
            # --relative-to names a --method as given; --j48 may have added pruning to it
            relative_to = dict(zip(asked, method, strict=True)).get(relative_to, relative_to)
            runs = []
            loaded = []
            for path in paths:
                try:
                    dataset, loss_matrix = _load_evaluation_data(path, class_name, nominal,
                                                                 ignore, loss, max_classes)
                    ff = Path(path).with_name(_dataset_name(path) + ".folds.csv")
                    protocol = _protocol(path, dataset, folds, loo, repeat,
                                         str(ff) if use_folds_files and ff.exists()
                                         and not (loo or weka_folds) else None,
                                         None, seed, None, weka_folds)
                except TreecertError as exc:
                    exc = _naming(exc, path)
                    if path in (data or []):
                        raise exc from None
                    say(f"Warning: skipping {exc}")  # --data-dir: not every file is data
                    continue
                loaded.append((path, dataset, loss_matrix, protocol))
            paths = [p for p, *_ in loaded]
            names = _distinct_names(paths)
            for path, dataset, loss_matrix, protocol in loaded:
                store, keys = None, None
                if output is not None:
                    root = make_directory(Path(output) / "units")
                    store, keys = open_run(root / _unit_dir(len(runs), path), dataset, method,
                                           protocol, params, names[path], loss_matrix,
                                           bins, interval_auc, not no_timing,
                                           fresh=not (resume or part))
                runs.append((path, dataset, loss_matrix, protocol, store, keys))
            if output is not None:
                doc = {"datasets": [_unit_dir(i, p) for i, p in enumerate(paths)],
                       "metrics": list(metric) if metric else None, "tol": tol,
                       "relative_to": relative_to}
                write_text(Path(output) / "units" / "compare.json", json.dumps(doc) + "\n")
            # --shard: a contiguous 1/N of every dataset's units, in dataset order
            everything = [(i, k) for i, run in enumerate(runs) for k in (run[-1] or [])]
            mine = None if part is None else set(shard_keys(everything, part))
            total = len(everything) if output is not None else None
            todo = []
            for i, (path, dataset, loss_matrix, protocol, store, keys) in enumerate(runs):
                only = None if mine is None else [k for k in keys if (i, k) in mine]
                if only != []:
                    todo.append((dataset, {"protocol": protocol, "loss": loss_matrix,
                                           "store": store, "only": only,
                                           "dataset_name": names[path]}))
            with backend(scheduler), _RowProgress("evaluating", total, unit="units") as bar:
                results = api.evaluate_many(todo, method, jobs=jobs, tree_params=params,
                                            bins=bins, interval_auc=interval_auc,
                                            timing=not no_timing, progress=bar.set,
                                            on_unit=_unit_done)
            frames.extend(res.metrics for res in results if res is not None)
            described += [res.run for res in results if res is not None]
            if part is not None:
                say(f"Shard {shard}: recorded {len(mine)} of {len(everything)} units in "
                    f"{output}/units; when every shard is done, run 'treecert merge' on the "
                    "output directories.")
                return
        if not frames:
            raise ConfigError("nothing to compare.", "Give evaluate result directories, or "
                              "--data/--data-dir with --method.")
        _write_comparison(frames, None if output is None else Path(output),
                          list(metric) if metric else None, tol, plots, relative_to,
                          _protocols(described) if plots else None)


def _naming(exc: TreecertError, path: str) -> TreecertError:
    """``exc`` with the file it is about named in front, if its message does not name it."""
    if path not in str(exc):
        exc.message = f"{path}: {exc.message}"
        exc.args = (exc.message, *exc.args[1:])
    return exc


def _distinct_names(paths: list[str]) -> dict[str, str]:
    """Each data file's name in the tables: its stem (``iris``), or, where two files share
    a stem (``iris.arff`` and ``iris.csv`` in one --data-dir), its file name, or failing
    that the path as given, so that no dataset's row replaces another's."""
    stems = [_dataset_name(p) for p in paths]
    files = [Path(p).name for p in paths]
    return {p: (stem if stems.count(stem) == 1 else
                file if files.count(file) == 1 else p)
            for p, stem, file in zip(paths, stems, files, strict=True)}


def _unit_dir(index: int, path: str) -> str:
    return f"{index}-{_dataset_name(path)}"  # numbered: iris.arff and iris.csv may both run


def _read_run(path: str) -> dict | None:
    """The run metadata of an evaluate -o directory (its metrics.json), or None."""
    import json

    p = Path(path)
    try:
        doc = json.loads((p if p.is_file() else p / "metrics.json").with_name("metrics.json")
                         .read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc.get("run") if isinstance(doc, dict) else None


def _protocols(runs: list[dict | None]) -> str | None:
    """The protocols of a comparison's datasets in words, for the scatter plots' titles:
    one when all share it, else each with its number of datasets."""
    from collections import Counter

    from treecert.evaluation.plots import describe_protocol

    texts = Counter(describe_protocol(run.get("protocol"), "NAME.folds.csv")
                    if run else "protocol not recorded" for run in runs)
    if not texts:
        return None
    if len(texts) == 1:
        return next(iter(texts))
    return "; ".join(f"{text} ({n} dataset{'' if n == 1 else 's'})"
                     for text, n in texts.items())


def _read_metrics(path: str):
    import pandas as pd

    p = Path(path)
    if p.is_dir():
        p = p / "metrics.csv"
    if not p.exists():
        raise ConfigError(f"{path}: no metrics.csv here; pass an evaluate -o directory.")
    try:
        return pd.read_csv(p)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{p}: cannot read results ({exc}).") from None
