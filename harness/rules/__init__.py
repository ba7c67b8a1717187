"""The rules of Pop: rulesets, geometry, symmetries, notation and the reference engine."""

from harness.rules.engine import (
    Game,
    Outcome,
    Pop,
    apply_action,
    has_legal_action,
    legal_actions,
    movement_allowed,
    play_unchecked,
)
from harness.rules.errors import IllegalActionError, NotationError, RulesetError
from harness.rules.geometry import Geometry, geometry, geometry_for
from harness.rules.position import PLAYERS, Action, O, Position, X
from harness.rules.ruleset import DEFAULT_RULESET, RESEARCH_RULESET, Ruleset

__all__ = [
    "DEFAULT_RULESET",
    "PLAYERS",
    "RESEARCH_RULESET",
    "X",
    "O",
    "Action",
    "Game",
    "Geometry",
    "IllegalActionError",
    "NotationError",
    "Outcome",
    "Pop",
    "Position",
    "Ruleset",
    "RulesetError",
    "apply_action",
    "geometry",
    "geometry_for",
    "has_legal_action",
    "legal_actions",
    "movement_allowed",
    "play_unchecked",
]
