"""The compact solver's batches, each a pure function of its inputs (expand a range of a
level, un-play decided classes, regenerate successors), and :class:`InlineRunner`, which runs
them in this process, on one thread or several, handing results back in range order."""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from harness.solver.batch import BatchEngine
from harness.solver.classindex import sorted_unique
from harness.solver.compact.constants import (
    BATCH,
    CAN_AVOID,
    EXPAND_RANGE,
    PIECE,
    SCALE_CLASSES,
    SIDE_O,
    SIDE_X,
    SWEEP_BATCH,
    UNPLAY_BATCH,
    WIN_NOW,
)
from harness.solver.compact.store import group_keys, merge_groups
from harness.solver.compact.unplay import Unplayer
from harness.solver.states import DRAW, MOVER_WINS, NONE


def expand_batch(eng: BatchEngine, keys: np.ndarray, bits: np.ndarray, first: np.ndarray):
    """Expand one batch of classes (a pure function of its inputs: what a task runs).

    ``keys`` and ``bits`` (the colourings they were reached with) are classes of one
    breadth-first level; ``first`` marks those never expanded before. Returns ``(flag,
    count, child_keys, child_bits)``: per class its meta flags and distinct-successor count
    (only where ``first`` and the class does not win at once; zero elsewhere), and its live
    successors' classes, distinct and sorted, each with the OR of the colourings it is
    reached with.
    """
    k = len(keys)
    me, them, mb, tb = eng.unpack_class(keys)
    ex = eng.expand(me, them, mb, tb)
    res = ex.result
    live = np.flatnonzero(res == NONE)
    ck = eng.child_keys(ex, live)
    par = ex.parent[live]
    same = ex.passed[live]
    if first.any():
        win = np.bincount(ex.parent[res == MOVER_WINS], minlength=k) > 0
        draw = np.bincount(ex.parent[res == DRAW], minlength=k) > 0
        actions = np.bincount(ex.parent, minlength=k)
    del ex, res, live  # the children's boards: the largest columns of the batch
    # Colourings reached: a pass keeps the mover, any other action hands over.
    pb = bits[par]
    swapped = ((pb & SIDE_X) << 1) | ((pb & SIDE_O) >> 1)
    cb = np.where(same, pb, swapped).astype(np.uint8)
    uk, ub, inv = group_keys(ck, cb)
    flag = np.zeros(k, dtype=np.uint8)
    count = np.zeros(k, dtype=np.int64)
    if first.any():
        # Distinct (child, same) per parent: the retrograde counter. A class that wins at
        # once is decided at ply 1 and its counter never read (76% of the classes of 5x5
        # c4 torus): only the others' children are counted.
        counted = np.flatnonzero(~win[par])
        code = (par[counted].astype(np.int64) << 33) | (inv[counted].astype(np.int64) << 1)
        code |= same[counted]
        code = sorted_unique(code)
        count = np.bincount((code >> 33).astype(np.int64), minlength=k)
        flag = np.where(win, WIN_NOW, 0).astype(np.uint8) | np.where(
            draw | (actions == 0), CAN_AVOID, 0
        ).astype(np.uint8)
        flag[~first] = 0
        count[~first] = 0
    return flag, count, uk, ub


def expand_range(eng: BatchEngine, keys: np.ndarray, bits: np.ndarray, first: np.ndarray):
    """:func:`expand_batch` over any number of classes, :data:`BATCH` at a time, with the
    successors of all of them reduced into one sorted set (one task's work)."""
    flags, counts, cks, cbs = [], [], [], []
    for lo in range(0, len(keys), BATCH):
        sl = slice(lo, lo + BATCH)
        flag, count, ck, cb = expand_batch(eng, keys[sl], bits[sl], first[sl])
        flags.append(flag)
        counts.append(count)
        cks.append(ck)
        cbs.append(cb)
    if not flags:
        e = np.zeros(0, dtype=np.uint8)
        return e, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64), e
    uk, ub = merge_groups(cks, cbs)
    return np.concatenate(flags), np.concatenate(counts), uk, ub


def unplay_batch(eng: BatchEngine, unplayer: Unplayer, keys: np.ndarray, keep=None):
    """Every (parent class, action) into a batch of decided classes (a pure function of its
    inputs: what a task runs). Returns ``(rows, parent_keys, same)``: the child's row in
    ``keys``, the parent's class key, and whether the action was a pass (the parent's mover
    is the child's). With ``keep`` (:meth:`Unplayer.parent_keys`), only the parents whose
    keys it keeps."""
    me, them, mb, tb = eng.unpack_class(keys)
    rows, pkeys = unplayer.parent_keys(them, me, tb, mb, passed=False, keep=keep)
    same = np.zeros(len(rows), dtype=bool)
    if eng.rs.stuck == "continue":
        stuck = np.flatnonzero(~eng.has_action(them, me, tb))
        if len(stuck):
            r2, k2 = unplayer.parent_keys(
                me[stuck], them[stuck], mb[stuck], tb[stuck], passed=True, keep=keep
            )
            rows = np.concatenate([rows, stuck[r2]])
            pkeys = np.concatenate([pkeys, k2])
            same = np.concatenate([same, np.ones(len(r2), dtype=bool)])
    return rows.astype(np.int64, copy=False), pkeys, same


def unplay_range(eng: BatchEngine, unplayer: Unplayer, keys: np.ndarray):
    """:func:`unplay_batch` over any number of classes, :data:`UNPLAY_BATCH` at a time
    (rows count from the start of ``keys``)."""
    return in_batches(lambda part: unplay_batch(eng, unplayer, part), keys, UNPLAY_BATCH)


def in_batches(batch, keys: np.ndarray, size: int):
    """``batch`` (giving ``(rows, keys, same)`` for a part of ``keys``) over all of ``keys``,
    ``size`` at a time, the results joined with rows counted from the start of ``keys``."""
    rows, found, same = [], [], []
    for lo in range(0, len(keys), size):
        r, k, s = batch(keys[lo : lo + size])
        rows.append(r + lo)
        found.append(k)
        same.append(s)
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64), np.zeros(0, bool)
    return np.concatenate(rows), np.concatenate(found), np.concatenate(same)


def successors_batch(eng: BatchEngine, keys: np.ndarray):
    """Every action of a batch of classes into a live successor (a pure function of its
    inputs: what a task runs). Returns ``(rows, child_keys, same)``: the class's row in
    ``keys``, the successor's class key, and whether the action was a pass."""
    me, them, mb, tb = eng.unpack_class(keys)
    ex = eng.expand(me, them, mb, tb)
    live = np.flatnonzero(ex.result == NONE)
    return ex.parent[live].astype(np.int64), eng.child_keys(ex, live), ex.passed[live]


def successors_range(eng: BatchEngine, keys: np.ndarray):
    """:func:`successors_batch` over any number of classes, :data:`SWEEP_BATCH` at a time
    (rows count from the start of ``keys``)."""
    return in_batches(lambda part: successors_batch(eng, part), keys, SWEEP_BATCH)


def scaled_batch(base: int, classes: int) -> int:
    """A batch of ``base`` classes for a store of ``classes``, scaled by its size
    (:data:`SCALE_CLASSES`). For the solve's own batches: a Dask task un-plays and sweeps
    its range in batches of the base size, within a worker's memory.

    >>> scaled_batch(1024, 2_810_185), scaled_batch(1024, 18_236_123), scaled_batch(1024, 10**9)
    (1024, 4096, 8192)
    """
    return base * max(1, min(8, classes // SCALE_CLASSES))


class InlineRunner:
    """Runs the solve's batches in this process (the single-process solve).

    A runner yields each piece's result with its range, in the order of the ranges; the
    solve's bookkeeping consumes them in that order. :class:`harness.solver.compact.dask_runner.
    DaskRunner` yields the same results, computed as Dask tasks. ``piece`` is how many
    frontier classes the enumeration hands over at once.

    With ``threads`` above 1 the batches of a piece run on a pool of that many threads
    (:class:`concurrent.futures.ThreadPoolExecutor`) while this thread does the
    bookkeeping of the ranges already done: the batch engine's work is numpy calls on
    arrays of thousands of rows, which release the GIL, and every batch is a pure function
    of its input, so the ranges and the answer are those of one thread. Threads share the
    store (no copy of it per worker, as Dask's processes would need), so the memory is one
    process's: a few more batches' temporaries.
    """

    def __init__(self, piece: int | None = None, threads: int = 1):
        self.piece = PIECE if piece is None else piece
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads) if threads > 1 else None

    def _in_order(self, ranges, batch):
        """``batch(lo, hi)`` over ``ranges``, yielded as ``(lo, hi, result)`` in order: on
        the pool, at most two ranges a thread ahead of the one yielded."""
        if self.pool is None:
            for lo, hi in ranges:
                yield lo, hi, batch(lo, hi)
            return
        todo = iter(ranges)
        flight: deque = deque()

        def submit_next() -> None:
            lo_hi = next(todo, None)
            if lo_hi is not None:
                flight.append((*lo_hi, self.pool.submit(batch, *lo_hi)))

        try:
            for _ in range(2 * self.threads):
                submit_next()
            while flight:
                lo, hi, fut = flight.popleft()
                submit_next()
                yield lo, hi, fut.result()
        finally:
            for _, _, fut in flight:
                fut.cancel()

    def expand(self, eng: BatchEngine, keys: np.ndarray, bits: np.ndarray, first: np.ndarray, find):
        """:func:`expand_range` over ``keys`` in ranges, each result with its successors'
        rows, ``find(successor keys)``, appended (on the pool with the expansion: the
        store does not change while a piece's ranges are out)."""

        def batch(lo: int, hi: int):
            flag, count, ck, cb = expand_range(eng, keys[lo:hi], bits[lo:hi], first[lo:hi])
            return flag, count, ck, cb, find(ck)

        yield from self._in_order(index_ranges(len(keys), EXPAND_RANGE), batch)

    def unplay(
        self, eng: BatchEngine, unplayer: Unplayer, keys: np.ndarray, level, keep=None, then=None
    ):
        """:func:`unplay_batch` of the classes at rows ``level`` in ranges; ``then``, if
        given, is applied to each range's result where it is computed (as ``find`` in
        :meth:`expand`)."""

        def batch(lo: int, hi: int):
            got = unplay_batch(eng, unplayer, keys[level[lo:hi].astype(np.int64)], keep)
            return got if then is None else then(got)

        size = scaled_batch(UNPLAY_BATCH, len(keys))
        yield from self._in_order(index_ranges(len(level), size), batch)

    def successors(self, eng: BatchEngine, keys: np.ndarray, rows: np.ndarray, then=None):
        """:func:`successors_batch` of the classes at ``rows`` in ranges, with ``then`` as
        in :meth:`unplay`."""

        def batch(lo: int, hi: int):
            got = successors_batch(eng, keys[rows[lo:hi].astype(np.int64)])
            return got if then is None else then(got)

        size = scaled_batch(SWEEP_BATCH, len(keys))
        yield from self._in_order(index_ranges(len(rows), size), batch)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def index_ranges(n: int, size: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into ``(lo, hi)`` pieces of ``size``.

    >>> index_ranges(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    return [(lo, min(n, lo + size)) for lo in range(0, n, size)]
