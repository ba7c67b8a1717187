"""A solution's checksum: one 64-bit number over every class's key, value and plies, the same
whatever order the classes are read in, so two strong solves compare equal whichever solver,
partition count or file layout made them.

Each class is mixed to 64 bits (SplitMix64's finaliser over its key words, then over its
value and plies) and the mixes are summed modulo 2**64. It is a comparison, not a seal: a sum
of mixes can be forged on purpose, so a signed record pairs it with the blake3 hashes of the
files it was read from.

>>> keys = np.array([3, 1, 2], dtype=np.uint64)
>>> result = np.array([1, 0, -1], dtype=np.int8)
>>> plies = np.array([5, 0, 4], dtype=np.int64)
>>> order = np.argsort(keys)
>>> class_checksum(keys, result, plies) == class_checksum(keys[order], result[order], plies[order])
True
>>> class_checksum(keys, result, plies) == class_checksum(keys, result, plies + 1)
False
"""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 22  # classes mixed at once: about 100 MB of temporaries
_SEED = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element-wise on uint64 (arithmetic wraps modulo 2**64)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def class_checksum(keys: np.ndarray, result: np.ndarray, plies: np.ndarray) -> int:
    """The checksum of classes given as keys (one word a class, rows of words, or the
    two-word ``KEY2`` records), their values (the solver's small signed codes) and plies,
    in any order."""
    total = np.uint64(0)
    n = len(keys)
    with np.errstate(over="ignore"):
        for lo in range(0, n, CHUNK):
            k = np.asarray(keys[lo : lo + CHUNK])
            if k.dtype.names:  # two-word keys (KEY2: hi, lo), the partitioned solver's
                words = np.stack([k[name].astype(np.uint64) for name in k.dtype.names], axis=1)
            else:
                words = k.astype(np.uint64, copy=False).reshape(len(k), -1)
            h = _mix(words[:, 0] + _SEED)
            for w in range(1, words.shape[1]):
                h = _mix(h ^ words[:, w])
            value = np.asarray(result[lo : lo + CHUNK]).astype(np.int64) & 0xFF
            depth = np.asarray(plies[lo : lo + CHUNK]).astype(np.int64) & 0xFFFFFFFF
            h = _mix(h ^ ((value.astype(np.uint64) << np.uint64(32)) | depth.astype(np.uint64)))
            total = total + h.sum(dtype=np.uint64)
    return int(total)


def checksum_text(value: int) -> str:
    """The checksum as records write it: 16 hex digits.

    >>> checksum_text(255)
    '00000000000000ff'
    """
    return f"{value:016x}"
