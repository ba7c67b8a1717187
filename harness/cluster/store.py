"""Files by content hash on a folder every worker sees (``--shared DIR``).

An object is written to a temporary sibling and renamed into place
(:func:`harness.atomic.write_atomic`), so a worker killed while writing leaves at most a
``.tmp`` file nobody reads; and every read checks the blake3 hash against the name, so a
damaged file is never used (it is reported as :class:`StoreError`, and the caller computes
the piece again).

>>> import tempfile
>>> store = SharedStore(tempfile.mkdtemp())
>>> ref = store.put(b"entries")
>>> fetch(ref)
b'entries'
>>> fetch(b"small data passes through the scheduler")
b'small data passes through the scheduler'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import blake3

from harness.atomic import write_atomic
from harness.bounded import TooLongError, read_regular

MAX_OBJECT_BYTES = 4 << 30  # one shared object (a solved table, a certificate shard set)


class StoreError(OSError):
    """An object of the shared folder is missing or does not match its hash."""


@dataclass(frozen=True)
class Blob:
    """A reference to an object in a shared folder: the folder and the blake3 hex digest."""

    root: str
    digest: str
    size: int

    def path(self) -> Path:
        return SharedStore(self.root).path(self.digest)


def digest_of(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


class SharedStore:
    """Objects under ``ROOT/objects/ab/cdef…``, named by their blake3 hash."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, digest: str) -> Path:
        return self.root / "objects" / digest[:2] / digest[2:]

    def put(self, data: bytes) -> Blob:
        """Store ``data`` (once: an existing intact copy is kept) and return its reference."""
        digest = digest_of(data)
        path = self.path(digest)
        if not (path.is_file() and path.stat().st_size == len(data) and self._intact(path, digest)):
            write_atomic(path, data)
        return Blob(str(self.root), digest, len(data))

    def get(self, digest: str) -> bytes:
        path = self.path(digest)
        try:
            data = read_regular(path, MAX_OBJECT_BYTES, "shared object")
        except TooLongError as exc:
            raise StoreError(str(exc)) from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read a shared object: {exc.strerror}") from None
        if digest_of(data) != digest:
            raise StoreError(f"{path}: content does not match its hash; not used")
        return data

    @staticmethod
    def _intact(path: Path, digest: str) -> bool:
        try:
            return digest_of(read_regular(path, MAX_OBJECT_BYTES, "shared object")) == digest
        except (OSError, ValueError):
            return False


def publish(data: bytes, shared: str | None) -> bytes | Blob:
    """A task's result as it travels back: the bytes themselves (through the scheduler) or,
    with a shared folder, a :class:`Blob` naming the file they were written to."""
    return data if shared is None else SharedStore(shared).put(data)


def fetch(item: bytes | Blob) -> bytes:
    """The bytes of a task's input or result, whichever way they travelled."""
    if isinstance(item, Blob):
        return SharedStore(item.root).get(item.digest)
    return item
