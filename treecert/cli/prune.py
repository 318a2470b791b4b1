"""``treecert prune``: prune a saved model's tree (ccp, ebp, laplace_loss, kl, rep).

Also the pruning options as :func:`treecert.api.prune`'s arguments, the one-line summary
and the unused-loss warning, which ``treecert train --prune`` shares.
"""

from __future__ import annotations

from typing import Annotated

import typer

from treecert import api
from treecert.cli import options
from treecert.cli.common import _check_flags, _load_matching, _read_loss, _state, say
from treecert.data.fileio import atomic_writer, check_not_input, staged_outputs, write_text
from treecert.errors import ConfigError


def _prune_kwargs(cf, no_raise, kl_threshold, holdout, cv, one_se, seed,
                  kl_unit=None) -> dict:
    return {"cf": cf, "subtree_raising": False if no_raise else None,
            "kl_threshold": kl_threshold, "kl_unit": kl_unit, "holdout": holdout, "cv": cv,
            "one_se": True if one_se else None, "seed": seed}


def _pruning_summary(record: dict) -> str:
    b, a = record["before"], record["after"]
    text = (f"pruned with {record['method']}: {b['leaves']} leaves ({b['nodes']} nodes) -> "
            f"{a['leaves']} leaves ({a['nodes']} nodes)")
    if record["method"] == "ccp":
        alpha = record.get("alpha")
        text += (f", alpha = {alpha:.6g}" if alpha is not None else ", alpha = n/a") + \
            f" chosen by {record['selection']}"
        if record.get("pruned_to_root"):
            text += "; pruned to the root"
    return text


def _plot_title(model_path: str, model, data) -> str:
    """The plot's first title line: the model file and the data its tree was grown on."""
    train = data if data is not None else model.training_data
    rows = f", {train.n_samples} rows" if train is not None else ""
    relation = model.schema.relation or "data"
    return f"{model_path} (tree of {model.tree.n_leaves} leaves grown on {relation}{rows})"


def _loss_unused_warning(method: str, loss: str | None) -> None:
    if loss is not None and method.strip().lower() in ("none", "ebp", "kl"):
        say(f"Warning: pruning method {method} does not use the loss matrix; give it to "
            "'treecert predict --loss' to choose predictions by expected loss.")


def prune_command(
    model_path: options.ModelArg,
    output: Annotated[str, typer.Option("-o", "--output", help="Pruned model file to write.")],
    method: Annotated[options.PruneName, typer.Option("--method", help="Pruning method.")],
    loss: options.LossOpt = None,
    cf: options.CfOpt = None,
    no_raise: options.NoRaise = False,
    kl_threshold: options.KlThreshold = None,
    kl_unit: options.KlUnit = None,
    holdout: options.HoldoutOpt = None,
    cv: options.CvOpt = None,
    one_se: options.OneSe = False,
    seed: options.Seed = 1,
    train: Annotated[
        str | None,
        typer.Option("--train", help="Training data for models saved with --no-embed-data "
                                     "(checked against the model)."),
    ] = None,
    table: Annotated[
        bool, typer.Option("--table", help="ccp: print the alpha sequence as CSV to stdout.")
    ] = False,
    plot: Annotated[
        str | None,
        typer.Option("--plot", metavar="PNG",
                     help="ccp: draw rpart's plotcp (validation error +-1 SE against cp and "
                          "tree size) into this PNG file."),
    ] = None,
    quiet: options.Quiet = False,
) -> None:
    """Prune a model's tree; print its size before and after.

    Methods: ccp (CART cost-complexity; alpha by --holdout 0.2 or --cv K, --one-se), ebp
    (C4.5/J48 error-based, --cf 0.25, --no-raise), laplace_loss and kl (Bradford et al.),
    rep (reduced-error on a holdout, J48 -R), none. With --loss, ccp, laplace_loss and rep
    prune for the loss matrix.

    Loss file (YAML), keyed by class label, rows = true class, columns = predicted:
    "loss: {bad: {bad: 0, good: 5}, good: {bad: 1, good: 0}}" (predicting good for a bad
    case costs 5). Every class exactly once in rows and columns, costs >= 0.

    --plot FILE.png (ccp) draws rpart's plotcp: the validation error of every subtree with
    1-SE bars against cp and tree size, the chosen subtree ringed.

    Example: treecert prune credit-g.json --method ccp --loss sample_data/credit-g.loss.yaml
    -o credit-g.ccp.json
    """
    from treecert.tree.model import read_model

    _state["quiet"] = quiet
    _check_flags(seed=seed)
    check_not_input(output, [model_path] + ([train] if train else []))
    for flag, given in (("--table", table), ("--plot", plot is not None)):
        if given and method.strip().lower() != "ccp":
            raise ConfigError(f"{flag} needs --method ccp.")
    if plot is not None:
        from treecert.evaluation.plots import require_matplotlib

        check_not_input(plot, [model_path, output] + ([train] if train else []))
        require_matplotlib("--plot")  # before any work
    model = read_model(model_path)
    loss_matrix = _read_loss(loss, model.schema.classes)
    data = None
    if train is not None:
        data = _load_matching(train, model.schema, labelled="training")
    _loss_unused_warning(method, loss)
    pruned = api.prune(model, method, loss=loss_matrix, data=data,
                       **_prune_kwargs(cf, no_raise, kl_threshold, holdout, cv, one_se, seed,
                                     kl_unit))
    summary = _pruning_summary(pruned.pruning)
    with staged_outputs():  # the model and the plot appear together, or neither
        write_text(output, api.model_json(pruned))
        if plot is not None:
            from pathlib import Path

            from treecert.evaluation.plots import ccp_plot

            ccp_plot(pruned.pruning, Path(plot), _plot_title(model_path, model, data))
        if table:
            import csv

            rows = pruned.pruning["sequence"]
            with atomic_writer("-") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
                writer.writeheader()
                writer.writerows(rows)
    say(f"{model_path}: {summary}; wrote {output}"
        + (f" and {plot}" if plot is not None else ""))
