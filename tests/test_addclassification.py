"""``predict --format arff`` is laid out as Weka 3.6's AddClassification output.

The fixtures in ``tests/fixtures/addclassification`` are Weka 3.6.14's
``AddClassification -classification -distribution`` (and ``-remove-old-class``) output for
``play.arff``, whose class ``play`` is the third of four attributes, has a label that
needs quoting and missing values (``make.sh`` writes them). ``J48 -U -M 1`` there is
``--j48 --prune none --min-leaf 1`` here: the same tree, so the same values.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import arff
import pytest
from conftest import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "addclassification"
DATASETS = Path(__file__).parent / "data"
WEKA_JAR = Path("/usr/share/java/weka.jar")
TREE = ["--j48", "--prune", "none", "--min-leaf", "1"]


def _same_rows(ours: list, weka: list) -> None:
    """Weka's columns, value by value (Weka writes 6 decimals; treecert the exact float)."""
    assert len(ours) == len(weka)
    for mine, theirs in zip(ours, weka, strict=True):
        for a, b in zip(mine[:len(theirs)], theirs, strict=True):
            assert a == b if not isinstance(b, float) else abs(a - b) <= 5e-7, (mine, theirs)


def _predict(capsys, tmp_path: Path, data: Path, *train: str) -> dict:
    model, out = tmp_path / "m.json", tmp_path / "p.arff"
    code, _, err = run_cli(["train", FIXTURES / "play.arff", "--class", "play", "-o", model,
                            "-q", *TREE, *train], capsys)
    assert code == 0, err
    code, _, err = run_cli(["predict", model, data, "--format", "arff", "-o", out, "-q"],
                           capsys)
    assert code == 0, err
    return arff.loads(out.read_text())


def test_the_class_stays_in_its_place_then_classification_then_distribution(capsys,
                                                                            tmp_path):
    ours = _predict(capsys, tmp_path, FIXTURES / "play.arff")
    weka = arff.loads((FIXTURES / "play.j48.arff").read_text())
    assert ours["attributes"] == [*weka["attributes"], ("certainty", "NUMERIC")]
    _same_rows(ours["data"], weka["data"])


def test_without_a_class_column_the_layout_is_remove_old_class(capsys, tmp_path):
    lines = (FIXTURES / "play.arff").read_text().splitlines()
    data = tmp_path / "unlabelled.csv"  # the same rows, without the class column
    data.write_text("outlook,temperature,windy\n" + "".join(
        ",".join(v for k, v in enumerate(ln.split(",")) if k != 2) + "\n"
        for ln in lines[lines.index("@data") + 1:]))
    ours = _predict(capsys, tmp_path, data)
    weka = arff.loads((FIXTURES / "play.j48.remove-old-class.arff").read_text())
    assert ours["attributes"] == [*weka["attributes"], ("certainty", "NUMERIC")]
    # Weka 3.6.14 writes the old class's values in the column after it (windy holds
    # play's codes: 'no way' as FALSE); the data columns are the input's, as without
    # -remove-old-class.
    given = arff.loads((FIXTURES / "play.arff").read_text())["data"]
    assert [r[:3] for r in ours["data"]] == [[r[0], r[1], r[3]] for r in given]
    _same_rows([r[3:] for r in ours["data"]], [r[3:] for r in weka["data"]])


def test_the_class_goes_where_the_scored_file_has_it(capsys, tmp_path):
    """The class column first in the file scored: first in the output too (the model's
    attributes keep their order)."""
    lines = (FIXTURES / "play.arff").read_text().splitlines()
    data = tmp_path / "class_first.csv"
    rows = [ln.split(",") for ln in lines[lines.index("@data") + 1:]]
    data.write_text("play,outlook,temperature,windy\n" + "".join(
        ",".join([r[2].strip("'"), r[0], r[1], r[3]]) + "\n" for r in rows))
    ours = _predict(capsys, tmp_path, data)
    names = [name for name, _ in ours["attributes"]]
    assert names == ["play", "outlook", "temperature", "windy", "classification",
                     "distribution_yes", "distribution_no way", "certainty"]
    assert [r[0] for r in ours["data"]] == [r[2].strip("'") if r[2] != "?" else None
                                           for r in rows]


@pytest.mark.skipif(shutil.which("java") is None or not WEKA_JAR.exists(),
                    reason="needs Weka 3.6 (Debian package weka)")
@pytest.mark.parametrize("case", ["play", "iris"])
def test_weka_live(case, capsys, tmp_path):
    """Weka run now: its AddClassification output has our layout and values (play:
    ``J48 -U -M 1``, class third; iris: J48's defaults and ``--j48``, class last)."""
    filter_ = "weka.filters.supervised.attribute.AddClassification"
    if case == "play":
        data, j48, index, tree = FIXTURES / "play.arff", "weka.classifiers.trees.J48 -U -M 1", \
            "3", TREE
    else:
        data, j48, index, tree = DATASETS / "iris.arff", "weka.classifiers.trees.J48", \
            "last", ["--j48"]
    weka_out = tmp_path / "weka.arff"
    subprocess.run(["java", "-cp", str(WEKA_JAR), filter_, "-W", j48, "-classification",
                    "-distribution", "-i", str(data), "-o", str(weka_out), "-c", index],
                   check=True, capture_output=True)
    weka = arff.loads(weka_out.read_text())
    if case == "play":  # the committed fixture is what this Weka writes
        assert weka == arff.loads((FIXTURES / "play.j48.arff").read_text())
    model, out = tmp_path / "m.json", tmp_path / "p.arff"
    train = ["train", data, "-o", model, "-q", *tree]
    assert run_cli([*train, *(["--class", "play"] if case == "play" else [])],
                   capsys)[0] == 0
    assert run_cli(["predict", model, data, "--format", "arff", "-o", out, "-q"],
                   capsys)[0] == 0
    ours = arff.loads(out.read_text())
    assert ours["attributes"] == [*weka["attributes"], ("certainty", "NUMERIC")]
    _same_rows(ours["data"], weka["data"])
