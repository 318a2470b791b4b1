"""The in-memory form of a data set: a schema plus numeric arrays.

Every loader (ARFF, CSV) produces a :class:`Dataset`; every learner consumes one. Nominal
values are stored as integer codes (as floats, so one ``float64`` matrix holds all
attributes) in the order the schema declares them; missing values are ``NaN``. Keeping the
declared order matters: Weka's class order decides column order in outputs and which class
is "positive".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

AttributeKind = Literal["numeric", "nominal", "date", "string"]


@dataclass(frozen=True)
class Attribute:
    """One column: its name, its kind and, for nominal attributes, the declared values.

    ``date`` attributes are stored as numbers (seconds since the Unix epoch, UTC) and are
    split on like numeric ones; ``date_format`` keeps the ARFF format for display.
    ``string`` attributes cannot be learned from and are rejected for training.
    ``nominal_from`` is the kind a file declared for a nominal attribute that ``--nominal``
    converted (``"numeric"``: Weka's NumericToNominal, values written as numbers;
    ``"string"``): kept in the model so that a test file declaring it the same way is
    converted the same way at predict time rather than refused.
    """

    name: str
    kind: AttributeKind
    values: tuple[str, ...] = ()
    date_format: str | None = None
    nominal_from: str | None = None

    @property
    def is_nominal(self) -> bool:
        return self.kind == "nominal"

    @property
    def is_numeric(self) -> bool:
        """True for numeric and date attributes: both are split by thresholds."""
        return self.kind in ("numeric", "date")

    def to_json(self) -> dict:
        out: dict = {"name": self.name, "kind": self.kind}
        if self.kind == "nominal":
            out["values"] = list(self.values)
        if self.date_format is not None:
            out["date_format"] = self.date_format
        if self.nominal_from is not None:
            out["nominal_from"] = self.nominal_from
        return out

    @classmethod
    def from_json(cls, obj: dict) -> Attribute:
        return cls(
            name=obj["name"],
            kind=obj["kind"],
            values=tuple(obj.get("values", ())),
            date_format=obj.get("date_format"),
            nominal_from=obj.get("nominal_from"),
        )


@dataclass(frozen=True)
class Schema:
    """The attributes a model learns from (``attributes``) and the class attribute."""

    attributes: tuple[Attribute, ...]
    class_attribute: Attribute
    relation: str = ""

    @property
    def n_features(self) -> int:
        return len(self.attributes)

    @property
    def classes(self) -> tuple[str, ...]:
        return self.class_attribute.values

    @property
    def n_classes(self) -> int:
        return len(self.class_attribute.values)

    @property
    def feature_names(self) -> list[str]:
        return [a.name for a in self.attributes]

    def nominal_mask(self) -> np.ndarray:
        """Boolean array (n_features,): True where the attribute is nominal."""
        return np.array([a.is_nominal for a in self.attributes], dtype=bool)

    def n_values(self) -> np.ndarray:
        """Int array (n_features,): number of declared values (0 for numeric)."""
        return np.array([len(a.values) if a.is_nominal else 0 for a in self.attributes])

    def to_json(self) -> dict:
        return {
            "relation": self.relation,
            "attributes": [a.to_json() for a in self.attributes],
            "class_attribute": self.class_attribute.to_json(),
        }

    @classmethod
    def from_json(cls, obj: dict) -> Schema:
        return cls(
            attributes=tuple(Attribute.from_json(a) for a in obj["attributes"]),
            class_attribute=Attribute.from_json(obj["class_attribute"]),
            relation=obj.get("relation", ""),
        )


@dataclass
class Dataset:
    """Rows of one data file, aligned to ``schema``.

    Attributes
    ----------
    X : float64 array (n_samples, n_features)
        Numeric values, or nominal codes into ``Attribute.values``; NaN = missing.
    y : int64 array (n_samples,)
        Class codes into ``schema.classes``; -1 where the class is missing or the file has
        no class column (test data).
    weights : float64 array (n_samples,)
        Instance weights (ARFF ``{w}``), 1.0 by default.
    extra : dict[str, numpy object array]
        Columns that are not learned from but may be copied to outputs (string attributes,
        identifier columns), keyed by name, in file order.
    source : str
        File name, for messages.
    has_class : bool
        Whether the file contained the class column.
    class_position : int, optional
        Where the class column stood in the file read, as the number of ``schema``
        attributes before it (None: unknown, or no class column). Outputs that keep the
        data's layout (``predict --format arff``) put the class back there.
    warnings : list[str]
        Things the loader forgave (unseen nominal values read as missing, ...), for the CLI
        to print on stderr.
    """

    schema: Schema
    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    source: str = "<data>"
    has_class: bool = True
    warnings: list[str] = field(default_factory=list)
    class_position: int | None = None

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    def subset(self, rows: np.ndarray) -> Dataset:
        """Rows ``rows`` (indices or boolean mask) as a new Dataset sharing the schema."""
        return Dataset(
            schema=self.schema,
            X=self.X[rows],
            y=self.y[rows],
            weights=self.weights[rows],
            extra={k: v[rows] for k, v in self.extra.items()},
            source=self.source,
            has_class=self.has_class,
            class_position=self.class_position,
        )


def integer_codes(values: np.ndarray, unknown, dtype=np.intp) -> np.ndarray:
    """Nominal values as stored (each value's code as a float, ``NaN`` where unknown) as
    integers of ``dtype``, an unknown value coded ``unknown`` (one number, or one per
    column): the form that indexes a tally's cells or a table's columns."""
    return np.where(np.isnan(values), unknown, values).astype(dtype)
