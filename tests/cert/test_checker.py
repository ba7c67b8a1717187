"""The checker accepts honest certificates and rejects every kind of mutated one.

Each mutation rewrites the certificate *consistently* (shard digests, counts and the
certificate hash recomputed) unless the hash itself is the point, so the rejection tested
is the one named, not a hash mismatch caught first.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
import yaml

from harness.cert.builder import Strategy
from harness.cert.checker import check_certificate
from harness.cert.format import (
    certificate_hash,
    digest,
    dump_index,
    shard_bytes,
    write_certificate,
)
from harness.rules import Action, Position, Ruleset, legal_actions, play_unchecked
from harness.rules.symmetry import symmetries
from harness.solver.proof import ProofSearch

DEFAULT = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
O_WINS = Ruleset.from_id("pop1-3x4-c3-ringout-continue-binempty-king-nozero-nojump")


def certify(rs: Ruleset, out: Path, max_entries: int = 30) -> dict:
    search = ProofSearch(rs)
    result = search.prove(max_plies=9)
    strategy = Strategy.build(search, "xo".index(result.winner))
    shards = strategy.layout(max_entries=max_entries)
    return write_certificate(out, rs.id, result.winner, Position.initial(rs).text(rs), shards)


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cert") / "default"
    certify(DEFAULT, out)
    return out


@pytest.fixture
def cert(good, tmp_path) -> Path:
    copy = tmp_path / "cert"
    shutil.copytree(good, copy)
    return copy


def load(cert: Path) -> tuple[dict, list[list[dict]]]:
    index = yaml.safe_load((cert / "index.yaml").read_text())
    shards = []
    for meta in index["shards"]:
        lines = gzip.decompress((cert / meta["file"]).read_bytes()).decode().splitlines()
        shards.append([json.loads(line) for line in lines])
    return index, shards


def save(cert: Path, index: dict, shards: list[list], raw: bool = False) -> None:
    """Write shards (dicts, or text lines when ``raw``) and a consistent index."""
    for meta, lines in zip(index["shards"], shards, strict=True):
        text = "".join((line if raw else json.dumps(line)) + "\n" for line in lines)
        data = gzip.compress(text.encode(), mtime=0)
        (cert / meta["file"]).write_bytes(data)
        meta["blake3"] = digest(data)
        meta["entries"] = len(lines)
    index["entries"] = sum(len(s) for s in shards)
    index["hash"] = certificate_hash([m["blake3"] for m in index["shards"]])
    (cert / "index.yaml").write_text(dump_index(index))


def rejected(cert: Path, reason: str, **kwargs) -> str:
    report = check_certificate(cert, **kwargs)
    assert not report.ok
    joined = "\n".join(report.errors)
    assert reason in joined, joined
    return joined


def find(shards, pred):
    for i, shard in enumerate(shards):
        for j, entry in enumerate(shard):
            if pred(entry):
                return i, j
    raise AssertionError("no such entry")


# --- accepted ---------------------------------------------------------------------------


def test_accepts_the_certificate_it_wrote(good):
    report = check_certificate(good)
    assert report.ok, report.errors
    assert report.winner == "x" and report.ruleset == DEFAULT.id
    assert report.entries > 50 and report.shards > 1 and report.turns > report.entries


def test_accepts_a_certificate_for_o(tmp_path):
    certify(O_WINS, tmp_path / "o")
    report = check_certificate(tmp_path / "o")
    assert report.ok, report.errors
    assert report.winner == "o"
    # ... and the same certificate claimed for x is the wrong winner.
    index, shards = load(tmp_path / "o")
    index["winner"] = "x"
    save(tmp_path / "o", index, shards)
    rejected(tmp_path / "o", "wrong winner")


def test_accepts_symmetric_images_of_entries(cert):
    """A position may be stored as any of its images (with the action mapped along)."""
    index, shards = load(cert)
    sym = symmetries(DEFAULT)[1]
    for shard in shards:
        for entry in shard:
            pos = Position.from_text(DEFAULT, entry["position"])
            act = Action.from_text(DEFAULT, entry["action"])
            entry["position"] = sym.position(pos).text(DEFAULT)
            entry["action"] = sym.action(act).text(DEFAULT)
    save(cert, index, shards)
    report = check_certificate(cert)
    assert report.ok, report.errors


# --- rejected: the files ----------------------------------------------------------------


def test_rejects_a_malformed_line(cert):
    index, shards = load(cert)
    lines = [[json.dumps(e) for e in s] for s in shards]
    lines[0][0] = '{"position": "..../..../..../.... 8 8 x", "action": "b2"'
    save(cert, index, lines, raw=True)
    rejected(cert, "malformed line, not JSON")


def test_rejects_a_line_that_is_not_an_entry(cert):
    index, shards = load(cert)
    shards[0][0]["rank"] = "3"
    save(cert, index, shards)
    rejected(cert, "rank '3' is not a count")


def test_rejects_an_unknown_field_in_an_entry(cert):
    index, shards = load(cert)
    shards[0][1]["comment"] = "trust me"
    save(cert, index, shards)
    rejected(cert, "unknown field(s) comment")


def test_rejects_an_unknown_field_in_the_index(cert):
    index, shards = load(cert)
    index["signed_by"] = "me"
    save(cert, index, shards)
    rejected(cert, "unknown field(s) signed_by")


def test_rejects_a_shard_hash_mismatch(cert):
    index, _ = load(cert)
    path = cert / index["shards"][0]["file"]
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    path.write_bytes(gzip.compress(("\n".join(lines[1:]) + "\n").encode(), mtime=0))
    rejected(cert, "hash mismatch: index says blake3")


def test_rejects_a_certificate_hash_mismatch(cert):
    index, shards = load(cert)
    save(cert, index, shards)
    index["hash"] = "0" * 64
    (cert / "index.yaml").write_text(dump_index(index))
    rejected(cert, "hash mismatch: index says 0000")


def test_rejects_truncated_gzip(cert):
    index, shards = load(cert)
    meta = index["shards"][-1]
    path = cert / meta["file"]
    data = path.read_bytes()[:-12]
    path.write_bytes(data)
    meta["blake3"] = digest(data)
    index["hash"] = certificate_hash([m["blake3"] for m in index["shards"]])
    (cert / "index.yaml").write_text(dump_index(index))
    rejected(cert, "corrupt or truncated gzip")


def test_rejects_a_missing_shard_file(cert):
    index, _ = load(cert)
    (cert / index["shards"][0]["file"]).unlink()
    rejected(cert, "shard listed in index.yaml is missing")


def test_rejects_wrong_counts_and_placement_ranks(cert):
    index, shards = load(cert)
    save(cert, index, shards)
    index["entries"] += 1
    index["shards"][0]["placement_rank"] += 2
    (cert / "index.yaml").write_text(dump_index(index))
    errors = rejected(cert, f"entries {index['entries']} but the shards hold")
    assert "placement rank" in errors


def test_rejects_a_path_outside_the_directory(cert):
    index, shards = load(cert)
    save(cert, index, shards)
    index["shards"][0]["file"] = "../elsewhere.jsonl.gz"
    (cert / "index.yaml").write_text(dump_index(index))
    rejected(cert, "is not a plain file name")


# --- rejected: the claims ---------------------------------------------------------------


def test_rejects_a_ruleset_mismatch(cert):
    other = DEFAULT.with_(edge="klein")
    rejected(cert, "ruleset mismatch", ruleset=other.id)
    index, shards = load(cert)
    index["ruleset"] = other.id
    save(cert, index, shards)
    # Replayed under Klein rules, the torus strategy does not hold up.
    assert not check_certificate(cert).ok
    index["ruleset"] = "pop1-4x4-c8-moebius-continue-binempty-king-nozero-nojump"
    save(cert, index, shards)
    rejected(cert, "ruleset mismatch: ruleset field 'edge'")


def test_rejects_a_root_that_is_not_the_initial_position(cert):
    index, shards = load(cert)
    index["root"] = "x.../..../..../.... 7 8 o"
    save(cert, index, shards)
    rejected(cert, "is not the initial position")


def test_rejects_a_missing_root_entry(cert):
    index, shards = load(cert)
    i, j = find(shards, lambda e: e["position"] == index["root"])
    del shards[i][j]
    save(cert, index, shards)
    rejected(cert, "the initial position is not an entry")


def test_rejects_a_missing_successor(cert):
    index, shards = load(cert)
    i, j = find(shards, lambda e: e["rank"] == 1)
    del shards[i][j]
    save(cert, index, shards)
    rejected(cert, "missing successor")


def test_rejects_equal_ranks(cert):
    index, shards = load(cert)
    i, j = find(shards, lambda e: e["rank"] == 3)
    shards[i][j]["rank"] = 1  # its successors have rank 1
    save(cert, index, shards)
    rejected(cert, "rank not smaller")


def test_rejects_rising_ranks(cert):
    index, shards = load(cert)
    for shard in shards:
        for entry in shard:
            if entry["rank"] == 1:
                entry["rank"] = 100
    save(cert, index, shards)
    errors = rejected(cert, "rank not smaller")
    assert "has rank 100" in errors


def test_rejects_an_illegal_action(cert):
    index, shards = load(cert)
    i, j = find(shards, lambda e: "x" in e["position"])
    entry = shards[i][j]
    pos = Position.from_text(DEFAULT, entry["position"])
    occupied = next(sq for sq in range(16) if pos.board[0] >> sq & 1)
    entry["action"] = Action(None, occupied).text(DEFAULT)
    save(cert, index, shards)
    rejected(cert, "illegal action")


def test_rejects_a_losing_action(cert):
    """An action after which the loser can end the game in a draw or a win."""
    index, shards = load(cert)
    for i, shard in enumerate(shards):
        for j, entry in enumerate(shard):
            pos = Position.from_text(DEFAULT, entry["position"])
            for act in legal_actions(DEFAULT, pos):
                out = play_unchecked(DEFAULT, pos, act)
                if out.result not in (None, "x"):
                    bad = act
                elif out.result is None and any(
                    play_unchecked(DEFAULT, out.next, r).result in ("o", "draw")
                    for r in legal_actions(DEFAULT, out.next)
                ):
                    bad = act
                else:
                    continue
                shards[i][j]["action"] = bad.text(DEFAULT)
                save(cert, index, shards)
                rejected(cert, "losing action")
                return
    raise AssertionError("no losing action found to plant")


def test_rejects_entries_with_the_loser_to_move(cert):
    index, shards = load(cert)
    shards[0][0]["position"] = shards[0][0]["position"][:-1] + "o"
    save(cert, index, shards)
    rejected(cert, "wrong winner: o is to move")


def test_rejects_the_wrong_winner(cert):
    index, shards = load(cert)
    index["winner"] = "o"
    save(cert, index, shards)
    rejected(cert, "wrong winner")


def test_rejects_a_duplicate_entry(cert):
    index, shards = load(cert)
    shards[-1].append(dict(shards[-1][0]))
    save(cert, index, shards)
    rejected(cert, "duplicate entry")


def test_rejects_a_contradictory_entry(cert):
    index, shards = load(cert)
    twin = dict(shards[0][0])
    twin["rank"] += 2
    shards[0].append(twin)
    save(cert, index, shards)
    rejected(cert, "contradictory entry")


def test_rejects_successors_in_a_later_shard(cert):
    index, shards = load(cert)
    index["shards"].reverse()
    shards.reverse()
    save(cert, index, shards)
    rejected(cert, "sits in a later shard")


def test_stops_after_max_errors(cert):
    index, shards = load(cert)
    for shard in shards:
        for entry in shard:
            entry["rank"] = 0
    save(cert, index, shards)
    report = check_certificate(cert, max_errors=3)
    assert not report.ok and len(report.errors) == 3 and report.truncated


def test_shard_bytes_are_deterministic():
    from harness.cert.format import Entry

    entries = [Entry("..../..../..../.... 8 8 x", "b2", 7)]
    data = shard_bytes(entries)
    assert data == shard_bytes(entries)
    assert data[4:8] == b"\0\0\0\0"  # gzip mtime 0
    assert not data[3] & 0x08  # no file name stored
