"""How many classes a ruleset reaches, estimated by sampling, slice by slice, before anyone
solves it.

A *slice* is every position with ``a`` checkers of the player to move and ``b`` of the other
on the board (the bins follow, or, where checkers leave the game, are drawn too). Its
positions are counted exactly; a uniform sample of them is tested for reachability by a
backward search from each to the initial position:

- the parents of a batch of classes come from the retrograde solvers' un-playing
  (:func:`~harness.solver.compact.runner.unplay_batch`, which proposes parents and plays
  them forward to check), minus those at which the game had ended (a line, a player short
  of checkers on ringout: :meth:`~harness.solver.batch.BatchEngine.judge`);
- a beam search keeps, per sample, the ``width`` distinct parents that have taken the fewest
  checkers from their bins, then with the fewest on the board (ties at random), for the
  next ply back, for at most twice the checkers taken, and 6, plies (:func:`plies_back`).

A sample the search brings to the initial position is reachable: the path found is a game.
One it does not may still be reachable (the beam dropped the way), so the estimate leans
low; on 5x5 c4 reincarnation the search missed 18 of 858 reachable samples (2%) and found
no unreachable one. Where checkers leave the game (ringout) the un-playing proposes far more
parents that were never reached (checkers put back that had fallen off), the beam misses
most ways back, and the estimate is a lower bound only: 2,878 classes on 4x4 c3 ringout,
which has 4,773. Each reached sample counts ``1 / orbit`` of a class (a class is its
orbit of positions under the board's symmetries), so a slice's classes are estimated as

    positions of the slice x mean(reached / orbit)

with a standard error from the samples' spread; the slices' add up, their errors in
quadrature.

>>> from harness.rules import Ruleset
>>> rs = Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump")
>>> est = estimate_classes(rs, samples=20, seed=1)
>>> est.slices[0].a, est.slices[0].b, est.slices[0].positions, est.slices[0].classes
(0, 0, 1, 1.0)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import comb, sqrt

import numpy as np

from harness.rules.position import Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import NONE, engine
from harness.solver.compact.runner import unplay_batch
from harness.solver.compact.unplay import Unplayer
from harness.solver.partitioned.keys import firsts, order
from harness.solver.states import States

SAMPLES = 400  # a slice's samples (the default of estimate --samples)
WIDTH = 64  # parents a sample keeps per ply back


@dataclass
class SliceEstimate:
    """One slice: ``a`` checkers of the player to move on the board, ``b`` of the other."""

    a: int
    b: int
    positions: int  # every position of the slice (from the mover's side)
    samples: int
    reached: int  # samples the search brought back to the initial position
    classes: float  # the estimate
    error: float  # its standard error

    def as_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "positions": self.positions,
            "samples": self.samples,
            "reached": self.reached,
            "classes": round(self.classes, 1),
            "error": round(self.error, 1),
        }


@dataclass
class ClassEstimate:
    """The estimate of a ruleset's classes, slice by slice."""

    ruleset: Ruleset
    samples: int
    width: int
    seed: int
    slices: list[SliceEstimate] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def classes(self) -> float:
        return sum(s.classes for s in self.slices)

    @property
    def error(self) -> float:
        return sqrt(sum(s.error**2 for s in self.slices))

    def as_dict(self) -> dict:
        return {
            "ruleset": self.ruleset.id,
            "classes": round(self.classes),
            "error": round(self.error),
            "samples_per_slice": self.samples,
            "width": self.width,
            "seed": self.seed,
            "seconds": round(self.seconds, 1),
            "slices": [s.as_dict() for s in self.slices],
        }


def slice_positions(rs: Ruleset, a: int, b: int) -> int:
    """Positions with ``a`` checkers of the mover and ``b`` of the other on the board, with
    every bin that can go with them.

    >>> rs = Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump")
    >>> slice_positions(rs, 1, 1)
    72
    """
    n, checkers = rs.squares, rs.checkers
    bins = (checkers - a + 1) * (checkers - b + 1) if rs.removes else 1
    return comb(n, a) * comb(n - a, b) * bins


def plies_back(rs: Ruleset, mb: np.ndarray, tb: np.ndarray) -> int:
    """How far back the search looks for a batch of one slice: twice the checkers the
    players have taken from their bins (each was placed once, and may have moved), and 6."""
    return 2 * int((2 * rs.checkers - mb.astype(np.int64) - tb).max(initial=0)) + 6


def slices(rs: Ruleset) -> list[tuple[int, int]]:
    """Every slice (a, b) of ``rs``, in the order :func:`estimate_classes` goes through them.

    >>> len(slices(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump")))
    16
    """
    n, checkers = rs.squares, rs.checkers
    return [(a, b) for a in range(min(n, checkers) + 1) for b in range(min(n - a, checkers) + 1)]


class Reacher:
    """The backward beam search of the module doc, for one ruleset."""

    def __init__(self, rs: Ruleset, width: int, rng: np.random.Generator):
        self.rs = rs
        self.eng = engine(rs)
        self.unplayer = Unplayer(self.eng)
        self.width = width
        self.rng = rng
        me, them, mb, tb = States.from_positions([Position.initial(rs)]).mover_view()
        self.root = self.eng.class_keys(me, them, mb, tb)

    def reached(self, keys: np.ndarray, plies: int) -> np.ndarray:
        """Whether the search brings each class of ``keys`` back to the initial position
        within ``plies`` plies."""
        eng = self.eng
        found = keys == self.root[0]
        rows, frontier = np.arange(len(keys)), keys
        for _ in range(plies):
            live = ~found[rows]
            rows, frontier = rows[live], frontier[live]
            if not len(frontier):
                break
            r, parents, _ = unplay_batch(eng, self.unplayer, frontier)
            rows = rows[r]
            me, them, mb, tb = eng.unpack_class(parents)
            # a parent the game had ended at (judged as its last mover left it) was never
            # played from
            result, _ = eng.judge(them, me, tb, mb)
            playing = result == NONE
            rows, parents = rows[playing], parents[playing]
            found[rows[parents == self.root[0]]] = True
            on_board = np.bitwise_count(me[playing] | them[playing]).astype(np.int64)
            # checkers taken from the bins so far (more than on the board where some left)
            used = 2 * self.rs.checkers - mb[playing].astype(np.int64) - tb[playing]
            # distinct (sample, parent): parents sorted, then samples (stably), then the
            # rows where either changes; then each sample's fewest checkers first
            by = order(parents)
            by = by[np.argsort(rows[by], kind="stable")]
            by = by[np.union1d(firsts(rows[by]), firsts(parents[by]))]
            rows, parents, on_board, used = rows[by], parents[by], on_board[by], used[by]
            by = np.lexsort((self.rng.random(len(rows)), on_board, used, rows))
            rows, parents = rows[by], parents[by]
            first = np.searchsorted(rows, rows, side="left")
            keep = np.arange(len(rows)) - first < self.width
            rows, frontier = rows[keep], parents[keep]
        return found

    def sample(self, a: int, b: int, count: int):
        """``count`` uniform positions of slice (a, b), from the mover's side."""
        rs, n = self.rs, self.rs.squares
        bit = np.uint64(1) << np.arange(n, dtype=np.uint64)
        squares = np.argsort(self.rng.random((count, n)), axis=1)
        me = np.bitwise_or.reduce(bit[squares[:, :a]], axis=1) if a else np.zeros(count, np.uint64)
        them = (
            np.bitwise_or.reduce(bit[squares[:, a : a + b]], axis=1)
            if b
            else np.zeros(count, np.uint64)
        )
        if rs.removes:
            mb = self.rng.integers(0, rs.checkers - a + 1, count).astype(np.int8)
            tb = self.rng.integers(0, rs.checkers - b + 1, count).astype(np.int8)
        else:
            mb = np.full(count, rs.checkers - a, dtype=np.int8)
            tb = np.full(count, rs.checkers - b, dtype=np.int8)
        return me.astype(np.uint64), them.astype(np.uint64), mb, tb


def estimate_classes(
    rs: Ruleset,
    *,
    samples: int = SAMPLES,
    width: int = WIDTH,
    seed: int = 0,
    progress: Callable[[SliceEstimate], None] | None = None,
) -> ClassEstimate:
    """The classes of ``rs`` estimated slice by slice (module doc); ``progress`` is called
    with each slice as it is done."""
    if samples < 2:
        raise ValueError(f"samples must be 2 or more, not {samples}")
    t0 = time.perf_counter()
    reacher = Reacher(rs, width, np.random.default_rng(seed))
    eng = reacher.eng
    out = ClassEstimate(rs, samples, width, seed)
    for a, b in slices(rs):
        positions = slice_positions(rs, a, b)
        me, them, mb, tb = reacher.sample(a, b, samples)
        keys = eng.class_keys(me, them, mb, tb)
        hit = reacher.reached(keys, plies_back(rs, mb, tb))
        share = hit / eng.orbit_sizes(me, them)
        est = SliceEstimate(
            a,
            b,
            positions,
            samples,
            int(hit.sum()),
            positions * float(share.mean()),
            positions * float(share.std(ddof=1)) / sqrt(samples),
        )
        out.slices.append(est)
        if progress is not None:
            progress(est)
    out.seconds = time.perf_counter() - t0
    return out
