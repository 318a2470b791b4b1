"""Writing outputs safely: atomically, never over an input or a device, and as strict JSON.

A batch job killed mid-write must not leave a half-written CSV or model that a later step
reads as complete, so an output that is (or will be) a regular file goes to a temporary file
in the target directory and is renamed into place only when complete. Anything else is never
renamed over: a character device (``/dev/null``, ``/dev/full``) or a pipe is written
directly, standard output (``-``, ``/dev/stdout``) through ``sys.stdout``, and a directory or
a block device is refused. Every failure to write (no permission, a full disk, a closed pipe)
is an :class:`~treecert.errors.OutputError` naming the output, so the command line prints
one line. New files get the permissions the umask allows (0666 less the umask); a replaced
file keeps its permissions, as with the shell's ``>``.

Temporary files still open are listed in :data:`_TEMPORARIES`, so the command line can
remove them whatever interrupts it (:func:`remove_temporaries`). A command that writes
several files stages them (:func:`staged_outputs`): all appear when it succeeds, none when
it fails. :func:`directory_lock`
keeps two runs from writing into one output directory at once. JSON outputs are strict (no
NaN or Infinity): :func:`nan_to_none` prepares a document for
``json.dumps(..., allow_nan=False)``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from treecert.errors import ConfigError, OutputError, ReaderGone

#: Temporary files of :func:`atomic_writer` not yet renamed into place or removed.
_TEMPORARIES: set[str] = set()

#: The name messages give standard output, and the names it goes by.
STDOUT = "standard output"
_STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")

#: The lock file :func:`directory_lock` creates in the directory it locks.
LOCK_NAME = ".treecert.lock"


def check_not_input(output: str | Path, inputs: list[str | Path]) -> None:
    """Refuse to write ``output`` over any of ``inputs``."""
    if str(output) == "-":
        return
    out = Path(output)
    for inp in inputs:
        if str(inp) == "-":
            continue
        src = Path(inp)
        same = out.resolve() == src.resolve()
        if not same and out.exists() and src.exists():
            with contextlib.suppress(OSError):
                same = os.path.samefile(out, src)
        if same:
            raise ConfigError(
                f"{output}: refusing to overwrite an input file.", "Choose another -o path."
            )


def encodable(text: str) -> str:
    """``text`` with every character UTF-8 cannot encode (a lone surrogate, from a name
    decoded with ``surrogateescape`` or a ``\\udcff`` in a JSON model) written as its
    Python escape (``\\udcff``), so that every output is valid UTF-8 and parses back."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def output_error(name: str | Path, exc: OSError, doing: str = "cannot write") -> OutputError:
    """The one-line error for ``exc`` raised while writing the output ``name``."""
    if exc.errno == errno.EPIPE:
        return ReaderGone(f"{name}: {doing}: the program reading it stopped before the end.")
    why = exc.strerror or type(exc).__name__
    hint = {
        errno.ENOSPC: "Free some space or write elsewhere.",
        errno.EDQUOT: "Free some space or write elsewhere.",
        errno.EACCES: "Choose a directory you can write to.",
        errno.EPERM: "Choose a directory you can write to.",
        errno.EROFS: "Choose a directory you can write to.",
    }.get(exc.errno or 0)
    return OutputError(f"{name}: {doing}: {why}.", hint)


class _Guarded:
    """A file object whose write errors are :class:`OutputError` naming the output."""

    def __init__(self, fh: IO, name: str) -> None:
        self._fh = fh
        self._name = name

    def write(self, data):
        try:
            try:
                return self._fh.write(data)
            except UnicodeEncodeError:  # a lone surrogate (a name from a model or a frame)
                return self._fh.write(encodable(data))
        except OSError as exc:
            raise output_error(self._name, exc) from None

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._fh.flush()
        except OSError as exc:
            raise output_error(self._name, exc) from None

    def __getattr__(self, name: str) -> Any:  # mode, encoding, fileno, ... of the file
        return getattr(self._fh, name)


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Open the output ``path`` for writing (text as UTF-8 with ``newline=""``, or binary
    with ``mode="wb"``); ``"-"`` is standard output.

    A regular file (or a new one) is written to a temporary file beside it, renamed over it
    when the block ends without an exception and removed otherwise; a symbolic link is
    followed, so the file it points to is replaced and the link kept. Standard output under
    any name, character devices and pipes are written directly; a directory or a block
    device is refused. Errors are :class:`~treecert.errors.OutputError`.
    """
    binary = "b" in mode
    name = str(path)
    if name in _STDOUT_NAMES:
        yield from _to_stdout(binary)
        return
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:  # a file used as a directory in the path, a symlink loop, ...
        raise output_error(name, exc) from None
    if st is not None and _is_stdout(st):
        yield from _to_stdout(binary)
        return
    if st is not None and not stat.S_ISREG(st.st_mode):
        yield from _direct(name, st, binary)
        return
    yield from _atomic(name, st, binary)


def _is_stdout(st: os.stat_result) -> bool:
    """Whether ``st`` is this process's standard output (``/dev/stdout``, ``/proc/self/fd/1``
    or the file it is redirected to)."""
    if sys.stdout is None:
        return False
    try:
        return os.path.samestat(st, os.fstat(sys.stdout.fileno()))
    except (OSError, AttributeError, ValueError):  # a stream without a file descriptor
        return False


def _to_stdout(binary: bool) -> Iterator[IO]:
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        raise OutputError(f"cannot write to {STDOUT}: it is closed.",
                          "Redirect it to a file, or give -o FILE.")
    if binary:
        stream = stream.buffer
    out = _Guarded(stream, STDOUT)
    yield out
    out.flush()


def _direct(name: str, st: os.stat_result, binary: bool) -> Iterator[IO]:
    """Write to a character device or a pipe as it is: nothing to rename, nothing to undo."""
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{name}: is a directory.", "Give a file name to write to.")
    if stat.S_ISBLK(st.st_mode):
        raise OutputError(f"{name}: is a block device; refusing to write over it.",
                          "Give a file name to write to.")
    try:
        fd = os.open(name, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise output_error(name, exc, "cannot open for writing") from None
    try:
        fh = os.fdopen(fd, "wb" if binary else "w",
                       **({} if binary else {"encoding": "utf-8", "newline": ""}))
    except BaseException:
        os.close(fd)
        raise
    out = _Guarded(fh, name)
    try:
        yield out
        out.flush()
    finally:
        with contextlib.suppress(OSError):  # a flush error was reported above
            fh.close()


def _atomic(name: str, st: os.stat_result | None, binary: bool) -> Iterator[IO]:
    """Write a regular file through a temporary file renamed over it at the end."""
    target = Path(os.path.realpath(name))  # through symlinks: replace the file, keep links
    directory = target.parent
    if not directory.is_dir():
        given = Path(name).parent if str(Path(name).parent) else Path(".")
        raise ConfigError(f"{name}: directory {given} does not exist.")
    fd, tmp = _create_temporary(name, target)
    try:
        # mkstemp makes the file 0600; give it what the shell's '>' would (where the file
        # system has permissions at all).
        with contextlib.suppress(OSError, AttributeError):
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o777 if st is not None
                      else 0o666 & ~_umask())
        fh = os.fdopen(fd, "wb" if binary else "w",
                       **({} if binary else {"encoding": "utf-8", "newline": ""}))
    except BaseException:
        os.close(fd)
        _remove(tmp)
        raise
    out = _Guarded(fh, name)
    try:
        yield out
        out.flush()
        try:
            os.fsync(fh.fileno())
            fh.close()
        except OSError as exc:
            raise output_error(name, exc) from None
        if _STAGED is not None:  # renamed with the command's other outputs at the end
            _STAGED.append((tmp, target, name))
            return
        _move_into_place(tmp, target, name)
    except BaseException:
        with contextlib.suppress(OSError):  # a failed flush would fail again
            fh.close()
        _remove(tmp)
        raise


def _move_into_place(tmp: str, target: Path, name: str) -> None:
    try:
        os.replace(tmp, target)
    except OSError as exc:
        raise output_error(name, exc, "cannot move the finished file into place") from None
    _TEMPORARIES.discard(tmp)


#: While :func:`staged_outputs` runs: the finished temporary files and their targets.
_STAGED: list[tuple[str, Path, str]] | None = None


@contextlib.contextmanager
def staged_outputs() -> Iterator[None]:
    """Make a command's set of output files appear only if the whole command succeeds.

    Inside the block, every file :func:`atomic_writer` finishes stays a temporary file
    beside its target; when the block ends without an exception they are all renamed into
    place (in the order they were written), and when it raises (an error, a signal) they
    are all removed, so a command that fails after writing its first output leaves none.
    Standard output, devices and pipes are written as they come (there is nothing to take
    back). Nested blocks join the outermost one.
    """
    global _STAGED
    if _STAGED is not None:
        yield
        return
    _STAGED = staged = []
    try:
        yield
    except BaseException:
        _STAGED = None
        for tmp, _, _ in staged:
            _remove(tmp)
        raise
    _STAGED = None
    try:
        for k, (tmp, target, name) in enumerate(staged):
            _move_into_place(tmp, target, name)
            staged[k] = ("", target, name)
    finally:  # a rename that failed: the rest are not put in place
        for tmp, _, _ in staged:
            if tmp:
                _remove(tmp)


def _create_temporary(name: str, target: Path) -> tuple[int, str]:
    """Create ``target``'s temporary file, listed in :data:`_TEMPORARIES` *before* it exists.

    A stopping signal's handler may run between any two bytecodes; had the file been
    created first (as ``tempfile.mkstemp`` does) and listed after, a signal in between
    would leave it behind. Listed first, a signal at any point finds it on the list (or
    finds nothing to remove). The process id in the name keeps a colliding name, whose
    file is another program's and must not be removed, out of reach in practice."""
    directory = target.parent
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) \
        | getattr(os, "O_BINARY", 0)
    for _ in range(tempfile.TMP_MAX):
        tmp = str(directory / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        _TEMPORARIES.add(tmp)
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            _TEMPORARIES.discard(tmp)  # another's file: never ours to remove
        except OSError as exc:
            _TEMPORARIES.discard(tmp)
            raise output_error(name, exc, f"cannot create a file in {directory}") from None
    raise OutputError(f"{name}: cannot create a temporary file in {directory}: every name "
                      "tried exists.", "Remove the .*.tmp files left there.")


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    _TEMPORARIES.discard(tmp)


def remove_temporaries() -> None:
    """Remove every temporary output file still open (after an interrupt)."""
    for tmp in list(_TEMPORARIES):
        _remove(tmp)


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` atomically to ``path`` (or stdout for ``-``)."""
    with atomic_writer(path) as fh:
        fh.write(text)


def make_directory(path: str | Path) -> Path:
    """Create the output directory ``path`` (and its parents) unless it exists."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"{path}: exists and is not a directory.",
                          "Give a directory for -o, or remove the file.") from None
    except OSError as exc:
        raise output_error(path, exc, "cannot create the directory") from None
    return p


@contextlib.contextmanager
def directory_lock(directory: str | Path, *, shared: bool = False,
                   hint: str | None = None) -> Iterator[None]:
    """Hold a lock on ``directory`` (created if needed) while the block runs.

    An exclusive lock (a whole run) is refused while any other lock is held; shared locks
    (the shards of one run, which may share a directory) only exclude exclusive ones. The
    refusal is an :class:`~treecert.errors.OutputError` (one line, exit 2); ``hint``
    replaces its default advice. The lock is ``flock`` on the file
    ``directory/.treecert.lock``, released when the process ends however it ends. The last
    holder removes the file when the block ends (an error or a stopping signal included):
    it takes the lock exclusively first, so no other run holds it, and a run that opened
    the file just before it was removed sees on locking that its file is no longer the one
    at that path and opens the new one. Where the file system cannot lock, the block runs
    unlocked.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: no locking
        yield
        return
    make_directory(directory)
    lock = Path(directory) / LOCK_NAME
    fd, held = _take_lock(fcntl, directory, lock, shared, hint)
    try:
        yield
    finally:
        try:
            if held and shared:  # the last shard out removes the file
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    held = False  # another shard still runs: the file is its
            if held:
                with contextlib.suppress(OSError):
                    os.unlink(lock)
        finally:
            os.close(fd)


def _take_lock(fcntl, directory, lock: Path, shared: bool, hint: str | None) -> tuple[int, bool]:
    """(descriptor, locked) of ``lock`` taken for :func:`directory_lock`."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise output_error(lock, exc, "cannot create the lock file") from None
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputError(f"{directory}: in use by another treecert run.",
                              hint or "Wait until it has finished, or choose another "
                                      "directory.") from None
        except OSError:  # e.g. ENOLCK on a file system without locks: go on unlocked
            return fd, False
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.path.samestat(os.stat(lock), os.fstat(fd))
        except OSError:
            same = False
        if same:
            return fd, True
        os.close(fd)  # removed by a run that ended meanwhile: lock the file now there


def nan_to_none(obj):
    """``obj`` ready for strict JSON: NaN and ±inf become None and numpy scalars Python ones,
    recursively through dicts and lists (pruning records in model files, comparisons)."""
    import numpy as np

    if isinstance(obj, dict):
        return {k: nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [nan_to_none(v) for v in obj]
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, np.generic):
        return nan_to_none(obj.item())
    return obj
