"""Small file helpers shared by the manifest stage: atomic writes and SHA-256 of files.

Every file this stage writes goes through :func:`write_atomic`: the bytes land in a
temporary file in the destination folder and are renamed over the target, so a reader (or a
crash) sees the old file or the whole new one, never half of each.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "a" / "b.txt"
>>> write_atomic(p, b"hello\\n")
>>> p.read_bytes(), sha256_file(p)[:16]
(b'hello\\n', '5891b5b522d5df08')
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

CHUNK = 1 << 20


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644, exclusive: bool = False) -> None:
    """Write ``data`` to ``path`` via a temporary sibling and a rename.

    ``mode`` is applied to the temporary file before any byte is written, so a private key
    is never readable by others, not even for a moment. With ``exclusive`` an existing
    ``path`` is an error (FileExistsError) instead of being replaced; the check and the
    link are one step (``os.link``), so a concurrent writer cannot slip in between.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if exclusive:
            os.link(tmp, path)
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks (certificate shards can be large)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def is_inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` resolves to ``folder`` or somewhere below it.

    >>> is_inside(Path("/a/b/../c"), Path("/a")), is_inside(Path("/a/../x"), Path("/a"))
    (True, False)
    """
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
    except ValueError:
        return False
    return True


def git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds ``.git`` (None outside a repo)."""
    here = Path(os.path.realpath(start))
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def scrub_paths(text: str, labels: dict[str, str] | None = None) -> str:
    """``text`` with host paths replaced: each of ``labels`` (path -> label), then the home
    folder by ``~``, so a manifest never records where, or as whom, a run happened.

    >>> scrub_paths("lake not in " + str(Path.home()) + "/.elan/bin")
    'lake not in ~/.elan/bin'
    >>> scrub_paths("wrote /tmp/w/x", {"/tmp/w": "WORK"})
    'wrote WORK/x'
    """
    pairs = sorted((labels or {}).items(), key=lambda kv: -len(kv[0]))
    for path, label in pairs:
        if path:
            text = text.replace(path, label)
    home = str(Path.home())
    if len(home) > 1:
        text = text.replace(home, "~")
    return text
