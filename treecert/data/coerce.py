"""Array-like inputs as float arrays, or a one-line :class:`~treecert.errors.DataError`.

The first check of every numeric input of the discretisers (:mod:`treecert.data.discretize`)
and of the metrics (:mod:`treecert.evaluation.metric_inputs`); each caller passes its own
messages, so the errors users see stay those of the function they called.
"""

from __future__ import annotations

import numpy as np

from treecert.errors import DataError

__all__ = ["float_array"]


def float_array(values: object, not_numeric: str, ndim: int, wrong_shape: str) -> np.ndarray:
    """``values`` as a float array with ``ndim`` dimensions.

    Raises ``DataError(not_numeric + ".")`` when ``values`` cannot be converted to floats and
    ``DataError(f"{wrong_shape}, got shape {shape}.")`` when it has another number of
    dimensions.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{not_numeric}.") from exc
    if arr.ndim != ndim:
        raise DataError(f"{wrong_shape}, got shape {arr.shape}.")
    return arr
