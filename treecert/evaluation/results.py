"""evaluate's results (:class:`EvaluationResult`) and their tables without pandas.

A short ``evaluate`` (a leaf method's cross-validation of a small file) would spend half its
CPU time importing pandas (about 0.3 CPU-s) for tables it only writes. :class:`RecordTable`
(rows as dicts, ``pandas.DataFrame(rows)``) and :class:`PredictionTable` (the per-repeat
parts of ``predictions.csv``, ``pandas.concat`` of their frames) hold a table as pandas
would be given it: ``frame()`` makes that DataFrame (for Python callers), ``columns()`` the
same columns as numpy arrays with the dtypes pandas would infer, or None where this module
does not reproduce pandas' inference (values of mixed kinds), and the caller then uses the
frame. :func:`write_csv` writes either with the bytes of ``to_csv``.
"""

from __future__ import annotations

import math
from typing import IO, TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EvaluationResult", "PredictionTable", "RecordTable", "fold_summary",
           "metrics_document", "write_csv"]

_MISSING = object()
_PLAIN = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(bool), np.dtype(object))


def _column(values: list) -> np.ndarray | None:
    """One column from its values (``_MISSING`` where a row lacks the key) as
    ``pandas.DataFrame`` infers it: int64, float64 (ints with a missing value, or floats),
    bool, or text (object, None where missing); None for any other mix."""
    present = [v for v in values if v is not _MISSING]
    missing = len(present) < len(values)
    if not present:
        return None
    if all(isinstance(v, bool | np.bool_) for v in present):
        return None if missing else np.array(present, dtype=bool)
    if all(isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)
           for v in present):
        if not missing:
            return np.array(present, dtype=np.int64)
        return np.array([math.nan if v is _MISSING else float(v) for v in values])
    if all(isinstance(v, float | np.floating | int | np.integer)
           and not isinstance(v, bool | np.bool_) for v in present):
        return np.array([math.nan if v is _MISSING else float(v) for v in values],
                        dtype=np.float64)
    if all(isinstance(v, str) for v in present):
        return np.array([None if v is _MISSING else v for v in values], dtype=object)
    return None


def _records(columns: dict[str, np.ndarray]) -> list[dict]:
    """``DataFrame.to_dict(orient="records")`` of these columns: Python scalars, a
    missing text value as NaN."""
    names = list(columns)
    lists = [[math.nan if v is None else v for v in col.tolist()] for col in columns.values()]
    return [dict(zip(names, row, strict=True)) for row in zip(*lists, strict=True)]


class RecordTable:
    """``pandas.DataFrame(rows, columns=names)``, kept as its rows until a DataFrame is
    asked for."""

    def __init__(self, rows: list[dict], names: list[str] | None = None) -> None:
        self.rows = rows
        self.names = names

    def __len__(self) -> int:
        return len(self.rows)

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.names)

    def columns(self) -> dict[str, np.ndarray] | None:
        names = self.names
        if names is None:  # the keys in order of first appearance, as pandas takes them
            names = list(dict.fromkeys(k for row in self.rows for k in row))
        if not self.rows or not names:
            return None
        out = {}
        for name in names:
            col = _column([row.get(name, _MISSING) for row in self.rows])
            if col is None:
                return None
            out[name] = col
        return out

    def records(self) -> list[dict] | None:
        """``frame().to_dict(orient="records")``, or None (see :meth:`columns`)."""
        columns = self.columns()
        return None if columns is None else _records(columns)


class PredictionTable:
    """The per-instance predictions of an evaluation: one part per (method, repeat), each
    ``dataset``, ``method``, ``repeat`` and ``fold`` then the columns of
    :func:`~treecert.evaluation.frames.prediction_columns`; as a DataFrame, the parts'
    frames concatenated (``pandas.concat``, a column that a part lacks missing there)."""

    def __init__(self) -> None:
        self.parts: list[tuple[dict[str, Any], dict[str, np.ndarray]]] = []

    def add(self, head: dict[str, Any], columns: dict[str, np.ndarray]) -> None:
        """One part: ``head`` (dataset, method, repeat: scalars; fold: an array) goes in
        front of ``columns``."""
        self.parts.append((head, columns))

    def __len__(self) -> int:
        return sum(len(cols["row"]) for _, cols in self.parts)

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        frames = []
        for head, columns in self.parts:
            frame = pd.DataFrame(columns)
            for name, value in reversed(head.items()):
                frame.insert(0, name, value)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def columns(self) -> dict[str, np.ndarray] | None:
        """The concatenated columns, or None where pandas' result is not reproduced here
        (a column of different kinds in different parts, other than ints and floats)."""
        full = []
        for head, columns in self.parts:
            n = len(columns["row"])
            part = {k: (np.asarray(v) if np.ndim(v) else
                        np.full(n, v, dtype=object if isinstance(v, str) else None))
                    for k, v in head.items()}
            full.append({**part, **{k: np.asarray(v) for k, v in columns.items()}})
        if not full:
            return None
        names = list(dict.fromkeys(k for part in full for k in part))
        out = {}
        for name in names:
            have = [part[name] for part in full if name in part]
            if any(a.dtype not in _PLAIN for a in have):
                return None  # e.g. float32, which pandas keeps and writes in its own way
            kinds = {a.dtype.kind for a in have}
            lacking = len(have) < len(full)
            if kinds == {"i"} and not lacking:
                dtype = np.int64
            elif kinds <= {"i", "f"}:
                dtype = np.float64
            elif kinds == {"O"} and all(isinstance(v, str) for a in have for v in a.tolist()):
                dtype = object
            elif kinds == {"b"} and not lacking:
                dtype = bool
            else:
                return None
            fill = None if dtype is object else math.nan
            out[name] = np.concatenate([
                part[name].astype(dtype) if name in part
                else np.full(len(part["row"]), fill, dtype=dtype) for part in full])
        return out


def write_csv(table, fh: IO[str]) -> None:
    """``table`` (a DataFrame, :class:`RecordTable` or :class:`PredictionTable`) as the
    bytes of :func:`treecert.data.csv_writer.frame_to_csv` of its DataFrame; a table given
    as rows is written without pandas when :meth:`~RecordTable.columns` reproduces
    pandas' columns."""
    from treecert.data.csv_writer import frame_to_csv, write_columns

    if isinstance(table, RecordTable | PredictionTable):
        columns = table.columns()
        if columns is not None:
            return write_columns(columns, fh)
        table = table.frame()
    frame_to_csv(table, fh)


#: The summary's columns (:func:`fold_summary`).
SUMMARY_COLUMNS = ["dataset", "method", "metric", "folds", "mean", "std", "min", "max"]
#: The per-fold columns that are not metrics (the summary summarises the others).
NOT_METRICS = ("dataset", "method", "repeat", "fold", "n_test")


def summary_table(folds: RecordTable) -> RecordTable | None:
    """:func:`fold_summary` of the per-fold rows, computed
    as pandas computes it (``Series.mean``, ``std(ddof=1)``, ``min``, ``max`` of the values
    that are not NaN), or None when a metric column is not a float column."""
    columns = folds.columns()
    if columns is None:
        return None
    keys = ("dataset", "method")
    metrics = [c for c in columns if c not in NOT_METRICS]
    if any(columns[m].dtype != np.float64 for m in metrics):
        return None
    groups = dict.fromkeys(zip(*(columns[k].tolist() for k in keys), strict=True))
    rows = []
    for dataset, method in groups:
        mask = (columns["dataset"] == dataset) & (columns["method"] == method)
        for metric in metrics:
            v = columns[metric][mask]
            v = v[~np.isnan(v)]
            rows.append({"dataset": dataset, "method": method, "metric": metric,
                         "folds": int(v.size), **_spread(v)})
    return RecordTable(rows, SUMMARY_COLUMNS)


def _spread(v: np.ndarray) -> dict[str, float]:
    """Mean, sample standard deviation, min and max of ``v`` (no NaN), by pandas' formulas
    (``nanops.nanmean`` and ``nanvar``: sums over the values, then one division)."""
    n = v.size
    if n == 0:
        return {"mean": math.nan, "std": math.nan, "min": math.nan, "max": math.nan}
    mean = v.sum(dtype=np.float64) / n
    std = np.sqrt(((mean - v) ** 2).sum(dtype=np.float64) / (n - 1)) if n > 1 else math.nan
    return {"mean": mean, "std": std, "min": v.min(), "max": v.max()}


def _frame_property(name: str, doc: str) -> property:
    """A table of :class:`EvaluationResult` read as a DataFrame (made on first use) and set
    as one."""

    def get(self) -> pd.DataFrame | None:
        return self._frame(name)

    def put(self, frame: pd.DataFrame | None) -> None:
        self._tables[name] = frame

    return property(get, put, doc=doc)


class EvaluationResult:
    """Per-instance predictions and per-method metrics of one dataset.

    ``predictions``, ``metrics`` and ``folds`` are DataFrames, made on first use from the
    tables they are computed as (:class:`RecordTable`, :class:`PredictionTable`), which
    the command line writes without importing pandas (:meth:`table`).
    """

    def __init__(self, predictions, metrics, classes: tuple[str, ...] = (),
                 extra: dict | None = None, folds=None, run: dict | None = None) -> None:
        self._tables = {"predictions": predictions, "metrics": metrics, "folds": folds}
        self.classes = classes
        self.extra = {} if extra is None else extra
        #: What the run was (:func:`~treecert.evaluation.experiment.run_metadata`), for
        #: metrics.json.
        self.run = run

    def table(self, name: str):
        """``"predictions"``, ``"metrics"``, ``"folds"`` or ``"summary"`` as computed: a
        :class:`RecordTable` or :class:`PredictionTable` (a DataFrame once one was set or
        made); None where the table does not exist."""
        if name == "summary":
            folds = self._tables["folds"]
            summary = summary_table(folds) if isinstance(folds, RecordTable) else None
            return self.summary if summary is None else summary
        return self._tables[name]

    def _frame(self, name: str) -> pd.DataFrame | None:
        table = self._tables[name]
        if isinstance(table, RecordTable | PredictionTable):
            table = self._tables[name] = table.frame()
        return table

    predictions = _frame_property("predictions", "Per-instance predictions (DataFrame).")
    metrics = _frame_property("metrics", "One row per method: the pooled metrics.")
    folds = _frame_property(
        "folds", "One row per (method, repeat, fold): the metrics of that fold's test rows "
        "alone (None for leave-one-out, whose one-row folds have no AUC or calibration).")

    @property
    def summary(self) -> pd.DataFrame | None:
        """Mean, std, min and max across folds of every per-fold metric (long format)."""
        return None if self.folds is None else fold_summary(self.folds)


def metrics_document(result: EvaluationResult) -> dict:
    """metrics.json: ``{"format": "treecert-metrics", "version": 1, "run": ..., "metrics":
    [one object per method, as in metrics.csv]}``; NaN is written as null."""
    from treecert.data.fileio import nan_to_none

    metrics = result.table("metrics")
    rows = metrics.records() if isinstance(metrics, RecordTable) else None
    if rows is None:
        rows = result.metrics.to_dict(orient="records")
    return {"format": "treecert-metrics", "version": 1, "run": result.run,
            "metrics": nan_to_none(rows)}


def fold_summary(folds: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method, metric): the number of folds and the mean, sample standard
    deviation (ddof 1; NaN for one fold), min and max of the per-fold values.

    These describe the spread between folds; they are not metrics.csv's values, which are
    computed on all test rows of a repeat pooled (an AUC of pooled rows is not the mean of
    the folds' AUCs).
    """
    import pandas as pd

    keys = ["dataset", "method"]
    metrics = [c for c in folds.columns if c not in NOT_METRICS]
    rows = []
    for (dataset, method), frame in folds.groupby(keys, sort=False):
        for metric in metrics:
            v = frame[metric].dropna()
            rows.append({"dataset": dataset, "method": method, "metric": metric,
                         "folds": int(v.size), "mean": v.mean(), "std": v.std(ddof=1),
                         "min": v.min(), "max": v.max()})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
