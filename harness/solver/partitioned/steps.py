"""One partition's share of one step of a partitioned solve: what a Dask task runs.

Each function reads the partition's columns as the previous step left them and what every
partition sent it then, does its step, and writes its new columns and what it found for
every owner (:meth:`Run.write`). It is a pure function of those files: a task rerun after
its worker was lost writes the same thing.

- :func:`enumerate_step`: merge the successors received (new classes, or new colourings of
  known ones) and expand the classes reached with a colouring not yet expanded; send their
  successors to their owners. A class found with one colouring waits a step before its
  first expansion, which often finds it with the other one too: it is then expanded once
  for both. The first expansion of a class records whether it wins at
  once, whether it has a drawing action and its count of distinct successors, as in the
  compact solver (:func:`~harness.solver.compact.runner.expand_batch`).
- :func:`retrograde_step`: at ply k, decide the classes that what was received settles (an
  action into a lost successor wins in k; a class whose every successor is won for the
  opponent, and that cannot draw, loses in k), then un-play them: each parent is sent
  whether one of its actions into them wins, and how many distinct edges from it are now
  known won for the opponent.
- :func:`unplay_round` and :func:`apply_round`: a ply un-played in rounds, where its
  messages would not fit the disk at once. The ply's step keeps the rows it decided
  (``todo``) instead of un-playing them; each round un-plays a slice of every partition's
  rows and sends the messages, and the owners then apply them to a running copy of their
  values and counters. The next ply's step starts from the last round's copy and the rows
  it decided. Applying the messages round by round decides the same classes at the same
  ply as applying them at once: a class's counter only falls, and an action into a lost
  successor wins whenever its message comes.
- :func:`final_step`: every class's result, plies, colourings and orbit size.

Every task first sets malloc's mmap threshold as a solve in this process does
(:func:`~harness.solver.memory.return_freed_memory`): with glibc's default, each of a
batch's big temporaries is a fresh mapping that page-faults as it is touched, and 5x5 c4
reincarnation took 218 CPU s on one Dask worker against 91 in this process.
"""

from __future__ import annotations

import time

import numpy as np

from harness.rules.position import Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import engine
from harness.solver.checksum import class_checksum
from harness.solver.compact.constants import (
    AVOID,
    CAN_AVOID,
    EXPAND_RANGE,
    NEW,
    NEW_SHIFT,
    OPEN,
    SIDE_X,
    UNPLAY_BATCH,
    V_LOSS,
    V_WIN,
    WIN_NOW,
)
from harness.solver.compact.runner import expand_range, unplay_batch
from harness.solver.compact.unplay import Unplayer
from harness.solver.memory import return_freed_memory
from harness.solver.partitioned.files import (
    APPLY,
    ENUM,
    FINAL,
    PLY,
    ROUND,
    Run,
    brief,
    group_by_owner,
    inbox,
    owner_of,
    summary_of,
)
from harness.solver.partitioned.keys import distinct, find, firsts, mixed, order
from harness.solver.partitioned.sweep import ask, decide, judge
from harness.solver.solution import LOSS, UNKNOWN, WIN
from harness.solver.states import States

# The counter, then the plies, of a class: two bytes (a byte overflows on 5x5 c8).
COUNT = np.uint16
COUNT_TOP = np.iinfo(COUNT).max

# The open filter (OpenFilter): bits a class at least (as the compact solver's KeyFilter),
# the least table, and its hash constant.
FILTER_BITS = 16
FILTER_MIN_BITS = 10
FILTER_MULT = np.uint64(0xC2B2AE3D27D4EB4F)

# The meta bit of a class that has waited a step for its other colouring (one of the
# compact solver's TODO bits, which this solver does not use). On 5x5 c3 reincarnation the
# wait took the enumeration from 3.05 to 1.58 CPU s, in 19 steps instead of 17.
WAITED = np.uint8(1 << 6)

# Classes a partition expands at most in one step (the others stay in its frontier for the
# next): what a step sends is held on disk until the step after it is saved, and on 5x5 c8
# a step's frontier sends 10 to 15 successors a class.
EXPAND_MAX = 1 << 21

# Successors (or parents) held before they are reduced to distinct keys: 2**22 take 36 MB.
HELD = 1 << 22


def _due(parts: list) -> bool:
    """Whether the parts held since the last reduction (all but the first, which is its
    result) call for another: past :data:`HELD` and past the reduced part's own size, so
    that each key is sorted a bounded number of times (not once per range)."""
    held = sum(len(k) for k in parts[1:])
    return held > HELD and held > len(parts[0])


# A parent's message at a ply: bit 0, an action into a class decided there wins; above it,
# how many distinct edges into classes decided there are won for the opponent.
GOOD = np.uint32(1)


def root_key(rs: Ruleset) -> np.ndarray:
    eng = engine(rs)
    me, them, mb, tb = States.from_positions([Position.initial(rs)]).mover_view()
    return eng.class_keys(me, them, mb, tb)


def enumerate_step(run: Run, step: int, part: int) -> dict:
    """Enumeration step ``step`` of partition ``part`` (module doc); returns its summary:
    ``classes`` held, classes ``expanded``, successors ``sent``, seconds, CPU seconds."""
    start, cpu = time.perf_counter(), time.process_time()
    if (done := run.finished(ENUM, step, part)) is not None:
        return brief(done["summary"])  # a twin of this task finished it
    return_freed_memory()
    rs = Ruleset.from_id(run.ruleset)
    eng = engine(rs)
    if step == 0:
        root = root_key(rs)
        keys = root[:0]
        meta = np.zeros(0, dtype=np.uint8)
        count = np.zeros(0, dtype=COUNT)
        mine = owner_of(root, run.partitions) == part
        got_k = [root[mine]]
        got_b = [np.full(int(mine.sum()), SIDE_X, dtype=np.uint8)]
    else:
        rec = run.record(ENUM, step - 1, part)
        keys, meta, count = (run.load(rec, name) for name in ("keys", "meta", "count"))
        got_k, got_b = inbox(run, ENUM, step - 1, part)
    received = sum(len(k) for k in got_k)
    held = len(keys)
    keys, meta, count = _merge_received(keys, meta, count, *distinct(got_k, got_b, keys))
    # No class new to this partition (most of a long enumeration's last steps): its keys,
    # the biggest column, are linked from the step before instead of written again.
    same_as = {"keys": rec} if step > 0 and len(keys) == held else None
    # The frontier: classes reached with a colouring not expanded yet (NEW bits).
    rows = np.flatnonzero(meta & NEW)
    m = meta[rows]
    todo = (m >> np.uint8(NEW_SHIFT)) & np.uint8(3)
    first = (m & np.uint8(3) & ~todo) == 0
    # A class found with one colouring waits one step before its first expansion: it is
    # often found with the other one then, and expanded once for both.
    wait = first & (todo != 3) & ((m & WAITED) == 0)
    meta[rows[wait]] |= WAITED
    go = np.flatnonzero(~wait)[:EXPAND_MAX]  # the rest of a big frontier: the next step
    later = len(rows) - int(wait.sum()) - len(go)
    rows, todo, first = rows[go], todo[go], first[go]
    del m, go
    succ_k, succ_b = [], []
    for lo in range(0, len(rows), EXPAND_RANGE):
        r = rows[lo : lo + EXPAND_RANGE]
        f = first[lo : lo + EXPAND_RANGE]
        flag, cnt, ck, cb = expand_range(eng, keys[r], todo[lo : lo + EXPAND_RANGE], f)
        if len(cnt) and int(cnt.max()) >= COUNT_TOP:
            raise OverflowError(f"{rs.id}: a class has {int(cnt.max())} successors")
        meta[r[f]] |= flag[f]
        count[r[f]] = cnt[f]
        succ_k.append(ck)
        succ_b.append(cb)
        if _due(succ_k):
            # Reduced as they come: the successors held are about the distinct ones.
            merged = distinct(succ_k, succ_b, keys)
            succ_k, succ_b = [merged[0]], [merged[1]]
    meta[rows] &= ~NEW
    sk, sb = distinct(succ_k, succ_b, keys)
    out_k, out_b, offsets, digests = group_by_owner(sk, sb, run.partitions)
    summary = summary_of(
        start,
        cpu,
        classes=len(keys),
        received=received,
        expanded=len(rows),
        waiting=int(wait.sum()) + later,
        sent=len(out_k),
        offsets=offsets,
        digests=digests,
    )
    arrays = {"keys": keys, "meta": meta, "count": count, "out-keys": out_k, "out-pay": out_b}
    done = run.write(ENUM, step, part, arrays, summary, same_as)
    if step > 0:
        run.drop(ENUM, step - 1, part, ("keys", "meta", "count"))
    return brief(done["summary"])


def _merge_received(keys, meta, count, new_k, new_b):
    """Successors received (distinct, sorted, with the colourings reached): a known class
    takes its new colourings into its frontier, an unknown one is inserted with them."""
    if not len(new_k):
        return keys, meta, count
    at = find(keys, new_k)
    known = at >= 0
    kn = at[known]
    fresh = new_b[known] & ~meta[kn] & np.uint8(3)
    meta[kn] |= fresh | (fresh << np.uint8(NEW_SHIFT))
    add_k, add_b = new_k[~known], new_b[~known]
    if len(add_k):
        slots = np.searchsorted(keys, add_k)
        keys = np.insert(keys, slots, add_k)
        meta = np.insert(meta, slots, add_b | (add_b << np.uint8(NEW_SHIFT)))
        count = np.insert(count, slots, COUNT(0))
    return keys, meta, count


def retrograde_step(
    run: Run,
    step: int,
    part: int,
    classes_at: int,
    filtered: bool = False,
    sweep: bool = False,
    deferred: bool = False,
    applied: int | None = None,
) -> dict:
    """Retrograde step ``step`` of partition ``part`` (module doc); ``classes_at`` is the
    enumeration's last step (whose keys and meta bytes are final).

    Step 0 decides the classes of ply 1 (they win at once, or have no action and cannot
    draw); step k >= 1 takes the classes of ply k (for k >= 2 decided by what step k-1
    sent) and un-plays them. With ``filtered``, a parent proposed by the un-playing is
    played forward only if the filters of the classes open after step k-1 (one per
    partition, :class:`OpenFilter`) may hold it: the others are decided already. With
    ``sweep``, step k expands its open classes again instead and asks about their
    successors (:mod:`~harness.solver.partitioned.sweep`), and step k + 1 judges them on the
    answers. With ``deferred``, step k keeps the rows it decided for rounds
    (:func:`unplay_round`) instead of un-playing them; ``applied`` names the last round of
    ply k - 1 when that ply was un-played in rounds. Returns the summary: classes
    ``decided`` at ply max(k, 1), classes still ``open``, messages ``sent``, seconds, CPU
    seconds."""
    start, cpu = time.perf_counter(), time.process_time()
    if (done := run.finished(PLY, step, part)) is not None:
        return brief(done["summary"])  # a twin of this task finished it
    return_freed_memory()
    rs = Ruleset.from_id(run.ruleset)
    eng = engine(rs)
    classes = run.record(ENUM, classes_at, part)
    keys = run.load(classes, "keys")
    received = 0
    if step == 0:
        meta = run.load(classes, "meta")
        count = run.load(classes, "count")
        win = (meta & WIN_NOW) != 0
        avoid = (meta & CAN_AVOID) != 0
        lose = ~win & (count == 0) & ~avoid
        value = np.full(len(keys), OPEN, dtype=np.uint8)
        value[win] = V_WIN
        value[lose] = V_LOSS
        value[~win & ~lose & avoid] = AVOID
        decided = np.flatnonzero(win | lose)
        count[decided] = 1
        del meta, win, avoid, lose
        out_k, out_p = keys[:0], np.zeros(0, dtype=np.uint32)
    elif applied is not None:
        rec = run.record(APPLY, applied, part)
        value, count = run.load(rec, "value"), run.load(rec, "count")
        decided = run.load(rec, "next")
    else:
        rec = run.record(PLY, step - 1, part)
        value, count = run.load(rec, "value"), run.load(rec, "count")
        if step == 1:
            decided = np.flatnonzero((value == V_WIN) | (value == V_LOSS))
        elif rec["summary"].get("swept"):
            decided = judge(run, step, part, value, count)
        else:
            got_k, got_p = inbox(run, PLY, step - 1, part)
            received = sum(len(k) for k in got_k)
            decided = _settle(keys, value, count, got_k, got_p, step)
            del got_k, got_p
    open_rows = np.flatnonzero((value == OPEN) | (value == AVOID))
    edges = None
    if step > 0 and sweep:
        out_k, edges = ask(eng, keys, open_rows, run.partitions)
        out_p = np.zeros(len(out_k), dtype=np.uint8)
    elif step > 0 and not deferred:
        keep = OpenFilter.load(run, step - 1).may_hold if filtered else None
        out_k, out_p = _unplay(eng, keys, value, decided, keep)
    elif step > 0:
        out_k, out_p = keys[:0], np.zeros(0, dtype=np.uint32)
    table = OpenFilter.table_of(keys[open_rows])
    out_k, out_p, offsets, digests = group_by_owner(out_k, out_p, run.partitions)
    summary = summary_of(
        start,
        cpu,
        classes=len(keys),
        received=received,
        decided=len(decided),
        open=len(open_rows),
        sent=len(out_k),
        filtered=bool(filtered) and not sweep,
        swept=edges is not None,
        deferred=bool(deferred) and step > 0 and not sweep,
        classes_at=classes_at,
        offsets=offsets,
        digests=digests,
    )
    arrays = {
        "value": value,
        "count": count,
        "open": table,
        "out-keys": out_k,
        "out-pay": out_p,
    }
    if edges is not None:
        arrays["edges"] = edges
    if summary["deferred"]:
        arrays["todo"] = decided.astype(np.int64)
    done = run.write(PLY, step, part, arrays, summary)
    if step > 0:
        run.drop(PLY, step - 1, part, ("value", "count", "edges"))
    return brief(done["summary"])


ROUND_SHARES = 1 << 30
"""A round un-plays the rows ``[n * lo // ROUND_SHARES, n * hi // ROUND_SHARES)`` of each
partition's ``n`` rows to un-play: the same share of every partition, whole on rerun."""


def round_rows(todo: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The slice of ``todo`` a round with shares ``lo:hi`` un-plays.

    >>> round_rows(np.arange(10), 0, ROUND_SHARES // 2).tolist()
    [0, 1, 2, 3, 4]
    """
    n = len(todo)
    return todo[n * lo // ROUND_SHARES : n * hi // ROUND_SHARES]


def unplay_round(
    run: Run, rnd: int, part: int, ply_step: int, classes_at: int, lo: int, hi: int, filtered: bool
) -> dict:
    """Round ``rnd`` of the un-playing of retrograde step ``ply_step`` (deferred): the rows of
    shares ``lo:hi`` of what partition ``part`` decided there, their parents sent to their
    owners as that step would have sent them (through the same open filters)."""
    start, cpu = time.perf_counter(), time.process_time()
    if (done := run.finished(ROUND, rnd, part)) is not None:
        return brief(done["summary"])
    return_freed_memory()
    eng = engine(Ruleset.from_id(run.ruleset))
    keys = run.load(run.record(ENUM, classes_at, part), "keys")
    rec = run.record(PLY, ply_step, part)
    value = run.load(rec, "value")
    rows = round_rows(run.load(rec, "todo"), lo, hi)
    keep = OpenFilter.load(run, ply_step - 1).may_hold if filtered else None
    out_k, out_p = _unplay(eng, keys, value, rows, keep)
    out_k, out_p, offsets, digests = group_by_owner(out_k, out_p, run.partitions)
    summary = summary_of(
        start,
        cpu,
        unplayed=len(rows),
        sent=len(out_k),
        filtered=bool(filtered),
        offsets=offsets,
        digests=digests,
    )
    done = run.write(ROUND, rnd, part, {"out-keys": out_k, "out-pay": out_p}, summary)
    return brief(done["summary"])


def apply_round(
    run: Run, rnd: int, part: int, ply_step: int, classes_at: int, previous: int | None
) -> dict:
    """Apply what round ``rnd`` sent partition ``part`` to its values and counters: those
    retrograde step ``ply_step`` left for the first round (``previous`` None), else those
    round ``previous`` left. Keeps the rows decided at ply ``ply_step + 1`` so far
    (``next``). Returns the summary: ``decided`` so far, ``open``, messages ``received``."""
    start, cpu = time.perf_counter(), time.process_time()
    if (done := run.finished(APPLY, rnd, part)) is not None:
        return brief(done["summary"])
    return_freed_memory()
    keys = run.load(run.record(ENUM, classes_at, part), "keys")
    if previous is None:
        rec = run.record(PLY, ply_step, part)
        earlier = np.zeros(0, dtype=np.int64)
    else:
        rec = run.record(APPLY, previous, part)
        earlier = run.load(rec, "next")
    value, count = run.load(rec, "value"), run.load(rec, "count")
    got_k, got_p = inbox(run, ROUND, rnd, part)
    received = sum(len(k) for k in got_k)
    decided = _settle(keys, value, count, got_k, got_p, ply_step + 1)
    del got_k, got_p
    later = np.sort(np.concatenate([earlier, decided.astype(np.int64)]))
    summary = summary_of(
        start,
        cpu,
        received=received,
        decided=len(later),
        open=int(np.count_nonzero((value == OPEN) | (value == AVOID))),
    )
    arrays = {"value": value, "count": count, "next": later}
    done = run.write(APPLY, rnd, part, arrays, summary)
    if previous is not None:
        run.drop(APPLY, previous, part, ("value", "count", "next"))
    return brief(done["summary"])


class OpenFilter:
    """Which class keys may be open: one table of bits per partition, made by that
    partition from its open classes (:meth:`table_of`, at least :data:`FILTER_BITS` bits a
    class, a power of two); a key is looked up in its owner's table. A key whose bit is
    clear is not open; at most about one in :data:`FILTER_BITS` of the others shares a bit
    with an open one. Classes only leave the open set, so the filter of an earlier step
    still holds every class open now.

    The hash is the high bits of key x :data:`FILTER_MULT`, another constant than the
    owner's (:data:`~harness.solver.partitioned.files.MULT`): with the same one a
    partition's keys would share their low bits of it and fill part of the table only.

    >>> keys = np.array([5, 9, 12], dtype=np.uint64)
    >>> OpenFilter([OpenFilter.table_of(keys)]).may_hold(keys).tolist()
    [True, True, True]
    """

    def __init__(self, tables: list[np.ndarray]):
        sizes = np.array([len(t) * 8 for t in tables], dtype=np.int64)
        self.shift = np.array([64 - int(n).bit_length() + 1 for n in sizes], dtype=np.uint64)
        self.base = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.uint64)
        self.table = np.concatenate(tables) if tables else np.zeros(0, dtype=np.uint8)
        self.partitions = len(tables)

    @staticmethod
    def table_of(keys: np.ndarray) -> np.ndarray:
        bits = max(FILTER_MIN_BITS, int(len(keys) * FILTER_BITS - 1).bit_length())
        table = np.zeros(1 << (bits - 3), dtype=np.uint8)
        if len(keys):
            h = mixed(keys, FILTER_MULT) >> np.uint64(64 - bits)
            np.bitwise_or.at(
                table,
                (h >> np.uint64(3)).astype(np.int64),
                np.left_shift(1, (h & np.uint64(7)).astype(np.uint8)).astype(np.uint8),
            )
        return table

    @classmethod
    def load(cls, run: Run, step: int) -> OpenFilter:
        return cls([run.load(run.record(PLY, step, q), "open") for q in range(run.partitions)])

    def may_hold(self, keys: np.ndarray) -> np.ndarray:
        q = owner_of(keys, self.partitions)
        h = mixed(keys, FILTER_MULT) >> self.shift[q]
        h += self.base[q]
        byte = self.table.take((h >> np.uint64(3)).astype(np.int64), mode="clip")
        return ((byte >> (h & np.uint64(7)).astype(np.uint8)) & 1).astype(bool)


def _settle(keys, value, count, got_k, got_p, ply: int) -> np.ndarray:
    """Apply the messages of the last ply (module doc): returns the rows decided at ``ply``."""
    if not got_k:
        return np.zeros(0, dtype=np.int64)
    pk = np.concatenate(got_k)
    pay = np.concatenate(got_p)
    rows = find(keys, pk)
    held = rows >= 0  # a parent that is not reachable was proposed: it is no class of ours
    rows, pay = rows[held], pay[held]
    order = np.argsort(rows, kind="stable")
    rows, pay = rows[order], pay[order]
    if not len(rows):
        return rows
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    r = rows[starts]
    good = np.bitwise_or.reduceat(pay & GOOD, starts) != 0
    hits = np.add.reduceat((pay >> np.uint32(1)).astype(np.int64), starts)
    v = value[r]
    open_ = (v == OPEN) | (v == AVOID)
    rest = open_ & ~good
    counted, hits = r[rest], hits[rest]
    left = count[counted].astype(np.int64) - hits
    if (left < 0).any():
        raise AssertionError("un-playing found more edges than enumerated")
    return decide(value, count, r[open_ & good], counted, left, ply)


def _unplay(eng, keys, value, decided, keep=None):
    """Every parent of the ``decided`` rows, as (distinct parent keys, message): bit 0 set
    where an action into them wins for the parent, above it the count of distinct
    (parent, child, pass) edges won for the parent's opponent. With ``keep``, only the
    parents it keeps (the others are decided: their messages would be dropped)."""
    unplayer = Unplayer(eng)
    parts_k, parts_p = [], []
    for lo in range(0, len(decided), UNPLAY_BATCH):
        child = decided[lo : lo + UNPLAY_BATCH]
        r, pk, same = unplay_batch(eng, unplayer, keys[child], keep)
        if not len(r):
            continue
        cv = value[child[r]]
        good = np.where(same, cv == V_WIN, cv == V_LOSS)
        # Distinct (parent, child, pass) edges: a child is un-played in this batch alone.
        words = (pk["lo"], pk["hi"]) if pk.dtype.names else (pk,)
        o = np.lexsort((same, r, *words))
        pk, r, same, good = pk[o], r[o], same[o], good[o]
        distinct = np.ones(len(pk), dtype=bool)
        distinct[1:] = (pk[1:] != pk[:-1]) | (r[1:] != r[:-1]) | (same[1:] != same[:-1])
        pk, good = pk[distinct], good[distinct]
        msg = np.where(good, GOOD, np.uint32(2))  # a good edge, or one bad edge (hits 1)
        parts_k.append(pk)
        parts_p.append(msg.astype(np.uint32))
        if _due(parts_k):
            merged = _combine(parts_k, parts_p)
            parts_k, parts_p = [merged[0]], [merged[1]]
    if not parts_k:
        return keys[:0], np.zeros(0, dtype=np.uint32)
    return _combine(parts_k, parts_p)


def _combine(parts_k: list, parts_p: list):
    """One message per distinct parent key of the (non-empty list of) parts: good if any
    is, hits summed."""
    pk = np.concatenate(parts_k)
    msg = np.concatenate(parts_p)
    parts_k.clear()
    parts_p.clear()
    o = order(pk)
    pk, msg = pk[o], msg[o]
    del o
    starts = firsts(pk)
    good = np.bitwise_or.reduceat(msg & GOOD, starts)
    hits = np.add.reduceat(msg >> np.uint32(1), starts)
    return pk[starts], (hits << np.uint32(1)) | good


def final_step(run: Run, part: int, classes_at: int, plies_at: int) -> dict:
    """Every class's result, plies, reachable colourings and orbit size (the solve's
    answer for this partition), from the enumeration's last step and the last ply."""
    start, cpu = time.perf_counter(), time.process_time()
    return_freed_memory()
    rs = Ruleset.from_id(run.ruleset)
    eng = engine(rs)
    classes = run.record(ENUM, classes_at, part)
    keys, meta = run.load(classes, "keys"), run.load(classes, "meta")
    rec = run.record(PLY, plies_at, part)
    value, count = run.load(rec, "value"), run.load(rec, "count")
    result = np.select([value == V_WIN, value == V_LOSS], [WIN, LOSS], UNKNOWN).astype(np.int8)
    plies = np.where(result == UNKNOWN, 0, count).astype(COUNT)
    sides = (meta & np.uint8(3)).astype(np.int8)
    orbit = np.zeros(len(keys), dtype=np.int8)
    for lo in range(0, len(keys), 1 << 13):
        me, them, _, _ = eng.unpack_class(keys[lo : lo + (1 << 13)])
        orbit[lo : lo + (1 << 13)] = eng.orbit_sizes(me, them)
    weight = (sides & 1).astype(np.int64) + (sides >> 1 & 1)
    root = root_key(rs)
    at = find(keys, root)[0] if owner_of(root, run.partitions)[0] == part else -1
    summary = summary_of(
        start,
        cpu,
        classes=len(keys),
        positions=int((weight * orbit).sum()),
        canonical=int(weight.sum()),
        wins=int((result == WIN).sum()),
        losses=int((result == LOSS).sum()),
        root=None if at < 0 else {"result": int(result[at]), "plies": int(plies[at])},
        deepest=int(plies.max()) if len(plies) else 0,
        # The partition's share of the solution's checksum, while its columns are in hand.
        checksum=class_checksum(keys, result, plies),
    )
    arrays = {"result": result, "plies": plies, "sides": sides, "orbit": orbit}
    return run.write(FINAL, 0, part, arrays, summary)["summary"]
