"""Per-unit results of ``evaluate``/``compare`` on disk, for ``--resume``, ``--shard`` and
``treecert merge``.

A unit is one (method, repeat, fold) of one dataset (leave-one-out served by one engine is
one unit, fold -1; so is a repeat of a cross-validation whose folds one engine serves).
Each finished unit is written atomically to
``DIR/units/[DATASET/]m<method>-r<repeat>-f<fold>.npz`` (numpy arrays only, read with
``allow_pickle=False``) beside ``run.json``, which records what the units are results of
(a fingerprint of the data, protocol and options) and what is needed to turn them into the
final files (methods, classes, bins, ...). Floats are stored as float64, so final outputs
built from stored units are byte-identical to an uninterrupted run.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from treecert.data.fileio import atomic_writer, make_directory, write_text
from treecert.errors import ConfigError
from treecert.methods import Prediction
from treecert.tree.segments import offsets

FORMAT = "treecert-units"


@dataclass
class UnitResult:
    repeat: int
    fold: int
    method: int
    rows: np.ndarray
    prediction: Prediction
    fit_seconds: float
    predict_seconds: float
    size: float | None
    y: np.ndarray | None = None  # the test rows' classes (so stored units suffice for metrics)


def fingerprint(obj) -> str:
    """sha256 of a JSON-able description (numpy arrays by their bytes)."""
    h = hashlib.sha256()

    def default(o):
        if isinstance(o, np.ndarray):
            return hashlib.sha256(np.ascontiguousarray(o).tobytes()).hexdigest() + str(o.dtype)
        if isinstance(o, np.generic):
            return o.item()
        raise TypeError(type(o))

    h.update(json.dumps(obj, sort_keys=True, default=default).encode())
    return h.hexdigest()


def read_json(path: Path):
    """The JSON document in ``path``; unreadable or malformed is a user error."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: unreadable ({exc}).") from None
    except RecursionError:
        raise ConfigError(f"{path}: unreadable (nested too deeply).") from None


class UnitStore:
    """The unit files of one dataset's run in ``directory``."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    @property
    def manifest_path(self) -> Path:
        return self.directory / "run.json"

    def manifest(self) -> dict | None:
        if not self.manifest_path.exists():
            return None
        doc = read_json(self.manifest_path)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ConfigError(f"{self.manifest_path}: not a treecert unit record.")
        return doc

    def open(self, manifest: dict, *, fresh: bool) -> None:
        """Start recording; ``fresh`` drops units of any earlier run, otherwise an earlier
        run's units must be of this very run (same fingerprint)."""
        make_directory(self.directory)
        old = self.manifest()
        if fresh:
            for p in self.directory.glob("m*-r*-f*.npz"):
                p.unlink()
        elif old is not None and old["fingerprint"] != manifest["fingerprint"]:
            raise ConfigError(
                f"{self.directory}: holds results of a different run (other data, methods "
                "or options).",
                "Give the same options as that run, or another output directory.",
            )
        if old != manifest:
            write_text(self.manifest_path, json.dumps(manifest, indent=1) + "\n")

    def path(self, key: tuple[int, int, int]) -> Path:
        m, r, f = key
        return self.directory / f"m{m}-r{r}-f{f}.npz"

    def has(self, key) -> bool:
        return self.path(key).exists()

    def save(self, key, results: list) -> None:
        """Write a unit's results (a list of :class:`UnitResult`)."""
        arrays: dict[str, np.ndarray] = {}
        first = results[0].prediction
        arrays["lengths"] = np.array([r.rows.size for r in results], dtype=np.int64)
        for name in ("repeat", "fold", "method", "fit_seconds", "predict_seconds"):
            arrays[name] = np.array([getattr(r, name) for r in results])
        arrays["size"] = np.array([np.nan if r.size is None else r.size for r in results],
                                  dtype=np.float64)
        arrays["rows"] = np.concatenate([r.rows for r in results])
        arrays["y"] = np.concatenate([r.y for r in results])
        for attr in ("proba", "certainty", "lower", "upper"):
            if getattr(first, attr) is not None:
                arrays[attr] = np.concatenate([getattr(r.prediction, attr) for r in results])
        for k, name in enumerate(first.columns):
            arrays[f"column{k}"] = np.concatenate([r.prediction.columns[name]
                                                   for r in results])
        arrays["column_names"] = np.array(list(first.columns), dtype=np.str_)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        with atomic_writer(self.path(key), "wb") as fh:
            fh.write(buf.getvalue())

    def load(self, key) -> list:
        try:
            with np.load(self.path(key), allow_pickle=False) as z:
                a = {name: z[name] for name in z.files}
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"{self.path(key)}: unreadable unit result ({exc}).",
                              "Delete it and run again with --resume.") from None
        edges = offsets(a["lengths"])
        names = [str(n) for n in a["column_names"]]
        out = []
        for i in range(a["lengths"].size):
            s = slice(edges[i], edges[i + 1])

            def part(name, s=s):
                return a[name][s] if name in a else None

            pred = Prediction(part("proba"), part("certainty"), part("lower"), part("upper"),
                              {n: a[f"column{k}"][s] for k, n in enumerate(names)})
            size = float(a["size"][i])
            out.append(UnitResult(int(a["repeat"][i]), int(a["fold"][i]), int(a["method"][i]),
                                  a["rows"][s], pred, float(a["fit_seconds"][i]),
                                  float(a["predict_seconds"][i]),
                                  None if size != size else size, a["y"][s]))
        return out


