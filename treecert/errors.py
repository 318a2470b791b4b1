"""One exception hierarchy for everything a user can get wrong.

The CLI catches :class:`TreecertError` in one place, prints ``Error: <message>`` and exits
with code 2; anything else is a bug and keeps its traceback (exit 1).
"""

from __future__ import annotations


class TreecertError(Exception):
    """Base class of user-facing errors: bad input, bad options, bad model files.

    ``message`` says what went wrong and where; ``hint`` (optional) says how to fix it.
    """

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message


class DataError(TreecertError):
    """A data file cannot be read or does not fit what is asked of it."""


class SchemaMismatchError(DataError):
    """Test data does not match the schema the model was trained on."""


class ConfigError(TreecertError):
    """An option, method specification or loss matrix is invalid."""


class ModelFileError(TreecertError):
    """A model file is missing, corrupt, not a treecert model, or of an unknown version."""


class InputError(DataError, ValueError):
    """Arrays or DataFrames given to the Python estimator are invalid (shape, values,
    labels). Also a ``ValueError``, as scikit-learn's conventions ask of estimators."""


class ParameterError(ConfigError, ValueError):
    """A hyperparameter of the Python estimator is invalid. Also a ``ValueError``, as
    scikit-learn's conventions ask of estimators."""


class OutputError(TreecertError):
    """An output cannot be written: a directory in the way, no permission, a full disk, a
    closed pipe or standard output, a directory in use by another run."""


class ReaderGone(OutputError):
    """The program reading a pipe stopped before the end (``treecert predict ... | head``).
    Not an error of the input: the command line ends silently with 141 (128 + SIGPIPE),
    as coreutils' tools do when the pipe's reader has gone."""

    exit_code = 141


def describe(value: object) -> str:
    """A short description of a value read from a user's file, for messages: never more
    than ~40 characters of it (the file may hold anything, and a YAML alias can make a
    1 KB file describe a structure of a billion elements)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) < 10**12:
            return str(value)
        digits = len(str(value)) if value.bit_length() < 14_000 else "thousands of"
        return f"an integer of {digits} digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else f"{value[:30]!r}... ({len(value)} characters)"
    if isinstance(value, list):
        return f"a list of {len(value)} items" if value else "an empty list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class TreecertWarning(UserWarning):
    """Something the user asked for that runs, but may not be what they meant (e.g. an
    amount of work above a model file's bound). The command line prints it as one line
    ``Warning: ...``."""
