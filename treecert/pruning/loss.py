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

from collections import Counter
from pathlib import Path

import numpy as np
import yaml

from treecert.errors import ConfigError, describe


def parse_loss(doc: object, classes: tuple[str, ...], source: str = "<loss>") -> np.ndarray:
    """Validate a parsed YAML document and return ``L`` (K, K), ``L[true, predicted]``.

    Returns the matrix and appends nothing; a non-zero diagonal is allowed (it is a cost of
    correct predictions) — :func:`diagonal_warning` reports it. Every value is checked for
    its type before it appears in a message, and appears there only briefly
    (:func:`treecert.errors.describe`).
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
    index = {c: k for k, c in enumerate(classes)}
    for true_label, row in table.items():
        where = f"{source}: loss.{true_label}"
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: expected a mapping predicted-class -> cost.")
        _check_labels([str(k) for k in row], classes, where, "columns (predicted classes)")
        i = index[str(true_label)]
        for pred_label, cost in row.items():
            if isinstance(cost, bool) or not isinstance(cost, int | float):
                raise ConfigError(f"{where}.{pred_label}: cost must be a number, got "
                                  f"{describe(cost)}.")
            try:
                value = float(cost)
            except OverflowError:  # an integer beyond float range
                value = np.inf
            if not np.isfinite(value) or value < 0:
                raise ConfigError(f"{where}.{pred_label}: cost must be finite and >= 0.")
            L[i, index[str(pred_label)]] = value
    return L


def _check_labels(keys: list[str], classes: tuple[str, ...], where: str, what: str) -> None:
    # sets and one count of each key: linear in the file (a count per key was quadratic:
    # 20,000 unknown labels took 51 s)
    known, given = set(classes), set(keys)
    missing = [c for c in classes if c not in given]
    unknown = [k for k in keys if k not in known]
    dupes = sorted(k for k, n in Counter(keys).items() if n > 1)
    if missing or unknown or dupes:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if unknown:
            parts.append(f"unknown {_labels(unknown)}")
        if dupes:
            parts.append(f"repeated {_labels(dupes)}")
        detail = "; ".join(parts)
        raise ConfigError(
            f"{where}: {what} must be exactly the classes {', '.join(classes)} ({detail}).",
        )


def _labels(keys: list[str]) -> str:
    """Labels found in a loss file, for a message: a few, each briefly."""
    shown = [k if len(k) <= 40 else describe(k) for k in keys[:10]]
    return ", ".join(shown) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")


def diagonal_warning(L: np.ndarray, classes: tuple[str, ...], source: str) -> str | None:
    """A warning text when some correct prediction has a non-zero cost."""
    diag = np.diag(L)
    if np.any(diag != 0):
        which = ", ".join(f"{c}={d:g}" for c, d in zip(classes, diag, strict=True) if d != 0)
        return f"{source}: non-zero loss for correct predictions ({which}); is that intended?"
    return None


class _Refused(yaml.MarkedYAMLError):
    """Valid YAML that a loss file may not use (an alias of a list or mapping, a key that is
    not a label)."""


class _LabelLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that keeps mapping keys exactly as written.

    Keys are class labels: YAML 1.1 would read ``yes``/``no``/``on``/``off`` as booleans,
    ``01`` as the number 1 and ``null`` as None, so weather's classes ``yes``/``no`` could
    never match. A repeated key is an error instead of silently keeping the last one, and so
    is a key that is not a label (a list or mapping).

    An alias may repeat a value (``*zero``) but not a list or mapping: nine lines of nested
    aliases describe a structure of a billion elements (a "billion laughs" bomb), and merge
    keys (``<<: [*a, *a]``) would copy it; a loss matrix never needs either.
    """

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = self.anchors.get(event.anchor)
            if node is not None and not isinstance(node, yaml.ScalarNode):
                raise _Refused(None, None, "an alias may only repeat a single value, not a "
                               "list or mapping", event.start_mark)
        return super().compose_node(parent, index)


def _construct_mapping(loader: _LabelLoader, node: yaml.MappingNode, deep: bool = False):
    loader.flatten_mapping(node)
    out: dict = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise _Refused(None, None, "a key must be a class label, not a list or mapping",
                           key_node.start_mark)
        key = key_node.value
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"repeated key {describe(key)}", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=deep)
    return out


_LabelLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_loss(path: str | Path, classes: tuple[str, ...]) -> tuple[np.ndarray, list[str]]:
    """Read a loss YAML file (a safe loader only; keys kept as written); returns
    (L, warnings)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such loss file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read loss file ({exc}).") from None
    try:
        doc = yaml.load(text, Loader=_LabelLoader)  # a SafeLoader subclass
    except _Refused as exc:
        raise ConfigError(f"{p}, line {exc.problem_mark.line + 1}: {exc.problem}.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None)
        why = f" ({problem})" if problem else ""
        raise ConfigError(f"{p}: not valid YAML{line}{why}.") from None
    except (TypeError, ValueError) as exc:  # e.g. an integer of thousands of digits
        why = "a number of thousands of digits" if "digits" in str(exc) else str(exc)[:100]
        raise ConfigError(f"{p}: not a loss matrix ({why}).") from None
    except RecursionError:
        raise ConfigError(f"{p}: not a loss matrix (nested too deeply).") from None
    L = parse_loss(doc, classes, str(p))
    warn = diagonal_warning(L, classes, str(p))
    return L, [warn] if warn else []
