"""treecert: decision trees that say how far to trust each prediction."""

from treecert._version import __version__

__all__ = ["__version__"]
