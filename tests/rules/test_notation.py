import pytest
from hypothesis import given

from harness.rules import DEFAULT_RULESET, Action, NotationError, Position, Ruleset, legal_actions
from tests.rules.strategies import games

TORUS4 = DEFAULT_RULESET
RINGOUT = Ruleset.from_id("pop1-4x4-c4-ringout-continue-binempty-king-nozero-nojump")


@given(games())
def test_positions_and_actions_round_trip(game):
    rs = game.ruleset
    for pos in game.positions:
        assert Position.from_text(rs, pos.text(rs)) == pos
    for action in legal_actions(rs, game.position):
        assert Action.from_text(rs, action.text(rs)) == action


def test_example_of_rules_md():
    rs = Ruleset()
    pos = Position.from_text(rs, "....../..x.../....../....../....../...... 7 8 o")
    assert pos.board == (1 << 8, 0) and pos.bins == (7, 8) and pos.turn == 1


def test_removed_checkers_are_derived_under_ringout():
    pos = Position.from_text(RINGOUT, "x.../..../..../..o. 2 3 x")
    assert pos.removed(RINGOUT, 0) == 1 and pos.removed(RINGOUT, 1) == 0


@pytest.mark.parametrize(
    ("rs", "text", "fragment"),
    [
        (TORUS4, "..../..../.... 8 8 x", "3 rows"),
        (TORUS4, "..../..../..../... 8 8 x", "row 4 '...' has 3 squares"),
        (TORUS4, "..../..../..../..X. 8 8 x", "'X' at c4"),
        (TORUS4, "..../..../..../.... -1 8 x", "x's bin -1"),
        (TORUS4, "..../..../..../.... 8 9 x", "o's bin 9"),
        (TORUS4, "..../..../..../.... 8 eight x", "'eight' is not a number"),
        (TORUS4, "..../..../..../.... 8 8 z", "'z' is not 'x' or 'o'"),
        (TORUS4, "..../..../..../.... 8 8", "expected 4 fields"),
        (TORUS4, "x.../..../..../.... 8 8 o", "more than the ruleset's 8"),
        (TORUS4, "..../..../..../.... 7 8 x", "edge 'torus' removes none"),
        (RINGOUT, "xxxx/x.../..../.... 0 4 o", "more than the ruleset's 4"),
    ],
)
def test_malformed_positions_say_what_and_where(rs, text, fragment):
    with pytest.raises(NotationError) as err:
        Position.from_text(rs, text)
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("e1", "column 'e' is off"),
        ("a5", "row 5 is off"),
        ("a1-b2-c3", "expected a square"),
        ("A1", "expected a column letter"),
        ("a0", "expected a column letter"),
        ("", "expected"),
    ],
)
def test_malformed_actions(text, fragment):
    with pytest.raises(NotationError) as err:
        Action.from_text(TORUS4, text)
    assert fragment in str(err.value)
