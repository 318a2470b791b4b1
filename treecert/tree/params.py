"""One validation of every setting: a :class:`Rule` per option, checked alike wherever a
value comes from (the command line, the Python estimator, a model file).

A rule states an option's type, its range, whether it may be null, its choices (text
options) and, for the options that set an amount of work (trees, bins, folds), a *work
bound*. :meth:`Rule.check` returns the value in its canonical Python type (a float for a
float option, even when written as a JSON integer) or raises
:class:`~treecert.errors.ConfigError` with one line naming the option. Every number is
checked to be finite, and an integer too large for a float or for int64 is refused, not
carried on to fail deep inside numpy.

Work bounds: a value above ``work`` is what only a person asks for on purpose. A setting
the user typed (``trusted``: the command line, the estimator) runs with a
:class:`~treecert.errors.TreecertWarning`; the same value read from a model file
(``trusted=False``) is refused, so a 10 KB file cannot make ``predict`` run longer than the
person running it could have asked for without a warning. ``high`` is the hard limit for
everyone.

The tree learner's settings are the table :data:`LEARNER_RULES` below
(:class:`~treecert.tree.classifier.DecisionTree` and the model reader check through it);
the certainty methods' options are declared beside the method registry, in
:mod:`treecert.methods.option_rules`, which says how to declare a new one.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

from treecert.errors import ConfigError, TreecertWarning, describe
from treecert.tree.leaf_estimates import LEAF_ESTIMATES
from treecert.tree.split_search import CRITERIA, THRESHOLD_RULES

#: Magnitude limits: an int option fits int64; a float option is finite.
_INT64 = 2**63


@dataclass(frozen=True)
class Rule:
    """What an option accepts.

    ``kind`` is ``bool``, ``int``, ``float`` or ``str``. Numbers lie in ``[low, high]``
    (``low_open``/``high_open`` exclude the end). ``choices`` lists a text option's values
    (empty: any text). ``nullable``: None is allowed (e.g. ``max_depth``). ``work``: the
    largest value a model file may ask for (see the module docstring). ``why``: said after a
    range error (e.g. the paper's or J48's reason for the bound).
    """

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    nullable: bool = False
    work: float | None = None
    why: str = ""

    def describe_range(self) -> str:
        if self.kind is bool:
            return "true or false"
        if self.kind is str:
            return f"one of {', '.join(self.choices)}" if self.choices else "text"
        noun = "an integer" if self.kind is int else "a finite number"

        def fmt(v: float) -> str:
            return str(int(v)) if self.kind is int and abs(v) < 1e15 else f"{v:g}"

        lo = "" if self.low is None else f"{'>' if self.low_open else '>='} {fmt(self.low)}"
        hi = "" if self.high is None else f"{'<' if self.high_open else '<='} {fmt(self.high)}"
        if lo and hi:
            return f"{noun} {lo} and {hi}"
        return f"{noun} {lo or hi}".rstrip()

    def check(self, value: Any, where: str, *, trusted: bool = True, warn: bool = True,
              error: type[ConfigError] = ConfigError) -> Any:
        """``value`` in the option's canonical type, or ``error`` naming ``where``;
        ``warn=False`` for a value checked (and warned about) before."""
        if value is None and self.nullable:
            return None

        def bad(extra: str = "") -> ConfigError:
            hint = extra or self.why or None
            return error(f"{where} must be {self.describe_range()}, not {describe(value)}.",
                         hint)

        if self.kind is bool:
            if not isinstance(value, bool):
                raise bad()
            return value
        if self.kind is str:
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                raise bad()
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad()
        if self.kind is int:
            if isinstance(value, float):
                if not value.is_integer():
                    raise bad()
                value = int(value)
            if not -_INT64 <= value < _INT64:
                raise bad()
            number: float = value
        else:
            try:
                number = float(value)
            except OverflowError:  # a JSON integer of hundreds of digits
                raise bad() from None
            if not math.isfinite(number):
                raise bad()
            value = number
        if self.low is not None and (number < self.low or (self.low_open and number == self.low)):
            raise bad()
        if self.high is not None and (number > self.high
                                      or (self.high_open and number == self.high)):
            raise bad()
        if self.work is not None and number > self.work:
            said = f"{where} = {describe(value)} asks for more work than {self.work:g}"
            if not trusted:
                raise error(f"{said}, the most a model file may ask for.",
                            "Ask for it on the command line (--method), where it runs with "
                            "a warning.")
            if warn:
                warnings.warn(f"{said}; this may take long.", TreecertWarning, stacklevel=2)
        return value


def check_all(rules: dict[str, Rule], values: dict, where: str, *, trusted: bool = True,
              error: type[ConfigError] = ConfigError) -> dict:
    """``values`` (name -> value) checked by ``rules``, canonical; an unknown name is an
    error naming the known ones."""
    out = {}
    for key, value in values.items():
        rule = rules.get(key)
        if rule is None:
            raise error(f"{where} has no setting {describe(key)}.",
                        f"Settings: {', '.join(sorted(rules))}.")
        out[key] = rule.check(value, f"{where} {key}", trusted=trusted, error=error)
    return out


#: A bound on pseudo-counts and weights in settings: K times it stays finite, and a sum
#: with it keeps its meaning (larger values give the same leaves anyway).
LARGE = 1e150

#: The tree learner's settings (:class:`~treecert.tree.classifier.DecisionTree`'s fields).
@dataclass(frozen=True)
class _MaxFeaturesRule(Rule):
    """``max_features``: all, sqrt, log2, an integer >= 1 or a fraction in (0, 1]
    (:func:`treecert.tree.feature_draw.resolve_max_features` reads it)."""

    def describe_range(self) -> str:
        return "all, sqrt, log2, an integer >= 1 or a fraction in (0, 1]"

    def check(self, value: Any, where: str, *, trusted: bool = True, warn: bool = True,
              error: type[ConfigError] = ConfigError) -> Any:
        from treecert.tree.feature_draw import resolve_max_features

        try:
            resolve_max_features(value, 2)
        except ConfigError:
            raise error(f"{where} must be {self.describe_range()}, not {describe(value)}."
                        ) from None
        return value


LEARNER_RULES: dict[str, Rule] = {
    "criterion": Rule(str, choices=CRITERIA),
    "min_leaf": Rule(float, 0, LARGE),
    "max_depth": Rule(int, 0, nullable=True),
    "min_gain": Rule(float, 0, LARGE),
    # cp >= 1 prunes to the root (no split lowers the relative error by more than 1)
    "cp": Rule(float, 0),
    "binary_splits": Rule(bool),
    "threshold": Rule(str, choices=THRESHOLD_RULES),
    "collapse": Rule(bool),
    "leaf": Rule(str, choices=LEAF_ESTIMATES),
    "alpha": Rule(float, 0, LARGE),
    "m": Rule(float, 0, LARGE),
    "max_features": _MaxFeaturesRule(str, nullable=True),
    "random_state": Rule(int, 0, 2**32 - 1),
}
