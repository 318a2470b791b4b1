"""``treecert merge`` of predict parts: every shard of one run exactly once, or a refusal.

Each ``predict --shard`` part says which shard of how many of how many rows it is (CSV: the
first column's name, ARFF: a first comment line), so merge names a missing part (the last
included), a repeated one, and a part whose rows are not its shard's; it puts parts given
out of order (a shell glob lists part-10 before part-2) in shard order. Refusals exit 2 with
one line and write nothing.
"""

from __future__ import annotations

import csv
import io

import arff
import pytest
from conftest import SAMPLE_DATA
from conftest import run_cli as run


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """The whole predict output and three shard parts of it, as CSV and ARFF."""
    from treecert.cli.main import main

    base = tmp_path_factory.mktemp("parts")
    model = base / "iris.json"
    assert main(["train", str(SAMPLE_DATA / "iris.arff"), "-o", str(model), "-q"]) == 0
    out = {}
    for fmt in ("csv", "arff"):
        whole = base / f"whole.{fmt}"
        assert main(["predict", str(model), str(SAMPLE_DATA / "iris.csv"), "--format", fmt,
                     "-o", str(whole), "-q"]) == 0
        names = []
        for i in range(3):
            part = base / f"part-{i}.{fmt}"
            assert main(["predict", str(model), str(SAMPLE_DATA / "iris.csv"), "--format",
                         fmt, "--shard", f"{i}/3", "-o", str(part), "-q"]) == 0
            names.append(part)
        out[fmt] = (whole, names)
    return out


@pytest.mark.parametrize("fmt", ["csv", "arff"])
def test_parts_in_any_order_merge_to_the_whole_output(parts, fmt, tmp_path, capsys):
    whole, (p0, p1, p2) = parts[fmt]
    merged = tmp_path / f"m.{fmt}"
    code, _, err = run(["merge", p2, p0, p1, "-o", merged], capsys)
    assert code == 0, err
    assert merged.read_bytes() == whole.read_bytes()
    assert err.strip() == f"Merged 3 shards (150 rows) into {merged}"


def test_parts_stay_readable_by_csv_and_arff_readers(parts):
    rows = list(csv.reader(io.StringIO(parts["csv"][1][1].read_text())))
    assert rows[0][0] == "row (shard 1/3 of 150 rows)" and rows[1][0] == "50"
    assert len(rows) == 51
    doc = arff.loads(parts["arff"][1][1].read_text())
    assert len(doc["data"]) == 50
    assert parts["arff"][1][1].read_text().startswith(
        "% treecert predict --shard 1/3 of 150 rows\n@relation")


@pytest.mark.parametrize("fmt", ["csv", "arff"])
@pytest.mark.parametrize(("pick", "error"), [
    ([0, 2], "shard 1/3 (rows 50-99 of 150) is missing: 2 of 3 parts given. Give every part "
             "of the run (or run the missing shards)."),
    ([0, 1], "shard 2/3 (rows 100-149 of 150) is missing: 2 of 3 parts given. Give every part "
             "of the run (or run the missing shards)."),
    ([1, 2], "shard 0/3 (rows 0-49 of 150) is missing: 2 of 3 parts given. Give every part "
             "of the run (or run the missing shards)."),
])
def test_a_missing_part_is_named(parts, fmt, pick, error, tmp_path, capsys):
    _, names = parts[fmt]
    code, _, err = run(["merge", *(names[i] for i in pick), "-o", tmp_path / "m"], capsys)
    assert (code, err) == (2, f"Error: {error}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["csv", "arff"])
def test_a_part_given_twice_is_named(parts, fmt, tmp_path, capsys):
    _, (p0, p1, p2) = parts[fmt]
    code, _, err = run(["merge", p0, p1, p1, p2, "-o", tmp_path / "m"], capsys)
    assert (code, err) == (2, f"Error: {p1}: shard 1/3 (rows 50-99 of 150) is given twice "
                              f"(also as {p1}). Give every part once.\n")
    assert list(tmp_path.iterdir()) == []


def test_a_part_with_a_gap_or_cut_short_is_refused(parts, tmp_path, capsys):
    _, (p0, p1, p2) = parts["csv"]
    lines = p1.read_text().splitlines(keepends=True)
    gap = tmp_path / "gap.csv"
    gap.write_text("".join(lines[:3] + lines[4:]))
    short = tmp_path / "short.csv"
    short.write_text("".join(lines[:-1]))
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = run(["merge", p0, gap, p2, "-o", out / "m.csv"], capsys)
    assert (code, err) == (2, f"Error: {gap}: row '53' where row 52 was expected in shard 1/3 "
                              "(rows 50-99 of 150); the part is incomplete or was edited. Run "
                              "that shard again.\n")
    code, _, err = run(["merge", p0, short, p2, "-o", out / "m.csv"], capsys)
    assert (code, err) == (2, f"Error: {short}: ends at row 98, but shard 1/3 (rows 50-99 of "
                              "150) ends at row 99; the part is incomplete. Run that shard "
                              "again.\n")
    arff_lines = parts["arff"][1][1].read_text().splitlines(keepends=True)
    short_arff = tmp_path / "short.arff"
    short_arff.write_text("".join(arff_lines[:-1]))
    a0, _, a2 = parts["arff"][1]
    code, _, err = run(["merge", a0, short_arff, a2, "-o", out / "m.arff"], capsys)
    assert (code, err) == (2, f"Error: {short_arff}: 49 data rows, but shard 1/3 (rows 50-99 "
                              "of 150) holds 50; the part is incomplete or was edited. Run "
                              "that shard again.\n")
    assert list(out.iterdir()) == []


def test_a_whole_output_or_parts_of_two_runs_are_refused(parts, tmp_path, capsys):
    whole, (p0, _, p2) = parts["csv"]
    code, _, err = run(["merge", whole, "-o", tmp_path / "m.csv"], capsys)
    assert (code, err) == (2, f"Error: {whole}: not a 'predict --shard' part: it does not say "
                              "which shard it is. Merge the files 'treecert predict --shard "
                              "I/N' wrote; a whole run's output needs no merging.\n")
    a1 = parts["arff"][1][1]
    code, _, err = run(["merge", p0, a1, p2, "-o", tmp_path / "m.csv"], capsys)
    assert (code, err) == (2, f"Error: {a1}: shard 1/3 (rows 50-99 of 150) is not a part of "
                              f"the same run as {p0} (shard 0/3 (rows 0-49 of 150)): their "
                              "headers differ.\n")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_empty_part_is_caught(tmp_path, capsys):
    """More shards than rows: some parts hold the header alone, and still say which."""
    from treecert.cli.main import main

    model = tmp_path / "w.json"
    data = SAMPLE_DATA / "weather.nominal.arff"
    assert main(["train", str(data), "-o", str(model), "-q"]) == 0
    names = [tmp_path / f"p{i}.csv" for i in range(16)]
    for i, name in enumerate(names):
        assert main(["predict", str(model), str(data), "--shard", f"{i}/16", "-o", str(name),
                     "-q"]) == 0
    code, _, err = run(["merge", *names[1:], "-o", tmp_path / "m.csv"], capsys)
    assert (code, err) == (2, "Error: shard 0/16 (no rows of 14) is missing: 15 of 16 "
                              "parts given. Give every part of the run (or run the missing "
                              "shards).\n")
    assert run(["merge", *names, "-o", tmp_path / "m.csv", "-q"], capsys)[0] == 0
    whole = run(["predict", model, data], capsys)[1]
    assert (tmp_path / "m.csv").read_text() == whole
