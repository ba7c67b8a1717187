"""Many positions at once as columns (:class:`States`), and what one batch of actions gives:
the judged actions of each position (:class:`Expansion`) or the positions after them
(:class:`Successors`). Result codes are absolute in ``States``, relative to the mover in
``Expansion``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset

# Result codes, absolute (in States / Successors): no result, x wins, o wins, draw.
NONE, X_WINS, O_WINS, DRAW = 0, 1, 2, 3


RESULT_TEXT = {NONE: None, X_WINS: "x", O_WINS: "o", DRAW: "draw"}


# Result codes relative to the player who acted (in Expansion).
MOVER_WINS, MOVER_LOSES = 1, 2


KEY2 = np.dtype([("hi", "<u8"), ("lo", "<u8")])  # a two-word key, ordered hi then lo


KEY3 = np.dtype([("hi", "<u8"), ("mid", "<u8"), ("lo", "<u8")])  # 8x8 boards with many checkers


@dataclass
class States:
    """A batch of positions: ``x``, ``o`` (uint64 bitboards), ``xb``, ``ob``, ``turn`` (int8)."""

    x: np.ndarray
    o: np.ndarray
    xb: np.ndarray
    ob: np.ndarray
    turn: np.ndarray

    def __len__(self) -> int:
        return len(self.x)

    @classmethod
    def from_positions(cls, positions) -> States:
        positions = list(positions)
        return cls(
            np.array([p.board[0] for p in positions], dtype=np.uint64),
            np.array([p.board[1] for p in positions], dtype=np.uint64),
            np.array([p.bins[0] for p in positions], dtype=np.int8),
            np.array([p.bins[1] for p in positions], dtype=np.int8),
            np.array([p.turn for p in positions], dtype=np.int8),
        )

    def positions(self) -> list[Position]:
        return [
            Position((int(a), int(b)), (int(c), int(d)), int(t))
            for a, b, c, d, t in zip(
                self.x.tolist(),
                self.o.tolist(),
                self.xb.tolist(),
                self.ob.tolist(),
                self.turn.tolist(),
                strict=True,
            )
        ]

    def take(self, idx: np.ndarray) -> States:
        return States(self.x[idx], self.o[idx], self.xb[idx], self.ob[idx], self.turn[idx])

    @classmethod
    def from_mover(cls, me, them, mb, tb, turn) -> States:
        """Positions given from the mover's side; ``turn`` is who ``me`` is (0 x, 1 o)."""
        turn = np.asarray(turn, dtype=np.int8)
        is_o = turn == 1
        return cls(
            np.where(is_o, them, me).astype(np.uint64),
            np.where(is_o, me, them).astype(np.uint64),
            np.where(is_o, tb, mb).astype(np.int8),
            np.where(is_o, mb, tb).astype(np.int8),
            turn,
        )

    def mover_view(self):
        """(me, them, my bin, their bin): the batch from the side of the player to move."""
        is_o = self.turn == 1
        return (
            np.where(is_o, self.o, self.x),
            np.where(is_o, self.x, self.o),
            np.where(is_o, self.ob, self.xb),
            np.where(is_o, self.xb, self.ob),
        )


@dataclass
class Expansion:
    """Every legal action of a batch, from the side of the player who acts.

    Row i is action (``src[i]`` or -1 for a placement, ``dst[i]``) in position
    ``parent[i]``; ``me``/``them``/``mb``/``tb`` are the board and bins afterwards with
    "me" still the player who acted; ``result`` is 0 (none), :data:`MOVER_WINS`,
    :data:`MOVER_LOSES` or :data:`DRAW`; ``passed`` says the opponent was stuck under
    ``continue`` and the actor moves again.
    """

    parent: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    me: np.ndarray
    them: np.ndarray
    mb: np.ndarray
    tb: np.ndarray
    result: np.ndarray
    passed: np.ndarray

    def __len__(self) -> int:
        return len(self.parent)

    def child_view(self, rows: np.ndarray | None = None):
        """(me, them, mb, tb) of each child (of ``rows`` only, when given) from the side of
        its player to move."""
        if rows is None:
            keep_side, me, them, mb, tb = self.passed, self.me, self.them, self.mb, self.tb
        else:
            keep_side, me, them = self.passed[rows], self.me[rows], self.them[rows]
            mb, tb = self.mb[rows], self.tb[rows]
        return (
            np.where(keep_side, me, them),
            np.where(keep_side, them, me),
            np.where(keep_side, mb, tb),
            np.where(keep_side, tb, mb),
        )


@dataclass
class Successors:
    """Every legal action of a batch of positions and what it leads to (absolute terms).

    ``parent[i]`` indexes the input batch; ``src[i]`` is -1 for a placement; ``next`` is the
    position as handed over (the mover again after a pass, the mover's opponent after a
    game-ending action); ``result`` is :data:`NONE`, :data:`X_WINS`, :data:`O_WINS` or
    :data:`DRAW`. Rows are ordered by parent and then as
    :func:`harness.rules.legal_actions` lists them (placements by square, then moves by
    source and destination).
    """

    parent: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    next: States
    result: np.ndarray
    passed: np.ndarray

    def __len__(self) -> int:
        return len(self.parent)

    def actions(self) -> list[Action]:
        return [
            Action(None if s < 0 else s, d)
            for s, d in zip(self.src.tolist(), self.dst.tolist(), strict=True)
        ]

    def action_texts(self, rs: Ruleset) -> list[str]:
        return [a.text(rs) for a in self.actions()]

    def next_positions(self) -> list[Position]:
        return self.next.positions()

    def results(self) -> list[str | None]:
        return [RESULT_TEXT[r] for r in self.result.tolist()]
