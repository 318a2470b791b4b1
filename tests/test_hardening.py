"""Hostile and careless use: every case answers with exit 0, or with one line
``Error: ...`` and exit 2 (128 + the signal for a signal), and leaves no temporary file.

What the user gets, per class of bad input (this file; the option, parameter and number
classes are tabled in ``tests/test_hardening_settings.py``, and ``tests/test_fuzz.py``
throws each class at the command line by the thousand):

=================================================  ==========================================
input                                              what the user gets
=================================================  ==========================================
output onto ``/dev/null``, a FIFO, ``/dev/stdout``   exit 0, written to the device or pipe,
                                                   never replaced
output onto ``/dev/full``, a full disk (EFBIG)     exit 2, ``Error: PATH: cannot write: No
                                                   space left on device. ...``; nothing left
output onto a directory, into a read-only one      exit 2, one line naming the path
a closed pipe or closed standard streams           one line (or none), no traceback
SIGINT, SIGTERM, SIGHUP during a run               exit 130/143/129, ``Interrupted.`` etc.,
                                                   no temporary file left
a YAML alias bomb (loss file), JSON/YAML nested    exit 2 in well under a second, one line
100,000 deep
an 80 MB one-line ARFF under a memory limit        exit 2, ``Error: FILE: not enough memory
                                                   to read this file (80 MB). ...``
binary garbage as CSV, a NUL byte in ARFF          exit 2, one line naming the file and line
no attribute besides the class                     exit 2, one line with the way to fix it
a tampered model tree, schema, version             exit 2, ``Error: MODEL: corrupt treecert
                                                   model: FIELD ...`` naming the field
a cost too large for a float                       exit 2, ``Error: LOSS: loss.A.B: cost
                                                   must be finite and >= 0.``
all instance weights zero                          exit 2, one line
two runs into one evaluate folder                  exit 2 for the second, ``in use by
                                                   another treecert run``
=================================================  ==========================================

Cases that need a process of their own (signals, closed or redirected standard output,
resource limits) run ``python -m treecert`` in a subprocess; the others call the entry
point :func:`treecert.cli.main.main` in-process, as ``tests/test_cli.py`` does.

Two cases are scaled down, and say so: the "1 GB one-line ARFF under a memory limit" is an
80 MB one-line ARFF under an address-space limit of 448 MB (reading takes several times a
file's size, so it runs out of memory the same way); the full disk is ``/dev/full`` (ENOSPC)
for devices and standard output, and ``RLIMIT_FSIZE`` (EFBIG, the same write error path) for
regular files. Running as root, the device cases write to device nodes made with ``mknod``
in the test's directory, never to the real ``/dev/null`` or ``/dev/full`` (which a
regression would replace); the read-only directory is ``/sys``, which refuses new files
even to root.
"""

from __future__ import annotations

import fcntl
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_DATA, leftovers, stop_predict, weighted_arff
from conftest import run_cli as run

WEATHER = SAMPLE_DATA / "weather.nominal.arff"
IRIS = SAMPLE_DATA / "iris.arff"
ROOT = os.geteuid() == 0
#: One thread per BLAS pool, so that the address-space limits below measure treecert.
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
       "MKL_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}


def cli(args, *, limit_as: int | None = None, limit_fsize: int | None = None,
        **kwargs) -> subprocess.CompletedProcess:
    """``python -m treecert ARGS`` in a subprocess, with optional resource limits."""

    def setup() -> None:
        if limit_as is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
        if limit_fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write fails with EFBIG instead
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_fsize, limit_fsize))

    if "stdout" not in kwargs and "stderr" not in kwargs:
        kwargs["capture_output"] = True
    return subprocess.run([sys.executable, "-m", "treecert", *map(str, args)], cwd=REPO,
                          env=ENV, preexec_fn=setup, check=False, **kwargs)


def one_error(stderr: bytes | str) -> str:
    """The stderr of a failed run, checked to be one line (no traceback)."""
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    assert len(text.strip().splitlines()) == 1, text
    return text.strip()


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "weather.json"
    from treecert.cli.main import main

    assert main(["train", str(WEATHER), "-o", str(path), "-q"]) == 0
    return path


@pytest.fixture
def device(tmp_path):
    """``device("null")`` / ``device("full")``: a character device to write to."""

    def make(name: str) -> Path:
        if not ROOT:  # /dev cannot be written by this user, so nothing there can be replaced
            return Path("/dev") / name
        node = tmp_path / name
        try:
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, {"null": 3, "full": 7}[name]))
            os.close(os.open(node, os.O_WRONLY))
        except OSError as exc:  # no CAP_MKNOD, or a file system mounted nodev
            pytest.skip(f"root, and no usable device node in {tmp_path} ({exc.strerror}); "
                        "not risking the real /dev nodes")
        return node

    return make


def assert_still_device(path: Path, minor: int) -> None:
    st = os.stat(path)
    assert stat.S_ISCHR(st.st_mode) and os.minor(st.st_rdev) == minor, path
    assert not leftovers(path.parent)


# --------------------------------------------------------------- 1. device files
def test_dev_null_is_written_not_replaced(model, device, capsys):
    null = device("null")
    for args in (["predict", model, WEATHER, "-o", null], ["train", WEATHER, "-o", null]):
        code, _, err = run([*args, "-q"], capsys)
        assert (code, err) == (0, "")
        assert_still_device(null, 3)


@pytest.mark.parametrize("command", ["predict", "train"])
def test_dev_full_reports_the_full_disk(command, model, device, capsys):
    full = device("full")
    args = ["predict", model, WEATHER] if command == "predict" else ["train", WEATHER]
    code, _, err = run([*args, "-o", full, "-q"], capsys)
    assert code == 2
    assert one_error(err) == (f"Error: {full}: cannot write: No space left on device. Free "
                              "some space or write elsewhere.")
    assert_still_device(full, 7)


def test_standard_output_on_a_full_disk(device):
    full = device("full")
    with open(full, "w") as stdout:
        res = cli(["evaluate", WEATHER, "--method", "laplace", "--folds", "2", "-q"],
                  stdout=stdout, stderr=subprocess.PIPE)
    assert res.returncode == 2
    assert one_error(res.stderr) == ("Error: standard output: cannot write: No space left on "
                                     "device. Free some space or write elsewhere.")


def test_dev_stdout_is_standard_output(model, tmp_path, capsys):
    # As root, a symlink of our own to /proc/self/fd/1 stands in for /dev/stdout (which is
    # exactly that): a regression would replace the link, not the system's.
    stdout = tmp_path / "stdout" if ROOT else Path("/dev/stdout")
    if ROOT:
        stdout.symlink_to("/proc/self/fd/1")
    expected = run(["predict", model, WEATHER, "-q"], capsys)[1].encode()
    piped = cli(["predict", model, WEATHER, "-o", stdout, "-q"])
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, expected, b"")
    redirected = tmp_path / "out.csv"
    with open(redirected, "wb") as fh:  # stdout a regular file: written there, not replaced
        res = cli(["predict", model, WEATHER, "-o", stdout, "-q"], stdout=fh,
                  stderr=subprocess.PIPE)
        inode = os.fstat(fh.fileno()).st_ino
    assert res.returncode == 0 and redirected.read_bytes() == expected
    assert redirected.stat().st_ino == inode
    assert os.readlink(stdout) == "/proc/self/fd/1"
    assert not leftovers(tmp_path, stdout.parent)


def test_a_named_pipe_is_written_directly(model, tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, _, err = run(["predict", model, WEATHER, "-o", fifo, "-q"], capsys)
    reader.join()
    assert (code, err) == (0, "")
    assert received[0].decode().startswith("row,actual,predicted,p_yes,p_no")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert not leftovers(tmp_path)


def test_a_closed_pipe_ends_silently_as_coreutils_do(model):
    """A reader that stops early (``| head``) is not an error of the input: exit 141 (128 +
    SIGPIPE) with nothing on standard error, as coreutils' tools end."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # whatever is written now fails with EPIPE
    try:
        res = cli(["predict", model, WEATHER, "-q"], stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert (res.returncode, res.stderr) == (141, b"")



# --------------------------------------------------------------- 2. memory bomb from 1 KB
def alias_bomb(path: Path, where: str) -> Path:
    """Nine lines whose aliases describe 10**9 numbers, put at a cost (``where="cost"``) or
    copied by merge keys (``"merge"``)."""
    if where == "cost":
        lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    else:
        lines = ["a0: &a0 {yes: 1, no: 1}"]
        lines += [f"a{i}: &a{i} {{<<: [{', '.join([f'*a{i - 1}'] * 10)}]}}"
                  for i in range(1, 9)]
    lines += ["loss:", "  yes: {yes: 0, no: *a8}", "  no: {yes: 1, no: 0}"]
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size < 1024
    return path


@pytest.mark.parametrize(("command", "where"), [("evaluate", "cost"), ("prune", "merge")])
def test_a_yaml_alias_bomb_is_refused_quickly(command, where, model, tmp_path):
    bomb = alias_bomb(tmp_path / "bomb.yaml", where)
    args = {"evaluate": ["evaluate", WEATHER, "--method", "laplace", "--folds", "2"],
            "predict": ["predict", model, WEATHER],
            "prune": ["prune", model, "--method", "ccp", "-o", tmp_path / "p.json"]}[command]
    # Bounded: were the structure expanded, the process would run out of its 1 GB at once.
    res = cli([*args, "--loss", bomb, "-q"], limit_as=1 << 30)
    assert res.returncode == 2
    assert one_error(res.stderr) == (f"Error: {bomb}, line 2: an alias may only repeat a "
                                     "single value, not a list or mapping.")
    assert res.stdout == b"" and not (tmp_path / "p.json").exists()


# --------------------------------------------------------------- 3. signals
@pytest.mark.parametrize(("signum", "said"), [(signal.SIGTERM, "Terminated."),
                                              (signal.SIGINT, "Interrupted.")])
def test_a_signal_leaves_no_temporary_file(signum, said, model, tmp_path):
    """SLURM's SIGTERM at the end of a job's time is handled like Ctrl-C (SIGHUP too: see
    the signal fuzz test in tests/test_fuzz.py)."""
    code, err, left = stop_predict(model, tmp_path, signum, rows=20)
    assert (code, err.strip()) == (128 + signum, said)
    assert left == []


def test_a_signal_as_the_temporary_file_appears_leaves_nothing(tmp_path, monkeypatch):
    """The window CI's signal fuzzing once hit: the temporary file exists, and the signal
    arrives before the writer has listed it. Simulated by an interrupt raised the moment
    the file is created: the list must already hold it, so the clean-up finds it."""
    from treecert.data import fileio

    real_open = os.open

    def open_then_interrupted(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        if flags & os.O_CREAT and str(path).endswith(".tmp"):
            os.close(fd)
            raise KeyboardInterrupt
        return fd

    monkeypatch.setattr(os, "open", open_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        fileio.write_text(tmp_path / "out.csv", "a,b\n")
    monkeypatch.setattr(os, "open", real_open)
    assert leftovers(tmp_path)  # the file the interrupt stranded
    fileio.remove_temporaries()
    assert leftovers(tmp_path) == [] and not (tmp_path / "out.csv").exists()


# --------------------------------------------------------------- 4. one line, not a traceback
@pytest.mark.parametrize("command", ["predict", "train"])
def test_output_onto_a_directory(command, model, tmp_path, capsys):
    args = ["predict", model, WEATHER] if command == "predict" else ["train", WEATHER]
    code, _, err = run([*args, "-o", tmp_path, "-q"], capsys)
    assert code == 2
    assert one_error(err) == f"Error: {tmp_path}: is a directory. Give a file name to write to."
    assert sorted(os.listdir(tmp_path)) == []


def test_output_into_a_read_only_directory(model, tmp_path, capsys):
    if ROOT:  # root writes anywhere chmod forbids; sysfs refuses new files even to root
        if not os.path.isdir("/sys/kernel"):
            pytest.skip("root, and no /sys to stand for a read-only directory")
        directory = Path("/sys")
    else:
        directory = tmp_path / "ro"
        directory.mkdir()
        directory.chmod(0o555)
    out = directory / "treecert-test.csv"
    code, _, err = run(["predict", model, WEATHER, "-o", out, "-q"], capsys)
    assert code == 2
    assert one_error(err) == (f"Error: {out}: cannot create a file in {directory}: "
                              "Permission denied. Choose a directory you can write to.")
    assert not out.exists() and not leftovers(directory)


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_a_full_disk_on_regular_files(command, tmp_path):
    # RLIMIT_FSIZE makes writes past 1 KB fail (EFBIG) as a full disk fails them (ENOSPC).
    out = tmp_path / ("credit-g.json" if command == "train" else "results")
    args = (["train", SAMPLE_DATA / "credit-g.arff", "-o", out] if command == "train" else
            ["evaluate", WEATHER, "--method", "laplace", "--folds", "2", "-o", out])
    res = cli([*args, "-q"], limit_fsize=1024)
    assert res.returncode == 2
    err = one_error(res.stderr)
    assert err.startswith(f"Error: {out}") and err.endswith(": cannot write: File too large.")
    if command == "train":
        assert not out.exists()
    else:  # what was written is complete: the run record and any whole unit
        assert not (out / "predictions.csv").exists()
    assert not leftovers(tmp_path, *(p for p in tmp_path.rglob("*") if p.is_dir()))


def test_evaluate_output_naming_a_file(model, tmp_path, capsys, monkeypatch):
    code, _, err = run(["evaluate", WEATHER, "--method", "laplace", "-o", model], capsys)
    assert code == 2
    assert one_error(err) == (f"Error: {model}: exists and is not a directory. -o names a "
                              "directory for the results; give a new or existing directory.")
    monkeypatch.chdir(tmp_path)  # '-' is not a directory to make either
    code, _, err = run(["evaluate", WEATHER, "--method", "laplace", "-o", "-"], capsys)
    assert (code, one_error(err)) == (2, "Error: -o names a directory for the results, not "
                                         "standard output ('-'). Leave -o out to get the "
                                         "metrics on standard output.")
    assert os.listdir(tmp_path) == []


def closed(stream: str, *args) -> subprocess.CompletedProcess:
    """``python -m treecert ARGS`` with standard input, output or error closed (``<&-``...)."""
    shell = {"stdin": '<&-', "stdout": '>&-', "stderr": '2>&-'}[stream]
    return subprocess.run(["sh", "-c", f'exec "$@" {shell}', "sh", sys.executable, "-m",
                           "treecert", *map(str, args)], cwd=REPO, env=ENV, check=False,
                          **({} if stream == "stderr" else {"stderr": subprocess.PIPE}))


def test_standard_streams_closed(model, tmp_path):
    res = closed("stdout", "predict", model, WEATHER, "-q")
    assert res.returncode == 2
    assert one_error(res.stderr) == ("Error: cannot write to standard output: it is closed. "
                                     "Redirect it to a file, or give -o FILE.")
    out = tmp_path / "pred.csv"  # with -o FILE a closed stdout does not matter
    res = closed("stdout", "predict", model, WEATHER, "-o", out, "-q")
    assert (res.returncode, res.stderr) == (0, b"")
    expected = out.read_text()
    assert expected.startswith("row,actual,predicted")
    out.unlink()  # nor does a closed stderr (messages go nowhere)
    assert closed("stderr", "predict", model, WEATHER, "-o", out).returncode == 0
    assert out.read_text() == expected
    res = closed("stdin", "predict", model, "-")  # a closed stdin reads as empty
    assert res.returncode == 2
    assert one_error(res.stderr) == ("Error: <stdin>: the file is empty. A CSV file needs a "
                                     "header row and data rows; an ARFF file a header and "
                                     "@data.")
    assert not leftovers(tmp_path)


def test_json_and_yaml_nested_100000_deep(model, tmp_path, capsys):
    deep_model = tmp_path / "deep.json"
    deep_model.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run(["predict", deep_model, WEATHER], capsys)
    assert code == 2
    assert one_error(err) == f"Error: {deep_model}: not a treecert model: JSON nested too deeply."
    deep_loss = tmp_path / "deep.yaml"
    deep_loss.write_text("loss: " + "[" * 100_000 + "]" * 100_000 + "\n")
    code, _, err = run(["predict", model, WEATHER, "--loss", deep_loss], capsys)
    assert code == 2
    assert one_error(err) == f"Error: {deep_loss}: not a loss matrix (nested too deeply)."


def test_a_huge_one_line_arff_under_a_memory_limit(tmp_path):
    limit = 448 << 20
    # The limit leaves room to run: a small file trains under it.
    ok = cli(["train", WEATHER, "-o", tmp_path / "ok.json", "-q"], limit_as=limit)
    assert ok.returncode == 0, ok.stderr.decode()
    big = tmp_path / "big.arff"
    with open(big, "w") as fh:
        fh.write("@relation big\n@attribute a numeric\n@attribute c {y,n}\n@data\n")
        fh.write("1" * (80 << 20) + ",y\n")
    res = cli(["train", big, "-o", tmp_path / "big.json", "-q"], limit_as=limit)
    assert res.returncode == 2
    assert one_error(res.stderr) == (
        f"Error: {big}: not enough memory to read this file (80 MB). Raise the memory limit, "
        "or give a smaller file (predict reads CSV in chunks: --chunk-size).")
    assert not (tmp_path / "big.json").exists() and not leftovers(tmp_path)


def test_binary_garbage_as_csv(tmp_path, capsys):
    png = tmp_path / "image.csv"  # a PNG renamed: NUL bytes from its third line
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
    code, _, err = run(["train", png, "-o", tmp_path / "m.json"], capsys)
    assert code == 2
    assert one_error(err) == (f"Error: {png}, line 3: the file contains a NUL character; is it "
                              "a binary file? Data files are text: remove the NUL bytes.")
    junk = tmp_path / "junk.csv"  # no NUL, but a carriage return inside a value
    junk.write_bytes(bytes(range(0x80, 0xA0)) + b",\xff\xfe\n\xe9\xe8\r\xe0\xe1,\xe2\n")
    code, _, err = run(["train", junk, "-o", tmp_path / "m.json"], capsys)
    assert code == 2
    assert one_error(err) == (f"Error: {junk}, line 2: not valid CSV (a carriage return "
                              "inside an unquoted value). Is it a text file of "
                              "comma-separated values?")
    assert not (tmp_path / "m.json").exists()


def test_no_attribute_left_to_learn_from(tmp_path, capsys):
    ignored = ["--ignore", "outlook,temperature,humidity,windy"]
    for command in (["train", WEATHER, "-o", tmp_path / "m.json"],
                    ["evaluate", WEATHER, "--method", "laplace"]):
        code, out, err = run([*command, *ignored], capsys)
        assert (code, out) == (2, "")
        assert one_error(err) == (f"Error: {WEATHER}: no attribute to learn from besides the "
                                  "class 'play'. Keep at least one column besides the class "
                                  "(check --ignore).")
    semicolons = tmp_path / "semicolons.csv"
    semicolons.write_text("".join(line.replace(",", ";") + "\n" for line in
                                  (SAMPLE_DATA / "iris.csv").read_text().splitlines()))
    code, _, err = run(["train", semicolons, "-o", tmp_path / "m.json"], capsys)
    assert code == 2
    assert one_error(err) == (
        f"Error: {semicolons}: no attribute to learn from besides the class "
        "'sepallength;sepalwidth;petalle'... (51 characters). The header reads as one column: "
        "is the file separated by ';'? treecert reads comma-separated CSV; convert the "
        "separators to commas.")
    assert not (tmp_path / "m.json").exists()


def tamper(model: Path, tmp_path: Path, change) -> Path:
    doc = json.loads(model.read_text())
    change(doc)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc, allow_nan=True))
    return path


def set_in(path: tuple, value):
    def change(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


CORRUPT = "corrupt treecert model: "
AGAIN = " The file was changed after treecert wrote it; train or calibrate the model again."


@pytest.mark.parametrize(("change", "message"), [
    (set_in(("tree", "feature", 0), 9),
     CORRUPT + "tree.feature[0] is 9, but the schema has 4 attributes." + AGAIN),
    (set_in(("tree", "feature", 0), 0.0),
     CORRUPT + "tree.feature[0] must be an integer, not 0.0." + AGAIN),
    (set_in(("tree", "threshold", 0), "2.45"),
     CORRUPT + "tree.threshold[0] must be a number or null, not '2.45'." + AGAIN),
    (set_in(("tree", "threshold", 0), float("nan")),
     "not a treecert model: invalid JSON (NaN is not a JSON number)."),
    (set_in(("tree", "counts", 0, 1), 1e400),
     "not a treecert model: invalid JSON (Infinity is not a JSON number)."),
    (set_in(("params",), []), CORRUPT + "params must be an object, not an empty list." + AGAIN),
    (set_in(("tree", "value_branch", 0), 3),
     CORRUPT + "tree node 0 sends a value to a branch it does not have (3 children)." + AGAIN),
    (set_in(("tree", "counts", 0), [0, 0]),
     CORRUPT + "tree.counts[0] is all zero; the root holds the training weight." + AGAIN),
    (set_in(("format_version",), 10**4000), "model format version (an integer of 4001 "
     "digits) is newer than this treecert (0.1.0) reads (up to version 2). Upgrade treecert."),
])
def test_tampered_models(change, message, model, tmp_path, capsys):
    path = tamper(model, tmp_path, change)
    code, _, err = run(["predict", path, WEATHER, "-o", tmp_path / "p.csv"], capsys)
    assert code == 2
    assert one_error(err) == f"Error: {path}: {message}"
    assert not (tmp_path / "p.csv").exists()


def test_a_format_version_of_5001_digits(model, tmp_path, capsys):
    path = tmp_path / "version.json"
    text = model.read_text()
    path.write_text(text.replace('"format_version":2', '"format_version":' + "9" * 5001, 1))
    code, _, err = run(["predict", path, WEATHER], capsys)
    assert code == 2
    assert one_error(err) == (f"Error: {path}: not a treecert model: invalid JSON (a number "
                              "too long).")


def test_a_cost_too_large_for_a_float(model, tmp_path, capsys):
    loss = tmp_path / "loss.yaml"
    loss.write_text(f"loss:\n  yes: {{yes: 0, no: 1{'0' * 400}}}\n  no: {{yes: 1, no: 0}}\n")
    code, _, err = run(["predict", model, WEATHER, "--loss", loss], capsys)
    assert code == 2
    assert one_error(err) == f"Error: {loss}: loss.yes.no: cost must be finite and >= 0."


# --------------------------------------------------------------- 5. minor
def test_all_zero_instance_weights(tmp_path, capsys):
    data = weighted_arff(WEATHER, tmp_path / "zero.arff", "0")
    code, _, err = run(["train", data, "-o", tmp_path / "m.json"], capsys)
    assert code == 2
    assert one_error(err) == (f"Error: {data}: every row with a known class has instance "
                              "weight 0; there is nothing to learn from. Give rows a positive "
                              "weight (ARFF: {w} after a row's values).")


def test_a_nul_byte_in_an_arff_value(tmp_path, capsys):
    data = tmp_path / "nul.arff"
    data.write_text(WEATHER.read_text().replace("rainy,mild,high,TRUE,no", "rai\x00ny,mild,"
                                                "high,TRUE,no"))
    code, _, err = run(["train", data, "-o", tmp_path / "m.json"], capsys)
    assert code == 2
    line = data.read_text().splitlines().index("rai\x00ny,mild,high,TRUE,no") + 1
    assert one_error(err) == (f"Error: {data}, line {line}: the file contains a NUL "
                              "character; is it a binary file? Data files are text: remove "
                              "the NUL bytes.")


@pytest.mark.parametrize(("mode", "file"), [(0o644, None), (0o640, None), (0o600, 0o604)])
def test_outputs_honour_the_umask(mode, file, model, tmp_path, capsys):
    out = tmp_path / "pred.csv"
    if file is not None:  # a file replaced keeps its permissions, as with the shell's '>'
        out.write_text("old\n")
        out.chmod(file)
    previous = os.umask(0o777 & ~mode)
    try:
        code, _, err = run(["predict", model, WEATHER, "-o", out, "-q"], capsys)
    finally:
        os.umask(previous)
    assert (code, err) == (0, "")
    assert stat.S_IMODE(out.stat().st_mode) == (file if file is not None else mode)


def hold(directory: Path, shared: bool = False) -> int:
    """Take the lock a run holds on ``directory`` (as another process would)."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / ".treecert.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
    return fd


EVAL = ["evaluate", WEATHER, "--method", "laplace", "--folds", "2", "--no-timing", "-q"]


def test_two_runs_into_one_evaluate_folder(tmp_path, capsys):
    out = tmp_path / "results"
    busy = (f"Error: {out}: in use by another treecert run. Wait until that run has finished, "
            "or choose another -o directory (only the --shard parts of one run may share "
            "one).")
    fd = hold(out)  # a whole run holds the folder: nothing else may write into it
    try:
        for args in ([], ["--shard", "0/2"], ["--resume"]):
            code, _, err = run([*EVAL, *args, "-o", out], capsys)
            assert (code, one_error(err)) == (2, busy)
    finally:
        os.close(fd)
    assert sorted(os.listdir(out)) == [".treecert.lock"]
    fd = hold(out, shared=True)  # a shard of a run: other shards may join, not a whole run
    try:
        assert run([*EVAL, "--shard", "1/2", "-o", out], capsys)[0] == 0
        code, _, err = run([*EVAL, "-o", out], capsys)
        assert (code, one_error(err)) == (2, busy)
        code, _, err = run(["merge", out, "-o", out], capsys)
        assert (code, one_error(err)) == (2, f"Error: {out}: in use by another treecert run. "
                                             "Wait until every shard has finished, then merge.")
    finally:
        os.close(fd)
    assert run([*EVAL, "--shard", "0/2", "-o", out], capsys)[0] == 0
    assert run(["merge", out, "-o", out], capsys)[0] == 0
    assert (out / "metrics.csv").exists() and not leftovers(out, out / "units")
