"""How the estimator's parameters become a method's options: typed as the method declares
them, and the library's errors raised as scikit-learn expects (ValueErrors)."""

from __future__ import annotations

import numbers
from contextlib import contextmanager

import numpy as np

from treecert.errors import ConfigError, DataError, InputError, ParameterError, describe


@contextmanager
def _as_value_errors():
    """Errors of the library below as the estimator's: data errors become
    :class:`InputError`, option errors :class:`ParameterError` (both ValueErrors, as
    scikit-learn expects); hints that name command-line flags are dropped."""
    try:
        yield
    except (InputError, ParameterError):
        raise
    except (DataError, ConfigError) as exc:
        hint = None if exc.hint is None or "--" in exc.hint else exc.hint
        kind = InputError if isinstance(exc, DataError) else ParameterError
        raise kind(exc.message, hint) from exc


def _typed(value: object, kind: type, where: str) -> object:
    """``value`` as a method option of type ``kind`` (Python values, not strings)."""
    if isinstance(value, str) and kind is not str:
        from treecert.methods.base import _coerce

        with _as_value_errors():
            return _coerce(value, kind, where)
    if kind is bool:
        if isinstance(value, bool | np.bool_):
            return bool(value)
    elif kind is int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_):
            return int(value)
        if isinstance(value, numbers.Real) and float(value).is_integer():
            return int(value)
    elif kind is float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
            try:
                return float(value)
            except OverflowError:  # an int of hundreds of digits
                raise ParameterError(f"{where}: {describe(value)} is too large for a "
                                     "float.") from None
    elif isinstance(value, str):
        return value
    raise ParameterError(f"{where}: expected {kind.__name__}, got {value!r}.")
