"""treecert: decision trees that say how far to trust each prediction."""

__version__ = "0.1.0"
