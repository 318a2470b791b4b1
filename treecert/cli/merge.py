"""``treecert merge``: put the outputs of a --shard job array back together.

predict shards are CSV files joined line by line; evaluate/compare shards are directories
whose recorded units are finished into the files an unsharded run writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from treecert.cli import options
from treecert.cli.common import _state, say
from treecert.cli.experiment import _write_comparison, _write_evaluation
from treecert.data.fileio import atomic_writer, check_not_input, directory_lock
from treecert.errors import ConfigError


def _merge_runs(parts: list[str], output: str) -> None:
    """Final files of an evaluate or compare run from its shards' recorded units."""
    from treecert.evaluation import runs, units
    from treecert.evaluation.units import UnitStore

    roots = [Path(p) / "units" for p in parts]
    for root in roots:
        if not root.is_dir():
            raise ConfigError(f"{root.parent}: no units/ here; not an evaluate or compare "
                              "output directory.")
    out = Path(output)
    if output == "-":
        raise ConfigError("merging evaluate/compare shards needs an output directory (-o DIR).")
    compare_docs = [units.read_json(r / "compare.json") if (r / "compare.json").exists() else None
                    for r in roots]
    if any(d != compare_docs[0] for d in compare_docs):
        raise ConfigError(f"{parts[0]} and the other directories are not shards of one run.")
    # A shard still running into the output directory holds it: refused, not interleaved.
    with directory_lock(out, hint="Wait until every shard has finished, then merge."):
        if compare_docs[0] is None:
            result, bins = runs.finish_run([UnitStore(r) for r in roots])
            _write_evaluation(result, out, False, bins)
            say(f"Merged {len(parts)} shards: wrote {len(result.predictions)} predictions and "
                f"metrics to {output}")
            return
        doc = compare_docs[0]
        frames = [runs.finish_run([UnitStore(r / d) for r in roots])[0].metrics
                  for d in doc["datasets"]]
        _write_comparison(frames, out, doc["metrics"], doc["tol"], plots=False,
                          relative_to=doc.get("relative_to"))


def _header(fh) -> str:
    """A shard's header: its first line (CSV), or an ARFF file's lines up to ``@data``
    (``predict --format arff``)."""
    first = fh.readline()
    if first.lower().startswith("@relation"):
        while (line := fh.readline()) and line.strip().lower() != "@data":
            first += line
        first += line
    return first


def merge(
    parts: Annotated[
        list[str],
        typer.Argument(help="Shard outputs in order: predict CSV or ARFF files, or "
                            "evaluate/compare output directories."),
    ],
    output: Annotated[
        str, typer.Option("-o", "--output", help="File ('-' = stdout) for predict shards; "
                                                 "directory for evaluate/compare shards.")
    ] = "-",
    quiet: options.Quiet = False,
) -> None:
    """Put the outputs of a --shard job array back together.

    predict shards (CSV or ARFF files, given in shard order): checks that the headers agree and
    writes the header once and every file's rows after it; the result is byte-identical to
    an unsharded run. evaluate/compare shard directories: reads the per-unit results they
    recorded, checks that they are of one run and complete, and writes the files an
    unsharded run writes (predictions.csv, metrics.csv/.json; comparison.* for compare).

    Example: treecert merge part-0.csv part-1.csv part-2.csv -o predictions.csv
    """
    _state["quiet"] = quiet
    for part in parts:
        if not Path(part).exists():
            raise ConfigError(f"{part}: no such file or directory.")
    if all(Path(p).is_dir() for p in parts):
        _merge_runs(parts, output)  # may write into a shard directory: units/ is untouched
        return
    check_not_input(output, parts)
    header = None
    with atomic_writer(output) as out:
        for part in parts:
            p = Path(part)
            if p.is_dir():
                raise ConfigError(f"{part}: a directory among CSV files.",
                                  "Merge predict CSV files or evaluate/compare directories.")
            try:
                fh = p.open("r", encoding="utf-8", newline="")
            except FileNotFoundError:
                raise ConfigError(f"{part}: no such file.") from None
            except OSError as exc:
                raise ConfigError(f"{part}: cannot read ({exc.strerror}).") from None
            with fh:
                first = _header(fh)
                if not first:
                    raise ConfigError(f"{part}: empty file; not a predict shard output.")
                if header is None:
                    header = first
                    out.write(first)
                elif first != header:
                    raise ConfigError(f"{part}: its header differs from {parts[0]}'s; not "
                                      "shards of one run.")
                while block := fh.read(1 << 20):
                    out.write(block)
    if output != "-":
        say(f"Merged {len(parts)} shards into {output}")
