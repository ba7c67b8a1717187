"""``check --workers``: a non-win certificate's shards as Dask tasks, membership across shards
through sorted key files. It must accept and reject exactly what the checker in one process
does, with the same reasons."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.cert.format import certificate_hash, digest, dump_index
from harness.cert.nonwin_builder import build_nonwin
from harness.cert.nonwin_checker import check_nonwin
from harness.cert.nonwin_format import write_nonwin
from harness.cert.nonwin_parallel import check_nonwin_parallel
from harness.rules import Position, Ruleset
from harness.solver.retrograde import solve

from .conftest import REPO, worker_env

TORUS_3X4 = "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump"  # a draw
REINC_4X4_C4 = "pop1-4x4-c4-reincarnation-continue-binempty-king-nozero-nojump"  # a draw


def certify(rid: str, out: Path, max_entries: int) -> Path:
    sol = solve(Ruleset.from_id(rid))
    rs = sol.ruleset
    sets = [build_nonwin(sol, p).as_set(rs, max_entries) for p in (0, 1)]
    write_nonwin(out, rs.id, Position.initial(rs).text(rs), sets)
    return out


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    return certify(TORUS_3X4, tmp_path_factory.mktemp("check") / "cert", max_entries=20)


@pytest.fixture
def cert(good, tmp_path) -> Path:
    copy = tmp_path / "cert"
    shutil.copytree(good, copy)
    return copy


def load(cert: Path):
    index = yaml.safe_load((cert / "index.yaml").read_text())
    sets = []
    for nws in index["sets"]:
        sets.append(
            [
                [
                    json.loads(x)
                    for x in gzip.decompress((cert / m["file"]).read_bytes()).split(b"\n")
                    if x
                ]
                for m in nws["shards"]
            ]
        )
    return index, sets


def save(cert: Path, index: dict, sets) -> None:
    """Every shard and a consistent index (hashes and counts recomputed)."""
    for nws, shards in zip(index["sets"], sets, strict=True):
        for meta, lines in zip(nws["shards"], shards, strict=True):
            data = gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode(), mtime=0)
            (cert / meta["file"]).write_bytes(data)
            meta["blake3"], meta["entries"] = digest(data), len(lines)
        nws["entries"] = sum(len(s) for s in shards)
        nws["hash"] = certificate_hash([m["blake3"] for m in nws["shards"]])
    index["entries"] = sum(n["entries"] for n in index["sets"])
    index["hash"] = certificate_hash([n["hash"] for n in index["sets"]])
    (cert / "index.yaml").write_text(dump_index(index))


def both(cert: Path, session, **kw):
    one = check_nonwin(cert, **kw)
    many = check_nonwin_parallel(cert, session, **kw)
    return one, many


def test_accepts_what_one_process_accepts(good, local_session, tmp_path):
    for cert in (good, certify(REINC_4X4_C4, tmp_path / "reinc", max_entries=100)):
        one, many = both(cert, local_session)
        assert one.ok and many.ok, many.errors
        assert (many.entries, many.turns, many.hash, many.shards, many.value) == (
            one.entries,
            one.turns,
            one.hash,
            one.shards,
            one.value,
        )
        assert many.shards > 2  # membership crosses shards


def drop_a_needed_entry(index, sets):
    # The last entry of the first set's second shard: something hands it over.
    sets[0][1].pop()


def duplicate_across_shards(index, sets):
    ranks = [m["placement_rank"] for m in index["sets"][0]["shards"]]
    i = next(i for i in range(1, len(ranks)) if ranks[i] == ranks[i - 1])
    sets[0][i].append(dict(sets[0][i - 1][0]))


def illegal_defender_action(index, sets):
    for shard in sets[0]:
        for e in shard:
            if e["action"] is not None:
                e["action"] = "a1" if e["action"] != "a1" else "b1"
                return


def drop_the_root(index, sets):
    for shard in sets[1]:
        for i, e in enumerate(shard):
            if e["position"] == "..../..../.... 3 3 x":
                del shard[i]
                return
    raise AssertionError("no root entry")


def malformed_line(index, sets):
    sets[1][0][0] = {"position": "nonsense", "action": None}


MUTATIONS = [
    drop_a_needed_entry,
    duplicate_across_shards,
    illegal_defender_action,
    drop_the_root,
    malformed_line,
]


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda f: f.__name__)
def test_rejects_what_one_process_rejects_with_the_same_reasons(cert, local_session, mutate):
    index, sets = load(cert)
    mutate(index, sets)
    save(cert, index, sets)
    one, many = both(cert, local_session)
    assert not one.ok and not many.ok
    assert sorted(many.errors) == sorted(one.errors)


def test_a_damaged_shard_is_named(cert, local_session):
    index, _ = load(cert)
    name = index["sets"][1]["shards"][2]["file"]
    data = bytearray((cert / name).read_bytes())
    data[-9] ^= 0xFF
    (cert / name).write_bytes(bytes(data))
    one, many = both(cert, local_session)
    assert not many.ok and many.errors == one.errors
    assert any(name in e and "hash mismatch" in e for e in many.errors)


def test_key_files_go_to_the_given_folder_and_are_removed(good, local_session, tmp_path):
    report = check_nonwin_parallel(good, local_session, folder=tmp_path)
    assert report.ok
    assert list(tmp_path.iterdir()) == []


def test_cli_check_workers(good, cert, tmp_path):
    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "harness", "check", *args],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=worker_env(),
            timeout=300,
        )

    done = run(str(good), "--workers", "2", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["entries"] == check_nonwin(good).entries
    index, sets = load(cert)
    drop_a_needed_entry(index, sets)
    save(cert, index, sets)
    done = run(str(cert), "--workers", "2")
    assert done.returncode == 1
    assert "leads outside the set" in done.stderr
    done = run(str(good), "--scheduler", "tcp://127.0.0.1:9")
    assert done.returncode == 2 and "--shared" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
