"""Hypothesis strategies shared by the rules tests: rulesets over every field, and positions
reached by random legal play (so they are consistent with the ruleset by construction)."""

from __future__ import annotations

import random

from hypothesis import assume
from hypothesis import strategies as st

from harness.rules import Action, Game, Ruleset
from harness.rules.ruleset import EDGES, MOVEMENTS, PATTERNS, STUCK_RULES

rulesets = st.builds(
    Ruleset,
    rows=st.integers(3, 8),
    cols=st.integers(3, 8),
    checkers=st.integers(3, 16),
    edge=st.sampled_from(EDGES),
    stuck=st.sampled_from(STUCK_RULES),
    movement=st.sampled_from(MOVEMENTS),
    pattern=st.sampled_from(PATTERNS),
    zero=st.booleans(),
    jump=st.booleans(),
)


def play_randomly(rs: Ruleset, seed: int, plies: int) -> Game:
    """A game of up to ``plies`` random legal actions (fewer if it ends)."""
    rng = random.Random(seed)
    game = Game(rs)
    for _ in range(plies):
        if game.is_terminal():
            break
        game.apply_action(rng.choice(game.legal_actions()))
    return game


@st.composite
def games(draw, rulesets=rulesets, max_plies: int = 60) -> Game:
    rs = draw(rulesets)
    return play_randomly(rs, draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, max_plies)))


@st.composite
def turns(draw) -> tuple[Game, Action]:
    """A game that is not over and one of its legal actions."""
    game = draw(games())
    assume(not game.is_terminal())
    actions = game.legal_actions()
    return game, actions[draw(st.integers(0, len(actions) - 1))]
