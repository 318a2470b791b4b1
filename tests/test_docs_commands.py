"""Every command the documentation shows runs as written from a fresh copy of the repository.

Every fenced ``sh``, ``bash`` and ``python`` block of README.md and ``docs/**/*.md`` runs, page
by page, in page order, in one temporary directory per page holding a copy of the
repository's files (``git ls-files``: what a clone has), with the environment variable
``TREECERT_QUICK=1`` (long scripts shrink their workload to a smoke-sized one: same code path,
same output files) and ``treecert`` on PATH as a shim that runs ``python -m treecert`` from
that copy. A block may use the files an earlier block of its page made; a process that did
not run those (under ``pytest -n``) runs them first. Blocks with any other info string
(``yaml``, ``text``) are not run.

Shell blocks run under ``bash -e -o pipefail``; Python blocks run top to bottom in one
namespace per page (a notebook), warnings are errors, and a ``text`` block right after a
``python`` block is the output that block must print.

What is changed before a block runs: the Quick start's test command is not run (it installs
a virtual environment and runs this suite), the ``pip install`` and virtual-environment steps
of the others are dropped (the copy is what is tested), the SLURM array script runs as the
array would (one task after another with ``SLURM_ARRAY_TASK_ID`` set), and the Dask example's
fixed ports are replaced by free ones (other test runs may hold them). A block is skipped only
when a tool or extra it needs is missing, and the skip says which: Graphviz ``dot``, R
(``Rscript``), Weka (``/usr/share/java/weka.jar`` or ``WEKA_JAR``), matplotlib (``treecert[plot]``),
Dask (``treecert[dask]``), scikit-learn.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest
from conftest import REPO

#: The pages whose blocks run: the README first, then docs/ in path order.
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
RUN = ("sh", "bash", "python")

@dataclass(frozen=True)
class Block:
    page: str  # path relative to the repository, e.g. "docs/calibration.md"
    label: str  # the <!-- name --> marker before the block, else the heading above it
    lang: str
    code: str
    line: int
    expected: str | None  # for python: the text block right after it

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}:{self.label}"


FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def page_blocks(path: Path) -> list[Block]:
    """The runnable blocks of one page, in page order."""
    text = path.read_text(encoding="utf-8")
    page = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else path.name
    fences = list(FENCE.finditer(text))
    out = []
    for i, m in enumerate(fences):
        lang = m.group(1)
        if lang not in RUN:
            continue
        before = text[:m.start()]
        heading = re.findall(r"^#+\s+(.+?)\s*$", FENCE.sub("", before), re.MULTILINE)
        marker = re.search(r"<!-- (\S+) -->\s*\Z", before)
        label = marker.group(1) if marker else (heading[-1].strip("`")[:40] if heading else "top")
        nxt = fences[i + 1] if i + 1 < len(fences) else None
        expected = (nxt.group(2) if lang == "python" and nxt is not None
                    and nxt.group(1) == "text" and not text[m.end():nxt.start()].strip()
                    else None)
        out.append(Block(page, label, lang, m.group(2), before.count("\n") + 1, expected))
    return out


BLOCKS = [b for page in PAGES for b in page_blocks(page)]


def _weka() -> bool:
    jar = Path(os.environ.get("WEKA_JAR", "/usr/share/java/weka.jar"))
    return shutil.which("java") is not None and jar.exists()


#: (pattern in a block, is it available, why it is skipped otherwise)
NEEDS = (
    (r"\|\s*dot\b", lambda: shutil.which("dot") is not None,
     "needs Graphviz's dot (Debian package graphviz), not installed"),
    (r"\bRscript\b|benchmarks/prune_rpart\.py", lambda: shutil.which("Rscript") is not None,
     "needs R's Rscript with rpart (Debian r-cran-rpart), not installed"),
    (r"benchmarks/j48_parity\.py|\bweka\.jar\b", _weka,
     "needs Weka (Debian package weka), not installed"),
    (r"--plots?\b|\bmatplotlib\b", lambda: find_spec("matplotlib") is not None,
     "needs matplotlib (pip install 'treecert[plot]'), not installed"),
    (r"\bdask\b|--scheduler\b", lambda: find_spec("distributed") is not None,
     "needs Dask (pip install 'treecert[dask]'), not installed"),
    (r"\bsklearn\b|GridSearchCV|cross_val_score|Pipeline", lambda: find_spec("sklearn") is not None,
     "needs scikit-learn (pip install '.[test]'), not installed"),
)


def _without_install(script: str) -> str:
    """The script without creating or activating a virtual environment and installing into
    it: the `&&`-chained steps that do so are dropped, as are lines that only install."""
    out = []
    install = re.compile(r"(python3? -m venv|\. \S+/activate|pip )")
    for line in script.splitlines():
        steps = [s.strip() for s in line.split("&&")]
        kept = [s for s in steps if not install.match(s)]
        if len(kept) == len(steps):
            out.append(line)  # as written: its indentation may be a Python string's
        elif kept:
            out.append(" && ".join(kept))
    return "\n".join(out) + "\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def runnable(block: Block) -> tuple[str | None, str]:
    """(the code as it is run, "") or (None, why it is skipped)."""
    if block.label == "test-command":
        return None, "installs a virtual environment and runs this test suite"
    for pattern, available, why in NEEDS:
        if re.search(pattern, block.code) and not available():
            return None, why
    if block.lang == "python":
        return block.code, ""
    script = _without_install(block.code)
    if "$SLURM_ARRAY_TASK_ID" in script:
        script = "\n".join(f"SLURM_ARRAY_TASK_ID={i}\n{script}" for i in range(4))
    for port in sorted(set(re.findall(r"(?:127\.0\.0\.1:|--port )(\d{4,5})\b", script))):
        script = re.sub(rf"(127\.0\.0\.1:|--port ){port}\b", rf"\g<1>{_free_port()}", script)
    return script, ""


#: Where new, not yet tracked files are copied from too (a page being written, its script);
#: elsewhere an untracked file is a leftover of running the examples in the checkout.
SOURCES = ("README.md", "docs", "benchmarks", "sample_data", "tests", "treecert")


def _git_files(*args: str) -> list[str]:
    return subprocess.run(["git", "ls-files", "-z", *args], cwd=REPO, capture_output=True,
                          check=True).stdout.decode().split("\0")


def _copy_repository(root: Path) -> None:
    """The files a clone has (and new ones under SOURCES), or the whole checkout's files
    when git is not available."""
    try:
        listed = [*_git_files("--cached"),
                  *_git_files("--others", "--exclude-standard", "--", *SOURCES)]
    except (OSError, subprocess.CalledProcessError):
        listed = [p.relative_to(REPO).as_posix() for p in REPO.rglob("*")
                  if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts]
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            dst = root / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


@dataclass
class Page:
    root: Path
    env: dict
    namespace: dict
    ran: set


_PAGES: dict[str, Page] = {}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """page -> its working directory (a fresh copy of the repository), made on first use."""
    def get(page: str) -> Page:
        if page not in _PAGES:
            root = tmp_path_factory.mktemp(re.sub(r"\W+", "-", page)) / "treecert"
            _copy_repository(root)
            bin_dir = root.parent / "bin"
            bin_dir.mkdir()
            shim = bin_dir / "treecert"
            shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m treecert "$@"\n')
            shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
            env = dict(os.environ, TREECERT_QUICK="1")
            env["PATH"] = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                           env.get("PATH", "")])
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root),
                                                              env.get("PYTHONPATH")]))
            _PAGES[page] = Page(root, env, {"__name__": "__docs__"}, set())
        return _PAGES[page]
    return get


def _run_shell(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
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


def run_python(code: str, expected: str | None, namespace: dict, cwd: Path,
               where: str) -> None:
    """Run ``code`` in ``namespace`` from ``cwd``; it must not warn, and must print
    ``expected`` when given (trailing spaces aside)."""
    buffer = io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("error")  # an example must not warn
            exec(compile(code, where, "exec"), namespace)
    finally:
        os.chdir(old)
    if expected is not None:
        got = [s.rstrip() for s in buffer.getvalue().rstrip().splitlines()]
        want = [s.rstrip() for s in expected.rstrip().splitlines()]
        assert got == want, f"{where} printed:\n" + "\n".join(got)


def _check(block: Block, code: str, page: Page) -> None:
    where = f"{block.page}:{block.line}"
    if block.lang == "python":
        run_python(code, block.expected, page.namespace, page.root, where)
        return
    res = _run_shell(code, page.root, page.env)
    assert res.returncode == 0, (f"{where} ({block.label}) exited {res.returncode}:\n{code}\n"
                                 f"stderr:\n{res.stderr[-3000:]}")
    assert "Traceback" not in res.stderr, f"{where}:\n{res.stderr[-3000:]}"


def _params() -> list:
    return [pytest.param(i, id=b.id) for i, b in enumerate(BLOCKS)]


@pytest.mark.parametrize("index", _params())
def test_docs_block_runs(index, workspace):
    block = BLOCKS[index]
    code, why = runnable(block)
    if code is None:
        pytest.skip(why)
    page = workspace(block.page)
    # Later blocks use what earlier ones of the page made: run those this process has not
    # run yet (all of them when the tests are spread over several processes, pytest -n).
    for earlier, other in enumerate(BLOCKS[:index]):
        if other.page == block.page and earlier not in page.ran:
            page.ran.add(earlier)
            before, _ = runnable(other)
            if before is not None:
                _check(other, before, page)
    page.ran.add(index)
    _check(block, code, page)


def test_blocks_are_found():
    readme = [b.label for b in BLOCKS if b.page == "README.md"]
    assert readme[:2] == ["main-command", "test-command"]
    assert any(b.lang == "python" for b in BLOCKS if b.page == "README.md")
    assert sum(b.lang == "python" for b in BLOCKS if b.page == "docs/python-api.md") >= 5
    assert {b.page for b in BLOCKS} >= {"docs/calibration.md", "docs/explain.md"}


def test_the_checker_compares_outputs(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# t\n\n```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n\n"
                    "```yaml\nnot: run\n```\n")
    (block,) = page_blocks(page)
    assert (block.lang, block.expected) == ("python", "3\n")
    with pytest.raises(AssertionError, match="printed"):
        run_python(block.code, block.expected, {}, tmp_path, "page.md")
    run_python(block.code, "2\n", {}, tmp_path, "page.md")
