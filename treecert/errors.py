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


class OutputError(TreecertError):
    """An output cannot be written: a directory in the way, no permission, a full disk, a
    closed pipe or standard output, a directory in use by another run."""
