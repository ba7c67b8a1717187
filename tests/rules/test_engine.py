"""Unit tests per rule branch (the worked cases of the corpus), legality, the Game object,
and properties that must hold for every ruleset."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from harness.rules import (
    DEFAULT_RULESET,
    Action,
    Game,
    IllegalActionError,
    Position,
    Ruleset,
    apply_action,
    has_legal_action,
    legal_actions,
)
from harness.rules.corpus import HAND_MADE
from tests.rules.strategies import games, turns


@pytest.mark.parametrize("case", HAND_MADE, ids=lambda c: c.name)
def test_worked_case(case):
    rs = Ruleset.from_id(case.ruleset)
    pos = Position.from_text(rs, case.position)
    history = {Position.from_text(rs, t) for t in case.history}
    out = apply_action(rs, pos, Action.from_text(rs, case.action), history)
    assert out.next.text(rs) == case.next
    assert out.result == case.result
    assert case.branches <= out.branches
    texts = {a.text(rs) for a in legal_actions(rs, pos)}
    assert case.action in texts
    assert not texts & set(case.absent_actions)


def test_without_history_the_repetition_case_plays_on():
    case = next(c for c in HAND_MADE if c.name == "repetition_draw")
    rs = Ruleset.from_id(case.ruleset)
    out = apply_action(rs, Position.from_text(rs, case.position), Action.from_text(rs, case.action))
    assert out.result is None and "repetition_draw" not in out.branches


@pytest.mark.parametrize(
    ("ruleset", "position", "action"),
    [
        (DEFAULT_RULESET.id, "x.../..../..../.... 7 8 o", "a1"),  # occupied
        (DEFAULT_RULESET.id, "x.../..../..../.... 7 8 o", "a1-b1"),  # not o's checker
        (DEFAULT_RULESET.id, "x.../..../..../.... 7 8 x", "a1-b1"),  # bin not empty
        (
            "pop1-4x4-c3-blocked-continue-nomove-king-nozero-nojump",
            "xxx./..o./o.o./.... 0 0 o",
            "a3-a4",
        ),  # nomove
        (
            "pop1-4x4-c3-blocked-continue-always-king-nozero-nojump",
            "x.../..../..../.... 2 3 x",
            "a1-c3",
        ),  # not a king step
        (
            "pop1-4x4-c3-blocked-continue-always-king-nozero-nojump",
            "x.../..../..../.... 2 3 x",
            "a1-a1",
        ),  # zero move not allowed
        (
            "pop1-4x4-c3-blocked-continue-always-bishop-nozero-nojump",
            "x.../.o../..../.... 2 2 x",
            "a1-c3",
        ),  # blocked slide without jump
    ],
)
def test_illegal_actions_are_refused(ruleset, position, action):
    rs = Ruleset.from_id(ruleset)
    with pytest.raises(IllegalActionError, match="not legal"):
        apply_action(rs, Position.from_text(rs, position), Action.from_text(rs, action))


def test_movement_only_when_allowed():
    binempty = Ruleset.from_id("pop1-4x4-c3-blocked-continue-binempty-king-nozero-nojump")
    pos = Position.from_text(binempty, "x.../..../..../.... 2 3 x")
    assert all(a.is_placement for a in legal_actions(binempty, pos))
    always = binempty.with_(movement="always")
    acts = legal_actions(always, pos)
    assert {a.text(always) for a in acts if not a.is_placement} == {"a1-b1", "a1-a2", "a1-b2"}
    emptied = Position.from_text(binempty, "xxx./..../..../.... 0 3 x")
    assert all(not a.is_placement for a in legal_actions(binempty, emptied))


def test_jump_offers_every_empty_square_along_the_ray():
    rs = Ruleset.from_id("pop1-5x5-c8-blocked-continue-always-rook-nozero-jump")
    pos = Position.from_text(rs, "xo.o./...../...../...../..... 7 6 x")
    moves = {a.text(rs) for a in legal_actions(rs, pos) if not a.is_placement}
    assert {"a1-c1", "a1-e1"} <= moves and "a1-b1" not in moves


def test_game_repetition_undo_and_returns():
    case = next(c for c in HAND_MADE if c.name == "repetition_draw")
    rs = Ruleset.from_id(case.ruleset)
    game = Game(rs, Position.from_text(rs, case.history[0]))
    for text in ("a1-b1", "d5-d4", "b1-a1"):
        assert game.apply_action(text).result is None
    assert game.apply_action("d4-d5").result == "draw"
    assert game.is_terminal() and game.legal_actions() == [] and game.returns() == [0.0, 0.0]
    with pytest.raises(IllegalActionError, match="game is over"):
        game.apply_action("a1-b1")
    game.undo()
    assert not game.is_terminal() and game.position.text(rs) == case.position
    assert len(game.history) == 4


def test_returns_after_a_win():
    case = next(c for c in HAND_MADE if c.name == "line_vertical_opponent_wins")
    rs = Ruleset.from_id(case.ruleset)
    game = Game(rs, Position.from_text(rs, case.position))
    game.apply_action(case.action)
    assert game.returns() == [-1.0, 1.0] and game.current_player() == -4


def test_undo_on_a_new_game_is_an_error():
    with pytest.raises(IllegalActionError, match="no action"):
        Game(DEFAULT_RULESET).undo()


@settings(max_examples=150, deadline=None)
@given(turns())
def test_a_turn_conserves_checkers_and_never_stacks(turn):
    game, action = turn
    rs = game.ruleset
    pos = game.position
    out = apply_action(rs, pos, action)
    nxt = out.next
    assert nxt.board[0] & nxt.board[1] == 0
    assert nxt.occupied >> rs.squares == 0
    for p in (0, 1):
        removed_before, removed_after = pos.removed(rs, p), nxt.removed(rs, p)
        assert removed_after >= removed_before >= 0
        if not rs.removes:
            assert removed_after == 0
        assert nxt.on_board(p) + nxt.bins[p] + removed_after == rs.checkers
    # Determinism: the same turn gives the same outcome.
    assert apply_action(rs, pos, action) == out
    # The turn as handed over: the opponent, or the mover again after a pass.
    if out.result is None:
        assert nxt.turn == (pos.turn if out.passed else 1 - pos.turn)
        assert has_legal_action(rs, nxt)
    else:
        assert nxt.turn == 1 - pos.turn


@settings(max_examples=100, deadline=None)
@given(games())
def test_has_legal_action_agrees_with_the_list(game):
    rs = game.ruleset
    for pos in game.positions:
        for turn in (0, 1):
            p = pos.with_turn(turn)
            assert has_legal_action(rs, p) == bool(legal_actions(rs, p))
