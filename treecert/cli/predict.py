"""``treecert predict``: score data with a model, streamed in chunks, one CSV row per instance."""

from __future__ import annotations

from typing import Annotated

import typer

from treecert import api
from treecert.cli import options
from treecert.cli.common import _read_loss, _state, _warn_all, say
from treecert.cli.progress import _RowProgress
from treecert.data.fileio import atomic_writer, check_not_input, write_columns
from treecert.errors import ConfigError


def predict(
    model_path: options.ModelArg,
    data: Annotated[str, typer.Argument(help="Data to score: ARFF or CSV ('-' = CSV on stdin).")],
    output: Annotated[
        str, typer.Option("-o", "--output", help="File to write ('-' = stdout).")
    ] = "-",
    fmt: Annotated[
        options.PredictFormat,
        typer.Option("--format", help="csv, or arff for Weka: the data with "
                                      "distribution_<label> per class, certainty and the "
                                      "predicted class as 'classification' (Weka's "
                                      "AddClassification)."),
    ] = "csv",
    id_column: Annotated[
        str | None, typer.Option("--id", help="Column to copy through as an identifier.")
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(metavar="NAME[:key=value,...]",
                     help="Certainty method, e.g. laplace or 'laplace:alpha=0.5' (default: "
                          "the model's own); NAME one of {METHODS}."),
    ] = None,
    loss: Annotated[
        str | None,
        typer.Option("--loss", help="Loss matrix YAML: predict the class of minimum expected "
                                    "loss and add an expected_loss column."),
    ] = None,
    shard: options.ShardOpt = None,
    jobs: options.Jobs = 1,
    scheduler: options.SchedulerOpt = None,
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", metavar="BYTES",
                          help="Input text read per chunk (memory is a small multiple of it).")
    ] = 1 << 20,
    explain: Annotated[
        bool, typer.Option("--explain", help="Add why-columns: leaf, leaf_share, leaf_size, "
                                             "path, and the method's per-label estimates.")
    ] = False,
    quiet: options.Quiet = False,
) -> None:
    """Score data with a model: one CSV row per instance, in input order.

    Columns: row, [id], actual (if the file has the class), predicted, p_<label> per class,
    certainty, and lower_<label>/upper_<label> for methods that give bounds. With --loss,
    predicted is the class of minimum expected loss and expected_loss is that loss.

    --explain adds leaf (node id), leaf_share (the row's share of that leaf: below 1 when an
    unknown value split the row over several leaves; the columns then describe the
    heaviest), leaf_size (weighted training rows), path (e.g. 'a<=3 & b=x'; ' (?)' marks a
    test whose value is unknown) and, for tpce, tpce_if_<a>_p_<c>: the Laplace estimate of
    class c in the tree grown with the row labelled a (Eq. 1 averages them over a); kk adds
    kk_q_<c>, venn venn_if_<a>_p_<c>.

    Input (CSV files, .csv.gz, stdin; ARFF files, dense or sparse) is streamed: read in
    chunks of --chunk-size bytes (1 MB) and written as it goes, so memory stays at the
    model plus about 30 times the chunk size (~100 MB in all for a small model), whatever
    the file size. The output is still written atomically. --shard I/N scores rows
    [floor(I*n/N), floor((I+1)*n/N)) with their global row numbers; every shard has the
    header, so the header once plus the shards' other lines in order is the whole output.

    Which methods fit at predict time: the leaf methods (frequency, laplace, m_estimate) use
    the stored tree; a model made by 'train --method' or 'calibrate --method' with bagging,
    calibrated_bagging or forest stores their trees and calibration and grows nothing.
    The transductive methods (tpce, tpce_batch, kk, venn without calibration data) must fit
    per instance: each test row joins the training data with every tentative label and the
    trees are regrown, which is what they estimate. Any other method named by --method
    (and an ensemble the model does not store) is fitted once on the embedded training data
    before scoring.

    Transductive methods (tpce, kk, venn): ENGINE_MEMORY

    Example: treecert predict iris.json sample_data/iris.arff -o predictions.csv
    """
    from treecert.data.stream import SchemaReader
    from treecert.parallel import backend, parse_shard, shard_bounds
    from treecert.tree.model import read_model

    _state["quiet"] = quiet
    check_not_input(output, [model_path, data])
    part = parse_shard(shard)
    if chunk_size < 1:
        raise ConfigError("--chunk-size must be at least 1 byte.")
    model = read_model(model_path)
    loss_matrix = _read_loss(loss, model.schema.classes)
    reader = SchemaReader(data, model.schema, id_column=id_column, chunk_bytes=chunk_size)
    rows, total = None, None
    if part is not None:
        total = reader.count_rows()
    if part is not None:
        rows = shard_bounds(total, *part)
        total = rows[1] - rows[0]
    write = _arff_writer(id_column) if fmt == "arff" else _csv_writer
    with backend(scheduler):
        runner = api.predictor(model, method=method, loss=loss_matrix, jobs=jobs,
                                explain=explain)
        written = 0
        with atomic_writer(output) as fh, _RowProgress("predicting", total) as bar:
            for chunk in reader.chunks(rows):
                with bar.chunk(chunk):
                    table = api.predict_columns(runner, model, chunk.data,
                                                id_column=id_column, loss=loss_matrix,
                                                row_offset=chunk.row_offset)
                write(table, chunk.data, fh, written == 0)
                written += chunk.data.n_samples
            if written == 0:  # an empty shard: the header alone, from the first row's table
                first = next(iter(reader.chunks((0, 1))))
                table = api.predict_columns(runner, model, first.data, id_column=id_column,
                                            loss=loss_matrix)
                write({name: col[:0] for name, col in table.items()},
                      first.data.subset(slice(0, 0)), fh, True)
    _warn_all(reader.warnings)
    if output != "-":
        say(f"Wrote {written} predictions to {output}")


def _csv_writer(table, data, fh, header: bool) -> None:
    write_columns(table, fh, header=header)


def _arff_writer(id_column):
    """Writes chunks as one ARFF file: the header (from the first chunk's layout), then
    every chunk's rows (:func:`treecert.data.arff_writer.predictions_dataset`)."""
    from treecert.data.arff_writer import arff_header, arff_rows, predictions_dataset

    def write(table, data, fh, header: bool) -> None:
        rows = predictions_dataset(data, table, id_column)
        if header:
            fh.write(arff_header(rows.schema))
        fh.write(arff_rows(rows))

    return write
