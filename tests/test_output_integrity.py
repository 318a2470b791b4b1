"""A command's outputs appear only when it has succeeded, and ccp pruning to the root.

``prune --method ccp`` whose holdout tree is a single leaf (no split passes the growing
criteria on the rows left after the holdout) chooses that root; the whole tree is pruned to
its root and the record says so, with a finite α (it was written as ``null`` and then the
summary line failed after the model file was written). A command that writes several files
(``prune`` with ``--plot``, ``evaluate -o DIR``) writes all of them or none.
"""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE_DATA, leftovers
from conftest import run_cli as run

from treecert.cli.main import main
from treecert.data import fileio
from treecert.errors import ConfigError

LOSS = "loss:\n  yes: {yes: 0, no: 1}\n  no: {yes: 5, no: 0}\n"


@pytest.fixture(scope="module")
def stump_model(tmp_path_factory):
    """weather.nominal with --min-leaf 3: one split on outlook; half its rows grow a leaf."""
    base = tmp_path_factory.mktemp("stump")
    model = base / "w.json"
    assert main(["train", str(SAMPLE_DATA / "weather.nominal.arff"), "--min-leaf", "3", "-o",
                 str(model), "-q"]) == 0
    loss = base / "loss.yaml"
    loss.write_text(LOSS)
    return model, loss


def test_ccp_whose_holdout_tree_is_a_leaf_prunes_to_the_root(stump_model, tmp_path, capsys):
    model, loss = stump_model
    out = tmp_path / "p.json"
    code, _, err = run(["prune", model, "--method", "ccp", "--loss", loss, "--holdout", "0.5",
                        "--seed", "2", "-o", out], capsys)
    assert code == 0, err
    assert err == (f"{model}: pruned with ccp: 3 leaves (4 nodes) -> 1 leaves (1 nodes), alpha "
                   "= 2 chosen by holdout 0.5 (tree regrown on the rest); pruned to the root; "
                   f"wrote {out}\n")
    record = json.loads(out.read_text())["pruning"]
    assert record["pruned_to_root"] is True and record["after"]["nodes"] == 1
    assert record["alpha"] == 2.0  # the α from which the whole tree's root is optimal
    assert record["holdout_sequence"] == [{"alpha": 0.0, "cp": 0.0, "leaves": 1,
                                           "risk": record["holdout_sequence"][0]["risk"],
                                           "rel_error": 1.0,
                                           "holdout_loss": record["holdout_sequence"][0][
                                               "holdout_loss"],
                                           "holdout_se": record["holdout_sequence"][0][
                                               "holdout_se"]}]
    # the pruned model is a valid model: it predicts
    code, pred, _ = run(["predict", out, SAMPLE_DATA / "weather.nominal.arff"], capsys)
    assert code == 0 and len(pred.splitlines()) == 15


def test_prune_whose_plot_fails_leaves_no_model(stump_model, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    model, _ = stump_model
    out = tmp_path / "p.json"
    code, _, err = run(["prune", model, "--method", "ccp", "--holdout", "0.5", "-o", out,
                        "--plot", tmp_path / "no" / "plot.png"], capsys)
    assert (code, err) == (2, f"Error: {tmp_path / 'no' / 'plot.png'}: directory "
                              f"{tmp_path / 'no'} does not exist.\n")
    assert list(tmp_path.iterdir()) == []


def test_staged_outputs_appear_together_or_not_at_all(tmp_path):
    with fileio.staged_outputs():
        fileio.write_text(tmp_path / "a.txt", "a")
        fileio.write_text(tmp_path / "b.txt", "b")
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
    with pytest.raises(ConfigError), fileio.staged_outputs():
        fileio.write_text(tmp_path / "c.txt", "c")
        fileio.write_text(tmp_path / "a.txt", "changed")
        raise ConfigError("failed after writing")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
    assert (tmp_path / "a.txt").read_text() == "a"
    assert leftovers(tmp_path) == [] and not fileio._TEMPORARIES


def test_evaluate_that_fails_writing_leaves_none_of_its_files(tmp_path, capsys, monkeypatch):
    """metrics.json is written after predictions.csv and the metrics tables; when it fails,
    none of them appears."""
    out = tmp_path / "run"

    def fail(*args, **kwargs):
        raise ConfigError("the metrics document failed")

    monkeypatch.setattr("treecert.evaluation.experiment.metrics_document", fail)
    code, _, err = run(["evaluate", SAMPLE_DATA / "weather.nominal.arff", "--method",
                        "laplace", "--folds", "2", "-o", out], capsys)
    assert (code, err.splitlines()[-1]) == (2, "Error: the metrics document failed")
    assert sorted(p.name for p in out.iterdir() if p.name != "units") == []
    assert leftovers(out) == []


def test_ccp_with_credit_g_loss_prunes_to_the_root(tmp_path, capsys):
    """credit-g grown with --min-leaf 250, pruned by ccp for its loss matrix: the tree
    regrown on 80 % of the rows is one leaf (it exited 1 after writing the model)."""
    model = tmp_path / "cg.json"
    assert main(["train", str(SAMPLE_DATA / "credit-g.arff"), "--min-leaf", "250", "-o",
                 str(model), "-q"]) == 0
    out = tmp_path / "p.json"
    code, _, err = run(["prune", model, "--method", "ccp", "--loss",
                        SAMPLE_DATA / "credit-g.loss.yaml", "-o", out], capsys)
    assert code == 0, err
    assert err.endswith(f"4 leaves (5 nodes) -> 1 leaves (1 nodes), alpha = 39.3333 chosen by "
                        f"holdout 0.2 (tree regrown on the rest); pruned to the root; wrote "
                        f"{out}\n")
    record = json.loads(out.read_text())["pruning"]
    assert record["pruned_to_root"] is True and record["loss_used"] is True
