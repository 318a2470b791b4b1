"""What the commands share: messages on stderr and reading the inputs.

The stderr console and the --quiet state, warnings, the training and test data files (their
warnings shown), loss files, and the tree options as the parameters :mod:`treecert.api`
takes.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache

from treecert.errors import ConfigError

_state = {"quiet": False}


@cache
def stderr_console():
    """The rich console on stderr, made on first use: importing rich costs a tenth of a
    CPU-second, which ``--help`` and a quiet ``predict`` need not pay."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def __getattr__(name: str):
    if name == "_stderr":  # the old name, for ``from treecert.cli.common import _stderr``
        return stderr_console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def say(message: str) -> None:
    """A message for the person at the terminal (stderr; silenced by --quiet).

    Off a terminal, a message that rich would print as it is (no tab, no control
    character rich drops, no ``:name:`` it could take for an emoji) is written directly:
    the same bytes without rich's import (0.03 CPU-s of a short ``evaluate``)."""
    if _state["quiet"]:
        return
    if _AS_IS.search(message) is None and not stderr_is_terminal():
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    else:
        stderr_console().print(message, markup=False)


def stderr_is_terminal() -> bool:
    """Whether rich's console takes standard error for a terminal (and may style or
    animate what it prints there): $TTY_COMPATIBLE 1 or 0 says so, a non-empty
    $FORCE_COLOR says yes, else whether it is a tty."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return sys.stderr.isatty()
    except ValueError:  # closed
        return False


#: What rich's console changes in a message printed without markup: tabs (expanded),
#: the control characters it strips, and ``:name:`` (an emoji code, when it names one).
_AS_IS = re.compile(r"[\t\x07\x08\x0b\x0c\r]|:\S*:")


def _warn_all(warnings: list[str]) -> None:
    for w in warnings:
        say(f"Warning: {w}")


def _load_matching(path: str, schema, labelled: str | None = None):
    """A data file read against a model's schema, its warnings shown; with ``labelled``
    (the file's role, e.g. "test") the class column is required."""
    from treecert.data.alignment import load_for_schema

    data = load_for_schema(path, schema)
    _warn_all(data.warnings)
    if labelled and not data.has_class:
        raise ConfigError(f"{path}: the {labelled} file has no class column "
                          f"'{schema.class_attribute.name}'.")
    return data


def _load_training(path: str, class_name: str | None, nominal: str | None, ignore: str | None,
                   max_classes: int | None = None):
    """Training data, its warnings shown, attributes without a known value left out (as
    J48 does), refused up front if no tree can be learnt from it (rather than in the first
    fold of a long evaluation) or its class looks like an identifier (--max-classes)."""
    from treecert.data.loading import (
        check_class_count,
        check_trainable,
        drop_empty_attributes,
        load_dataset,
    )

    data = drop_empty_attributes(load_dataset(
        path,
        class_name=class_name,
        nominal=_split_names(nominal),
        ignore=_split_names(ignore),
    ))
    _warn_all(data.warnings)
    check_trainable(data)
    check_class_count(data, max_classes)
    return data


def _split_names(text: str | None) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip()) if text else ()


def _read_loss(path: str | None, classes: tuple[str, ...]):
    if path is None:
        return None
    from treecert.pruning.loss import read_loss

    matrix, warns = read_loss(path, classes)
    _warn_all(warns)
    return matrix


def _tree_params(criterion, min_leaf, max_depth, min_gain, cp, binary_splits, threshold,
                 collapse, max_features=None) -> dict:
    """The tree options as the learner's parameters, each checked by its rule
    (:mod:`treecert.tree.params`) before any work: ``--cp 1e400`` is one line naming
    the flag."""
    from treecert.tree.params import LEARNER_RULES

    params = {
        "criterion": criterion, "min_leaf": min_leaf, "max_depth": max_depth,
        "min_gain": min_gain, "cp": cp, "binary_splits": binary_splits,
        "threshold": threshold, "collapse": collapse, "max_features": max_features,
    }
    return {k: LEARNER_RULES[k].check(v, "--" + k.replace("_", "-")) for k, v in params.items()}


def _check_flags(**values) -> None:
    """Numeric run options (``--seed``, ``--repeat``, ``--cv``, ...) checked by the rule of
    the method option of the same name (:mod:`treecert.methods.option_rules`), before any
    work; None is an option not given."""
    from treecert.methods.option_rules import OPTION_RULES

    for key, value in values.items():
        if value is not None:
            OPTION_RULES[key].check(value, "--" + key.replace("_", "-"))
