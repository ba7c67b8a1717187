"""Non-win sets grown with no strong solution: closed, accepted by the checker and by the
mirror of the Lean checker, refused where the player can win."""

from __future__ import annotations

import json

import pytest

from harness.cert.nonwin_builder import NonWinError
from harness.cert.nonwin_checker import check_nonwin
from harness.cert.nonwin_format import write_nonwin
from harness.cert.weak_builder import build_weak
from harness.cli import main
from harness.lean.render_nonwin import expand, mirror_check, read_nonwin_certificate
from harness.rules import Position, Ruleset
from harness.rules.symmetry import canonical
from harness.solver.retrograde import solve

REINC_4X4_C3 = "pop1-4x4-c3-reincarnation-continue-binempty-king-nozero-nojump"  # a draw
TORUS_3X4 = "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump"  # a draw
X_WINS = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"  # x wins in 7


def write(rs, builds, out):
    sets = [b.as_set(rs, 50) for b in builds]
    return write_nonwin(out, rs.id, Position.initial(rs).text(rs), sets)


@pytest.mark.parametrize("rid", [REINC_4X4_C3, TORUS_3X4])
def test_grown_sets_are_accepted(rid, tmp_path):
    rs = Ruleset.from_id(rid)
    builds = [build_weak(rs, p) for p in (0, 1)]
    write(rs, builds, tmp_path / "c")
    report = check_nonwin(tmp_path / "c")
    assert report.ok, report.errors
    data = read_nonwin_certificate(tmp_path / "c")
    expand(data)
    assert mirror_check(data)[0]
    # Every entry is a canonical image, once; the defender's entries name an action.
    for b in builds:
        assert len({canonical(rs, p)[0] for p in b.positions}) == len(b.positions)
        pairs = zip(b.positions, b.actions, strict=True)
        assert all((a is None) == (p.turn == b.player) for p, a in pairs)


def test_every_position_of_a_grown_set_is_not_won_for_the_player():
    rid = REINC_4X4_C3
    sol = solve(Ruleset.from_id(rid))
    for p in (0, 1):
        build = build_weak(sol.ruleset, p)
        for pos in build.positions[:400]:
            value, _ = sol.value_of(pos)
            assert value != "xo"[p], pos.text(sol.ruleset)


def test_where_the_player_wins_no_set_is_found(tmp_path):
    rs = Ruleset.from_id(X_WINS)
    with pytest.raises(NonWinError, match="no non-win set for x"):
        build_weak(rs, 0)
    # o cannot win there, and the grown set shows it (replies found lost were withdrawn).
    write(rs, [build_weak(rs, 1)], tmp_path / "c")
    assert check_nonwin(tmp_path / "c").ok


def test_a_bound_on_positions_grown():
    with pytest.raises(NonWinError, match="gave up after 100 positions"):
        build_weak(Ruleset.from_id(REINC_4X4_C3), 0, max_positions=100)


def test_certify_weak(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["certify", REINC_4X4_C3, "--weak", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["value"] == "draw" and summary["builder"] == "weak"
    assert main(["check", str(out)]) == 0
    assert main(["certify", X_WINS, "--weak", "--out", str(tmp_path / "w")]) == 1
    assert "no non-win set for x" in capsys.readouterr().err


def test_certify_weak_consolidates_its_sets_unless_told_not_to(tmp_path, capsys):
    """The grown sets are consolidated (never larger, still accepted); --no-consolidate
    writes them as grown."""
    rid = "pop1-4x4-c8-reincarnation-continue-binempty-king-nozero-nojump"
    sizes = {}
    for name, extra in (("small", []), ("grown", ["--no-consolidate"])):
        out = tmp_path / name
        assert main(["certify", rid, "--weak", "--out", str(out), "--json", *extra]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["consolidated"] is (name == "small")
        sizes[name] = summary["sets"]
        assert main(["check", str(out)]) == 0
        capsys.readouterr()
    rs = Ruleset.from_id(rid)
    assert sizes["grown"] == {"xo"[p]: len(build_weak(rs, p).positions) for p in (0, 1)}
    assert all(sizes["small"][p] <= sizes["grown"][p] for p in "xo")
    assert sizes["small"] != sizes["grown"]
