"""Perft: count the action sequences of a given length, the engine's standard regression test.

A game-ending action ends a sequence early: it counts at the depth where it happens only
if that is the last ply, like mate in chess perft. No history is kept (no repetition).

>>> from harness.rules import DEFAULT_RULESET, Position
>>> perft(DEFAULT_RULESET, Position.initial(DEFAULT_RULESET), 2)
240
"""

from __future__ import annotations

from harness.rules.engine import legal_actions, play_unchecked
from harness.rules.position import Position
from harness.rules.ruleset import Ruleset


def perft(rs: Ruleset, pos: Position, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for action in legal_actions(rs, pos):
        out = play_unchecked(rs, pos, action)
        if depth == 1:
            total += 1
        elif out.result is None:
            total += perft(rs, out.next, depth - 1)
    return total


def divide(rs: Ruleset, pos: Position, depth: int) -> dict[str, int]:
    """Perft split by first action, to find where two engines part ways."""
    out = {}
    for action in legal_actions(rs, pos):
        result = play_unchecked(rs, pos, action)
        out[action.text(rs)] = (
            1
            if depth == 1
            else 0
            if result.result is not None
            else perft(rs, result.next, depth - 1)
        )
    return out
