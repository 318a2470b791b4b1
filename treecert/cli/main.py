"""The ``treecert`` command line: the app, its commands in order, and the entry point.

Every command is a thin layer over :mod:`treecert.api`, one module each in this package:
it reads its inputs, calls one API function and writes the result. User errors
(``TreecertError``) are caught in one place (:func:`main`) and printed as one line
``Error: ...`` with exit code 2.
"""

from __future__ import annotations

import sys

import typer

from treecert.cli import calibrate, compare, evaluate, merge, predict, prune, show, train
from treecert.errors import TreecertError

app = typer.Typer(
    name="treecert",
    help="Decision trees that tell you how far to trust each prediction.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

app.command()(train.train)
app.command()(predict.predict)
app.command()(evaluate.evaluate)
app.command()(compare.compare)
app.command("prune")(prune.prune_command)
app.command()(calibrate.calibrate)
app.command()(show.show)
app.command()(merge.merge)


class Interrupted(BaseException):
    """Raised by our SIGINT handler; not a KeyboardInterrupt, so the CLI framework does not
    turn it into its own exit code 1."""


def _on_sigint(signum, frame):  # pragma: no cover - exercised through a subprocess
    raise Interrupted()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, map user errors to one line and exit code 2.

    Usage errors are the CLI framework's (exit 2); ``TreecertError`` is printed as
    ``Error: ...`` (exit 2); Ctrl-C exits 130 and leaves no partial output (all outputs are
    written through temporary files); any other exception is a bug and keeps its traceback.
    """
    import signal

    command = typer.main.get_command(app)
    previous = signal.getsignal(signal.SIGINT)
    in_main_thread = True
    try:
        signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:  # not the main thread (e.g. a test runner thread)
        in_main_thread = False
    try:
        command.main(args=argv, prog_name="treecert", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except TreecertError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Interrupted:
        print("Interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)
    return 0


def run() -> None:  # console-script entry point
    sys.exit(main())


if __name__ == "__main__":
    run()
