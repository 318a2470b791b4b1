"""Regenerates every table of BENCHMARKS.md from the scripts registered here.

    python benchmarks/run.py                    # every table, full size; rewrites BENCHMARKS.md
    python benchmarks/run.py --quick            # every table's script on a smoke-sized workload
    python benchmarks/run.py --only hard_cases  # some tables
    python benchmarks/run.py --list             # the registry

A table of a page sits between ``<!-- table: NAME -->`` and ``<!-- /table -->``; the
registry below maps NAME to the script that prints it (markdown on stdout, everything else
on stderr) with its full-size and quick arguments. A full run rewrites the page in place
(``--out PATH`` writes the updated page there instead). A quick run never touches the
committed page: it writes the page with its smoke-sized tables to ``--out`` (default: a
temporary file, whose path it prints). ``TREECERT_QUICK=1`` in the environment means
``--quick``, here and in every script (:func:`quick`). The run exits non-zero when a script
fails, prints nothing, or a registered table has no markers on its page.

To add a table: write a script that prints it (with ``--quick``, see :func:`add_quick`),
add an entry to ``REGISTRY``, and the markers where the table goes.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "benchmarks"
if importlib.util.find_spec("treecert") is None:  # `python benchmarks/X.py` from a clone:
    sys.path.append(str(ROOT))  # every script imports this module before treecert


@dataclass(frozen=True)
class Table:
    """One table: the script printing it, its arguments full-size and quick, its page."""

    script: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ("--quick",)
    page: str = "BENCHMARKS.md"
    needs: tuple[str, ...] = field(default=())  # modules without which it is skipped


REGISTRY: dict[str, Table] = {
    "train": Table("train_speed.py",
                   ("--sizes", "5000", "20000", "100000", "--repeat", "2", "--budget", "30")),
    "tpce_speed": Table("tpce_speed.py", ("--sample", "40")),
    "hard_cases": Table("engine_hard_cases.py", ("--repeat", "3", "--venn", "--cases", "all")),
    "venn_cost": Table("venn_cost.py", ("--warm", "6")),
    "scale": Table("engine_scale.py", ("all",), ("all", "--quick")),
    "stream": Table("scale_stream.py", ("--rows", "1000000", "250000", "--repeat", "3")),
    "stream_arff": Table("scale_stream.py", ("--rows", "--arff-mb", "500", "50",
                                             "--sparse-mb", "50", "5"),
                         ("--rows", "--arff-mb", "1", "--sparse-mb", "0.2", "--quick")),
    "explain": Table("explain_overhead.py", ("--rows", "200000", "--repeat", "3")),
    "startup": Table("startup.py", ("--repeat", "9")),
    "ensembles": Table("ensemble_speed.py", ("--synthetic-folds", "3")),
    "cluster": Table("scale_tpce.py", ("--rows", "100000"), needs=("distributed",)),
}

START = "<!-- table: {} -->"
END = "<!-- /table -->"


def add_quick(ap: argparse.ArgumentParser) -> None:
    """The ``--quick`` flag every benchmark script takes."""
    ap.add_argument("--quick", action="store_true",
                    help="a smoke-sized workload on the same code path (also TREECERT_QUICK=1)")


def quick(args: argparse.Namespace) -> bool:
    """Whether ``args`` (parsed with :func:`add_quick`) or the environment ask for quick."""
    return bool(getattr(args, "quick", False)) or os.environ.get("TREECERT_QUICK") == "1"


def replace_table(text: str, name: str, table: str) -> str:
    """``text`` with the block between ``name``'s markers replaced by ``table``."""
    pattern = re.compile("^" + re.escape(START.format(name)) + r"\n.*?^" + re.escape(END) + "$",
                         re.S | re.M)
    if not pattern.search(text):
        raise SystemExit(f"error: no '{START.format(name)}' ... '{END}' block in the page")
    return pattern.sub(lambda _: f"{START.format(name)}\n{table.strip()}\n{END}", text, count=1)


def write_page(page: Path, text: str) -> None:
    """Put ``text`` between a docs page's ``<!-- tables:begin -->`` and ``<!-- tables:end
    -->`` (the paper reproductions' pages hold all their tables in one block)."""
    begin, end = "<!-- tables:begin -->", "<!-- tables:end -->"
    doc = page.read_text(encoding="utf-8")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    page.write_text(f"{head}{begin}\n{text}{end}{tail}", encoding="utf-8")


def run_one(name: str, table: Table, is_quick: bool) -> tuple[str, float, float]:
    """(stdout, wall s, CPU s of the children) of ``table``'s script."""
    args = table.quick if is_quick else table.full
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    if not is_quick:
        env.pop("TREECERT_QUICK", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cmd = [sys.executable, str(HERE / table.script), *args]
    print(f"+ {name}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"error: {name}: {table.script} exited {proc.returncode}")
    if "|" not in proc.stdout:
        raise SystemExit(f"error: {name}: {table.script} printed no table")
    return proc.stdout, wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quick(ap)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these tables only")
    ap.add_argument("--out", type=Path, help="write the updated page here, not in place")
    ap.add_argument("--list", action="store_true", help="print the registry and stop")
    args = ap.parse_args(argv)
    if args.list:
        for name, t in REGISTRY.items():
            print(f"{name}: {t.page} <- {t.script} {' '.join(t.full)}  |  quick: "
                  f"{' '.join(t.quick)}")
        return 0
    is_quick = quick(args)
    names = args.only or list(REGISTRY)
    unknown = sorted(set(names) - set(REGISTRY))
    if unknown:
        ap.error(f"unknown table(s): {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    pages = {REGISTRY[n].page for n in names}
    if len(pages) > 1 and args.out:
        ap.error("--out takes one page; choose tables of one page with --only")
    texts = {p: (ROOT / p).read_text() for p in pages}
    for name in names:  # every marker present before anything runs
        replace_table(texts[REGISTRY[name].page], name, "")
    print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    total_wall = total_cpu = 0.0
    ran = 0
    for name in names:
        table = REGISTRY[name]
        missing = [m for m in table.needs if not _importable(m)]
        if missing:
            print(f"skip {name}: needs {', '.join(missing)}", file=sys.stderr)
            continue
        out, wall, cpu = run_one(name, table, is_quick)
        texts[table.page] = replace_table(texts[table.page], name, out)
        total_wall += wall
        total_cpu += cpu
        ran += 1
        print(f"  {name}: {wall:.1f} s wall, {cpu:.1f} s CPU", file=sys.stderr, flush=True)
    if not ran:
        print("error: no table ran", file=sys.stderr)
        return 1
    print(f"{ran} tables: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU; load average after: "
          f"{os.getloadavg()[0]:.2f}", file=sys.stderr)
    for page, text in texts.items():
        if args.out:
            dest = args.out
        elif is_quick:
            fd, tmp = tempfile.mkstemp(prefix="treecert-bench-", suffix=".md")
            os.close(fd)
            dest = Path(tmp)
        else:
            dest = ROOT / page
        dest.write_text(text)
        print(f"wrote {dest}", file=sys.stderr)
    return 0


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    sys.exit(main())
