"""Start-up cost (issue 15): what the command line imports, not how long it takes.

Every shell call pays for the modules it imports: pandas alone is about 0.65 CPU-s, numpy
0.2, rich 0.1, pydantic (typer's converter of option values) 0.17. ``--help`` must build
the whole app without any of them; the plain option values must be converted without
pydantic, to exactly the values typer's own converter gives.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pandas", "scipy", "rich", "pydantic", "joblib", "matplotlib", "sklearn")


def _loaded_after(code: str) -> list[str]:
    """The heavy modules loaded once ``code`` has run in a fresh interpreter."""
    probe = (f"import sys\n{code}\n"
             f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def test_importing_the_app_and_api_loads_no_heavy_module():
    assert _loaded_after("import treecert.cli.main, treecert.api, treecert") == []


@pytest.mark.parametrize("args", [["--help"], ["predict", "--help"], ["evaluate", "--help"]])
def test_help_builds_every_option_without_heavy_modules(args):
    code = ("import contextlib, io\n"
            "from treecert.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    assert main({args!r}) == 0\n"
            "text = out.getvalue()\n"
            "assert 'Usage: treecert' in text, text")
    assert _loaded_after(code) == []


def test_full_help_still_lists_every_option(capsys):
    from conftest import run_cli

    code, out, _ = run_cli(["predict", "--help"], capsys)
    assert code == 0
    for flag in ("--output", "--id", "--method", "--loss", "--shard", "--jobs", "--scheduler",
                 "--chunk-size", "--quiet"):
        assert flag in out, flag


def test_a_command_converts_its_options_without_pydantic(tmp_path):
    """`show` reads a model (numpy) but converts its options without pydantic."""
    model = tmp_path / "w.json"
    code = ("import contextlib, io\n"
            "from treecert.cli.main import main\n"
            f"assert main(['train', {str(ROOT / 'sample_data/weather.nominal.arff')!r}, "
            f"'-o', {str(model)!r}, '-q', '--min-leaf', '1', '--cp', '0.0']) == 0\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['show', {str(model)!r}, '--format', 'text']) == 0")
    loaded = _loaded_after(code)
    assert "pydantic" not in loaded
    assert "rich" not in loaded  # -q: nothing said, so no console made


# ----------------------------------------------------------------- plain option values
_SPELLINGS = st.one_of(
    st.sampled_from(["3", "-3", "+3", "007", " 3", "3 ", "3.0", "1e3", "1E-3", "1_000", "inf",
                     "-inf", "nan", "NaN", "Infinity", ".5", "-.5", "5.", "0x10", "", "abc",
                     "\u0663", "1e999", "9" * 30, "-0", "-0.0", "1e-400"]),
    st.from_regex(r"-?[0-9]{0,20}(\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?", fullmatch=True),
    st.integers(-10**20, 10**20), st.floats(allow_nan=False), st.booleans(),
    st.text(max_size=5),
)


@functools.cache
def _typer_converter(annotation):
    from typer._coercion import build_runtime_param, resolve_type_descriptor
    from typer.models import OptionInfo

    return build_runtime_param(resolve_type_descriptor(annotation, OptionInfo()))


def _typer_value(annotation, value):
    from typer._click.exceptions import BadParameter

    try:
        return _typer_converter(annotation)._coerce_value(value, None, None)
    except BadParameter as exc:
        return f"error: {exc}"


@settings(max_examples=200, deadline=None)
@given(annotation=st.sampled_from([int, float, str, bool]), value=_SPELLINGS)
def test_plain_values_are_what_typer_makes_of_them(annotation, value):
    pytest.importorskip("typer._coercion")
    from treecert.cli.plain_values import _plain

    fast = _plain(annotation, value)
    if fast is NotImplemented:  # typer's own converter decides: nothing to compare
        return
    expected = _typer_value(annotation, value)
    assert type(fast) is type(expected)
    assert fast == expected or (fast != fast and expected != expected)


def test_list_values_are_what_typer_makes_of_them():
    pytest.importorskip("typer._coercion")
    from treecert.cli.plain_values import _plain

    for value in (("a", "b"), ["x"], ()):
        assert _plain(list[str], value) == _typer_value(list[str], value)
    assert _plain(list[str], (1, "a")) is NotImplemented


def test_other_spellings_get_typers_errors(capsys):
    from conftest import run_cli

    code, _, err = run_cli(["predict", "m.json", "d.csv", "--jobs", "two"], capsys)
    assert code == 2
    assert "Input should be a valid integer" in err or "is not a valid integer" in err
