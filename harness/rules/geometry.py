"""Edge geometry: ``step`` on each edge surface, and the tables the engine derives from it.

Squares are indices ``sq = row * cols + col`` (``a1`` = 0 is top-left); a bitboard has bit
``1 << sq`` set for each occupied square. Everything here depends only on the board size
and the edge, so one :class:`Geometry` is built per (rows, cols, edge) and cached.

>>> g = geometry_for(3, 4, "klein")
>>> g.step(0, 1, (-1, 1))   # b1 up-right: row wraps, column mirrored, column part flips
Step(row=2, col=1, dr=-1, dc=-1, wrapped=True, twisted=True)
>>> g.step(0, 0, (-1, 0)) is None
False
>>> geometry_for(3, 4, "blocked").step(0, 0, (-1, 0)) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from harness.rules.ruleset import Ruleset

# The eight directions (dr, dc), in a fixed order used by every table here.
DIRECTIONS: tuple[tuple[int, int], ...] = (
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
)

# Which of DIRECTIONS each movement pattern moves along (``anywhere`` has no directions).
PATTERN_DIRECTIONS: dict[str, tuple[int, ...]] = {
    "king": (0, 1, 2, 3, 4, 5, 6, 7),
    "rook": (1, 3, 4, 6),
    "bishop": (0, 2, 5, 7),
    "queen": (0, 1, 2, 3, 4, 5, 6, 7),
}

# The four line directions and the branch names docs/rules.md's lines are reported under.
LINE_DIRECTIONS: tuple[tuple[str, tuple[int, int]], ...] = (
    ("horizontal", (0, 1)),
    ("vertical", (1, 0)),
    ("diagonal", (1, 1)),
    ("antidiagonal", (1, -1)),
)


class Step(NamedTuple):
    """Where one step lands, the direction after it, and whether it crossed an edge."""

    row: int
    col: int
    dr: int
    dc: int
    wrapped: bool  # crossed a wrapping edge (torus, or either Klein edge)
    twisted: bool  # crossed Klein's top/bottom edge: the column was mirrored


class PopRay(NamedTuple):
    """One direction of a pop from a landing square: the neighbour and its push target.

    ``target`` is None when the push would leave the board (non-wrapping edges only).
    """

    neighbour: int
    target: int | None
    wrapped: bool
    twisted: bool


class Line(NamedTuple):
    squares: tuple[int, int, int]
    mask: int
    direction: str
    wrapped: bool


@dataclass(frozen=True)
class Geometry:
    rows: int
    cols: int
    edge: str
    # pop_rays[L]: the rays of a pop landing on L, with neighbours reached from two
    # directions already left out (docs/rules.md: such a square is not pushed).
    pop_rays: tuple[tuple[PopRay, ...], ...]
    lines: tuple[Line, ...]
    # Movement happens on the plain grid whatever the edge: neighbours and sliding rays.
    king_targets: tuple[tuple[int, ...], ...]
    slide_rays: tuple[tuple[tuple[int, ...], ...], ...]  # [sq][direction] -> squares in order
    border: int  # bitboard of the squares on the grid's border

    @property
    def squares(self) -> int:
        return self.rows * self.cols

    @property
    def full(self) -> int:
        return (1 << self.squares) - 1

    def step(self, row: int, col: int, direction: tuple[int, int]) -> Step | None:
        """docs/rules.md's ``step((r, c), (dr, dc))`` on this edge surface."""
        return surface_step(self.rows, self.cols, self.edge, row, col, direction)

    def square(self, row: int, col: int) -> int:
        return row * self.cols + col

    def coords(self, sq: int) -> tuple[int, int]:
        return divmod(sq, self.cols)


def surface_step(
    rows: int, cols: int, edge: str, row: int, col: int, direction: tuple[int, int]
) -> Step | None:
    dr, dc = direction
    r, c = row + dr, col + dc
    if edge == "torus":
        wrapped = not (0 <= r < rows and 0 <= c < cols)
        return Step(r % rows, c % cols, dr, dc, wrapped, False)
    if edge == "klein":
        wrapped = not (0 <= r < rows and 0 <= c < cols)
        c %= cols
        twisted = not 0 <= r < rows
        if twisted:
            r %= rows
            c = cols - 1 - c
            dc = -dc
        return Step(r, c, dr, dc, wrapped, twisted)
    if 0 <= r < rows and 0 <= c < cols:
        return Step(r, c, dr, dc, False, False)
    return None


def _pop_rays(rows: int, cols: int, edge: str, landing: int) -> tuple[PopRay, ...]:
    row, col = divmod(landing, cols)
    rays = []
    for direction in DIRECTIONS:
        first = surface_step(rows, cols, edge, row, col, direction)
        if first is None:
            continue
        second = surface_step(rows, cols, edge, first.row, first.col, (first.dr, first.dc))
        target = None if second is None else second.row * cols + second.col
        rays.append(
            PopRay(
                neighbour=first.row * cols + first.col,
                target=target,
                wrapped=first.wrapped or (second is not None and second.wrapped),
                twisted=first.twisted or (second is not None and second.twisted),
            )
        )
    # A neighbour reached from two directions is not pushed (possible only on boards smaller
    # than docs/rules.md allows; kept so the rule lives in one place if the bounds ever change).
    counts: dict[int, int] = {}
    for ray in rays:
        counts[ray.neighbour] = counts.get(ray.neighbour, 0) + 1
    return tuple(ray for ray in rays if counts[ray.neighbour] == 1)


def _lines(rows: int, cols: int, edge: str) -> tuple[Line, ...]:
    # Keyed by direction too: on a 3-row Klein bottle one set of squares can be a line in two
    # directions (a plain antidiagonal and a diagonal through the twist), and the corpus
    # reports each direction in which a line stands.
    seen: set[tuple[str, frozenset[int]]] = set()
    lines = []
    for name, direction in LINE_DIRECTIONS:
        for row in range(rows):
            for col in range(cols):
                first = surface_step(rows, cols, edge, row, col, direction)
                if first is None:
                    continue
                second = surface_step(rows, cols, edge, first.row, first.col, (first.dr, first.dc))
                if second is None:
                    continue
                squares = (
                    row * cols + col,
                    first.row * cols + first.col,
                    second.row * cols + second.col,
                )
                key = (name, frozenset(squares))
                if len(key[1]) < 3 or key in seen:
                    continue
                seen.add(key)
                mask = sum(1 << s for s in squares)
                lines.append(Line(squares, mask, name, first.wrapped or second.wrapped))
    return tuple(lines)


@cache
def geometry_for(rows: int, cols: int, edge: str) -> Geometry:
    """The cached :class:`Geometry` of a board size and edge."""
    n = rows * cols
    king = []
    slides = []
    border = 0
    for sq in range(n):
        row, col = divmod(sq, cols)
        if row in (0, rows - 1) or col in (0, cols - 1):
            border |= 1 << sq
        targets = []
        rays = []
        for dr, dc in DIRECTIONS:
            ray = []
            r, c = row + dr, col + dc
            while 0 <= r < rows and 0 <= c < cols:
                ray.append(r * cols + c)
                r, c = r + dr, c + dc
            rays.append(tuple(ray))
            if ray:
                targets.append(ray[0])
        king.append(tuple(sorted(targets)))
        slides.append(tuple(rays))
    return Geometry(
        rows=rows,
        cols=cols,
        edge=edge,
        pop_rays=tuple(_pop_rays(rows, cols, edge, sq) for sq in range(n)),
        lines=_lines(rows, cols, edge),
        king_targets=tuple(king),
        slide_rays=tuple(slides),
        border=border,
    )


def geometry(rs: Ruleset) -> Geometry:
    """The geometry of a ruleset."""
    return geometry_for(rs.rows, rs.cols, rs.edge)


def popcount(bits: int) -> int:
    return bits.bit_count()


def iter_bits(bits: int):
    """The set squares of a bitboard, lowest first."""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low
