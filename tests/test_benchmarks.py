"""benchmarks/ and BENCHMARKS.md agree: every script is named, documented and runnable quick.

``benchmarks/run.py --quick`` runs every table's script on a smoke-sized workload (no
timing is asserted, only that each ran and printed its table), and every script given
nothing to run exits non-zero instead of printing an empty result.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
PAGE = ROOT / "BENCHMARKS.md"
SCRIPTS = sorted(BENCH.glob("*.py"))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TREECERT_QUICK"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _registry() -> dict:
    sys.path.insert(0, str(BENCH))
    try:
        import run
    finally:
        sys.path.remove(str(BENCH))
    return run.REGISTRY


def test_every_script_is_named_on_the_page_or_in_a_test() -> None:
    texts = PAGE.read_text() + "".join(
        p.read_text() for p in (ROOT / "tests").glob("test_*.py") if p.name != Path(__file__).name)
    unnamed = [p.name for p in [*SCRIPTS, *BENCH.glob("*.R")]
               if f"benchmarks/{p.name}" not in texts and f"`{p.name}`" not in texts]
    assert unnamed == []


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_every_script_has_a_one_line_docstring(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc, f"{path.name} has no module docstring"
    first, _, rest = doc.partition("\n")
    assert first.strip() and (not rest or rest.startswith("\n")), (
        f"{path.name}: the docstring's first line is not a one-line summary")


def test_a_registered_script_names_its_tables_in_its_first_line() -> None:
    for name, table in _registry().items():
        first = ast.get_docstring(ast.parse((BENCH / table.script).read_text())).split("\n")[0]
        assert table.page in first and f'"{name}"' in first, (table.script, name)


def test_the_registry_and_the_page_markers_agree() -> None:
    registry = _registry()
    for name, table in registry.items():
        assert (BENCH / table.script).exists(), name
        assert f"<!-- table: {name} -->" in (ROOT / table.page).read_text(), name
    on_page = re.findall(r"^<!-- table: (\S+) -->$", PAGE.read_text(), re.M)
    assert sorted(on_page) == sorted(n for n, t in registry.items() if t.page == PAGE.name)
    assert len(re.findall(r"^<!-- /table -->$", PAGE.read_text(), re.M)) == len(on_page)


def test_the_page_states_the_present() -> None:
    text = PAGE.read_text()
    assert len(text.splitlines()) <= 400
    assert not re.search(r"[Ss]ession \d+|[Ii]ssue #?\d+", text)


def test_run_quick_regenerates_every_table(tmp_path: Path) -> None:
    out = tmp_path / "BENCHMARKS.md"
    before = PAGE.read_text()
    proc = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick", "--out", str(out)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert PAGE.read_text() == before  # the committed page is left alone
    text = out.read_text()
    skipped = re.findall(r"^skip (\S+):", proc.stderr, re.M)
    for name in _registry():
        block = re.search(rf"<!-- table: {name} -->\n(.*?)<!-- /table -->", text, re.S)
        assert block, name
        if name not in skipped:
            assert re.search(r"^\|.*\|$", block.group(1), re.M), name


def test_run_rejects_an_unknown_table() -> None:
    proc = subprocess.run([sys.executable, str(BENCH / "run.py"), "--only", "nosuch"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unknown table(s): nosuch" in proc.stderr


NOTHING_TO_RUN = [
    ("engine_hard_cases.py", ["--cases", ""]),
    ("tpce_speed.py", ["--datasets", "", "--sizes", ""]),
    ("venn_cost.py", ["--datasets"]),
    ("train_speed.py", ["--sizes"]),
    ("engine_scale.py", ["cv"]),
    ("scale_stream.py", ["--rows"]),
    ("explain_overhead.py", ["--rows", "0"]),
    ("startup.py", ["--repeat", "0"]),
    ("scale_tpce.py", ["--rows", "0"]),
    ("calibration_compare.py", ["lindsay-cox", "--datasets"]),
    ("calibration_eb_reference.py", ["--datasets"]),
    ("prune_compare.py", ["--datasets"]),
    ("prune_j48.py", ["--datasets"]),
    ("j48_parity.py", ["--datasets", "nosuch"]),
]


@pytest.mark.parametrize(("script", "args"), NOTHING_TO_RUN, ids=[s for s, _ in NOTHING_TO_RUN])
def test_a_script_given_nothing_to_run_exits_non_zero(script: str, args: list[str]) -> None:
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0, proc.stdout
    assert "|" not in proc.stdout


def test_tpce_variants_without_results_exits_non_zero(tmp_path: Path) -> None:
    """``--summary-only`` with no runs and no recorded CSV (a copy without them) exits 1."""
    code = f"""
import sys
sys.path.insert(0, {str(BENCH)!r})
import tpce_variants as t
from pathlib import Path
t.OUT = t.WORK = Path({str(tmp_path)!r})
sys.exit(t.main(["--summary-only"]))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(),
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "nothing to report" in proc.stderr
