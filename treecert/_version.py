"""The package version, in a module of its own so that model files can record it without
importing the package's public front."""

__version__ = "0.1.0"
