"""The ``treecert`` command line: the app, its commands in order, and the entry point.

Every command is a thin layer over :mod:`treecert.api`, one module each in this package:
it reads its inputs, calls one API function and writes the result. User errors
(``TreecertError``) are caught in one place (:func:`main`) and printed as one line
``Error: ...`` with exit code 2.
"""

from __future__ import annotations

import contextlib
import os
import sys
import typing

import typer

from treecert.cli import (
    calibrate,
    compare,
    evaluate,
    merge,
    options,
    plain_values,
    predict,
    prune,
    show,
    train,
)
from treecert.errors import ReaderGone, TreecertError
from treecert.parallel import set_malloc_thresholds
from treecert.transductive.budget import memory_formula

app = typer.Typer(
    name="treecert",
    help="Decision trees that tell you how far to trust each prediction.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.callback()(options.top)
for _command in (predict.predict, evaluate.evaluate):  # one home for the engine's bound
    _command.__doc__ = _command.__doc__.replace("ENGINE_MEMORY", memory_formula())
for _name, _command in [("train", train.train), ("predict", predict.predict),
                        ("evaluate", evaluate.evaluate), ("compare", compare.compare),
                        ("prune", prune.prune_command), ("calibrate", calibrate.calibrate),
                        ("show", show.show), ("merge", merge.merge)]:
    # The command modules' annotations are strings (``from __future__ import annotations``),
    # which typer evaluates twice per command on every call; evaluated once here, they cost
    # half (about 0.013 CPU-s of a 0.18 s ``--help``).
    _command.__annotations__ = typing.get_type_hints(_command, include_extras=True)
    app.command(_name, cls=options.HelpCommand)(_command)


class Interrupted(BaseException):
    """Raised by our handler of SIGINT, SIGTERM and SIGHUP; not a KeyboardInterrupt, so the
    CLI framework does not turn it into its own exit code 1."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: The signals that stop a run cleanly (temporary files removed), and what is said.
_STOPPING = {"SIGINT": "Interrupted.", "SIGTERM": "Terminated.", "SIGHUP": "Hangup."}


def _on_signal(signum, frame):  # pragma: no cover - exercised through a subprocess
    raise Interrupted(signum)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, map user errors to one line and exit code 2.

    Usage errors are the CLI framework's (exit 2); ``TreecertError`` is printed as
    ``Error: ...`` (exit 2), and so are the operating system's refusals (a full disk, no
    permission: ``OSError``) and running out of memory. Ctrl-C (SIGINT), SIGTERM (what a
    batch scheduler sends when a job's time is up) and SIGHUP stop the run, remove the
    temporary output files and exit 128 + the signal number (130, 143, 129); outputs are
    written through temporary files, so none is left partial. Any other exception is a bug
    and keeps its traceback.
    """
    import signal

    command = typer.main.get_command(app)
    plain_values.install(command)
    previous = {}
    for name in _STOPPING:
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        try:
            handler = signal.getsignal(signum)
            if handler is not signal.SIG_IGN:  # e.g. nohup: an ignored signal stays ignored
                signal.signal(signum, _on_signal)
                previous[signum] = handler
        except ValueError:  # not the main thread (e.g. a test runner thread)
            break
    try:
        with _warnings_said():
            command.main(args=argv, prog_name="treecert", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except ReaderGone as exc:
        return _reader_gone(exc.exit_code)
    except TreecertError as exc:
        return _error(str(exc), exc.exit_code)
    except BrokenPipeError:  # a write to standard output outside treecert's own writers
        return _reader_gone(ReaderGone.exit_code)
    except Interrupted as exc:
        return _stopped(exc)
    except OSError as exc:  # the system refused something (disk full, no permission, ...)
        stop = _interruption_of(exc)
        if stop is not None:  # a signal that cut a file's closing short: the signal's stop
            return _stopped(stop)
        where = f"{exc.filename}: " if exc.filename else ""
        return _error(f"{where}{exc.strerror or type(exc).__name__}.", 2)
    except MemoryError:
        return _error("out of memory.", 2,
                      "Raise the memory limit, or give smaller inputs (--chunk-size for "
                      "predict).")
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


@contextlib.contextmanager
def _warnings_said():
    """treecert's own warnings (:class:`~treecert.errors.TreecertWarning`, e.g. a work bound
    passed on the command line) as one line ``Warning: ...`` each on stderr, as the
    commands' other warnings; other warnings keep Python's handling."""
    import warnings

    from treecert.cli.common import say
    from treecert.errors import TreecertWarning

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, TreecertWarning):
            say(f"Warning: {message}")
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("default", TreecertWarning)
        warnings.showwarning = show
        yield


def _interruption_of(exc: BaseException) -> Interrupted | None:
    """The signal's :class:`Interrupted` an error was raised while handling, if any. The
    handler raises at any point, also inside a file's ``close`` between its flush and the
    descriptor's release; the cleanup that unwinds then can fail on that descriptor (``Bad
    file descriptor``), and its OSError replaces the signal's exception."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Interrupted):
            return exc
        seen.add(id(exc))
        exc = exc.__context__
    return None


def _stopped(exc: Interrupted) -> int:
    """A run stopped by a signal: temporary outputs removed, one line said, 128 + signum."""
    import signal

    from treecert.data.fileio import remove_temporaries

    remove_temporaries()
    name = signal.Signals(exc.signum).name
    _say(_STOPPING.get(name, f"Stopped by {name}."))
    return 128 + exc.signum


def _reader_gone(code: int) -> int:
    """The reader of a pipe stopped early (``| head``): temporary outputs removed and
    nothing said, as coreutils' tools end (141, killed by SIGPIPE). What was read was
    complete up to where the reader stopped; a script's ``set -o pipefail`` still sees it."""
    from treecert.data.fileio import remove_temporaries

    remove_temporaries()
    return code


def _say(line: str) -> None:
    if sys.stderr is None:  # closed: nowhere to say it (print would use stdout)
        return
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr)


def _error(message: str, code: int, hint: str | None = None) -> int:
    _say(f"Error: {message}{' ' + hint if hint else ''}")
    return code


def _open_standard_streams() -> None:
    """Put /dev/null on standard input, output or error if a caller closed them (``>&-``):
    otherwise the next file opened would take descriptor 1 or 2 and receive what is meant
    for that stream. A closed standard input reads as empty and a closed standard error
    takes the messages away; ``sys.stdout`` stays None (as Python set it), so writing
    results to a closed standard output is an error (see :mod:`treecert.data.fileio`)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")


def _flush_stdout() -> bool:
    """Flush standard output before the interpreter does: if that fails (the reader of a
    pipe has gone, the disk is full), what is left in the buffer goes to /dev/null instead
    of a report at exit. False when the reader of a pipe had gone."""
    if sys.stdout is None:
        return True
    try:
        sys.stdout.flush()
    except OSError as exc:
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        return not isinstance(exc, BrokenPipeError)
    return True


#: The command line's glibc malloc thresholds (:func:`treecert.parallel.set_malloc_thresholds`):
#: allocations below 1 GiB come from the heap, and freed memory stays in it for reuse.
HOLD_BYTES = 1 << 30


def run() -> None:  # console-script entry point
    # One OpenBLAS thread unless the user asks for more: numpy's import starts one thread
    # per core that spins (0.12 CPU-s of every command on 2 cores, a third of a short
    # `predict`), and treecert's matrix products are a few columns wide.
    # Processes (--jobs) are its parallelism.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Freed memory kept for reuse: a command's process ends with its job, so what it holds
    # is its peak anyway, and by default glibc unmaps every array over 32 MiB when it is
    # freed and faults the next one in page by page (soybean's Venn CV: 6 of 20 s in the
    # kernel). A library caller's allocator is left alone.
    set_malloc_thresholds(HOLD_BYTES, HOLD_BYTES)
    _open_standard_streams()
    code = main()
    if not _flush_stdout() and code == 0:
        code = ReaderGone.exit_code
    sys.exit(code)


if __name__ == "__main__":
    run()
