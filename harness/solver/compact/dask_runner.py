"""The lean strong solver on Dask: each level's expansions and each ply's un-plays as tasks.

``python -m harness solve RULESET --method compact --workers N`` (or ``--scheduler``,
``--cluster-config``, with ``--shared DIR``) runs :func:`harness.solver.compact.solve` with a
:class:`DaskRunner`. What is split is the embarrassingly parallel part:

* **enumeration**: a breadth-first level's classes, in rank ranges of
  :data:`TASK_CLASSES`; a task (:func:`expand_task`) expands its range with the batch
  engine (successor keys, canonicalisation) and returns each class's flags and successor
  count, and its range's successor classes, distinct and sorted, with their colourings;
* **retrograde pass**: the classes decided at ply k, in ranges of :data:`TASK_CLASSES`; a
  task (:func:`unplay_task`) un-plays its range and returns every (child row, parent class
  key, pass) it found. A ply swept forwards (:func:`harness.solver.compact.backward.sweep`)
  sends the open classes instead, and a task (:func:`successors_task`) returns every (row, successor
  class key, pass) of its range.

The coordinator (the command's own process) keeps the only copy of the per-class columns
(the sorted keys, meta bytes, counters and 2-bit values) and does all the bookkeeping: it
looks the returned keys up, merges the new classes and updates the values, taking the
ranges' results strictly in range order (never in the order tasks finish). A task's input
is its range of keys (a few hundred KB), its output its range's results; so no worker needs
the class table, only the installed package.

Data moves as npz bytes (no pickle): through the scheduler, or with ``--shared DIR`` as
files by content hash (:mod:`harness.cluster.store`). Each input carries this run's token,
echoed in its output, so two runs sharing a folder never share an object; the coordinator
removes a range's two objects once it has merged the result.

Why the answer never depends on the cluster: the ranges depend only on the level (its
size and the constants here, never on the number of workers); a task is a pure function
of its input, so a rerun after a lost worker returns the same arrays; and the merge is in
range order. The same ranges run in this process give the same solution, class by class,
as :class:`~harness.solver.compact.runner.InlineRunner`'s smaller batches: a level's successor set
and a ply's decided classes do not depend on how the level was cut.

Faults: a worker lost mid-task has its task rerun by the scheduler (up to
``distributed.scheduler.allowed-failures``). A task that raises (a damaged shared file, a
memory cap on the worker) is not retried (``retries=0``) and stops the solve with one
:class:`TaskFailed` line naming the stage, level and range; nothing is written.

>>> import numpy as np
>>> unpack(pack(keys=np.arange(3, dtype=np.uint64)))["keys"].tolist()
[0, 1, 2]
"""

from __future__ import annotations

import io
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator

import numpy as np

from harness.cluster.store import Blob, SharedStore, digest_of, fetch, publish
from harness.rules.ruleset import Ruleset
from harness.solver.batch import BatchEngine, engine
from harness.solver.compact.constants import BATCH, CompactError
from harness.solver.compact.runner import (
    InlineRunner,
    expand_range,
    index_ranges,
    successors_range,
    unplay_range,
)
from harness.solver.compact.unplay import Unplayer
from harness.solver.memory import return_freed_memory

TASK_CLASSES = 16384  # classes per task: about 0.1-0.3 s of work, against ~20 ms per task
INLINE_BELOW = BATCH  # a level or ply smaller than one batch runs here: no round trip
WINDOW = 4  # tasks in flight per worker (results wait on the workers until merged)


class TaskFailed(CompactError):
    """A solve task failed on the cluster for a real reason, or every worker that ran it
    died; ``exit_code`` is the command's (3 for a memory cap, 2 otherwise)."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


def pack(**arrays: np.ndarray) -> bytes:
    """Arrays as the bytes of an uncompressed npz (what travels; never a pickle)."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def unpack(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return {name: z[name] for name in z.files}


# One un-player per worker process and ruleset (its tables take a moment to build).
_UNPLAYERS: dict[str, Unplayer] = {}
_TUNED: list[bool] = []  # the allocator of this worker process is set (see _engine)


def _engine(ruleset: str) -> BatchEngine:
    """The batch engine of ``ruleset``, in a worker process set up for the solver.

    The first call sets glibc's allocator as the single-process solve does: a Dask nanny
    starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``, under which every batch-sized
    temporary is a fresh mapping and its pages fault in again; measured, a task then takes
    2.5 times the CPU it takes in the command's own process.
    """
    if not _TUNED:
        return_freed_memory()
        _TUNED.append(True)
    return engine(Ruleset.from_id(ruleset))


def expand_task(ruleset: str, data: bytes | Blob, shared: str | None) -> bytes | Blob:
    """One enumeration task: expand a range of a level (:func:`~harness.solver.compact.runner.
    expand_range`). Input arrays ``keys``, ``bits``, ``first``; output ``flag``, ``count``,
    ``keys``, ``bits`` (the successors), each with the run's ``token``."""
    a = unpack(fetch(data))
    flag, count, uk, ub = expand_range(_engine(ruleset), a["keys"], a["bits"], a["first"])
    out = pack(token=a["token"], flag=flag, count=count, keys=uk, bits=ub)
    return publish(out, shared)


def unplay_task(ruleset: str, data: bytes | Blob, shared: str | None) -> bytes | Blob:
    """One retrograde task: un-play a range of the classes decided at one ply
    (:func:`~harness.solver.compact.runner.unplay_range`). Input ``keys``; output ``rows``,
    ``parents`` (class keys) and ``same`` (the action was a pass)."""
    a = unpack(fetch(data))
    eng = _engine(ruleset)
    unplayer = _UNPLAYERS.get(ruleset)
    if unplayer is None:
        _UNPLAYERS.clear()
        unplayer = _UNPLAYERS[ruleset] = Unplayer(eng)
    rows, parents, same = unplay_range(eng, unplayer, a["keys"])
    return publish(pack(token=a["token"], rows=rows, parents=parents, same=same), shared)


def successors_task(ruleset: str, data: bytes | Blob, shared: str | None) -> bytes | Blob:
    """One task of a swept ply: every live successor of a range of open classes
    (:func:`~harness.solver.compact.runner.successors_range`). Input ``keys``; output ``rows``,
    ``children`` (class keys) and ``same`` (the action was a pass)."""
    a = unpack(fetch(data))
    rows, children, same = successors_range(_engine(ruleset), a["keys"])
    return publish(pack(token=a["token"], rows=rows, children=children, same=same), shared)


class DaskRunner(InlineRunner):
    """Runs the lean solve's pieces as tasks of a :class:`harness.cluster.Session`.

    ``task_classes`` and ``inline_below`` fix how levels are cut (keep the defaults: the
    tests lower them to get many tasks from small rulesets). ``progress``: the stage bars
    (default: on a terminal). After the solve, :attr:`tasks` and :attr:`per_worker` say
    what ran where.
    """

    def __init__(
        self,
        session,
        *,
        task_classes: int = TASK_CLASSES,
        inline_below: int = INLINE_BELOW,
        progress: bool | None = None,
        on_submit: Callable[[str], None] | None = None,
    ):
        # A level goes out 16 tasks at a time, to keep every worker busy (so a class reached
        # again at its own level is more often expanded twice than in one process). The
        # batches it keeps here (below ``inline_below``) run on this thread.
        super().__init__(piece=16 * task_classes, threads=1)
        self.session = session
        self.task_classes = task_classes
        self.inline_below = inline_below
        self.progress = progress
        self.on_submit = on_submit
        self.token = np.frombuffer(uuid.uuid4().bytes, dtype=np.uint8)
        self.store: SharedStore | None = session.store
        self.shared = None if self.store is None else str(self.store.root)
        self.per_worker: Counter[str] = Counter()
        self.tasks = 0
        self.steps: Counter[str] = Counter()  # levels / plies seen per stage
        self.bars: dict[str, object] = {}

    # --- the two kinds of pieces --------------------------------------------------------

    def expand(self, eng: BatchEngine, keys: np.ndarray, bits: np.ndarray, first: np.ndarray, find):
        self.steps["enumerate"] += 1
        if len(keys) < self.inline_below:
            yield from super().expand(eng, keys, bits, first, find)
            return

        def payload(lo: int, hi: int) -> bytes:
            return pack(token=self.token, keys=keys[lo:hi], bits=bits[lo:hi], first=first[lo:hi])

        step = f"level {self.steps['enumerate']}"
        for lo, hi, a in self._run("enumerate", step, expand_task, eng, len(keys), payload):
            # The look-ups need the class table, which only this process holds.
            yield lo, hi, (a["flag"], a["count"], a["keys"], a["bits"], find(a["keys"]))

    def unplay(
        self, eng: BatchEngine, unplayer: Unplayer, keys: np.ndarray, level, keep=None, then=None
    ):
        # ``keep`` (the open filter) is not shipped to the tasks: it is applied here to
        # what they return, before ``then`` looks the parents up (the store is this
        # process's).
        self.steps["retrograde"] += 1
        if len(level) < self.inline_below:
            yield from super().unplay(eng, unplayer, keys, level, keep, then)
            return

        def payload(lo: int, hi: int) -> bytes:
            return pack(token=self.token, keys=keys[level[lo:hi].astype(np.int64)])

        step = f"ply {self.steps['retrograde']}"
        for lo, hi, a in self._run("retrograde", step, unplay_task, eng, len(level), payload):
            got = (a["rows"], a["parents"], a["same"])
            if keep is not None:
                kept = np.flatnonzero(keep(got[1]))
                got = tuple(col[kept] for col in got)
            yield lo, hi, got if then is None else then(got)

    def successors(self, eng: BatchEngine, keys: np.ndarray, rows: np.ndarray, then=None):
        self.steps["sweep"] += 1
        if len(rows) < self.inline_below:
            yield from super().successors(eng, keys, rows, then)
            return

        def payload(lo: int, hi: int) -> bytes:
            return pack(token=self.token, keys=keys[rows[lo:hi].astype(np.int64)])

        step = f"sweep {self.steps['sweep']}"
        for lo, hi, a in self._run("retrograde", step, successors_task, eng, len(rows), payload):
            got = (a["rows"], a["children"], a["same"])
            yield lo, hi, got if then is None else then(got)

    # --- submitting and merging in order ------------------------------------------------

    def _bar(self, stage: str):
        bar = self.bars.get(stage)
        if bar is None:
            bar = self.bars[stage] = self.session.bar(
                0, f"solve {stage}", unit="task", progress=self.progress
            )
        return bar

    def _run(
        self, stage: str, step: str, fn: Callable, eng: BatchEngine, n: int, payload: Callable
    ) -> Iterator[tuple[int, int, dict]]:
        """Submit ``fn`` over the ranges of ``n`` items (a window at a time) and yield
        each range's arrays in range order."""
        session, store = self.session, self.store
        ranges = index_ranges(n, self.task_classes)
        bar = self._bar(stage)
        bar.add(len(ranges))
        window = WINDOW * max(1, len(session.workers()))
        todo = iter(enumerate(ranges))
        flight: deque = deque()
        ruleset = eng.rs.id

        def submit_next() -> None:
            for i, (lo, hi) in todo:
                data = payload(lo, hi)
                arg = data if store is None else store.put(data)
                key = f"solve-{stage}-{self.tasks:06d}-{digest_of(data)[:16]}"
                self.tasks += 1
                flight.append(
                    (i, lo, hi, session.submit(fn, ruleset, arg, self.shared, key=key), arg)
                )
                if self.on_submit is not None:
                    self.on_submit(key)
                return

        for _ in range(window):
            submit_next()
        try:
            while flight:
                i, lo, hi, future, arg = flight.popleft()
                try:
                    traced = future.result()
                    arrays = unpack(fetch(traced.value))
                except Exception as exc:  # noqa: BLE001 - reported once, as one line
                    raise self._failure(stage, step, ruleset, lo, hi, n, exc) from None
                if not np.array_equal(arrays.pop("token"), self.token):
                    raise TaskFailed(f"{ruleset}: solve {stage} {step}: a result of another run")
                future.release()
                self._discard(arg, traced.value)
                self.per_worker[traced.worker] += 1
                bar.done(traced.worker)
                submit_next()
                yield lo, hi, arrays
        finally:
            for _i, _lo, _hi, future, _arg in flight:
                future.cancel()

    def _discard(self, *items) -> None:
        """Remove a merged range's objects from the shared folder (the solve's traffic is
        transient; the run token keeps other runs' objects apart)."""
        for item in items:
            if isinstance(item, Blob):
                item.path().unlink(missing_ok=True)

    def _failure(self, stage, step, ruleset, lo, hi, n, exc: BaseException) -> TaskFailed:
        from distributed import KilledWorker

        where = f"{ruleset}: solve {stage} task of {step} (items {lo:,}-{hi - 1:,} of {n:,})"
        if isinstance(exc, KilledWorker):
            return TaskFailed(
                f"{where} was lost: every worker that ran it died "
                "(distributed.scheduler.allowed-failures reached); not retried again"
            )
        if isinstance(exc, MemoryError):
            return TaskFailed(f"{where} ran out of memory on its worker: {exc}", exit_code=3)
        return TaskFailed(f"{where} failed on its worker: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars = {}


__all__ = ["DaskRunner", "TaskFailed", "expand_task", "pack", "unpack", "unplay_task"]
