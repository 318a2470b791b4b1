"""Bad input at volume: malformed ARFF, CSV, YAML and model JSON, method specs, tampered
model fields and calibration states, extreme numbers, thrown at the command line; outputs
sent anywhere; runs stopped by signals.

Whatever the input, the CLI must answer with exit 0 or with one line ``Error: ...`` and exit
2 — never a traceback (an exception escaping ``main``), never a raw numpy warning, never a
partial output file, and never a hang: every input runs under a 60-second alarm, and one
that takes longer fails its test. Whatever the output path (a file, a symlink, a directory,
a device, a path through a file, ...), nothing but a regular file is ever replaced and no
temporary file is left. A signal (SIGINT, SIGTERM, SIGHUP) at any point of a streamed
predict exits 128 + the signal and leaves nothing behind.

``TREECERT_FUZZ_EXAMPLES`` raises the number of inputs per test (CI uses the default); the
signal test, a subprocess per input, runs a twelfth as many. ``TREECERT_FUZZ_LOG=FILE``
appends one JSON line per input (its class, exit code and seconds) for a campaign's counts:
``TREECERT_FUZZ_EXAMPLES=900 TREECERT_FUZZ_LOG=fuzz.jsonl python -m pytest
tests/test_fuzz.py -n 2``.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import tempfile
import time
import warnings
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
    _CURRENT[0] = name
    return Path(tempfile.mkdtemp(dir=tmp_path))


#: The class of the input being run (for the log), and the per-input time limit.
_CURRENT = ["other"]
HANG_SECONDS = 60
_LOG = os.environ.get("TREECERT_FUZZ_LOG")


class Hang(BaseException):
    """Raised by the alarm: an input ran past HANG_SECONDS (not an Exception, so that no
    handler in treecert takes it for an error of its own)."""


def _alarm(signum, frame):
    raise Hang


def _log(code: object, seconds: float) -> None:
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"class": _CURRENT[0], "code": code,
                                 "seconds": round(seconds, 3)}) + "\n")


def _run_cli(args: list[str], capsys) -> tuple[int, str]:
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = main(args)
    except Hang:
        _log("hang", time.perf_counter() - start)
        pytest.fail(f"hang: over {HANG_SECONDS} s for {args}")
    except Exception as exc:  # a traceback would reach the user: that is the bug
        _log("traceback", time.perf_counter() - start)
        pytest.fail(f"exception escaped the CLI for {args}: {type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    _log(code, time.perf_counter() - start)
    err = capsys.readouterr().err
    raw = [f"{w.category.__name__}: {w.message}" for w in caught
           if issubclass(w.category, RuntimeWarning)]  # numpy's overflow, invalid value, ...
    assert not raw, (args, raw)
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
    start = time.perf_counter()
    code, err, left = stop_predict(base / "good.json", work, signum, rows, chunk)
    _log(code, time.perf_counter() - start)
    assert code == 128 + signum, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert left == []


# ---------------------------------------------------------------------- method specs
_METHOD_NAMES = ["frequency", "laplace", "m_estimate", "tpce", "tpce_batch", "kk", "bagging",
                 "naive_bayes", "binning", "venn", "empirical_bayes", "calibrated_bagging",
                 "nope"]
_OPTION_KEYS = ["trees", "seed", "leaf", "bins", "cv", "alpha", "m", "prune", "cf",
                "subtree_raising", "kl_threshold", "holdout", "one_se", "engine", "count_x",
                "base", "taxonomy", "discretize", "temperature", "certainty", "positive",
                "fit", "weighted", "clamp", "interval", "criterion", "min_leaf", "max_depth",
                "min_gain", "cp", "binary_splits", "threshold", "collapse", "bogus", ""]
#: Values of every kind: small work (the bounds refuse large work before it starts; a
#: legitimate 50,000 trees would only be slow), extreme and malformed numbers, text.
_OPTION_VALUES = ["-1", "0", "1", "2", "3", "0.5", "0.25", "1e-300", "1e308", "-1e308",
                  "1e400", "nan", "inf", "-inf", "9" * 400, "9" * 5000, "100000000",
                  "18446744073709551617", "1.5", "x", "", "true", "false", "ebp", "ccp",
                  "kl", "rep", "laplace_loss", "none", "fast", "naive", "path", "leaf",
                  "forecast", "laplace", "frequency", "naive_bayes", "oob", "vote", "proba",
                  "mle", "paper", "range", "gain_ratio", "lower", "yes", "no"]


@st.composite
def _method_specs(draw):
    name = draw(st.sampled_from(_METHOD_NAMES))
    items = draw(st.lists(st.tuples(st.sampled_from(_OPTION_KEYS),
                                    st.sampled_from(_OPTION_VALUES)), max_size=4))
    text = ",".join(f"{k}={v}" if draw(st.integers(0, 9)) else k for k, v in items)
    return f"{name}:{text}" if text or draw(st.booleans()) else name


@FUZZ
@given(spec=_method_specs(), j48=st.booleans(), data=st.sampled_from(
    ["weather.nominal.arff", "weather.numeric.arff"]))
def test_method_specs_never_crash(spec, j48, data, tmp_path, capsys):
    """Any --method spec: it runs, or one line says which option is wrong and why."""
    work = _count("method spec", tmp_path)
    out = work / "ev"
    code, _ = _run_cli(["evaluate", str(SAMPLE_DATA / data), "--method", spec, "--folds", "2",
                        "--no-timing", "-o", str(out), "-q", *(["--j48"] * j48)], capsys)
    assert (out / "metrics.csv").exists() == (code == 0)


_NUMBER_FLAGS = ["--cp", "--min-leaf", "--min-gain", "--max-depth", "--seed", "--repeat"]
_NUMBER_TEXT = ["0", "1", "2", "-1", "1e308", "-1e308", "1e400", "nan", "inf", "9" * 400,
                "1e-320", "18446744073709551617", "0.5"]


@FUZZ
@given(flags=st.lists(st.tuples(st.sampled_from(_NUMBER_FLAGS), st.sampled_from(_NUMBER_TEXT)),
                      min_size=1, max_size=3, unique_by=lambda t: t[0]),
       method=st.sampled_from(["laplace", "tpce", "kk", "venn", "bagging", "frequency:prune=ccp"]))
def test_extreme_learner_settings_never_crash(flags, method, tmp_path, capsys):
    """--cp, --min-leaf, --min-gain, --max-depth, --seed, --repeat at the ends of float
    range (1e308, 1e400, NaN, a 400-digit integer) for plain and transductive methods: a
    result or one line."""
    work = _count("learner setting", tmp_path)
    args = [a for flag, value in flags for a in (flag, value)]
    out = work / "ev"
    code, _ = _run_cli(["evaluate", str(SAMPLE_DATA / "weather.numeric.arff"), "--method",
                        method, "--folds", "2", "--no-timing", "-o", str(out), "-q", *args],
                       capsys)
    assert (out / "metrics.csv").exists() == (code == 0)


# ---------------------------------------------------------------------- extreme numbers
_EXTREME = ["9" * 25, "9" * 400, "9" * 5000, "-" + "9" * 400, "1e308", "-1e308", "1e400",
            "1e-320", "5e-324", "0", "-0", "inf", "-inf", "1.7976931348623157e308",
            "18446744073709551617", "?", "nan"]
_IRIS_LINES = (SAMPLE_DATA / "iris.csv").read_text().splitlines()
_WEIGHTS = ["1", "0", "1e308", "1e300", "1e150", "1e-300", "9" * 400, "-1", "inf", "nan", "x"]


@FUZZ
@given(data=st.data(), fmt=st.sampled_from(["csv", "arff"]),
       command=st.sampled_from(["train", "evaluate", "predict"]))
def test_extreme_numbers_in_data_never_crash(data, fmt, command, tmp_path, capsys):
    """Huge integers (400 and 5000 digits), 1e308, 1e400, subnormals and huge or odd
    instance weights in a data file: read as numbers (a result) or one line."""
    work = _count("extreme numbers", tmp_path)
    rows = [ln.split(",") for ln in _IRIS_LINES[1::5]]  # 30 rows of the three classes
    for _ in range(data.draw(st.integers(1, 6))):
        i, j = data.draw(st.integers(0, len(rows) - 1)), data.draw(st.integers(0, 3))
        rows[i][j] = data.draw(st.sampled_from(_EXTREME))
    if fmt == "csv":
        text = _IRIS_LINES[0] + "\n" + "".join(",".join(r) + "\n" for r in rows)
    else:
        weights = data.draw(st.lists(st.sampled_from(_WEIGHTS), min_size=len(rows),
                                     max_size=len(rows)))
        text = ("@relation r\n" + "".join(f"@attribute a{j} numeric\n" for j in range(4))
                + "@attribute class {Iris-setosa,Iris-versicolor,Iris-virginica}\n@data\n"
                + "".join(",".join(r) + (f",{{{w}}}" if w != "1" else "") + "\n"
                          for r, w in zip(rows, weights, strict=True)))
    path = work / f"x.{fmt}"
    path.write_text(text)
    out = work / "out"
    if command == "train":
        args = ["train", str(path), "-o", str(out)]
    elif command == "evaluate":
        args = ["evaluate", str(path), "--method", data.draw(st.sampled_from(
            ["laplace", "tpce", "venn", "bagging"])), "--folds", "2", "--no-timing", "-o",
            str(out)]
    else:
        model = work / "m.json"
        assert main(["train", str(SAMPLE_DATA / "iris.csv"), "-o", str(model), "-q"]) == 0
        capsys.readouterr()
        args = ["predict", str(model), str(path), "-o", str(out)]
    code, _ = _run_cli([*args, "-q"], capsys)
    assert out.exists() == (code == 0)


# ---------------------------------------------------------------------- model fields
def _models(base: Path) -> dict[str, dict]:
    """Model documents with every optional part: plain, pruned, and calibrated by each
    method that stores a state (weather.numeric, 14 rows: every use is quick)."""
    cache = base / "models"
    if not cache.exists():
        cache.mkdir()
        data = str(SAMPLE_DATA / "weather.numeric.arff")
        plain = cache / "plain.json"
        assert main(["train", data, "-o", str(plain), "-q", "--min-leaf", "1"]) == 0
        assert main(["train", data, "-o", str(cache / "pruned.json"), "-q", "--min-leaf", "1",
                     "--prune", "ccp", "--holdout", "0.3"]) == 0
        assert main(["train", data, "-o", str(cache / "bagging.json"), "-q"]) == 0
        doc = json.loads((cache / "bagging.json").read_text())
        doc["method"] = "bagging:trees=3"
        (cache / "bagging.json").write_text(json.dumps(doc))
        for method in ("binning", "venn", "empirical_bayes", "calibrated_bagging:trees=3"):
            name = method.split(":")[0]
            cv = ["--cv", "3"] if name in ("binning", "venn") else []
            assert main(["calibrate", str(plain), "--method", method, *cv, "-o",
                         str(cache / f"{name}.json"), "-q"]) == 0
    return {p.stem: json.loads(p.read_text()) for p in sorted(cache.glob("*.json"))}


def _paths(doc, at=()):
    """Every key path of a JSON document (lists: their first, last and a middle entry)."""
    yield at
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*at, k))
    elif isinstance(doc, list) and doc:
        for i in sorted({0, len(doc) // 2, len(doc) - 1}):
            yield from _paths(doc[i], (*at, i))


#: Replacement values; the strings after "raw:" are written into the JSON text as they are
#: (Python's json reads NaN, Infinity and 1e400 as floats; treecert refuses or checks them).
_TAMPER = [None, True, False, 0, 1, -1, 2, 0.5, -0.0, 1e308, -1e308, 2**64 + 1, 10**30,
           10**400, "x", "", "bagging:trees=100000000", "bagging:trees=-1", "bagging:seed=-1",
           "venn:min_leaf=0", "tpce:cp=1e308", "laplace:alpha=1,alpha=2", "binning:bins=3",
           [], [1], [None], {}, {"x": 1}, "raw:NaN", "raw:Infinity", "raw:-Infinity",
           "raw:1e400", "raw:" + "9" * 5000, "missing", "extra"]


@FUZZ
@given(data=st.data())
def test_every_model_field_tampered_never_crashes(data, tmp_path_factory, capsys):
    """Any field of a model file — params, method, tree, schema, training data, pruning
    record, calibration (spec and state) — set to a wrong type, NaN, infinity, a huge or
    negative number, null, removed, or joined by an extra key: the model is refused in
    one line, or it loads and every command that reads it works or says why in one line."""
    base = tmp_path_factory.getbasetemp()
    docs = _models(base)
    kind = data.draw(st.sampled_from(sorted(docs)))
    doc = json.loads(json.dumps(docs[kind]))
    paths = [p for p in _paths(doc) if p]
    under_calibration = [p for p in paths if p[0] == "calibration"]
    pool = under_calibration if under_calibration and data.draw(st.booleans()) else paths
    path = data.draw(st.sampled_from(pool))
    work = _count("model field" if path[0] != "calibration" else "calibration state", base)
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    value = data.draw(st.sampled_from(_TAMPER))
    raw = None
    if value == "missing":
        del parent[path[-1]]
    elif value == "extra":
        target = parent[path[-1]]
        (target if isinstance(target, dict) else parent if isinstance(parent, dict)
         else doc)["unexpected"] = 1
    elif isinstance(value, str) and value.startswith("raw:"):
        parent[path[-1]] = "@@RAW@@"
        raw = value[4:]
    else:
        parent[path[-1]] = value
    text = json.dumps(doc)
    if raw is not None:
        text = text.replace('"@@RAW@@"', raw)
    model = work / "model.json"
    model.write_text(text)
    data_file = str(SAMPLE_DATA / "weather.numeric.arff")
    command = data.draw(st.sampled_from(["predict", "show", "prune", "calibrate"]))
    out = work / "out"
    args = {"predict": ["predict", str(model), data_file, "-o", str(out)],
            "show": ["show", str(model), "-o", str(out)],
            "prune": ["prune", str(model), "--method", "ebp", "-o", str(out)],
            "calibrate": ["calibrate", str(model), "--method", "binning", "--cv", "3", "-o",
                          str(out)]}[command]
    code, _ = _run_cli([*args, "-q"], capsys)
    assert out.exists() == (code == 0)


# ---------------------------------------------------------------------- loss files
_YAML_NUMBERS = ["0", "1", "5", "-1", "1e308", "1e400", ".nan", ".inf", "-.inf", "9" * 400,
                 "9" * 5000, "0x10", "1_000", "true", "null", "'3'", "[1]", "{a: 1}"]


@FUZZ
@given(data=st.data(), command=st.sampled_from(["evaluate", "train", "predict"]))
def test_loss_yaml_extreme_costs_never_crash(data, command, tmp_path, capsys):
    """A loss file whose costs are extreme or not numbers (1e400, .nan, a 5000-digit
    integer, a list): a result or one line."""
    work = _count("yaml", tmp_path)
    costs = [data.draw(st.sampled_from(_YAML_NUMBERS)) for _ in range(4)]
    loss = work / "loss.yaml"
    loss.write_text(f"loss:\n  yes: {{yes: {costs[0]}, no: {costs[1]}}}\n"
                    f"  no: {{yes: {costs[2]}, no: {costs[3]}}}\n")
    data_file = str(SAMPLE_DATA / "weather.nominal.arff")
    out = work / "out"
    if command == "evaluate":
        args = ["evaluate", data_file, "--method", "laplace:prune=laplace_loss", "--folds",
                "2", "--no-timing", "-o", str(out), "--loss", str(loss)]
    elif command == "train":
        args = ["train", data_file, "--prune", "ccp", "-o", str(out), "--loss", str(loss)]
    else:
        base = tmp_path / "m.json"
        if not base.exists():
            assert main(["train", data_file, "-o", str(base), "-q"]) == 0
            capsys.readouterr()
        args = ["predict", str(base), data_file, "-o", str(out), "--loss", str(loss)]
    code, _ = _run_cli([*args, "-q"], capsys)
    assert out.exists() == (code == 0)


def test_report_counts():
    """Prints how many inputs the fuzz tests tried (run with -s to see it)."""
    print(f"fuzz inputs tried: {TRIED}")
