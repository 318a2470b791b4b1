"""``treecert calibrate``: attach calibration (binning, Venn, empirical Bayes) to a model."""

from __future__ import annotations

from typing import Annotated

import typer

from treecert import api
from treecert.cli import options
from treecert.cli.common import _check_flags, _load_matching, _state, say
from treecert.data.fileio import check_not_input, write_text


def calibrate(
    model_path: options.ModelArg,
    output: Annotated[
        str, typer.Option("-o", "--output", help="Calibrated model file to write (JSON).")
    ],
    data: Annotated[
        str | None,
        typer.Argument(
            help="Held-out calibration data: ARFF or CSV with the class ('-' = CSV on stdin)."),
    ] = None,
    method: Annotated[
        str, typer.Option("--method", help="binning, venn, empirical_bayes or "
                                           "calibrated_bagging, with options "
                                           "(e.g. 'binning:base=laplace,bins=10').")
    ] = "binning",
    cv: Annotated[
        int | None,
        typer.Option("--cv", help="Calibrate on K-fold out-of-fold forecasts of the training "
                                  "data embedded in the model instead of DATA."),
    ] = None,
    seed: options.Seed = 1,
    positive: Annotated[
        str | None,
        typer.Option("--positive",
                     help="empirical_bayes: the positive class (default: the "
                          "second declared class value)."),
    ] = None,
    quiet: options.Quiet = False,
) -> None:
    """Attach calibration to a model; 'treecert predict' then applies it by default.

    binning maps each class's forecast to the class frequency of its MDL (or equal-frequency,
    bins=N) bin on the calibration data. venn with DATA or --cv is an inductive Venn
    predictor (probabilities with [lower, upper] bounds); without either it runs the
    transductive Venn machine on the embedded training data. empirical_bayes fits a Beta
    (Dirichlet) prior on the model's own leaves and takes no DATA. calibrated_bagging fits
    its temperature on DATA, or out of bag on the embedded training data without DATA.

    Example: treecert calibrate credit-g.json sample_data/credit-g.arff --method binning
    -o credit-g.cal.json
    """
    from treecert.methods.calibrate import describe
    from treecert.tree.model import read_model

    _state["quiet"] = quiet
    _check_flags(seed=seed)
    check_not_input(output, [model_path] + ([data] if data else []))
    model = read_model(model_path)
    dataset = None
    if data is not None:
        dataset = _load_matching(data, model.schema)
    calibrated = api.calibrate(model, dataset, method=method, cv=cv, seed=seed,
                               positive=positive)
    write_text(output, api.model_json(calibrated))
    say(f"Calibrated {model_path}: {describe(calibrated)}; wrote {output}")
