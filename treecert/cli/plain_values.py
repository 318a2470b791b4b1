"""Option values of the plain types (str, int, float, list[str], Literal choices) converted
without pydantic.

Typer 0.2x converts every option value, defaults included, through a pydantic
``TypeAdapter``: importing pydantic and building one adapter per option costs about 0.17
CPU-s on each command, more than the rest of a small ``predict``. The options of treecert
are plain ``str``, ``int``, ``float``, ``bool`` and ``list[str]``, so :func:`install` gives
each of those a converter for the spellings whose value is not in doubt — an ``int`` written
as ASCII digits, a ``float`` as a plain decimal, any ``str``, a ``bool`` flag's own value —
and hands every other value to typer's own converter, built on first use, so that ``--jobs
1_000`` or ``--cp inf`` mean, and ``--jobs abc`` fails with, exactly what typer says.
``tests/test_startup.py`` checks the two agree on every spelling it tries. Older typer
versions convert through click types and have nothing to replace; then this does nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})(?:[eE][-+]?[0-9]{1,2})?")


def _plain(annotation, value):
    """``value`` converted to ``annotation``, or ``NotImplemented`` if typer should say."""
    kind = type(value)
    if annotation is bool:
        return value if kind is bool else NotImplemented
    if annotation is str:
        return value if kind is str else NotImplemented
    if annotation is int:
        if kind is int:
            return value
        if kind is str and _INT.fullmatch(value):
            return int(value)
    elif annotation is float:
        if kind is float:
            return value
        if kind is int:
            return float(value)
        if kind is str and _FLOAT.fullmatch(value):
            return float(value)
    elif annotation == list[str]:
        if kind in (list, tuple) and all(type(v) is str for v in value):
            return list(value)
    elif get_origin(annotation) is Literal:  # a choice: one of its own values, as given
        if kind is str and value in get_args(annotation):
            return value
    return NotImplemented


def install(command) -> None:
    """Give every plain-typed parameter of ``command`` (a click group or command built by
    typer) the converter above; parameters with a parser, choices, bounds, paths or files,
    and typer versions without runtime converters, are left alone."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # typer before pydantic-based conversion: nothing to replace
        return

    @dataclass(frozen=True)
    class PlainRuntimeParam(RuntimeParam):
        descriptor: Any = None

        def _coerce_value(self, value, param, ctx):
            out = _plain(self.annotation, value)
            if out is NotImplemented:
                out = build_runtime_param(self.descriptor)._coerce_value(value, param, ctx)
            return out

    for sub in [command, *getattr(command, "commands", {}).values()]:
        # --help is made on first use and converted like the rest (its absent value too)
        # (with the group's help names, -h and --help: the option is made once and kept)
        names = command.context_settings.get("help_option_names")
        help_option = sub.get_help_option(sub.context_class(sub, info_name=sub.name,
                                                            help_option_names=names))
        for param in [*sub.params, *([help_option] if help_option is not None else [])]:
            desc = getattr(param, "type_descriptor", None)
            if (desc is None or getattr(param, "_runtime_param", ...) is not None
                    or not (desc.annotation in (bool, str, int, float, list[str])
                            or get_origin(desc.annotation) is Literal)
                    or desc.parameter_info.parser is not None
                    or (desc.is_choice and get_origin(desc.annotation) is not Literal)
                    or desc.is_path or desc.is_file or desc.is_ranged):
                continue
            param._runtime_param = PlainRuntimeParam(
                parameter_info=desc.parameter_info, annotation=desc.annotation,
                descriptor=desc)
