"""Work bounded by the input: a big loss file is checked in linear time, and a class that
looks like an identifier is refused before any tree is grown (--max-classes says that many
classes are intended)."""

from __future__ import annotations

import pytest
from conftest import SAMPLE_DATA
from conftest import run_cli as run

from treecert.errors import ConfigError
from treecert.pruning.loss import _check_labels


def test_a_loss_file_of_thousands_of_unknown_labels_is_refused_at_once(tmp_path, capsys):
    """Checked with sets and one count (a count per label was quadratic: 20,000 labels
    took seconds to minutes); the message lists ten labels and counts the rest."""
    loss = tmp_path / "big.yaml"
    loss.write_text("loss:\n" + "".join(f"  x{i:05d}: 0\n" for i in range(5000)))
    model = tmp_path / "w.json"
    assert run(["train", SAMPLE_DATA / "weather.nominal.arff", "-o", model, "-q"],
               capsys)[0] == 0
    out = tmp_path / "p.json"
    code, _, err = run(["prune", model, "--method", "ccp", "--loss", loss, "-o", out], capsys)
    shown = ", ".join(f"x{i:05d}" for i in range(10))
    assert (code, err) == (2, f"Error: {loss}: loss: rows (true classes) must be exactly the "
                              f"classes yes, no (missing yes, no; unknown {shown} and 4990 "
                              "more).\n")
    assert not out.exists()


def test_repeated_and_missing_labels_are_named():
    keys = ["a", "b"] * 3000 + ["c"]
    with pytest.raises(ConfigError, match=r"\(missing d; unknown c; repeated a, b\)"):
        _check_labels(keys, ("a", "b", "d"), "f", "rows")


def _id_csv(path, n: int) -> None:
    path.write_text("a,b,id\n" + "".join(f"{i % 7},{'xy'[i % 2]},id{i}\n" for i in range(n)))


def test_a_class_that_looks_like_an_identifier_is_refused(tmp_path, capsys):
    data = tmp_path / "ids.csv"
    _id_csv(data, 300)
    for command in (["train", data, "-o", tmp_path / "m.json"],
                    ["evaluate", data, "--method", "laplace", "-o", tmp_path / "ev"]):
        code, _, err = run(command, capsys)
        assert (code, err) == (2, f"Error: {data}: the class 'id' has 300 distinct values in "
                                  "300 rows; it looks like an identifier, not a class (a "
                                  "tree's cost grows with rows x classes). Choose the class "
                                  "column with --class NAME, or give --max-classes 300 if "
                                  "these are the classes.\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.csv"]
    code, _, err = run(["train", data, "--max-classes", "100", "-o", tmp_path / "m.json"],
                       capsys)
    assert (code, err) == (2, f"Error: {data}: the class 'id' has 300 distinct values, more "
                              "than the limit of 100 (a tree's cost grows with rows x "
                              "classes). Choose the class column with --class NAME, or give "
                              "--max-classes 300 (0: no limit) if these are the classes.\n")
    # said to be intended: it trains
    for limit in ("300", "0"):
        assert run(["train", data, "--max-classes", limit, "-o", tmp_path / "m.json", "-q"],
                   capsys)[0] == 0
    # the right class column: no complaint
    assert run(["train", data, "--class", "b", "-o", tmp_path / "m.json", "-q"],
               capsys)[0] == 0


def test_small_files_with_a_class_per_row_still_train(tmp_path, capsys):
    """Fewer than 20 labelled rows: too few to call the class an identifier."""
    data = tmp_path / "tiny.csv"
    _id_csv(data, 19)
    assert run(["train", data, "-o", tmp_path / "m.json", "-q"], capsys)[0] == 0
