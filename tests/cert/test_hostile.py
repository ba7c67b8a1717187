"""Hostile input and faults for certify/check (issue 14): each case the issue lists."""

from __future__ import annotations

import gzip
import json
import os
import stat
import tracemalloc
import zlib

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cert.checker import check_certificate
from harness.cert.format import certificate_hash, digest, dump_index
from harness.cli import main
from harness.errors import EXIT_BUDGET
from harness.rules import Ruleset
from harness.solver.proof import BudgetExhausted, ProofSearch

DEFAULT = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")


def test_a_budget_spent_while_building_is_exit_3_not_no_win(tmp_path, capsys):
    # The search proves the 4x4 win in under 1,000 nodes; building the certificate needs
    # more (successors are proven on demand), so the node budget runs out while building.
    search = ProofSearch(DEFAULT)
    assert search.prove(max_plies=15).winner == "x" and search.nodes < 1000
    out, state = tmp_path / "cert", tmp_path / "state.npz"
    args = ["certify", DEFAULT.id, "--out", str(out), "--state", str(state)]
    assert main([*args, "--max-nodes", "1000"]) == EXIT_BUDGET
    err = capsys.readouterr().err
    assert "while building the certificate" in err and "no forced win" not in err
    assert "Traceback" not in err and state.exists() and not out.exists()
    assert main([*args, "--max-nodes", "1000"]) == 0  # resumes from the kept state
    assert (out / "index.yaml").exists()


@pytest.mark.parametrize("budget", [1, 10, 37])
def test_the_node_budget_is_exact(budget):
    search = ProofSearch(Ruleset.from_id("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump"))
    search.max_nodes = budget
    with pytest.raises(BudgetExhausted):
        search.prove(max_plies=15)
    assert search.nodes == budget


# --- bounded reading of a certificate -------------------------------------------------------


@pytest.fixture(scope="module")
def good_cert(tmp_path_factory):
    out = tmp_path_factory.mktemp("good") / "cert"
    assert main(["certify", DEFAULT.id, "--out", str(out)]) == 0
    return out


def _copy(good_cert, tmp_path):
    import shutil

    out = tmp_path / "cert"
    shutil.copytree(good_cert, out)
    return out


def _rewrite_shard(cert, data: bytes, shard: int = 0) -> str:
    """Replace one shard by ``data`` and re-seal the index, so only the contents are wrong
    (as in an archive its publisher signed)."""
    index = yaml.safe_load((cert / "index.yaml").read_text())
    meta = index["shards"][shard]
    (cert / meta["file"]).write_bytes(data)
    meta["blake3"] = digest(data)
    index["hash"] = certificate_hash([s["blake3"] for s in index["shards"]])
    (cert / "index.yaml").write_text(dump_index(index))
    return meta["file"]


def gzip_bomb(size: int, byte: bytes = b"\n") -> bytes:
    """gzip of ``size`` bytes of ``byte``, built without holding them in memory."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = byte * (1 << 20)
    parts = [c.compress(chunk) for _ in range(size >> 20)]
    return b"".join(parts) + c.flush()


@pytest.mark.parametrize("byte", [b"\n", b"x"])
def test_a_gzip_bomb_is_refused_within_bounded_memory(good_cert, tmp_path, byte):
    cert = _copy(good_cert, tmp_path)
    name = _rewrite_shard(cert, gzip_bomb(256 << 20, byte))  # 256 MB from ~250 KB
    tracemalloc.start()
    try:
        report = check_certificate(cert, max_errors=100_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not report.ok
    bound = [e for e in report.errors if "more than" in e or "longer than" in e]
    assert bound and bound[0].startswith(name), report.errors[-3:]
    assert peak < 32 << 20, f"peak {peak:,} bytes"  # the old reader held the whole 256 MB


def test_a_deeply_nested_line_is_one_malformed_line_and_the_rest_is_checked(good_cert, tmp_path):
    cert = _copy(good_cert, tmp_path)
    index = yaml.safe_load((cert / "index.yaml").read_text())
    path = cert / index["shards"][0]["file"]
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    lines[1] = b"[" * 500 + b"]" * 500  # within the line bound, beyond the nesting bound
    lines[2] = b'{"position": "p", "action": "a1", "rank": ' + b"9" * 900 + b"}"
    lines[3] = b"[" * 2000 + b"]" * 2000  # beyond the line bound
    lines[5] = b'{"position": 1}'
    name = _rewrite_shard(cert, gzip.compress(b"\n".join(lines), mtime=0))
    report = check_certificate(cert)
    assert f"{name} line 2: malformed line, JSON nested deeper than 64 levels" in report.errors
    assert any(
        e.startswith(f"{name} line 3: malformed line, rank <a 900-digit number>")
        for e in report.errors
    ), report.errors
    assert f"{name} line 4: malformed line, longer than 1,024 bytes" in report.errors
    assert any(e.startswith(f"{name} line 6: malformed line") for e in report.errors)
    assert all(len(e) < 400 for e in report.errors)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "device", "folder", "symlink-inside"])
def test_special_files_are_refused_without_blocking(good_cert, tmp_path, kind):
    cert = _copy(good_cert, tmp_path)
    index = yaml.safe_load((cert / "index.yaml").read_text())
    shard = cert / index["shards"][1]["file"]
    other = cert / index["shards"][2]["file"]
    shard.unlink()
    if kind == "fifo":
        os.mkfifo(shard)
    elif kind == "dev-zero":
        shard.symlink_to("/dev/zero")
    elif kind == "device":
        try:
            os.mknod(shard, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("making a device node needs root")
    elif kind == "folder":
        shard.mkdir()
    else:
        shard.symlink_to(other.name)  # even a link to a sibling shard is not followed
    report = check_certificate(cert)  # must return, not hang on the FIFO
    assert not report.ok
    assert any(str(shard) in e and "not" in e for e in report.errors), report.errors


def test_a_special_index_is_refused(good_cert, tmp_path):
    cert = _copy(good_cert, tmp_path)
    (cert / "index.yaml").unlink()
    os.mkfifo(cert / "index.yaml")
    report = check_certificate(cert)
    assert report.errors == [f"{cert / 'index.yaml'}: is a FIFO, not a regular file"]


def test_a_deeply_nested_index_is_refused(good_cert, tmp_path):
    cert = _copy(good_cert, tmp_path)
    (cert / "index.yaml").write_text("- " * 5000 + "x\n")
    report = check_certificate(cert)
    assert len(report.errors) == 1 and "nested deeper than 64 levels" in report.errors[0]


@pytest.mark.parametrize("value", ["0", "-1"])
def test_max_errors_must_be_positive(good_cert, value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", str(good_cert), "--max-errors", value])
    assert exc.value.code == 2
    assert "--max-errors: must be positive" in capsys.readouterr().err


# --- fuzz: the certificate reader ---------------------------------------------------------

shard_lines_st = st.lists(
    st.one_of(
        st.binary(max_size=120),
        st.builds(
            lambda p, a, r: json.dumps({"position": p, "action": a, "rank": r}).encode(),
            st.text(max_size=30) | st.just("..../..../..../.... 8 8 x"),
            st.text(max_size=6),
            st.integers(-5, 10**40) | st.text(max_size=3),
        ),
        st.integers(0, 900).map(lambda n: b"[" * n + b"]" * n),
    ),
    max_size=8,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(shard_lines_st, st.booleans(), st.binary(max_size=64))
def test_fuzz_certificate_reader_rejects_cleanly_in_bounded_memory(
    good_cert, tmp_path_factory, lines, compress, garbage
):
    cert = _copy(good_cert, tmp_path_factory.mktemp("fuzz"))
    raw = b"\n".join(lines) + b"\n"
    _rewrite_shard(cert, gzip.compress(raw, mtime=0) + garbage if compress else raw)
    tracemalloc.start()
    try:
        report = check_certificate(cert)  # must return a report, never raise
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not report.ok and report.errors
    assert all(len(e) < 600 and "\n" not in e for e in report.errors), report.errors
    assert peak < 16 << 20
