"""Writing files and folders so that nothing is ever half-written.

Every stage writes through these helpers: a file lands in a temporary sibling and is renamed
over its target; a folder is built next to its target and swapped in whole. A reader, or a
crash, sees the old result or the complete new one, and a failed run never replaces a good
result.

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

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


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
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def replace_dir(new: Path, out: Path) -> None:
    """Swap the finished folder ``new`` in as ``out`` (a sibling), removing any old ``out``."""
    if not out.exists():
        os.replace(new, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
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
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        yield tmp
        replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
