"""The rules of the certainty methods' options: type, range, finiteness and work bound.

Every option of every method is checked here, in one way, wherever it comes from: a
``--method NAME:key=value`` spec (:func:`~treecert.methods.base.parse_method_spec`), the
estimator's parameters, and a model file's ``"method"`` and ``"calibration"`` fields (read
with ``trusted=False``: a work bound there is a hard limit, see
:mod:`treecert.tree.params`). A value that breaks its rule is one ``Error:`` line (exit 2)
naming the method and the option.

How to declare an option
------------------------
A method class lists its options in ``options`` (name -> type or
:class:`~treecert.tree.params.Rule`) and their defaults in ``defaults``::

    class ForestMethod(Method):
        name = "forest"
        options = {"trees": int, "max_features": Rule(float, 0, 1, low_open=True),
                   "seed": int}
        defaults = {"trees": 100, "max_features": 0.5, "seed": 1}

The rule of an option is, first found:

1. ``rules[name]`` of the class (a ClassVar dict of :class:`Rule`): a method's own bound on
   an option it shares, including the tree's (e.g. the transductive methods' ``min_leaf``);
2. ``options[name]`` when it is a :class:`Rule`;
3. :data:`OPTION_RULES` below, when a bare type is given and the name is listed there with
   that type (``trees``, ``seed``, ``bins``, ``cv``, ``alpha``, ...): a new method's
   ``trees`` gets the same bounds as bagging's;
4. the tree learner's :data:`~treecert.tree.params.LEARNER_RULES` for the tree options;
5. the bare type: any finite number, any integer fitting int64, true/false, any text.

So an option that sets an amount of work (trees, repeats, bins, folds) needs a ``work``
bound, here or in its rule, or a model file can ask for any amount of it. Text options
with a fixed set of values (``engine``, ``taxonomy``) may keep ``str`` and be checked by
the method, which then names the choices.
"""

from __future__ import annotations

from typing import Any

from treecert.errors import ConfigError
from treecert.pruning.common import PRUNE_METHODS
from treecert.tree.leaf_estimates import LEAF_ESTIMATES
from treecert.tree.params import LARGE, LEARNER_RULES, Rule

#: Shared option names and their rules (first match for a bare type, see the docstring).
OPTION_RULES: dict[str, Rule] = {
    # how much work: a model file may ask for up to `work`; the command line warns above
    "trees": Rule(int, 0, 100_000, work=1000, why="0 means as many trees as classes."),
    "bins": Rule(int, 0, 1_000_000, work=1000, why="0 means MDL bins."),
    "cv": Rule(int, 2, 1_000_000, work=100),
    "seed": Rule(int, 0, 2**32 - 1),
    # the command line's run options of the same kind (evaluate --repeat, --bias-variance)
    "repeat": Rule(int, 1, 1_000_000, work=100),
    "bias_variance": Rule(int, 0, 1_000_000, work=1000),
    # leaf estimates and pseudo-counts
    "leaf": Rule(str, choices=LEAF_ESTIMATES),
    "alpha": Rule(float, 0, LARGE),
    "m": Rule(float, 0, LARGE),
    # pruning (treecert.pruning)
    "prune": Rule(str, choices=PRUNE_METHODS),
    "cf": Rule(float, 0, 0.5, low_open=True,
               why="J48 ignores larger values; 0.25 is its default."),
    "kl_threshold": Rule(float, 0, LARGE),
    "holdout": Rule(float, 0, 1, low_open=True, high_open=True),
    "clamp": Rule(float, 0, LARGE),
}

#: The methods that grow trees with the test instance x in them (TPCE, K&K, Venn):
#: ``min_leaf`` 0 would let x's leaf hold x alone, whose estimate says only the label tried.
TRANSDUCTIVE_MIN_LEAF = Rule(float, 0, LARGE, low_open=True,
                             why="With min_leaf 0, a tree grown with x may give x a leaf of "
                                 "its own; use min_leaf > 0 (the default is 2).")


def rule_of(cls: type, key: str) -> Rule:
    """The rule of option ``key`` of method class ``cls`` (see the module docstring)."""
    own = getattr(cls, "rules", {})
    if key in own:
        return own[key]
    declared = cls.options.get(key)
    if isinstance(declared, Rule):
        return declared
    if declared is not None:
        shared = OPTION_RULES.get(key)
        if shared is not None and shared.kind is declared:
            return shared
        return Rule(declared)
    if key in LEARNER_RULES:
        return LEARNER_RULES[key]
    raise KeyError(key)


def kind_of(declared: type | Rule) -> type:
    """The Python type of an option declared as a type or a :class:`Rule`."""
    return declared.kind if isinstance(declared, Rule) else declared


def check_options(cls: type, options: dict[str, Any], where: str, *, trusted: bool = True,
                  warn: bool = True, error: type[ConfigError] = ConfigError
                  ) -> dict[str, Any]:
    """``options`` of method ``cls``, each checked by its rule, in canonical types.

    ``where`` names the spec in messages (``"method 'bagging:trees=-1'"``); ``trusted=False``
    for values read from a model file (a work bound is then a limit); ``error`` the
    exception class to raise (a model file's :class:`~treecert.errors.ModelFileError`);
    ``warn=False`` where the options were checked before (no second warning).
    """
    return {k: rule_of(cls, k).check(v, f"{where}: {k}", trusted=trusted, warn=warn,
                                     error=error)
            for k, v in options.items()}
