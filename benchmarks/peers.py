"""Thin wrappers around peer decision-tree learners, used by the treecert benchmarks.

Peers: Weka J48 (Debian ``weka`` 3.6.x, ``/usr/share/java/weka.jar``), scikit-learn's
``DecisionTreeClassifier`` and R's ``rpart``. Everything runs as a separate process so that
wall times include interpreter / JVM start-up, which makes them comparable with a whole
``treecert train`` invocation. Nothing here imports treecert.

Set-up (Debian; not a treecert dependency)::

    apt-get update && apt-get install -y weka r-cran-rpart   # weka also brings a JRE
    pip install scikit-learn pandas

``WEKA_JAR`` (environment) overrides the jar path. Used by ``j48_parity.py`` and
``train_speed.py`` next to this file; it can also be imported on its own::

    python -c "import sys; sys.path.insert(0, 'benchmarks'); import peers; \
print(peers.run_j48('iris.arff', 'iris.arff'))"

Weka 3.6 output quirks handled here (see the parsers):

* ``-t A -T B`` prints *two* evaluation sections, "Error on training data" first and
  "Error on test data" second; only the latter is the test accuracy.
* ``-p 0 -distribution`` rounds every probability to 3 decimals and trims trailing zeros
  (``0.15``, ``*0.85``); a ``*`` marks the predicted class and an extra ``+`` column appears
  on mistakes, so only the last whitespace token is parsed. ``j48_distributions_exact``
  compiles a ~20-line Java helper (needs ``javac``) that prints full float64 values instead.
* ``-v`` suppresses the training-set evaluation *and* the "Time taken to build model" line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WEKA_JAR = os.environ.get("WEKA_JAR", "/usr/share/java/weka.jar")
J48_CLASS = "weka.classifiers.trees.J48"
DEFAULT_J48_OPTIONS: tuple[str, ...] = ("-U", "-M", "2", "-A")
# Fixed locale so that Weka prints "0.5" and not "0,5" whatever the machine's settings.
JAVA_FLAGS: tuple[str, ...] = ("-Duser.language=en", "-Duser.country=US")

PathLike = str | os.PathLike


# --------------------------------------------------------------------------- processes


def timed_run(
    cmd: list[str],
    *,
    timeout: float | None = None,
    env: dict | None = None,
    cwd: PathLike | None = None,
) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``cmd`` capturing text output; return (completed process, wall seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, check=False
    )
    return proc, time.perf_counter() - t0


def _check(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout or "").strip()[-2000:]
        raise RuntimeError(f"{what} failed (exit {proc.returncode}):\n{tail}")


def weka_available() -> bool:
    return shutil.which("java") is not None and Path(WEKA_JAR).exists()


def weka_version() -> str:
    """Version of the Weka jar, e.g. '3.6.14' (from weka.core.Version)."""
    proc, _ = timed_run(["java", *JAVA_FLAGS, "-cp", WEKA_JAR, "weka.core.Version"])
    _check(proc, "weka.core.Version")
    return proc.stdout.strip().splitlines()[0].strip()


def java_cmd(main_class: str, *args: str, classpath: str | None = None) -> list[str]:
    return ["java", *JAVA_FLAGS, "-cp", classpath or WEKA_JAR, main_class, *map(str, args)]


# --------------------------------------------------------------------------- J48


_LEAVES_RE = re.compile(r"Number of Leaves\s*:\s*(\d+)")
_SIZE_RE = re.compile(r"Size of the tree\s*:\s*(\d+)")
_CORRECT_RE = re.compile(r"Correctly Classified Instances\s+([-\d.]+)\s+([-\d.]+)\s*%")
_TOTAL_RE = re.compile(r"Total Number of Instances\s+([-\d.]+)")
_BUILD_TIME_RE = re.compile(r"Time taken to build model:\s*([-\d.]+)\s*seconds")
# Section headers of Weka 3.6 Evaluation output that report held-out performance.
_TEST_HEADERS = (
    "=== Error on test data ===",
    "=== Stratified cross-validation ===",
    "=== Cross-validation ===",
)


def parse_j48_output(text: str) -> dict:
    """Parse J48's default text output (tree + evaluation sections).

    Returns leaves, size (None if absent, e.g. with ``-o``), build_seconds (Weka's own
    "Time taken to build model", None with ``-v``) and, if a held-out section is present,
    test accuracy in percent (computed from the counts, not the 4-decimal printed
    percentage), correct and total instance counts. The training-set section
    ("=== Error on training data ===") is ignored.
    """
    out: dict = {
        "leaves": None,
        "size": None,
        "build_seconds": None,
        "accuracy": None,
        "correct": None,
        "total": None,
    }
    if m := _LEAVES_RE.search(text):
        out["leaves"] = int(m.group(1))
    if m := _SIZE_RE.search(text):
        out["size"] = int(m.group(1))
    if m := _BUILD_TIME_RE.search(text):
        out["build_seconds"] = float(m.group(1))
    starts = [i for h in _TEST_HEADERS if (i := text.find(h)) >= 0]
    if starts:
        section = text[min(starts) :]
        m_ok, m_tot = _CORRECT_RE.search(section), _TOTAL_RE.search(section)
        if m_ok is None or m_tot is None:
            raise ValueError("J48 output has a test section but no accuracy lines")
        correct, total = float(m_ok.group(1)), float(m_tot.group(1))
        out.update(
            correct=correct,
            total=total,
            accuracy=100.0 * correct / total if total else float("nan"),
        )
    return out


def run_j48(
    train_arff: PathLike,
    test_arff: PathLike,
    options: tuple[str, ...] | list[str] = DEFAULT_J48_OPTIONS,
    *,
    timeout: float | None = None,
) -> dict:
    """Train J48 on ``train_arff``, evaluate on ``test_arff``; parse the text output.

    Returns dict(leaves, size, accuracy [% correct on the test section], correct, total,
    build_seconds [Weka's own], seconds [wall time of the whole java process], output).
    """
    cmd = java_cmd(J48_CLASS, "-t", str(train_arff), "-T", str(test_arff), *options)
    proc, secs = timed_run(cmd, timeout=timeout)
    _check(proc, "J48")
    res = parse_j48_output(proc.stdout)
    if res["accuracy"] is None:
        raise ValueError("no '=== Error on test data ===' section in J48 output")
    res["seconds"] = secs
    res["output"] = proc.stdout
    return res


def run_j48_build(
    train_arff: PathLike,
    options: tuple[str, ...] | list[str] = ("-U", "-M", "2"),
    *,
    timeout: float | None = None,
) -> dict:
    """Build-only J48 run: ``-no-cv -v -t TRAIN`` (no cross-validation, no evaluation on the
    training data). Returns dict(leaves, size, seconds [whole process])."""
    cmd = java_cmd(J48_CLASS, "-no-cv", "-v", "-t", str(train_arff), *options)
    proc, secs = timed_run(cmd, timeout=timeout)
    _check(proc, "J48 build")
    res = parse_j48_output(proc.stdout)
    return {"leaves": res["leaves"], "size": res["size"], "seconds": secs}


def j48_tree_lines(text: str) -> list[str]:
    """The tree of a J48 printout (or of ``treecert show``'s text): its non-blank lines
    after J48's ``-----`` rule, up to ``Number of Leaves``."""
    lines = text.splitlines()
    rule = [i for i, ln in enumerate(lines) if ln.startswith("-----")]
    lines = lines[rule[0] + 1 :] if rule else lines
    end = next((i for i, ln in enumerate(lines) if ln.startswith("Number of Leaves")),
               len(lines))
    return [ln for ln in lines[:end] if ln.strip()]


def run_j48_tree(
    train_arff: PathLike, options: tuple[str, ...] | list[str], *, timeout: float | None = None
) -> dict:
    """Build-only J48 run (``-no-cv -v``) keeping the printed tree: dict(leaves, size,
    lines [the tree's lines, :func:`j48_tree_lines`])."""
    cmd = java_cmd(J48_CLASS, "-no-cv", "-v", "-t", str(train_arff), *options)
    proc, _ = timed_run(cmd, timeout=timeout)
    _check(proc, "J48 build")
    res = parse_j48_output(proc.stdout)
    return {"leaves": res["leaves"], "size": res["size"], "lines": j48_tree_lines(proc.stdout)}


def run_j48_cv(
    arff: PathLike, options: tuple[str, ...] | list[str], folds: int = 10, seed: int = 1,
    *, timeout: float | None = None
) -> dict:
    """J48's own stratified cross-validation (``-x FOLDS -s SEED``): dict(correct, total,
    accuracy) of its "=== Stratified cross-validation ===" section."""
    cmd = java_cmd(J48_CLASS, "-t", str(arff), "-x", str(folds), "-s", str(seed), *options)
    proc, _ = timed_run(cmd, timeout=timeout)
    _check(proc, "J48 cross-validation")
    res = parse_j48_output(proc.stdout)
    return {k: res[k] for k in ("correct", "total", "accuracy")}


def parse_j48_distributions(text: str) -> np.ndarray:
    """Parse ``-p 0 -distribution`` output into an (n, K) array (3-decimal precision)."""
    lines = text.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.split()[:1] == ["inst#"]) + 1
    except StopIteration:
        raise ValueError("no prediction table ('inst#' header) in J48 output") from None
    rows = []
    for ln in lines[start:]:
        toks = ln.split()
        if not toks:
            continue
        if not toks[0].isdigit():
            break
        rows.append([float(v.lstrip("*")) for v in toks[-1].split(",")])
    return np.asarray(rows, dtype=float)


def j48_distributions(
    train_arff: PathLike,
    test_arff: PathLike,
    options: tuple[str, ...] | list[str] = DEFAULT_J48_OPTIONS,
    *,
    timeout: float | None = None,
) -> np.ndarray:
    """Per-instance class distributions of J48 on ``test_arff`` via ``-p 0 -distribution``.

    Columns follow the declared order of the class attribute's values. Values are rounded by
    Weka to 3 decimals; see ``j48_distributions_exact`` for full precision.
    """
    cmd = java_cmd(
        J48_CLASS, "-t", str(train_arff), "-T", str(test_arff), *options, "-p", "0", "-distribution"
    )
    proc, _ = timed_run(cmd, timeout=timeout)
    _check(proc, "J48 -distribution")
    return parse_j48_distributions(proc.stdout)


_EXACT_SRC = """\
import java.util.Arrays;
import weka.classifiers.trees.J48;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

public class J48Dist {
  public static void main(String[] a) throws Exception {
    Instances tr = DataSource.read(a[0]);
    tr.setClassIndex(tr.numAttributes() - 1);
    Instances te = DataSource.read(a[1]);
    te.setClassIndex(te.numAttributes() - 1);
    J48 c = new J48();
    c.setOptions(Arrays.copyOfRange(a, 2, a.length));
    c.buildClassifier(tr);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < te.numInstances(); i++) {
      double[] d = c.distributionForInstance(te.instance(i));
      for (int k = 0; k < d.length; k++) {
        if (k > 0) sb.append(',');
        sb.append(Double.toString(d[k]));
      }
      sb.append('\\n');
    }
    System.out.print(sb);
  }
}
"""


def _exact_helper_dir() -> Path:
    """Compile the J48Dist helper once per jar (cached in the temp dir)."""
    jar = Path(WEKA_JAR).resolve()
    tag = f"{jar.name}-{int(jar.stat().st_mtime)}"
    d = Path(tempfile.gettempdir()) / "treecert-bench-j48dist" / tag
    if not (d / "J48Dist.class").exists():
        if shutil.which("javac") is None:
            raise RuntimeError("javac not found (install a JDK) for exact J48 distributions")
        d.mkdir(parents=True, exist_ok=True)
        (d / "J48Dist.java").write_text(_EXACT_SRC)
        proc, _ = timed_run(
            ["javac", "-nowarn", "-cp", str(jar), "-d", str(d), str(d / "J48Dist.java")]
        )
        _check(proc, "javac J48Dist")
    return d


def j48_distributions_exact(
    train_arff: PathLike,
    test_arff: PathLike,
    options: tuple[str, ...] | list[str] = DEFAULT_J48_OPTIONS,
    *,
    timeout: float | None = None,
) -> np.ndarray:
    """Like ``j48_distributions`` but with full float64 precision (compiles a helper;
    class index = last attribute, as in all benchmark data)."""
    cp = os.pathsep.join([str(_exact_helper_dir()), WEKA_JAR])
    proc, _ = timed_run(
        java_cmd("J48Dist", str(train_arff), str(test_arff), *options, classpath=cp),
        timeout=timeout,
    )
    _check(proc, "J48Dist")
    rows = [[float(v) for v in ln.split(",")] for ln in proc.stdout.splitlines() if ln]
    return np.asarray(rows, dtype=float)


# --------------------------------------------------------------------------- ARFF folds


def read_folds(folds_csv: PathLike) -> np.ndarray:
    """Fold ids, one per line (blank lines ignored), as an int array."""
    ids = [int(s) for s in Path(folds_csv).read_text().split()]
    return np.asarray(ids, dtype=int)


def split_arff_text(arff_path: PathLike) -> tuple[list[str], list[str]]:
    """Split an ARFF file into header lines (up to and including ``@data``) and data lines
    (everything after, minus blank lines and ``%`` comments). Lines keep their text but
    lose their line terminators."""
    lines = Path(arff_path).read_text().splitlines()
    for i, ln in enumerate(lines):
        if ln.strip().lower().startswith("@data"):
            header, rest = lines[: i + 1], lines[i + 1 :]
            break
    else:
        raise ValueError(f"{arff_path}: no @data line")
    data = [ln for ln in rest if ln.strip() and not ln.lstrip().startswith("%")]
    return header, data


def weka_fold_files(
    arff_path: PathLike, folds_csv: PathLike, fold: int, outdir: PathLike
) -> tuple[Path, Path]:
    """Write ``<stem>-fold<k>-train.arff`` / ``-test.arff`` into ``outdir``: the header kept
    verbatim, data rows whose fold id != / == ``fold`` in their original order."""
    header, data = split_arff_text(arff_path)
    folds = read_folds(folds_csv)
    if len(folds) != len(data):
        raise ValueError(f"{arff_path}: {len(data)} data rows but {len(folds)} fold ids")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    stem = Path(arff_path).stem
    paths = []
    for part, keep in (("train", folds != fold), ("test", folds == fold)):
        p = outdir / f"{stem}-fold{fold}-{part}.arff"
        rows = [ln for ln, k in zip(data, keep, strict=True) if k]
        p.write_text("\n".join(header + rows) + "\n")
        paths.append(p)
    return paths[0], paths[1]


# --------------------------------------------------------------------------- scikit-learn

_SKLEARN_SCRIPT = """\
import json, sys
import pandas as pd
from sklearn.tree import DecisionTreeClassifier
df = pd.read_csv(sys.argv[1])
y = df.iloc[:, -1].astype(str)
X = df.iloc[:, :-1]
cat = list(X.select_dtypes(exclude="number").columns)
if cat:
    X = pd.get_dummies(X, columns=cat)
kw = {"criterion": "entropy", "min_samples_leaf": 2}
kw.update(json.loads(sys.argv[2]))
m = DecisionTreeClassifier(**kw).fit(X, y)
print(json.dumps({"leaves": int(m.get_n_leaves()), "size": int(m.tree_.node_count)}))
"""


def run_sklearn_fit_csv(csv_path: PathLike, *, timeout: float | None = None, **kw) -> dict:
    """Fit ``DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, **kw)`` in a fresh
    ``python -c`` process on a CSV (header row, class last; non-numeric columns one-hot
    encoded with pandas). Returns dict(seconds [whole process], leaves, size)."""
    cmd = [sys.executable, "-c", _SKLEARN_SCRIPT, str(csv_path), json.dumps(kw)]
    proc, secs = timed_run(cmd, timeout=timeout)
    _check(proc, "sklearn fit")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["seconds"] = secs
    return res


def run_sklearn_fit(X, y, *, timeout: float | None = None, **kw) -> float:
    """Seconds for a whole-process sklearn fit (interpreter start + imports + CSV load +
    fit) on ``X``, ``y``; the CSV is written to a temp file first (not timed)."""
    import pandas as pd

    X = np.asarray(X)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    df["class"] = np.asarray(y)
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "data.csv"
        df.to_csv(csv, index=False)
        return run_sklearn_fit_csv(csv, timeout=timeout, **kw)["seconds"]


# --------------------------------------------------------------------------- rpart

_RPART_SCRIPT = """\
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(rpart))
d <- read.csv(args[1], stringsAsFactors = TRUE)
names(d)[ncol(d)] <- "y__"
d$y__ <- factor(d$y__)
m <- rpart(y__ ~ ., data = d, method = "class", parms = list(split = "information"),
           control = rpart.control(minbucket = 2, minsplit = 4, cp = 0, xval = 0,
                                   maxcompete = 0, maxsurrogate = 0))
cat(sum(m$frame$var == "<leaf>"), nrow(m$frame), "\\n")
"""


def rpart_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    proc, _ = timed_run(["Rscript", "-e", "library(rpart)"])
    return proc.returncode == 0


def run_rpart_fit_csv(csv_path: PathLike, *, timeout: float | None = None) -> dict:
    """Whole-process ``Rscript`` fit of rpart (information split, minbucket=2, cp=0, no
    cross-validation, no surrogates) on a CSV with the class last.
    Returns dict(seconds, leaves, size)."""
    proc, secs = timed_run(["Rscript", "-e", _RPART_SCRIPT, str(csv_path)], timeout=timeout)
    _check(proc, "rpart fit")
    leaves, size = (int(v) for v in proc.stdout.split()[-2:])
    return {"seconds": secs, "leaves": leaves, "size": size}
