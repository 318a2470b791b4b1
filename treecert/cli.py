"""The ``treecert`` command line: a thin layer over :mod:`treecert.api`.

This is the only module that imports typer and rich. Every command reads its inputs, calls
one API function and writes the result; user errors (``TreecertError``) are caught in one
place (:func:`main`) and printed as one line ``Error: ...`` with exit code 2.
"""

from __future__ import annotations

import sys
from typing import Annotated

import click
import typer
from rich.console import Console

from treecert import api
from treecert.errors import TreecertError
from treecert.fileio import atomic_writer, check_not_input, write_text
from treecert.model import read_model

app = typer.Typer(
    name="treecert",
    help="Decision trees that tell you how far to trust each prediction.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_stderr = Console(stderr=True, highlight=False, soft_wrap=True)
_state = {"quiet": False}


def say(message: str) -> None:
    """A message for the person at the terminal (stderr; silenced by --quiet)."""
    if not _state["quiet"]:
        _stderr.print(message, markup=False)


def _warn_all(warnings: list[str]) -> None:
    for w in warnings:
        say(f"Warning: {w}")


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No messages on stderr.")]
ClassOpt = Annotated[
    str | None, typer.Option("--class", help="Class attribute (default: the last column).")
]


def _load_training(path: str, class_name: str | None, nominal: str | None, ignore: str | None):
    from treecert.data import load_dataset

    data = load_dataset(
        path,
        class_name=class_name,
        nominal=_split_names(nominal),
        ignore=_split_names(ignore),
    )
    _warn_all(data.warnings)
    return data


def _split_names(text: str | None) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip()) if text else ()


@app.command()
def train(
    data: Annotated[str, typer.Argument(help="Training data: ARFF or CSV ('-' = CSV on stdin).")],
    output: Annotated[str, typer.Option("-o", "--output", help="Model file to write (JSON).")],
    class_name: ClassOpt = None,
    criterion: Annotated[
        str, typer.Option(help="info_gain (papers, Clus), gain_ratio (J48) or gini (CART).")
    ] = "info_gain",
    min_leaf: Annotated[float, typer.Option(help="Minimum weight per branch (J48 -M).")] = 2.0,
    max_depth: Annotated[int | None, typer.Option(help="Maximum depth (root = 0).")] = None,
    min_gain: Annotated[float, typer.Option(help="Minimum heuristic gain to split.")] = 0.0,
    cp: Annotated[float, typer.Option(help="rpart's relative complexity parameter.")] = 0.0,
    binary_splits: Annotated[
        bool, typer.Option("--binary-splits", help="Nominal tests one value vs rest (J48 -B).")
    ] = False,
    threshold: Annotated[
        str, typer.Option(help="midpoint (sklearn, rpart) or lower (observed value, C4.5).")
    ] = "midpoint",
    collapse: Annotated[
        bool, typer.Option("--collapse", help="J48's collapse of useless subtrees.")
    ] = False,
    leaf: Annotated[
        str, typer.Option(help="Leaf estimate: frequency, laplace or m-estimate.")
    ] = "frequency",
    alpha: Annotated[float, typer.Option(help="Laplace pseudo-count (J48 -A: 1).")] = 1.0,
    m: Annotated[float, typer.Option("--m", help="m of the m-estimate.")] = 2.0,
    nominal: Annotated[
        str | None, typer.Option(help="CSV: columns to read as nominal, comma-separated.")
    ] = None,
    ignore: Annotated[
        str | None, typer.Option(help="Attributes to leave out, comma-separated.")
    ] = None,
    no_embed_data: Annotated[
        bool,
        typer.Option("--no-embed-data", help="Do not store the training data in the model."),
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Grow a tree and save it as a JSON model.

    Example: treecert train sample_data/iris.arff -o iris.json --leaf laplace
    """
    _state["quiet"] = quiet
    check_not_input(output, [data])
    dataset = _load_training(data, class_name, nominal, ignore)
    model = api.train(
        dataset, criterion=criterion, min_leaf=min_leaf, max_depth=max_depth,
        min_gain=min_gain, cp=cp, binary_splits=binary_splits, threshold=threshold,
        collapse=collapse, leaf=leaf, alpha=alpha, m=m, embed_data=not no_embed_data,
    )
    write_text(output, api.model_json(model))
    say(
        f"Trained on {dataset.n_samples} rows of {dataset.source}: "
        f"{model.tree.n_nodes} nodes, {model.tree.n_leaves} leaves, depth {model.tree.depth}; "
        f"wrote {output}"
    )


@app.command()
def predict(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file (JSON).")],
    data: Annotated[str, typer.Argument(help="Data to score: ARFF or CSV ('-' = CSV on stdin).")],
    output: Annotated[
        str, typer.Option("-o", "--output", help="CSV to write ('-' = stdout).")
    ] = "-",
    id_column: Annotated[
        str | None, typer.Option("--id", help="Column to copy through as an identifier.")
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Score data with a model: one CSV row per instance, in input order.

    Columns: row, [id], actual (if the file has the class), predicted, p_<label> per class,
    certainty.

    Example: treecert predict iris.json sample_data/iris.arff -o predictions.csv
    """
    from treecert.data import load_for_schema

    _state["quiet"] = quiet
    check_not_input(output, [model_path, data])
    model = read_model(model_path)
    dataset = load_for_schema(data, model.schema, id_column=id_column)
    _warn_all(dataset.warnings)
    frame = api.predict(model, dataset, id_column=id_column)
    with atomic_writer(output) as fh:
        frame.to_csv(fh, index=False, lineterminator="\n")
    if output != "-":
        say(f"Wrote {len(frame)} predictions to {output}")


@app.command()
def show(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file (JSON).")],
    fmt: Annotated[str, typer.Option("--format", help="text, dot or json.")] = "text",
    output: Annotated[str, typer.Option("-o", "--output", help="File ('-' = stdout).")] = "-",
) -> None:
    """Print a model's tree: J48-style text, Graphviz DOT or a JSON summary.

    Example: treecert show iris.json --format dot | dot -Tpng > iris.png
    """
    check_not_input(output, [model_path])
    text = api.show(read_model(model_path), fmt)
    write_text(output, text)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, map user errors to one line and exit code 2."""
    command = typer.main.get_command(app)
    try:
        command.main(args=argv, prog_name="treecert", standalone_mode=False)
    except TreecertError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return exc.exit_code
    except click.exceptions.Abort:
        print("Interrupted.", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except BrokenPipeError:
        return 0
    return 0


def run() -> None:  # console-script entry point
    sys.exit(main())


if __name__ == "__main__":
    run()


