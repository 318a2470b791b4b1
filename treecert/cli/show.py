"""``treecert show``: print a model's tree as text, Graphviz DOT or a JSON summary."""

from __future__ import annotations

from typing import Annotated

import typer

from treecert import api
from treecert.cli import options
from treecert.data.fileio import check_not_input, write_text


def show(
    model_path: options.ModelArg,
    fmt: Annotated[options.ShowFormat, typer.Option("--format", help="J48-style text, Graphviz "
                                                                     "DOT or a JSON summary.")
    ] = "text",
    output: Annotated[str, typer.Option("-o", "--output", help="File ('-' = stdout).")] = "-",
) -> None:
    """Print a model's tree: J48-style text, Graphviz DOT or a JSON summary.

    DOT is drawn by Graphviz's dot (https://graphviz.org; Debian package graphviz).

    Example: treecert show iris.json --format dot | dot -Tpng > iris.png
    """
    from treecert.tree.model import read_model

    check_not_input(output, [model_path])
    text = api.show(read_model(model_path), fmt)
    write_text(output, text)
