"""What the Python estimator takes from scikit-learn when it is installed, and stand-ins
following the same conventions when it is not.

scikit-learn is an optional dependency (the ``test`` extra installs it): with it,
:class:`~treecert.estimator.TreecertClassifier` is a real ``ClassifierMixin`` +
``BaseEstimator`` (tags, ``clone``, metadata routing, the HTML repr), its not-fitted error is
scikit-learn's ``NotFittedError`` and a column-vector ``y`` raises its
``DataConversionWarning``. Without it the stand-ins below give the same ``get_params`` /
``set_params`` / ``score`` / ``repr`` behaviour, so ``import treecert`` and the estimator work
either way. This module imports scikit-learn, so only :mod:`treecert.estimator` imports it,
and only when a user asks for the estimator.
"""

from __future__ import annotations

import inspect

import numpy as np

from treecert.errors import ConfigError

try:  # scikit-learn is optional: see the module docstring
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.exceptions import DataConversionWarning
    from sklearn.exceptions import NotFittedError as _NotFittedBase

    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
    HAVE_SKLEARN = False

    class _NotFittedBase(ValueError, AttributeError):  # type: ignore[no-redef]
        """scikit-learn's NotFittedError: both a ValueError and an AttributeError."""

    class DataConversionWarning(UserWarning):  # type: ignore[no-redef]
        """Input data was converted (scikit-learn's warning of the same name)."""

    class BaseEstimator:  # type: ignore[no-redef]
        """scikit-learn's parameter conventions: every ``__init__`` argument is stored
        unchanged as an attribute of the same name; ``get_params`` reads them back."""

        @classmethod
        def _get_param_names(cls) -> list[str]:
            init = cls.__init__
            if init is object.__init__:
                return []
            params = inspect.signature(init).parameters.values()
            return sorted(p.name for p in params
                          if p.name != "self" and p.kind != p.VAR_KEYWORD)

        def get_params(self, deep: bool = True) -> dict:
            out = {}
            for key in self._get_param_names():
                value = getattr(self, key)
                if deep and hasattr(value, "get_params") and not isinstance(value, type):
                    out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
                out[key] = value
            return out

        def set_params(self, **params):
            valid = self.get_params(deep=True)
            nested: dict[str, dict] = {}
            for key, value in params.items():
                key, delim, sub_key = key.partition("__")
                if key not in valid:
                    raise ValueError(
                        f"Invalid parameter {key!r} for estimator {self!r}. Valid parameters "
                        f"are: {sorted(self._get_param_names())!r}."
                    )
                if delim:
                    nested.setdefault(key, {})[sub_key] = value
                else:
                    setattr(self, key, value)
            for key, sub_params in nested.items():
                getattr(self, key).set_params(**sub_params)
            return self

        def __repr__(self) -> str:
            defaults = {p.name: p.default for p in
                        inspect.signature(type(self).__init__).parameters.values()}
            shown = []
            for key in self._get_param_names():
                value = getattr(self, key)
                default = defaults.get(key, inspect.Parameter.empty)
                same = value is default or (
                    not isinstance(value, np.ndarray) and type(value) is type(default)
                    and value == default
                )
                if not same:
                    shown.append(f"{key}={value!r}")
            return f"{type(self).__name__}({', '.join(shown)})"

    class ClassifierMixin:  # type: ignore[no-redef]
        """``score``: the mean accuracy of ``predict``, weighted by ``sample_weight``."""

        _estimator_type = "classifier"

        def score(self, X, y, sample_weight=None) -> float:
            pred = self.predict(X)
            correct = (np.asarray(pred) == np.asarray(y).ravel()).astype(float)
            if sample_weight is None:
                return float(correct.mean())
            return float(np.average(correct, weights=np.asarray(sample_weight, dtype=float)))


class NotFittedError(ConfigError, _NotFittedBase):
    """The estimator is used before ``fit``: a treecert :class:`ConfigError` and
    scikit-learn's ``NotFittedError`` (a ValueError and an AttributeError)."""


__all__ = ["HAVE_SKLEARN", "BaseEstimator", "ClassifierMixin", "DataConversionWarning",
           "NotFittedError"]
