"""treecert: decision trees that say how far to trust each prediction.

``treecert.TreecertClassifier`` (:mod:`treecert.estimator`) is the scikit-learn estimator; it
is imported on first use, so that the command line does not pay for it at start-up.
"""

from treecert._version import __version__

__all__ = ["TreecertClassifier", "__version__"]


def __getattr__(name: str):
    if name == "TreecertClassifier":
        from treecert.estimator import TreecertClassifier

        return TreecertClassifier
    raise AttributeError(f"module 'treecert' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "TreecertClassifier"])
