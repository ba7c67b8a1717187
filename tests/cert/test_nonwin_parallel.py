"""The parallel checker's pieces, in this process: exact keys, buckets, and the two phases
run by hand over a certificate's shards."""

from __future__ import annotations

import random

import numpy as np

from harness.cert.nonwin_builder import build_nonwin
from harness.cert.nonwin_format import read_nonwin_index, write_nonwin
from harness.cert.nonwin_parallel import (
    bucket_of,
    join_bucket,
    pack_keys,
    play_shard,
    position_key,
)
from harness.rules import Position, Ruleset
from harness.solver.retrograde import solve

REINC_4X4_C4 = "pop1-4x4-c4-reincarnation-continue-binempty-king-nozero-nojump"


def test_keys_sort_and_compare_as_their_words():
    rng = random.Random(7)
    words = [tuple(rng.randrange(1 << 64) for _ in range(3)) for _ in range(500)]
    words += [(w[0], w[1], w[2] ^ 1) for w in words[:50]]  # differ in the last bit only
    keys = pack_keys(words)
    assert [tuple(int(v) for v in k) for k in np.sort(keys).view(">u8").reshape(-1, 3)] == sorted(
        words
    )
    assert len(np.unique(keys)) == len(set(words))


def test_a_key_tells_bins_and_player_to_move_apart():
    rs = Ruleset.from_id(REINC_4X4_C4)
    a = Position.from_text(rs, "..../.x../..../.... 3 4 o")
    assert (
        len(
            {
                position_key(a),
                position_key(a.with_turn(0)),
                position_key(Position(a.board, (4, 3), 1)),
            }
        )
        == 3
    )


def test_buckets_are_in_range_and_balanced():
    rng = random.Random(3)
    keys = pack_keys([(rng.randrange(1 << 16), rng.randrange(1 << 16), 7) for _ in range(8000)])
    b = bucket_of(keys, 8)
    assert b.min() >= 0 and b.max() < 8
    assert np.bincount(b, minlength=8).min() > 800  # within 20% of an eighth


def test_the_two_phases_by_hand(tmp_path):
    """Every shard played, every bucket joined: no duplicate, nothing missing, the root in;
    and with one shard's keys left out, its entries are missing where others need them."""
    sol = solve(Ruleset.from_id(REINC_4X4_C4))
    rs = sol.ruleset
    sets = [build_nonwin(sol, p).as_set(rs, 50) for p in (0,)]
    cert = tmp_path / "cert"
    write_nonwin(cert, rs.id, Position.initial(rs).text(rs), sets)
    index = read_nonwin_index(cert)
    shards = index["sets"][0]["shards"]
    keys = tmp_path / "keys"
    keys.mkdir()
    turns = 0
    for i, meta in enumerate(shards):
        done = play_shard(str(cert), rs.id, meta, 0, 0, i, 3, str(keys), 20)
        assert done["read"] == [] and done["play"] == [] and done["lines"] == meta["entries"]
        turns += done["turns"]
    assert turns > index["entries"]
    root = pack_keys([position_key(Position.initial(rs))])
    root_bucket = int(bucket_of(root, 3)[0])
    haves = 0
    for b in range(3):
        out = join_bucket(
            str(keys), 0, b, len(shards), root.tobytes() if b == root_bucket else None, 20
        )
        assert out["duplicates"] == [] and out["missing"] == []
        assert out["root_in"] is (True if b == root_bucket else None)
        haves += out["haves"]
    assert haves == index["entries"]
    # A middle shard's haves emptied: what needs its entries is now missing.
    middle = len(shards) // 2
    for b in range(3):
        path = keys / f"set0-bucket{b:05d}-shard{middle:06d}.npz"
        with np.load(path) as f:
            arrays = {k: f[k] for k in f.files}
        arrays["have"], arrays["have_at"] = arrays["have"][:0], arrays["have_at"][:0]
        np.savez(path, **arrays)
    missing = sum(
        len(join_bucket(str(keys), 0, b, len(shards), None, 20)["missing"]) for b in range(3)
    )
    assert missing > 0
