"""``treecert merge``: put the outputs of a --shard job array back together.

predict shards are CSV files joined line by line; evaluate/compare shards are directories
whose recorded units are finished into the files an unsharded run writes.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Annotated

import typer

from treecert.cli import options
from treecert.cli.common import _state, say
from treecert.cli.experiment import _write_comparison, _write_evaluation
from treecert.data.fileio import atomic_writer, check_not_input, directory_lock
from treecert.errors import ConfigError
from treecert.parallel import parse_shard_tag, shard_bounds


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


class _Part:
    """A ``predict --shard`` part: its file, kind (csv/arff), shard tag and header."""

    def __init__(self, path: str) -> None:
        self.path = path
        p = Path(path)
        if p.is_dir():
            raise ConfigError(f"{path}: a directory among predict parts.",
                              "Merge predict CSV/ARFF files or evaluate/compare directories.")
        with self.open() as fh:
            first = fh.readline()
            if not first:
                raise ConfigError(f"{path}: empty file; not a predict shard output.")
            self.arff = first.startswith("%") or first.lower().startswith("@relation")
            tag = None
            if self.arff:
                if first.startswith("% treecert predict --"):
                    tag = parse_shard_tag(first[len("% treecert predict --"):].rstrip("\n"))
                    first = fh.readline()
                self.header = first + _rest_of_arff_header(fh) if first else ""
            else:
                self.header, tag = _csv_header(first, fh)
        if tag is None:
            raise ConfigError(f"{path}: not a 'predict --shard' part: it does not say which "
                              "shard it is.", "Merge the files 'treecert predict --shard I/N' "
                              "wrote; a whole run's output needs no merging.")
        self.index, self.count, self.n = tag
        self.lo, self.hi = shard_bounds(self.n, self.index, self.count)

    def open(self):
        try:
            return Path(self.path).open("r", encoding="utf-8", newline="")
        except FileNotFoundError:
            raise ConfigError(f"{self.path}: no such file.") from None
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot read ({exc.strerror}).") from None

    def describe(self) -> str:
        return _describe(self.index, self.count, self.n)

    def copy_rows(self, out) -> None:
        """Write the part's data lines to ``out``, checking that they are its rows."""
        with self.open() as fh:
            lines = iter(fh)
            if self.arff:  # the tag, then the header up to @data
                _rest_of_arff_header(fh)
                count = 0
                for line in lines:
                    out.write(line)
                    count += line.strip() != "" and not line.startswith("%")
                if count != self.hi - self.lo:
                    raise ConfigError(f"{self.path}: {count} data rows, but {self.describe()} "
                                      f"holds {self.hi - self.lo}; the part is incomplete or "
                                      "was edited.", "Run that shard again.")
                return
            _csv_header(fh.readline(), fh)

            def copied():
                for line in lines:
                    out.write(line)
                    yield line

            expected = self.lo
            for record in csv.reader(copied()):
                if not record or expected >= self.hi or record[0] != str(expected):
                    found = f"row {record[0]!r}" if record else "an empty line"
                    what = (f"{found} where row {expected} was expected" if expected < self.hi
                            else f"{found} after its last row {self.hi - 1}")
                    raise ConfigError(f"{self.path}: {what} in {self.describe()}; the part "
                                      "is incomplete or was edited.", "Run that shard again.")
                expected += 1
            if expected != self.hi:
                raise ConfigError(f"{self.path}: ends at row {expected - 1}, but "
                                  f"{self.describe()} ends at row {self.hi - 1}; the part is "
                                  "incomplete.", "Run that shard again.")


def _describe(index: int, count: int, n: int) -> str:
    lo, hi = shard_bounds(n, index, count)
    rows = f"rows {lo}-{hi - 1}" if hi > lo else "no rows"
    return f"shard {index}/{count} ({rows} of {n})"


def _rest_of_arff_header(fh) -> str:
    """An ARFF file's lines after the first up to and including ``@data``."""
    text = ""
    while line := fh.readline():
        text += line
        if line.strip().lower() == "@data":
            break
    return text


def _csv_header(first: str, fh) -> tuple[str, tuple[int, int, int] | None]:
    """(the unsharded run's header line(s), the shard tag or None) of a CSV part whose
    first line is ``first``; a header whose quoted names hold line breaks spans lines (a
    record ends at the first line break after an even number of quote characters)."""
    text = first
    while text.count('"') % 2 and (line := fh.readline()):
        text += line
    record = next(csv.reader(io.StringIO(text, newline="")), [""])
    match = re.fullmatch(r"row \((.*)\)", record[0] if record else "")
    tag = parse_shard_tag(match.group(1)) if match else None
    if tag is not None:  # the tag has nothing to quote: it is the line's first characters
        text = "row" + text[len(record[0]):]
    return text, tag


def _check_parts(parts: list[_Part]) -> list[_Part]:
    """The parts in shard order once every one of one run is there exactly once."""
    first = parts[0]
    for part in parts[1:]:
        if (part.arff, part.count, part.n) != (first.arff, first.count, first.n) or \
                part.header != first.header:
            raise ConfigError(f"{part.path}: {part.describe()} is not a part of the same run as "
                              f"{first.path} ({first.describe()}): their headers differ.")
    seen: dict[int, _Part] = {}
    for part in parts:
        if part.index in seen:
            raise ConfigError(f"{part.path}: {part.describe()} is given twice (also as "
                              f"{seen[part.index].path}).", "Give every part once.")
        seen[part.index] = part
    missing = [i for i in range(first.count) if i not in seen]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ConfigError(f"{_describe(missing[0], first.count, first.n)} is missing{more}: "
                          f"{len(parts)} of {first.count} parts given.",
                          "Give every part of the run (or run the missing shards).")
    return [seen[i] for i in range(first.count)]


def merge(
    parts: Annotated[
        list[str],
        typer.Argument(help="Shard outputs: predict CSV or ARFF files (in any order), or "
                            "evaluate/compare output directories."),
    ],
    output: Annotated[
        str, typer.Option("-o", "--output", help="File ('-' = stdout) for predict shards; "
                                                 "directory for evaluate/compare shards.")
    ] = "-",
    quiet: options.Quiet = False,
) -> None:
    """Put the outputs of a --shard job array back together.

    predict shards (CSV or ARFF files): every part says which shard of how many of how many
    rows it is; merge refuses a set that is not every shard of one run exactly once (naming
    the missing or repeated one, a missing last part included) or a part whose rows are not
    the rows its shard holds, then writes the header once and the parts' rows in shard
    order (whatever the order given: 'part-*.csv' lists part-10 before part-2); the result
    is byte-identical to an unsharded run. evaluate/compare shard directories: reads the
    per-unit results they recorded, checks that they are of one run and complete, and
    writes the files an unsharded run writes (predictions.csv, metrics.csv/.json;
    comparison.* for compare).

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
    ordered = _check_parts([_Part(p) for p in parts])  # before anything is written
    with atomic_writer(output) as out:
        out.write(ordered[0].header)
        for part in ordered:
            part.copy_rows(out)
    if output != "-":
        say(f"Merged {len(parts)} shards ({ordered[0].n} rows) into {output}")
