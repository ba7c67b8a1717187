"""The ``lean`` stage on Dask: one task per rendered module, in import order.

:func:`harness.lean.runner.run_project` hands its modules here when a cluster session is
given (``python -m harness lean --workers N`` / ``--scheduler`` / ``--cluster-config``).
The prepare build (the model modules and cached imports) is one task; every module to build
is one task, submitted from the task loop (:class:`harness.cluster.tasks.TaskQueue`) once
the prepare build and all of its imports have passed (a module whose import failed is
``skipped``, naming it, and never submitted). Each task runs the same
``lake build +MODULE`` as a local run, under the same RLIMIT_AS cap and timeout, set on the
worker by the OS (see :func:`harness.lean.child.run_limited`).

A module that fails (a Lean error, the memory cap, a timeout) is a *result*, reported once;
a worker lost mid-build has its task rerun elsewhere by the scheduler, and since its lake
dies with it (the trampoline's parent-death signal) the rerun is alone in the workspace.
Verdicts are decided on the worker; logs are written and the result cache updated here, on
the machine that runs the command.

Workers run lake in the Lean project by its absolute path, so on a cluster the project must
be on the shared filesystem (docs/cluster.md); ``lake`` is the coordinator's path when it
exists on the worker, else the ``lake`` on the worker's PATH.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.cluster.session import Traced
from harness.cluster.tasks import TaskQueue
from harness.lean.child import ChildResult, Limits, run_limited
from harness.lean.modules import Module
from harness.lean.parse import Message
from harness.lean.verdict import Verdict, classify, result_record, save_log, trim_messages


@dataclass
class Outcome:
    """What one task decided about one build (a module, or the prepare build: ``name`` None)."""

    name: str | None
    verdict: Verdict
    child: ChildResult | None

    @property
    def status(self) -> str:
        return self.verdict.status


def _lake_here(lake: str) -> str | None:
    return lake if Path(lake).is_file() else shutil.which("lake")


def prepare_task(
    project: str, lake: str, targets: list[str], limits: Limits, env: dict | None
) -> Outcome:
    """Build the shared model modules (and cached imports) once, before any module task."""
    found = _lake_here(lake)
    if found is None:
        return Outcome(None, Verdict("crashed", [Message("error", "no lake on this worker")]), None)
    command = [found, "build", *(f"+{t}" for t in targets)]
    result = run_limited(
        command,
        cwd=Path(project),
        memory_bytes=limits.memory_bytes,
        timeout=limits.timeout,
        env=env,
    )
    return Outcome(None, classify(result, memory_bytes=limits.memory_bytes), result)


def module_task(
    project: str, lake: str, module: Module, limits: Limits, env: dict | None
) -> Outcome:
    """Build one module with ``lake build +MODULE`` (its imports have already passed)."""
    found = _lake_here(lake)
    if found is None:
        why = Message("error", "no lake on this worker (install the Lean toolchain there)")
        return Outcome(module.name, Verdict("crashed", [why]), None)
    result = run_limited(
        [found, "build", f"+{module.name}"],
        cwd=Path(project),
        memory_bytes=limits.memory_bytes,
        timeout=limits.timeout,
        env=env,
    )
    verdict = classify(
        result, source=module.source, file=module.rel, memory_bytes=limits.memory_bytes
    )
    return Outcome(module.name, verdict, result)


def build_on_cluster(
    session,
    project: Path,
    modules: dict[str, Module],
    to_build: list[str],
    keys: dict[str, str],
    prepare_targets: list[str],
    *,
    lake: str,
    limits: Limits,
    env: dict | None,
    log_dir: Path | None,
    cache,
    decide: Callable[[str, dict], None],
    bar,
) -> dict | None:
    """Run the prepare build, then every module of ``to_build`` as a task once its imports
    passed; ``decide`` gets each module's record as it completes. Returns the prepare record.

    A module is submitted from the task loop when its last import finishes, not
    up front with its imports' futures as arguments: Dask places a task next to the data of
    its arguments, so the up-front graph would pin every module to the worker that ran the
    prepare build (only work stealing, under no load, would spread it).
    """
    root = str(Path(project).resolve())
    pending = set(to_build)
    waiting = {n: {d for d in modules[n].deps if d in pending} for n in to_build}
    users: dict[str, list[str]] = {n: [] for n in to_build}
    for name in to_build:
        for dep in waiting[name]:
            users[dep].append(name)
    verdicts: dict[str, str] = {}  # module -> status, once decided
    counts: dict[str, int] = {}
    queue = TaskQueue(session)  # tags: a module's name; None for the prepare build

    def submit(name: str) -> None:
        queue.submit(
            name, module_task, root, lake, modules[name], limits, env,
            key=f"lean-{name}-{keys[name][:12]}",
        )  # fmt: skip

    def settle(name: str, record: dict) -> None:
        """Decide ``name``; release (or skip) every user whose imports are now all decided."""
        verdicts[name] = record["status"]
        decide(name, record)
        for user in users[name]:
            waiting[user].discard(name)
            if waiting[user] or user in verdicts:
                continue
            broken = [d for d in modules[user].deps if d in pending and verdicts[d] != "passed"]
            if broken:
                why = Message("error", f"not run: imports {', '.join(broken)}, which failed")
                skipped = Verdict("skipped", [why])
                settle(user, result_record(modules[user], keys[user], None, skipped, None))
            else:
                submit(user)

    def release_roots() -> None:
        for name in to_build:
            if not waiting[name]:
                submit(name)

    prepare_record = None
    if prepare_targets:
        queue.submit(
            None, prepare_task, root, lake, prepare_targets, limits, env,
            key=f"lean-prepare-{id(bar)}",
        )  # fmt: skip
    else:
        release_roots()
    for end in queue:
        # A failed task is not a Lean failure (those are results): the task raised, or it
        # was on workers that died too often (KilledWorker).
        traced, exc = (Traced(end.worker, end.value), None) if end.ok else (None, end.error)
        if end.ok:
            counts[end.worker] = counts.get(end.worker, 0) + 1
            bar.set_postfix_str(" ".join(f"w{w}:{c}" for w, c in sorted(counts.items())))
        if end.tag is None:
            outcome = None if traced is None else traced.value
            worker = None if traced is None else traced.worker
            prepare_record = _prepare_record(prepare_targets, outcome, worker, log_dir, exc)
            if prepare_record["status"] == "passed":
                release_roots()
                continue
            if traced is None:
                first = _task_failure(exc)
            else:
                messages = traced.value.verdict.messages
                first = next((m.one_line() for m in messages), prepare_record["status"])
            why = Message("error", f"the prepare build failed: {first}")
            for name in to_build:
                skipped = Verdict("skipped", [why])
                decide(name, result_record(modules[name], keys[name], None, skipped, None))
            continue
        name = end.tag
        mod = modules[name]
        if traced is None:
            crashed = Verdict("crashed", [Message("error", _task_failure(exc))])
            settle(name, result_record(mod, keys[name], None, crashed, None))
            continue
        outcome: Outcome = traced.value
        log = None if outcome.child is None else save_log(log_dir, name, outcome.child)
        record = result_record(mod, keys[name], outcome.child, outcome.verdict, log)
        if outcome.status == "passed" and cache is not None:
            cache.put(keys[name], {**record, "log": None})
            cache.save()
        settle(name, {**record, "worker": traced.worker})
    return prepare_record


def _task_failure(exc: BaseException) -> str:
    from distributed import KilledWorker

    if isinstance(exc, KilledWorker):
        return (
            "lost: every worker that ran this build died (distributed.scheduler."
            "allowed-failures reached); not retried again"
        )
    return f"the task failed on its worker: {type(exc).__name__}: {exc}"


def _prepare_record(
    targets: list[str],
    outcome: Outcome | None,
    worker: str | None,
    log_dir: Path | None,
    exc: BaseException | None = None,
) -> dict:
    if outcome is None:
        verdict, result = Verdict("crashed", [Message("error", _task_failure(exc))]), None
    else:
        verdict, result = outcome.verdict, outcome.child
    return {
        "targets": targets,
        "command": None if result is None else result.command,
        "status": verdict.status,
        "seconds": None if result is None else result.seconds,
        "peak_mib": None if result is None else result.peak_mib,
        "messages": trim_messages(verdict.messages),
        "log": None if result is None else save_log(log_dir, "_prepare", result),
        "worker": worker,
    }
