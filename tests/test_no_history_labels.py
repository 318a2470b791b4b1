"""The repository's prose states the present: no numbered work sessions, no
issue numbers and no commit hashes in any Markdown page, nor in any comment or docstring of
the Python under ``treecert/``, ``tests/`` and ``benchmarks/``. History belongs in git log.

What is read: every ``.md`` file of the repository, whole; of every ``.py`` file, its
comments (``tokenize``) and its module, class and function docstrings (``ast``). String
literals that are data (fixtures, digests, expected outputs) are not prose and are not read.

What counts as a label:

* ``session N``, ``sessions N``, ``work round N``, ``work-round N`` (N a number);
* ``issue N``, ``issue #N``, ``issues N``, and a bare ``#N`` (not a colour such as
  ``#1f77b4``, nor the ``#`` of a heading);
* a commit hash: a token of 7–40 lowercase hex digits holding both a digit and a letter,
  not ``0x``-prefixed, not a colour (``#``-prefixed), not a float such as ``1e999``, not
  part of a longer hex run (a sha256 digest is 64 digits). Where the repository has a
  ``.git``, a token counts only if git knows it as an object, so that hex that merely looks
  like a hash is not flagged; without one (a copy of the tree) every such token counts.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PY_DIRS = ("treecert", "tests", "benchmarks")


SESSION = re.compile(r"\b(?:sessions?|work[- ]rounds?)\s+\d+", re.IGNORECASE)
ISSUE = re.compile(r"\bissues?\s*#?\d+|(?<![\w&#/])#\d+(?![\w-])", re.IGNORECASE)
HEX = re.compile(r"(?<![0-9A-Za-z_#])(?<!0x)[0-9a-f]{7,40}(?![0-9A-Za-z_])")
FLOAT = re.compile(r"\d*\.?\d+e[+-]?\d+")


def _hash_like(token: str) -> bool:
    return (any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)
            and not FLOAT.fullmatch(token))


def prose_of(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the prose of ``path``: a Markdown file's lines; a Python file's
    comments and docstrings."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return list(enumerate(text.splitlines(), 1))
    out = [(tok.start[0], tok.string)
           for tok in tokenize.generate_tokens(io.StringIO(text).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                doc = body[0].value
                out += [(doc.lineno + i, line) for i, line in enumerate(doc.value.splitlines())]
    return out


def _known_objects(root: Path, tokens: set[str]) -> set[str]:
    """The tokens git knows as objects of the repository at ``root`` (all of them when
    there is no repository or no git: the strict pattern alone decides)."""
    if not tokens or not (root / ".git").exists() or shutil.which("git") is None:
        return tokens
    asked = sorted(tokens)
    res = subprocess.run(["git", "cat-file", "--batch-check"], input="\n".join(asked) + "\n",
                         cwd=root, capture_output=True, text=True, check=False)
    answers = res.stdout.splitlines()
    if res.returncode != 0 or len(answers) != len(asked):
        return tokens
    # one answer per line asked, in order: "<full name> <type> <size>", "<name> missing",
    # or "<name> ambiguous" (a prefix of several objects: known too)
    return {tok for tok, answer in zip(asked, answers, strict=True)
            if not answer.endswith(" missing")}


def files_of(root: Path) -> list[Path]:
    """Every Markdown file of the repository and every Python file under PY_DIRS: the files
    git does not ignore where there is a repository, else every such file outside hidden
    directories and the usual build and environment folders."""
    globs = ["*.md", *(f"{d}/*.py" for d in PY_DIRS)]  # git's "*" crosses "/"
    if (root / ".git").exists() and shutil.which("git") is not None:
        res = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "--", *globs],
                             cwd=root, capture_output=True, text=True, check=False)
        if res.returncode == 0:
            return sorted({root / line for line in res.stdout.splitlines()
                           if (root / line).is_file()})
    skip = {"venv", "node_modules", "__pycache__", "build", "dist", "site-packages"}

    def kept(path: Path) -> bool:
        parts = path.relative_to(root).parts[:-1]
        return not any(p.startswith(".") or p in skip or p.endswith(".egg-info") for p in parts)

    md = [p for p in root.rglob("*.md") if kept(p)]
    py = [p for d in PY_DIRS for p in (root / d).rglob("*.py") if kept(p)]
    return sorted(md + py)


def history_labels(root: Path, files: list[Path] | None = None) -> list[str]:
    """``path:line: label`` for every history label in the prose of ``files`` (default:
    :func:`files_of`), paths relative to ``root``."""
    hits, hex_hits = [], []
    for path in files_of(root) if files is None else files:
        rel = path.relative_to(root).as_posix()
        for line, text in prose_of(path):
            for pattern in (SESSION, ISSUE):
                hits += [f"{rel}:{line}: {m.group(0)}" for m in pattern.finditer(text)]
            hex_hits += [(rel, line, m.group(0)) for m in HEX.finditer(text)
                         if _hash_like(m.group(0))]
    known = _known_objects(root, {tok for _, _, tok in hex_hits})
    hits += [f"{rel}:{line}: {tok}" for rel, line, tok in hex_hits if tok in known]
    return sorted(hits)


def test_no_history_labels():
    hits = history_labels(ROOT)
    assert hits == [], "history labels (state the present; history is in git log):\n" + \
        "\n".join(hits)


PLANTED = {
    "session": "Measured in session 32 on credit-g.",
    "sessions": "See BENCHMARKS.md, sessions 18-19.",
    "work round": "Since work round 12, it is fast.",
    "issue": "Streamed predict (issue 15).",
    "issue #": "Hostile use (issue #16).",
    "bare #": "As rpart gets wrong (#74).",
    "hash": "Fixed at cafbd73.",
}
BENIGN = ("A sha256 digest: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08; "
          "colour #1f77b4; 0x7fffffff; dtype float64; 1e999999; the round's nodes; "
          "## A heading; deadbeef; row_id 1234567")


@pytest.mark.parametrize("kind", sorted(PLANTED))
@pytest.mark.parametrize("where", ["md", "comment", "docstring"])
def test_planted_label_is_found(tmp_path, kind, where):
    """Each kind of label, planted in a page, a comment or a docstring, is reported (so the
    repository test cannot pass by reading nothing)."""
    text = PLANTED[kind]
    if where == "md":
        path, src = tmp_path / "README.md", f"# Title\n\n{text}\n"
    elif where == "comment":
        path, src = tmp_path / "tests" / "test_x.py", f"X = 1  # {text}\n"
    else:
        path, src = tmp_path / "treecert" / "x.py", f'def f():\n    """{text}"""\n'
    path.parent.mkdir(exist_ok=True)
    path.write_text(src, encoding="utf-8")
    hits = history_labels(tmp_path)
    assert len(hits) == 1 and hits[0].startswith(path.relative_to(tmp_path).as_posix()), hits


def test_benign_hex_and_numbers_and_data_are_not_labels(tmp_path):
    (tmp_path / "README.md").write_text(BENIGN + "\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        f'"""{BENIGN}"""\nDIGEST = "cafbd73 issue 15 session 3"  # {BENIGN}\n', encoding="utf-8")
    assert history_labels(tmp_path) == []


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_with_git_only_known_objects_are_hashes(tmp_path):
    """In a repository, a hex token counts only if git knows it: the planted commit's
    abbreviated hash is found, an unknown hash-like token is not."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True,
                              check=True).stdout.strip()
    git("init", "-q")
    (tmp_path / "a.txt").write_text("a\n")
    git("add", "a.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    short = git("rev-parse", "--short=9", "HEAD")
    if not _hash_like(short):
        pytest.skip("the commit's abbreviation happens to be all digits or all letters")
    unknown = "0123abcd4" if not short.startswith("0123abcd4") else "4dcba3210"
    (tmp_path / "README.md").write_text(f"Fixed at {short}; not a commit: {unknown}.\n")
    assert history_labels(tmp_path) == [f"README.md:1: {short}"]
