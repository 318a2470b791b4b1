"""The options several commands share, each declared once.

An option used by more than one command is an ``Annotated`` type here (its flags and help),
so every command shows it alike; a command names it as ``options.Seed`` and so on. Runs of
options several commands list alike are groups (:data:`TREE_OPTIONS`, :data:`RUN_OPTIONS`)
that the decorator :func:`insert` writes into a command's signature at a given place.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Literal

import typer
from typer.core import TyperCommand

from treecert.errors import ConfigError

# The values of every enumerated option, shown as choices in --help and checked by the
# command line parser. Each equals the library's own constant (tests/test_cli_options.py
# checks it); they are spelt out here so that building the command line imports no numpy.
CriterionName = Literal["info_gain", "gain_ratio", "gini"]  # tree.split_search.CRITERIA
ThresholdRule = Literal["midpoint", "lower", "j48"]  # tree.split_search.THRESHOLD_RULES
LeafName = Literal["frequency", "laplace", "m_estimate"]  # tree.leaf_estimates.LEAF_ESTIMATES
PruneName = Literal["none", "ccp", "ebp", "laplace_loss", "kl", "rep"]  # pruning.common
BinsName = Literal["equal_width", "mdl"]  # as evaluation.reliability checks
IntervalAuc = Literal["exact", "endpoints"]  # as evaluation.experiment checks
PredictFormat = Literal["csv", "arff"]
ShowFormat = Literal["text", "dot", "json"]  # api.show
#: The registered certainty methods and metrics, named in --help (methods.METHODS,
#: evaluation.stats.METRIC_DIRECTION; importing those would cost numpy and scipy).
METHOD_NAMES = ("frequency", "laplace", "m_estimate", "tpce", "tpce_batch", "kk", "bagging",
                "naive_bayes", "binning", "venn", "empirical_bayes", "calibrated_bagging",
                "forest", "certified_tree")
METRIC_NAMES = ("accuracy", "kappa", "auc", "auc_reliability", "auc_low", "auc_high", "brier",
                "brier_norm", "log_loss", "erc_deviation", "ece", "expected_loss", "brier_low",
                "brier_high", "log_loss_low", "log_loss_high", "leaves", "fit_seconds",
                "predict_seconds", "erc_slope", "reliable_accuracy",
                "reliable_share")


class HelpCommand(TyperCommand):
    """A command whose option help may name the registries' entries: ``{METHODS}`` and
    ``{METRICS}`` are replaced by the method and metric names when the help is shown."""

    def format_help(self, ctx, formatter) -> None:
        names = {"{METHODS}": ", ".join(METHOD_NAMES), "{METRICS}": ", ".join(METRIC_NAMES)}
        for param in self.get_params(ctx):
            help_text = getattr(param, "help", None) or ""
            if "{METHODS}" in help_text or "{METRICS}" in help_text:
                for key, value in names.items():
                    help_text = help_text.replace(key, value)
                param.help = help_text
        super().format_help(ctx, formatter)


def show_version(value: bool) -> None:
    """``treecert --version``: print the version and stop (an eager option's callback)."""
    if value:
        from treecert._version import __version__

        print(f"treecert {__version__}")
        raise typer.Exit()


def leaf_name(value: str) -> str:
    """The canonical leaf estimate for ``--leaf``; ``m-estimate``, the old spelling, is
    accepted with a warning (one spelling per name: the method is ``m_estimate``)."""
    from typing import get_args

    if value == "m-estimate":
        from treecert.cli.common import say

        say("Warning: --leaf m-estimate is deprecated; write m_estimate (the method's name "
            "everywhere else).")
        return "m_estimate"
    if value not in get_args(LeafName):
        raise ConfigError(f"unknown --leaf '{value}'.",
                          f"Choose one of: {', '.join(get_args(LeafName))}.")
    return value


Version = Annotated[
    bool, typer.Option("--version", callback=show_version, is_eager=True,
                       help="Print the version and exit.")
]


def top(version: Version = False) -> None:
    """Decision trees that tell you how far to trust each prediction."""

ModelArg = Annotated[str, typer.Argument(metavar="MODEL", help="Model file (JSON).")]
InputFormat = Annotated[
    Literal["auto", "arff", "csv"],
    typer.Option("--input-format", help="The data's format: auto (from the file name, else "
                                        "from the content), arff or csv."),
]
WekaFolds = Annotated[
    bool, typer.Option("--weka-folds", help="The --folds folds Weka's '-x K -s SEED' makes "
                                            "(java.util.Random, Instances.randomize and "
                                            "stratify), so the CV tests each fold on Weka's "
                                            "rows.")
]
KlThreshold = Annotated[
    float | None,
    typer.Option("--kl-threshold", help="kl: prune below this KL information (default 1 bit "
                                        "per node; 0.01 bits per example with --kl-unit "
                                        "example)."),
]
KlUnit = Annotated[
    str | None,
    typer.Option("--kl-unit", metavar="node|example",
                 help="kl: threshold m·D, the bits over a node's m examples, pruning "
                      "bottom-up (node, the default), or the paper's D, bits per example "
                      "(example)."),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No messages on stderr.")]
ClassOpt = Annotated[
    str | None, typer.Option("--class", help="Class attribute (default: the last column).")
]
MaxClasses = Annotated[
    int | None,
    typer.Option("--max-classes", metavar="N",
                 help="Refuse a class with more than N values (0: no limit). Default: 1000, "
                      "and a class with more values than half the rows (at least 20) is "
                      "refused as an identifier; a tree's cost grows with rows x classes."),
]  # checked in treecert.data.loading (a bound here would convert through pydantic)

Criterion = Annotated[
    CriterionName, typer.Option(help="info_gain (papers, Clus), gain_ratio (J48) or gini "
                                     "(CART).")
]
MinLeaf = Annotated[float, typer.Option(help="Minimum weight per branch (J48 -M).")]
MaxDepth = Annotated[int | None, typer.Option(help="Maximum depth (root = 0).")]
MaxFeatures = Annotated[
    str | None,
    typer.Option(metavar="<all|sqrt|log2|K|FRACTION>",
                 help="Attributes searched at each node, drawn at random per node with "
                      "--seed / the method's seed (default: all)."),
]
MinGain = Annotated[float, typer.Option(help="Minimum heuristic gain to split.")]
Cp = Annotated[float, typer.Option(help="rpart's relative complexity parameter.")]
BinarySplits = Annotated[
    bool, typer.Option("--binary-splits", help="Nominal tests one value vs rest (J48 -B).")
]
Threshold = Annotated[
    ThresholdRule, typer.Option(help="Numeric split thresholds: midpoint (sklearn, rpart), "
                                     "lower (observed value, C4.5) or j48 (J48's: cuts "
                                     "between values > 1e-5 apart, moved to the largest "
                                     "training value below the midpoint).")
]
Collapse = Annotated[bool, typer.Option("--collapse", help="J48's collapse of useless subtrees.")]
Nominal = Annotated[
    str | None, typer.Option(help="CSV: columns to read as nominal, comma-separated.")
]
Ignore = Annotated[str | None, typer.Option(help="Attributes to leave out, comma-separated.")]
MethodSpecs = Annotated[
    list[str],
    typer.Option("--method", metavar="NAME[:key=value,...]",
                 help="Certainty method, repeatable; NAME one of {METHODS}."),
]
Metrics = Annotated[
    list[str] | None,
    typer.Option("--metric", help="Metric to compare, repeatable (default: accuracy, brier, "
                                  "log_loss, auc, auc_reliability, erc_deviation); one of "
                                  "{METRICS}."),
]
_J48_TREE_HELP = ("Weka J48's tree in one flag: --criterion gain_ratio --threshold j48 "
                  "--collapse and ebp pruning with cf 0.25")
J48 = Annotated[
    bool,
    typer.Option("--j48", help=_J48_TREE_HELP + ". J48's own options still apply (--min-leaf "
                               "-M, --binary-splits -B, --cf -C, --no-raise -S, --prune none "
                               "-U); a conflicting --criterion or --threshold is an error."),
]
J48_RUN = Annotated[
    bool,
    typer.Option("--j48", help=_J48_TREE_HELP + ": prune=ebp (and cf=0.25 unless the spec "
                               "sets cf) is added to every method spec that prunes and does "
                               "not set prune (venn then takes its exact path, one whole tree "
                               "per test row and class, much slower); threshold=lower is "
                               "added to tpce, kk, venn and certified_tree, whose engine has "
                               "no J48 cut rule. --min-leaf (-M) and "
                               "--binary-splits (-B) still apply; a conflicting --criterion "
                               "or --threshold is an error."),
]
Seed = Annotated[int, typer.Option(help="Seed of every random choice (folds, bootstraps).")]
Jobs = Annotated[int, typer.Option(
    "--jobs", "-j", help="Parallel worker processes (-1 = all cores); the output does not "
                         "depend on it. An extra worker costs about 1.3 CPU-s to start, so it "
                         "pays on runs of more than a few seconds: on 2 cores, evaluate "
                         "segment-challenge with tpce and venn 6.8 s -> 4.7 s wall with 2; "
                         "credit-g, 1.8 s with 1, is 0.2 s slower with 2.")]
LossOpt = Annotated[
    str | None,
    typer.Option("--loss", help="Loss matrix YAML (rows = true class, columns = predicted)."),
]
EvalLoss = Annotated[
    str | None,
    typer.Option("--loss", help="Loss matrix YAML (rows = true class, columns = predicted): "
                                "adds expected_loss; the methods' prune= options prune for "
                                "it."),
]
Repeat = Annotated[int, typer.Option(help="Repeated CV with seeds seed, seed+1, ...; with a "
                                           "fold file, repeat 0 uses its folds and later "
                                           "repeats new stratified folds.")]
Bins = Annotated[BinsName, typer.Option(help="ERC bins: equal_width (10) or mdl "
                                             "(Fayyad-Irani).")]
IntervalAucOpt = Annotated[
    IntervalAuc,
    typer.Option(help="Methods with bounds: exact AUC range (auc_low/auc_high), or endpoints "
                      "to add the EB paper's AUC of the lower and upper vectors."),
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
Leaf = Annotated[
    str, typer.Option(metavar="<frequency|laplace|m_estimate>",
                      help="Leaf estimate (J48 -A is laplace).")
]
PruneMethod = Annotated[
    PruneName, typer.Option(help="Post-pruning (see 'treecert prune --help').")
]
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
    _option("max_features", MaxFeatures, None),
)
"""How the tree grows: train, evaluate and compare."""

DATA_OPTIONS = (
    _option("class_name", ClassOpt, None),
    _option("max_classes", MaxClasses, None),
    _option("nominal", Nominal, None),
    _option("ignore", Ignore, None),
    _option("loss", EvalLoss, None),
    _option("repeat", Repeat, 1),
    _option("bins", Bins, "equal_width"),
    _option("interval_auc", IntervalAucOpt, "exact"),
    _option("j48", J48_RUN, False),
)
"""How the data are read and scored, and --j48: evaluate and compare (each dataset alike)."""

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


#: What --j48 sets: J48's defaults (Weka 3.8 ``J48 -C 0.25 -M 2``) in treecert's terms,
#: from docs/j48-parity.md: gain ratio, J48's cut rule (``threshold="j48"``),
#: collapse (J48 collapses even unpruned trees), error-based pruning with cf 0.25.
J48_TREE = {"criterion": "gain_ratio", "threshold": "j48", "collapse": True}
J48_PRUNING = {"prune": "ebp", "cf": 0.25}


def j48_settings(ctx: typer.Context, values: dict) -> dict:
    """``values`` (option name -> value) with --j48's settings in. An option the user gave
    (``ctx`` tells) keeps its value where J48 has that option too (--cf is J48 -C, --prune
    none is -U); a --criterion or --threshold that contradicts the preset is an error,
    since J48 has no such choice and overriding either silently would hide it."""
    out = dict(values)
    for name, value in {**J48_TREE, **J48_PRUNING}.items():
        if name not in values:
            continue
        source = ctx.get_parameter_source(name)
        if source is None or source.name != "COMMANDLINE":
            out[name] = value
        elif values[name] != value and name in ("criterion", "threshold"):
            flag = "--" + name.replace("_", "-")
            raise ConfigError(f"--j48 sets {flag} {value}, but {flag} {values[name]} was "
                              "given.", f"Drop {flag} or --j48.")
    return out


def j48_spec(spec: str) -> str:
    """A method spec with J48's pruning added where the method prunes and the spec leaves it
    unset: ``prune=ebp`` unless the spec names ``prune``, and ``cf=0.25`` with it unless the
    spec gives ``cf`` (what the user wrote wins; the preset fills only the rest). A method
    whose trees the transductive engine regrows (tpce, kk, venn, certified_tree) gets
    ``threshold=lower`` unless the spec sets it: the engine has no J48 cut rule."""
    from treecert.methods import METHODS, parse_method_spec

    parsed = parse_method_spec(spec, METHODS)
    method = METHODS[parsed.name]
    extra = {}
    if not method.j48_cuts and "threshold" not in parsed.options:
        extra["threshold"] = "lower"  # the transductive engines have no J48 cut rule
    if "prune" in method.options and "prune" not in parsed.options:
        extra.update({k: v for k, v in J48_PRUNING.items() if k not in parsed.options})
    if not extra:
        return spec
    return f"{spec}{',' if ':' in spec else ':'}{','.join(f'{k}={v}' for k, v in extra.items())}"
