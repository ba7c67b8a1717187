"""Per-class columns of the compact solver, in memory or as preallocated memory-mapped files
in the work folder (:class:`Column`, widened from ``uint8`` when a value outgrows it), and
2-bit values packed four to a byte (:func:`get2`, :func:`set2`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from harness.solver.compact.constants import BYTE_TOP, SCAN, WIDER, CompactError
from harness.solver.memory import own_mappings


class Column:
    """A growable array of one dtype: in memory, or a preallocated file mapped with memmap.

    >>> c = Column("x", np.uint8, None)
    >>> c.grow(10); c.array[:3] = 7; c.array[:4].tolist()
    [7, 7, 7, 0]
    """

    def __init__(self, name: str, dtype, folder: Path | None, capacity: int = 0):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.folder = folder
        self.capacity = 0
        self.array = np.zeros(0, dtype=self.dtype)
        if capacity:
            self.grow(capacity)

    @property
    def path(self) -> Path | None:
        return None if self.folder is None else self.folder / f"{self.name}.bin"

    def grow(self, capacity: int) -> None:
        if capacity <= self.capacity:
            return
        if self.folder is None:
            # In place (realloc, which moves big blocks by remapping pages): growing never
            # holds the old and the new array at once. The new part is zero.
            with own_mappings():
                if self.capacity == 0:
                    self.array = np.zeros(capacity, dtype=self.dtype)
                else:
                    self.array.resize(capacity, refcheck=False)
        else:
            self.array = map_column(self.path, self.dtype, capacity, self.capacity)
        self.capacity = capacity

    def shrink(self, capacity: int) -> None:
        """In memory, give back the room grown beyond ``capacity`` items (no view of the
        array may be held: it is resized in place)."""
        capacity = max(capacity, 1)
        if self.folder is None and capacity < self.capacity:
            with own_mappings():
                self.array.resize(capacity, refcheck=False)
            self.capacity = capacity

    def widen(self) -> None:
        """Hold the next wider unsigned type (``uint8`` to ``uint16`` to ``uint32``), every
        item kept. In a folder the file is rewritten under another name and renamed over
        the old one; a resume never reads it (it restores the column from the copy its
        marker names, with that copy's type)."""
        wider = WIDER.get(self.dtype.name)
        if wider is None:
            raise CompactError(f"column {self.name}: a value does not fit {self.dtype.name}")
        dtype = np.dtype(wider)
        if self.folder is None:
            with own_mappings():  # so that it still grows in place
                self.array = self.array.astype(dtype)
        else:
            tmp = self.folder / f"{self.name}.wide.bin"
            tmp.unlink(missing_ok=True)
            new = map_column(tmp, dtype, self.capacity, 0)
            for lo in range(0, self.capacity, SCAN):
                new[lo : lo + SCAN] = self.array[lo : lo + SCAN]
            new.flush()
            os.replace(tmp, self.path)
            self.array = new
        self.dtype = dtype

    def flush(self) -> None:
        if isinstance(self.array, np.memmap):
            self.array.flush()


def column_top(col: Column) -> int:
    """The largest value the column holds before it is widened."""
    return BYTE_TOP if col.dtype == np.uint8 else int(np.iinfo(col.dtype).max)


def map_column(path: Path, dtype: np.dtype, capacity: int, old: int) -> np.memmap:
    """Map ``path`` with room for ``capacity`` items, its blocks allocated now (so a full
    disk fails here with ENOSPC, not later with SIGBUS on a page write)."""
    size = max(1, capacity * dtype.itemsize)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            have = os.fstat(fd).st_size
            if have < size:
                os.posix_fallocate(fd, have, size - have)
        finally:
            os.close(fd)
    except OSError as exc:
        raise CompactError(
            f"work folder {str(path.parent)!r}: cannot allocate {size / 2**20:.0f} MiB for "
            f"{path.name} ({exc.strerror or exc})"
        ) from None
    return np.memmap(path, dtype=dtype, mode="r+", shape=(capacity,))


def load_column(folder: Path, name: str, dtype, count: int) -> Column:
    col = Column(name, dtype, folder)
    path = col.path
    if not path.exists() or path.stat().st_size < count * col.dtype.itemsize:
        raise CompactError(f"work folder {str(folder)!r}: {path.name} is missing or short")
    col.array = np.memmap(path, dtype=col.dtype, mode="r+", shape=(max(count, 1),))
    col.capacity = max(count, 1)
    return col


def get2(packed: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """2-bit values at ``idx`` (four per byte, the lowest bits first).

    >>> p = np.zeros(2, dtype=np.uint8); set2(p, np.array([1, 5]), np.array([3, 2]))
    >>> get2(p, np.arange(8)).tolist()
    [0, 3, 0, 0, 0, 2, 0, 0]
    """
    idx = np.asarray(idx, dtype=np.int64)
    return (packed[idx >> 2] >> ((idx & 3) << 1).astype(np.uint8)) & np.uint8(3)


def get2_range(packed: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The 2-bit values of rows ``lo`` to ``hi``: what ``get2(packed, np.arange(lo, hi))``
    gives, with a byte a row of temporaries instead of an 8-byte index and its shifts.

    >>> p = np.zeros(3, dtype=np.uint8); set2(p, np.array([1, 5, 9]), np.array([3, 2, 1]))
    >>> get2_range(p, 1, 10).tolist()
    [3, 0, 0, 0, 2, 0, 0, 0, 1]
    """
    first = lo >> 2
    b = packed[first : (hi + 3) >> 2]
    out = np.empty((len(b), 4), dtype=np.uint8)
    for r in range(4):
        np.bitwise_and(b >> np.uint8(2 * r), np.uint8(3), out=out[:, r])
    return out.reshape(-1)[lo - 4 * first : hi - 4 * first]


def set2(packed: np.ndarray, idx: np.ndarray, values) -> None:
    """Set the 2-bit values at distinct indices ``idx`` (a scalar or one value each)."""
    idx = np.asarray(idx, dtype=np.int64)
    values = np.broadcast_to(np.asarray(values, dtype=np.uint8), idx.shape)
    for r in range(4):
        sel = (idx & 3) == r
        if not sel.any():
            continue
        byte = idx[sel] >> 2  # distinct, since the indices are
        shift = np.uint8(2 * r)
        packed[byte] = (packed[byte] & ~np.uint8(3 << (2 * r))) | (values[sel] << shift)
