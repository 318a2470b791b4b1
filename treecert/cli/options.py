"""The options several commands share, each declared once.

An option used by more than one command is an ``Annotated`` type here (its flags and help),
so every command shows it alike; a command names it as ``options.Seed`` and so on. Runs of
options several commands list alike are groups (:data:`TREE_OPTIONS`, :data:`RUN_OPTIONS`)
that the decorator :func:`insert` writes into a command's signature at a given place.
"""

from __future__ import annotations

import inspect
from typing import Annotated

import typer

ModelArg = Annotated[str, typer.Argument(metavar="MODEL", help="Model file (JSON).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No messages on stderr.")]
ClassOpt = Annotated[
    str | None, typer.Option("--class", help="Class attribute (default: the last column).")
]

Criterion = Annotated[
    str, typer.Option(help="info_gain (papers, Clus), gain_ratio (J48) or gini (CART).")
]
MinLeaf = Annotated[float, typer.Option(help="Minimum weight per branch (J48 -M).")]
MaxDepth = Annotated[int | None, typer.Option(help="Maximum depth (root = 0).")]
MinGain = Annotated[float, typer.Option(help="Minimum heuristic gain to split.")]
Cp = Annotated[float, typer.Option(help="rpart's relative complexity parameter.")]
BinarySplits = Annotated[
    bool, typer.Option("--binary-splits", help="Nominal tests one value vs rest (J48 -B).")
]
Threshold = Annotated[
    str, typer.Option(help="midpoint (sklearn, rpart) or lower (observed value, C4.5).")
]
Collapse = Annotated[bool, typer.Option("--collapse", help="J48's collapse of useless subtrees.")]
Nominal = Annotated[
    str | None, typer.Option(help="CSV: columns to read as nominal, comma-separated.")
]
Ignore = Annotated[str | None, typer.Option(help="Attributes to leave out, comma-separated.")]
Seed = Annotated[int, typer.Option(help="Seed of every random choice (folds, bootstraps).")]
Jobs = Annotated[int, typer.Option("--jobs", "-j", help="Parallel workers (-1 = all cores).")]
LossOpt = Annotated[
    str | None,
    typer.Option("--loss", help="Loss matrix YAML (rows = true class, columns = predicted)."),
]
CfOpt = Annotated[
    float | None, typer.Option("--cf", help="ebp: confidence factor (J48 -C; default 0.25).")
]
NoRaise = Annotated[
    bool, typer.Option("--no-raise", help="ebp: no subtree raising (J48 -S).")
]
HoldoutOpt = Annotated[
    float | None,
    typer.Option(help="ccp/rep: fraction held out (ccp 0.2 as Bradford et al.; rep 1/3 as "
                      "J48 -R)."),
]
CvOpt = Annotated[
    int | None, typer.Option("--cv", help="ccp: choose alpha by K-fold CV (rpart's way).")
]
OneSe = Annotated[bool, typer.Option("--one-se", help="ccp: the 1-SE rule.")]
Folds = Annotated[int, typer.Option(help="Stratified k-fold CV.")]
NoTiming = Annotated[
    bool, typer.Option("--no-timing", help="Leave out timings (byte-identical metrics).")
]
ShardOpt = Annotated[
    str | None,
    typer.Option("--shard", metavar="I/N",
                 help="Do only part I (0-based) of N: a contiguous 1/N of the rows (predict) "
                      "or of the (dataset, fold) units (evaluate, compare); for job arrays. "
                      "See 'treecert merge'."),
]
ResumeOpt = Annotated[
    bool,
    typer.Option("--resume", help="Keep the (dataset, method, fold) units already recorded in "
                                  "the -o directory by an interrupted run; run the rest."),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option("--scheduler", metavar="ADDRESS",
                 help="Run the per-instance/per-fold work on this Dask distributed scheduler "
                      "(e.g. tcp://127.0.0.1:8786); needs pip install 'treecert[dask]'."),
]


def _option(name: str, annotation, default) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                             annotation=annotation, default=default)


TREE_OPTIONS = (
    _option("criterion", Criterion, "info_gain"),
    _option("min_leaf", MinLeaf, 2.0),
    _option("max_depth", MaxDepth, None),
    _option("min_gain", MinGain, 0.0),
    _option("cp", Cp, 0.0),
    _option("binary_splits", BinarySplits, False),
    _option("threshold", Threshold, "midpoint"),
    _option("collapse", Collapse, False),
)
"""How the tree grows: train, evaluate and compare."""

RUN_OPTIONS = (
    _option("no_timing", NoTiming, False),
    _option("jobs", Jobs, 1),
    _option("shard", ShardOpt, None),
    _option("resume", ResumeOpt, False),
    _option("scheduler", SchedulerOpt, None),
)
"""How an evaluation runs: evaluate and compare."""


def insert(*groups: tuple[inspect.Parameter, ...], before: str):
    """A decorator: the groups' options in the command's signature, in order, just before its
    parameter ``before``; typer reads them there (and --help lists them there).

    typer passes their values by name. The command takes those it uses by name as
    keyword-only parameters (after ``*``, which typer does not see) and the rest as
    ``**kwargs``.
    """

    def decorate(command):
        signature = inspect.signature(command, eval_str=True)
        params = [p for p in signature.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
        at = [p.name for p in params].index(before)
        inserted = [p for group in groups for p in group]
        by_name = {p.name for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY}
        assert by_name <= {p.name for p in inserted}, f"{command.__name__}: not in a group"
        command.__signature__ = signature.replace(
            parameters=[*params[:at], *inserted, *params[at:]])
        return command

    return decorate
