"""Numbering class keys: a hash table that gives each new key the next number
(:class:`KeyIndex`), and binary search in a sorted key array (:func:`find_sorted`).
"""

from __future__ import annotations

import numpy as np


class KeyIndex:
    """Keys to dense indices (0, 1, 2, ... as they are inserted), vectorized.

    Open addressing with linear probing; every step of :meth:`add` works on all pending keys
    at once, so a batch of a million keys costs a few dozen numpy operations.

    >>> ix = KeyIndex(words=1)
    >>> ix.add(np.array([7, 3, 7, 9], dtype=np.uint64)).tolist()
    [1, 0, 1, 2]
    >>> ix.add(np.array([9, 4], dtype=np.uint64)).tolist(), len(ix)
    ([2, 3], 4)
    >>> ix.find(np.array([4, 5], dtype=np.uint64)).tolist()
    [3, -1]
    """

    EMPTY = np.uint64(2**64 - 1)  # never a key: keys leave the top bits clear
    MULT = np.uint64(0x9E3779B97F4A7C15)

    def __init__(self, words: int, capacity: int = 1 << 16):
        self.words = words
        self.count = 0
        self._alloc(max(1 << 10, 1 << (capacity - 1).bit_length()))

    def __len__(self) -> int:
        return self.count

    @property
    def nbytes(self) -> int:
        return self.table.nbytes + self.index.nbytes

    def _alloc(self, size: int) -> None:
        self.size = size
        self.bits = size.bit_length() - 1
        self.table = np.full((size, self.words), self.EMPTY, dtype=np.uint64)
        # int32: class indices fit in 31 bits (MAX_CLASSES), and the table is the biggest
        # thing an enumeration holds besides its edges.
        self.index = np.full(size, -1, dtype=np.int32)

    def _rows(self, keys: np.ndarray) -> np.ndarray:
        if self.words == 1:
            return keys.reshape(-1, 1)
        return keys.view(np.uint64).reshape(-1, self.words)

    def _hash(self, rows: np.ndarray) -> np.ndarray:
        h = rows[:, 0] * self.MULT
        for w in range(1, self.words):
            h = (h ^ rows[:, w]) * self.MULT
        return (h >> np.uint64(64 - self.bits)).astype(np.int64)

    def _probe(self, rows: np.ndarray, insert: bool, start: int) -> np.ndarray:
        """Indices of ``rows`` (distinct keys); new ones get ``start, start + 1, ...`` in
        row order."""
        out = np.full(len(rows), -1, dtype=np.int64)
        slot = self._hash(rows)
        pending = np.arange(len(rows))
        mask = self.size - 1
        claimed_rows, claimed_slots = [], []
        while len(pending):
            s = slot[pending]
            cur = self.table[s]
            same = (cur == rows[pending]).all(axis=1)
            out[pending[same]] = self.index[s[same]]
            empty = cur[:, 0] == self.EMPTY
            if self.words > 1:
                empty &= (cur == self.EMPTY).all(axis=1)
            if insert and empty.any():
                cand, cslot = pending[empty], s[empty]
                # One winner per free slot: the last write of a scatter stays.
                self.index[cslot] = -2 - cand
                won = self.index[cslot] == -2 - cand
                win, wslot = cand[won], cslot[won]
                self.table[wslot] = rows[win]
                claimed_rows.append(win)
                claimed_slots.append(wslot)
                # Losers of a claim look at the same slot again (now taken) next round.
                done = same.copy()
                done[np.flatnonzero(empty)[won]] = True
                move = ~done & ~empty
            else:
                done = same | empty
                move = ~done
            slot[pending[move]] = (slot[pending[move]] + 1) & mask
            pending = pending[~done]
        if claimed_rows:
            new_rows = np.concatenate(claimed_rows)
            new_slots = np.concatenate(claimed_slots)
            order = np.argsort(new_rows)
            ids = np.arange(start, start + len(new_rows))
            self.index[new_slots[order]] = ids
            out[new_rows[order]] = ids
            self.count = max(self.count, start + len(new_rows))
        return out

    def add(self, keys: np.ndarray) -> np.ndarray:
        """Indices of ``keys``, inserting those not yet present (new keys are numbered in
        increasing key order)."""
        if len(keys) == 0:
            return np.zeros(0, dtype=np.int64)
        # Distinct keys by one sort (numpy's vectorized quicksort), not np.unique's hashing.
        order = np.argsort(keys)
        ordered = keys[order]
        first = np.ones(len(keys), dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        uniq = ordered[first]
        group = np.cumsum(first) - 1
        if 2 * (self.count + len(uniq)) > self.size:
            self._grow(self.count + len(uniq))
        ids = self._probe(self._rows(uniq), insert=True, start=self.count)
        out = np.empty(len(keys), dtype=np.int64)
        out[order] = ids[group]
        return out

    @classmethod
    def of_distinct(cls, keys: np.ndarray, words: int) -> KeyIndex:
        """An index of distinct ``keys`` where ``keys[i]`` has index i."""
        ix = cls(words=words, capacity=2 * len(keys) + 1)
        if len(keys):
            got = ix._probe(ix._rows(keys), insert=True, start=0)
            if not np.array_equal(got, np.arange(len(keys))):
                raise ValueError("KeyIndex.of_distinct: the keys are not distinct")
        return ix

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Indices of ``keys``, -1 for those not present."""
        if len(keys) == 0:
            return np.zeros(0, dtype=np.int64)
        return self._probe(self._rows(keys), insert=False, start=self.count)

    def growth_bytes(self, new_keys: int) -> int:
        """Memory a growth would take if ``new_keys`` more keys came in (0: no growth)."""
        if 2 * (self.count + new_keys) <= self.size:
            return 0
        size = self.size
        while 2 * (self.count + new_keys) > size:
            size *= 2
        # the new table and index, plus the live keys and ids copied out while re-inserting
        return size * (8 * self.words + 4) + self.count * (8 * self.words + 20)

    def _grow(self, need: int) -> None:
        live = self.index >= 0
        rows, ids = self.table[live], self.index[live]
        size = self.size
        while 2 * need > size:
            size *= 2
        self._alloc(size)
        order = np.argsort(ids)
        # Re-insert in index order so each key keeps its index.
        keys = rows[order]
        got = self._probe(keys, insert=True, start=0)
        assert np.array_equal(got, ids[order])


DIRECTORY_STRIDE = 64
DIRECTORY_QUERIES = 1 << 16  # queries searched at once that way (about 50 bytes each)


def find_sorted(keys: np.ndarray, q: np.ndarray, directory: np.ndarray | None = None):
    """Indices of ``q`` in the sorted distinct ``keys`` (-1 where absent).

    Queries out of order are sorted first. A binary search of a few million keys costs
    about 600 ns a query in random order (a cache miss at every deep step) and 50 to 250
    in key order, where neighbouring queries share their path; the sort costs less than the
    difference. Un-playing and sweeping 5x5 c4 torus ask 31 million queries in random order.
    ``directory``, every :data:`DIRECTORY_STRIDE`-th key, narrows each search first
    (:func:`lower_bound`).

    >>> find_sorted(np.array([2, 5, 9], dtype=np.uint64), np.array([9, 3, 2], dtype=np.uint64))
    array([ 2, -1,  0])
    """
    n = len(keys)
    if n == 0 or len(q) == 0:
        return np.full(len(q), -1, dtype=np.int64)
    if len(q) > 1 and not (q[1:] >= q[:-1]).all():
        order = np.argsort(q)
        idx = np.empty(len(q), dtype=np.int64)
        idx[order] = find_sorted(keys, q[order], directory)
        return idx
    # In place: a query's temporaries are its position and one comparison.
    if directory is None:
        at = np.searchsorted(keys, q).astype(np.int64, copy=False)
    else:
        # Its halving steps take a few columns a query: a slice of queries at a time.
        at = np.concatenate(
            [
                lower_bound(keys, q[lo : lo + DIRECTORY_QUERIES], directory)
                for lo in range(0, len(q), DIRECTORY_QUERIES)
            ]
        )
    np.minimum(at, n - 1, out=at)
    at[keys[at] != q] = -1
    return at


def lower_bound(keys: np.ndarray, q: np.ndarray, directory: np.ndarray) -> np.ndarray:
    """``np.searchsorted(keys, q)`` for sorted ``q``, with ``directory`` every
    :data:`DIRECTORY_STRIDE`-th key: a search of the small directory finds each query's run
    of keys, then halving steps over all queries at once find its place in the run. On 18
    million keys (too many for the processor's cache) that took 140 to 160 ns a query
    against 200 to 350 for ``np.searchsorted``, whose every search starts from the whole
    array; on 2.8 million it did not pay.

    >>> keys = np.arange(0, 400, 2, dtype=np.uint64)
    >>> lower_bound(keys, np.array([0, 3, 130, 398, 999], dtype=np.uint64), keys[::64])
    array([  0,   2,  65, 199, 200])
    """
    n = len(keys)
    run = np.searchsorted(directory, q, side="right").astype(np.int64)
    run -= 1
    np.maximum(run, 0, out=run)
    at = run * DIRECTORY_STRIDE
    del run
    # keys[at] <= q < keys[at + STRIDE]: count the keys of the run below q. A step past
    # the end reads the last key, which can only count where q is above every key.
    below = np.zeros(len(q), dtype=np.int64)
    step = DIRECTORY_STRIDE
    while step:
        probe = at + below
        probe += step - 1
        np.minimum(probe, n - 1, out=probe)
        below += np.where(keys[probe] < q, step, 0)
        step >>= 1
    at += below
    np.minimum(at, n, out=at)
    return at


def sorted_unique(a: np.ndarray, counts: bool = False, in_place: bool = False):
    """``np.unique`` by one sort: numpy's hashing unique is many times slower on big arrays.
    With ``in_place`` the caller's ``a`` is sorted itself, not a copy of it.

    >>> sorted_unique(np.array([3, 1, 3, 2]), counts=True)
    (array([1, 2, 3]), array([1, 1, 2]))
    """
    if in_place:
        a.sort()
    else:
        a = np.sort(a)
    first = np.ones(len(a), dtype=bool)
    first[1:] = a[1:] != a[:-1]
    out = a[first]
    if not counts:
        return out
    starts = np.flatnonzero(first)
    return out, np.diff(np.append(starts, len(a)))
