"""Class keys of one word (``uint64``) or two (the batch engine's ``KEY2``: ``hi``, ``lo``;
6x6 boards take 72 bits of boards): hashing, sorting and finding them the same way.

One-word keys go through the compact solver's helpers (a sort of the key with its
colourings below it, binary searches); two-word keys through ``np.lexsort`` on their words,
an argsort of the structured array and ``np.searchsorted``, which order it field by field.

>>> k = np.array([(2, 5), (1, 9), (2, 5)], dtype=[("hi", "<u8"), ("lo", "<u8")])
>>> uk, ub = distinct([k], [np.array([1, 2, 2], dtype=np.uint8)], k)
>>> uk.tolist(), ub.tolist()
([(1, 9), (2, 5)], [2, 3])
>>> find(uk, k).tolist()
[1, 0, 1]
"""

from __future__ import annotations

import numpy as np

from harness.solver.classindex import find_sorted
from harness.solver.compact.store import merge_groups

MULT2 = np.uint64(0xBF58476D1CE4E5B9)  # mixes the high word into a two-word key's hash


def wide(keys: np.ndarray) -> bool:
    """Whether ``keys`` are of two words (a structured array)."""
    return keys.dtype.names is not None


def mixed(keys: np.ndarray, mult: np.uint64) -> np.ndarray:
    """A 64-bit multiplicative hash of each key: ``key * mult``, or for two words
    ``lo * mult ^ hi * MULT2`` (the high bits are the well-mixed ones)."""
    if wide(keys):
        return (keys["lo"] * mult) ^ (keys["hi"] * MULT2)
    return keys * mult


def order(keys: np.ndarray) -> np.ndarray:
    """The permutation that sorts ``keys``."""
    if wide(keys):
        return np.lexsort((keys["lo"], keys["hi"]))
    return np.argsort(keys)


def firsts(sorted_keys: np.ndarray) -> np.ndarray:
    """Where each run of equal keys starts in sorted keys."""
    first = np.ones(len(sorted_keys), dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return np.flatnonzero(first)


def distinct(key_parts: list, bit_parts: list, like: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys of the parts, sorted, each with the OR of its bits
    (:func:`~harness.solver.compact.store.merge_groups`); the lists are emptied. ``like`` is
    any array of the run's keys: its type is the answer's when there are none."""
    pairs = [(k, b) for k, b in zip(key_parts, bit_parts, strict=True) if len(k)]
    key_parts.clear()
    bit_parts.clear()
    if not pairs:
        return like[:0], np.zeros(0, dtype=np.uint8)
    return merge_groups([k for k, _ in pairs], [b for _, b in pairs])


def find(keys: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Rows of ``q`` in the sorted distinct ``keys`` (-1 where absent)."""
    if not wide(keys):
        return find_sorted(keys, q)
    n = len(keys)
    if n == 0 or len(q) == 0:
        return np.full(len(q), -1, dtype=np.int64)
    at = np.searchsorted(keys, q).astype(np.int64)
    np.minimum(at, n - 1, out=at)
    at[keys[at] != q] = -1
    return at
