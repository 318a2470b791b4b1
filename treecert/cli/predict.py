"""``treecert predict``: score data with a model, streamed in chunks, one CSV row per instance."""

from __future__ import annotations

from typing import Annotated

import typer

from treecert import api
from treecert.cli import options
from treecert.cli.common import _read_loss, _state, _warn_all, say
from treecert.cli.progress import _RowProgress
from treecert.data.csv_writer import write_columns
from treecert.data.fileio import atomic_writer, check_not_input
from treecert.errors import ConfigError


def predict(
    model_path: options.ModelArg,
    data: Annotated[str, typer.Argument(help="Data to score: ARFF or CSV, plain or gzip "
                                              "('-' = standard input).")],
    output: Annotated[
        str, typer.Option("-o", "--output", help="File to write ('-' = stdout).")
    ] = "-",
    fmt: Annotated[
        options.PredictFormat,
        typer.Option("--format", help="csv, or arff for Weka, laid out as Weka's "
                                      "AddClassification -classification -distribution: "
                                      "the data (class in its place), the predicted class "
                                      "'classification', distribution_<label> per class, "
                                      "then certainty; a data attribute of one of those "
                                      "names is renamed <name>_1."),
    ] = "csv",
    id_column: Annotated[
        str | None, typer.Option("--id", help="Column to copy through as an identifier.")
    ] = None,
    input_format: options.InputFormat = "auto",
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

    The input's format is its name's (.arff, .csv, either .gz); standard input and other
    names are told by their content (gzip's magic bytes; a first line '@relation' is ARFF,
    else CSV), or given with --input-format.

    Input (CSV files, .csv.gz, stdin; ARFF files, dense or sparse) is streamed: read in
    chunks of --chunk-size bytes (1 MB) and written as it goes, so memory stays at the
    model plus about 30 times the chunk size (~100 MB in all for a small model), whatever
    the file size. The output is still written atomically. --shard I/N scores rows
    [floor(I*n/N), floor((I+1)*n/N)) with their global row numbers, and says which part it
    is (CSV: the first column is 'row (shard I/N of n rows)'; ARFF: a first comment line);
    'treecert merge' checks that the parts are all there once each and writes the
    unsharded output, byte for byte.

    Progress: a bar on a terminal; off one (a batch job's log), a line at most every
    TREECERT_PROGRESS_SECONDS seconds (10): rows done, rate and time left.

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
    from treecert.parallel import backend, parse_shard, shard_tag
    from treecert.tree.model import read_model

    _state["quiet"] = quiet
    check_not_input(output, [model_path, data])
    part = parse_shard(shard)
    if chunk_size < 1:
        raise ConfigError("--chunk-size must be at least 1 byte.")
    model = read_model(model_path)
    loss_matrix = _read_loss(loss, model.schema.classes)
    with backend(scheduler):
        stream = api.predict_stream(model, data, method=method, loss=loss_matrix, jobs=jobs,
                                    explain=explain, id_column=id_column,
                                    chunk_bytes=chunk_size, shard=part, fmt=input_format)
        tag = None if part is None else shard_tag(*part, stream.file_rows)
        write = _arff_writer(id_column, tag) if fmt == "arff" else _csv_writer(tag)
        written, header = 0, True
        with atomic_writer(output) as fh, _RowProgress("predicting", stream.total) as bar:
            for chunk in stream.chunks(progress=bar.chunk):
                write(chunk.columns, chunk.data, fh, header)
                written += chunk.data.n_samples
                header = False
    _warn_all(stream.warnings)
    if output != "-":
        say(f"Wrote {written} predictions to {output}")


def _csv_writer(tag: str | None):
    """Writes chunks as one CSV file; a shard's (``tag``, :func:`treecert.parallel.shard_tag`)
    first column is named ``row (<tag>)``."""

    def write(table, data, fh, header: bool) -> None:
        if header and tag is not None:
            table = {(f"row ({tag})" if name == "row" else name): col
                     for name, col in table.items()}
        write_columns(table, fh, header=header)

    return write


def _arff_writer(id_column, tag: str | None):
    """Writes chunks as one ARFF file: the header (from the first chunk's layout), then
    every chunk's rows (:func:`treecert.data.arff_writer.predictions_dataset`); a shard's
    (``tag``) opens with the comment ``% treecert predict --<tag>``."""
    from treecert.data.arff_writer import (
        arff_header,
        arff_rows,
        data_columns,
        predictions_dataset,
    )

    def write(table, data, fh, header: bool) -> None:
        rows = predictions_dataset(data, table, id_column)
        if header:
            given = [a.name for a in data_columns(data, id_column)]
            renamed = [f"{old!r} as {a.name!r}" for old, a in
                       zip(given, rows.schema.attributes, strict=False) if old != a.name]
            if renamed:
                say(f"Warning: {', '.join(renamed)}: renamed in the ARFF output, whose "
                    "prediction columns have those names.")
            if tag is not None:
                fh.write(f"% treecert predict --{tag}\n")
            fh.write(arff_header(rows.schema, with_class=False))
        fh.write(arff_rows(rows, with_class=False))

    return write
