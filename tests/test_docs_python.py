"""The Python examples of the documentation run as written and print what they show.

``docs/python-api.md`` is a notebook in Markdown: its fenced ``python`` blocks run top to
bottom in one namespace from the repository root, and a ``text`` block right after a
``python`` block is that block's expected output. The README's Python section is checked the
same way.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def examples(path: Path) -> list[tuple[str, str | None, int]]:
    """(code, expected output or None, line number) of every python block of ``path``."""
    text = path.read_text()
    blocks = [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
              for m in FENCE.finditer(text)]
    out = []
    for i, (lang, body, line) in enumerate(blocks):
        if lang != "python":
            continue
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        expected = nxt[1] if nxt is not None and nxt[0] == "text" else None
        out.append((body, expected, line))
    return out


def run_examples(path: Path) -> None:
    namespace: dict = {"__name__": "__docs__"}
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        for code, expected, line in examples(path):
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
                warnings.simplefilter("error")  # an example must not warn
                exec(compile(code, f"{path.name}:{line}", "exec"), namespace)
            if expected is not None:
                got = [s.rstrip() for s in buffer.getvalue().rstrip().splitlines()]
                want = [s.rstrip() for s in expected.rstrip().splitlines()]
                assert got == want, f"{path.name}, block at line {line} printed:\n" + \
                    "\n".join(got)
    finally:
        os.chdir(cwd)


def test_python_api_page_runs_as_written():
    pytest.importorskip("sklearn")
    path = REPO / "docs" / "python-api.md"
    assert len(examples(path)) >= 5
    run_examples(path)


def test_readme_python_section_runs_as_written():
    path = REPO / "README.md"
    assert examples(path), "the README has no python example"
    run_examples(path)


def test_the_checker_compares_outputs(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n")
    with pytest.raises(AssertionError, match="printed"):
        run_examples(page)
    page.write_text("```python\nprint(1 + 1)\n```\n\n```text\n2\n```\n")
    run_examples(page)
