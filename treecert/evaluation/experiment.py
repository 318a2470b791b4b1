"""The experiment engine behind ``evaluate``: protocols, per-instance predictions, metrics.

Protocols: stratified k-fold (optionally repeated), leave-one-out, fixed fold ids from a
file, or a separate test file. Every (repeat, fold, method) unit is independent, so units run
in parallel (joblib or Dask), the slowest first by :func:`unit_cost`, and are then put back
in a fixed order: the output does not depend on the number of jobs or the order they finish.

Stratified folds follow the recipe of the shared ``*.folds.csv`` files: a
``numpy.random.RandomState(seed)`` permutation, a stable sort by class, then fold ids
assigned round-robin. With ``seed=1`` (the default) this reproduces those files exactly.
Repeat r uses seed ``seed + r``. With fold ids from a file and ``repeats`` > 1, the first
repeat uses the file's folds and repeat r > 0 new stratified folds (as many as the file
has) with seed ``seed + r``, so a repeated run never silently runs once.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from treecert.data.folds import DEFAULT_SEED, stratified_folds, weka_folds
from treecert.data.schema import Dataset, Schema
from treecert.errors import ConfigError, DataError
from treecert.evaluation import interval_metrics, metric_table, point_metrics
from treecert.evaluation.frames import prediction_columns
from treecert.evaluation.results import (  # the result's names, importable from here too
    EvaluationResult,
    PredictionTable,
    RecordTable,
    fold_summary,  # noqa: F401
    metrics_document,  # noqa: F401
)
from treecert.evaluation.units import UnitResult, UnitStore
from treecert.methods import METHODS, MethodSpec, Prediction, make_method, parse_method_spec
from treecert.parallel import run_unordered

#: ERC bins and interval AUC of evaluate/compare unless asked otherwise.
DEFAULT_BINS = "equal_width"
DEFAULT_INTERVAL_AUC = "exact"


@dataclass
class Protocol:
    """How to split the data: ``cv`` (stratified k-fold), ``weka`` (the k folds Weka's
    ``-x k -s seed`` makes), ``loo``, ``folds`` (given ids) or ``test`` (train on the data,
    test on a separate dataset)."""

    kind: str = "cv"
    n_folds: int = 10
    repeats: int = 1
    seed: int = DEFAULT_SEED
    fold_ids: np.ndarray | None = None
    test: Dataset | None = None

    def splits(self, data: Dataset) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
        """(repeat, fold, train rows, test rows) for every unit, in a fixed order."""
        y = data.y
        labelled = np.flatnonzero(y >= 0)
        if self.kind == "test":
            return [(0, 0, labelled, np.arange(self.test.n_samples))]
        if self.kind == "loo":
            return [(0, int(i), np.delete(labelled, k), np.array([i]))
                    for k, i in enumerate(labelled)]
        out = []
        for r in range(self.repeats):
            if self.kind == "folds" and r == 0:
                ids = self.fold_ids[labelled]
            elif self.kind == "folds":  # later repeats: as many new stratified folds
                ids = stratified_folds(y[labelled], self.file_folds(labelled), self.seed + r)
            else:
                assign = weka_folds if self.kind == "weka" else stratified_folds
                ids = assign(y[labelled], self.n_folds, self.seed + r)
            for f in np.unique(ids):
                out.append((r, int(f), labelled[ids != f], labelled[ids == f]))
        return out

    def file_folds(self, labelled: np.ndarray) -> int:
        """How many folds the fold file gives the labelled rows (repeats after the first
        draw that many)."""
        return int(np.unique(self.fold_ids[labelled]).size)


def _run_unit(spec: MethodSpec, m_idx: int, tree_params: dict, train: Dataset,
              test: Dataset, repeat: int, fold: int, rows: np.ndarray) -> UnitResult:
    method = make_method(spec, tree_params)
    if "seed" in method.options and "seed" not in spec.options:
        method.opts["seed"] = tree_params.get("seed", DEFAULT_SEED) + 1000 * repeat + fold
    t0 = time.perf_counter()
    method.fit(train)
    t1 = time.perf_counter()
    pred = method.predict(test)
    t2 = time.perf_counter()
    return [UnitResult(repeat, fold, m_idx, rows, pred, t1 - t0, t2 - t1, method.size, test.y)]


def _run_loo_unit(spec: MethodSpec, m_idx: int, tree_params: dict, data: Dataset,
                  labelled: np.ndarray, jobs: int) -> list[UnitResult]:
    method = make_method(spec, tree_params)
    method.jobs = jobs
    t0 = time.perf_counter()
    method.fit(data.subset(labelled))
    t1 = time.perf_counter()
    pred = method.predict_loo(np.arange(labelled.size))
    t2 = time.perf_counter()
    n = labelled.size
    return [
        UnitResult(0, int(row), m_idx, np.array([row]), pred.take(np.array([k])),
                   (t1 - t0) / n, (t2 - t1) / n, method.size, data.y[[row]])
        for k, row in enumerate(labelled)
    ]


def _run_held_out_unit(spec: MethodSpec, m_idx: int, tree_params: dict, data: Dataset,
                       labelled: np.ndarray, repeat: int, folds: list, jobs: int
                       ) -> list[UnitResult]:
    """A repeat's folds (fold, train rows, test rows) from one fit on the labelled rows,
    which the folds' test rows partition (``predict_held_out``: per fold, the predictions
    and the size of that fold's model); the fit's and the predictions' seconds are shared
    out per fold by test rows."""
    method = make_method(spec, tree_params)
    method.jobs = jobs
    t0 = time.perf_counter()
    method.fit(data.subset(labelled))
    t1 = time.perf_counter()
    preds = method.predict_held_out([np.searchsorted(labelled, te) for _, _, te in folds])
    t2 = time.perf_counter()
    n = sum(te.size for _, _, te in folds)
    return [UnitResult(repeat, f, m_idx, te, pred, (t1 - t0) * te.size / n,
                       (t2 - t1) * te.size / n, size, data.y[te])
            for (f, _, te), (pred, size) in zip(folds, preds, strict=True)]


#: Relative CPU cost of one unit per (row x attribute x class), by method; 1 for the
#: inductive leaf methods (laplace, frequency, ...). Measured as ``fit_seconds +
#: predict_seconds`` of 3-fold CV on diabetes relative to laplace (BENCHMARKS.md,
#: "Scale-out"); it only decides which units start first, never the output.
METHOD_COST = {"tpce": 13.0, "tpce_batch": 13.0, "venn": 14.0, "kk": 4.0, "binning": 9.0,
               "bagging": 1.5, "calibrated_bagging": 48.0, "naive_bayes": 0.03,
               "certified_tree": 14.0}


def unit_cost(method: str, n_rows: int, n_attributes: int, n_classes: int) -> float:
    """Estimated cost of a unit: rows x attributes x classes x the method's factor
    (:data:`METHOD_COST`); evaluate starts the costliest units first, so that no long unit
    starts last while the other workers idle."""
    return float(n_rows) * max(1, n_attributes) * max(1, n_classes) * METHOD_COST.get(method, 1.0)


@dataclass(frozen=True)
class FinishedUnit:
    """A unit that has just finished, for progress lines: which one, its wall time, and how
    many of the run's units are done."""

    dataset: str
    method: str
    repeat: int
    fold: int  # -1: a unit served by one engine (leave-one-out, or a repeat's folds)
    seconds: float
    done: int
    total: int
    scope: str = "fold"  # or "leave-one-out", "folds" (a repeat's, from one engine)


def evaluate(
    data: Dataset,
    methods: list[str],
    *,
    protocol: Protocol | None = None,
    tree_params: dict | None = None,
    loss: np.ndarray | None = None,
    bins: str = DEFAULT_BINS,
    bias_variance: int = 0,
    jobs: int = 1,
    dataset_name: str | None = None,
    timing: bool = True,
    progress: Callable[[int, int], None] | None = None,
    on_unit: Callable[[FinishedUnit], None] | None = None,
    interval_auc: str = DEFAULT_INTERVAL_AUC,
    store: UnitStore | None = None,
    only: list[tuple[int, int, int]] | None = None,
) -> EvaluationResult | None:
    """Cross-validate every method on ``data``; see the module docstring for protocols.

    Metrics are computed on all test predictions of a repeat pooled together, then averaged
    over repeats (``leaves``, ``fit_seconds`` and ``predict_seconds`` are means per fold).
    Methods with bounds also get ``brier_low/high``, ``log_loss_low/high`` and the exact
    ``auc_low/high``; ``interval_auc="endpoints"`` adds the EB paper's endpoint-only AUC
    (``auc_low_endpoints``, ``auc_high_endpoints``).

    With ``store`` (:class:`~treecert.evaluation.units.UnitStore`) every finished unit is
    recorded and units already recorded are read back instead of run (``--resume``);
    ``only`` restricts the run to those unit keys (``--shard``), and then the result is None
    unless every unit is in the store. ``progress(done, total)`` and ``on_unit`` (a
    :class:`FinishedUnit`) are called as each unit finishes; units run costliest first
    (:func:`unit_cost`).
    """
    run = EvaluationRun(data, methods, protocol=protocol, tree_params=tree_params, loss=loss,
                        bins=bins, bias_variance=bias_variance, jobs=jobs,
                        dataset_name=dataset_name, timing=timing, interval_auc=interval_auc,
                        store=store, only=only)
    return evaluate_runs([run], jobs=jobs, progress=progress, on_unit=on_unit)[0]


@dataclass
class EvaluationRun:
    """One dataset's evaluation, as :func:`evaluate` takes it (its arguments but ``jobs``'s
    scheduling, ``progress`` and ``on_unit``), planned: its units, those already recorded,
    and how to run one. :func:`evaluate_runs` runs the units of many such runs together."""

    data: Dataset
    methods: list[str]
    protocol: Protocol | None = None
    tree_params: dict | None = None
    loss: np.ndarray | None = None
    bins: str = DEFAULT_BINS
    bias_variance: int = 0
    jobs: int = 1  # leave-one-out units spend it on their per-instance work
    dataset_name: str | None = None
    timing: bool = True
    interval_auc: str = DEFAULT_INTERVAL_AUC
    store: UnitStore | None = None
    only: list[tuple[int, int, int]] | None = None

    def __post_init__(self) -> None:
        self.protocol = self.protocol or Protocol()
        self.tree_params = dict(self.tree_params or {})
        if self.interval_auc not in ("exact", "endpoints"):
            raise ConfigError(f"unknown --interval-auc '{self.interval_auc}'.",
                              "Choose exact or endpoints.")
        if self.loss is not None:
            # Methods that prune for a loss (e.g. 'laplace:prune=ccp') read it from here.
            self.tree_params["loss"] = np.asarray(self.loss, dtype=float)
        self.specs = [parse_method_spec(m, METHODS) for m in self.methods]
        if not self.specs:
            raise ConfigError("no method given.",
                              "Add --method NAME (e.g. --method laplace).")
        if len({s.text for s in self.specs}) != len(self.specs):
            raise ConfigError("the same --method is given twice.")
        data = self.data
        self.name = self.dataset_name or data.schema.relation or data.source
        self.test_data = self.protocol.test if self.protocol.kind == "test" else data
        self.units = plan_units(data, self.specs, self.protocol, self.tree_params)
        wanted = None if self.only is None else set(self.only)
        self.selected = [k for k in self.units if wanted is None or k in wanted]
        self.labelled = np.flatnonzero(data.y >= 0)
        self.finished: dict[tuple[int, int, int], list[UnitResult]] = {}
        if self.store is not None:
            self.finished = {k: self.store.load(k) for k in self.selected if self.store.has(k)}
        self.todo = [k for k in self.selected if k not in self.finished]

    def runner(self) -> _UnitRunner:
        """What runs this run's units: the data and methods only (it is what is sent to
        the workers, once), not the store nor the results."""
        return _UnitRunner(self.specs, self.tree_params, self.data, self.test_data,
                           self.units, self.labelled, self.jobs)

    def cost(self, key: tuple[int, int, int]) -> float:
        k, _, f = key
        rows = self.labelled.size if f < 0 else sum(a.size for a in self.units[key])
        schema = self.data.schema
        return unit_cost(self.specs[k].name, rows, len(schema.attributes), schema.n_classes)

    def record(self, key: tuple[int, int, int], res: list[UnitResult]) -> None:
        self.finished[key] = res
        if self.store is not None:
            self.store.save(key, res)

    def result(self) -> EvaluationResult | None:
        """The metrics and predictions, once every unit is done (None for a shard)."""
        if len(self.finished) < len(self.units):
            return None  # a shard: the other units are another job's
        results = [r for key in self.units for r in self.finished[key]]
        extra = {}
        if self.bias_variance:
            extra = {k: _bias_variance(self.data, spec, self.tree_params, self.protocol,
                                       self.bias_variance, self.test_data)
                     for k, spec in enumerate(self.specs)}
        run = run_metadata(self.data, self.methods, self.protocol, self.tree_params,
                           self.name, loss=self.loss, bins=self.bins,
                           interval_auc=self.interval_auc, timing=self.timing,
                           bias_variance=self.bias_variance)
        return finalize(results, [s.text for s in self.specs], self.data.schema, self.name,
                        loss=self.loss, bins=self.bins, interval_auc=self.interval_auc,
                        timing=self.timing, extra_metrics=extra, run=run)


@dataclass
class _UnitRunner:
    specs: list[MethodSpec]
    tree_params: dict
    data: Dataset
    test_data: Dataset
    units: dict
    labelled: np.ndarray
    jobs: int

    def __call__(self, key: tuple[int, int, int]):
        """Run one unit: (key, its results, its wall seconds)."""
        t0 = time.perf_counter()
        k, r, f = key
        scope = unit_scope(self.units, key)
        if scope == "leave-one-out":  # served by one engine; its per-instance work uses jobs
            res = _run_loo_unit(self.specs[k], k, self.tree_params, self.data, self.labelled,
                                self.jobs)
        elif scope == "folds":  # a repeat's folds served by one engine, likewise
            res = _run_held_out_unit(self.specs[k], k, self.tree_params, self.data,
                                     self.labelled, r, self.units[key], self.jobs)
        else:
            tr, te = self.units[key]
            res = _run_unit(self.specs[k], k, self.tree_params, self.data.subset(tr),
                            self.test_data.subset(te), r, f, te)
        return key, res, time.perf_counter() - t0


def evaluate_runs(runs: list[EvaluationRun], *, jobs: int = 1,
                  progress: Callable[[int, int], None] | None = None,
                  on_unit: Callable[[FinishedUnit], None] | None = None,
                  ) -> list[EvaluationResult | None]:
    """Every run's result, the units of all runs scheduled together: the costliest first
    across datasets (:func:`unit_cost`: a comparison's large dataset starts before the
    small ones' units fill the workers), results in each run's fixed order whatever order
    they finish in. ``progress(done, total)`` and ``on_unit`` count over all runs."""
    done = sum(len(r.finished) for r in runs)
    total = sum(len(r.selected) for r in runs)
    if progress is not None and total:
        progress(done, total)
    # costliest first; a stable sort keeps the fixed order among equals
    local = sorted(((i, k) for i, r in enumerate(runs) for k in r.todo if k[2] >= 0),
                   key=lambda ik: runs[ik[0]].cost(ik[1]), reverse=True)
    loo = [(i, k) for i, r in enumerate(runs) for k in r.todo if k[2] < 0]

    runners = [run.runner() for run in runs]

    def call(i, key):
        return i, *runners[i](key)

    fresh = (res for _, res in run_unordered(call, local, jobs))
    for i, key, res, seconds in itertools.chain(fresh, itertools.starmap(call, loo)):
        run = runs[i]
        run.record(key, res)
        done += 1
        if progress is not None:
            progress(done, total)
        if on_unit is not None:
            on_unit(FinishedUnit(run.name, run.specs[key[0]].text, key[1], key[2], seconds,
                                 done, total, unit_scope(run.units, key)))
    return [run.result() for run in runs]


def run_metadata(data: Dataset, methods: list[str], protocol: Protocol, tree_params: dict,
                 name: str, *, loss: np.ndarray | None = None, bins: str = DEFAULT_BINS,
                 interval_auc: str = DEFAULT_INTERVAL_AUC, timing: bool = True,
                 bias_variance: int = 0) -> dict:
    """What a run was, for metrics.json: treecert's version, the data (rows and the sha256
    of the data as read, as model files record it), the protocol with its seed, the methods
    and every option that changes a result.

    Deliberately absent: the command line as typed and clock times. A sharded run merged
    later, a resumed run and an uninterrupted one must write the same bytes, and their
    command lines (``--shard``, ``--resume``, ``-o``, ``--jobs``) and clocks differ; the
    options recorded here are the ones that decide the numbers. The result is plain JSON
    (it is stored in the units' run.json and read back by ``merge``).
    """
    from treecert._version import __version__
    from treecert.tree.model import data_sha256

    def described(d: Dataset) -> dict:
        return {"rows": int(d.n_samples), "sha256": data_sha256(d.X, d.y, d.weights)}

    proto: dict = {"kind": protocol.kind, "seed": protocol.seed}
    if protocol.kind in ("cv", "weka"):
        proto.update(folds=protocol.n_folds, repeats=protocol.repeats)
    elif protocol.kind == "folds":
        proto["fold_ids"] = np.asarray(protocol.fold_ids).tolist()
        if protocol.repeats > 1:
            proto["repeats"] = protocol.repeats
            proto["later_repeats"] = "stratified folds, seed + repeat"
    elif protocol.kind == "test":
        proto["test"] = described(protocol.test)
    meta = {
        "treecert_version": __version__,
        "dataset": {"name": name, **described(data)},
        "protocol": proto,
        "methods": [parse_method_spec(m, METHODS).text for m in methods],
        "tree_params": {k: v for k, v in sorted(tree_params.items()) if k != "loss"},
        "loss": None if loss is None else np.asarray(loss, dtype=float).tolist(),
        "bins": bins,
        "interval_auc": interval_auc,
        "timing": bool(timing),
    }
    if bias_variance:
        meta["bias_variance"] = int(bias_variance)
    return json.loads(json.dumps(meta, allow_nan=False))


def unit_keys(data: Dataset, methods: list[str], protocol: Protocol,
              tree_params: dict | None = None) -> list[tuple[int, int, int]]:
    """The (method, repeat, fold) keys of a run, in the order :func:`evaluate` runs them."""
    specs = [parse_method_spec(m, METHODS) for m in methods]
    return list(plan_units(data, specs, protocol, tree_params))


def plan_units(data: Dataset, specs: list[MethodSpec], protocol: Protocol,
               tree_params: dict | None = None) -> dict[tuple[int, int, int], object]:
    """Every unit of a run, keyed (method, repeat, fold), in a fixed order: the splits'
    order, methods within a split, then the units that one engine serves (fold -1): a
    method's leave-one-out, or a repeat of its cross-validation where the method serves
    held-out folds from one engine (``serves_held_out``: TPCE and K&K on data with missing
    values).
    Values are (train rows, test rows); None for those LOO units; for those repeats, the
    repeat's (fold, train rows, test rows)."""
    splits = protocol.splits(data)
    one_engine = {k for k, spec in enumerate(specs)
                  if protocol.kind == "loo" and hasattr(METHODS[spec.name], "predict_loo")}
    held: set[int] = set()
    may = [k for k, spec in enumerate(specs) if hasattr(METHODS[spec.name], "serves_held_out")]
    if may and protocol.kind in ("cv", "weka", "folds") and splits:
        sizes = [tr.size for _, _, tr, _ in splits]
        labelled = data.subset(np.flatnonzero(data.y >= 0))  # what such a unit fits on
        held = {k for k in may
                if make_method(specs[k], tree_params or {}).serves_held_out(labelled, sizes)}
    units: dict = {}
    for r, f, tr, te in splits:
        for k in range(len(specs)):
            if k not in one_engine and k not in held:
                units[(k, r, f)] = (tr, te)
    for k in sorted(one_engine | held):
        if k in one_engine:
            units[(k, 0, -1)] = None
        for r in sorted({r for r, *_ in splits}) if k in held else []:
            units[(k, r, -1)] = [(f, tr, te) for r_, f, tr, te in splits if r_ == r]
    return units


def unit_scope(units: dict, key: tuple[int, int, int]) -> str:
    """What a unit of :func:`plan_units` covers: one ``"fold"``, a method's
    ``"leave-one-out"``, or a repeat's ``"folds"`` from one engine."""
    if key[2] >= 0:
        return "fold"
    return "leave-one-out" if units[key] is None else "folds"


def finalize(results: list[UnitResult], methods: list[str], schema: Schema, name: str, *,
             loss: np.ndarray | None = None, bins: str = DEFAULT_BINS,
             interval_auc: str = DEFAULT_INTERVAL_AUC, timing: bool = True,
             extra_metrics: dict[int, dict] | None = None,
             run: dict | None = None) -> EvaluationResult:
    """Predictions and metrics from every unit's results (fresh or read back from disk).

    With ``run`` (:func:`run_metadata`) the result carries it, and per-fold metrics unless
    the protocol is leave-one-out.
    """
    classes = schema.classes
    predictions, metric_rows, fold_rows = PredictionTable(), [], []
    per_fold = run is not None and run["protocol"]["kind"] != "loo"

    def scores(y, pred):
        out = metric_table.compute_metrics(
            y, pred.proba, certainty=pred.certainty_or_max(), lower=pred.lower,
            upper=pred.upper, loss=loss, bins=bins, reliable=pred.columns.get("reliable"),
        )
        if interval_auc == "endpoints" and pred.lower is not None:
            # The EB paper code's AUC "interval" (AUC of the lower and of the upper
            # vector), next to the exact range auc_low/auc_high, for comparison.
            out["auc_low_endpoints"], out["auc_high_endpoints"] = \
                interval_metrics.auc_bounds_endpoints(y, pred.lower, pred.upper)
        return out

    for k, text in enumerate(methods):
        mine = [r for r in results if r.method == k]
        per_repeat = []
        for rep in sorted({r.repeat for r in mine}):
            parts = sorted((r for r in mine if r.repeat == rep), key=lambda r: r.fold)
            rows = np.concatenate([r.rows for r in parts])
            fold_of = np.concatenate([np.full(r.rows.size, r.fold) for r in parts])
            y = np.concatenate([r.y for r in parts])
            pred = _concat_predictions([r.prediction for r in parts])
            order = np.argsort(rows, kind="stable")
            rows, fold_of, y = rows[order], fold_of[order], y[order]
            pred = pred.take(order)
            test_sub = Dataset(schema, np.empty((rows.size, 0)), y, np.ones(rows.size))
            columns = prediction_columns(
                test_sub, pred.proba, classes, certainty=pred.certainty_or_max(),
                lower=pred.lower, upper=pred.upper, extra_columns=pred.columns, loss=loss,
            )
            columns["row"] = rows
            predictions.add({"dataset": name, "method": text, "repeat": rep,
                             "fold": fold_of}, columns)
            if np.any(y < 0):
                raise DataError(f"{name}: the test data has rows without a class.")
            per_repeat.append(scores(y, pred))
            for r in parts if per_fold else []:
                row = {"dataset": name, "method": text, "repeat": rep, "fold": r.fold,
                       "n_test": int(r.rows.size), **scores(r.y, r.prediction),
                       "leaves": np.nan if r.size is None else float(r.size)}
                if timing:
                    row.update(fit_seconds=r.fit_seconds, predict_seconds=r.predict_seconds)
                fold_rows.append(row)
        row = {"dataset": name, "method": text}
        for key in per_repeat[0]:
            row[key] = float(np.mean([m[key] for m in per_repeat]))
        sizes = [r.size for r in mine if r.size is not None]
        row["leaves"] = float(np.mean(sizes)) if sizes else np.nan
        if timing:
            row["fit_seconds"] = float(np.mean([r.fit_seconds for r in mine]))
            row["predict_seconds"] = float(np.mean([r.predict_seconds for r in mine]))
        row["repeats"] = len(per_repeat)
        row["n_test"] = int(sum(r.rows.size for r in mine) / len(per_repeat))
        row.update((extra_metrics or {}).get(k, {}))
        metric_rows.append(row)
    folds = RecordTable(fold_rows) if per_fold else None
    return EvaluationResult(predictions, RecordTable(metric_rows), classes, folds=folds,
                            run=run)


def _concat_predictions(preds: list[Prediction]) -> Prediction:
    def cat(attr):
        vals = [getattr(p, attr) for p in preds]
        return None if any(v is None for v in vals) else np.concatenate(vals)

    columns = {}
    for key in preds[0].columns:
        columns[key] = np.concatenate([p.columns[key] for p in preds])
    return Prediction(cat("proba"), cat("certainty"), cat("lower"), cat("upper"), columns)


def _bias_variance(data, spec, tree_params, protocol, n_samples, test_data) -> dict:
    """Kohavi & Wolpert's decomposition of the squared error (Bradford et al. sect. 4).

    For each fold of the first repeat, ``n_samples`` bootstrap samples of the training part
    (``RandomState(seed + 7919 * fold)``) train one model each; the decomposition is taken
    over those models' test predictions, pooled over folds.
    """
    ys, runs = [], []
    for r, f, tr, te in protocol.splits(data):
        if r != 0:
            continue
        rng = np.random.RandomState(protocol.seed + 7919 * f)
        test = test_data.subset(te)
        fold_runs = []
        for _ in range(n_samples):
            boot = tr[rng.randint(0, tr.size, tr.size)]
            method = make_method(spec, tree_params).fit(data.subset(boot))
            fold_runs.append(method.predict(test).proba)
        ys.append(test.y)
        runs.append(np.stack(fold_runs))
    out = point_metrics.bias_variance(np.concatenate(ys), np.concatenate(runs, axis=1))
    return {f"bv_{k}": float(v) for k, v in out.items()}
