"""Positions and actions, and their docs/rules.md notation.

A position is two bitboards (x, o), two bins and the player to move; under ``ringout`` the
checkers that left the game are whatever the board and bin do not account for.

>>> from harness.rules.ruleset import DEFAULT_RULESET as rs
>>> p = Position.from_text(rs, "..../.x../..../.... 7 8 o")
>>> p
Position(board=(0x20, 0x0), bins=(7, 8), turn=o)
>>> p.board, p.bins, p.turn
((32, 0), (7, 8), 1)
>>> Action.from_text(rs, "b2-c3")
Action(src=5, dst=10)
>>> Action(5, 10).text(rs), Action(None, 0).text(rs)
('b2-c3', 'a1')
"""

from __future__ import annotations

import re
from typing import NamedTuple

from harness.bounded import clip
from harness.rules.errors import NotationError
from harness.rules.notation import parse_square, square_name
from harness.rules.ruleset import Ruleset

_COUNT = re.compile(r"-?(?:0|[1-9][0-9]*)")

PLAYERS = ("x", "o")
X, O = 0, 1


class Position(NamedTuple):
    """A complete position: ``board[p]`` is player p's bitboard, ``bins[p]`` their bin."""

    board: tuple[int, int]
    bins: tuple[int, int]
    turn: int

    @classmethod
    def initial(cls, rs: Ruleset) -> Position:
        return cls((0, 0), (rs.checkers, rs.checkers), X)

    @property
    def occupied(self) -> int:
        return self.board[0] | self.board[1]

    @property
    def mover(self) -> str:
        return PLAYERS[self.turn]

    def on_board(self, player: int) -> int:
        return self.board[player].bit_count()

    def removed(self, rs: Ruleset, player: int) -> int:
        """Checkers of ``player`` that have left the game (non-zero only under ``ringout``)."""
        return rs.checkers - self.on_board(player) - self.bins[player]

    def placement_rank(self) -> int:
        """Checkers left in both bins: the certificate's sharding key."""
        return self.bins[0] + self.bins[1]

    def with_turn(self, turn: int) -> Position:
        return Position(self.board, self.bins, turn)

    # --- notation -----------------------------------------------------------------------

    def text(self, rs: Ruleset) -> str:
        """``....../..x.../… 7 8 o``: rows top to bottom, x's bin, o's bin, player to move."""
        x, o = self.board
        rows = []
        for r in range(rs.rows):
            row = []
            for c in range(rs.cols):
                bit = 1 << (r * rs.cols + c)
                row.append("x" if x & bit else "o" if o & bit else ".")
            rows.append("".join(row))
        return f"{'/'.join(rows)} {self.bins[0]} {self.bins[1]} {PLAYERS[self.turn]}"

    @classmethod
    def from_text(cls, rs: Ruleset, text: str) -> Position:
        """Parse and validate a position written in notation for ruleset ``rs``."""
        if not isinstance(text, str):
            raise NotationError(f"position must be text, not {type(text).__name__}")
        where = f"position {clip(text)}"
        fields = text.split()
        if len(fields) != 4:
            raise NotationError(
                f"{where}: expected 4 fields 'ROWS XBIN OBIN TURN', found {len(fields)}"
            )
        grid, xbin, obin, turn = fields
        rows = grid.split("/")
        if len(rows) != rs.rows:
            raise NotationError(
                f"{where}: {len(rows)} rows, the {rs.rows}x{rs.cols} board has {rs.rows}"
            )
        board = [0, 0]
        for r, row in enumerate(rows):
            if len(row) != rs.cols:
                raise NotationError(
                    f"{where}: row {r + 1} {clip(row)} has {len(row)} squares, expected {rs.cols}"
                )
            for c, ch in enumerate(row):
                if ch == "x":
                    board[0] |= 1 << (r * rs.cols + c)
                elif ch == "o":
                    board[1] |= 1 << (r * rs.cols + c)
                elif ch != ".":
                    raise NotationError(
                        f"{where}: {ch!r} at {square_name(r * rs.cols + c, rs.cols)} "
                        "is not one of '.', 'x', 'o'"
                    )
        bins = []
        for name, value in (("x", xbin), ("o", obin)):
            # ASCII digits, no leading zeros: one spelling per position (and never int() of
            # thousands of digits).
            if not _COUNT.fullmatch(value):
                raise NotationError(
                    f"{where}: {name}'s bin {clip(value)} is not a number "
                    "(ASCII digits, no leading zeros)"
                )
            count = int(value) if len(value) <= 3 else rs.checkers + 1
            if not 0 <= count <= rs.checkers:
                shown = count if len(value) <= 3 else clip(value)
                raise NotationError(f"{where}: {name}'s bin {shown} is outside 0-{rs.checkers}")
            bins.append(count)
        if turn not in PLAYERS:
            raise NotationError(f"{where}: player to move {turn!r} is not 'x' or 'o'")
        pos = cls((board[0], board[1]), (bins[0], bins[1]), PLAYERS.index(turn))
        for p, name in enumerate(PLAYERS):
            removed = pos.removed(rs, p)
            if removed < 0:
                raise NotationError(
                    f"{where}: {name} has {pos.on_board(p)} on the board and "
                    f"{pos.bins[p]} in the bin, more than the ruleset's {rs.checkers}"
                )
            if removed and not rs.removes:
                raise NotationError(
                    f"{where}: {name} has {removed} checker(s) neither on the board nor "
                    f"in the bin, but edge {rs.edge!r} removes none"
                )
        return pos

    def __repr__(self) -> str:
        # Notation needs the board size, which a position does not carry: show the bits.
        x, o = self.board
        return f"Position(board=({x:#x}, {o:#x}), bins={self.bins}, turn={PLAYERS[self.turn]})"


class Action(NamedTuple):
    """A placement (``src`` None), a move ``src``→``dst``, or a zero move (``src == dst``)."""

    src: int | None
    dst: int

    @property
    def is_placement(self) -> bool:
        return self.src is None

    def text(self, rs: Ruleset) -> str:
        if self.src is None:
            return square_name(self.dst, rs.cols)
        return f"{square_name(self.src, rs.cols)}-{square_name(self.dst, rs.cols)}"

    @classmethod
    def from_text(cls, rs: Ruleset, text: str) -> Action:
        if not isinstance(text, str):
            raise NotationError(f"action must be text, not {type(text).__name__}")
        parts = text.strip().split("-")
        if len(parts) == 1:
            return cls(None, parse_square(parts[0], rs.rows, rs.cols))
        if len(parts) == 2:
            return cls(
                parse_square(parts[0], rs.rows, rs.cols), parse_square(parts[1], rs.rows, rs.cols)
            )
        raise NotationError(f"action {clip(text)}: expected a square 'c3' or a move 'c3-d4'")
