"""Lindsay & Cox's protocol and Kukar & Kononenko's threshold: hand-worked cases.

compare's relative layout (their Table 1), the ERC trend line and its slope, the Venn machine
on a pruned base tree, with x eligible as a threshold and online, and K&K's supervised
reliable/unreliable threshold.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli


def test_compare_relative_to_gives_mean_and_median_percent_change(tmp_path, capsys):
    """Three datasets, two methods. accuracy: a (0.6 - 0.8)/0.8 = -25 %, b (0.55 - 0.5)/0.5
    = +10 %, c 0 % -> mean -5 %, median 0 %. log_loss: a (1 - 2)/2 = -50 %, b (1 - 4)/4 =
    -75 %, c has base 0 and is left out -> mean = median = -62.5 % over n = 2."""
    metrics = tmp_path / "m.csv"
    metrics.write_text("dataset,method,accuracy,log_loss\n"
                       "a,frequency,0.8,2.0\na,venn,0.6,1.0\n"
                       "b,frequency,0.5,4.0\nb,venn,0.55,1.0\n"
                       "c,frequency,0.9,0\nc,venn,0.9,0.5\n")
    code, out, _ = run_cli(["compare", metrics, "--relative-to", "frequency",
                            "-o", tmp_path / "out"], capsys)
    assert code == 0
    assert "| venn | -5.0 | -62.5 |" in out  # the mean table comes first
    assert "| venn | +0.0 | -62.5 |" in out
    rel = pd.read_csv(tmp_path / "out" / "relative.csv").set_index("metric")
    assert rel.loc["accuracy", "mean_pct"] == pytest.approx(-5.0)
    assert rel.loc["accuracy", "median_pct"] == pytest.approx(0.0)
    assert rel.loc["log_loss", "n"] == 2
    doc = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert doc["relative_to"] == "frequency"


def test_compare_relative_to_an_absent_method_is_a_one_line_error(tmp_path, capsys):
    metrics = tmp_path / "m.csv"
    metrics.write_text("dataset,method,accuracy\na,frequency,0.8\na,venn,0.6\n")
    code, _, err = run_cli(["compare", metrics, "--relative-to", "laplace"], capsys)
    assert code == 2
    assert "Error: --relative-to: no method 'laplace' in the results." in err
