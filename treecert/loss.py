"""Loss matrices in YAML, keyed by class label, impossible to read the wrong way round.

Format (rows = TRUE class, columns = PREDICTED class)::

    # loss of predicting <column> when the truth is <row>
    loss:
      sick:    {sick: 0, healthy: 10}
      healthy: {sick: 1, healthy: 0}

Orientation is the one of rpart's ``L[true, pred]``; Weka's cost-matrix files use the same
(row = actual, column = predicted) although its javadoc says otherwise, and C5.0 uses the
transpose. Because rows and columns are named, a matrix written for one class order works
for any other.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from treecert.errors import ConfigError


def parse_loss(doc: object, classes: tuple[str, ...], source: str = "<loss>") -> np.ndarray:
    """Validate a parsed YAML document and return ``L`` (K, K), ``L[true, predicted]``.

    Returns the matrix and appends nothing; a non-zero diagonal is allowed (it is a cost of
    correct predictions) — :func:`diagonal_warning` reports it.
    """
    if not isinstance(doc, dict) or "loss" not in doc:
        raise ConfigError(
            f"{source}: expected a mapping with a top-level key 'loss'.",
            "See 'treecert prune --help' for the format.",
        )
    table = doc["loss"]
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: loss: expected a mapping true-class -> {{predicted: cost}}.")
    keys = [str(k) for k in table]
    _check_labels(keys, classes, f"{source}: loss", "rows (true classes)")
    K = len(classes)
    L = np.zeros((K, K))
    for true_label, row in table.items():
        where = f"{source}: loss.{true_label}"
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: expected a mapping predicted-class -> cost.")
        _check_labels([str(k) for k in row], classes, where, "columns (predicted classes)")
        i = classes.index(str(true_label))
        for pred_label, cost in row.items():
            if isinstance(cost, bool) or not isinstance(cost, int | float):
                raise ConfigError(f"{where}.{pred_label}: cost must be a number, got {cost!r}.")
            if not np.isfinite(cost) or cost < 0:
                raise ConfigError(f"{where}.{pred_label}: cost must be finite and >= 0.")
            L[i, classes.index(str(pred_label))] = float(cost)
    return L


def _check_labels(keys: list[str], classes: tuple[str, ...], where: str, what: str) -> None:
    missing = [c for c in classes if c not in keys]
    unknown = [k for k in keys if k not in classes]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if missing or unknown or dupes:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if unknown:
            parts.append(f"unknown {', '.join(unknown)}")
        if dupes:
            parts.append(f"repeated {', '.join(dupes)}")
        detail = "; ".join(parts)
        raise ConfigError(
            f"{where}: {what} must be exactly the classes {', '.join(classes)} ({detail}).",
        )


def diagonal_warning(L: np.ndarray, classes: tuple[str, ...], source: str) -> str | None:
    """A warning text when some correct prediction has a non-zero cost."""
    diag = np.diag(L)
    if np.any(diag != 0):
        which = ", ".join(f"{c}={d:g}" for c, d in zip(classes, diag, strict=True) if d != 0)
        return f"{source}: non-zero loss for correct predictions ({which}); is that intended?"
    return None


def read_loss(path: str | Path, classes: tuple[str, ...]) -> tuple[np.ndarray, list[str]]:
    """Read a loss YAML file (``yaml.safe_load`` only); returns (L, warnings)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such loss file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read loss file ({exc}).") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{p}: not valid YAML{line}.") from None
    L = parse_loss(doc, classes, str(p))
    warn = diagonal_warning(L, classes, str(p))
    return L, [warn] if warn else []
