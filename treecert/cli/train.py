"""``treecert train``: grow a tree (optionally pruned) and save it as a JSON model."""

from __future__ import annotations

from typing import Annotated

import typer

from treecert import api
from treecert.cli import options
from treecert.cli.common import (
    _check_flags,
    _load_training,
    _read_loss,
    _state,
    _tree_params,
    say,
)
from treecert.cli.prune import (
    _loss_unused_warning,
    _prune_kwargs,
    _pruning_summary,
)
from treecert.data.fileio import check_not_input, write_text


@options.insert(options.TREE_OPTIONS, before="leaf")
def train(
    ctx: typer.Context,
    data: Annotated[str, typer.Argument(help="Training data: ARFF or CSV ('-' = CSV on stdin).")],
    output: Annotated[str, typer.Option("-o", "--output", help="Model file to write (JSON).")],
    class_name: options.ClassOpt = None,
    max_classes: options.MaxClasses = None,
    leaf: options.Leaf = "frequency",
    alpha: Annotated[float, typer.Option(help="Laplace pseudo-count (J48 -A: 1).")] = 1.0,
    m: Annotated[float, typer.Option("--m", help="m of the m-estimate.")] = 2.0,
    nominal: options.Nominal = None,
    ignore: options.Ignore = None,
    no_embed_data: Annotated[
        bool,
        typer.Option("--no-embed-data", help="Do not store the training data in the model."),
    ] = False,
    prune: options.PruneMethod = "none",
    loss: options.LossOpt = None,
    cf: options.CfOpt = None,
    no_raise: options.NoRaise = False,
    kl_threshold: options.KlThreshold = None,
    kl_unit: options.KlUnit = None,
    holdout: options.HoldoutOpt = None,
    cv: options.CvOpt = None,
    one_se: options.OneSe = False,
    seed: options.Seed = 1,
    j48: options.J48 = False,
    method: Annotated[
        str | None,
        typer.Option(metavar="NAME[:key=value,...]",
                     help="The model's default certainty method. bagging, "
                          "calibrated_bagging and forest are grown now and stored with "
                          "their calibration, so predict never regrows them."),
    ] = None,
    quiet: options.Quiet = False,
    **tree,  # options.TREE_OPTIONS, inserted before --leaf
) -> None:
    """Grow a tree and save it as a JSON model.

    Unpruned by default; --prune M prunes it as 'treecert prune' does. --j48 grows and
    prunes as Weka's J48 does by default.

    --method forest grows a calibrated random forest and stores it (trees, temperature).

    Example: treecert train sample_data/iris.arff -o iris.json --leaf laplace
    """
    _state["quiet"] = quiet
    _check_flags(seed=seed)
    leaf = options.leaf_name(leaf)
    if j48:
        settings = options.j48_settings(ctx, {**tree, "prune": prune, "cf": cf})
        prune, cf = settings.pop("prune"), settings.pop("cf")
        tree = settings
    tree = _tree_params(**tree)  # checked before any work
    check_not_input(output, [data])
    dataset = _load_training(data, class_name, nominal, ignore, max_classes)
    loss_matrix = _read_loss(loss, dataset.schema.classes)
    model = api.train(
        dataset, **tree, leaf=leaf, alpha=alpha, m=m, seed=seed,
        embed_data=not no_embed_data, method=method,
    )
    pruned = ""
    _loss_unused_warning(prune, loss)
    if prune != "none":
        model = api.prune(model, prune, loss=loss_matrix, data=dataset,
                          **_prune_kwargs(cf, no_raise, kl_threshold, holdout, cv, one_se,
                                          seed, kl_unit))
        pruned = f"; {_pruning_summary(model.pruning)}"
    write_text(output, api.model_json(model))
    say(
        f"Trained on {dataset.n_samples} rows of {dataset.source}: "
        f"{model.tree.n_nodes} nodes, {model.tree.n_leaves} leaves, depth {model.tree.depth}"
        f"{pruned}; wrote {output}"
    )
