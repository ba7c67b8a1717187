"""One writer at a time per output: a lock file with the holder's pid, taken with ``flock``.

``verify`` holds the lock of its ruleset for the whole run, and every folder written through
:func:`harness.atomic.staging_dir` holds the lock of that folder while it is swapped in, so a
second run stops at once with a one-line error naming the first run's pid instead of
deleting its files under it.

The kernel drops an ``flock`` when its process dies, however it dies, so the lock of a
killed run is free: the next run takes it over (and says whose it was). The lock file is
removed when released; a run that took a lock checks it still holds the file at that path,
so a lock removed and re-made meanwhile is never shared.

>>> import tempfile, pathlib
>>> where = pathlib.Path(tempfile.mkdtemp()) / ".out.lock"
>>> with hold(where, "out"):
...     where.read_text().split()[0] == str(os.getpid())
True
>>> where.exists()
False
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.bounded import UnsafeFileError, read_regular


class LockedError(OSError):
    """Another live process holds the lock (exit 2, like any unusable environment)."""

    def __init__(self, what: str, pid: int | None, path: Path) -> None:
        holder = f"pid {pid}" if pid is not None else "a process whose pid is not recorded"
        super().__init__(
            errno.EWOULDBLOCK,
            f"{what} is being written by another run ({holder}; lock {path}); "
            "wait for it to finish or stop it",
            str(path),
        )
        self.pid = pid

    def __str__(self) -> str:
        return str(self.strerror)


def holder_pid(path: Path) -> int | None:
    """The pid recorded in a lock file (None if there is none, or it cannot be read as a
    small regular file: a link or a FIFO standing there is neither followed nor waited on)."""
    try:
        text = read_regular(path, 64, "lock file").decode("ascii", "replace").split()
    except (OSError, ValueError):
        return None
    return int(text[0]) if text and text[0].isascii() and text[0].isdigit() else None


def _open_lock(path: Path) -> int:
    """A descriptor of the lock file at ``path``, created if missing: never through a
    symbolic link (``O_NOFOLLOW``), never blocking on a FIFO, and only a regular file
    (:class:`harness.bounded.UnsafeFileError` otherwise, naming the path)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFileError(
                errno.ELOOP, "the lock file is a symbolic link; not followed (remove it)", str(path)
            ) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeFileError(
            errno.EINVAL, "the lock file is not a regular file; not used (remove it)", str(path)
        )
    return fd


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (``kill(pid, 0)``; one we may not signal counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_in(fd: int) -> int | None:
    """The pid recorded in the lock file open as ``fd`` (None if there is none)."""
    text = os.pread(fd, 64, 0).decode("ascii", "replace").split()
    return int(text[0]) if text and text[0].isdigit() else None


@contextmanager
def hold(path: str | os.PathLike[str], what: str) -> Iterator[int | None]:
    """Hold the lock file ``path`` for the block; yields the pid of a dead run whose lock was
    taken over (None if there was none). Raises :class:`LockedError` at once if a live
    process holds it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = _open_lock(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockedError(what, holder_pid(path), path) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.path.samestat(os.fstat(fd), os.lstat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder removed the file as we opened it: take the new one
    try:
        previous = _pid_in(fd)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        except OSError:
            pass  # a full disk: the flock holds all the same, only the pid goes unrecorded
        yield previous if previous is not None and previous != os.getpid() else None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)  # closing drops the flock
