"""Small file helpers shared by the manifest stage: atomic writes and SHA-256 of files.

Every file this stage writes goes through :func:`harness.atomic.write_atomic` (re-exported
here): a reader, or a crash, sees the old file or the whole new one, never half of each.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "a" / "b.txt"
>>> write_atomic(p, b"hello\\n")
>>> p.read_bytes(), sha256_file(p)[:16]
(b'hello\\n', '5891b5b522d5df08')
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from harness.atomic import write_atomic
from harness.bounded import open_regular

__all__ = ["write_atomic", "sha256_bytes", "sha256_file", "is_inside", "git_root", "scrub_paths"]

CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a regular file, read in chunks (certificate shards can be large); a
    link is not followed and a FIFO not waited on (:func:`harness.bounded.open_regular`)."""
    h = hashlib.sha256()
    with open_regular(path) as fh:
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

    A path is replaced only as a whole (a folder ``/tmp/ci`` leaves ``/tmp/cihome`` alone):

    >>> scrub_paths("/tmp/ci/a and /tmp/cihome/b", {"/tmp/ci": "."})
    './a and /tmp/cihome/b'
    """
    pairs = sorted((labels or {}).items(), key=lambda kv: -len(kv[0]))
    home = str(Path.home())
    if len(home) > 1:
        pairs.append((home, "~"))
    for path, label in pairs:
        if path:
            # Not followed by another character of a file name: the path ends there.
            text = re.sub(re.escape(path) + r"(?![\w.-])", lambda _m, label=label: label, text)
    return text
