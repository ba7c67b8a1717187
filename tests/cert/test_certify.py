"""The builder (strategy, ranks, shard order), the writer, and the certify/check commands."""

from __future__ import annotations

import gzip
import json

import pytest
import yaml

import harness.cert.format as format_module
from harness.cert.builder import Strategy, _topological
from harness.cert.checker import check_certificate
from harness.cert.format import CertificateError, Entry, Shard, write_certificate
from harness.cli import main
from harness.rules import Ruleset
from harness.solver.proof import ProofSearch

DEFAULT = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
FIVE = Ruleset.from_id("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump")


def strategy_for(rs: Ruleset, **kwargs) -> Strategy:
    search = ProofSearch(rs)
    assert search.prove(max_plies=9, attackers=(0,)).winner == "x"
    return Strategy.build(search, 0, **kwargs)


def shard_of(shards):
    where = {}
    for i, shard in enumerate(shards):
        for entry in shard.entries:
            where[entry.position] = i
    return where


def test_ranks_strictly_decrease_and_shards_come_successors_first():
    strategy = strategy_for(DEFAULT)
    rs = DEFAULT
    for s, succs in strategy.successors.items():
        for t in succs:
            assert strategy.entries[t][0] < strategy.entries[s][0]
    shards = strategy.layout(max_entries=10)
    assert max(len(s.entries) for s in shards) == 10
    where = shard_of(shards)
    for s, succs in strategy.successors.items():
        me = where[strategy.entry(s).position]
        for t in succs:
            assert where[strategy.entry(t).position] <= me
    ranks = [s.placement_rank for s in shards]
    assert ranks == sorted(ranks)  # torus: placement rank never rises along play
    root = strategy.search.root()
    assert strategy.entries[root][0] == 7
    assert strategy.entry(root).position == "..../..../..../.... 8 8 x"
    assert {e.position for s in shards for e in s.entries} == {
        strategy.entry(s).position for s in strategy.entries
    }
    assert rs.id == strategy.search.rs.id


def test_optimising_makes_the_certificate_smaller():
    plain = strategy_for(FIVE, optimize=False)
    small = strategy_for(FIVE, optimize=True)
    assert len(small.entries) < len(plain.entries)


def test_refining_never_grows_and_stays_valid(tmp_path):
    strategy = strategy_for(FIVE)
    before = len(strategy.entries)
    removed = strategy.refine()
    assert removed == before - len(strategy.entries) and removed > 0
    # Every successor is still an entry of smaller rank, and nothing unreferenced is left.
    referenced = {strategy.search.root()}
    for s, succs in strategy.successors.items():
        for t in succs:
            assert strategy.entries[t][0] < strategy.entries[s][0]
            referenced.add(t)
    assert referenced == set(strategy.entries)
    root = "...../...../...../...../..... 8 8 x"
    write_certificate(tmp_path / "c", FIVE.id, "x", root, strategy.layout())
    assert check_certificate(tmp_path / "c").ok


def test_layout_falls_back_to_rank_order_when_placement_ranks_cycle():
    """Under reincarnation a fall returns a checker to the bin, so successors can have a
    higher placement rank; a cycle between groups must still give a valid order."""
    assert _topological({1: {2}, 2: {1}}) is None
    assert _topological({1: set(), 2: {1}, 3: {2, 1}}) == [1, 2, 3]
    search = ProofSearch(DEFAULT)
    strategy = Strategy(search, 0)
    # Four fabricated entries: a (p=4) -> b (p=6) -> c (p=4) -> d (p=6); a cycle 4 <-> 6.
    a, b, c, d = (
        ((1, 0, 2, 2, 0), 4),
        ((2, 0, 3, 3, 0), 3),
        ((4, 0, 2, 2, 0), 2),
        ((8, 0, 3, 3, 0), 1),
    )
    for s, rank in (a, b, c, d):
        strategy.entries[s] = (rank, (-1, 15))
    strategy.successors = {a[0]: [b[0]], b[0]: [c[0]], c[0]: [d[0]], d[0]: []}
    shards = strategy.layout(max_entries=100)
    where = shard_of(shards)
    for s, succs in strategy.successors.items():
        for t in succs:
            assert where[strategy.entry(t).position] <= where[strategy.entry(s).position]
    assert [s.placement_rank for s in shards] == [6, 4, 6, 4]


def test_writer_is_deterministic_and_refuses_to_overwrite(tmp_path):
    strategy = strategy_for(DEFAULT)
    shards = strategy.layout(max_entries=25)
    root = "..../..../..../.... 8 8 x"
    one = write_certificate(tmp_path / "a", DEFAULT.id, "x", root, shards)
    two = write_certificate(tmp_path / "b", DEFAULT.id, "x", root, shards)
    assert one == two
    for meta in one["shards"]:
        assert (tmp_path / "a" / meta["file"]).read_bytes() == (
            tmp_path / "b" / meta["file"]
        ).read_bytes()
    assert (tmp_path / "a" / "index.yaml").read_text() == (
        tmp_path / "b" / "index.yaml"
    ).read_text()
    before = (tmp_path / "a" / "index.yaml").read_text()
    with pytest.raises(CertificateError, match="not empty"):
        write_certificate(tmp_path / "a", DEFAULT.id, "x", root, shards[:1])
    assert (tmp_path / "a" / "index.yaml").read_text() == before
    # --force replaces it only by a complete certificate.
    write_certificate(tmp_path / "a", DEFAULT.id, "x", root, shards[:1], force=True)
    assert yaml.safe_load((tmp_path / "a" / "index.yaml").read_text())["entries"] == len(
        shards[0].entries
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    def boom(entries):
        raise OSError("disk full")

    monkeypatch.setattr(format_module, "shard_bytes", boom)
    with pytest.raises(OSError, match="disk full"):
        write_certificate(tmp_path / "c", DEFAULT.id, "x", "r", [Shard(0, [Entry("p", "a1", 1)])])
    assert list(tmp_path.iterdir()) == []


# --- the commands -----------------------------------------------------------------------


def test_certify_then_check(tmp_path, capsys):
    out = tmp_path / "cert"
    assert main(["certify", DEFAULT.id, "--out", str(out), "--json", "--shard-entries", "40"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["winner"] == "x" and summary["plies"] == 7
    assert summary["entries"] == yaml.safe_load((out / "index.yaml").read_text())["entries"]
    assert main(["check", str(out), "--ruleset", DEFAULT.id]) == 0
    assert "accepted" in capsys.readouterr().out
    # Certifying again gives byte-identical output.
    again = tmp_path / "again"
    assert main(["certify", DEFAULT.id, "--out", str(again), "--shard-entries", "40"]) == 0
    assert (again / "index.yaml").read_bytes() == (out / "index.yaml").read_bytes()


def test_check_rejects_with_exit_1_and_names_the_entry(tmp_path, capsys):
    out = tmp_path / "cert"
    assert main(["certify", DEFAULT.id, "--out", str(out)]) == 0
    index = yaml.safe_load((out / "index.yaml").read_text())
    path = out / index["shards"][-1]["file"]
    path.write_bytes(gzip.compress(b'{"position": 1}\n', mtime=0))
    capsys.readouterr()
    assert main(["check", str(out)]) == 1
    err = capsys.readouterr().err
    assert "rejected:" in err and "hash mismatch" in err and "line 1" in err


def test_bad_input_exits_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope")]) == 2
    assert "no such certificate directory" in capsys.readouterr().err
    assert main(["certify", "pop1-9x9-c8", "--out", str(tmp_path / "x")]) == 2
    assert "ruleset id" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("precious")
    assert main(["certify", DEFAULT.id, "--out", str(tmp_path / "full")]) == 2
    assert (tmp_path / "full" / "keep").read_text() == "precious"
    assert main(["check", str(tmp_path / "full"), "--ruleset", "pop1-bad"]) == 2


def test_no_win_within_the_plies_exits_1(tmp_path, capsys):
    assert main(["certify", DEFAULT.id, "--out", str(tmp_path / "c"), "--max-plies", "5"]) == 1
    assert "no forced win" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_budget_exits_3_keeps_the_state_and_resumes(tmp_path, capsys):
    out = tmp_path / "cert"
    state = tmp_path / "state.npz"
    args = ["certify", FIVE.id, "--out", str(out), "--state", str(state)]
    assert main([*args, "--max-nodes", "200"]) == 3
    assert "state kept in" in capsys.readouterr().err
    assert state.exists() and not out.exists()
    saved = ProofSearch(FIVE)
    saved.load(state)
    assert saved.nodes >= 200 and saved.proven[0]
    assert main(args) == 0
    assert check_certificate(out).ok


def test_certify_with_the_proof_number_search(tmp_path, capsys):
    rid = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    out = tmp_path / "cert"
    assert main(["certify", rid, "--out", str(out), "--method", "pns", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["method"] == "pns" and summary["winner"] == "x"
    assert check_certificate(out).ok


def test_certify_pns_budget_keeps_its_table_and_resumes(tmp_path, capsys):
    rid = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    out, state = tmp_path / "cert", tmp_path / "st.npz"
    args = ["certify", rid, "--out", str(out), "--method", "pns", "--winner", "x"]
    assert main([*args, "--state", str(state), "--max-nodes", "20"]) == 3
    assert "resume" in capsys.readouterr().err
    kept = tmp_path / "st.pns-x.npz"
    assert kept.exists() and not out.exists()
    assert main([*args, "--state", str(state)]) == 0
    assert check_certificate(out).ok


@pytest.mark.parametrize(
    "old, new",
    [
        (["--seconds", "600"], "--time-limit"),
        (["--nodes", "100000"], "--max-nodes"),
        (["--search", "dfs"], "--method"),
    ],
)
def test_certify_takes_its_old_spellings_for_a_release_and_says_so(old, new, tmp_path, capsys):
    rid = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"
    assert main(["certify", rid, "--out", str(tmp_path / "c"), *old]) == 0
    note = f"note: certify {old[0]} is now {new} (the old spelling goes in the next release)"
    assert note in capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("option", ["--time-limit", "--max-nodes", "--seconds", "--nodes"])
@pytest.mark.parametrize("value", ["0", "-5", "nan"])
def test_certify_budgets_must_be_positive(option, value, tmp_path, capsys):
    rid = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"
    with pytest.raises(SystemExit) as exit_:
        main(["certify", rid, "--out", str(tmp_path / "c"), option, value])
    assert exit_.value.code == 2
    assert f"argument {option}:" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_both_spellings_of_one_option_are_refused(tmp_path, capsys):
    rid = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"
    argv = ["certify", rid, "--out", str(tmp_path / "c"), "--nodes", "5", "--max-nodes", "5"]
    assert main(argv) == 2
    assert (
        "--nodes and --max-nodes are one option: give --max-nodes alone" in capsys.readouterr().err
    )
