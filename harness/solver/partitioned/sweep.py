"""A retrograde ply of the partitioned solver done forwards (a *sweep*), for a ply whose
decided classes would cost more to un-play than the open ones to expand again (as the
compact solver's :func:`~harness.solver.compact.backward.sweep`; on 5x5 c4 reincarnation
ply 1 decides 2.5 million classes and leaves 3.8 million open).

It takes two steps and the step between them:

1. :func:`ask` (in retrograde step k, after the classes of ply k are decided): every open
   class is expanded again; its distinct (successor, pass) edges are kept in the step's
   ``edges`` column, and each distinct successor is asked of its owner.
2. :func:`answer_step` (the answer step k): each owner tells each asker the value of every
   successor it asked about, decided by ply k or not, in the order asked.
3. :func:`judge` (in retrograde step k + 1, instead of what un-playing would have sent): an
   open class with an action into a lost successor wins in k + 1; the others count their
   edges not won for the opponent, and with none left and no drawing action lose in
   k + 1. That is the state un-playing ply k leaves.
"""

from __future__ import annotations

import time

import numpy as np

from harness.solver.classindex import sorted_unique
from harness.solver.compact.constants import AVOID, OPEN, V_LOSS, V_WIN
from harness.solver.compact.runner import successors_batch
from harness.solver.compact.store import group_keys
from harness.solver.memory import return_freed_memory
from harness.solver.partitioned.files import (
    ANS,
    ENUM,
    PLY,
    Run,
    brief,
    inbox,
    owner_of,
    slice_digest,
    summary_of,
)
from harness.solver.partitioned.keys import distinct, find

SWEEP_BATCH = 2048  # open classes expanded again at once (the compact solver's figure)


def ask(eng, keys: np.ndarray, open_rows: np.ndarray, partitions: int):
    """Expand the open classes again: returns (the distinct successors, grouped by owner and
    sorted within one, as the requests; the edge codes ``row << 33 | successor << 1 | pass``,
    distinct and in row order, ``successor`` an index into the requests).

    As the compact solver's sweep, each batch's successors are made distinct first (its
    edges point into them); the batches' distinct keys are then merged once, and each
    batch's are found among them in key order."""
    parts = []  # per batch: its distinct successors and its edges into them
    for lo in range(0, len(open_rows), SWEEP_BATCH):
        rows = open_rows[lo : lo + SWEEP_BATCH]
        r, ck, same = successors_batch(eng, keys[rows])
        bk, _, inv = group_keys(ck)
        code = (rows[r].astype(np.int64) << 33) | (inv.astype(np.int64) << 1)
        code |= same.astype(np.int64)
        parts.append((bk, sorted_unique(code)))
    if not parts:
        return keys[:0], np.zeros(0, dtype=np.int64)
    uk, _ = distinct(
        [bk for bk, _ in parts], [np.zeros(len(bk), dtype=np.uint8) for bk, _ in parts], keys
    )
    owner = owner_of(uk, partitions)
    grouped = np.argsort(owner, kind="stable")
    at = np.empty(len(uk), dtype=np.int64)
    at[grouped] = np.arange(len(uk))
    codes = []
    for bk, code in parts:
        local = at[find(uk, bk)]  # bk is sorted: the searches share their paths
        child = local[(code >> 1) & ((1 << 32) - 1)]
        codes.append((code & ~np.int64(((1 << 32) - 1) << 1)) | (child << 1))
    return uk[grouped], np.concatenate(codes)


def answer_step(run: Run, step: int, part: int) -> dict:
    """Answer step ``step`` of partition ``part``: the value, as retrograde step ``step``
    left it, of every class another partition asked about (OPEN where undecided, drawing
    action or not), for each asker in the order it asked."""
    start, cpu = time.perf_counter(), time.process_time()
    if (done := run.finished(ANS, step, part)) is not None:
        return brief(done["summary"])
    return_freed_memory()
    rec = run.record(PLY, step, part)
    keys = run.load(run.record(ENUM, int(rec["summary"]["classes_at"]), part), "keys")
    value = run.load(rec, "value")
    asked, _ = inbox(run, PLY, step, part)
    out_k, out_v, offsets, digests = [], [], [0], []
    for req in asked:
        rows = find(keys, req)
        if (rows < 0).any():
            raise AssertionError(f"{run.ruleset}: a successor the enumeration did not reach")
        v = value[rows]
        v[v == AVOID] = OPEN
        out_k.append(req)
        out_v.append(v)
        offsets.append(offsets[-1] + len(req))
        digests.append(slice_digest(req, v))
    summary = summary_of(
        start, cpu, answered=offsets[-1], sent=offsets[-1], offsets=offsets, digests=digests
    )
    arrays = {"out-keys": np.concatenate(out_k), "out-pay": np.concatenate(out_v)}
    return brief(run.write(ANS, step, part, arrays, summary)["summary"])


def judge(run: Run, step: int, part: int, value, count) -> np.ndarray:
    """Retrograde step ``step`` after a sweep at ``step - 1`` (module doc): decides the
    open classes it settles at ply ``step``; returns their rows."""
    edges = run.load(run.record(PLY, step - 1, part), "edges")
    _, answers = inbox(run, ANS, step - 1, part)
    cv = np.concatenate(answers) if answers else np.zeros(0, dtype=np.uint8)
    del answers
    row = edges >> 33
    child = (edges >> 1) & ((1 << 32) - 1)
    same = (edges & 1).astype(bool)
    v = cv[child]
    del child
    good = np.where(same, v == V_WIN, v == V_LOSS)
    bad = np.where(same, v == V_LOSS, v == V_WIN)
    del v, same
    n = len(value)
    wins = np.zeros(n, dtype=bool)
    wins[row[good]] = True
    has = np.bincount(row, minlength=n) > 0
    left = np.bincount(row[~bad], minlength=n)
    open_ = (value == OPEN) | (value == AVOID)
    counted = np.flatnonzero(open_ & ~wins & has)
    if (left[counted] > count[counted]).any():
        raise AssertionError(f"{run.ruleset}: the sweep found more edges than enumerated")
    return decide(value, count, np.flatnonzero(open_ & wins), counted, left[counted], step)


def decide(value, count, winners, counted, left, ply: int) -> np.ndarray:
    """A ply's decisions, by un-playing or by a sweep: the open classes ``winners`` win at
    ``ply``; the others ``counted`` keep ``left`` edges not won for the opponent, and those
    with none and no drawing action lose at ``ply`` (the counter becomes the plies of a
    decided class). Returns the rows decided, sorted."""
    value[winners] = V_WIN
    count[winners] = ply
    count[counted] = left
    lost = counted[(left == 0) & (value[counted] == OPEN)]
    value[lost] = V_LOSS
    count[lost] = ply
    return np.sort(np.concatenate([winners, lost]))
