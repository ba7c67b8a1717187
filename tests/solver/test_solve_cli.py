"""``python -m harness solve``: output, exit codes and the values file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.cli import main
from harness.rules import Position, Ruleset
from harness.solver.solution import Solution

SMALL = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"
# Its numbers, from the oracle's brute-force solver (tests/oracle/pop_oracle.py).
SMALL_VALUE, SMALL_PLIES, SMALL_POSITIONS = "x", 7, 4390


def test_json(capsys):
    assert main(["solve", SMALL, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ruleset"] == SMALL
    assert (out["value"], out["plies"], out["positions"]) == (
        SMALL_VALUE,
        SMALL_PLIES,
        SMALL_POSITIONS,
    )
    assert out["seconds"] >= 0
    assert out["canonical"] <= out["positions"]


def test_text(capsys):
    assert main(["solve", SMALL]) == 0
    out = capsys.readouterr().out
    assert f"{SMALL}: x wins in 7 plies" in out
    assert "positions 4390" in out


def test_out_file(tmp_path, capsys):
    path = tmp_path / "sub" / "values.npz"
    assert main(["solve", SMALL, "--json", "--out", str(path)]) == 0
    capsys.readouterr()
    sol = Solution.load(path)
    rs = Ruleset.from_id(SMALL)
    assert sol.value_of(Position.initial(rs)) == (SMALL_VALUE, SMALL_PLIES)
    assert sorted(p.name for p in path.parent.iterdir()) == ["values.npz"]  # no temp left


def test_unknown_ruleset(capsys):
    assert main(["solve", "pop1-3x3-c3-moebius-continue-binempty-king-nozero-nojump"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "edge" in err[0] and "moebius" in err[0]


def test_bad_out_suffix(tmp_path, capsys):
    assert main(["solve", SMALL, "--out", str(tmp_path / "v.csv")]) == 2
    assert ".npz" in capsys.readouterr().err


def test_budget_exit_code_keeps_the_old_file(tmp_path, capsys):
    path = tmp_path / "values.npz"
    assert main(["solve", SMALL, "--out", str(path)]) == 0
    before = path.read_bytes()
    rid = "pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump"
    assert main(["solve", rid, "--out", str(path), "--max-positions", "100"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert "budget" in err[-1]
    assert path.read_bytes() == before


def test_time_budget(capsys):
    rid = "pop1-4x4-c5-torus-continue-binempty-king-nozero-nojump"
    assert main(["solve", rid, "--time-limit", "0.000001"]) == 3
    assert "--time-limit" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--max-positions=0", "--time-limit=-1", "--memory-limit=x"])
def test_bad_budget_values(flag, capsys):
    with pytest.raises(SystemExit) as info:
        main(["solve", SMALL, flag])
    assert info.value.code == 2


def test_values_file_layout(tmp_path, capsys):
    path = tmp_path / "v.npz"
    assert main(["solve", SMALL, "--out", str(path)]) == 0
    with np.load(path) as data:
        assert str(data["ruleset"]) == SMALL
        assert int(data["positions"]) == SMALL_POSITIONS
        assert set(np.unique(data["result"]).tolist()) <= {0, 1, 2}
        assert len(data["keys"]) == len(data["result"]) == len(data["plies"])


def test_proof_method_agrees_with_retrograde(capsys):
    rid = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    assert main(["solve", rid, "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert main(["solve", rid, "--json", "--method", "proof", "--max-plies", "9"]) == 0
    proof = json.loads(capsys.readouterr().out)
    assert proof["positions"] is None
    assert (proof["value"], proof["plies"]) == (full["value"], full["plies"])
    assert full["positions"] > 0


def test_proof_without_a_win_in_the_plies_is_a_budget(capsys):
    rid = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    assert main(["solve", rid, "--method", "proof", "--max-plies", "3"]) == 3
    assert "--max-plies" in capsys.readouterr().err


def test_proof_has_no_values_file(tmp_path, capsys):
    out = tmp_path / "v.npz"
    assert main(["solve", SMALL, "--method", "proof", "--out", str(out)]) == 2
    assert not out.exists()


def test_auto_method_enumerates_small_graphs_and_searches_big_ones():
    from harness.rules import Ruleset
    from harness.solver.choice import AUTO_CLASS_LIMIT, class_bound

    small = Ruleset.from_id("pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump")
    big = Ruleset.from_id("pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump")
    assert class_bound(small) <= AUTO_CLASS_LIMIT < class_bound(big)
    # The bound really bounds: the solver's own count of positions up to symmetry.
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "harness", "solve", small.id, "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    report = json.loads(done.stdout)
    assert report["method"] == "retrograde"
    assert report["canonical"] <= class_bound(small)


def test_compact_method_agrees_and_says_so(tmp_path, capsys):
    assert main(["solve", SMALL, "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    work = tmp_path / "work"
    assert main(["solve", SMALL, "--json", "--method", "compact", "--workdir", str(work)]) == 0
    compact_report = json.loads(capsys.readouterr().out)
    assert compact_report["method"] == "compact" and full["method"] == "retrograde"
    assert (
        compact_report["value"],
        compact_report["plies"],
        compact_report["positions"],
        compact_report["classes"],
    ) == (
        full["value"],
        full["plies"],
        full["positions"],
        full["classes"],
    )
    assert compact_report["disk_bytes"] > 0 and (work / "complete.json").exists()


def test_compact_on_threads_agrees_and_other_methods_refuse_threads(capsys):
    assert main(["solve", SMALL, "--json", "--method", "compact"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["solve", SMALL, "--json", "--threads", "2"]) == 0  # auto: compact on threads
    two = json.loads(capsys.readouterr().out)
    assert (one["threads"], two["threads"], two["method"]) == (1, 2, "compact")
    assert (two["value"], two["plies"], two["positions"], two["classes"]) == (
        one["value"],
        one["plies"],
        one["positions"],
        one["classes"],
    )
    for method in ("retrograde", "pns"):
        assert main(["solve", SMALL, "--method", method, "--threads", "2"]) == 2
        err = capsys.readouterr().err
        assert "--threads 2" in err and len(err.strip().splitlines()) == 1


def test_compact_workdir_of_another_ruleset_is_bad_input(tmp_path, capsys):
    work = tmp_path / "work"
    assert main(["solve", SMALL, "--method", "compact", "--workdir", str(work)]) == 0
    capsys.readouterr()
    other = "pop1-4x4-c3-klein-continue-binempty-king-nozero-nojump"
    assert main(["solve", other, "--method", "compact", "--workdir", str(work)]) == 2
    err = capsys.readouterr().err
    assert "holds a solve of" in err and len(err.strip().splitlines()) == 1
    assert main(["solve", SMALL, "--method", "retrograde", "--workdir", str(work)]) == 2


def test_pns_method_agrees_and_a_spent_budget_is_exit_3(capsys):
    rid = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    assert main(["solve", rid, "--json", "--method", "pns", "--max-plies", "9"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["value"], got["method"]) == ("x", "pns") and got["plies"] <= 9
    big = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"
    assert main(["solve", big, "--method", "pns", "--max-nodes", "50"]) == 3
    assert "budget" in capsys.readouterr().err
    assert main(["solve", rid, "--method", "pns", "--max-plies", "5"]) == 3
    assert "not known" in capsys.readouterr().err


def test_auto_picks_compact_between_the_limits():
    from harness.solver.choice import pick_method

    c5 = Ruleset.from_id("pop1-5x5-c5-reincarnation-continue-binempty-king-nozero-nojump")
    assert pick_method(c5) == "compact"
    assert pick_method(Ruleset.from_id(SMALL)) == "retrograde"


@pytest.mark.parametrize("method", ["proof", "pns"])
def test_winner_limits_the_search_to_one_player(method, capsys):
    # x wins 4x4 c8 torus in 7: found when x is searched, never when only o is.
    rid = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    args = ["solve", rid, "--json", "--method", method, "--max-plies", "9"]
    assert main([*args, "--winner", "x"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == "x"
    assert main([*args, "--winner", "o"]) == 3
    assert "no forced win for o within 9 plies" in capsys.readouterr().err


def test_winner_needs_a_proof_search(capsys):
    assert main(["solve", SMALL, "--method", "compact", "--winner", "x"]) == 2
    err = capsys.readouterr().err
    assert "--winner" in err and "--method proof or pns" in err and len(err.splitlines()) == 1
    assert main(["solve", SMALL, "--winner", "x"]) == 2  # auto picks a strong solve here
    assert "not retrograde (auto's pick)" in capsys.readouterr().err


def test_no_deepening_searches_the_one_bound(capsys):
    # Deepening finds x's 7-ply win on 4x4 c8 torus after disproving 1, 3 and 5 plies; the
    # bound of 9 alone is searched with other nodes, and its win is within 9 plies.
    rid = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    args = ["solve", rid, "--json", "--method", "pns", "--winner", "x", "--max-plies", "9"]
    assert main(args) == 0
    deepened = json.loads(capsys.readouterr().out)
    assert main([*args, "--no-deepening"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["value"] == "x" and one["plies"] <= 9 and one["nodes"] != deepened["nodes"]
    big = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"
    assert main(["solve", big, "--method", "pns", "--no-deepening", "--max-nodes", "50"]) == 3
    assert "no bound done" in capsys.readouterr().err
    assert main(["solve", rid, "--method", "proof", "--no-deepening"]) == 2
    assert "needs --method pns, not proof" in capsys.readouterr().err


def test_the_old_method_name_lean_runs_compact_and_says_so(capsys):
    assert main(["solve", SMALL, "--json", "--method", "lean"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["method"] == "compact"
    assert out.err.strip() == (
        "note: --method lean is the old name of --method compact (kept for one release)"
    )
