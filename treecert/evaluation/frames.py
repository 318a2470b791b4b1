"""The per-instance predictions table shared by ``predict`` and ``evaluate``.

:func:`prediction_columns` lays it out as named numpy columns, which ``predict`` and
``evaluate`` write without pandas (:func:`treecert.data.csv_writer.write_columns`: a short
call does not pay pandas' import); :func:`predictions_frame` is the same table as a
DataFrame, for Python callers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.evaluation.costs import min_expected_loss_predictions

if TYPE_CHECKING:
    import pandas as pd


def predictions_frame(data: Dataset, proba: np.ndarray, classes: tuple[str, ...],
                      **kwargs) -> pd.DataFrame:
    """:func:`prediction_columns` as a DataFrame (same arguments)."""
    import pandas as pd

    return pd.DataFrame(prediction_columns(data, proba, classes, **kwargs))


def prediction_columns(
    data: Dataset,
    proba: np.ndarray,
    classes: tuple[str, ...],
    *,
    certainty: np.ndarray | None = None,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    id_column: str | None = None,
    row_offset: int = 0,
    extra_columns: dict[str, np.ndarray] | None = None,
    loss: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The per-instance table shared by ``predict`` and ``evaluate``, column by column.

    Columns: ``row`` (0-based, in input order), the ``id_column`` if asked, ``actual`` when
    the data has the class, ``predicted``, ``p_<label>`` per class in the model's order,
    ``certainty`` (probability of the predicted class unless a method says otherwise), then
    ``lower_<label>``/``upper_<label>`` where a method gives bounds.

    With ``loss`` (``L[true, predicted]``), ``predicted`` is the class of minimum expected
    loss ``argmin_j Σ_c p_c L[c, j]`` (Bradford et al. sect. 2.1) and a column
    ``expected_loss`` holds that minimum.
    """
    n = proba.shape[0]
    cols: dict[str, np.ndarray] = {"row": np.arange(row_offset, row_offset + n)}
    if id_column is not None:
        cols[id_column] = _id_values(data, id_column)
    labels = np.asarray(classes, dtype=object)
    if data.has_class:
        cols["actual"] = np.where(data.y >= 0, labels[np.maximum(data.y, 0)], "")
    if loss is None:
        pred = np.argmax(proba, axis=1)
    else:
        pred = min_expected_loss_predictions(proba, loss)
    cols["predicted"] = labels[pred]
    for k, c in enumerate(classes):
        cols[f"p_{c}"] = proba[:, k]
    cols["certainty"] = proba[np.arange(n), pred] if certainty is None else certainty
    if loss is not None:
        cols["expected_loss"] = (proba @ np.asarray(loss, dtype=float))[np.arange(n), pred]
    if extra_columns:
        cols.update(extra_columns)
    if lower is not None and upper is not None:
        for k, c in enumerate(classes):
            cols[f"lower_{c}"] = lower[:, k]
        for k, c in enumerate(classes):
            cols[f"upper_{c}"] = upper[:, k]
    return cols


def _id_values(data: Dataset, id_column: str) -> np.ndarray:
    if id_column in data.extra:
        return data.extra[id_column]
    names = data.schema.feature_names
    if id_column in names:
        j = names.index(id_column)
        attr = data.schema.attributes[j]
        col = data.X[:, j]
        if attr.is_nominal:
            vals = np.asarray(attr.values, dtype=object)
            return np.where(np.isnan(col), "", vals[np.nan_to_num(col).astype(int)])
        return col
    raise ConfigError(
        f"{data.source}: --id column '{id_column}' is not in the file.",
        f"Columns available: {', '.join(list(data.extra) + names)}.",
    )
