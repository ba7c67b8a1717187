"""The retrograde pass of the compact solver, ply by ply: the classes decided at ply k are
un-played, or, when that costs more, every open class is swept forwards and judged on its
successors' values (:func:`sweep`); what is never decided is a draw."""

from __future__ import annotations

import numpy as np

from harness.solver.batch import BatchEngine
from harness.solver.classindex import sorted_unique
from harness.solver.compact.columns import column_top, get2, get2_range, set2
from harness.solver.compact.constants import (
    AVOID,
    CAN_AVOID,
    FILTER_KEEP,
    FILTER_OPEN,
    NEW_SHIFT,
    OPEN,
    SCAN,
    TODO,
    UNPLAY_COST,
    UNPLAY_COST_FILTERED,
    V_LOSS,
    V_WIN,
    WIN_NOW,
)
from harness.solver.compact.enumeration import start_level, take_rows
from harness.solver.compact.runner import InlineRunner
from harness.solver.compact.store import KeyFilter, KeyStore, count_values, group_keys
from harness.solver.compact.unplay import Unplayer


def retrograde(
    eng: BatchEngine,
    store: KeyStore,
    values: np.ndarray,
    tick=None,
    bar=None,
    runner=None,
    *,
    resume_at: int | None = None,
    after_ply=None,
) -> int:
    """The retrograde pass (module doc): ``values`` (2-bit) and the ``count`` column (the
    counter, then the plies) are updated in place. Returns the deepest ply.

    ``after_ply(k)`` is called when every class of ply ``k`` is decided and marked NEW (the
    state a checkpoint saves); ``resume_at=k`` goes on from such a state.

    As in the enumeration, a ply's classes are marked in the meta byte (the NEW bit when
    decided, TODO while they are un-played), not listed: they are gathered from the store in
    rank order, ``runner.piece`` at a time, and ``runner`` un-plays them
    (:func:`unplay_batch`) in ranges; the values are updated here, range by range in order.
    """
    runner = runner or InlineRunner()
    rs = eng.rs
    unplayer = Unplayer(eng)
    count = store.col("count")
    meta = store.col("meta")
    n = store.count
    new_bit = np.uint8(1 << NEW_SHIFT)
    decided_now = 0
    for lo in range(0, n if resume_at is None else 0, SCAN):
        hi = min(n, lo + SCAN)
        m = meta[lo:hi]
        win = (m & WIN_NOW) != 0
        avoid = (m & CAN_AVOID) != 0
        c = count[lo:hi]
        lose = ~win & (c == 0) & ~avoid
        idx = np.arange(lo, hi)
        set2(values, idx[win], V_WIN)
        set2(values, idx[lose], V_LOSS)
        set2(values, idx[~win & ~lose & avoid], AVOID)
        c[win | lose] = 1
        m[win | lose] |= new_bit
        decided_now += int(np.count_nonzero(win | lose))
        del m, win, avoid, c, lose, idx
    k = 1 if resume_at is None else resume_at
    # Kept up to date ply by ply; counted from the values only on a resume.
    open_left = n - decided_now if resume_at is None else _count_open(values, n)
    if bar is not None:
        bar.update(n - open_left)
    keys = store.sorted_keys()
    maybe_open, made_for = None, 0
    while todo := start_level(store):
        if k + 1 > column_top(store.columns["count"]):  # this ply's decisions are at k + 1
            store.columns["count"].widen()
            count = store.col("count")
        decided_now = 0
        filtered = open_left <= FILTER_OPEN * n
        if todo * (UNPLAY_COST_FILTERED if filtered else UNPLAY_COST) > open_left:
            maybe_open = None  # gone before the sweep makes its own
            decided_now = sweep(eng, store, values, k, runner, tick)
            todo = 0  # the sweep has read every decided class: no un-play this ply
        start = 0
        if todo and filtered and (maybe_open is None or open_left < made_for * FILTER_KEEP):
            maybe_open = None  # the old table goes before the new one is made
            maybe_open = KeyFilter.of_store(store, values, (OPEN, AVOID), open_left)
            made_for = open_left
        while todo and (taken := take_rows(store, start, runner.piece)) is not None:
            level = taken[0]
            start = int(level[-1]) + 1
            keep = None if maybe_open is None else maybe_open.may_hold

            def edges(unplayed):
                return _parent_edges(store, *unplayed)

            for lo, hi, code in runner.unplay(eng, unplayer, keys, level, keep, then=edges):
                if not len(code):
                    continue
                cres = get2(values, level[lo:hi].astype(np.int64))
                parent = code >> 21
                child = (code >> 1) & ((1 << 20) - 1)
                same = (code & 1).astype(bool)
                cr = cres[child]
                good = np.where(same, cr == V_WIN, cr == V_LOSS)
                pv = get2(values, parent)
                open_ = (pv == OPEN) | (pv == AVOID)
                winners = sorted_unique(parent[good & open_])
                _decide(store, values, winners, V_WIN, k + 1)
                pv = get2(values, parent)
                bad = ~good & ((pv == OPEN) | (pv == AVOID))
                losers, hits = sorted_unique(parent[bad], counts=True)
                left = count[losers].astype(np.int64) - hits
                if (left < 0).any():
                    raise AssertionError(f"{rs.id}: un-playing found more edges than enumerated")
                lost = _count_off(store, values, losers, left, k + 1)
                decided_now += len(winners) + len(lost)
                if tick is not None:
                    tick(f"retrograde: ply {k}, un-playing; {decided_now:,} decided so far")
        k += 1
        open_left -= decided_now
        if bar is not None:
            bar.update(decided_now)
        if tick is not None:
            tick(f"retrograde: ply {k}, {decided_now:,} classes decided")
        if after_ply is not None:
            after_ply(k)
    return k - 1


def _parent_edges(store: KeyStore, rows, pkeys, same) -> np.ndarray:
    """The edges of an un-played range (:func:`unplay_batch`'s result, the parents the
    open filter dropped gone already) into the parents: one sorted code ``parent row << 21
    | child << 1 | pass`` each, distinct. Parents the store does not hold (not reachable)
    are left out. A pure function of the store's keys, which do not move during the
    retrograde pass: it runs where the range is computed."""
    pidx = store.find(pkeys)
    del pkeys
    found = pidx >= 0
    if not found.all():
        pidx, rows, same = pidx[found], rows[found], same[found]
    # Made in place: the parents of a batch are the un-playing's largest columns.
    pidx <<= 21
    rows = rows.astype(np.int64) << 1
    pidx |= rows
    pidx |= same
    del rows, same
    return sorted_unique(pidx, in_place=True)


def _child_edges(store: KeyStore, maybe, prow, ckeys, same):
    """The edges of a swept range (:func:`successors_batch`'s result): each distinct
    successor looked up once, in key order, where ``maybe`` (a filter of the classes other
    than won) lets it through. Returns (distinct successors, which were looked up, their
    rows in the store, one sorted code ``class << 33 | successor << 1 | pass`` per distinct
    edge). Pure, as :func:`_parent_edges`."""
    uk, _, inv = group_keys(ckeys)
    look = slice(None) if maybe is None else np.flatnonzero(maybe.may_hold(uk))
    cidx = store.find(uk[look])
    code = sorted_unique((prow << 33) | (inv.astype(np.int64) << 1) | same.astype(np.int64))
    return len(uk), look, cidx, code


def _decide(store: KeyStore, values: np.ndarray, rows: np.ndarray, value, ply: int) -> None:
    """Classes ``rows`` are decided (``value``) at ``ply``: their plies replace their
    counters, and the NEW mark has them un-played (or swept past) at the next ply."""
    set2(values, rows, value)
    store.col("count")[rows] = ply
    store.col("meta")[rows] |= np.uint8(1 << NEW_SHIFT)


def _count_off(store: KeyStore, values: np.ndarray, rows, left, ply: int) -> np.ndarray:
    """The counters of open classes ``rows`` become ``left``; those with none left and no
    drawing action lose at ``ply`` (:func:`_decide`). Returns the lost rows."""
    store.col("count")[rows] = left
    lost = rows[(left == 0) & (get2(values, rows) == OPEN)]
    _decide(store, values, lost, V_LOSS, ply)
    return lost


def _count_open(values: np.ndarray, n: int) -> int:
    """Classes not yet decided (open, or open with a drawing action)."""
    return count_values(values, n, (OPEN, AVOID))


def sweep(eng: BatchEngine, store: KeyStore, values: np.ndarray, k: int, runner, tick=None) -> int:
    """Ply ``k`` of the retrograde pass done forwards: every open class is expanded again
    and judged on its successors decided by ply ``k`` (those decided at ``k + 1`` during
    this sweep carry the NEW mark and count as open). A class with an action into a lost
    successor wins in ``k + 1``; otherwise its counter becomes its number of distinct
    (successor, pass) pairs not known to be won by the opponent, and with none left and no
    drawing action it loses in ``k + 1``: the state un-playing ply ``k`` leaves. Returns
    how many classes it decided."""
    rs = eng.rs
    n = store.count
    meta, count, keys = store.col("meta"), store.col("count"), store.sorted_keys()
    new_bit = np.uint8(1 << NEW_SHIFT)
    for lo in range(0, n, SCAN):
        meta[lo : lo + SCAN] &= ~TODO
    # Where at most half the classes are other than won (on 5x5 c4 torus at ply 1: 24%),
    # only the successors that may be are looked up (KeyFilter); the others were won
    # before this sweep.
    not_won = (OPEN, AVOID, V_LOSS)
    maybe = None
    if (count_not_won := count_values(values, n, not_won)) <= FILTER_OPEN * n:
        maybe = KeyFilter.of_store(store, values, not_won, count_not_won)
    decided = 0
    lo = 0
    while lo < n:
        found, got = [], 0
        while lo < n and got < runner.piece:
            hi = min(n, lo + SCAN)
            v = get2_range(values, lo, hi)
            rows = np.flatnonzero((v == OPEN) | (v == AVOID)) + lo
            found.append(rows)
            got += len(rows)
            lo = hi
        rows = np.concatenate(found)

        def edges(succ):
            return _child_edges(store, maybe, *succ)

        for plo, phi, (distinct, look, cidx, code) in runner.successors(eng, keys, rows, edges):
            part = rows[plo:phi].astype(np.int64)
            # Each distinct successor's value at ply k. (With a filter, only those it lets
            # through were looked up, so only they are checked to have been enumerated.)
            if (cidx < 0).any():
                raise AssertionError(f"{rs.id}: a successor the enumeration did not reach")
            uv = np.full(distinct, V_WIN, dtype=np.uint8)
            v = get2(values, cidx)
            v[(meta[cidx] & new_bit) != 0] = OPEN  # decided at k + 1, by this sweep
            uv[look] = v
            del look, cidx, v
            p, sm = code >> 33, (code & 1).astype(bool)
            cv = uv[(code >> 1) & ((1 << 32) - 1)]
            good = np.where(sm, cv == V_WIN, cv == V_LOSS)
            bad = np.where(sm, cv == V_LOSS, cv == V_WIN)
            wins = np.zeros(len(part), dtype=bool)
            wins[p[good]] = True
            left = np.bincount(p[~bad], minlength=len(part))
            if (left > count[part]).any():
                raise AssertionError(f"{rs.id}: the sweep found more edges than enumerated")
            winners = part[wins]
            _decide(store, values, winners, V_WIN, k + 1)
            lost = _count_off(store, values, part[~wins], left[~wins], k + 1)
            decided += len(winners) + len(lost)
            if tick is not None:
                tick(f"retrograde: ply {k}, sweeping row {lo:,} of {n:,}; {decided:,} decided")
    return decided
