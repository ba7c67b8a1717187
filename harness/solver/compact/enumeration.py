"""The breadth-first enumeration of the reachable classes, level by level, with the frontier
kept in each class's meta byte and new keys merged into the store a piece at a time."""

from __future__ import annotations

import numpy as np

from harness.rules.position import Position
from harness.solver.batch import BatchEngine
from harness.solver.budget import Budget
from harness.solver.compact.columns import column_top
from harness.solver.compact.constants import (
    NEW,
    NEW_SHIFT,
    PENDING_MIN,
    SCAN,
    SIDE_X,
    TODO,
    TODO_SHIFT,
)
from harness.solver.compact.runner import InlineRunner
from harness.solver.compact.store import KeyStore, merge_groups
from harness.solver.memory import trim_heap
from harness.solver.states import States


def enumerate_classes(
    eng: BatchEngine, store: KeyStore, budget: Budget, bar=None, tick=None, runner=None
) -> int:
    """Breadth first over (class, colouring): every reachable class, its reachable
    colourings, whether it wins at once or has a drawing action, and its count of distinct
    successors (the retrograde counter). Returns the number of expansions.

    The frontier is kept in the store itself, as two bits of colourings per class (TODO and
    NEW in the meta byte), not as arrays of keys: a level's classes are gathered from the
    store in key order, ``runner.piece`` at a time, and handed to ``runner``
    (:func:`expand_batch` in ranges). Successors the store already holds get their new
    colourings at once; unknown ones are held and merged into the store after a piece
    whenever more than a sixteenth of its size (at least :data:`PENDING_MIN`) is waiting.
    So the only temporaries that grow with the ruleset are those held keys: none is a whole
    level. The store is updated here, range by range in order, so the result never depends
    on the runner; its keys do not move while a piece's ranges are out, so a runner looks
    the successors up along with the expansion (on its threads, if it has them)."""
    runner = runner or InlineRunner()
    rs = eng.rs
    root = Position.initial(rs)
    me, them, mb, tb = States.from_positions([root]).mover_view()
    rk = eng.class_keys(me, them, mb, tb)
    store.merge(rk, {"meta": np.array([SIDE_X | SIDE_X << NEW_SHIFT], dtype=np.uint8)})
    pend_k: list[np.ndarray] = []
    pend_b: list[np.ndarray] = []
    pending = 0

    def merge_pending() -> None:
        nonlocal pend_k, pend_b, pending
        if pend_k:
            nk, nb = merge_groups(pend_k, pend_b)
            pend_k, pend_b, pending = [], [], 0
            store.merge(nk, {"meta": nb | (nb << np.uint8(NEW_SHIFT))})
            del nk, nb

    expansions = 0
    level = 0
    while start_level(store):
        after = None  # the last key taken at this level: the store's rows move on merges
        while True:
            taken = take_frontier(store, after, runner.piece)
            if taken is None:
                break
            rows, fk, fb, first = taken
            after = fk[-1]
            # The store's keys stay put while a piece's ranges come back (new keys are
            # merged between pieces), so a runner may look the successors up as it goes,
            # and a taken class's row is where it was taken.
            for lo, hi, (flag, count, ck, cb, ci) in runner.expand(eng, fk, fb, first, store.find):
                expansions += hi - lo
                m = store.col("meta")
                f = np.flatnonzero(first[lo:hi])
                if len(f):
                    idx = rows[lo:hi][f]
                    m[idx] |= flag[f]
                    top = int(count[f].max())
                    while top > column_top(store.columns["count"]):
                        store.columns["count"].widen()
                    store.col("count")[idx] = count[f]
                # Known successors reached with a new colouring: record it, and put it in
                # the frontier: this level's, if the class is still to be taken at this
                # level (so it is expanded once with both), else the next level's. Unknown
                # ones wait to be merged in.
                known = ci >= 0
                kn = ci[known]
                newbits = cb[known] & ~m[kn] & np.uint8(3)
                hit = newbits != 0
                kn, newbits = kn[hit], newbits[hit]
                later = (m[kn] & TODO) != 0
                shift = np.where(later, TODO_SHIFT, NEW_SHIFT).astype(np.uint8)
                m[kn] |= newbits | (newbits << shift)
                unknown = ~known
                pend_k.append(ck[unknown])
                pend_b.append(cb[unknown])
                pending += int(unknown.sum())
                if tick is not None:
                    # A level of a 10^8-class ruleset takes minutes: say where it is.
                    tick(
                        f"enumerate: level {level + 1}, {store.count:,} classes, "
                        f"{expansions:,} expansions"
                    )
                budget.check(store.count)
            if pending > max(PENDING_MIN, store.count // 16):
                merge_pending()
                trim_heap()
                if bar is not None:
                    bar.update(store.count - bar.n)
            del fk, fb, first
        merge_pending()
        trim_heap()
        level += 1
        if bar is not None:
            bar.update(store.count - bar.n)
        if tick is not None:
            tick(f"enumerate: level {level}, {store.count:,} classes")
        budget.check(store.count)
    return expansions


def start_level(store: KeyStore) -> int:
    """Turn the NEW marks (colourings reached at the last level; in the retrograde pass,
    classes decided at the last ply) into this level's TODO marks; returns how many classes
    are marked (0: the pass is complete)."""
    todo = 0
    meta = store.col("meta")
    for lo in range(0, store.count, SCAN):
        m = meta[lo : lo + SCAN]
        new = m & NEW
        marked = int(np.count_nonzero(new))
        if marked:
            todo += marked
            m &= ~(NEW | TODO)
            m |= new << np.uint8(TODO_SHIFT - NEW_SHIFT)
    return todo


def take_rows(store: KeyStore, start: int, limit: int):
    """Take the first ``limit`` rows from ``start`` on that have TODO bits, in rank order:
    returns the rows and their meta bytes as they were, and clears those TODO bits. None
    when there are none."""
    meta, n = store.col("meta"), store.count
    found: list[np.ndarray] = []
    got = 0
    lo = start
    while lo < n and got < limit:
        hi = min(n, lo + SCAN)
        rows = np.flatnonzero(meta[lo:hi] & TODO)[: limit - got] + lo
        found.append(rows)
        got += len(rows)
        lo = hi
    rows = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    if not len(rows):
        return None
    m = meta[rows]
    meta[rows] = m & ~TODO
    return rows, m


def take_frontier(store: KeyStore, after, limit: int):
    """The next ``limit`` frontier classes after key ``after`` (from the start when None),
    in key order (:func:`take_rows`): their rows, keys and TODO colourings, and whether
    each is expanded for the first time. None when the level has no more."""
    keys = store.sorted_keys()
    start = 0 if after is None else int(np.searchsorted(keys, after, side="right"))
    taken = take_rows(store, start, limit)
    if taken is None:
        return None
    rows, m = taken
    todo = (m >> np.uint8(TODO_SHIFT)) & np.uint8(3)
    new = (m >> np.uint8(NEW_SHIFT)) & np.uint8(3)
    # Colourings neither to expand now nor just reached were expanded at an earlier level.
    first = (m & np.uint8(3) & ~(todo | new)) == 0
    return rows, keys[rows], todo, first
