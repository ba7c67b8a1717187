"""Perft count tables: golden numbers that any change to the rules engine must keep.

The numbers were produced by this engine and agree with the independent oracle in
tests/oracle to full depth (checked once, slowly); test_table_matches_the_oracle re-checks the
shallow levels on every run. Lines, falls back into the bin and blocked slides make them
differ from the plain products of empty squares.
"""

import pytest

from harness.rules import Position, Ruleset
from harness.rules.perft import divide, perft
from tests.oracle import pop_oracle as oracle

TABLE = [
    ("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump", [9, 72, 504, 3024, 15120, 51840]),
    ("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump", [16, 240, 3360, 43680]),
    ("pop1-4x4-c3-blocked-continue-always-queen-zero-nojump", [16, 240, 5600, 124900]),
    ("pop1-4x4-c4-reincarnation-draw-binempty-rook-nozero-jump", [16, 240, 3396, 45720]),
    ("pop1-4x4-c3-ringout-continue-always-anywhere-nozero-nojump", [16, 240, 5712, 116528]),
    ("pop1-3x4-c4-klein-continue-binempty-bishop-nozero-jump", [12, 132, 1320, 11880, 95040]),
]


@pytest.mark.parametrize(("ruleset", "counts"), TABLE, ids=[t[0] for t in TABLE])
def test_perft(ruleset, counts):
    rs = Ruleset.from_id(ruleset)
    start = Position.initial(rs)
    assert [perft(rs, start, d) for d in range(1, len(counts) + 1)] == counts


def test_divide_sums_to_perft():
    rs = Ruleset.from_id(TABLE[0][0])
    start = Position.initial(rs)
    assert sum(divide(rs, start, 3).values()) == perft(rs, start, 3)


def _oracle_perft(rs, pos, depth):
    if depth == 0:
        return 1
    total = 0
    for action in oracle.legal_actions(rs, pos):
        out = oracle.play(rs, pos, action, check=False)
        if depth == 1:
            total += 1
        elif out.result is None:
            total += _oracle_perft(rs, out.next, depth - 1)
    return total


@pytest.mark.parametrize(("ruleset", "counts"), TABLE, ids=[t[0] for t in TABLE])
def test_table_matches_the_oracle(ruleset, counts):
    rs = oracle.parse_ruleset(ruleset)
    start = oracle.initial_position(rs)
    depth = min(len(counts), 3)
    assert [_oracle_perft(rs, start, d) for d in range(1, depth + 1)] == counts[:depth]
