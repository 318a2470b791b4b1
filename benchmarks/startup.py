"""BENCHMARKS.md table "startup": CPU time of short ``treecert`` calls and bare imports.

    python benchmarks/startup.py --repeat 9          # the page's table
    python benchmarks/startup.py --quick             # one run of each after the warm-up

Each command runs as a child process from the repository root (interpreter start, imports,
work and exit); its CPU time is user + system time of the child (``wait4``), the median of
``--repeat`` runs after one warm-up run. Python's bytecode cache is on (in a temporary
``PYTHONPYCACHEPREFIX``, as in an installed package), whatever ``PYTHONDONTWRITEBYTECODE``
says. The ``evaluate`` rows are a whole 10-fold cross-validation of iris: start-up, the
ten trees and every result file (``-o``, written anew each run), or the metrics on stdout.
The same run measures ``python -c pass`` and bare imports of typer, numpy and pandas:
what no command line built on them can go below (numpy also with one OpenBLAS thread, which
the command line asks for). ``--before DIR`` runs every treecert command from another
checkout too, alternating with this one, in a column of its own.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from run import add_quick, quick

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def cpu_seconds(cmd: list[str], env: dict[str, str], root: Path = ROOT) -> float:
    """User + system CPU seconds of one run of ``cmd`` in ``root`` (output discarded; an
    output directory it names after ``-o`` is removed first, so every run writes anew)."""
    if "-o" in cmd:
        shutil.rmtree(cmd[cmd.index("-o") + 1], ignore_errors=True)
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{proc.stderr.read().decode()}")
    proc.stderr.close()
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--before", type=Path, help="another checkout to measure alongside")
    add_quick(ap)
    args = ap.parse_args()
    if quick(args):
        args.repeat = 1
    if args.repeat < 1:
        sys.exit("startup.py: nothing to run (--repeat must be >= 1)")
    work = Path(tempfile.mkdtemp(prefix="treecert-startup-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    py = sys.executable
    model, five = work / "iris.json", work / "five_rows.csv"
    subprocess.run([py, "-m", "treecert", "train", str(SAMPLE / "iris.arff"), "-o",
                    str(model), "-q"], cwd=ROOT, env=env, check=True)
    five.write_text("".join((SAMPLE / "iris.csv").read_text().splitlines(True)[:6]))
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import typer'": [py, "-c", "import typer"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        "python -c 'import numpy' (OPENBLAS_NUM_THREADS=1, as the CLI sets it)": [
            "env", "OPENBLAS_NUM_THREADS=1", py, "-c", "import numpy"],
        "python -c 'import pandas'": [py, "-c", "import pandas"],
        "treecert --help": [py, "-m", "treecert", "--help"],
        "treecert predict --help": [py, "-m", "treecert", "predict", "--help"],
        "treecert show iris.json": [py, "-m", "treecert", "show", str(model)],
        "treecert predict iris.json five_rows.csv (laplace)": [
            py, "-m", "treecert", "predict", str(model), str(five), "--method", "laplace"],
        "treecert predict iris.json five_rows.csv (model's frequency)": [
            py, "-m", "treecert", "predict", str(model), str(five)],
        "treecert evaluate iris.arff --method frequency -o DIR (10-fold CV, all files)": [
            py, "-m", "treecert", "evaluate", str(SAMPLE / "iris.arff"), "--method",
            "frequency", "-o", str(work / "evaluate")],
        "treecert evaluate iris.arff --method laplace (metrics on stdout)": [
            py, "-m", "treecert", "evaluate", str(SAMPLE / "iris.arff"), "--method",
            "laplace"],
    }
    roots = [ROOT] + ([args.before.resolve()] if args.before else [])
    print(f"load before: {os.getloadavg()}", file=sys.stderr)
    head = " | ".join(f"CPU s{'' if len(roots) == 1 else ' now' if r == ROOT else ' before'}"
                      " (median; min-max)" for r in roots)
    print(f"| command | {head} |")
    print("|---|" + "---:|" * len(roots))
    for name, cmd in commands.items():
        where = roots if "treecert" in name else [ROOT]
        runs: dict[Path, list[float]] = {r: [] for r in where}
        for r in where:
            cpu_seconds(cmd, env, r)  # warm-up: writes the bytecode cache
        for _ in range(args.repeat):
            for r in where:
                runs[r].append(cpu_seconds(cmd, env, r))
        cells = [f"{statistics.median(runs[r]):.3f} ({min(runs[r]):.2f}-{max(runs[r]):.2f})"
                 if r in runs else "" for r in roots]
        print(f"| `{name}` | {' | '.join(cells)} |", flush=True)
    print(f"load after: {os.getloadavg()}", file=sys.stderr)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
