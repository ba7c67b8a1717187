import pytest
from hypothesis import given, settings

from harness.rules import Ruleset, apply_action
from harness.rules.symmetry import canonical, symmetries
from tests.rules.strategies import games, turns


@pytest.mark.parametrize(
    ("board", "edge", "count"),
    [
        ("4x4", "torus", 8),
        ("6x6", "torus", 8),
        ("4x6", "torus", 4),
        ("5x5", "blocked", 8),
        ("3x7", "ringout", 4),
        ("5x5", "klein", 4),
        ("4x6", "klein", 4),
    ],
)
def test_symmetry_counts(board, edge, count):
    rs = Ruleset.from_id(f"pop1-{board}-c8-{edge}-continue-binempty-king-nozero-nojump")
    syms = symmetries(rs)
    assert len(syms) == count
    assert syms[0].name == "identity"
    assert len({s.perm for s in syms}) == count


def test_klein_keeps_only_maps_that_respect_the_twist():
    rs = Ruleset.from_id("pop1-5x5-c8-klein-continue-binempty-king-nozero-nojump")
    assert {s.name for s in symmetries(rs)} == {"identity", "mirror_lr", "mirror_tb", "half_turn"}


@settings(max_examples=200, deadline=None)
@given(turns())
def test_every_symmetry_commutes_with_a_turn(turn):
    game, action = turn
    rs = game.ruleset
    pos = game.position
    out = apply_action(rs, pos, action)
    for sym in symmetries(rs):
        image = apply_action(rs, sym.position(pos), sym.action(action))
        assert image.next == sym.position(out.next), sym.name
        assert image.result == out.result, sym.name


@settings(max_examples=50, deadline=None)
@given(games())
def test_canonical_form_is_the_same_for_every_image(game):
    rs = game.ruleset
    pos = game.position
    best, sym = canonical(rs, pos)
    assert sym.position(pos) == best
    for s in symmetries(rs):
        assert canonical(rs, s.position(pos))[0] == best
