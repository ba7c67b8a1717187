"""The sorted key store: every class's key in one sorted array that new keys are merged into
(:class:`KeyStore`), a filter of the classes still open (:class:`KeyFilter`), and the
grouping of successor keys with the colourings they were reached with."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.solver.classindex import DIRECTORY_STRIDE, find_sorted
from harness.solver.compact.columns import Column, get2_range
from harness.solver.compact.constants import DIRECTORY_MIN, FILTER_BITS, MERGE_CHUNK, SCAN


class KeyStore:
    """Sorted distinct class keys with per-class columns that move along when keys are
    merged in. ``find`` is a vectorized binary search, by way of a directory of every
    :data:`DIRECTORY_STRIDE`-th key once the store holds :data:`DIRECTORY_MIN` keys."""

    def __init__(self, folder: Path | None, extra: dict[str, np.dtype]):
        self.folder = folder
        self.count = 0
        self.keys = Column("keys", np.uint64, folder)
        self.columns = {name: Column(name, dt, folder) for name, dt in extra.items()}
        self._directory: np.ndarray | None = None  # made on demand, dropped by a merge

    def all_columns(self):
        return [self.keys, *self.columns.values()]

    @property
    def nbytes(self) -> int:
        return sum(c.capacity * c.dtype.itemsize for c in self.all_columns())

    def sorted_keys(self) -> np.ndarray:
        return self.keys.array[: self.count]

    def col(self, name: str) -> np.ndarray:
        return self.columns[name].array

    def find(self, q: np.ndarray) -> np.ndarray:
        """Indices of keys ``q`` (-1 where absent)."""
        if self.count >= DIRECTORY_MIN and self._directory is None:
            self._directory = self.sorted_keys()[::DIRECTORY_STRIDE].copy()
        return find_sorted(self.sorted_keys(), q, self._directory)

    def merge(self, new: np.ndarray, values: dict[str, np.ndarray]) -> None:
        """Insert sorted distinct keys not yet present, with their column values."""
        k = len(new)
        if k == 0:
            return
        self._directory = None
        n = self.count
        need = n + k
        if need > self.keys.capacity:
            cap = max(need, int(self.keys.capacity * 1.125) + 1024)
            for c in self.all_columns():
                c.grow(cap)
        # Where each new key goes in the merged array: its rank among the old keys plus its
        # own index. Kept as uint32 where it fits (4 bytes a new key, not 8 + 8).
        dtype = np.uint32 if need < 1 << 32 else np.int64
        slots = np.empty(k, dtype=dtype)
        old = self.keys.array[:n]
        for lo in range(0, k, MERGE_CHUNK):
            sl = slice(lo, lo + MERGE_CHUNK)
            slots[sl] = np.searchsorted(old, new[sl]) + np.arange(lo, min(k, lo + MERGE_CHUNK))
        del old
        # Old entries move up by the number of new keys before them; from the top down, so
        # that a chunk is never overwritten before it has moved (destinations >= sources).
        for hi in range(n, 0, -MERGE_CHUNK):
            lo = max(0, hi - MERGE_CHUNK)
            dst = np.arange(lo, hi) + np.searchsorted(new, self.keys.array[lo:hi])
            for c in self.all_columns():
                c.array[dst] = c.array[lo:hi].copy()
        for lo in range(0, k, MERGE_CHUNK):
            sl = slice(lo, lo + MERGE_CHUNK)
            at = slots[sl].astype(np.int64)
            self.keys.array[at] = new[sl]
            for name, c in self.columns.items():
                v = values.get(name, 0)
                c.array[at] = v if np.ndim(v) == 0 else v[sl]
        self.count = need

    def shrink(self) -> None:
        """Give back the room kept for growth (up to an eighth) once no key will be added."""
        for c in self.all_columns():
            c.shrink(self.count)

    def flush(self) -> None:
        for c in self.all_columns():
            c.flush()


class KeyFilter:
    """Which class keys may be in a set of classes: one bit per hashed key of the set (a
    table of at least :data:`FILTER_BITS` bits a class, a power of two), so a key whose bit
    is clear is not in it. At most about one key in :data:`FILTER_BITS` outside the set
    shares a bit with one in it: the filter only ever says "look it up" too often.

    The retrograde pass asks it what a binary search of the store would tell:

    * un-playing, whether a parent may still be open (:meth:`of_store` with ``OPEN`` and
      ``AVOID``). Most parents found are decided already (on 5x5 c4 torus 82% of them; 76%
      of its classes win at once) and done with: neither played forward nor looked up.
    * sweeping, whether a successor may be other than won for its mover (``OPEN``,
      ``AVOID`` and ``V_LOSS``): one that is not was won before the sweep, which is all the
      sweep needs to know of it.

    A class that leaves the set after the filter is made keeps its bit.

    >>> f = KeyFilter(np.array([3, 10], dtype=np.uint64))
    >>> f.may_hold(np.array([3, 10], dtype=np.uint64)).tolist()
    [True, True]
    """

    MULT = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits of key * MULT

    def __init__(self, keys: np.ndarray | None = None, count: int | None = None):
        count = len(keys) if count is None else count
        self.bits = max(16, int(count * FILTER_BITS - 1).bit_length())
        self.shift = np.uint64(64 - self.bits)
        self.table = np.zeros(1 << (self.bits - 3), dtype=np.uint8)
        if keys is not None:
            self.add(keys)

    def add(self, keys: np.ndarray) -> None:
        """Set the bits of ``keys`` (a few at a time: the temporaries are theirs)."""
        if not len(keys):
            return
        h = self._hash(keys)
        h.sort()
        byte = h >> np.uint64(3)
        starts = np.flatnonzero(np.concatenate([[True], byte[1:] != byte[:-1]]))
        bit = np.left_shift(1, (h & np.uint64(7)).astype(np.uint8)).astype(np.uint8)
        at = byte[starts].astype(np.int64)  # distinct, so the update below loses no bit
        self.table[at] |= np.bitwise_or.reduceat(bit, starts)

    def _hash(self, keys: np.ndarray) -> np.ndarray:
        return (keys * self.MULT) >> self.shift

    def may_hold(self, keys: np.ndarray) -> np.ndarray:
        h = self._hash(keys)
        byte = self.table.take((h >> np.uint64(3)).astype(np.int64), mode="clip")
        return ((byte >> (h & np.uint64(7)).astype(np.uint8)) & 1).astype(bool)

    @classmethod
    def of_store(cls, store: KeyStore, values: np.ndarray, kinds, count: int) -> KeyFilter:
        """The filter of the store's ``count`` classes whose 2-bit values are now among
        ``kinds`` (the caller has counted them), made a :data:`SCAN` of rows at a time."""
        keys, n = store.sorted_keys(), store.count
        codes = np.array(kinds, dtype=np.uint8)
        f = cls(count=count)
        for lo in range(0, n, SCAN):
            v = get2_range(values, lo, min(n, lo + SCAN))
            f.add(keys[lo + np.flatnonzero(np.isin(v, codes))])
        return f


def count_values(values: np.ndarray, n: int, kinds) -> int:
    """Classes whose 2-bit values are among ``kinds``."""
    codes = np.array(kinds, dtype=np.uint8)
    return sum(
        int(np.count_nonzero(np.isin(get2_range(values, lo, min(n, lo + SCAN)), codes)))
        for lo in range(0, n, SCAN)
    )


def group_keys(keys: np.ndarray, bits: np.ndarray | None = None):
    """Distinct keys, each with the OR of its bits (None without ``bits``), and each key's
    index among them: by one argsort, for a batch's successors (:func:`merge_groups` sorts in
    place, leaner on big arrays).

    >>> group_keys(np.array([7, 2, 7], dtype=np.uint64), np.array([1, 1, 2], dtype=np.uint8))
    (array([2, 7], dtype=uint64), array([1, 3], dtype=uint8), array([1, 0, 1]))
    """
    order = np.argsort(keys)
    k = keys[order]
    first = np.ones(len(k), dtype=bool)
    if k.dtype.names:  # two-word keys (the partitioned solver's): no ufunc compares them
        first[1:] = k[1:] != k[:-1]
    else:
        np.not_equal(k[1:], k[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    inv = np.empty(len(k), dtype=np.int64)
    inv[order] = np.cumsum(first) - 1
    if bits is None:
        return k[starts], None, inv
    if not len(k):
        return k, bits[:0].astype(np.uint8), inv
    return k[starts], np.bitwise_or.reduceat(bits[order], starts).astype(np.uint8), inv


def merge_groups(key_parts: list, bit_parts: list):
    """Distinct keys, each with the OR of its (two) bits, of the parts in two lists, which
    are emptied as they are read: a part is freed once copied, so the pending keys (the
    enumeration's peak) are held about once, not as parts, a whole and a sorted copy.

    >>> merge_groups([np.array([7, 2], dtype=np.uint64), np.array([7], dtype=np.uint64)],
    ...         [np.array([1, 1], dtype=np.uint8), np.array([2], dtype=np.uint8)])
    (array([2, 7], dtype=uint64), array([1, 3], dtype=uint8))
    """
    n = sum(len(p) for p in key_parts)
    keys = np.empty(n, dtype=key_parts[0].dtype if key_parts else np.uint64)
    bits = np.empty(n, dtype=np.uint8)
    at = 0
    key_parts.reverse()
    bit_parts.reverse()
    while key_parts:
        k, b = key_parts.pop(), bit_parts.pop()
        keys[at : at + len(k)] = k
        bits[at : at + len(k)] = b
        at += len(k)
        del k, b
    if n == 0 or keys.dtype.names or int(keys.max()) >= 1 << 62:
        # (two-word keys, the partitioned solver's, are sorted field by field)
        uk, ub, _ = group_keys(keys, bits)
        return uk, ub
    # One sort of the keys with their two bits below them. The parts come sorted (a batch's
    # or a sender's distinct keys): a stable sort (timsort for 64-bit integers) merges their
    # runs, 3 to 8 times as fast as a quicksort over 4 to 64 runs. It borrows a buffer of up
    # to half the keys (4 bytes a key); the keys held pending are at most a sixteenth of the
    # classes, so a quarter of a byte a class at the peak.
    keys <<= np.uint64(2)
    keys |= bits
    del bits
    keys.sort(kind="stable")
    low = keys.astype(np.uint8)  # the low byte
    low &= np.uint8(3)
    keys >>= np.uint64(2)
    first = np.ones(n, dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    del first
    return keys[starts], np.bitwise_or.reduceat(low, starts)
