"""Every ``sh`` block of README.md runs as written, so the README cannot rot.

The blocks run in README order in one temporary directory holding a copy of
``sample_data/`` (later examples use the files earlier ones make; a process that did not run
them, under ``pytest -n``, runs them first), with ``treecert`` on
PATH as a shim that runs ``python -m treecert`` from this checkout. Skipped: the Quick
start's test command (it installs a virtual environment and runs this suite), the
``pip install`` steps of the others (the checkout is what is tested), and blocks whose
external program (Graphviz ``dot``) is absent. The SLURM script runs as the job array
would, one task after another with ``SLURM_ARRAY_TASK_ID`` set.

The cluster examples (the SLURM array on credit-g with tpce, its merge, and the local Dask
cluster) cost more than the rest of the README together (about 50 CPU-seconds, plus
starting a Dask scheduler and workers on fixed ports); they run when
``TREECERT_README_SLOW=1`` is set and are skipped otherwise, saying so.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_DATA

README = REPO / "README.md"

#: External programs some examples pipe into; a block using one is skipped when it is absent.
EXTERNAL = ("dot",)
#: What marks the cluster examples, run only with TREECERT_README_SLOW=1 (module docstring).
SLOW = ("$SLURM_ARRAY_TASK_ID", "results/credit-g-array", "dask scheduler")


def readme_blocks() -> list[tuple[str, str]]:
    """(label, script) of every fenced ``sh`` block, in README order. The label is the
    ``<!-- name -->`` marker before the block or the heading above it."""
    blocks, heading, marker = [], "top", None
    lines = README.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip().strip("`")
        elif m := re.fullmatch(r"<!-- (\S+) -->", line.strip()):
            marker = m.group(1)
        elif line.strip() == "```sh":
            end = lines.index("```", i + 1)
            label = marker or heading
            n = sum(1 for lab, _ in blocks if lab.startswith(label))
            blocks.append((label if n == 0 else f"{label} #{n + 1}",
                           "\n".join(lines[i + 1:end]) + "\n"))
            marker, i = None, end
        i += 1
    return blocks


def _without_install(script: str) -> str:
    """The script without creating or activating a virtual environment and installing
    into it: the `&&`-chained steps that do so are dropped, as are lines that only
    install."""
    out = []
    for line in script.splitlines():
        steps = [s.strip() for s in line.split("&&")]
        kept = [s for s in steps if not re.match(r"(python3? -m venv|\. \S+/activate|pip )", s)]
        if kept:
            out.append(" && ".join(kept))
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("readme")
    shutil.copytree(SAMPLE_DATA, root / "sample_data")
    bin_dir = root / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "treecert"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m treecert "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                   env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return root, env


def _run(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """Run ``script`` with bash -e in its own process group; whatever it left running in
    the background (a Dask scheduler and workers) is stopped afterwards. Output goes to
    files, not pipes: a background process keeps a pipe open, and reading it to the end
    would wait for that process."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd,
                                env=env, stdout=out, stderr=err, text=True,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=900)  # a guard against a hang, not a budget
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(proc.args, code, out.read(), err.read())


BLOCKS = readme_blocks()


def _runnable(label: str, script: str) -> tuple[str | None, str]:
    """(the script as it is run, "") or (None, why it is skipped)."""
    if label == "test-command":
        return None, "installs a virtual environment and runs this test suite"
    for program in EXTERNAL:
        if re.search(rf"\|\s*{program}\b", script) and shutil.which(program) is None:
            return None, f"needs {program!r} (Graphviz), not installed"
    if any(mark in script for mark in SLOW) and os.environ.get("TREECERT_README_SLOW") != "1":
        return None, "a cluster example (about 50 CPU-s); set TREECERT_README_SLOW=1 to run it"
    script = _without_install(script)
    if "$SLURM_ARRAY_TASK_ID" in script:
        script = "\n".join(f"SLURM_ARRAY_TASK_ID={i}\n{script}" for i in range(4))
    return script, ""


def _check(label: str, script: str, root: Path, env: dict) -> None:
    res = _run(script, root, env)
    assert res.returncode == 0, f"{label}:\n{script}\nstderr:\n{res.stderr[-3000:]}"
    assert "Traceback" not in res.stderr


#: Blocks already run in each work directory (this process's module fixture).
_RAN: dict[str, set[int]] = {}


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[b[0] for b in BLOCKS])
def test_readme_block_runs(index, workdir):
    root, env = workdir
    label, script = BLOCKS[index]
    script, why = _runnable(label, script)
    if script is None:
        pytest.skip(why)
    # Later examples use what earlier ones made: run those this process has not run yet
    # (all of them when the tests are spread over several processes, pytest -n).
    ran = _RAN.setdefault(str(root), set())
    for earlier in range(index):
        if earlier not in ran:
            ran.add(earlier)
            before, _ = _runnable(*BLOCKS[earlier])
            if before is not None:
                _check(BLOCKS[earlier][0], before, root, env)
    ran.add(index)
    _check(label, script, root, env)


def test_blocks_are_found():
    labels = [label for label, _ in BLOCKS]
    assert labels[:2] == ["main-command", "test-command"]
    assert any("treecert merge" in label for label in labels)
