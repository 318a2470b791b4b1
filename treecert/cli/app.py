"""The ``treecert`` command line: a thin layer over :mod:`treecert.api`.

This is the only module that imports typer and rich. Every command reads its inputs, calls
one API function and writes the result; user errors (``TreecertError``) are caught in one
place (:func:`main`) and printed as one line ``Error: ...`` with exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from treecert import api
from treecert.data.fileio import atomic_writer, check_not_input, write_frame, write_text
from treecert.errors import ConfigError, TreecertError
from treecert.evaluation import units
from treecert.evaluation.runs import finish_run, open_run, shard_keys
from treecert.tree.model import read_model

app = typer.Typer(
    name="treecert",
    help="Decision trees that tell you how far to trust each prediction.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_stderr = Console(stderr=True, highlight=False, soft_wrap=True)
_state = {"quiet": False}


def say(message: str) -> None:
    """A message for the person at the terminal (stderr; silenced by --quiet)."""
    if not _state["quiet"]:
        _stderr.print(message, markup=False)


def _warn_all(warnings: list[str]) -> None:
    for w in warnings:
        say(f"Warning: {w}")


def _load_matching(path: str, schema, labelled: str | None = None):
    """A data file read against a model's schema, its warnings shown; with ``labelled``
    (the file's role, e.g. "test") the class column is required."""
    from treecert.data.alignment import load_for_schema

    data = load_for_schema(path, schema)
    _warn_all(data.warnings)
    if labelled and not data.has_class:
        raise ConfigError(f"{path}: the {labelled} file has no class column "
                          f"'{schema.class_attribute.name}'.")
    return data


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No messages on stderr.")]
ClassOpt = Annotated[
    str | None, typer.Option("--class", help="Class attribute (default: the last column).")
]


def _load_training(path: str, class_name: str | None, nominal: str | None, ignore: str | None):
    from treecert.data.loading import load_dataset

    data = load_dataset(
        path,
        class_name=class_name,
        nominal=_split_names(nominal),
        ignore=_split_names(ignore),
    )
    _warn_all(data.warnings)
    return data


def _split_names(text: str | None) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip()) if text else ()


Criterion = Annotated[
    str, typer.Option(help="info_gain (papers, Clus), gain_ratio (J48) or gini (CART).")
]
MinLeaf = Annotated[float, typer.Option(help="Minimum weight per branch (J48 -M).")]
MaxDepth = Annotated[int | None, typer.Option(help="Maximum depth (root = 0).")]
MinGain = Annotated[float, typer.Option(help="Minimum heuristic gain to split.")]
Cp = Annotated[float, typer.Option(help="rpart's relative complexity parameter.")]
BinarySplits = Annotated[
    bool, typer.Option("--binary-splits", help="Nominal tests one value vs rest (J48 -B).")
]
Threshold = Annotated[
    str, typer.Option(help="midpoint (sklearn, rpart) or lower (observed value, C4.5).")
]
Collapse = Annotated[bool, typer.Option("--collapse", help="J48's collapse of useless subtrees.")]
Nominal = Annotated[
    str | None, typer.Option(help="CSV: columns to read as nominal, comma-separated.")
]
Ignore = Annotated[str | None, typer.Option(help="Attributes to leave out, comma-separated.")]
Seed = Annotated[int, typer.Option(help="Seed of every random choice (folds, bootstraps).")]
Jobs = Annotated[int, typer.Option("--jobs", "-j", help="Parallel workers (-1 = all cores).")]
LossOpt = Annotated[
    str | None,
    typer.Option("--loss", help="Loss matrix YAML (rows = true class, columns = predicted)."),
]
CfOpt = Annotated[
    float | None, typer.Option("--cf", help="ebp: confidence factor (J48 -C; default 0.25).")
]
NoRaise = Annotated[
    bool, typer.Option("--no-raise", help="ebp: no subtree raising (J48 -S).")
]
HoldoutOpt = Annotated[
    float | None,
    typer.Option(help="ccp/rep: fraction held out (ccp 0.2 as Bradford et al.; rep 1/3 as "
                      "J48 -R)."),
]
CvOpt = Annotated[
    int | None, typer.Option("--cv", help="ccp: choose alpha by K-fold CV (rpart's way).")
]
OneSe = Annotated[bool, typer.Option("--one-se", help="ccp: the 1-SE rule.")]


def _read_loss(path: str | None, classes: tuple[str, ...]):
    if path is None:
        return None
    from treecert.pruning.loss import read_loss

    matrix, warns = read_loss(path, classes)
    _warn_all(warns)
    return matrix


def _prune_kwargs(cf, no_raise, kl_threshold, holdout, cv, one_se, seed) -> dict:
    return {"cf": cf, "subtree_raising": False if no_raise else None,
            "kl_threshold": kl_threshold, "holdout": holdout, "cv": cv,
            "one_se": True if one_se else None, "seed": seed}


def _pruning_summary(record: dict) -> str:
    b, a = record["before"], record["after"]
    text = (f"pruned with {record['method']}: {b['leaves']} leaves ({b['nodes']} nodes) -> "
            f"{a['leaves']} leaves ({a['nodes']} nodes)")
    if record["method"] == "ccp":
        text += f", alpha = {record['alpha']:.6g} chosen by {record['selection']}"
    return text


def _loss_unused_warning(method: str, loss: str | None) -> None:
    if loss is not None and method.strip().lower() in ("none", "ebp", "kl"):
        say(f"Warning: pruning method {method} does not use the loss matrix; give it to "
            "'treecert predict --loss' to choose predictions by expected loss.")


def _tree_params(criterion, min_leaf, max_depth, min_gain, cp, binary_splits, threshold,
                 collapse) -> dict:
    return {
        "criterion": criterion, "min_leaf": min_leaf, "max_depth": max_depth,
        "min_gain": min_gain, "cp": cp, "binary_splits": binary_splits,
        "threshold": threshold, "collapse": collapse,
    }


@app.command()
def train(
    data: Annotated[str, typer.Argument(help="Training data: ARFF or CSV ('-' = CSV on stdin).")],
    output: Annotated[str, typer.Option("-o", "--output", help="Model file to write (JSON).")],
    class_name: ClassOpt = None,
    criterion: Criterion = "info_gain",
    min_leaf: MinLeaf = 2.0,
    max_depth: MaxDepth = None,
    min_gain: MinGain = 0.0,
    cp: Cp = 0.0,
    binary_splits: BinarySplits = False,
    threshold: Threshold = "midpoint",
    collapse: Collapse = False,
    leaf: Annotated[
        str, typer.Option(help="Leaf estimate: frequency, laplace or m-estimate.")
    ] = "frequency",
    alpha: Annotated[float, typer.Option(help="Laplace pseudo-count (J48 -A: 1).")] = 1.0,
    m: Annotated[float, typer.Option("--m", help="m of the m-estimate.")] = 2.0,
    nominal: Nominal = None,
    ignore: Ignore = None,
    no_embed_data: Annotated[
        bool,
        typer.Option("--no-embed-data", help="Do not store the training data in the model."),
    ] = False,
    prune: Annotated[
        str, typer.Option(help="Post-pruning: none, ccp, ebp, laplace_loss, kl or rep "
                               "(see 'treecert prune --help').")
    ] = "none",
    loss: LossOpt = None,
    cf: CfOpt = None,
    no_raise: NoRaise = False,
    kl_threshold: Annotated[
        float | None, typer.Option(help="kl: prune below this weighted KL (default 0.01).")
    ] = None,
    holdout: HoldoutOpt = None,
    cv: CvOpt = None,
    one_se: OneSe = False,
    seed: Seed = 1,
    quiet: Quiet = False,
) -> None:
    """Grow a tree and save it as a JSON model.

    Unpruned by default; --prune M prunes it as 'treecert prune' does.

    Example: treecert train sample_data/iris.arff -o iris.json --leaf laplace
    """
    _state["quiet"] = quiet
    check_not_input(output, [data])
    dataset = _load_training(data, class_name, nominal, ignore)
    loss_matrix = _read_loss(loss, dataset.schema.classes)
    model = api.train(
        dataset, criterion=criterion, min_leaf=min_leaf, max_depth=max_depth,
        min_gain=min_gain, cp=cp, binary_splits=binary_splits, threshold=threshold,
        collapse=collapse, leaf=leaf, alpha=alpha, m=m, embed_data=not no_embed_data,
    )
    pruned = ""
    _loss_unused_warning(prune, loss)
    if prune.strip().lower() != "none":
        model = api.prune(model, prune, loss=loss_matrix, data=dataset,
                          **_prune_kwargs(cf, no_raise, kl_threshold, holdout, cv, one_se,
                                          seed))
        pruned = f"; {_pruning_summary(model.pruning)}"
    write_text(output, api.model_json(model))
    say(
        f"Trained on {dataset.n_samples} rows of {dataset.source}: "
        f"{model.tree.n_nodes} nodes, {model.tree.n_leaves} leaves, depth {model.tree.depth}"
        f"{pruned}; wrote {output}"
    )


ShardOpt = Annotated[
    str | None,
    typer.Option("--shard", metavar="I/N",
                 help="Do only part I (0-based) of N: a contiguous 1/N of the rows (predict) "
                      "or of the (dataset, fold) units (evaluate, compare); for job arrays. "
                      "See 'treecert merge'."),
]
ResumeOpt = Annotated[
    bool,
    typer.Option("--resume", help="Keep the (dataset, method, fold) units already recorded in "
                                  "the -o directory by an interrupted run; run the rest."),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option("--scheduler", metavar="ADDRESS",
                 help="Run the per-instance/per-fold work on this Dask distributed scheduler "
                      "(e.g. tcp://127.0.0.1:8786); needs pip install 'treecert[dask]'."),
]


@app.command()
def predict(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file (JSON).")],
    data: Annotated[str, typer.Argument(help="Data to score: ARFF or CSV ('-' = CSV on stdin).")],
    output: Annotated[
        str, typer.Option("-o", "--output", help="CSV to write ('-' = stdout).")
    ] = "-",
    id_column: Annotated[
        str | None, typer.Option("--id", help="Column to copy through as an identifier.")
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(help="Certainty method, e.g. laplace or 'laplace:alpha=0.5' "
                          "(default: the model's own)."),
    ] = None,
    loss: Annotated[
        str | None,
        typer.Option("--loss", help="Loss matrix YAML: predict the class of minimum expected "
                                    "loss and add an expected_loss column."),
    ] = None,
    shard: ShardOpt = None,
    jobs: Jobs = 1,
    scheduler: SchedulerOpt = None,
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", metavar="BYTES",
                          help="CSV text read per chunk (memory is a small multiple of it).")
    ] = 1 << 20,
    quiet: Quiet = False,
) -> None:
    """Score data with a model: one CSV row per instance, in input order.

    Columns: row, [id], actual (if the file has the class), predicted, p_<label> per class,
    certainty, and lower_<label>/upper_<label> for methods that give bounds. With --loss,
    predicted is the class of minimum expected loss and expected_loss is that loss.

    CSV input (files, .csv.gz, stdin) is streamed: read in chunks of --chunk-size bytes
    (1 MB) and written as it goes, so memory stays at the model plus about 30 times the
    chunk size (~140 MB in all for a small model), whatever the file size. ARFF files are
    read whole, then scored in chunks of 50,000 rows. The output is still written
    atomically. --shard I/N scores rows
    [floor(I*n/N), floor((I+1)*n/N)) with their global row numbers; every shard has the
    header, so the header once plus the shards' other lines in order is the whole output.

    Example: treecert predict iris.json sample_data/iris.arff -o predictions.csv
    """
    from treecert.data.stream import SchemaReader
    from treecert.parallel import backend, parse_shard, shard_bounds

    _state["quiet"] = quiet
    check_not_input(output, [model_path, data])
    part = parse_shard(shard)
    if chunk_size < 1:
        raise ConfigError("--chunk-size must be at least 1 byte.")
    model = read_model(model_path)
    loss_matrix = _read_loss(loss, model.schema.classes)
    reader = SchemaReader(data, model.schema, id_column=id_column, chunk_bytes=chunk_size)
    rows, total = None, None
    if part is not None or reader.format == "arff":
        total = reader.count_rows()
    if part is not None:
        rows = shard_bounds(total, *part)
        total = rows[1] - rows[0]
    with backend(scheduler):
        runner = api.predictor(model, method=method, loss=loss_matrix, jobs=jobs)
        written = 0
        with atomic_writer(output) as fh, _RowProgress("predicting", total) as bar:
            for chunk in reader.chunks(rows):
                with bar.chunk(chunk):
                    frame = api.predict_with(runner, model, chunk.data, id_column=id_column,
                                             loss=loss_matrix, row_offset=chunk.row_offset)
                write_frame(frame, fh, header=written == 0)
                written += len(frame)
            if written == 0:  # an empty shard: the header alone, from the first row's frame
                first = next(iter(reader.chunks((0, 1))))
                frame = api.predict_with(runner, model, first.data, id_column=id_column,
                                         loss=loss_matrix)
                write_frame(frame.iloc[:0], fh)
    _warn_all(reader.warnings)
    if output != "-":
        say(f"Wrote {written} predictions to {output}")


class _RowProgress:
    """A progress bar in rows on stderr (a terminal only, not --quiet), with rate and ETA.

    Rows finished inside a chunk are reported by :func:`treecert.parallel.reporting` (the
    transductive methods' per-instance work); the rest of a chunk when it is done. Without
    a known total the total is estimated from the fraction of the input read.
    """

    def __init__(self, description: str, total: int | None, unit: str = "rows") -> None:
        self.total, self.done, self.unit = total, 0, unit
        self.progress = None
        if not _state["quiet"] and sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), console=_stderr,
                transient=True)
            self.task = self.progress.add_task(description, total=total, rate="")

    def __enter__(self) -> _RowProgress:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def advance(self, rows: int) -> None:
        self.done += rows
        if self.progress is not None:
            speed = self.progress.tasks[0].speed
            self.progress.update(self.task, completed=self.done,
                                 rate=f"{speed:,.1f} {self.unit}/s" if speed else "")

    def set(self, done: int, total: int) -> None:
        """Absolute progress (evaluate/compare: units done of total)."""
        if self.progress is not None:
            self.progress.update(self.task, total=total)
        self.advance(done - self.done)

    def chunk(self, chunk):
        """Context for scoring one chunk: counts its rows, in pieces where it can."""
        import contextlib

        from treecert.parallel import reporting

        @contextlib.contextmanager
        def scope():
            before = self.done
            if self.progress is not None and self.total is None and chunk.fraction > 0:
                # rows so far / fraction of the file read so far: the estimated total
                seen = before + chunk.data.n_samples
                self.progress.update(self.task, total=max(seen, round(seen / chunk.fraction)))
            with reporting(self.advance if self.progress is not None else None):
                yield
            self.advance(chunk.data.n_samples - (self.done - before))

        return scope()


def _metrics_table(metrics, title: str) -> None:
    if _state["quiet"]:
        return
    from rich.table import Table

    skip = {"dataset", "method", "repeats", "n_test"}
    cols = [c for c in metrics.columns if c not in skip]
    table = Table(title=title)
    table.add_column("metric")
    for name in metrics["method"]:
        table.add_column(str(name), justify="right", overflow="fold")
    for c in cols:
        table.add_row(c, *(f"{v:.4f}" if v == v else "n/a" for v in metrics[c]))
    _stderr.print(table)


def _protocol(data_path, dataset, folds, loo, repeat, folds_file, test, seed, class_name):
    from treecert.data.folds import read_fold_ids
    from treecert.evaluation.experiment import Protocol

    chosen = sum([loo, folds_file is not None, test is not None])
    if chosen > 1:
        raise ConfigError("choose one of --loo, --folds-file and --test.")
    if loo:
        return Protocol(kind="loo", seed=seed)
    if folds_file is not None:
        text = _read_text(folds_file)
        return Protocol(kind="folds", seed=seed,
                        fold_ids=read_fold_ids(text, dataset.n_samples, folds_file))
    if test is not None:
        return Protocol(kind="test", seed=seed,
                        test=_load_matching(test, dataset.schema, labelled="test"))
    return Protocol(kind="cv", n_folds=folds, repeats=repeat, seed=seed)


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc}).") from None


def _write_evaluation(result, outdir: Path, plots: bool, bins: str) -> None:
    import json

    outdir.mkdir(parents=True, exist_ok=True)
    with atomic_writer(outdir / "predictions.csv") as fh:
        result.predictions.to_csv(fh, index=False, lineterminator="\n")
    with atomic_writer(outdir / "metrics.csv") as fh:
        result.metrics.to_csv(fh, index=False, lineterminator="\n")
    records = result.metrics.to_dict(orient="records")
    records = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
               for r in records]
    write_text(outdir / "metrics.json", json.dumps(records, indent=2, allow_nan=False) + "\n")
    if plots:
        from treecert.evaluation import plots as P

        written = P.reliability_plots(result.predictions, result.classes, outdir, bins)
        written.append(P.roc_plot(result.predictions, result.classes, outdir))
        say(f"Wrote {len(written)} plots to {outdir}")


@app.command()
def evaluate(
    data: Annotated[str, typer.Argument(help="Data: ARFF or CSV.")],
    method: Annotated[
        list[str], typer.Option("--method", help="Method spec, repeatable: NAME or "
                                                  "'NAME:key=value,...'.")
    ],
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="Directory for predictions.csv, "
                                                        "metrics.csv/.json and plots.")
    ] = None,
    class_name: ClassOpt = None,
    folds: Annotated[int, typer.Option(help="Stratified k-fold CV.")] = 10,
    loo: Annotated[bool, typer.Option("--loo", help="Leave-one-out.")] = False,
    repeat: Annotated[int, typer.Option(help="Repeated CV with seeds seed, seed+1, ...")] = 1,
    folds_file: Annotated[
        str | None, typer.Option(help="One fold id per data row (e.g. NAME.folds.csv).")
    ] = None,
    test: Annotated[
        str | None, typer.Option(help="Train on DATA, test on this file.")
    ] = None,
    seed: Seed = 1,
    loss: Annotated[
        str | None, typer.Option(help="Loss matrix YAML: adds expected_loss.")
    ] = None,
    bins: Annotated[
        str, typer.Option(help="ERC bins: equal_width (10) or mdl (Fayyad-Irani).")
    ] = "equal_width",
    bias_variance: Annotated[
        int, typer.Option(help="Bias-variance decomposition over R bootstrap samples.")
    ] = 0,
    plots: Annotated[bool, typer.Option("--plots", help="PNG plots into the -o dir.")] = False,
    interval_auc: Annotated[
        str, typer.Option(help="Methods with bounds: exact AUC range (auc_low/auc_high), or "
                               "endpoints to add the EB paper's AUC of the lower and upper "
                               "vectors.")
    ] = "exact",
    no_timing: Annotated[
        bool, typer.Option("--no-timing", help="Leave out timings (byte-identical metrics).")
    ] = False,
    jobs: Jobs = 1,
    shard: ShardOpt = None,
    resume: ResumeOpt = False,
    scheduler: SchedulerOpt = None,
    criterion: Criterion = "info_gain",
    min_leaf: MinLeaf = 2.0,
    max_depth: MaxDepth = None,
    min_gain: MinGain = 0.0,
    cp: Cp = 0.0,
    binary_splits: BinarySplits = False,
    threshold: Threshold = "midpoint",
    collapse: Collapse = False,
    nominal: Nominal = None,
    ignore: Ignore = None,
    quiet: Quiet = False,
) -> None:
    """Cross-validate methods and report Brier, log-loss, AUC, AUC reliability, ERC.

    Without -o the metrics CSV goes to stdout. With the default seed (1), 10-fold CV uses
    the same folds as the shared NAME.folds.csv files.

    Example: treecert evaluate sample_data/credit-g.arff --method frequency --method laplace
    -o results/credit-g
    """
    from treecert.parallel import backend
    from treecert.pruning.loss import read_loss

    _state["quiet"] = quiet
    if plots and output is None:
        raise ConfigError("--plots needs an output directory (-o DIR).")
    if bins not in ("equal_width", "mdl"):
        raise ConfigError(f"unknown --bins '{bins}'.", "Choose equal_width or mdl.")
    dataset = _load_training(data, class_name, nominal, ignore)
    protocol = _protocol(data, dataset, folds, loo, repeat, folds_file, test, seed, class_name)
    loss_matrix = None
    if loss is not None:
        loss_matrix, warns = read_loss(loss, dataset.schema.classes)
        _warn_all(warns)
    params = _tree_params(criterion, min_leaf, max_depth, min_gain, cp, binary_splits,
                          threshold, collapse)
    params["seed"] = seed
    part = _check_units_options(shard, resume, output, plots, bias_variance)
    name = _dataset_name(data)
    store, only = None, None
    if output is not None:
        store, keys = open_run(Path(output) / "units", dataset, method, protocol, params,
                                  name, loss_matrix, bins, interval_auc, not no_timing,
                                  fresh=not (resume or part))
        only = shard_keys(keys, part)
    with backend(scheduler), _RowProgress("evaluating", None, unit="units") as bar:
        result = api.evaluate(
            dataset, method, protocol=protocol, tree_params=params, loss=loss_matrix,
            bins=bins, bias_variance=bias_variance, jobs=jobs, dataset_name=name,
            timing=not no_timing, progress=bar.set, interval_auc=interval_auc, store=store,
            only=only,
        )
    if result is None:
        say(f"Shard {shard}: recorded {len(only)} of {len(keys)} units in {output}/units; "
            "when every shard is done, run 'treecert merge' on the output directories.")
        return
    _metrics_table(result.metrics, f"{name} ({protocol.kind})")
    if output is None:
        result.metrics.to_csv(sys.stdout, index=False, lineterminator="\n")
    else:
        _write_evaluation(result, Path(output), plots, bins)
        say(f"Wrote {len(result.predictions)} predictions and metrics to {output}")


def _check_units_options(shard, resume, output, plots, bias_variance=0):
    from treecert.parallel import parse_shard

    part = parse_shard(shard)
    if (part is not None or resume) and output is None:
        raise ConfigError(f"{'--shard' if part is not None else '--resume'} needs an output "
                          "directory (-o DIR): finished units are recorded there.")
    if part is not None and plots:
        raise ConfigError("--plots cannot be drawn by one shard.",
                          "Merge the shards, then evaluate without --shard for plots.")
    if part is not None and bias_variance:
        raise ConfigError("--bias-variance needs the whole run, not a shard.")
    return part


def _dataset_name(path: str) -> str:
    if path == "-":
        return "stdin"
    name = Path(path).name
    for suffix in (".gz", ".arff", ".csv"):
        name = name.removesuffix(suffix)
    return name


@app.command()
def compare(
    results: Annotated[
        list[str] | None,
        typer.Argument(help="evaluate output directories or metrics CSV files."),
    ] = None,
    data: Annotated[
        list[str] | None, typer.Option("--data", help="Run evaluate on this dataset first.")
    ] = None,
    data_dir: Annotated[
        str | None, typer.Option(help="Run evaluate on every .arff/.csv file here.")
    ] = None,
    method: Annotated[
        list[str] | None, typer.Option("--method", help="Method spec (with --data/--data-dir).")
    ] = None,
    metric: Annotated[
        list[str] | None, typer.Option("--metric", help="Metrics to compare (repeatable).")
    ] = None,
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="Directory for CSV/JSON results.")
    ] = None,
    tol: Annotated[float, typer.Option(help="Absolute tie tolerance.")] = 1e-4,
    folds: Annotated[int, typer.Option(help="Stratified k-fold CV.")] = 10,
    use_folds_files: Annotated[
        bool, typer.Option(help="Use NAME.folds.csv beside a dataset when it exists.")
    ] = True,
    seed: Seed = 1,
    plots: Annotated[bool, typer.Option("--plots", help="Scatter plots into the -o dir.")] = False,
    no_timing: Annotated[
        bool, typer.Option("--no-timing", help="Leave out timings (byte-identical metrics).")
    ] = False,
    jobs: Jobs = 1,
    shard: ShardOpt = None,
    resume: ResumeOpt = False,
    scheduler: SchedulerOpt = None,
    criterion: Criterion = "info_gain",
    min_leaf: MinLeaf = 2.0,
    max_depth: MaxDepth = None,
    min_gain: MinGain = 0.0,
    cp: Cp = 0.0,
    binary_splits: BinarySplits = False,
    threshold: Threshold = "midpoint",
    collapse: Collapse = False,
    quiet: Quiet = False,
) -> None:
    """Compare methods over datasets: wins/ties/losses, Wilcoxon p, averages, ranks.

    Either give evaluate results, or run them here with --data/--data-dir and --method.
    Markdown goes to stdout; -o DIR also writes comparison.csv/.json and metrics.csv.

    Example: treecert compare --data-dir sample_data --method frequency --method laplace
    """
    import json

    _state["quiet"] = quiet
    if plots and output is None:
        raise ConfigError("--plots needs an output directory (-o DIR).")
    paths = list(data or [])
    if data_dir is not None:
        d = Path(data_dir)
        if not d.is_dir():
            raise ConfigError(f"{data_dir}: not a directory.")
        paths += sorted(str(p) for p in d.iterdir()
                        if p.suffix in (".arff", ".csv") and not p.name.endswith(".folds.csv"))
    frames = [_read_metrics(r) for r in (results or [])]
    part = _check_units_options(shard, resume, output, plots)
    if part is not None and frames:
        raise ConfigError("--shard runs evaluations; give --data/--data-dir, not result "
                          "directories.")
    if paths:
        from treecert.parallel import backend

        if not method:
            raise ConfigError("--data/--data-dir need at least one --method.")
        params = _tree_params(criterion, min_leaf, max_depth, min_gain, cp, binary_splits,
                              threshold, collapse)
        params["seed"] = seed
        runs = []
        for path in paths:
            dataset = _load_training(path, None, None, None)
            protocol = _protocol(path, dataset, folds, False, 1, None, None, seed, None)
            ff = Path(path).with_name(_dataset_name(path) + ".folds.csv")
            if use_folds_files and ff.exists():
                protocol = _protocol(path, dataset, folds, False, 1, str(ff), None, seed, None)
            store, keys = None, None
            if output is not None:
                from treecert.evaluation.experiment import DEFAULT_BINS, DEFAULT_INTERVAL_AUC

                root = Path(output) / "units"
                root.mkdir(parents=True, exist_ok=True)
                store, keys = open_run(root / _unit_dir(len(runs), path), dataset, method,
                                          protocol, params, _dataset_name(path), None,
                                          DEFAULT_BINS, DEFAULT_INTERVAL_AUC, not no_timing,
                                          fresh=not (resume or part))
            runs.append((path, dataset, protocol, store, keys))
        if output is not None:
            doc = {"datasets": [_unit_dir(i, p) for i, p in enumerate(paths)],
                   "metrics": list(metric) if metric else None, "tol": tol}
            write_text(Path(output) / "units" / "compare.json", json.dumps(doc) + "\n")
        # --shard: a contiguous 1/N of every dataset's units, in dataset order
        everything = [(i, k) for i, run in enumerate(runs) for k in (run[4] or [])]
        mine = None if part is None else set(shard_keys(everything, part))
        total = len(everything) if output is not None else None
        offset = 0
        with backend(scheduler), _RowProgress("evaluating", total, unit="units") as bar:
            for i, (path, dataset, protocol, store, keys) in enumerate(runs):
                only = None if mine is None else [k for k in keys if (i, k) in mine]
                if only == []:
                    continue
                say(f"evaluating {path}")
                res = api.evaluate(dataset, method, protocol=protocol, tree_params=params,
                                   jobs=jobs, dataset_name=_dataset_name(path),
                                   timing=not no_timing, store=store, only=only,
                                   progress=lambda d, t, o=offset: bar.set(o + d, total or t))
                offset += len(keys or [])
                if res is not None:
                    frames.append(res.metrics)
        if part is not None:
            say(f"Shard {shard}: recorded {len(mine)} of {len(everything)} units in "
                f"{output}/units; when every shard is done, run 'treecert merge' on the "
                "output directories.")
            return
    if not frames:
        raise ConfigError("nothing to compare.",
                          "Give evaluate result directories, or --data/--data-dir with --method.")
    _write_comparison(frames, None if output is None else Path(output),
                      list(metric) if metric else None, tol, plots)


def _unit_dir(index: int, path: str) -> str:
    return f"{index}-{_dataset_name(path)}"  # numbered: iris.arff and iris.csv may both run


def _write_comparison(frames, out: Path | None, metric, tol, plots) -> None:
    import pandas as pd

    from treecert.evaluation.compare import to_markdown

    metrics = pd.concat(frames, ignore_index=True)
    comp = api.compare(metrics, metric_names=tuple(metric) if metric else None, tol=tol)
    md = to_markdown(comp)
    sys.stdout.write(md)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        with atomic_writer(out / "metrics.csv") as fh:
            metrics.to_csv(fh, index=False, lineterminator="\n")
        with atomic_writer(out / "comparison.csv") as fh:
            comp.pairs.to_csv(fh, index=False, lineterminator="\n")
        write_text(out / "comparison.json", comp.to_json())
        write_text(out / "comparison.md", md)
        if plots:
            from treecert.evaluation import plots as P

            written = P.scatter_plots(comp.per_dataset, out)
            say(f"Wrote {len(written)} plots to {out}")


def _merge_runs(parts: list[str], output: str) -> None:
    """Final files of an evaluate or compare run from its shards' recorded units."""
    from treecert.evaluation.units import UnitStore

    roots = [Path(p) / "units" for p in parts]
    for root in roots:
        if not root.is_dir():
            raise ConfigError(f"{root.parent}: no units/ here; not an evaluate or compare "
                              "output directory.")
    out = Path(output)
    if output == "-":
        raise ConfigError("merging evaluate/compare shards needs an output directory (-o DIR).")
    compare_docs = [units.read_json(r / "compare.json") if (r / "compare.json").exists() else None
                    for r in roots]
    if any(d != compare_docs[0] for d in compare_docs):
        raise ConfigError(f"{parts[0]} and the other directories are not shards of one run.")
    if compare_docs[0] is None:
        result, bins = finish_run([UnitStore(r) for r in roots])
        _write_evaluation(result, out, False, bins)
        say(f"Merged {len(parts)} shards: wrote {len(result.predictions)} predictions and "
            f"metrics to {output}")
        return
    doc = compare_docs[0]
    frames = [finish_run([UnitStore(r / d) for r in roots])[0].metrics
              for d in doc["datasets"]]
    _write_comparison(frames, out, doc["metrics"], doc["tol"], plots=False)


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


@app.command("prune")
def prune_command(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file (JSON).")],
    output: Annotated[str, typer.Option("-o", "--output", help="Pruned model file to write.")],
    method: Annotated[
        str, typer.Option("--method", help="none, ccp, ebp, laplace_loss, kl or rep.")
    ],
    loss: LossOpt = None,
    cf: CfOpt = None,
    no_raise: NoRaise = False,
    kl_threshold: Annotated[
        float | None,
        typer.Option("--threshold", "--kl-threshold",
                     help="kl: prune below this weighted KL divergence (default 0.01)."),
    ] = None,
    holdout: HoldoutOpt = None,
    cv: CvOpt = None,
    one_se: OneSe = False,
    seed: Seed = 1,
    train: Annotated[
        str | None,
        typer.Option("--train", help="Training data for models saved with --no-embed-data "
                                     "(checked against the model)."),
    ] = None,
    table: Annotated[
        bool, typer.Option("--table", help="ccp: print the alpha sequence as CSV to stdout.")
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Prune a model's tree; print its size before and after.

    Methods: ccp (CART cost-complexity; alpha by --holdout 0.2 or --cv K, --one-se), ebp
    (C4.5/J48 error-based, --cf 0.25, --no-raise), laplace_loss and kl (Bradford et al.),
    rep (reduced-error on a holdout, J48 -R), none. With --loss, ccp, laplace_loss and rep
    prune for the loss matrix.

    Loss file (YAML), keyed by class label, rows = true class, columns = predicted:
    "loss: {bad: {bad: 0, good: 5}, good: {bad: 1, good: 0}}" (predicting good for a bad
    case costs 5). Every class exactly once in rows and columns, costs >= 0.

    Example: treecert prune credit-g.json --method ccp --loss sample_data/credit-g.loss.yaml
    -o credit-g.ccp.json
    """
    _state["quiet"] = quiet
    check_not_input(output, [model_path] + ([train] if train else []))
    if table and method.strip().lower() != "ccp":
        raise ConfigError("--table needs --method ccp.")
    model = read_model(model_path)
    loss_matrix = _read_loss(loss, model.schema.classes)
    data = None
    if train is not None:
        data = _load_matching(train, model.schema, labelled="training")
    _loss_unused_warning(method, loss)
    pruned = api.prune(model, method, loss=loss_matrix, data=data,
                       **_prune_kwargs(cf, no_raise, kl_threshold, holdout, cv, one_se, seed))
    write_text(output, api.model_json(pruned))
    if table:
        import csv

        rows = pruned.pruning["sequence"]
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    say(f"{model_path}: {_pruning_summary(pruned.pruning)}; wrote {output}")


@app.command()
def calibrate(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file (JSON).")],
    data: Annotated[
        str | None,
        typer.Argument(help="Held-out calibration data: ARFF or CSV with the class "
                            "('-' = CSV on stdin)."),
    ] = None,
    output: Annotated[
        str, typer.Option("-o", "--output", help="Calibrated model file to write (JSON).")
    ] = "",
    method: Annotated[
        str, typer.Option("--method", help="binning, venn or empirical_bayes, with options "
                                           "(e.g. 'binning:base=laplace,bins=10').")
    ] = "binning",
    cv: Annotated[
        int | None,
        typer.Option("--cv", help="Calibrate on K-fold out-of-fold forecasts of the training "
                                  "data embedded in the model instead of DATA."),
    ] = None,
    seed: Seed = 1,
    positive: Annotated[
        str | None,
        typer.Option("--positive", help="empirical_bayes: the positive class (default: the "
                                        "second declared class value)."),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Attach calibration to a model; 'treecert predict' then applies it by default.

    binning maps each class's forecast to the class frequency of its MDL (or equal-frequency,
    bins=N) bin on the calibration data. venn with DATA or --cv is an inductive Venn
    predictor (probabilities with [lower, upper] bounds); without either it runs the
    transductive Venn machine on the embedded training data. empirical_bayes fits a Beta
    (Dirichlet) prior on the model's own leaves and takes no DATA.

    Example: treecert calibrate credit-g.json sample_data/credit-g.arff --method binning
    -o credit-g.cal.json
    """
    from treecert.methods.calibrate import describe

    _state["quiet"] = quiet
    if not output:
        raise ConfigError("calibrate needs an output file (-o CALIBRATED.json).")
    check_not_input(output, [model_path] + ([data] if data else []))
    model = read_model(model_path)
    dataset = None
    if data is not None:
        dataset = _load_matching(data, model.schema)
    calibrated = api.calibrate(model, dataset, method=method, cv=cv, seed=seed,
                               positive=positive)
    write_text(output, api.model_json(calibrated))
    say(f"Calibrated {model_path}: {describe(calibrated)}; wrote {output}")


@app.command()
def show(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file (JSON).")],
    fmt: Annotated[str, typer.Option("--format", help="text, dot or json.")] = "text",
    output: Annotated[str, typer.Option("-o", "--output", help="File ('-' = stdout).")] = "-",
) -> None:
    """Print a model's tree: J48-style text, Graphviz DOT or a JSON summary.

    Example: treecert show iris.json --format dot | dot -Tpng > iris.png
    """
    check_not_input(output, [model_path])
    text = api.show(read_model(model_path), fmt)
    write_text(output, text)


@app.command()
def merge(
    parts: Annotated[
        list[str],
        typer.Argument(help="Shard outputs in order: predict CSV files, or evaluate/compare "
                            "output directories."),
    ],
    output: Annotated[
        str, typer.Option("-o", "--output", help="CSV file ('-' = stdout) for predict shards; "
                                                 "directory for evaluate/compare shards.")
    ] = "-",
    quiet: Quiet = False,
) -> None:
    """Put the outputs of a --shard job array back together.

    predict shards (CSV files, given in shard order): checks that the headers agree and
    writes the header once and every file's rows after it; the result is byte-identical to
    an unsharded run. evaluate/compare shard directories: reads the per-unit results they
    recorded, checks that they are of one run and complete, and writes the files an
    unsharded run writes (predictions.csv, metrics.csv/.json; comparison.* for compare).

    Example: treecert merge part-0.csv part-1.csv part-2.csv -o predictions.csv
    """
    _state["quiet"] = quiet
    for part in parts:
        if not Path(part).exists():
            raise ConfigError(f"{part}: no such file or directory.")
    if all(Path(p).is_dir() for p in parts):
        _merge_runs(parts, output)  # may write into a shard directory: units/ is untouched
        return
    check_not_input(output, parts)
    header = None
    with atomic_writer(output) as out:
        for part in parts:
            p = Path(part)
            if p.is_dir():
                raise ConfigError(f"{part}: a directory among CSV files.",
                                  "Merge predict CSV files or evaluate/compare directories.")
            try:
                fh = p.open("r", encoding="utf-8", newline="")
            except FileNotFoundError:
                raise ConfigError(f"{part}: no such file.") from None
            except OSError as exc:
                raise ConfigError(f"{part}: cannot read ({exc.strerror}).") from None
            with fh:
                first = fh.readline()
                if not first:
                    raise ConfigError(f"{part}: empty file; not a predict shard output.")
                if header is None:
                    header = first
                    out.write(first)
                elif first != header:
                    raise ConfigError(f"{part}: its header differs from {parts[0]}'s; not "
                                      "shards of one run.")
                while block := fh.read(1 << 20):
                    out.write(block)
    if output != "-":
        say(f"Merged {len(parts)} shards into {output}")


class Interrupted(BaseException):
    """Raised by our SIGINT handler; not a KeyboardInterrupt, so the CLI framework does not
    turn it into its own exit code 1."""


def _on_sigint(signum, frame):  # pragma: no cover - exercised through a subprocess
    raise Interrupted()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, map user errors to one line and exit code 2.

    Usage errors are the CLI framework's (exit 2); ``TreecertError`` is printed as
    ``Error: ...`` (exit 2); Ctrl-C exits 130 and leaves no partial output (all outputs are
    written through temporary files); any other exception is a bug and keeps its traceback.
    """
    import signal

    command = typer.main.get_command(app)
    previous = signal.getsignal(signal.SIGINT)
    in_main_thread = True
    try:
        signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:  # not the main thread (e.g. a test runner thread)
        in_main_thread = False
    try:
        command.main(args=argv, prog_name="treecert", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except TreecertError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Interrupted:
        print("Interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)
    return 0


def run() -> None:  # console-script entry point
    sys.exit(main())


if __name__ == "__main__":
    run()


