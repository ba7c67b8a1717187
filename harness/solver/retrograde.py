"""Strong solutions by retrograde analysis over the whole reachable game graph.

:func:`solve` works in three passes, all vectorized with numpy (loops run over batches and
over plies, never over positions):

1. **Enumerate** the positions reachable by legal play from the initial one, breadth first,
   with the batch engine (:mod:`harness.solver.batch`). Positions are stored as *classes*:
   one key per position up to the ruleset's symmetries **and** the colour swap (a position
   seen from the side of the player to move; x to move with boards (a, b) is the same game as
   o to move with boards (a, b) and the names exchanged). A vectorized open-addressing hash
   table (:class:`KeyIndex`) gives every new key the next index, so each edge is stored as
   (parent index, child index, same side) the moment it is generated; edges to the same child
   by several actions are stored once. Actions that end the game are folded into three flags
   per class: the mover can win at once, can draw at once, can lose at once.
2. **Count** the positions as RULES.md and issue 3 define them: reachable by legal play,
   counting the initial one, not those after a game-ending action, with the turn as handed
   over after a pass. A second breadth-first pass over the stored edges tracks which of a
   class's two colourings (x to move, o to move) are reachable; ``positions`` is the number of
   raw positions (every symmetric image and turn counted: the sum of orbit sizes) and
   ``canonical`` the number up to symmetry (turn still counted); ``classes`` is what was stored.
   Issue 3's figures are raw counts: 132,569 / 531,725 / 511,953 positions for the research
   family on 4x4 with 3, 4, 5 checkers (16,648 / 66,743 / 64,175 up to symmetry) and
   39,895,502 for 5x5 c4 (4,989,870 up to symmetry, 2,810,185 classes).
3. **Retrograde analysis** with counters and reverse edges, ply by ply: a class decided at ply
   k is looked at from each parent once; a parent with an action to a child that is won for
   the parent's mover wins in k + 1 (the first found is the fastest); otherwise the edge is
   counted off, and a parent with every edge counted off and no drawing action loses in
   k + 1 (the last found is the slowest). Immediate wins are ply 1; a class whose every
   action loses at once loses in 1. Whatever is never decided is a draw: every cycle that
   neither player can be forced out of is a draw, as the value is judged from the position
   alone (RULES.md, *Values*).

>>> from harness.rules import Ruleset
>>> sol = solve(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
>>> sol.value, sol.plies, sol.positions
('x', 7, 4390)
"""

from __future__ import annotations

import os
import resource
import sys
import time
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.atomic import atomic_file
from harness.rules.engine import play_unchecked
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import (
    DRAW,
    MOVER_LOSES,
    MOVER_WINS,
    BatchEngine,
    States,
    Successors,
    engine,
)

# Values relative to the player to move, as stored per class.
UNKNOWN, WIN, LOSS = 0, 1, 2  # UNKNOWN at the end means draw
FORMAT = 1
BATCH = 16384  # positions expanded at once: big enough for numpy, small enough for the cache
MAX_CLASSES = 1 << 30  # an edge packs (parent, child, side) into one int64


class BudgetExceeded(RuntimeError):
    """The solve ran out of its position, time or memory budget (partial counts attached)."""

    def __init__(self, message: str, classes: int, seconds: float):
        super().__init__(message)
        self.classes = classes
        self.seconds = seconds


# --- a hash index of keys -----------------------------------------------------------------


class KeyIndex:
    """Keys to dense indices (0, 1, 2, ... as they are inserted), vectorized.

    Open addressing with linear probing; every step of :meth:`add` works on all pending keys
    at once, so a batch of a million keys costs a few dozen numpy operations.

    >>> ix = KeyIndex(words=1)
    >>> ix.add(np.array([7, 3, 7, 9], dtype=np.uint64)).tolist()
    [1, 0, 1, 2]
    >>> ix.add(np.array([9, 4], dtype=np.uint64)).tolist(), len(ix)
    ([2, 3], 4)
    >>> ix.find(np.array([4, 5], dtype=np.uint64)).tolist()
    [3, -1]
    """

    EMPTY = np.uint64(2**64 - 1)  # never a key: keys leave the top bits clear
    MULT = np.uint64(0x9E3779B97F4A7C15)

    def __init__(self, words: int, capacity: int = 1 << 16):
        self.words = words
        self.count = 0
        self._alloc(max(1 << 10, 1 << (capacity - 1).bit_length()))

    def __len__(self) -> int:
        return self.count

    @property
    def nbytes(self) -> int:
        return self.table.nbytes + self.index.nbytes

    def _alloc(self, size: int) -> None:
        self.size = size
        self.bits = size.bit_length() - 1
        self.table = np.full((size, self.words), self.EMPTY, dtype=np.uint64)
        # int32: class indices fit in 31 bits (MAX_CLASSES), and the table is the biggest
        # thing an enumeration holds besides its edges.
        self.index = np.full(size, -1, dtype=np.int32)

    def _rows(self, keys: np.ndarray) -> np.ndarray:
        if self.words == 1:
            return keys.reshape(-1, 1)
        return keys.view(np.uint64).reshape(-1, self.words)

    def _hash(self, rows: np.ndarray) -> np.ndarray:
        h = rows[:, 0] * self.MULT
        for w in range(1, self.words):
            h = (h ^ rows[:, w]) * self.MULT
        return (h >> np.uint64(64 - self.bits)).astype(np.int64)

    def _probe(self, rows: np.ndarray, insert: bool, start: int) -> np.ndarray:
        """Indices of ``rows`` (distinct keys); new ones get ``start, start + 1, ...`` in
        row order."""
        out = np.full(len(rows), -1, dtype=np.int64)
        slot = self._hash(rows)
        pending = np.arange(len(rows))
        mask = self.size - 1
        claimed_rows, claimed_slots = [], []
        while len(pending):
            s = slot[pending]
            cur = self.table[s]
            same = (cur == rows[pending]).all(axis=1)
            out[pending[same]] = self.index[s[same]]
            empty = cur[:, 0] == self.EMPTY
            if self.words > 1:
                empty &= (cur == self.EMPTY).all(axis=1)
            if insert and empty.any():
                cand, cslot = pending[empty], s[empty]
                # One winner per free slot: the last write of a scatter stays.
                self.index[cslot] = -2 - cand
                won = self.index[cslot] == -2 - cand
                win, wslot = cand[won], cslot[won]
                self.table[wslot] = rows[win]
                claimed_rows.append(win)
                claimed_slots.append(wslot)
                # Losers of a claim look at the same slot again (now taken) next round.
                done = same.copy()
                done[np.flatnonzero(empty)[won]] = True
                move = ~done & ~empty
            else:
                done = same | empty
                move = ~done
            slot[pending[move]] = (slot[pending[move]] + 1) & mask
            pending = pending[~done]
        if claimed_rows:
            new_rows = np.concatenate(claimed_rows)
            new_slots = np.concatenate(claimed_slots)
            order = np.argsort(new_rows)
            ids = np.arange(start, start + len(new_rows))
            self.index[new_slots[order]] = ids
            out[new_rows[order]] = ids
            self.count = max(self.count, start + len(new_rows))
        return out

    def add(self, keys: np.ndarray) -> np.ndarray:
        """Indices of ``keys``, inserting those not yet present (new keys are numbered in
        increasing key order)."""
        if len(keys) == 0:
            return np.zeros(0, dtype=np.int64)
        # Distinct keys by one sort (numpy's vectorized quicksort), not np.unique's hashing.
        order = np.argsort(keys)
        ordered = keys[order]
        first = np.ones(len(keys), dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        uniq = ordered[first]
        group = np.cumsum(first) - 1
        if 2 * (self.count + len(uniq)) > self.size:
            self._grow(self.count + len(uniq))
        ids = self._probe(self._rows(uniq), insert=True, start=self.count)
        out = np.empty(len(keys), dtype=np.int64)
        out[order] = ids[group]
        return out

    @classmethod
    def of_distinct(cls, keys: np.ndarray, words: int) -> KeyIndex:
        """An index of distinct ``keys`` where ``keys[i]`` has index i."""
        ix = cls(words=words, capacity=2 * len(keys) + 1)
        if len(keys):
            got = ix._probe(ix._rows(keys), insert=True, start=0)
            if not np.array_equal(got, np.arange(len(keys))):
                raise ValueError("KeyIndex.of_distinct: the keys are not distinct")
        return ix

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Indices of ``keys``, -1 for those not present."""
        if len(keys) == 0:
            return np.zeros(0, dtype=np.int64)
        return self._probe(self._rows(keys), insert=False, start=self.count)

    def growth_bytes(self, new_keys: int) -> int:
        """Memory a growth would take if ``new_keys`` more keys came in (0: no growth)."""
        if 2 * (self.count + new_keys) <= self.size:
            return 0
        size = self.size
        while 2 * (self.count + new_keys) > size:
            size *= 2
        # the new table and index, plus the live keys and ids copied out while re-inserting
        return size * (8 * self.words + 4) + self.count * (8 * self.words + 20)

    def _grow(self, need: int) -> None:
        live = self.index >= 0
        rows, ids = self.table[live], self.index[live]
        size = self.size
        while 2 * need > size:
            size *= 2
        self._alloc(size)
        order = np.argsort(ids)
        # Re-insert in index order so each key keeps its index.
        keys = rows[order]
        got = self._probe(keys, insert=True, start=0)
        assert np.array_equal(got, ids[order])


# --- the solution -------------------------------------------------------------------------


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
        """Raw reachable positions (RULES.md's count, every symmetric image counted)."""
        return self._count_sides(weighted=True)

    @property
    def canonical(self) -> int:
        """Reachable positions up to the board's symmetries (the turn still counts)."""
        return self._count_sides(weighted=False)

    def _count_sides(self, weighted: bool) -> int:
        # A chunk at a time: whole-array int64 temporaries would be 30 bytes a class, more
        # than the lean solver's columns.
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
        mover_is_o = states.turn == 1
        value = np.full(len(idx), -1, dtype=np.int8)
        value[rel == UNKNOWN] = DRAW
        value[rel == WIN] = np.where(mover_is_o[rel == WIN], 2, 1)
        value[rel == LOSS] = np.where(mover_is_o[rel == LOSS], 1, 2)
        # As int64: the table may be a byte a class (the lean solver's), and callers add.
        plies = np.where(found, self.ply_table[np.maximum(idx, 0)].astype(np.int64), 0)
        return value, plies

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
        succ = engine(self.ruleset).successors(states)
        value, plies = self.lookup(succ.next)
        ended = succ.result != 0
        value = np.where(ended, succ.result, value).astype(np.int8)
        plies = np.where(ended, np.where(succ.result == DRAW, 0, 1), plies + 1)
        plies = np.where((value == DRAW) | (value < 0), 0, plies)
        return succ, value, plies

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
                    from harness.solver.batch import KEY2, KEY3

                    keys = (
                        np.ascontiguousarray(keys)
                        .view(KEY2 if eng.key_words == 2 else KEY3)
                        .reshape(-1)
                    )
                if "sorted_keys" in data.files:
                    # Written by the lean solver: keys sorted, the root found by search.
                    from harness.solver.lean import LeanSolution

                    cls = LeanSolution
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


def _rss() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _peak_rss() -> int:
    """Peak resident memory of this process image (VmHWM: unlike ``ru_maxrss`` it does not
    carry over the parent's peak through fork and exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# glibc's mallopt parameters.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
# Freed blocks of at least this size are unmapped at once; smaller ones stay in the heap
# and are reused. A solve allocates and frees batch-sized temporaries (up to a few MB) all
# the time, and a fresh mapping costs a page fault for every 4 KiB it touches: with a
# threshold of 256 KiB, a solve of 5x5 c4 torus spent a third of its CPU time in the
# kernel (8 of 23 s retrograde, 8 of 40 s lean). 32 MiB is glibc's own upper bound.
MMAP_THRESHOLD = 32 << 20


def _mallopt(param: int, value: int) -> None:
    """Set a glibc malloc parameter; best effort: nothing happens off glibc."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(param, value)
    except (OSError, AttributeError):
        pass


def _return_freed_memory() -> None:
    """Fix glibc's mmap threshold (:data:`MMAP_THRESHOLD`) and trim the heap's top above
    1 MiB.

    By default glibc raises its threshold each time a mapped block is freed: once high, big
    arrays come from the heap, and a resized one is copied, not remapped. A fixed threshold
    keeps the trade-off the same for the whole solve; :func:`own_mappings` lowers it while
    the arrays that grow are allocated.
    """
    _mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    _mallopt(_M_TRIM_THRESHOLD, 1 << 20)


@contextmanager
def own_mappings():
    """Allocations in this block get a mapping of their own, whatever their size.

    A mapped block grows and shrinks in place (``realloc`` remaps its pages), so a growing
    column is never held twice; from the heap, a resize may copy it and hold both (on 5x5 c4
    torus the lean solver's keys are 22 MB, under :data:`MMAP_THRESHOLD`).
    """
    _mallopt(_M_MMAP_THRESHOLD, 128 << 10)
    try:
        yield
    finally:
        _mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def _trim() -> None:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim``).

    Freed small blocks (a batch's flags, a chunk of sides) leave holes in the heap that stay
    resident; between passes of a solve they add up to hundreds of MB. Best effort.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def small_pages() -> None:
    """Ask numpy to stop advising the kernel to back its big arrays (4 MiB and more) with
    transparent huge pages, for the rest of the process; best effort (numpy's private
    switch, the one its ``NUMPY_MADVISE_HUGEPAGE`` variable sets at import).

    Where the kernel honours the advice (``transparent_hugepage`` set to ``madvise``, as
    here), the first write to each 2 MiB of a fresh array can make it compact memory to
    find a huge page. The proof-number search writes its tree's rows into such arrays: on
    6x6 c8 torus that cost 2.2 CPU s in the kernel out of 12.9 (0.4 with small pages), in
    adding the children. The strong solvers gain little from it (5x5 c4 torus: retrograde
    0.5 s of system time, lean none).
    """
    switch = hugepage_switch()
    if switch is not None:
        switch(False)


def hugepage_switch():
    """numpy's private setter of its huge-page advice (it returns the previous setting), or
    ``None`` where this numpy has none (``numpy._core`` from 2.0, ``numpy.core`` before)."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    return getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)


# --- pass 1: enumeration --------------------------------------------------------------------


@dataclass
class Graph:
    """The reachable class graph: edges sorted by parent, and flags of ending actions."""

    keys: np.ndarray
    parent: np.ndarray  # int32
    child: np.ndarray  # int32
    same: np.ndarray  # bool: the child's mover is the parent's mover (a pass)
    win_now: np.ndarray
    draw_now: np.ndarray
    lose_now: np.ndarray
    actions: np.ndarray  # int32: legal actions per class (0 only for a stuck start)


class _Budget:
    def __init__(self, max_classes, max_seconds, max_memory, start):
        self.max_classes = max_classes
        self.max_seconds = max_seconds
        self.max_memory = max_memory
        self.start = start

    def check(self, classes: int) -> None:
        elapsed = time.perf_counter() - self.start
        if classes >= MAX_CLASSES:
            raise BudgetExceeded(
                f"more than {MAX_CLASSES} classes: edges pack class indices into 31 bits",
                classes,
                elapsed,
            )
        if self.max_classes is not None and classes > self.max_classes:
            raise BudgetExceeded(
                f"more than {self.max_classes} classes (budget --max-positions)", classes, elapsed
            )
        if self.max_seconds is not None and elapsed > self.max_seconds:
            raise BudgetExceeded(
                f"more than {self.max_seconds:g} s (budget --time-limit)", classes, elapsed
            )
        if self.max_memory is not None and _rss() > self.max_memory:
            raise BudgetExceeded(
                f"resident memory {_rss() / 2**30:.1f} GiB above {self.max_memory / 2**30:.1f} "
                "GiB (budget --memory-limit)",
                classes,
                elapsed,
            )

    def check_need(self, what: str, need: int, classes: int) -> None:
        """Refuse a pass that would take the resident memory past the budget."""
        if self.max_memory is None:
            return
        rss = _rss()
        if rss + need > self.max_memory:
            raise BudgetExceeded(
                f"{what} would need about {need / 2**30:.1f} GiB more than the "
                f"{rss / 2**30:.1f} GiB in use, past {self.max_memory / 2**30:.1f} GiB "
                "(budget --memory-limit)",
                classes,
                time.perf_counter() - self.start,
            )


def _progress(enabled: bool | None, desc: str):
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(desc=desc, unit=" classes", file=sys.stderr, leave=False)


class _Growing:
    """An array appended to in chunks and grown in place (``realloc``, which remaps big
    blocks): the edges never exist twice, as they would in a list of chunks concatenated at
    the end.

    >>> g = _Growing(np.int32); g.append(np.arange(3)); g.append(np.arange(2)); g.done().tolist()
    [0, 1, 2, 0, 1]
    """

    def __init__(self, dtype):
        self.array = np.zeros(1 << 16, dtype=dtype)
        self.n = 0

    def append(self, chunk: np.ndarray) -> None:
        need = self.n + len(chunk)
        if need > len(self.array):
            self.array.resize(max(need, len(self.array) + len(self.array) // 8), refcheck=False)
        self.array[self.n : need] = chunk
        self.n = need

    def done(self) -> np.ndarray:
        """The array, cut to what was appended (in place)."""
        self.array.resize(self.n, refcheck=False)
        return self.array


def enumerate_graph(
    eng: BatchEngine, budget: _Budget | None = None, progress: bool | None = None
) -> Graph:
    """Pass 1: every reachable class, and the edges between them (see the module doc)."""
    rs = eng.rs
    index = KeyIndex(words=eng.key_words)
    root = Position.initial(rs)
    me, them, mb, tb = States.from_positions([root]).mover_view()
    index.add(eng.class_keys(me, them, mb, tb))
    key_chunks = [eng.class_keys(me, them, mb, tb)]
    parents, children, sames = _Growing(np.int32), _Growing(np.int32), _Growing(bool)
    flags = []  # per expanded chunk: (win_now, draw_now, lose_now, actions)
    level_start, level_end = 0, 1
    bar = _progress(progress, "enumerate")
    all_keys = key_chunks[0]
    while level_start < level_end:
        if len(key_chunks) > 1:
            all_keys = np.concatenate(key_chunks)
            key_chunks = [all_keys]
        for lo in range(level_start, level_end, BATCH):
            hi = min(lo + BATCH, level_end)
            me, them, mb, tb = eng.unpack_class(all_keys[lo:hi])
            ex = eng.expand(me, them, mb, tb)
            local = ex.parent
            res = ex.result
            k = hi - lo
            flags.append(
                (
                    np.bincount(local[res == MOVER_WINS], minlength=k) > 0,
                    np.bincount(local[res == DRAW], minlength=k) > 0,
                    np.bincount(local[res == MOVER_LOSES], minlength=k) > 0,
                    np.bincount(local, minlength=k).astype(np.int32),
                )
            )
            live = np.flatnonzero(res == 0)
            if len(live):
                child_keys = eng.child_keys(ex, live)
                if budget is not None:
                    grow = index.growth_bytes(len(child_keys))
                    if grow:
                        budget.check_need("growing the key index", grow, len(index))
                before = len(index)
                child = index.add(child_keys)
                if len(index) > before:
                    fresh = np.flatnonzero(child >= before)
                    new_keys = np.empty(len(index) - before, dtype=child_keys.dtype)
                    new_keys[child[fresh] - before] = child_keys[fresh]
                    key_chunks.append(new_keys)
                parent = local[live] + lo
                same = ex.passed[live]
                # One edge per (parent, child, side): actions that lead to the same class.
                code = (parent.astype(np.int64) << 33) | (child << 1) | same
                code.sort()
                keep = np.ones(len(code), dtype=bool)
                keep[1:] = code[1:] != code[:-1]
                code = code[keep]
                parents.append((code >> 33).astype(np.int32))
                children.append(((code >> 1) & 0xFFFFFFFF).astype(np.int32))
                sames.append((code & 1).astype(bool))
            if bar is not None:
                bar.update(len(index) - bar.n)
            (budget or _Budget(None, None, None, 0.0)).check(len(index))
        level_start, level_end = level_end, len(index)
    if bar is not None:
        bar.close()
    keys = np.concatenate(key_chunks) if len(key_chunks) > 1 else key_chunks[0]
    assert len(keys) == len(index)
    del index
    return Graph(
        keys=keys,
        parent=parents.done(),
        child=children.done(),
        same=sames.done(),
        win_now=np.concatenate([f[0] for f in flags]),
        draw_now=np.concatenate([f[1] for f in flags]),
        lose_now=np.concatenate([f[2] for f in flags]),
        actions=np.concatenate([f[3] for f in flags]),
    )


# --- pass 2: counting -----------------------------------------------------------------------


def _distinct(a: np.ndarray, counts: bool = False, in_place: bool = False):
    """``np.unique`` by one sort: numpy's hashing unique is many times slower on big arrays.
    With ``in_place`` the caller's ``a`` is sorted itself, not a copy of it.

    >>> _distinct(np.array([3, 1, 3, 2]), counts=True)
    (array([1, 2, 3]), array([1, 1, 2]))
    """
    if in_place:
        a.sort()
    else:
        a = np.sort(a)
    first = np.ones(len(a), dtype=bool)
    first[1:] = a[1:] != a[:-1]
    out = a[first]
    if not counts:
        return out
    starts = np.flatnonzero(first)
    return out, np.diff(np.append(starts, len(a)))


def _owner_counts(owner: np.ndarray, n: int) -> np.ndarray:
    """How many times each of ``0 .. n-1`` occurs in ``owner`` (an edge column), counted a
    chunk at a time: ``np.bincount`` would first copy a whole ``int32`` column to ``int64``.

    >>> _owner_counts(np.array([2, 0, 2], dtype=np.int32), 4).tolist()
    [1, 0, 2, 0]
    """
    out = np.zeros(n, dtype=np.int64)
    for lo in range(0, len(owner), EDGE_CHUNK):
        chunk = owner[lo : lo + EDGE_CHUNK]
        least, most = int(chunk.min()), int(chunk.max())
        if most - least < 4 * len(chunk):
            # A narrow range (the parents, which come sorted): count it directly.
            out[least : most + 1] += np.bincount(chunk - least)
            continue
        owners, counts = _distinct(chunk, counts=True)
        out[owners] += counts
    return out


def _csr(owner: np.ndarray, n: int) -> np.ndarray:
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(_owner_counts(owner, n), out=off[1:])
    return off


def _gather(off: np.ndarray, nodes: np.ndarray, labels: np.ndarray | None = None):
    """Edge ids of every node in ``nodes`` (CSR offsets), and each edge's node's label
    (``labels[i]`` belongs to ``nodes[i]``; the node's position in ``nodes`` if None)."""
    starts, ends = off[nodes], off[nodes + 1]
    counts = ends - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if labels is None:
        labels = np.arange(len(nodes))
    owner = np.repeat(labels, counts)
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    shift += np.arange(total)
    return shift, owner


# Edges gathered at once in the count and retrograde passes: their temporaries take about
# 60 bytes an edge, so a chunk costs ~60 MB whatever the size of the graph.
EDGE_CHUNK = 1 << 20


def _pieces(off: np.ndarray, nodes: np.ndarray, limit: int | None = None):
    """Split ``nodes`` into consecutive slices with at most ``limit`` edges each (a node
    with more edges than that gets a slice of its own), so that gathered arrays stay small."""
    if len(nodes) == 0:
        return
    limit = EDGE_CHUNK if limit is None else limit
    counts = off[nodes + 1] - off[nodes]
    ends = np.cumsum(counts)
    start = 0
    while start < len(nodes):
        base = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, base + limit, side="right"))
        stop = max(stop, start + 1)
        yield slice(start, stop)
        start = stop


def reachable_sides(graph: Graph) -> np.ndarray:
    """Pass 2: per class, which colourings are reached (bit 0 x to move, bit 1 o to move).

    The representative of class 0 is the initial position with x to move.
    """
    n = len(graph.keys)
    off = _csr(graph.parent, n)
    sides = np.zeros(n, dtype=np.int8)
    sides[0] = 1
    frontier = np.array([0], dtype=np.int64)  # node * 2 + side (0: x moves)
    while len(frontier):
        nodes, side = frontier >> 1, frontier & 1
        found = []
        for piece in _pieces(off, nodes):
            eids, pside = _gather(off, nodes[piece], side[piece])
            if not len(eids):
                continue
            child = graph.child[eids].astype(np.int64)
            # A child's mover is the parent's opponent, unless the opponent passed.
            cside = pside ^ ~graph.same[eids]
            del eids, pside
            code = _distinct(child * 2 + cside)
            c, s = code >> 1, code & 1
            new = (sides[c] >> s & 1) == 0
            c, s = c[new], s[new]
            # One side at a time: a class reached on both sides in one step appears twice,
            # and a fancy-indexed |= keeps only the last write.
            for side_bit in (0, 1):
                sides[c[s == side_bit]] |= np.int8(1 << side_bit)
            found.append(code[new])
        frontier = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    return sides


# --- pass 3: retrograde analysis ----------------------------------------------------------


def _reverse(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reverse edges: CSR offsets by child, and each edge's parent and side, ordered by
    (child, parent, side).

    A counting sort, chunk by chunk in the forward order (which is by parent): each chunk's
    edges go to the next free places of their children's segments, in the chunk's own
    stable order by child. The peak is the forward and reverse edges side by side (14
    bytes an edge), with no sort of a whole array.
    """
    n = len(graph.keys)
    e = len(graph.parent)
    off = _csr(graph.child, n)
    fill = off[:-1].copy()
    rev_parent = np.empty(e, dtype=np.int32)
    rev_same = np.empty(e, dtype=bool)
    for lo in range(0, e, EDGE_CHUNK):
        child = graph.child[lo : lo + EDGE_CHUNK]
        order = np.argsort(child, kind="stable")
        ordered = child[order]
        # Rank of each edge among the chunk's edges into the same child.
        first = np.ones(len(ordered), dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        starts = np.flatnonzero(first)
        sizes = np.diff(np.append(starts, len(ordered)))
        dest = fill[ordered] + (np.arange(len(ordered)) - np.repeat(starts, sizes))
        rev_parent[dest] = graph.parent[lo : lo + EDGE_CHUNK][order]
        rev_same[dest] = graph.same[lo : lo + EDGE_CHUNK][order]
        fill[ordered[starts]] += sizes
    return off, rev_parent, rev_same


def retrograde(graph: Graph, free: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Pass 3: (result, plies) per class, results relative to the player to move.

    With ``free`` the graph's forward edges are dropped as soon as the reverse edges are
    built (they are not needed after), which lowers the peak memory by a third.
    """
    n = len(graph.keys)
    result = np.zeros(n, dtype=np.int8)
    plies = np.zeros(n, dtype=np.int32)
    counter = _owner_counts(graph.parent, n).astype(np.int32)
    # A class that can only lose at once loses in 1; one with a drawing action never loses.
    can_avoid_loss = graph.draw_now | (graph.actions == 0)
    wins = graph.win_now
    losses = ~wins & (counter == 0) & ~can_avoid_loss
    result[wins] = WIN
    result[losses] = LOSS
    plies[wins | losses] = 1
    rev_off, rev_parent, rev_same = _reverse(graph)
    if free:
        graph.parent = graph.child = graph.same = None  # type: ignore[assignment]
    level = np.flatnonzero(wins | losses)
    k = 1
    while len(level):
        decided = []
        # In pieces: safe, because an edge is looked at once and a parent whose count runs
        # out has no winning edge left for a later piece to find.
        for piece in _pieces(rev_off, level):
            children = level[piece]
            eids, owner = _gather(rev_off, children)
            parent = rev_parent[eids]
            child_result = result[children][owner]
            # The child's result from the parent mover's side: the same unless sides differ.
            good = np.where(rev_same[eids], child_result == WIN, child_result == LOSS)
            del eids, owner, child_result
            open_ = result[parent] == UNKNOWN
            winners = _distinct(parent[good & open_])
            result[winners] = WIN
            plies[winners] = k + 1
            # Edges to children lost for the parent: count them off (undecided parents only).
            bad = ~good & (result[parent] == UNKNOWN)
            losers, hits = _distinct(parent[bad], counts=True)
            counter[losers] -= hits.astype(np.int32)
            lost = losers[(counter[losers] == 0) & ~can_avoid_loss[losers]]
            result[lost] = LOSS
            plies[lost] = k + 1
            decided += [winners, lost]
        level = np.concatenate(decided)
        k += 1
    return result, plies


# --- the whole solve ----------------------------------------------------------------------


def solve(
    rs: Ruleset,
    *,
    max_positions: int | None = None,
    max_seconds: float | None = None,
    max_memory: int | None = None,
    progress: bool | None = None,
) -> Solution:
    """Strongly solve ``rs`` (every reachable position): see the module doc.

    Budgets (``max_positions`` counts classes) raise :class:`BudgetExceeded`.
    """
    start = time.perf_counter()
    cpu_start = time.process_time()
    budget = _Budget(max_positions, max_seconds, max_memory, start)
    _return_freed_memory()
    eng = engine(rs)
    timings = {}
    graph = enumerate_graph(eng, budget, progress)
    _trim()
    timings["enumerate"] = time.perf_counter() - start
    classes, edges = len(graph.keys), len(graph.parent)
    # The later passes allocate per class and per edge; refuse before, not half-way.
    budget.check_need("the count", classes * 32 + min(edges, EDGE_CHUNK) * 64, classes)
    t = time.perf_counter()
    sides = reachable_sides(graph)
    orbit = np.empty(classes, dtype=np.int16)
    for i in range(0, classes, BATCH):
        me, them, _, _ = eng.unpack_class(graph.keys[i : i + BATCH])
        orbit[i : i + BATCH] = eng.orbit_sizes(me, them)
    timings["count"] = time.perf_counter() - t
    budget.check(classes)
    # The pass adds the reverse edges (5 bytes an edge: parent and side), its per-class
    # arrays (result, plies, counter, flags: 14 bytes a class) and a chunk's temporaries; the
    # forward edges are freed once the reverse ones are built.
    budget.check_need("the retrograde pass", classes * 14 + edges * 5 + EDGE_CHUNK * 64, classes)
    t = time.perf_counter()
    result, plies = retrograde(graph, free=True)
    _trim()
    timings["retrograde"] = time.perf_counter() - t
    timings["cpu"] = time.process_time() - cpu_start
    sol = Solution(
        rs,
        graph.keys,
        result,
        plies,
        sides,
        orbit,
        edges=edges,
        seconds=time.perf_counter() - start,
        timings=timings,
        peak_rss=_peak_rss(),
    )
    return sol
