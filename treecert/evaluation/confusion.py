"""Weka's per-class summary of an evaluation: the confusion matrix and, per class, TP and FP
rates, precision, recall and F-measure, with their weighted average.

Counted from the ``predicted`` column of the predictions (the class a user is given, the
loss-minimising one under ``--loss``), pooled over folds and repeats, one table per dataset
and method; rows without a known class are left out. The definitions are Weka's
(``weka.classifiers.Evaluation``): precision TP / (TP + FP) and F-measure
2PR / (P + R), 0 where undefined; the weighted average weighs each class by its true count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["confusion_records", "confusion_tables", "confusion_text"]

_KEYS = ["dataset", "method"]


def confusion_tables(predictions: pd.DataFrame, classes: list[str]
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(confusion, per_class): ``confusion`` has a row per dataset, method and true class
    with the count predicted as each class; ``per_class`` a row per dataset, method and
    class, and one ``(weighted avg)`` row per dataset and method."""
    import pandas as pd

    known = predictions[predictions["actual"].notna()]
    columns = {k: known[k].to_numpy() for k in (*_KEYS, "actual", "predicted")
               if k in known.columns}
    confusion_rows, class_rows = confusion_records(columns, classes)
    return pd.DataFrame(confusion_rows), pd.DataFrame(class_rows)


def confusion_records(columns: dict[str, np.ndarray], classes: list[str]
                      ) -> tuple[list[dict], list[dict]]:
    """The rows of :func:`confusion_tables`' two tables (dicts) from the predictions'
    columns ``actual``, ``predicted`` and (when there) ``dataset`` and ``method``, every
    row with a known class."""
    keys = [k for k in _KEYS if k in columns]
    confusion_rows, class_rows = [], []
    groups: dict[tuple, list[int]] = {}  # rows by key, keys in order of first appearance
    key_of = zip(*(columns[k].tolist() for k in keys), strict=True) if keys else \
        [()] * len(columns["actual"])
    for i, key in enumerate(key_of):
        groups.setdefault(key, []).append(i)
    for key, rows in groups.items():
        matrix = _matrix(columns["actual"][rows], columns["predicted"][rows], classes)
        for c, label in enumerate(classes):
            confusion_rows.append({**dict(zip(keys, key, strict=True)), "actual": label,
                                   **dict(zip(classes, matrix[c].tolist(), strict=True))})
        for row in _per_class(matrix, classes):
            class_rows.append({**dict(zip(keys, key, strict=True)), **row})
    return confusion_rows, class_rows


def _matrix(actual: np.ndarray, predicted: np.ndarray, classes: list[str]) -> np.ndarray:
    code = {label: c for c, label in enumerate(classes)}
    actual = np.array([code[str(v)] for v in actual.tolist()], dtype=np.int64)
    predicted = np.array([code[str(v)] for v in predicted.tolist()], dtype=np.int64)
    k = len(classes)
    return np.bincount(actual * k + predicted, minlength=k * k).reshape(k, k)


def _per_class(matrix: np.ndarray, classes: list[str]) -> list[dict]:
    tp = np.diag(matrix).astype(float)
    actual, predicted, total = matrix.sum(axis=1), matrix.sum(axis=0), matrix.sum()

    def ratio(a, b):
        return np.divide(a, b, out=np.zeros_like(a, dtype=float), where=b > 0)

    recall = ratio(tp, actual)
    precision = ratio(tp, predicted)
    fp_rate = ratio(predicted - tp, total - actual)
    f_measure = ratio(2 * precision * recall, precision + recall)
    columns = {"tp_rate": recall, "fp_rate": fp_rate, "precision": precision,
               "recall": recall, "f_measure": f_measure}
    rows = [{"class": label, **{n: float(v[c]) for n, v in columns.items()},
             "support": int(actual[c])} for c, label in enumerate(classes)]
    share = actual / total if total else np.zeros(len(classes))
    rows.append({"class": "(weighted avg)",
                 **{n: float(v @ share) for n, v in columns.items()}, "support": int(total)})
    return rows


def confusion_text(confusion, classes: list[str]) -> str:
    """Weka's ``=== Confusion Matrix ===`` block for every dataset and method of
    ``confusion`` (the first table of :func:`confusion_tables`, a DataFrame, or a
    :class:`~treecert.evaluation.results.RecordTable` of :func:`confusion_records`' rows)."""
    rows = confusion.rows if hasattr(confusion, "rows") else confusion.to_dict("records")
    letters = [_letter(c) for c in range(len(classes))]
    keys = [k for k in _KEYS if rows and k in rows[0]]
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    blocks = []
    for key, group in groups.items():
        counts = np.array([[row[c] for c in classes] for row in group])
        width = max(len(str(counts.max())), *map(len, letters)) + 1
        lines = [f"=== Confusion Matrix: {' '.join(map(str, key))} ===", "",
                 "".join(f"{x:>{width}}" for x in letters) + "   <-- classified as"]
        for c, label in enumerate(classes):
            lines.append("".join(f"{v:>{width}}" for v in counts[c])
                         + f" | {letters[c]:>{width - 1}} = {label}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _letter(index: int) -> str:
    """Weka's names of the classes in the matrix: a, b, ..., z, aa, ab, ..."""
    name = ""
    while True:
        name = chr(ord("a") + index % 26) + name
        index = index // 26 - 1
        if index < 0:
            return name
