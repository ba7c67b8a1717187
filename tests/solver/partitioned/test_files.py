"""The partitioned solve's files: columns written as ``.npy`` and hashed as they are written."""

from __future__ import annotations

import io

import blake3
import numpy as np
import pytest

from harness.solver.partitioned.files import save_hashed


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(1000, dtype=np.uint64),
        np.arange(24, dtype=np.uint64).reshape(12, 2),  # two-word keys
        np.asfortranarray(np.arange(24, dtype=np.int8).reshape(4, 6)),
        np.zeros(0, dtype=np.uint8),
        np.arange(10, dtype=np.uint16)[::2],  # not contiguous
    ],
)
def test_saved_bytes_are_np_save_bytes_and_the_digest_is_theirs(arr):
    out, ref = io.BytesIO(), io.BytesIO()
    digest = save_hashed(out, arr)
    np.save(ref, np.ascontiguousarray(arr), allow_pickle=False)
    assert out.getvalue() == ref.getvalue()
    assert digest == blake3.blake3(ref.getvalue()).hexdigest()
    back = np.load(io.BytesIO(out.getvalue()))
    assert back.dtype == arr.dtype and np.array_equal(back, arr)


def test_the_checksum_reads_two_word_keys():
    from harness.solver.checksum import class_checksum
    from harness.solver.states import KEY2

    rng = np.random.default_rng(7)
    words = rng.integers(0, 2**63, size=(50, 2), dtype=np.uint64)
    keys = np.empty(50, dtype=KEY2)
    keys["hi"], keys["lo"] = words[:, 0], words[:, 1]
    result = rng.integers(-1, 2, 50).astype(np.int8)
    plies = rng.integers(0, 30, 50).astype(np.uint16)
    got = class_checksum(keys, result, plies)
    assert got == class_checksum(words, result, plies)
    order = rng.permutation(50)
    assert got == class_checksum(keys[order], result[order], plies[order])
    swapped = keys.copy()
    swapped["hi"], swapped["lo"] = keys["lo"], keys["hi"]
    assert class_checksum(swapped, result, plies) != got
