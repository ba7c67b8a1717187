"""Bitboards as numpy ``uint64`` columns: square maps and symmetry permutations applied to
whole columns at once, bit counts, and the look-up windows that find three in a row.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import numpy as np

from harness.rules.geometry import geometry_for

U64 = np.uint64


ONE = np.uint64(1)


ZERO = np.uint64(0)


def square_bit(sq: int) -> np.uint64:
    return np.uint64(1 << sq)


def shifter(d: int):
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
        self._pull = [(*shifter(-d), np.uint64(m)) for d, m in steps]
        self._push = [(*shifter(d), np.uint64(m)) for d, m in steps]

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


def chunk_bits(b: np.ndarray, start, mask) -> np.ndarray:
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
            part = table.take(chunk_bits(b, start, mask), mode="clip")
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
            idx += chunk_bits(b, start, mask)
            part = self.tables.take(idx, mode="clip")
            out = part if out is None else out | part
        assert out is not None
        return out


def in_slices(fn, size: int, *cols):
    """``fn`` over equal-length columns (None passes through) ``size`` rows at a time, the
    results joined: one array, or a tuple of arrays when ``fn`` returns a tuple.

    >>> in_slices(lambda a, b: a + b, 2, np.arange(5), np.ones(5, int)).tolist()
    [1, 2, 3, 4, 5]
    """
    parts = [
        fn(*(None if c is None else c[lo : lo + size] for c in cols))
        for lo in range(0, len(cols[0]), size)
    ]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(col) for col in zip(*parts, strict=True))
    return np.concatenate(parts)


def mover_columns(me, them, mb, tb):
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
def line_windows(rows: int, cols: int, edge: str):
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
