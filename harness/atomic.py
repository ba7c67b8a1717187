"""Writing files and folders so that nothing is ever half-written.

Every stage writes through these helpers: a file lands in a temporary sibling and is renamed
over its target; a folder is built next to its target and swapped in whole. A reader, or a
crash, sees the old result or the complete new one, and a failed run never replaces a good
result: a full disk (ENOSPC), a read-only file system (EROFS) or any other error while
writing removes the temporary and leaves the old result as it was.

Temporaries are named ``.NAME.PID.XXXXXXXX.tmp`` (``.old`` for a folder being replaced), so
the next write of ``NAME`` removes those a killed run left behind (their PID no longer
runs). A folder is swapped in under the lock ``.NAME.lock`` (:mod:`harness.lock`), and a
target that exists but is not a folder is refused, never replaced.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> write_atomic(root / "a" / "b.txt", b"hello\\n")
>>> (root / "a" / "b.txt").read_bytes()
b'hello\\n'
>>> with staging_dir(root / "site") as tmp:
...     _ = (tmp / "index.html").write_text("<p>hi</p>")
>>> sorted(p.name for p in (root / "site").iterdir())
['index.html']
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from harness.lock import alive, hold


def make_folder(folder: Path) -> list[Path]:
    """``mkdir -p`` whose error names the file standing where a folder must be; returns the
    folders it made, outermost first, for :func:`remove_made` to take back after a failure.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> made = make_folder(root / "a" / "b")
    >>> [p.name for p in made]
    ['a', 'b']
    >>> remove_made(made); (root / "a").exists()
    False
    """
    folder = Path(folder)
    missing = [p for p in (folder, *folder.parents) if not os.path.lexists(p)]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next(
            (p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), folder
        )
        raise NotADirectoryError(
            errno.ENOTDIR, "exists and is not a folder", str(blocker)
        ) from None
    return missing[::-1]


def remove_made(made: list[Path]) -> None:
    """Remove the folders :func:`make_folder` made (innermost first) while they are empty, so
    a run that failed leaves no empty folder behind; one that holds anything stays."""
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:
            return


def name_error(exc: BaseException, path: Path, staged: Path | None = None) -> BaseException:
    """``exc`` with ``path`` as its file name when it has none (ENOSPC from a write()), or
    when it names a file inside ``staged``, the temporary folder that was to become ``path``:
    the user is told about the target they asked for.

    >>> print(name_error(OSError(28, "No space left on device"), Path("out/site")))
    [Errno 28] No space left on device: 'out/site'
    """
    names = [n for n in (getattr(exc, "filename", None), getattr(exc, "filename2", None)) if n]
    temporary = staged is not None and any(
        Path(os.fsdecode(n)).is_relative_to(staged) for n in names
    )
    if isinstance(exc, OSError) and exc.errno is not None and (not names or temporary):
        named = OSError(exc.errno, exc.strerror, str(path))
        named.__cause__ = exc
        return named
    return exc


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


def clean_leftovers(path: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporaries of ``path`` that runs which no longer exist left behind (a
    SIGKILL, a power cut); returns what was removed. Those of live runs are kept."""
    path = Path(path)
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.[a-z0-9_]{{8}}\.(?:tmp|old)")
    start = f".{path.name}."
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(start):
            continue
        m = pattern.fullmatch(entry.name)
        if m is None or alive(int(m.group(1))):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


@contextmanager
def atomic_file(path: str | os.PathLike[str], *, mode: int | None = None) -> Iterator[BinaryIO]:
    """A binary file handle whose contents replace ``path`` only when the block succeeds.

    ``mode`` is set before any byte is written (a private key is never readable by others,
    not even for a moment); by default the file gets the usual permissions for the umask.
    """
    path = Path(path)
    made = make_folder(path.parent)
    clean_leftovers(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        remove_made(made)
        named = name_error(exc, path)
        if named is exc:
            raise
        raise named from exc


def write_atomic(
    path: str | os.PathLike[str], data: bytes, *, mode: int | None = None, exclusive: bool = False
) -> None:
    """Write ``data`` to ``path`` via a temporary sibling and a rename.

    With ``exclusive`` an existing ``path`` is an error (FileExistsError) instead of being
    replaced; the check and the link are one step (``os.link``), so no concurrent writer can
    slip in between.
    """
    path = Path(path)
    if not exclusive:
        with atomic_file(path, mode=mode) as fh:
            fh.write(data)
        return
    made = make_folder(path.parent)
    clean_leftovers(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        remove_made(made)
        named = name_error(exc, path)
        if named is exc:
            raise
        raise named from exc
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_atomic_many(files: Mapping[Path, bytes]) -> None:
    """Write several files so that each is the old one or the new one: every temporary is
    written (and synced) first, then they are renamed into place, so a full disk or any
    other write error leaves every old file as it was.
    """
    temps: list[tuple[str, Path]] = []
    made: list[Path] = []
    path = Path()
    try:
        for path, data in files.items():
            path = Path(path)
            made += make_folder(path.parent)
            clean_leftovers(path)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
            temps.append((tmp, path))
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        for tmp, path in temps:
            os.replace(tmp, path)
    except OSError as exc:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
        remove_made(made)
        named = name_error(exc, path)
        if named is exc:
            raise
        raise named from exc
    finally:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)


def probe_writable(folder: str | os.PathLike[str]) -> list[Path]:
    """Fail now (``OSError``: read-only, no permission, not a folder) rather than after an
    hour of work, if a file cannot be made in ``folder`` (created if missing); returns the
    folders it made (:func:`make_folder`)."""
    folder = Path(folder)
    made = make_folder(folder)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".probe.{os.getpid()}.", suffix=".tmp")
    except OSError:
        remove_made(made)
        raise
    os.close(fd)
    os.unlink(tmp)
    return made


def refuse_non_folder(out: Path) -> None:
    """A target folder that exists as something else (a file, a link) is never replaced."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise NotADirectoryError(
            errno.ENOTDIR, "exists and is not a folder; not replaced", str(out)
        )


def replace_dir(new: Path, out: Path) -> None:
    """Swap the finished folder ``new`` in as ``out`` (a sibling), removing any old ``out``."""
    refuse_non_folder(out)
    if not out.exists():
        os.replace(new, out)
        return
    old = Path(tempfile.mkdtemp(prefix=_temp_prefix(out), suffix=".old", dir=out.parent))
    old.rmdir()
    os.replace(out, old)
    try:
        os.replace(new, out)
    except BaseException:
        os.replace(old, out)  # put the good result back
        raise
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def staging_dir(out: str | os.PathLike[str]) -> Iterator[Path]:
    """A fresh folder next to ``out`` that replaces it when the block succeeds and is deleted
    when it fails. It has the usual permissions for the umask (``mkdtemp`` makes it private).
    The lock of ``out`` is held meanwhile: a second writer of ``out`` stops at once
    (:class:`harness.lock.LockedError`).
    """
    out = Path(out)
    refuse_non_folder(out)
    made = make_folder(out.parent)
    try:
        with _swapped_in(out) as tmp:
            yield tmp
    except BaseException:
        remove_made(made)
        raise


@contextmanager
def _swapped_in(out: Path) -> Iterator[Path]:
    with hold(out.parent / f".{out.name}.lock", str(out)):
        clean_leftovers(out)
        tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(out), suffix=".tmp", dir=out.parent))
        try:
            os.chmod(tmp, 0o777 & ~_umask())
            yield tmp
            replace_dir(tmp, out)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            named = name_error(exc, out, staged=tmp)
            if named is exc:
                raise
            raise named from exc
