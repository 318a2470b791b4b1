"""One function per subcommand: objects in, objects out; no printing, and no paths but the
one :func:`predict_stream` reads in chunks (bounded memory needs the file, not a table).

A notebook user calls these directly; ``treecert.cli`` is a thin layer that reads files,
calls them, and writes the results.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from treecert.errors import ConfigError

if TYPE_CHECKING:  # imported where used: `import treecert.api` stays cheap for the CLI
    import numpy as np
    import pandas as pd

    from treecert.data.schema import Dataset
    from treecert.data.stream import Chunk, SchemaReader
    from treecert.tree.model import Model


def train(
    data: Dataset,
    *,
    criterion: str = "info_gain",
    min_leaf: float = 2.0,
    max_depth: int | None = None,
    min_gain: float = 0.0,
    cp: float = 0.0,
    binary_splits: bool = False,
    threshold: str = "midpoint",
    collapse: bool = False,
    leaf: str = "frequency",
    alpha: float = 1.0,
    m: float = 2.0,
    max_features: str | int | float | None = None,
    seed: int = 1,
    embed_data: bool = True,
    method: str | None = None,
) -> Model:
    """Grow a tree on ``data`` and wrap it as a :class:`Model` (training data embedded).

    ``max_features`` searches a random subset of the attributes at each node, drawn with
    ``seed`` (:class:`~treecert.tree.classifier.DecisionTree`). ``method`` makes the
    model predict with that method by default; an ensemble (``bagging``,
    ``calibrated_bagging``, ``forest``) is grown now and stored with its calibration, so
    ``predict`` never regrows it (needs ``embed_data`` while growing)."""
    from treecert.data.schema import Dataset
    from treecert.tree.classifier import DecisionTree
    from treecert.tree.model import Model

    estimator = DecisionTree(
        criterion=criterion, min_leaf=min_leaf, max_depth=max_depth, min_gain=min_gain,
        cp=cp, binary_splits=binary_splits, threshold=threshold, collapse=collapse,
        leaf=leaf, alpha=alpha, m=m, max_features=max_features, random_state=seed,
    ).fit(data)
    training = None
    if embed_data:
        keep = data.y >= 0
        training = Dataset(
            data.schema, data.X[keep], data.y[keep], data.weights[keep], source=data.source
        )
    method_text = estimator.leaf
    if estimator.leaf == "laplace" and alpha != 1.0:
        method_text = f"laplace:alpha={alpha:g}"
    elif estimator.leaf == "m_estimate" and m != 2.0:
        method_text = f"m_estimate:m={m:g}"
    model = Model(estimator=estimator, training_data=training, method=method_text)
    if method is None:
        return model
    from treecert.methods import METHODS, parse_method_spec
    from treecert.methods.calibrate import STORED_ENSEMBLES
    from treecert.methods.calibrate import calibrate as _calibrate

    spec = parse_method_spec(method, METHODS)
    if spec.name in STORED_ENSEMBLES:
        stored = _calibrate(Model(estimator, training if training is not None else
                                  Dataset(data.schema, data.X[data.y >= 0],
                                          data.y[data.y >= 0],
                                          data.weights[data.y >= 0], source=data.source),
                                  method_text), method=spec, seed=seed)
        stored.training_data = training
        return stored
    model.method = spec.text or spec.name
    return model


def predictor(model: Model, *, method: str | None = None, loss: np.ndarray | None = None,
              jobs: int = 1, explain: bool = False):
    """The fitted method that :func:`predict` uses (fit once, then score any number of
    chunks with :func:`predict_with`). ``explain`` checks that the method has a tree to
    explain (before any row is scored) and asks it for its per-label components."""
    from treecert.errors import ModelFileError
    from treecert.methods import METHODS, make_method, parse_method_spec

    spec = method
    if spec is None:  # the model file's own method, checked as the file's (a work bound is
        try:  # a limit there, not a warning)
            spec = parse_method_spec(model.method or model.estimator.leaf, METHODS,
                                     trusted=False)
        except ModelFileError as exc:
            raise ModelFileError(f"{model.source}: {exc.message}", exc.hint) from None
    params = model.estimator.get_params()
    if loss is not None:
        params["loss"] = loss  # for methods that prune with a loss (e.g. prune=laplace_loss)
    runner = make_method(spec, params).adopt(model)
    runner.jobs = jobs
    if explain:
        from treecert.evaluation.explain import explained_tree

        runner.explain = True
        runner.explained_tree_ = explained_tree(runner)
    return runner


def predict_with(runner, model: Model, data: Dataset, *, id_column: str | None = None,
                 loss: np.ndarray | None = None, row_offset: int = 0) -> pd.DataFrame:
    """Score ``data`` with a :func:`predictor`; ``row`` numbers start at ``row_offset``.
    A predictor made with ``explain=True`` adds the columns of
    :mod:`treecert.evaluation.explain` (leaf, leaf_share, leaf_size, path) and the
    method's per-label components. The table of :func:`predict_columns`, as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(predict_columns(runner, model, data, id_column=id_column, loss=loss,
                                        row_offset=row_offset))


def predict_columns(runner, model: Model, data: Dataset, *, id_column: str | None = None,
                    loss: np.ndarray | None = None, row_offset: int = 0
                    ) -> dict[str, np.ndarray]:
    """:func:`predict_with`'s table as named numpy columns, without pandas: what the command
    line writes (:func:`treecert.data.csv_writer.write_columns`), so that a short ``predict``
    does not import pandas."""
    from treecert.evaluation.frames import prediction_columns

    pred = runner.predict(data)
    columns = pred.columns
    if runner.explain:
        from treecert.evaluation.explain import leaf_columns

        columns = {**leaf_columns(runner.explained_tree_, model.schema, data.X), **columns}
    return prediction_columns(
        data, pred.proba, model.schema.classes, certainty=pred.certainty, lower=pred.lower,
        upper=pred.upper, id_column=id_column, extra_columns=columns, loss=loss,
        row_offset=row_offset,
    )


def predict(
    model: Model, data: Dataset, *, id_column: str | None = None, method: str | None = None,
    loss: np.ndarray | None = None, jobs: int = 1, explain: bool = False,
) -> pd.DataFrame:
    """Score ``data`` (aligned to the model's schema).

    ``method`` (a registry spec such as ``'laplace:alpha=0.5'``) overrides the model's own
    method; transductive methods use the training data embedded in the model. With
    ``loss`` (``L[true, predicted]``, see :mod:`treecert.pruning.loss`) the predicted class is the
    one of minimum expected loss and an ``expected_loss`` column is added. Every instance
    is scored on its own, so scoring the rows in chunks (:func:`predictor` once, then
    :func:`predict_with` per chunk) gives the same rows. ``explain`` adds the columns that
    say why (:mod:`treecert.evaluation.explain`).
    """
    runner = predictor(model, method=method, loss=loss, jobs=jobs, explain=explain)
    return predict_with(runner, model, data, id_column=id_column, loss=loss)


@dataclass
class PredictedChunk:
    """One chunk of a :class:`PredictionStream`: rows ``row_offset`` to
    ``row_offset + data.n_samples`` of the input, aligned to the model's schema (``data``),
    their predictions as named numpy columns (``columns``, :func:`predict_columns`'s table),
    and how much of the input has been read (``fraction``, for progress)."""

    row_offset: int
    data: Dataset
    columns: dict[str, np.ndarray]
    fraction: float


class PredictionStream:
    """The predictions of a data file, chunk by chunk (:func:`predict_stream`).

    ``total`` is the number of rows it will predict when known before reading (a shard:
    the file is counted first), else None; ``file_rows`` the file's rows, counted for a
    shard (None otherwise). ``warnings`` holds, once the chunks have been
    read, what reading the whole file at once would have warned about (values the model
    never saw). Iterating it is :meth:`chunks` without a progress hook.
    """

    def __init__(self, runner, model: Model, reader: SchemaReader, *,
                 rows: tuple[int, int] | None, id_column: str | None,
                 loss: np.ndarray | None) -> None:
        self.runner, self.model, self.reader = runner, model, reader
        self.rows, self.id_column, self.loss = rows, id_column, loss
        self.total = None if rows is None else rows[1] - rows[0]
        self.file_rows: int | None = None

    @property
    def warnings(self) -> list[str]:
        return self.reader.warnings

    def __iter__(self) -> Iterator[PredictedChunk]:
        return self.chunks()

    def chunks(self, progress: Callable[[Chunk], AbstractContextManager] | None = None
               ) -> Iterator[PredictedChunk]:
        """The predicted chunks, in file order. ``progress(chunk)``, when given, returns a
        context entered while that chunk is scored (the command line's progress bar).

        Rows selected by no chunk (a shard of a file with fewer rows than shards) give one
        chunk of no rows, so that the caller still learns the columns (the header)."""
        any_rows = False
        for chunk in self.reader.chunks(self.rows):
            with progress(chunk) if progress is not None else nullcontext():
                columns = self._columns(chunk.data, chunk.row_offset)
            any_rows = True
            yield PredictedChunk(chunk.row_offset, chunk.data, columns, chunk.fraction)
        if not any_rows:  # the columns of the first row, with no row
            first = next(iter(self.reader.chunks((0, 1))))
            columns = self._columns(first.data, 0)
            yield PredictedChunk(self.rows[0] if self.rows is not None else 0,
                                 first.data.subset(slice(0, 0)),
                                 {name: col[:0] for name, col in columns.items()}, 1.0)

    def _columns(self, data: Dataset, row_offset: int) -> dict[str, np.ndarray]:
        return predict_columns(self.runner, self.model, data, id_column=self.id_column,
                               loss=self.loss, row_offset=row_offset)


def predict_stream(model: Model, source: str | Path, *, method: str | None = None,
                   loss: np.ndarray | None = None, jobs: int = 1, explain: bool = False,
                   id_column: str | None = None, chunk_bytes: int = 1 << 20,
                   shard: tuple[int, int] | None = None, fmt: str | None = None
                   ) -> PredictionStream:
    """Score a data file in chunks, in memory bounded by the chunk: what ``treecert predict``
    runs (the command line only writes the chunks).

    ``source`` is an ARFF or CSV file (``.gz`` too; ``'-'``: standard input; a name that
    does not give the format is read by its content; ``fmt`` decides instead), read about
    ``chunk_bytes`` of text at a time and aligned to the model's schema
    (:class:`treecert.data.stream.SchemaReader`).
    ``shard = (i, n)`` scores only rows ``[i·N//n, (i+1)·N//n)`` of the file's N rows (it
    is read once more to count them), with their row numbers in the whole file. The other
    options are :func:`predict`'s. Each chunk's ``columns`` are :func:`predict_columns`'s
    table of its rows (every row is scored on its own, so chunks change no value); written
    in order with :func:`treecert.data.csv_writer.write_columns` (the header with the first
    chunk only), they are the bytes ``treecert predict`` writes.

    Example::

        stream = predict_stream(model, "sample_data/iris.csv", method="tpce")
        for chunk in stream:
            use(chunk.row_offset, chunk.columns["predicted"], chunk.columns["certainty"])
        print(stream.warnings)
    """
    from treecert.data.stream import SchemaReader
    from treecert.parallel import shard_bounds

    reader = SchemaReader(source, model.schema, fmt=fmt, id_column=id_column,
                          chunk_bytes=chunk_bytes)
    file_rows = None if shard is None else reader.count_rows()
    rows = None if shard is None else shard_bounds(file_rows, *shard)
    runner = predictor(model, method=method, loss=loss, jobs=jobs, explain=explain)
    stream = PredictionStream(runner, model, reader, rows=rows, id_column=id_column, loss=loss)
    stream.file_rows = file_rows
    return stream


def prune(
    model: Model,
    method: str = "none",
    *,
    loss: np.ndarray | None = None,
    cf: float | None = None,
    subtree_raising: bool | None = None,
    kl_threshold: float | None = None,
    kl_unit: str | None = None,
    holdout: float | None = None,
    cv: int | None = None,
    one_se: bool | None = None,
    seed: int = 1,
    data: Dataset | None = None,
) -> Model:
    """A new model whose tree is ``model``'s pruned with ``method``
    (see :mod:`treecert.pruning.prune`).

    ``loss`` is ``L[true, predicted]`` in the model's class order. ``data`` is the training
    data; by default the data embedded in the model. Given data is checked against the
    model: its sha256 when the model records one, and in any case the tree's class counts
    at every node must be reproduced by routing it through the tree. The returned model
    records the pruning in ``Model.pruning`` (method, options, sizes before and after, the
    loss matrix, ccp's α sequence and choice, and any earlier pruning as ``previous``).
    """
    from treecert.data.schema import Dataset
    from treecert.pruning.common import PruneOptions, check_training_data
    from treecert.pruning.prune import prune_tree
    from treecert.tree.classifier import DecisionTree
    from treecert.tree.model import Model, data_sha256

    options = PruneOptions(method=method, cf=cf, subtree_raising=subtree_raising,
                           kl_threshold=kl_threshold, kl_unit=kl_unit, holdout=holdout, cv=cv,
                           one_se=one_se, seed=seed)
    if data is None:
        data = model.training_data
        if data is None and options.needs_data:
            raise ConfigError(
                f"pruning with {options.method} needs the training data, but the model was "
                "saved with --no-embed-data.",
                "Give the training file with --train FILE (or retrain without "
                "--no-embed-data).",
            )
    elif options.needs_data:
        keep = data.y >= 0
        data = Dataset(data.schema, data.X[keep], data.y[keep], data.weights[keep],
                       source=data.source)
        expected = model.training_sha256
        if expected is not None and data_sha256(data.X, data.y, data.weights) != expected:
            raise ConfigError(
                f"{data.source}: not the data the model was trained on (sha256 differs from "
                "the model's training_data).",
                "Give the original training file.",
            )
    if options.needs_data:
        check_training_data(model.tree, data)
    params = model.estimator.get_params()
    tree, record = prune_tree(model.tree, options, data=data, params=params, loss=loss)
    classes = model.schema.classes
    if loss is not None:
        record["loss"] = {t: {p: float(loss[i, j]) for j, p in enumerate(classes)}
                          for i, t in enumerate(classes)}
    if model.pruning is not None:
        record["previous"] = model.pruning
    if model.calibration is not None:
        record["calibration_dropped"] = True
    estimator = DecisionTree.from_tree(tree, model.schema, params)
    return Model(estimator=estimator, training_data=model.training_data, method=model.method,
                 pruning=record, calibration=None, extra=dict(model.extra))


def calibrate(model: Model, data: Dataset | None = None, *, method: str, cv: int | None = None,
              seed: int = 1, positive: str | None = None) -> Model:
    """A copy of ``model`` carrying calibration state; see :mod:`treecert.methods.calibrate`.

    ``data`` is held-out calibration data, or ``cv=K`` uses out-of-fold forecasts of the
    embedded training data. ``positive`` names the positive class of ``empirical_bayes``.
    """
    from treecert.methods.calibrate import calibrate as _calibrate
    from treecert.methods.calibrate import with_positive

    spec = with_positive(method, positive) if positive is not None else method
    return _calibrate(model, data, method=spec, cv=cv, seed=seed)


def evaluate(data: Dataset, methods: list[str], **kwargs):
    """Cross-validate methods on ``data``; see :func:`treecert.evaluation.experiment.evaluate`."""
    from treecert.evaluation.experiment import evaluate as _evaluate

    return _evaluate(data, methods, **kwargs)


def evaluate_many(datasets: list[tuple[Dataset, dict]], methods: list[str], *, jobs: int = 1,
                  progress=None, on_unit=None, **common) -> list:
    """:func:`evaluate` on many datasets, each ``(data, its own keyword arguments)`` with
    ``common`` keyword arguments for all, their units scheduled together (the costliest
    first across datasets); one result per dataset, None for a shard's partial run."""
    from treecert.evaluation.experiment import EvaluationRun, evaluate_runs

    runs = [EvaluationRun(data, methods, jobs=jobs, **common, **own) for data, own in datasets]
    return evaluate_runs(runs, jobs=jobs, progress=progress, on_unit=on_unit)


def compare(metrics: pd.DataFrame, **kwargs):
    """Compare methods over datasets; see :func:`treecert.evaluation.compare.compare`."""
    from treecert.evaluation.compare import compare as _compare

    return _compare(metrics, **kwargs)


def show(model: Model, fmt: str = "text") -> str:
    """The tree as J48-style ``text``, Graphviz ``dot`` or a ``json`` summary.

    Text and DOT leaves also show the class probabilities of the model's own leaf estimate
    (``frequency``, ``laplace`` or ``m_estimate`` with its parameter), which is what a leaf
    method predicts for an instance that reaches that leaf alone.
    """
    from treecert.tree import render

    tree, schema = model.tree, model.schema
    est = model.estimator
    if fmt == "dot":
        return render.to_dot(tree, schema, tree.leaf_estimates(est.leaf, alpha=est.alpha,
                                                               m=est.m))
    if fmt == "text":
        return render.to_text_with_estimates(tree, schema, est.leaf, est.alpha, est.m)
    if fmt == "json":
        extra = {
            "method": model.method,
            "pruning": model.pruning,
            "calibrated": model.calibration is not None,
            "embedded_training_rows": (
                None if model.training_data is None else model.training_data.n_samples
            ),
        }
        return render.to_json_summary(tree, schema, model.estimator.get_params(), extra)
    raise ConfigError(f"unknown format '{fmt}'.", "Choose text, dot or json.")


def model_json(model: Model) -> str:
    """The model file's text (compact JSON, one line)."""
    return model.dumps()


def load_model_json(text: str, source: str = "<model>") -> Model:
    from treecert.tree.model import Model

    return Model.from_json(json.loads(text), source=source)
