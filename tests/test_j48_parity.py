"""``--j48`` against Weka's J48 itself, on every shared ARFF file (skipped without Weka).

For each ``tests/data/*.arff``: the tree J48 3.6.14 prints with its defaults
(``-C 0.25 -M 2``) and unpruned (``-U -M 2``) is, line for line,
the text of the tree ``treecert train --j48`` grows (thresholds and leaf weights as J48
prints them); and J48's own 10-fold cross-validation (``-x 10 -s 1``) classifies as many
instances correctly as ``treecert evaluate --j48 --weka-folds``. The table of
docs/j48-parity.md comes from ``benchmarks/j48_parity.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import DATASETS, run_cli

WEKA_JAR = Path("/usr/share/java/weka.jar")
pytestmark = [
    pytest.mark.skipif(shutil.which("java") is None or not WEKA_JAR.exists(),
                       reason="needs Weka (Debian package weka)"),
    pytest.mark.slow,
]
ARFFS = sorted(p.stem for p in DATASETS.glob("*.arff"))
SETTINGS = {"default": (["-C", "0.25", "-M", "2"], []),
            "unpruned": (["-U", "-M", "2"], ["--prune", "none"])}


def _j48(*args: str) -> str:
    return subprocess.run(["java", "-cp", str(WEKA_JAR), "weka.classifiers.trees.J48", *args],
                          capture_output=True, text=True, check=True).stdout


def _tree_lines(text: str) -> list[str]:
    """The tree's lines of a J48 printout or of treecert's text, up to "Number of Leaves"."""
    lines = text.splitlines()
    rule = [i for i, ln in enumerate(lines) if ln.startswith("-----")]
    lines = lines[rule[0] + 1:] if rule else lines  # J48's header ends with a rule
    end = next(i for i, ln in enumerate(lines) if ln.startswith("Number of Leaves"))
    return [ln for ln in lines[:end] if ln.strip()]


def test_every_shared_arff_is_tested():
    assert len(ARFFS) == 17


@pytest.mark.parametrize("name", ARFFS)
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_j48_prints_treecerts_tree(name, setting, tmp_path, capsys):
    from treecert.api import load_model_json
    from treecert.tree.render import to_text

    weka_opts, ours = SETTINGS[setting]
    arff = DATASETS / f"{name}.arff"
    expected = _tree_lines(_j48(*weka_opts, "-t", str(arff), "-no-cv", "-v"))
    model_path = tmp_path / "m.json"
    code, _, err = run_cli(["train", arff, "-o", model_path, "--j48", *ours, "-q"], capsys)
    assert code == 0, err
    model = load_model_json(model_path.read_text())
    assert _tree_lines(to_text(model.estimator.tree_, model.schema)) == expected


@pytest.mark.parametrize("name", ARFFS)
def test_j48_cross_validation_in_wekas_folds(name, tmp_path, capsys):
    arff = DATASETS / f"{name}.arff"
    out = _j48("-C", "0.25", "-M", "2", "-t", str(arff), "-x", "10", "-s", "1")
    section = out[out.index("=== Stratified cross-validation ==="):]
    correct = float(re.search(r"Correctly Classified Instances\s+([\d.]+)", section).group(1))
    code, _, err = run_cli(["evaluate", arff, "--method", "frequency", "--j48", "--weka-folds",
                            "--no-timing", "-q", "-o", tmp_path / "cv"], capsys)
    assert code == 0, err
    metrics = pd.read_csv(tmp_path / "cv" / "metrics.csv")
    assert metrics["accuracy"][0] * metrics["n_test"][0] == pytest.approx(correct, abs=1e-9)
