"""The driver of a partitioned solve: one task per partition per step, in step order, and a
save after every step, so a killed driver goes on from the last step every partition
finished.

The driver holds O(P) numbers: the summaries its tasks return. Every per-class column lives
in the work folder, owned by one partition (:mod:`~harness.solver.partitioned.files`), and
is read and written only by that partition's tasks (:mod:`~harness.solver.partitioned.steps`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.atomic import write_atomic
from harness.bounded import MAX_DOCUMENT, loads_json, read_text
from harness.cluster.session import TaskBar
from harness.rules.ruleset import Ruleset
from harness.solver.batch import engine
from harness.solver.budget import BudgetExceeded
from harness.solver.memory import peak_resident_bytes
from harness.solver.partitioned.files import (
    ANS,
    APPLY,
    DISK_RESERVE,
    ENUM,
    FINAL,
    FORMAT,
    PLY,
    REPORT,
    ROUND,
    RUN,
    STATE,
    PartitionError,
    Run,
    brief,
    new_token,
    step_dir,
)
from harness.solver.partitioned.keys import order as keys_order
from harness.solver.partitioned.steps import (
    ROUND_SHARES,
    apply_round,
    enumerate_step,
    final_step,
    retrograde_step,
    unplay_round,
)
from harness.solver.partitioned.sweep import answer_step
from harness.solver.solution import LOSS, WIN, CompactSolution

FILTER_OPEN = 0.5  # un-play through the open filters where at most this share is open

# A ply is swept (harness.solver.partitioned.sweep) where the classes to un-play times this
# exceed the open ones: un-playing a class costs about three expansions (the compact
# solver's figure), a sweep one per open class.
UNPLAY_COST = 3

# Open classes a partition may hold for a sweep: their edges (8 bytes each, 20 to 40 a
# class) stay in its step's files until the answers come.
SWEEP_CLASSES = 1 << 22

# Plies un-played in rounds (steps.unplay_round): every ply of a solve past ROUNDS_ABOVE
# classes, each round at most ROUND_CLASSES decided classes in all, and fewer where the
# last round's messages a class say the disk holds fewer (half of what is free past the
# reserve). 5x5 c8 reincarnation (1.4e9 classes) decides about a third of them at ply 1,
# whose messages at once would be 100 GB or more.
ROUNDS_ABOVE = 1 << 28
ROUND_CLASSES = 1 << 24
ROUNDS_PER_PLY = 10_000  # round r of step k is numbered k * ROUNDS_PER_PLY + r

# Where a partition's task failed for a reason of the work folder: said as it is.
TASK_ERRORS = (PartitionError, OSError)


@dataclass
class PartitionedSolve:
    """What a partitioned solve found, summed over its partitions (no per-class array)."""

    ruleset: Ruleset
    partitions: int
    classes: int
    positions: int
    canonical: int
    value: str
    plies: int | None
    deepest: int
    enum_steps: int  # steps of the enumeration (0, 1, ...) and of the retrograde pass
    plies_steps: int
    seconds: float = 0.0
    driver_cpu: float = 0.0
    task_cpu: float = 0.0
    tasks: int = 0
    reused: int = 0
    peak_task_rss: int = 0
    disk_bytes: int = 0
    per_worker: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)
    resumed_from: str | None = None  # the saved step this call went on from (None: the start)
    finished_before: bool = False  # the folder's save was at the final step when this call
    # began (the solve had finished, or its final step was under way)
    token: str = ""  # the run's (its work folder's run.json)
    checksum: int | None = None  # the solution's class_checksum (None: a final step's
    # records made before they carried it)

    @property
    def driver_share(self) -> float:
        """The driver's share of every CPU second the solve took (tasks included)."""
        total = self.driver_cpu + self.task_cpu
        return self.driver_cpu / total if total else 0.0


class Driver:
    """Runs a solve's steps on a Dask session (one task per partition), or here, one
    partition after another, when there is none."""

    def __init__(self, run: Run, session=None, progress: bool | None = None):
        self.run = run
        self.session = session
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.task_cpu = 0.0
        self.tasks = 0
        self.reused = 0
        self.peak_rss = 0
        self.per_worker: dict[str, int] = {}
        self.steps: list[dict] = []

    def step(self, phase: str, step: int, fn, *args) -> list[dict]:
        """``fn(run, step, part, *args)`` for every partition (``fn(run, part, *args)`` for
        the final step); their summaries in partition order. A partition whose step is on
        disk already (a driver killed during the step) is not run again."""
        run = self.run
        t = time.perf_counter()
        out: list[dict | None] = [None] * run.partitions
        todo = []
        for part in range(run.partitions):
            rec = run.finished(phase, step, part)
            if rec is not None:
                out[part] = brief(rec["summary"])
                self.reused += 1
            else:
                todo.append(part)
        call = (
            (lambda part: (run, part, *args))
            if phase == FINAL
            else (lambda part: (run, step, part, *args))
        )
        # One bar a step over its partitions' tasks, in a terminal only (TaskBar).
        bar = TaskBar(len(todo), step_dir(phase, step), progress=self.progress) if todo else None
        try:
            self._run(phase, step, fn, call, todo, out, bar)
        finally:
            if bar is not None:
                bar.close()
        summaries = [s for s in out if s is not None]
        self.steps.append(
            {
                "phase": phase,
                "step": step,
                "seconds": round(time.perf_counter() - t, 3),
                "task_seconds": [s.get("seconds", 0.0) for s in summaries],
                "task_cpu": [s.get("cpu", 0.0) for s in summaries],
                "sent": sum(int(s.get("sent", 0)) for s in summaries),
                "filtered": any(s.get("filtered", False) for s in summaries),
                "out_bytes": sum(int(s.get("out_bytes", 0)) for s in summaries),
                "column_bytes": sum(int(s.get("column_bytes", 0)) for s in summaries),
                "linked_bytes": sum(int(s.get("linked_bytes", 0)) for s in summaries),
            }
        )
        return summaries

    def _run(self, phase: str, step: int, fn, call, todo: list, out: list, bar) -> None:
        """The tasks of the partitions ``todo``: here one after another, or on the session
        (collected as they finish); each summary goes into ``out``."""
        if self.session is None:
            for part in todo:
                out[part] = fn(*call(part))
                self._count(out[part], "local")
                if bar is not None:
                    bar.done("local")
            return
        from harness.cluster.tasks import TaskQueue

        queue = TaskQueue(self.session, bar)
        for part in todo:
            queue.submit(part, fn, *call(part), key=f"{phase}-{step}-{part}")
        for done in queue:
            if not done.ok:
                err = done.error
                if isinstance(err, TASK_ERRORS):
                    raise PartitionError(str(err)) from None
                raise PartitionError(
                    f"{step_dir(phase, step)}, partition {done.tag}: the task failed: "
                    f"{type(err).__name__}: {err}"
                ) from None
            out[done.tag] = done.value
            self._count(done.value, done.worker)

    def _count(self, summary: dict, worker: str) -> None:
        self.tasks += 1
        self.task_cpu += float(summary.get("cpu", 0.0))
        self.peak_rss = max(self.peak_rss, int(summary.get("peak_rss", 0)))
        self.per_worker[worker] = self.per_worker.get(worker, 0) + 1


def open_run(folder: Path, rs: Ruleset, partitions: int, fresh: bool) -> Run:
    """The run in ``folder``: made there when it holds none; its ``run.json`` checked
    (ruleset, partitions, format) when it does. ``fresh`` removes what it holds first."""
    folder = Path(folder)
    if folder.is_symlink():
        raise PartitionError(
            f"work folder {str(folder)!r} is a symbolic link; name the folder itself"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PartitionError(f"work folder {str(folder)!r}: {exc.strerror or exc}") from None
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise PartitionError(f"work folder {str(folder)!r} is not a writable folder")
    if fresh:
        _clear(folder)
    path = folder / RUN
    if not path.exists():
        if any(folder.iterdir()):
            raise PartitionError(
                f"work folder {str(folder)!r} holds files of no partitioned solve; "
                "use another folder or pass --fresh"
            )
        run = Run(folder, new_token(), partitions, rs.id)
        doc = {"ruleset": rs.id, "partitions": partitions, "format": FORMAT, "token": run.token}
        write_atomic(path, json.dumps(doc).encode())
        return run
    try:
        doc = loads_json(read_text(path, MAX_DOCUMENT, "run marker"))
        if not isinstance(doc, dict) or not isinstance(doc.get("token"), str):
            raise ValueError("not a run marker")
    except (OSError, ValueError):
        raise PartitionError(
            f"work folder {str(folder)!r}: run.json is unreadable; pass --fresh to start over"
        ) from None
    if doc.get("format") != FORMAT:
        raise PartitionError(
            f"work folder {str(folder)!r} holds a solve in format {doc.get('format')!r}, "
            f"this version reads {FORMAT}; pass --fresh"
        )
    if doc.get("ruleset") != rs.id or doc.get("partitions") != partitions:
        raise PartitionError(
            f"work folder {str(folder)!r} holds a solve of {doc.get('ruleset')} in "
            f"{doc.get('partitions')} partitions, not {rs.id} in {partitions}; use another "
            "folder or pass --fresh"
        )
    return Run(folder, doc["token"], partitions, rs.id)


def _clear(folder: Path) -> None:
    kinds = tuple(f"{k}-" for k in (ENUM, PLY, ANS, ROUND, APPLY, FINAL))
    for p in folder.iterdir():
        if p.name in (RUN, STATE, REPORT) or p.name.startswith((*kinds, ".")):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()


def _load_state(run: Run) -> dict:
    path = run.folder / STATE
    if not path.exists():
        return {"phase": ENUM, "step": -1}
    try:
        state = loads_json(read_text(path, MAX_DOCUMENT, "driver save"))
        if not isinstance(state, dict) or state.get("token") != run.token:
            raise ValueError("not this run's")
        int(state["step"])
        if state.get("phase") not in (ENUM, PLY, FINAL):
            raise ValueError("no phase")
    except (OSError, ValueError, KeyError, TypeError):
        raise PartitionError(
            f"work folder {str(run.folder)!r}: state.json is unreadable or another run's; "
            "pass --fresh"
        ) from None
    return state


def _saved_step(state: dict) -> str | None:
    """Where a loaded save stands, in words; None for a folder that holds no step yet.

    >>> _saved_step({"phase": "enum", "step": -1}), _saved_step({"phase": "ply", "step": 4})
    (None, 'retrograde step 4')
    """
    phase, step = state["phase"], int(state["step"])
    if phase == ENUM:
        return None if step < 0 else f"enumeration step {step}"
    if phase == FINAL:
        return "the final step"
    return "the end of the enumeration" if step < 0 else f"retrograde step {step}"


def _save_state(run: Run, state: dict) -> None:
    write_atomic(run.folder / STATE, json.dumps({**state, "token": run.token}).encode())


def solve(
    rs: Ruleset,
    workdir: str | os.PathLike,
    *,
    partitions: int = 1,
    session=None,
    fresh: bool = False,
    progress: bool | None = None,
    tick=None,
    max_seconds: float | None = None,
    round_classes: int | None = None,
) -> PartitionedSolve:
    """Strongly solve ``rs`` in ``partitions`` partitions kept in ``workdir`` (resumed from
    there when it holds this solve), the partitions' steps run as tasks on ``session`` (a
    :class:`~harness.cluster.session.Session`) or here without one. The answer, class by
    class, is :func:`harness.solver.compact.solve`'s (:func:`assemble` puts it together).

    ``max_seconds``: stop between two steps once this much time has passed
    (:class:`~harness.solver.budget.BudgetExceeded`); the folder then holds the last step
    and a later call goes on from it. ``tick`` is called with a line after every step.

    ``round_classes``: un-play every ply in rounds of at most this many decided classes
    (:func:`~harness.solver.partitioned.steps.unplay_round`; 0: never); by default a solve
    of more than :data:`ROUNDS_ABOVE` classes does, in rounds of :data:`ROUND_CLASSES`.
    """
    start = time.perf_counter()
    cpu = time.process_time()
    if partitions < 1:
        raise PartitionError(f"partitions must be 1 or more, not {partitions}")
    if engine(rs).key_words > 2:
        raise PartitionError(
            f"{rs.id}: class keys take {engine(rs).key_words} words; the partitioned solver "
            "handles keys of one or two words (boards of up to 64 squares)"
        )
    run = open_run(Path(workdir), rs, partitions, fresh)
    state = _load_state(run)
    resumed_from = _saved_step(state)
    finished_before = state["phase"] == FINAL
    drv = Driver(run, session, progress)
    say = tick or (lambda line: None)

    def check_time(where: str) -> None:
        spent = time.perf_counter() - start
        if max_seconds is not None and spent > max_seconds:
            raise BudgetExceeded(
                f"time budget of {max_seconds:g} s spent after {where} ({spent:.0f} s); "
                f"the work folder {str(run.folder)!r} goes on from there",
                int(state.get("classes", 0)),
                spent,
            )

    while state["phase"] == ENUM:
        s = int(state["step"]) + 1
        got = drv.step(ENUM, s, enumerate_step)
        classes = sum(g["classes"] for g in got)
        sent = sum(g["sent"] for g in got)
        waiting = sum(g.get("waiting", 0) for g in got)
        say(f"enumerate: step {s}, {classes:,} classes, {sent:,} successors sent")
        state = {"phase": ENUM, "step": s, "classes": classes}
        if sent == 0 and waiting == 0:
            state = {"phase": PLY, "step": -1, "classes_at": s, "classes": classes}
        _save_state(run, state)
        if s > 0:
            run.remove_step(ENUM, s - 1)
        check_time(f"enumeration step {s}")
    classes_at = int(state["classes_at"]) if state["phase"] != ENUM else -1
    if round_classes is None:
        round_classes = ROUND_CLASSES if int(state.get("classes", 0)) > ROUNDS_ABOVE else 0
    while state["phase"] == PLY:
        k = int(state["step"])
        if state.get("swept") == k and state.get("answered") != k:
            drv.step(ANS, k, answer_step)
            state = {**state, "answered": k}
            _save_state(run, state)
        applied = None
        if state.get("deferred") == k:
            state = _rounds(drv, state, classes_at, round_classes or ROUND_CLASSES, say, check_time)
            applied = state["round"]["applied"]
        k += 1
        # The open filters pay where at most half the classes are open (as in the compact
        # solver); the open count is the last step's.
        still = int(state.get("open", -1))
        filtered = k >= 1 and still <= FILTER_OPEN * int(state["classes"])
        # Ply 1 is swept where its classes cost more to un-play than the open ones to
        # expand again (the compact solver's rule). Only ply 1: the classes a later ply
        # decides are known only once its step has run, and each ply's choice must be
        # every partition's. A sweep's edges are held by their partition, so the open
        # classes of one must be few enough.
        todo = int(state.get("decided", 0))
        sweep = k == 1 and todo * UNPLAY_COST > still and still <= SWEEP_CLASSES * run.partitions
        deferred = round_classes > 0 and k >= 1 and not sweep
        got = drv.step(PLY, k, retrograde_step, classes_at, filtered, sweep, deferred, applied)
        decided = sum(g["decided"] for g in got)
        still = sum(g["open"] for g in got)
        how = "swept" if sweep else ("kept for rounds" if deferred else "un-played")
        say(
            f"retrograde: step {k}, ply {max(k, 1)}, {decided:,} classes decided, "
            f"{still:,} open" + (f", {how}" if k else "")
        )
        state = {**state, "step": k, "open": still, "decided": decided}
        for name in ("deferred", "round", "filtered"):
            state.pop(name, None)
        if sweep:
            state["swept"] = k
        rounds = deferred and decided > 0
        if rounds:
            state["deferred"], state["filtered"] = k, filtered
            state["round"] = {"next": 0, "lo": 0, "plan": None, "per_class": None, "applied": None}
        if decided == 0 and k >= 1:
            state = {**state, "phase": FINAL, "plies_at": k}
        _save_state(run, state)
        if k > 0:
            if not rounds:  # the rounds of step k read the open filters of step k - 1
                run.remove_step(PLY, k - 1)
            run.remove_step(ANS, k - 1)
        if applied is not None:
            run.remove_step(APPLY, applied)
        check_time(f"retrograde step {k}")
    got = drv.step(FINAL, 0, final_step, classes_at, int(state["plies_at"]))
    root = next(g["root"] for g in got if g.get("root") is not None)
    value = {WIN: "x", LOSS: "o"}.get(root["result"], "draw")
    disk = sum(p.stat().st_size for p in run.folder.rglob("*.npy"))
    return PartitionedSolve(
        rs,
        partitions,
        classes=sum(g["classes"] for g in got),
        positions=sum(g["positions"] for g in got),
        canonical=sum(g["canonical"] for g in got),
        value=value,
        plies=None if value == "draw" else root["plies"],
        deepest=max(g["deepest"] for g in got),
        enum_steps=classes_at + 1,
        plies_steps=int(state["plies_at"]) + 1,
        seconds=time.perf_counter() - start,
        driver_cpu=time.process_time() - cpu - (drv.task_cpu if session is None else 0.0),
        task_cpu=drv.task_cpu,
        tasks=drv.tasks,
        reused=drv.reused,
        peak_task_rss=drv.peak_rss if session is not None else peak_resident_bytes(),
        disk_bytes=disk,
        per_worker=dict(sorted(drv.per_worker.items())),
        steps=drv.steps,
        resumed_from=resumed_from,
        finished_before=finished_before,
        token=run.token,
        checksum=(
            sum(g["checksum"] for g in got) % 2**64 if all("checksum" in g for g in got) else None
        ),
    )


def _rounds(drv: Driver, state: dict, classes_at: int, size: int, say, check_time) -> dict:
    """Un-play the rows the last retrograde step kept, round after round (at most ``size``
    classes a round, fewer where the disk holds fewer), saving after each; returns the
    state with ``round.applied``, the last round, for the next step to start from."""
    run = drv.run
    k, total = int(state["step"]), int(state["decided"])
    at = dict(state["round"])
    while at["lo"] < ROUND_SHARES:
        r = int(at["next"])
        if r >= ROUNDS_PER_PLY:
            raise PartitionError(f"retrograde step {k}: more than {ROUNDS_PER_PLY} rounds")
        rnd = k * ROUNDS_PER_PLY + r
        if at["plan"] is None:
            want = _round_size(run, size, at["per_class"])
            width = max(1, -(-want * ROUND_SHARES // total))
            at["plan"] = [at["lo"], min(ROUND_SHARES, at["lo"] + width)]
            state = {**state, "round": dict(at)}
            _save_state(run, state)  # a rerun of the round takes the same rows
        lo, hi = at["plan"]
        filtered = bool(state.get("filtered"))
        sent = drv.step(ROUND, rnd, unplay_round, k, classes_at, lo, hi, filtered)
        previous = at["applied"]
        got = drv.step(APPLY, rnd, apply_round, k, classes_at, previous)
        unplayed = sum(int(g["unplayed"]) for g in sent)
        out_bytes = sum(int(g.get("out_bytes", 0)) for g in sent)
        at = {
            "next": r + 1,
            "lo": hi,
            "plan": None,
            "per_class": out_bytes / unplayed if unplayed else at["per_class"],
            "applied": rnd,
        }
        state = {**state, "round": dict(at)}
        _save_state(run, state)
        run.remove_step(ROUND, rnd)
        if previous is not None:
            run.remove_step(APPLY, previous)
        say(
            f"retrograde: step {k}, round {r}: {unplayed:,} classes un-played, "
            f"{sum(int(g['sent']) for g in sent):,} messages, "
            f"{sum(int(g['decided']) for g in got):,} classes decided at ply {k + 1} so far"
        )
        check_time(f"round {r} of retrograde step {k}")
    run.remove_step(PLY, k - 1)
    return state


def _round_size(run: Run, size: int, per_class: float | None) -> int:
    """Classes for the next round: ``size``, or fewer where half of the disk free past
    twice the reserve holds fewer at the last round's bytes a class."""
    if not per_class:
        return size
    room = (shutil.disk_usage(run.folder).free - 2 * DISK_RESERVE) // 2
    return max(1, min(size, int(room / per_class)))


def assemble(rs: Ruleset, workdir: str | os.PathLike) -> CompactSolution:
    """The finished solve in ``workdir`` as one :class:`CompactSolution` (every class in
    key order): for ``--out`` and for comparing with the compact solver. Holds every class
    in memory: for the rulesets that fit one machine."""
    run, state = open_finished(rs, workdir)
    names = ("result", "plies", "sides", "orbit")
    parts = {name: [] for name in ("keys", *names)}
    for keys, columns, _ in finished_parts(run, state, names, run.load):
        parts["keys"].append(keys)
        for name in names:
            parts[name].append(columns[name])
    cols = {name: np.concatenate(v) for name, v in parts.items()}
    order = keys_order(cols["keys"])
    return CompactSolution(
        rs,
        cols["keys"][order],
        cols["result"][order],
        cols["plies"][order],
        cols["sides"][order],
        cols["orbit"][order],
    )


def finished_parts(run: Run, state: dict, names: tuple[str, ...], read) -> Iterator:
    """Per partition of a finished solve, in order: (its keys, ``{name: column}`` of its
    final record, that record), each column read with ``read`` (``run.load`` or
    ``run.map``)."""
    for part in range(run.partitions):
        classes = run.record(ENUM, int(state["classes_at"]), part)
        final = run.record(FINAL, 0, part)
        yield read(classes, "keys"), {name: read(final, name) for name in names}, final


def open_finished(rs: Ruleset, workdir: str | os.PathLike) -> tuple[Run, dict]:
    """The run of a finished solve of ``rs`` in ``workdir`` and its last save; a one-line
    :class:`PartitionError` when the folder holds no run, another ruleset's, or one not
    finished."""
    folder = Path(workdir)
    if folder.is_symlink() or not (folder / RUN).is_file():
        raise PartitionError(f"work folder {str(folder)!r}: no partitioned solve there")
    try:
        doc = loads_json(read_text(folder / RUN, MAX_DOCUMENT, "run marker"))
        run = Run(folder, str(doc["token"]), int(doc["partitions"]), str(doc["ruleset"]))
    except (OSError, ValueError, KeyError, TypeError):
        raise PartitionError(f"work folder {str(folder)!r}: run.json is unreadable") from None
    if run.ruleset != rs.id:
        raise PartitionError(
            f"work folder {str(folder)!r}: a solve of {run.ruleset}, not of {rs.id}"
        )
    state = _load_state(run)
    if state["phase"] != FINAL:
        raise PartitionError(f"work folder {str(folder)!r}: the solve has not finished")
    return run, state
