"""Bad input at volume: malformed ARFF, CSV, YAML and model JSON thrown at the command line,
outputs sent anywhere, and runs stopped by signals.

Whatever the input, the CLI must answer with exit 0 or with one line ``Error: ...`` and exit
2 — never a traceback (an exception escaping ``main``) and never a partial output file.
Whatever the output path (a file, a symlink, a directory, a device, a path through a file,
...), nothing but a regular file is ever replaced and no temporary file is left. A signal
(SIGINT, SIGTERM, SIGHUP) at any point of a streamed predict exits 128 + the signal and
leaves nothing behind. ``TREECERT_FUZZ_EXAMPLES`` raises the number of inputs per test (CI
uses the default); the signal test, a subprocess per input, runs a twelfth as many.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import tempfile
from pathlib import Path

import pytest
from conftest import SAMPLE_DATA, leftovers, stop_predict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treecert.cli.main import main

EXAMPLES = int(os.environ.get("TREECERT_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
FUZZ_SIGNALS = settings(FUZZ, max_examples=max(3, EXAMPLES // 12))
TRIED: dict[str, int] = {}

WEATHER_ARFF = (SAMPLE_DATA / "weather.nominal.arff").read_text()
IRIS_CSV = "\n".join((SAMPLE_DATA / "iris.csv").read_text().splitlines()[:30]) + "\n"

_TOKENS = ["@relation", "@attribute", "@data", "@ATTRIBUTE", "numeric", "real", "string",
           "date", "{", "}", ",", "'", '"', "%", "?", "\\", "\n", " ", "\t", "x", "1.5",
           "-", "e", "1e309", "nan", "{0 a}", "{1}", "yes", "no", "sunny", "relational",
           "@end", "\x00", "é"]


def _mutations(text: str):
    """Strategy: ``text`` with random insertions, deletions and swaps of lines/tokens."""
    lines = text.splitlines(keepends=True)

    @st.composite
    def mutate(draw):
        out = list(lines)
        for _ in range(draw(st.integers(1, 4))):
            op = draw(st.sampled_from(["insert", "delete", "replace", "dup", "truncate"]))
            i = draw(st.integers(0, max(0, len(out) - 1))) if out else 0
            if op == "insert":
                tok = draw(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=6))
                out.insert(i, "".join(tok) + draw(st.sampled_from(["\n", ""])))
            elif op == "delete" and out:
                del out[i]
            elif op == "replace" and out:
                line = out[i]
                j = draw(st.integers(0, len(line)))
                tok = draw(st.sampled_from(_TOKENS))
                out[i] = line[:j] + tok + line[j + 1:]
            elif op == "dup" and out:
                out.insert(i, out[i])
            elif op == "truncate":
                joined = "".join(out)
                cut = draw(st.integers(0, len(joined)))
                out = [joined[:cut]]
        return "".join(out)

    return mutate()


def _count(name: str, tmp_path: Path) -> Path:
    """Count one input; a fresh directory for it (hypothesis reuses ``tmp_path``)."""
    TRIED[name] = TRIED.get(name, 0) + 1
    return Path(tempfile.mkdtemp(dir=tmp_path))


def _run_cli(args: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(args)
    except Exception as exc:  # a traceback would reach the user: that is the bug
        pytest.fail(f"exception escaped the CLI for {args}: {type(exc).__name__}: {exc}")
    err = capsys.readouterr().err
    assert code in (0, 2), (code, err)
    if code == 2:
        errors = [ln for ln in err.splitlines() if ln.startswith("Error: ")]
        assert len(errors) == 1, err
    return code, err


def _train_on(text: str, kind: str, tmp_path, capsys) -> Path:
    """``treecert train`` on a malformed ``kind`` file: a model only when it exits 0."""
    work = _count(kind, tmp_path)
    data = work / f"bad.{kind}"
    out = work / "model.json"
    data.write_text(text, encoding="utf-8", errors="surrogatepass")
    code, _ = _run_cli(["train", str(data), "-o", str(out), "-q"], capsys)
    assert out.exists() == (code == 0)
    return work


@FUZZ
@given(text=_mutations(WEATHER_ARFF))
def test_malformed_arff_never_crashes(text, tmp_path, capsys):
    work = _train_on(text, "arff", tmp_path, capsys)
    assert not list(work.glob(".*.tmp"))


@FUZZ
@given(text=_mutations(IRIS_CSV))
def test_malformed_csv_never_crashes(text, tmp_path, capsys):
    _train_on(text, "csv", tmp_path, capsys)


def _good_model_text(tmp: Path) -> str:
    path = tmp / "good.json"
    if not path.exists():
        main(["train", str(SAMPLE_DATA / "weather.nominal.arff"), "-o", str(path), "-q"])
    return path.read_text()


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**6) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=8,
)


@FUZZ
@given(data=st.data())
def test_corrupt_model_json_never_crashes(data, tmp_path_factory, capsys):
    base = tmp_path_factory.getbasetemp()
    tmp = _count("model", base)
    doc = json.loads(_good_model_text(base))
    # Replace one value somewhere in the document (top level, tree or schema).
    section = data.draw(st.sampled_from(["top", "tree", "schema", "params", "training"]))
    target = {"top": doc, "tree": doc["tree"], "schema": doc["schema"],
              "params": doc["params"], "training": doc["training_data"]}[section]
    key = data.draw(st.sampled_from(sorted(target)))
    target[key] = data.draw(_JSON_VALUES)
    model = tmp / "model.json"
    model.write_text(json.dumps(doc))
    out = tmp / "pred.csv"
    code, _ = _run_cli(["predict", str(model), str(SAMPLE_DATA / "weather.nominal.arff"),
                        "-o", str(out), "-q"], capsys)
    assert out.exists() == (code == 0)


def _numeric_model_text(tmp: Path) -> str:
    path = tmp / "numeric.json"
    if not path.exists():
        main(["train", str(SAMPLE_DATA / "weather.numeric.arff"), "-o", str(path), "-q",
              "--binary-splits", "--min-leaf", "1"])
    return path.read_text()


@FUZZ
@given(data=st.data())
def test_tampered_tree_arrays_validate_or_are_refused(data, tmp_path_factory, capsys):
    """Entries of the tree arrays changed to nearby indices, other numbers, text or null:
    a model that loads can be used: it predicts, shows, and prunes or says in one line why
    not (a model that validates can be used)."""
    base = tmp_path_factory.getbasetemp()
    tmp = _count("model", base)
    numeric = data.draw(st.booleans())
    doc = json.loads(_numeric_model_text(base) if numeric else _good_model_text(base))
    tree = doc["tree"]
    for _ in range(data.draw(st.integers(1, 3))):
        key = data.draw(st.sampled_from(sorted(tree)))
        if not tree[key]:
            continue
        i = data.draw(st.integers(0, len(tree[key]) - 1))
        n = len(tree["feature"])
        value = data.draw(st.integers(-2, n + 2) | st.sampled_from([0.5, 1.0, -0.0, 1e300,
                                                                    None, "1", True, []]))
        if key == "counts":
            tree[key][i][data.draw(st.integers(0, len(tree[key][i]) - 1))] = value
        else:
            tree[key][i] = value
    model = tmp / "model.json"
    model.write_text(json.dumps(doc))
    data_file = SAMPLE_DATA / ("weather.numeric.arff" if numeric else "weather.nominal.arff")
    code, _ = _run_cli(["predict", str(model), str(data_file), "-o", str(tmp / "p.csv"),
                        "-q"], capsys)
    if code == 0:  # pruning may still refuse (one line): counts no longer fit the data
        assert _run_cli(["show", str(model)], capsys)[0] == 0
        _run_cli(["prune", str(model), "--method", "ebp", "-o", str(tmp / "e.json"), "-q"],
                 capsys)


@FUZZ
@given(text=_mutations("loss:\n  good: {good: 0, bad: 1}\n  bad: {good: 5, bad: 0}\n"))
def test_malformed_loss_yaml_never_crashes(text, tmp_path, capsys):
    work = _count("yaml", tmp_path)
    loss = work / "loss.yaml"
    loss.write_text(text, encoding="utf-8", errors="surrogatepass")
    out = work / "ev"
    _run_cli(["evaluate", str(SAMPLE_DATA / "weather.nominal.arff"), "--method", "laplace",
              "--folds", "2", "--loss", str(loss), "-o", str(out), "-q"], capsys)


# ---------------------------------------------------------------------- output paths
_TARGETS = ["new file", "existing file", "symlink to a file", "dangling symlink", "directory",
            "symlink to a directory", "missing directory", "through a file", "null device",
            "full device", "fifo", "stdout", "read-only directory"]
_WRITERS = ["train", "predict", "show", "prune", "evaluate", "merge"]


def _make_target(kind: str, work: Path, directory_output: bool,
                 name: str) -> tuple[str, Path | None]:
    """An output path of ``kind`` in ``work`` (and the file system object it names);
    ``name`` names the new file or directory."""
    old = work / "old.csv"
    old.write_text("old\n")
    if kind == "new file":
        return str(work / name), None
    if kind == "existing file":
        return str(old), old
    if kind == "symlink to a file":
        (work / "link").symlink_to(old)
        return str(work / "link"), old
    if kind == "dangling symlink":
        (work / "link").symlink_to(work / "nowhere.csv")
        return str(work / "link"), None
    if kind in ("directory", "symlink to a directory"):
        (work / "dir").mkdir()
        if kind == "directory":
            return str(work / "dir"), work / "dir"
        (work / "link").symlink_to(work / "dir")
        return str(work / "link"), work / "dir"
    if kind == "missing directory":
        return str(work / "missing" / "out.csv"), None
    if kind == "through a file":
        return str(old / "out.csv"), old
    if kind in ("null device", "full device"):
        node = work / kind.split()[0]
        if os.geteuid() != 0:  # this user cannot replace anything in /dev
            return f"/dev/{kind.split()[0]}", None
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3 if kind == "null device" else 7))
        return str(node), node
    if kind == "fifo":  # with a reader already there (non-blocking; outputs are small)
        os.mkfifo(work / "fifo")
        return str(work / "fifo"), work / "fifo"
    if kind == "stdout":
        return "-", None
    ro = work / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    return str(ro / "out.csv"), ro


# A new file's name: any characters a file name may hold (not '/' or NUL), as long as it
# is not '.' or '..' and does not start with '-' (an option) or end in '.tmp' (ours).
_NAMES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
                 min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..") and not n.startswith("-") and not n.endswith(".tmp")
    and len(n.encode()) < 200)


@FUZZ
@given(kind=st.sampled_from(_TARGETS), command=st.sampled_from(_WRITERS), name=_NAMES,
       relative=st.booleans())
def test_any_output_path_never_crashes_nor_replaces_what_is_not_a_file(
        kind, command, name, relative, tmp_path_factory, capsys, monkeypatch):
    base = tmp_path_factory.getbasetemp()
    work = _count("output", base)
    model = base / "good.json"
    _good_model_text(base)
    directory_output = command in ("evaluate", "merge")
    target, thing = _make_target(kind, work, directory_output, name)
    monkeypatch.chdir(work)  # whatever a command makes of a path, it stays in work
    if relative and target.startswith(str(work)):  # the same path, relative to work
        target = os.path.relpath(target, work)
    before = None if thing is None else (os.lstat(thing), thing.read_text()
                                         if thing.is_file() else None)
    if command == "merge":  # of an evaluate run's shard directory
        shard = base / "shard"
        if not shard.exists():
            assert main(["evaluate", str(SAMPLE_DATA / "weather.nominal.arff"), "--method",
                         "laplace", "--folds", "2", "--no-timing", "--shard", "0/1", "-o",
                         str(shard), "-q"]) == 0
        args = ["merge", str(shard)]
    else:
        args = {"train": ["train", str(SAMPLE_DATA / "weather.nominal.arff")],
                "predict": ["predict", str(model), str(SAMPLE_DATA / "weather.nominal.arff")],
                "show": ["show", str(model)],
                "prune": ["prune", str(model), "--method", "ccp"],
                "evaluate": ["evaluate", str(SAMPLE_DATA / "weather.nominal.arff"), "--method",
                             "laplace", "--folds", "2", "--no-timing"]}[command]
    reader = os.open(target, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None
    try:
        code, _ = _run_cli([*args, "-o", target, "-q"], capsys)
    finally:
        if reader is not None:
            os.close(reader)
    assert not leftovers(*(p for p in [work, *work.rglob("*")] if p.is_dir()
                           and not p.is_symlink()))
    if thing is not None and thing.exists():
        after = os.lstat(thing)
        if not stat.S_ISREG(before[0].st_mode):  # a device or directory: still itself
            assert (after.st_mode, after.st_ino) == (before[0].st_mode, before[0].st_ino)
        elif code != 0:  # a refused output leaves a file as it was
            assert thing.read_text() == before[1]
    if kind in ("symlink to a file", "symlink to a directory", "dangling symlink"):
        assert (work / "link").is_symlink()  # a link is followed, never replaced
    if kind == "full device" and not directory_output:
        assert code == 2


# ---------------------------------------------------------------------- signals
@FUZZ_SIGNALS
@given(signum=st.sampled_from([signal.SIGINT, signal.SIGTERM, signal.SIGHUP]),
       rows=st.integers(0, 400), chunk=st.sampled_from([30, 100, 1000, 1 << 20]))
def test_a_signal_at_any_point_leaves_nothing_behind(signum, rows, chunk, tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    work = _count("signal", base)
    _good_model_text(base)
    code, err, left = stop_predict(base / "good.json", work, signum, rows, chunk)
    assert code == 128 + signum, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert left == []


def test_report_counts():
    """Prints how many inputs the fuzz tests tried (run with -s to see it)."""
    print(f"fuzz inputs tried: {TRIED}")
