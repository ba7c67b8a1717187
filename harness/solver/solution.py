"""A strongly solved ruleset as arrays (:class:`Solution`), saved and loaded as ``.npz``.

Both strong solvers give one: :mod:`harness.solver.retrograde` numbers classes as it finds
them, :mod:`harness.solver.compact` keeps them sorted (:class:`CompactSolution`, whose
look-ups are binary searches). Values are relative to the player to move.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.atomic import atomic_file
from harness.rules.engine import play_unchecked
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import engine
from harness.solver.classindex import KeyIndex, find_sorted
from harness.solver.states import DRAW, States, Successors

# Values relative to the player to move, as stored per class.
UNKNOWN, WIN, LOSS = 0, 1, 2  # UNKNOWN at the end means draw


FORMAT = 1


@dataclass
class Solution:
    """A strongly solved ruleset: value and plies of every reachable class.

    ``keys[i]`` is class i's key (:meth:`BatchEngine.class_keys`: canonical, from the mover's
    side), ``result[i]`` :data:`WIN`/:data:`LOSS` for the player to move or :data:`UNKNOWN`
    (a draw), ``ply_table[i]`` the actions to the end with best play (0 for draws), ``sides[i]``
    which colourings are reachable (bit 0: the representative's mover is x, bit 1: o),
    ``orbit[i]`` how many raw positions one colouring stands for. Class 0 is the initial one.
    """

    ruleset: Ruleset
    keys: np.ndarray
    result: np.ndarray
    ply_table: np.ndarray
    sides: np.ndarray
    orbit: np.ndarray
    edges: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    peak_rss: int = 0
    _index: KeyIndex | None = None

    @property
    def classes(self) -> int:
        return len(self.keys)

    @property
    def positions(self) -> int:
        """Raw reachable positions (docs/rules.md's count, every symmetric image counted)."""
        return self._count_sides(weighted=True)

    @property
    def canonical(self) -> int:
        """Reachable positions up to the board's symmetries (the turn still counts)."""
        return self._count_sides(weighted=False)

    def _count_sides(self, weighted: bool) -> int:
        # A chunk at a time: whole-array int64 temporaries would be 30 bytes a class, more
        # than the compact solver's columns.
        total = 0
        for lo in range(0, len(self.sides), 1 << 16):
            s = self.sides[lo : lo + (1 << 16)]
            counted = (s & 1).astype(np.int64) + (s >> 1 & 1)
            if weighted:
                counted *= self.orbit[lo : lo + (1 << 16)]
            total += int(counted.sum())
        return total

    @property
    def value(self) -> str:
        """The initial position's value: ``x``, ``o`` or ``draw`` (x is to move there)."""
        return {WIN: "x", LOSS: "o", UNKNOWN: "draw"}[int(self.result[0])]

    @property
    def plies(self) -> int | None:
        """Plies from the initial position with best play (None for a draw)."""
        return self.root_plies

    def index(self) -> KeyIndex:
        if self._index is None:
            self._index = KeyIndex.of_distinct(self.keys, engine(self.ruleset).key_words)
        return self._index

    def lookup(self, states: States) -> tuple[np.ndarray, np.ndarray]:
        """(value, plies) of a batch of positions: value codes 1 x wins, 2 o wins, 3 draw,
        -1 not reachable; plies 0 for draws and unreachable positions."""
        eng = engine(self.ruleset)
        me, them, mb, tb = states.mover_view()
        idx = self.index().find(eng.class_keys(me, them, mb, tb))
        found = idx >= 0
        rel = np.where(found, self.result[np.maximum(idx, 0)], -1)
        return absolute(states.turn, rel, np.where(found, self.ply_table[np.maximum(idx, 0)], 0))

    def value_of(self, pos: Position) -> tuple[str | None, int | None]:
        """``("x"|"o"|"draw", plies)`` of one position; ``(None, None)`` if not reachable.

        Plies are None for a draw.
        """
        value, plies = self.lookup(States.from_positions([pos]))
        v = int(value[0])
        if v < 0:
            return None, None
        return ("x", "o", "draw")[v - 1], (int(plies[0]) if v != DRAW else None)

    def rate_successors(self, states: States) -> tuple[Successors, np.ndarray, np.ndarray]:
        """Every legal action of a batch of positions, rated: ``(succ, value, plies)`` with
        ``succ`` from :meth:`BatchEngine.successors`, ``value[i]`` the value after action i
        (1 x wins, 2 o wins, 3 draw, -1 not solved) and ``plies[i]`` the plies to the end
        counted from the parent, the action included (0 for draws).

        The certificate builder's question, "which actions keep the win, and how fast", is
        ``value == winner`` and ``plies``; the fastest have the least plies.
        """
        return rate_successors(self.ruleset, self.lookup, states)

    def rated_actions(self, pos: Position) -> list[tuple[Action, str, int | None]]:
        """Every legal action of ``pos`` with its value (``x``/``o``/``draw``) and plies
        counted from ``pos`` (the action included; None for a draw)."""
        succ, value, plies = self.rate_successors(States.from_positions([pos]))
        if (value < 0).any():  # a reachable position's children are all solved
            raise ValueError(f"{self.ruleset.id}: {pos.text(self.ruleset)} is not reachable")
        return [
            (action, ("x", "o", "draw")[v - 1], None if v == DRAW else p)
            for action, v, p in zip(succ.actions(), value.tolist(), plies.tolist(), strict=True)
        ]

    def best_action(self, pos: Position) -> Action | None:
        """An optimal action: the fastest win, else a draw, else the slowest loss.

        >>> from harness.rules import Ruleset
        >>> from harness.solver.retrograde import solve
        >>> sol = solve(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
        >>> root = Position.initial(sol.ruleset)
        >>> action = sol.best_action(root)
        >>> [r for r in sol.rated_actions(root) if r[0] == action][0][1:]
        ('x', 7)
        """
        me = "xo"[pos.turn]
        best, best_score = None, None
        for action, value, plies in self.rated_actions(pos):
            if value == me:
                score = (2, -plies)
            elif value == "draw":
                score = (1, 0)
            else:
                score = (0, plies)
            if best_score is None or score > best_score:
                best, best_score = action, score
        return best

    def principal_line(self, limit: int = 200) -> list[Action]:
        """Optimal play from the initial position until the game ends (or ``limit``
        actions, for a draw, which goes on for ever)."""
        rs = self.ruleset
        pos = Position.initial(rs)
        line: list[Action] = []
        while len(line) < limit:
            action = self.best_action(pos)
            if action is None:
                break
            line.append(action)
            out = play_unchecked(rs, pos, action)
            if out.result is not None:
                break
            pos = out.next
        return line

    def summary(self) -> dict:
        return {
            "ruleset": self.ruleset.id,
            "value": self.value,
            "plies": self.plies,
            "positions": self.positions,
            "canonical": self.canonical,
            "classes": self.classes,
            "edges": self.edges,
            "seconds": round(self.seconds, 3),
            "cpu_seconds": round(self.timings["cpu"], 3) if "cpu" in self.timings else None,
        }

    @property
    def root_plies(self) -> int | None:
        return None if self.result[0] == UNKNOWN else int(self.ply_table[0])

    def save(self, path: str | os.PathLike) -> Path:
        """Write the solution as npz, atomically (temp file + rename).

        Arrays: ``keys`` (class keys, ``uint64``, or ``(n, words)`` for multi-word keys),
        ``result`` (1 the player to move wins, 2 loses, 0 draw), ``plies``, ``sides``,
        ``orbit``; scalars ``ruleset``, ``format``, ``value``, ``root_plies``, ``positions``.
        """
        path = Path(path)
        if path.suffix != ".npz":
            raise ValueError(f"--out {str(path)!r}: the file name must end in .npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        keys = self.keys
        if keys.dtype.names:
            keys = keys.view(np.uint64).reshape(len(keys), -1)
        with atomic_file(path) as fh:
            np.savez_compressed(
                fh,
                format=np.int64(FORMAT),
                ruleset=np.str_(self.ruleset.id),
                value=np.str_(self.value),
                root_plies=np.int64(-1 if self.root_plies is None else self.root_plies),
                positions=np.int64(self.positions),
                keys=keys,
                result=self.result,
                plies=self.ply_table,
                sides=self.sides,
                orbit=self.orbit,
                **self._extra_arrays(),
            )
        return path

    def _extra_arrays(self) -> dict:
        """Arrays a subclass saves beside the standard ones (see :meth:`load`)."""
        return {}

    @classmethod
    def load(cls, path: str | os.PathLike) -> Solution:
        """Read a file written by :meth:`save`."""
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != FORMAT:
                    raise ValueError(f"{path}: solution format {int(data['format'])} unknown")
                rs = Ruleset.from_id(str(data["ruleset"]))
                keys = data["keys"]
                eng = engine(rs)
                if eng.key_words > 1:
                    from harness.solver.states import KEY2, KEY3

                    keys = (
                        np.ascontiguousarray(keys)
                        .view(KEY2 if eng.key_words == 2 else KEY3)
                        .reshape(-1)
                    )
                if "sorted_keys" in data.files:
                    # Written by the compact solver: keys sorted, the root found by search.
                    cls = CompactSolution
                return cls(
                    rs,
                    keys,
                    data["result"],
                    data["plies"],
                    data["sides"],
                    data["orbit"],
                )
        except (OSError, KeyError, EOFError, ValueError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{path}: not a solution file ({exc})") from exc


def absolute(turn: np.ndarray, rel: np.ndarray, plies: np.ndarray):
    """Results relative to the player to move (:data:`WIN`, :data:`LOSS`, :data:`UNKNOWN`;
    -1 not reachable) as :meth:`Solution.lookup`'s (value, plies)."""
    mover_is_o = turn == 1
    value = np.full(len(rel), -1, dtype=np.int8)
    value[rel == UNKNOWN] = DRAW
    value[rel == WIN] = np.where(mover_is_o[rel == WIN], 2, 1)
    value[rel == LOSS] = np.where(mover_is_o[rel == LOSS], 1, 2)
    # As int64: the table may be a byte a class (the compact solver's), and callers add.
    return value, np.where(rel >= 0, plies, 0).astype(np.int64)


def rate_successors(
    rs: Ruleset, lookup: Callable[[States], tuple[np.ndarray, np.ndarray]], states: States
) -> tuple[Successors, np.ndarray, np.ndarray]:
    """:meth:`Solution.rate_successors` for any ``lookup`` of (value, plies) by position."""
    succ = engine(rs).successors(states)
    value, plies = lookup(succ.next)
    ended = succ.result != 0
    value = np.where(ended, succ.result, value).astype(np.int8)
    plies = np.where(ended, np.where(succ.result == DRAW, 0, 1), plies + 1)
    plies = np.where((value == DRAW) | (value < 0), 0, plies)
    return succ, value, plies


class CompactSolution(Solution):
    """A :class:`Solution` whose keys are sorted: look-ups are binary searches."""

    def index(self):
        return SortedFinder(self.keys)

    def _extra_arrays(self) -> dict:
        return {"sorted_keys": np.bool_(True)}

    @property
    def root(self) -> int:
        """The initial position's class (keys are sorted, so it is not class 0 here)."""
        eng = engine(self.ruleset)
        me, them, mb, tb = States.from_positions([Position.initial(self.ruleset)]).mover_view()
        return int(self.index().find(eng.class_keys(me, them, mb, tb))[0])

    @property
    def value(self) -> str:
        return {WIN: "x", LOSS: "o", UNKNOWN: "draw"}[int(self.result[self.root])]

    @property
    def root_plies(self) -> int | None:
        r = self.root
        return None if self.result[r] == UNKNOWN else int(self.ply_table[r])


class SortedFinder:
    def __init__(self, keys: np.ndarray):
        self.keys = keys

    def find(self, q: np.ndarray) -> np.ndarray:
        return find_sorted(self.keys, q)
