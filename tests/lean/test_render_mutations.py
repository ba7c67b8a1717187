"""Mutated certificates: the Python mirror of the Lean checker (run on what ``render`` would
write) must reach the same verdict as the independent Python checker (``harness.cert``).

The architecture requires the Python checker to reject everything Lean rejects. The one
known difference goes the allowed way: Lean compares ranks only within a shard (later shards
look into earlier ones, whose theorems are already proved, so order alone rules out cycles),
while the Python checker also compares ranks across shards; so changing an entry's rank past a
predecessor in a later shard is rejected by Python and accepted by Lean, soundly.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from harness.cert.checker import check_certificate
from harness.cert.format import Entry, Shard, read_index, read_shard, write_certificate
from harness.lean import certdata as lean_certdata
from harness.lean import model as M
from harness.lean import render as R
from harness.lean.codec import Cfg, action_code, action_text, position_key
from harness.rules import Ruleset

sys.path.insert(0, str(Path(__file__).parent))
import tinycert  # noqa: E402

RULESET = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    cfg = Cfg.of(Ruleset.from_id(RULESET))
    winner, chosen = tinycert.solve(cfg)
    out = tmp_path_factory.mktemp("base") / "cert"
    tinycert.write(cfg, out, winner, chosen, per_shard=10, canonical_images=True)
    index = read_index(out)
    shards = [Shard(m["placement_rank"], read_shard(out / m["file"])) for m in index["shards"]]
    return cfg, index, shards


def lean_verdict(cert_dir: Path) -> bool:
    try:
        cert = lean_certdata.read_certificate(cert_dir)
    except lean_certdata.RenderError:
        return False
    lean_certdata.expand(cert)
    return R.mirror_check(cert)[0]


def rewrite(out: Path, index: dict, shards: list[Shard], winner: str | None = None) -> Path:
    write_certificate(out, index["ruleset"], winner or index["winner"], index["root"], shards)
    return out


def mutations(cfg: Cfg, shards: list[Shard]):
    """(name, new shards) pairs; each changes one thing a checker must look at."""
    rng = random.Random(7)
    flat = [(i, j) for i, s in enumerate(shards) for j in range(len(s.entries))]
    picks = rng.sample(flat, 6)

    def replaced(i: int, j: int, entry: Entry | None) -> list[Shard]:
        out = [Shard(s.placement_rank, list(s.entries)) for s in shards]
        if entry is None:
            del out[i].entries[j]
        else:
            out[i].entries[j] = entry
        return [s for s in out if s.entries]

    for i, j in picks:
        e = shards[i].entries[j]
        yield f"drop {e.position}", replaced(i, j, None)
        yield f"rank 0 {e.position}", replaced(i, j, Entry(e.position, e.action, 0))
        yield f"rank +9 {e.position}", replaced(i, j, Entry(e.position, e.action, e.rank + 9))
        s = M.pos_decode(cfg, position_key(cfg, e.position))
        mine = action_code(cfg, e.action)
        for other in M.legal(cfg, s):
            if other != mine:
                alt = Entry(e.position, action_text(cfg, other), e.rank)
                yield f"action {alt.action} at {e.position}", replaced(i, j, alt)
                break
    yield "swap shards", [shards[-1], *shards[1:-1], shards[0]]


def test_mirror_and_python_checker_agree_on_mutations(tmp_path, base):
    cfg, index, shards = base
    assert check_certificate(rewrite(tmp_path / "ok", index, shards)).ok
    assert lean_verdict(tmp_path / "ok")
    rejected = 0
    for n, (name, mutated) in enumerate(mutations(cfg, shards)):
        out = rewrite(tmp_path / f"m{n}", index, mutated)
        python_ok = check_certificate(out).ok
        lean_ok = lean_verdict(out)
        assert lean_ok or not python_ok, f"{name}: Lean would reject what Python accepts"
        if not name.startswith("rank"):
            assert python_ok == lean_ok, f"{name}: python {python_ok}, lean mirror {lean_ok}"
        rejected += not lean_ok
    assert rejected >= 12  # most mutations break the win; both checkers must see it


def test_wrong_winner_is_rejected_by_both(tmp_path, base):
    cfg, index, shards = base
    out = rewrite(tmp_path / "w", index, shards, winner="o")
    assert not check_certificate(out).ok
    assert not lean_verdict(out)


def test_tampered_bytes_are_rejected_before_rendering(tmp_path, base):
    cfg, index, shards = base
    out = rewrite(tmp_path / "t", index, shards)
    victim = out / index["shards"][1]["file"]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    assert not check_certificate(out).ok
    with pytest.raises(lean_certdata.RenderError):
        lean_certdata.read_certificate(out)
