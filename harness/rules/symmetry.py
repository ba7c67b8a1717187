"""Symmetries of a ruleset, computed rather than listed.

A symmetry is a permutation of the squares that maps the whole game onto itself: pops,
lines and (non-wrapping) movement. Movement lives on the plain rectangle, so only the maps of
the rectangle can qualify (the 8 of the square, 4 of a rectangle); each candidate is kept
only when it maps every pop ray (landing, neighbour, target) and every line onto one of the
ruleset's own. On a Klein bottle that keeps the identity, both mirrors and the half turn.

>>> from harness.rules.ruleset import Ruleset
>>> len(symmetries(Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")))
8
>>> klein = Ruleset.from_id("pop1-4x4-c8-klein-continue-binempty-king-nozero-nojump")
>>> [s.name for s in symmetries(klein)]
['identity', 'half_turn', 'mirror_lr', 'mirror_tb']
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from harness.rules.geometry import geometry_for
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset

# Maps of the plain rectangle, as (name, (r, c, R, C) -> (r', c'), needs a square board).
_CANDIDATES = (
    ("identity", lambda r, c, R, C: (r, c), False),
    ("quarter_turn", lambda r, c, R, C: (c, R - 1 - r), True),
    ("half_turn", lambda r, c, R, C: (R - 1 - r, C - 1 - c), False),
    ("three_quarter_turn", lambda r, c, R, C: (C - 1 - c, r), True),
    ("mirror_lr", lambda r, c, R, C: (r, C - 1 - c), False),
    ("mirror_tb", lambda r, c, R, C: (R - 1 - r, c), False),
    ("transpose", lambda r, c, R, C: (c, r), True),
    ("antitranspose", lambda r, c, R, C: (C - 1 - c, R - 1 - r), True),
)


@dataclass(frozen=True)
class Symmetry:
    """A permutation of squares: ``perm[sq]`` is the image of ``sq``."""

    name: str
    perm: tuple[int, ...]

    def square(self, sq: int) -> int:
        return self.perm[sq]

    def bits(self, bits: int) -> int:
        out = 0
        while bits:
            low = bits & -bits
            out |= 1 << self.perm[low.bit_length() - 1]
            bits ^= low
        return out

    def position(self, pos: Position) -> Position:
        return Position((self.bits(pos.board[0]), self.bits(pos.board[1])), pos.bins, pos.turn)

    def action(self, action: Action) -> Action:
        src = None if action.src is None else self.perm[action.src]
        return Action(src, self.perm[action.dst])

    def inverse(self) -> Symmetry:
        inv = [0] * len(self.perm)
        for sq, image in enumerate(self.perm):
            inv[image] = sq
        return Symmetry(f"inverse_{self.name}", tuple(inv))


def _structure(rows: int, cols: int, edge: str):
    geo = geometry_for(rows, cols, edge)
    rays = {
        (landing, ray.neighbour, ray.target)
        for landing in range(geo.squares)
        for ray in geo.pop_rays[landing]
    }
    lines = {frozenset(line.squares) for line in geo.lines}
    return rays, lines


@cache
def _symmetries(rows: int, cols: int, edge: str) -> tuple[Symmetry, ...]:
    rays, lines = _structure(rows, cols, edge)
    found = []
    for name, f, needs_square in _CANDIDATES:
        if needs_square and rows != cols:
            continue
        perm = tuple(
            (lambda rc: rc[0] * cols + rc[1])(f(sq // cols, sq % cols, rows, cols))
            for sq in range(rows * cols)
        )

        def image(sq: int | None, perm: tuple[int, ...] = perm) -> int | None:
            return None if sq is None else perm[sq]

        if {(image(a), image(b), image(c)) for a, b, c in rays} != rays:
            continue
        if {frozenset(perm[s] for s in line) for line in lines} != lines:
            continue
        found.append(Symmetry(name, perm))
    return tuple(found)


def symmetries(rs: Ruleset) -> tuple[Symmetry, ...]:
    """The ruleset's symmetries, identity first."""
    return _symmetries(rs.rows, rs.cols, rs.edge)


def canonical(rs: Ruleset, pos: Position) -> tuple[Position, Symmetry]:
    """The least symmetric image of ``pos`` (by (x, o) bitboards) and the map that gives it."""
    best, best_sym = None, None
    for sym in symmetries(rs):
        image = sym.position(pos)
        if best is None or image.board < best.board:
            best, best_sym = image, sym
    assert best is not None and best_sym is not None
    return best, best_sym
