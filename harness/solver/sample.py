"""Random rulesets and positions, for differential tests and benchmarks of the batch engine.

>>> import random
>>> rng = random.Random(0)
>>> rs = random_ruleset(rng)
>>> pos = random_position(rng, rs)
>>> pos.removed(rs, 0) >= 0 and pos.removed(rs, 1) >= 0
True
"""

from __future__ import annotations

import random

from harness.rules import Position, Ruleset
from harness.rules.ruleset import EDGES, MOVEMENTS, PATTERNS, STUCK_RULES


def random_ruleset(rng: random.Random, max_side: int = 5) -> Ruleset:
    rows = rng.randint(3, max_side)
    cols = rng.randint(3, max_side)
    return Ruleset(
        rows=rows,
        cols=cols,
        checkers=rng.randint(3, 8),
        edge=rng.choice(EDGES),
        stuck=rng.choice(STUCK_RULES),
        movement=rng.choice(MOVEMENTS),
        pattern=rng.choice(PATTERNS),
        zero=rng.random() < 0.5,
        jump=rng.random() < 0.5,
    )


def every_field_rulesets(rng: random.Random) -> list[Ruleset]:
    """At least one ruleset with each value of each field (other fields random)."""
    out = []
    for edge in EDGES:
        for stuck in STUCK_RULES:
            out.append(random_ruleset(rng).with_(edge=edge, stuck=stuck))
    for movement in MOVEMENTS:
        for pattern in PATTERNS:
            for zero in (False, True):
                out.append(
                    random_ruleset(rng).with_(
                        movement=movement, pattern=pattern, zero=zero, jump=rng.random() < 0.5
                    )
                )
    return out


def random_position(rng: random.Random, rs: Ruleset) -> Position:
    """A random position of ``rs``: any counts that fit, crowded boards included."""
    n = rs.squares
    squares = list(range(n))
    rng.shuffle(squares)
    on = [rng.randint(0, min(rs.checkers, n // 2)), 0]
    on[1] = rng.randint(max(0, on[0] - 1), min(rs.checkers, n - on[0]))
    if rng.random() < 0.5:
        on.reverse()
    boards = [0, 0]
    for p in (0, 1):
        for _ in range(on[p]):
            boards[p] |= 1 << squares.pop()
    bins = []
    for p in (0, 1):
        left = rs.checkers - on[p]
        bins.append(rng.randint(0, left) if rs.removes else left)
    if rng.random() < 0.3:  # the movement phase is where most rule branches live
        bins = [0 if rs.removes else b for b in bins]
    return Position((boards[0], boards[1]), (bins[0], bins[1]), rng.randint(0, 1))
