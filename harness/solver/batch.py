"""The numpy batch engine: one turn for a whole batch of positions at once.

Positions are arrays: ``x`` and ``o`` bitboards (``uint64``, bit ``row * cols + col``), the
bins ``xb`` and ``ob`` and the player to move ``turn`` (0 for x, 1 for o). The engine
implements RULES.md exactly like :mod:`harness.rules.engine` (the reference; see its docstring
for the decisions on the rule text's gaps) but without a Python loop per position: every step
is a numpy operation on every action of the batch at once.

How a batch is expanded (see :meth:`BatchEngine.expand`): the legal actions are listed for
the whole batch (:meth:`BatchEngine.actions`: the empty squares of the placers; each
mover's checkers against a padded table of destinations), each is landed, and all are
popped together (:meth:`BatchEngine.pop`): the landing square L differs from row to row,
so its rays come from tables indexed by L, a row of slots per ray (neighbour N, target T).
A push moves one checker to an empty square, so it flips two bits of its owner's board, and
the flips of one pop add up. The results (lines, ringout, stuck) are judged for the whole
batch (:meth:`BatchEngine.judge`). An earlier engine grouped the actions by landing square
and popped each group with constant shifts: faster per action on batches of many thousand
positions, but its fixed cost (eight pop rays times every square, a numpy call each) was
most of the time of a search's batches of a few hundred, and of the un-player's checks.

Lines are found on whole boards: every line lies within three consecutive rows (cyclically
on wrapping edges), so one look-up in a table over the bits of each window of three rows
answers (one table for the whole board up to 18 squares); boards whose windows exceed 18
bits use "pull-back" maps per line direction instead (the squares whose step lies in the
board): a board has a line iff ``b & pull1(b) & pull2(b) & domain`` is not zero. Positions
may be anything :class:`harness.rules.Position` allows, lines already on the board included.

Canonical keys: every symmetry of the ruleset (:func:`harness.rules.symmetry.symmetries`) is
applied to both bitboards through lookup tables over chunks of at most 13 squares, and the
least packed key wins. :meth:`BatchEngine.keys` packs (x, o, bins, turn) as a position;
:meth:`BatchEngine.class_keys` packs a position *from the mover's side* (mover's board,
opponent's board, mover's bin, opponent's bin, no turn), which also identifies a position
with its colour swap: swapping x and o and the player to move gives the same position seen
from the mover's side, the same game with the players' names exchanged, so both have the
same value with the winner renamed. A key is one ``uint64`` when it fits
(``2 * squares + 2 * bin bits + 1 <= 64``, e.g. up to 5x5 with c4) and a
structured ``(hi, lo)`` pair of ``uint64`` otherwise (``(hi, mid, lo)`` on 8x8 boards with
more than 7 checkers), compared word by word.

>>> from harness.rules import Ruleset, Position
>>> rs = Ruleset.from_id("pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump")
>>> eng = BatchEngine(rs)
>>> succ = eng.successors(States.from_positions([Position.initial(rs)]))
>>> len(succ), succ.action_texts(rs)[:3]
(16, ['a1', 'b1', 'c1'])
>>> succ.next_positions()[0].text(rs)
'x.../..../..../.... 2 3 o'
>>> len(set(eng.keys(succ.next).tolist()))  # 16 placements, 3 up to symmetry
3
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cache

import numpy as np

from harness.rules.geometry import (
    DIRECTIONS,
    LINE_DIRECTIONS,
    PATTERN_DIRECTIONS,
    geometry,
    geometry_for,
    surface_step,
)
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import symmetries

U64 = np.uint64
ONE = np.uint64(1)
ZERO = np.uint64(0)

# Result codes, absolute (in States / Successors): no result, x wins, o wins, draw.
NONE, X_WINS, O_WINS, DRAW = 0, 1, 2, 3
RESULT_TEXT = {NONE: None, X_WINS: "x", O_WINS: "o", DRAW: "draw"}
# Result codes relative to the player who acted (in Expansion).
MOVER_WINS, MOVER_LOSES = 1, 2

KEY2 = np.dtype([("hi", "<u8"), ("lo", "<u8")])  # a two-word key, ordered hi then lo
KEY3 = np.dtype([("hi", "<u8"), ("mid", "<u8"), ("lo", "<u8")])  # 8x8 boards with many checkers
KEY_SLICE = 1 << 15  # positions canonicalized at once
JUDGE_SLICE = 1 << 14  # actions judged at once: the temporaries stay small enough to reuse
POP_SLICE = 1 << 12  # actions popped at once: a slots-by-rows table of 256 KB a column


def _bit(sq: int) -> np.uint64:
    return np.uint64(1 << sq)


def _shifter(d: int):
    """(ufunc, amount) that moves bit s to bit s + d."""
    return (np.left_shift, np.uint64(d)) if d >= 0 else (np.right_shift, np.uint64(-d))


class SquareMap:
    """A map of squares applied to whole bitboards, grouped by how far the bits move.

    ``pull(b)`` is the set of squares s (with ``f(s)`` defined) such that ``f(s)`` is in b;
    ``push(b)`` is the image ``{f(s) : s in b}`` (for an injective f). Squares that move by
    the same offset move together, so the cost is one shift and one mask per distinct offset.

    >>> m = SquareMap({0: 1, 1: 2, 2: 0})   # a 3-cycle
    >>> b = np.array([0b001], dtype=np.uint64)
    >>> int(m.pull(b)[0]), int(m.push(b)[0])
    (4, 2)
    """

    def __init__(self, mapping: dict[int, int]):
        groups: dict[int, int] = defaultdict(int)
        for s, t in mapping.items():
            groups[t - s] |= 1 << s
        # One (shift, amount, mask of sources) step per offset, for pull and for push, so
        # that applying the map is a plain loop of numpy calls.
        steps = sorted(groups.items())
        self._pull = [(*_shifter(-d), np.uint64(m)) for d, m in steps]
        self._push = [(*_shifter(d), np.uint64(m)) for d, m in steps]

    def pull(self, b: np.ndarray) -> np.ndarray:
        out = np.zeros_like(b)
        for shift, d, mask in self._pull:
            part = shift(b, d)
            part &= mask
            out |= part
        return out

    def push(self, b: np.ndarray) -> np.ndarray:
        out = np.zeros_like(b)
        for shift, d, mask in self._push:
            out |= shift(b & mask, d)
        return out


def _chunk_bits(b: np.ndarray, start, mask) -> np.ndarray:
    """A chunk of each board's bits as table indices (``intp``): shifted down by
    ``start`` and masked by ``mask`` where they are not None (:attr:`Permuter._steps`).
    May be a view of ``b``: read it, never write into it."""
    idx = b if start is None else b >> start
    if mask is not None:
        idx = idx & mask
    return idx.view(np.intp)  # small values: an intp view has the same bits


class Permuter:
    """A permutation of squares applied to bitboards by table look-ups over chunks of bits.

    A board holds only the permutation's squares (no bit at or above ``len(perm)``): the
    last chunk is read without a mask.

    >>> p = Permuter((1, 2, 0), width=2)  # squares 0 -> 1 -> 2 -> 0
    >>> p(np.array([0b001, 0b110], dtype=np.uint64)).tolist()
    [2, 5]
    """

    def __init__(self, perm: tuple[int, ...], width: int):
        n = len(perm)
        self.width = width
        self.chunks = []
        for start in range(0, n, width):
            size = min(width, n - start)
            values = np.arange(1 << size, dtype=np.uint64)
            table = np.zeros(1 << size, dtype=np.uint64)
            for i in range(size):
                has = (values >> np.uint64(i)) & ONE
                table |= has << np.uint64(perm[start + i])
            self.chunks.append((np.uint64(start), np.uint64((1 << size) - 1), table))
        # The first chunk needs no shift and the last no mask (a board has no bits above
        # its squares): two passes fewer over the rows per board, a fifth of the time of
        # a canonical key on 5x5.
        last = len(self.chunks) - 1
        self._steps = [
            (None if c == 0 else start, None if c == last else mask, table)
            for c, (start, mask, table) in enumerate(self.chunks)
        ]

    def __call__(self, b: np.ndarray) -> np.ndarray:
        """The image of every board of ``b`` (bits on the permutation's squares only)."""
        out = None
        for start, mask, table in self._steps:
            # "clip" in every table look-up: the indices are in range by construction, and
            # numpy then skips its bounds check (a third faster).
            part = table.take(_chunk_bits(b, start, mask), mode="clip")
            if out is None:
                out = part
            else:
                out |= part
        assert out is not None
        return out


class PermuterStack:
    """Several permutations of squares, one chosen per row: ``pick(b, which)`` is each row
    of ``b`` under the permutation ``which`` names for it, with the same look-ups as one
    :class:`Permuter` (the tables of all of them side by side in one array).

    >>> st = PermuterStack([(0, 1, 2), (1, 2, 0)], width=8)
    >>> b = np.array([0b001, 0b001], dtype=np.uint64)
    >>> st.pick(b, np.array([0, 1])).tolist()
    [1, 2]
    """

    def __init__(self, perms, width: int):
        self.parts = [Permuter(p, width) for p in perms]
        size = 1 << width
        chunks = self.parts[0].chunks
        # The same chunks for every permutation (a permutation's own tables differ).
        self.starts = [(start, mask) for start, mask, _ in self.parts[0]._steps]
        self.stride = len(chunks) * size  # one permutation's tables
        tables = np.zeros((len(perms), len(chunks), size), dtype=np.uint64)
        for i, part in enumerate(self.parts):
            for c, (_, _, table) in enumerate(part.chunks):
                tables[i, c, : len(table)] = table
        self.tables = tables.reshape(-1)
        self.size = size

    def pick(self, b: np.ndarray, which: np.ndarray) -> np.ndarray:
        base = which.astype(np.intp) * self.stride
        out = None
        for c, (start, mask) in enumerate(self.starts):
            idx = base + c * self.size
            idx += _chunk_bits(b, start, mask)
            part = self.tables.take(idx, mode="clip")
            out = part if out is None else out | part
        assert out is not None
        return out


def _in_slices(fn, size: int, *cols):
    """``fn`` over equal-length columns (None passes through) ``size`` rows at a time, the
    results joined: one array, or a tuple of arrays when ``fn`` returns a tuple.

    >>> _in_slices(lambda a, b: a + b, 2, np.arange(5), np.ones(5, int)).tolist()
    [1, 2, 3, 4, 5]
    """
    parts = [
        fn(*(None if c is None else c[lo : lo + size] for c in cols))
        for lo in range(0, len(cols[0]), size)
    ]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(col) for col in zip(*parts, strict=True))
    return np.concatenate(parts)


def _mover_columns(me, them, mb, tb):
    """A batch from the mover's side as the engine's dtypes (boards uint64, bins int8)."""
    return (
        np.asarray(me, dtype=np.uint64),
        np.asarray(them, dtype=np.uint64),
        np.asarray(mb, dtype=np.int8),
        np.asarray(tb, dtype=np.int8),
    )


def set_bits(boards: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, square) of every set bit below ``n`` of ``boards``, by row, then square.

    >>> rows, squares = set_bits(np.array([0b101, 0b010], dtype=np.uint64), 3)
    >>> rows.tolist(), squares.tolist()
    ([0, 0, 1], [0, 2, 1])
    """
    little = np.ascontiguousarray(boards, dtype="<u8").view(np.uint8).reshape(-1, 8)
    return np.nonzero(np.unpackbits(little, axis=1, bitorder="little")[:, :n])


def popcount(b: np.ndarray) -> np.ndarray:
    return np.bitwise_count(b).astype(np.int8)


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


WINDOW_BITS = 18  # largest look-up table for lines: 2**18 booleans


@cache
def window_layout(rows: int, cols: int, edge: str):
    """The windows of up to three consecutive rows that hold every line, as (rows of the
    window, shift, mask, wrap mask, wrap shift), or None when a window would pass
    :data:`WINDOW_BITS`.

    A window's index is its rows' bits, the first row lowest: ``(b >> shift) & mask``,
    then, on wrapping edges, the rows past the bottom edge come from the top
    (``wrap_mask`` selects them and ``wrap_shift`` moves them above the others).

    >>> [w[0] for w in window_layout(4, 4, "torus")]
    [[0, 1, 2, 3]]
    >>> [w[0] for w in window_layout(7, 6, "ringout")][-1]
    [4, 5, 6]
    """
    n = rows * cols
    if n <= WINDOW_BITS:
        windows = [list(range(rows))]
    elif 3 * cols <= WINDOW_BITS:
        wraps = edge in ("torus", "klein")
        starts = range(rows) if wraps else range(rows - 2)
        windows = [[(r + k) % rows for k in range(3)] for r in starts]
    else:
        return None
    out = []
    for window in windows:
        first = window[0]
        width = len(window) * cols
        if window == list(range(first, first + len(window))):
            out.append((window, np.uint64(first * cols), np.uint64((1 << width) - 1), ZERO, ZERO))
        else:
            # Wrapped: rows first..rows-1 at the bottom of the index, then 0..k above them.
            low = rows - first
            high_rows = len(window) - low
            out.append(
                (
                    window,
                    np.uint64(first * cols),
                    np.uint64((1 << (low * cols)) - 1),
                    np.uint64((1 << (high_rows * cols)) - 1),
                    np.uint64(low * cols),
                )
            )
    return out


def window_mask(window: list[int], cols: int, squares) -> int:
    """The bits of ``squares`` (all in the window's rows) in a window's index."""
    position = {row: k for k, row in enumerate(window)}
    mask = 0
    for sq in squares:
        mask |= 1 << (position[sq // cols] * cols + sq % cols)
    return mask


def window_index(b: np.ndarray, shift, mask, wrap_mask, wrap_shift) -> np.ndarray:
    """Each board's index in one window of :func:`window_layout` (as intp)."""
    idx = (b >> shift) & mask
    if wrap_mask:
        idx |= (b & wrap_mask) << wrap_shift
    return idx.view(np.intp)


@cache
def _line_windows(rows: int, cols: int, edge: str):
    """Tables for :meth:`BatchEngine.has_line`, one per window of :func:`window_layout`:
    (shift, mask, wrap mask, wrap shift, whether the window's bits hold a line)."""
    layout = window_layout(rows, cols, edge)
    if layout is None:
        return None
    lines = geometry_for(rows, cols, edge).lines
    out = []
    for window, *where in layout:
        width = len(window) * cols
        idx = np.arange(1 << width, dtype=np.uint64)
        table = np.zeros(1 << width, dtype=bool)
        for line in lines:
            if not {sq // cols for sq in line.squares} <= set(window):
                continue
            m = np.uint64(window_mask(window, cols, line.squares))
            table |= (idx & m) == m
        out.append((*where, table))
    return out


@cache
def _engine(rs: Ruleset) -> BatchEngine:
    return BatchEngine(rs)


def engine(rs: Ruleset) -> BatchEngine:
    """The cached :class:`BatchEngine` of a ruleset."""
    return _engine(rs)


class BatchEngine:
    """Tables and batch operations for one ruleset (build once, via :func:`engine`)."""

    def __init__(self, rs: Ruleset):
        self.rs = rs
        geo = geometry(rs)
        self.geo = geo
        n = self.n = geo.squares
        self.full = np.uint64((1 << n) - 1)
        self.bin_bits = max(1, rs.checkers.bit_length())
        # Bins and the turn bit above the boards; two or three words when one does not do.
        high_bits = 2 * self.bin_bits + 1
        if 2 * n + high_bits <= 64:
            self.key_words = 1
        elif n + high_bits <= 64:
            self.key_words = 2
        else:
            self.key_words = 3
        self._build_moves()
        self._build_pops()
        self._build_lines()
        self._build_reach()
        width = min(13, n) if n > 16 else 8
        syms = symmetries(rs)
        self.symmetries = syms
        self.stack = PermuterStack([s.perm for s in syms], width)
        self.permuters = self.stack.parts[1:]  # the identity (first) needs no look-up

    # --- tables ---------------------------------------------------------------------------

    def _build_moves(self) -> None:
        """Per source square: (destination, squares that must be empty in between)."""
        rs, geo, n = self.rs, self.geo, self.n
        pairs: list[list[tuple[int, np.uint64]]] = [[] for _ in range(n)]
        if rs.movement != "nomove":
            for src in range(n):
                found: dict[int, int] = {}
                if rs.pattern == "king":
                    for t in geo.king_targets[src]:
                        found[t] = 0
                elif rs.pattern == "anywhere":
                    for t in range(n):
                        if t != src:
                            found[t] = 0
                else:
                    for d in PATTERN_DIRECTIONS[rs.pattern]:
                        between = 0
                        for t in geo.slide_rays[src][d]:
                            found[t] = 0 if rs.jump else between
                            between |= 1 << t
                if rs.zero:
                    found[src] = 0
                pairs[src] = [(t, np.uint64(m)) for t, m in sorted(found.items())]
        self.move_pairs = pairs
        # The same per source as padded rows, for all movers at once: the destination and
        # the squares that must be empty (the destination and those between); a pad needs
        # every square empty, which a mover's board never is.
        width = max((len(p) for p in pairs), default=0)
        self.move_dst = np.full((n, width), -1, dtype=np.int8)
        self.move_clear = np.full((n, width), ~ZERO, dtype=np.uint64)
        for src, row in enumerate(pairs):
            for j, (dst, between) in enumerate(row):
                self.move_dst[src, j] = dst
                self.move_clear[src, j] = between if dst == src else between | _bit(dst)

    def _build_pops(self) -> None:
        """Per landing square and ray slot: the neighbour, the neighbour with its target, and
        the neighbours sharing that target; per landing square the neighbours that fall.

        A slot without a ray has an impossible neighbour (every bit) and no pair, so it never
        pushes; a ray whose target is off the board has no pair either (its checker falls
        or, on ``blocked`` edges, stays)."""
        geo, n = self.geo, self.n
        slots = max((len(rays) for rays in geo.pop_rays), default=0)
        self.pop_pair = np.zeros((slots, n), dtype=np.uint64)
        self.pop_nb = np.full((slots, n), ~ZERO, dtype=np.uint64)
        self.pop_shared = np.zeros((slots, n), dtype=np.uint64)
        self.pop_fall = np.zeros(n, dtype=np.uint64)
        falls = self.rs.edge in ("reincarnation", "ringout")
        for L in range(n):
            by_target: dict[int, int] = defaultdict(int)
            for ray in geo.pop_rays[L]:
                if ray.target is not None:
                    by_target[ray.target] |= 1 << ray.neighbour
            for k, ray in enumerate(geo.pop_rays[L]):
                self.pop_nb[k, L] = _bit(ray.neighbour)
                if ray.target is None:
                    if falls:
                        self.pop_fall[L] |= _bit(ray.neighbour)
                    continue
                self.pop_pair[k, L] = _bit(ray.neighbour) | _bit(ray.target)
                if by_target[ray.target].bit_count() > 1:
                    self.pop_shared[k, L] = np.uint64(by_target[ray.target])
        self.any_shared = bool(self.pop_shared.any())

    def _build_lines(self) -> None:
        """Per line direction: pull-backs by one and two steps and the domain of starts."""
        rs = self.rs
        R, C = rs.rows, rs.cols
        self.line_maps = []
        for _name, direction in LINE_DIRECTIONS:
            first: dict[int, int] = {}
            second: dict[int, int] = {}
            domain = 0
            for r in range(R):
                for c in range(C):
                    s1 = surface_step(R, C, rs.edge, r, c, direction)
                    if s1 is None:
                        continue
                    s2 = surface_step(R, C, rs.edge, s1.row, s1.col, (s1.dr, s1.dc))
                    if s2 is None:
                        continue
                    sq, a, b = r * C + c, s1.row * C + s1.col, s2.row * C + s2.col
                    if len({sq, a, b}) < 3:
                        continue
                    first[sq], second[sq] = a, b
                    domain |= 1 << sq
            if domain:
                self.line_maps.append((SquareMap(first), SquareMap(second), np.uint64(domain)))
        self.line_windows = _line_windows(rs.rows, rs.cols, rs.edge)

    def _build_reach(self) -> None:
        """For "has a move": per direction a planar shift, or per square a reach mask."""
        rs = self.rs
        R, C = rs.rows, rs.cols
        self.reach_shifts = None
        self.reach_masks = None
        if rs.movement == "nomove":
            return
        if rs.pattern == "anywhere" or rs.jump:
            masks = []
            for src in range(self.n):
                m = 0
                for t, _ in self.move_pairs[src]:
                    if t != src:
                        m |= 1 << t
                masks.append(np.uint64(m))
            self.reach_masks = masks
            return
        maps = []
        for d in PATTERN_DIRECTIONS[rs.pattern]:
            dr, dc = DIRECTIONS[d]
            mapping = {}
            for r in range(R):
                for c in range(C):
                    if 0 <= r + dr < R and 0 <= c + dc < C:
                        mapping[r * C + c] = (r + dr) * C + c + dc
            maps.append(SquareMap(mapping))
        self.reach_shifts = maps

    # --- predicates -----------------------------------------------------------------------

    def has_line_pulled(self, b: np.ndarray) -> np.ndarray:
        """:meth:`has_line` by pull-backs alone (used to build and check the tables)."""
        found = np.zeros(len(b), dtype=bool)
        for first, second, domain in self.line_maps:
            found |= (b & first.pull(b) & second.pull(b) & domain) != 0
        return found

    def has_line(self, b: np.ndarray) -> np.ndarray:
        """Whether each bitboard holds three in a row on the edge surface.

        Every line lies within three consecutive rows (cyclically on wrapping edges), so a
        table over the bits of each such window of rows answers with one look-up per window;
        small boards use one table over the whole board.
        """
        if self.line_windows is None:
            return self.has_line_pulled(b)
        found = None
        for *where, table in self.line_windows:
            hit = table.take(window_index(b, *where), mode="clip")
            found = hit if found is None else found | hit
        return found

    def movement_allowed(self, mb: np.ndarray) -> np.ndarray:
        if self.rs.movement == "always":
            return np.ones(len(mb), dtype=bool)
        if self.rs.movement == "binempty":
            return mb == 0
        return np.zeros(len(mb), dtype=bool)

    def has_action(self, me: np.ndarray, them: np.ndarray, mb: np.ndarray) -> np.ndarray:
        """Whether the player whose board is ``me`` and bin ``mb`` has a legal action."""
        occ = me | them
        not_full = occ != self.full
        out = (mb > 0) & not_full
        need = ~out & self.movement_allowed(mb) & (me != 0)
        if not need.any():
            return out
        idx = np.flatnonzero(need)
        m, o = me[idx], occ[idx]
        if self.rs.zero:
            can = np.ones(len(idx), dtype=bool)
        elif self.reach_shifts is not None:
            empty = ~o & self.full
            near = np.zeros_like(m)
            for shift in self.reach_shifts:
                near |= shift.pull(empty)  # squares with an empty square in that direction
            can = (near & m) != 0
        else:
            empty = ~o & self.full
            can = np.zeros(len(idx), dtype=bool)
            for src in range(self.n):
                can |= (((m >> np.uint64(src)) & ONE) != 0) & ((self.reach_masks[src] & empty) != 0)
        out[idx] = can
        return out

    # --- expansion ------------------------------------------------------------------------

    def expand(self, me, them, mb, tb) -> Expansion:
        """Every legal action of every position, given from the mover's side.

        ``me``/``them`` are uint64 bitboards, ``mb``/``tb`` int8 bins. Rows come as
        :meth:`actions` lists them: the placements, then the moves, each by parent (see
        :meth:`successors` for the reference order).
        """
        me, them, mb, tb = _mover_columns(me, them, mb, tb)
        parent, src, dst = self.actions(me, them, mb)
        return self.play(parent, src, dst, me, them, mb, tb)

    def play(self, parent, src, dst, me, them, mb, tb) -> Expansion:
        """The actions (``src`` -1 for a placement, ``dst``) played in positions ``parent``
        of the batch (``me``, ``them``, ``mb``, ``tb``, from the mover's side), each landed,
        popped and judged. The actions must be legal."""
        parent = np.asarray(parent, dtype=np.int64)
        src = np.asarray(src, dtype=np.int8)
        dst = np.asarray(dst, dtype=np.int8)
        m, t, my_bin, their_bin = self._land_and_pop(parent, src, dst, me, them, mb, tb)
        result, passed = self.judge(m, t, my_bin, their_bin)
        return Expansion(parent, src, dst, m, t, my_bin, their_bin, result, passed)

    def _land_and_pop(self, parent, src, dst, me, them, mb, tb):
        """(me, them, my bin, their bin) after each action, before it is judged."""
        placed = src < 0
        lift = np.where(placed, ZERO, ONE << src.astype(np.uint64))
        m = me[parent] & ~lift
        m |= ONE << dst.astype(np.uint64)
        t = them[parent]
        my_bin = mb[parent] - placed.astype(np.int8)
        their_bin = tb[parent]
        self.pop(dst, m, t, my_bin, their_bin)
        return m, t, my_bin, their_bin

    def wins_at_once(self, me, them, mb, tb) -> np.ndarray:
        """Whether the mover of each position (from the mover's side) has an action that
        wins at once: :meth:`expand`'s ``MOVER_WINS``, judged only where it can be. Off
        ringout edges a win needs the mover's line, so only the actions that make one are
        judged (a few in a hundred in a search)."""
        me, them, mb, tb = _mover_columns(me, them, mb, tb)
        parent, src, dst = self.actions(me, them, mb)
        after = self._land_and_pop(parent, src, dst, me, them, mb, tb)
        if self.rs.edge != "ringout":
            rows = np.flatnonzero(self.has_line(after[0]))
            parent, after = parent[rows], tuple(c[rows] for c in after)
        result, _ = self.judge(*after)
        return np.bincount(parent[result == MOVER_WINS], minlength=len(me)) > 0

    def actions(self, me, them, mb):
        """``(parent, src, dst)`` of every legal action: the placements (by parent, then
        square), then the moves (by parent, source, destination).

        Placements are the empty squares of the positions with a checker in the bin;
        moves pair each mover's checkers with its source's padded row of destinations
        (:attr:`move_dst`), kept where the squares that must be empty are.
        """
        n = self.n
        occ = me | them
        placers = np.flatnonzero(mb > 0)
        p_parent, p_dst = set_bits(~occ[placers] & self.full, n)
        p_parent = placers[p_parent]
        movers = np.flatnonzero(self.movement_allowed(mb) & (me != 0))
        if len(movers) and self.move_dst.shape[1]:
            pair, m_src = set_bits(me[movers], n)
            holder = movers[pair]
            ok = (occ[holder][:, None] & self.move_clear[m_src]) == 0
            pair, slot = np.nonzero(ok)
            m_parent = holder[pair]
            m_src = m_src[pair]
            m_dst = self.move_dst.ravel()[m_src * self.move_dst.shape[1] + slot]
        else:
            m_parent = np.zeros(0, dtype=np.int64)
            m_src = m_dst = np.zeros(0, dtype=np.int8)
        parent = np.concatenate([p_parent, m_parent])
        src = np.concatenate([np.full(len(p_parent), -1, dtype=np.int8), m_src.astype(np.int8)])
        dst = np.concatenate([p_dst.astype(np.int8), m_dst])
        return parent, src, dst

    def pop(self, landing, m, t, my_bin, their_bin) -> None:
        """Pop from each row's landing square, in place (RULES.md, "Pop"): decided on the
        snapshot, applied together.

        A ray pushes when its neighbour is occupied and its target empty (``snapshot &
        pair == neighbour``) and no other occupied neighbour shares the target. A push
        moves one checker to an empty square, so it flips the two bits of ``pair`` in the
        board that owns the checker; the pushes of one pop touch distinct squares, so
        their flips add up (exclusive or) to the pop. Rows go :data:`POP_SLICE` at a time,
        all ray slots at once (a slots-by-rows table).
        """
        falls = bool(self.pop_fall.any())
        for lo in range(0, len(landing), POP_SLICE):
            sl = slice(lo, lo + POP_SLICE)
            L = landing[sl].astype(np.intp)
            ms, ts = m[sl], t[sl]
            snap = ms | ts
            pair = self.pop_pair.take(L, axis=1, mode="clip")
            nb = self.pop_nb.take(L, axis=1, mode="clip")
            go = (pair & snap) == nb
            if self.any_shared:
                go &= np.bitwise_count(self.pop_shared.take(L, axis=1, mode="clip") & snap) < 2
            flip = pair * go
            mine = flip * ((nb & ms) != 0)
            ms ^= np.bitwise_xor.reduce(mine, axis=0)
            ts ^= np.bitwise_xor.reduce(flip ^ mine, axis=0)
            if falls:  # no push lands on a neighbour (it is one step from L, a target two)
                down = self.pop_fall.take(L, mode="clip")
                my_fall, their_fall = ms & down, ts & down
                ms &= ~my_fall
                ts &= ~their_fall
                if self.rs.edge == "reincarnation":
                    my_bin[sl] += popcount(my_fall)
                    their_bin[sl] += popcount(their_fall)

    def judge(self, m, t, my_bin, their_bin):
        """(result relative to the mover, passed) of positions just played, given from the
        mover's side: lines, then ringout, then stuck (see RULES.md)."""
        if len(m) > JUDGE_SLICE:
            return _in_slices(self.judge, JUDGE_SLICE, m, t, my_bin, their_bin)
        rs = self.rs
        total = len(m)
        mine_line = self.has_line(m)
        their_line = self.has_line(t)
        result = np.where(
            mine_line,
            np.where(their_line, DRAW, MOVER_WINS),
            np.where(their_line, MOVER_LOSES, NONE),
        ).astype(np.int8)
        if rs.edge == "ringout":
            open_ = result == NONE
            me_short = (popcount(m) + my_bin) < 3
            them_short = (popcount(t) + their_bin) < 3
            ring = np.where(
                me_short,
                np.where(them_short, DRAW, MOVER_LOSES),
                np.where(them_short, MOVER_WINS, NONE),
            ).astype(np.int8)
            result = np.where(open_, ring, result)
        passed = np.zeros(total, dtype=bool)
        open_ = np.flatnonzero(result == NONE)
        if len(open_):
            stuck = ~self.has_action(t[open_], m[open_], their_bin[open_])
            if stuck.any():
                s_idx = open_[stuck]
                if rs.stuck == "draw":
                    result[s_idx] = DRAW
                else:
                    again = self.has_action(m[s_idx], t[s_idx], my_bin[s_idx])
                    result[s_idx[~again]] = DRAW
                    passed[s_idx[again]] = True
        return result, passed

    def successors(self, states: States) -> Successors:
        """Every legal action of every position and its outcome, in the reference order."""
        me, them, mb, tb = states.mover_view()
        ex = self.expand(me, them, mb, tb)
        if (ex.src < 0).any() and (ex.src >= 0).any():
            # A parent's placements before its moves: a stable sort by parent.
            order = np.argsort(ex.parent, kind="stable")
            ex = Expansion(*(getattr(ex, f)[order] for f in Expansion.__dataclass_fields__))
        turn = states.turn[ex.parent]
        # As handed over: the opponent, unless the opponent passed (then the mover again).
        # A game-ending action hands over to the opponent too.
        nxt_turn = np.where(ex.passed, turn, 1 - turn).astype(np.int8)
        is_o = turn == 1
        x = np.where(is_o, ex.them, ex.me)
        o = np.where(is_o, ex.me, ex.them)
        xb = np.where(is_o, ex.tb, ex.mb).astype(np.int8)
        ob = np.where(is_o, ex.mb, ex.tb).astype(np.int8)
        result = ex.result.copy()
        wins = ex.result == MOVER_WINS
        loses = ex.result == MOVER_LOSES
        result[wins] = np.where(is_o[wins], O_WINS, X_WINS)
        result[loses] = np.where(is_o[loses], X_WINS, O_WINS)
        return Successors(
            ex.parent, ex.src, ex.dst, States(x, o, xb, ob, nxt_turn), result, ex.passed
        )

    # --- keys -----------------------------------------------------------------------------

    def images(self, b: np.ndarray) -> list[np.ndarray]:
        """``b`` under every symmetry, identity first."""
        return [b] + [p(b) for p in self.permuters]

    def least_images(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The least image of each pair of boards over every symmetry, ``a`` compared first.

        When both boards fit one 64-bit word, the words are compared. Otherwise only ``a``
        is mapped by every symmetry; ``b`` is mapped by the one that gave the least ``a``,
        and by all of them only in the rows where two give that least ``a`` (a board with a
        symmetry of its own), so most rows cost one look-up of ``b``.

        >>> eng = engine(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
        >>> a, b = np.array([0b100], dtype=np.uint64), np.array([0b010], dtype=np.uint64)
        >>> [bin(int(v[0])) for v in eng.least_images(a, b)]
        ['0b1', '0b10']
        """
        n = np.uint64(self.n)
        if 2 * self.n <= 64:
            word = (a << n) | b
            for p in self.permuters:
                image = p(a)
                image <<= n
                image |= p(b)
                np.minimum(word, image, out=word)
            return word >> n, word & np.uint64((1 << self.n) - 1)
        images = self.images(a)
        best = a.copy()
        which = np.zeros(len(a), dtype=np.intp)
        for i, image in enumerate(images[1:], 1):
            which[image < best] = i
            np.minimum(best, image, out=best)
        least_b = self.stack.pick(b, which)
        tied = np.zeros(len(a), dtype=bool)
        for i, image in enumerate(images):
            tied |= (image == best) & (which != i)
        rows = np.flatnonzero(tied)
        if len(rows):
            sub_best, least = best[rows], least_b[rows]
            for image_a, image_b in zip(images, self.images(b[rows]), strict=True):
                fits = image_a[rows] == sub_best
                np.minimum(least, np.where(fits, image_b, least), out=least)
            least_b[rows] = least
        return best, least_b

    def _words(self, a, b, abin, bbin, extra=None) -> list[np.ndarray]:
        """Two boards and two bins (and an optional bit) as key words, most significant first."""
        n, bb = self.n, self.bin_bits
        high = (abin.astype(np.uint64) << np.uint64(bb)) | bbin.astype(np.uint64)
        if extra is not None:
            high = (high << ONE) | extra.astype(np.uint64)
        if self.key_words == 1:
            return [(high << np.uint64(2 * n)) | (a << np.uint64(n)) | b]
        if self.key_words == 2:
            return [(high << np.uint64(n)) | a, b]
        return [high, a, b]

    def _canonical(self, a, b, abin, bbin, extra=None) -> np.ndarray:
        """The least key over every symmetric image of the boards (bins are invariant).

        Works in slices of :data:`KEY_SLICE` so that the temporaries stay in the cache.
        """
        total = len(a)
        if total > KEY_SLICE:
            return _in_slices(self._canonical, KEY_SLICE, a, b, abin, bbin, extra)
        # The bins (and the extra bit) are the high words and invariant, so the least key
        # is the least (a, b) image.
        best = self._words(*self.least_images(a, b), abin, bbin, extra)
        if len(best) == 1:
            return best[0]
        out = np.empty(total, dtype=KEY2 if len(best) == 2 else KEY3)
        for name, word in zip(out.dtype.names, best, strict=True):
            out[name] = word
        return out

    def keys(self, states: States) -> np.ndarray:
        """Canonical keys of positions: equal exactly for symmetric images of a position."""
        return self._canonical(states.x, states.o, states.xb, states.ob, states.turn)

    def class_keys(self, me, them, mb, tb) -> np.ndarray:
        """Canonical keys of positions given from the mover's side (no turn in the key).

        A position and its colour swap (x and o exchanged, the other player to move) look the
        same from the mover's side, so they share a key.
        """
        return self._canonical(me, them, mb, tb)

    def child_keys(self, ex: Expansion, rows: np.ndarray) -> np.ndarray:
        """:meth:`class_keys` of the children ``rows`` of ``ex``, :data:`KEY_SLICE` at a
        time: no copy of the children's columns is made at full length."""
        if not len(rows):
            return self.class_keys(*ex.child_view(rows))
        return _in_slices(lambda r: self.class_keys(*ex.child_view(r)), KEY_SLICE, rows)

    def unpack_class(self, keys: np.ndarray):
        """(me, them, mb, tb) of class keys (the canonical representative)."""
        n, bb = self.n, self.bin_bits
        nmask = np.uint64((1 << n) - 1)
        bmask = np.uint64((1 << bb) - 1)
        if self.key_words == 1:
            me = (keys >> np.uint64(n)) & nmask
            them = keys & nmask
            high = keys >> np.uint64(2 * n)
        elif self.key_words == 2:
            me = keys["hi"] & nmask
            them = keys["lo"]
            high = keys["hi"] >> np.uint64(n)
        else:
            me, them, high = keys["mid"], keys["lo"], keys["hi"]
        tb = (high & bmask).astype(np.int8)
        mb = ((high >> np.uint64(bb)) & bmask).astype(np.int8)
        return me, them, mb, tb

    def orbit_sizes(self, me, them) -> np.ndarray:
        """How many distinct positions the symmetries make of each (me, them) pair."""
        ms, ts = self.images(me), self.images(them)
        if self.key_words == 1 and 2 * self.n <= 64:
            words = np.stack([(a << np.uint64(self.n)) | b for a, b in zip(ms, ts, strict=True)])
            words.sort(axis=0)
            return 1 + (np.diff(words, axis=0) != 0).sum(axis=0)
        count = np.ones(len(me), dtype=np.int64)
        for i in range(1, len(ms)):
            new = np.ones(len(me), dtype=bool)
            for j in range(i):
                new &= (ms[i] != ms[j]) | (ts[i] != ts[j])
            count += new
        return count
