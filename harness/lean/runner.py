"""Build the rendered Lean modules one by one, in dependency order, under hard limits.

**How one module is built.** ``lake build +Generated.Shard0003``, run in the Lean project.
The alternative, ``lake env lean Generated/Shard0003.lean``, elaborates the file but writes
no ``.olean``, so a module importing it could not be built after it; we would have to pass
``-o`` and the search path ourselves, i.e. re-implement Lake. ``lake build`` writes the
artifacts that later shards import, resolves the search path from the lakefile, skips what
is up to date, and reports each message as ``error: File.lean:3:8: …`` (see
:mod:`harness.lean.parse`). The ``+`` marks the name as a module, so it can never be mistaken
for a library or an executable.

**Order and parallelism.** Dependencies come from the rendered modules' own ``import`` lines;
nothing else describes them. :class:`graphlib.TopologicalSorter` hands out modules whose
imports are done, up to ``jobs`` at a time. Lake takes no lock on a workspace, so two
``lake build`` processes must never share an unbuilt dependency: before the parallel phase one
*prepare* build makes everything shared up to date — the model modules the rendered modules
import (``Pop.Rules``, ``Pop.Check``…) and any cached module that a module to be built imports.
The prepare build runs under the same memory cap and timeout as a module build; if it fails,
every module still to be built is ``skipped``.

**Limits.** Each ``lake`` process starts in its own process group, with ``RLIMIT_AS`` set in
the child before ``exec`` (by a tiny Python trampoline, since ``preexec_fn`` is unsafe once
threads exist). The limit is inherited by the ``lean`` process Lake starts, and it is a hard,
OS-enforced cap, unlike ``lean -M``, which Lean only checks now and then. It caps address
space, which is larger than resident memory, so give it headroom. At the wall-clock timeout
the whole group gets ``SIGKILL``, ``lean`` included. Wall time is measured around the child,
and peak RSS comes from ``os.wait4`` in the trampoline, which forks lake and reports lake's
rusage back (see ``_TRAMPOLINE`` for why the harness cannot measure its own child); on Linux
that figure covers lake and the descendants it waited for, so it is the larger of lake's and
lean's peaks. A child killed at the timeout reports no rusage of its own: its peak is then
the trampoline's, an over-estimate.

**Verdicts** (``status`` in the result; checked in this order, first match wins):

===================  ==========================================================
``timeout``          killed at the wall-clock limit
``memory_limit``     ran out of memory under the cap (or the OOM killer struck)
``compile_error``    Lean or Lake reported an error in the module (checked before
                     ``sorry``: Lean adds a theorem whose proof failed with
                     ``sorryAx``, and the real error is the news)
``sorry``            a declaration uses ``sorry`` (``sorryAx``)
``forbidden_axiom``  an axiom outside propext, Classical.choice, Quot.sound
``compile_error``    only the module's own ``#guard_msgs`` pin failed
``crashed``          exited abnormally without an error about the code
``bad_output``       built, but a ``#print axioms`` result or GUARD_HITS line is
                     missing or unreadable
``skipped``          not run: a module it imports (or the prepare build) failed
``passed``           all of the above are clear
===================  ==========================================================

Only messages positioned in the module's own file (and positionless ones, such as Lean's
stderr) count for its verdict: Lake replays the saved messages of up-to-date imports.
A ``#print axioms`` swallowed by a passing ``#guard_msgs`` is read from the pin's docstring.
"""

from __future__ import annotations

import graphlib
import os
import sys
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tqdm import tqdm

from harness.lean.cache import ResultCache, model_hash, module_key
from harness.lean.child import GIB, Child, Limits, run_limited, wait_for_any
from harness.lean.modules import Module, build_order, discover_modules
from harness.lean.parse import ALLOWED_AXIOMS, Message
from harness.lean.toolchain import Toolchain, find_replay_checker
from harness.lean.verdict import (
    RESULT_FORMAT,
    STATUSES,
    Verdict,
    classify,
    result_record,
    save_log,
    trim_messages,
)


def run_project(
    project: Path,
    toolchain: Toolchain,
    *,
    generated: str = "Generated",
    limits: Limits | None = None,
    cache: ResultCache | None = None,
    log_dir: Path | None = None,
    env: dict[str, str] | None = None,
    progress: bool | None = None,
    on_result: Callable[[dict], None] | None = None,
    session=None,
    replay: bool = True,
) -> dict:
    """Check every rendered module of ``project``; return the result document.

    ``progress`` None shows a tqdm bar only when stderr is a terminal. ``on_result`` is
    called with each module's record as it is decided (cached ones first). Children still
    running when this is interrupted are killed with their process groups. With a
    :class:`harness.cluster.Session`, the builds are Dask tasks instead of local children
    (:mod:`harness.lean.distributed`; records then also name their ``worker``).

    The document (``format`` ``pop-harness/lean-result/1``; the manifest step reads it):

    * ``ok``: every module passed (and the prepare build, if one ran);
    * ``toolchain``: ``pinned``, ``lean_version``, ``matches_pin``, the full ``lean``,
      ``lake`` and ``elan`` version lines, ``paths``;
    * ``model_hash``, ``limits`` (``jobs``, ``memory_bytes``, ``memory_gib``, ``memory_cap``,
      ``timeout_seconds``), ``allowed_axioms``, ``order`` (a dependency order);
    * ``prepare``: null, or ``targets``, ``command``, ``status``, ``seconds``, ``peak_mib``,
      ``messages``, ``log``;
    * ``replay``: the final environment replayed by the kernel (``leanchecker``, or
      ``lean4checker``, on every built module: ``lake env CHECKER MODULE`` re-adds the
      module's declarations to its imports' environment), ``status`` (``passed``, ``failed``,
      ``not available`` when the toolchain has no checker, ``not run`` when a module failed
      or ``replay`` is off), ``tool``, ``modules`` (name -> ``status``, ``seconds``,
      ``peak_mib``, ``messages``); ``ok`` needs it passed where it is available;
    * ``shards``: per module name (every rendered module; ``kind`` says shard, corpus or
      module) ``status``, ``cached``, ``seconds``, ``cpu_seconds``, ``peak_mib``,
      ``exit_code``, ``signal``, ``axioms`` (theorem -> axioms), ``guard_hits``,
      ``messages`` (``severity``, ``file``, ``line``, ``col``, ``text``), ``deps``, ``key``
      (the cache key), ``path``, ``log``; timings of a cached record are from the run that
      produced it, and a skipped module has null timings;
    * ``axioms`` and ``guard_hits``: the union over all modules;
    * ``summary``: ``modules``, ``passed``, ``failed``, ``cached``, ``by_status``.
    """
    limits = limits or Limits()
    project = Path(project)
    modules = discover_modules(project, generated)
    order = build_order(modules)
    model = model_hash(project, project / generated)
    identity = toolchain.identity()
    keys: dict[str, str] = {}
    for name in order:
        mod = modules[name]
        keys[name] = module_key(
            mod.source.encode("utf-8"), [keys[d] for d in mod.deps], model, identity
        )

    records: dict[str, dict] = {}
    if progress is None:
        progress = sys.stderr.isatty()
    bar = tqdm(total=len(order), desc="lean", unit="module", disable=not progress, file=sys.stderr)

    def decide(name: str, record: dict) -> None:
        records[name] = record
        bar.update(1)
        if on_result is not None:
            on_result(record)

    for name in order:
        hit = cache.get(keys[name]) if cache is not None else None
        if hit is not None and hit.get("status") == "passed" and hit.get("module") == name:
            hit["cached"] = True
            decide(name, hit)
    to_build = [n for n in order if n not in records]
    pending = set(to_build)

    run_env = dict(os.environ if env is None else env)
    lake = str(toolchain.lake)
    prepare_record = None
    prepare_targets = sorted(
        {imp for n in to_build for imp in modules[n].model_imports}
        | {d for n in to_build for d in modules[n].deps if d not in pending}
    )
    failed: set[str] = set()
    running: dict[str, Child] = {}
    if session is not None:
        from harness.lean.distributed import build_on_cluster

        to_run, to_build = to_build, []  # nothing left for the local loop below
        try:
            prepare_record = build_on_cluster(
                session,
                project,
                modules,
                to_run,
                keys,
                prepare_targets,
                lake=lake,
                limits=limits,
                env=env,
                log_dir=log_dir,
                cache=cache,
                decide=decide,
                bar=bar,
            )
        except BaseException:
            bar.close()
            raise
        prepare_targets = []
    try:
        if prepare_targets:
            bar.set_postfix_str("prepare")
            command = [lake, "build", *(f"+{t}" for t in prepare_targets)]
            result = run_limited(
                command,
                cwd=project,
                memory_bytes=limits.memory_bytes,
                timeout=limits.timeout,
                env=run_env,
            )
            v = classify(result, memory_bytes=limits.memory_bytes)
            prepare_record = {
                "targets": prepare_targets,
                "command": command,
                "status": v.status,
                "seconds": result.seconds,
                "peak_mib": result.peak_mib,
                "messages": trim_messages(v.messages),
                "log": save_log(log_dir, "_prepare", result),
            }
            if v.status != "passed":
                first = next((m.one_line() for m in v.messages), v.status)
                for name in to_build:
                    skipped = Verdict(
                        "skipped", [Message("error", f"the prepare build failed: {first}")]
                    )
                    decide(name, result_record(modules[name], keys[name], None, skipped, None))
                failed.update(to_build)
                to_build = []

        sorter = graphlib.TopologicalSorter(
            {n: [d for d in modules[n].deps if d in pending] for n in to_build}
        )
        sorter.prepare()
        ready: deque[str] = deque()
        while sorter.is_active():
            ready.extend(sorted(sorter.get_ready()))
            while ready and len(running) < limits.jobs:
                name = ready.popleft()
                broken = [d for d in modules[name].deps if d in failed]
                if broken:
                    why = Message("error", f"not run: imports {', '.join(broken)}, which failed")
                    decide(
                        name,
                        result_record(
                            modules[name], keys[name], None, Verdict("skipped", [why]), None
                        ),
                    )
                    failed.add(name)
                    sorter.done(name)
                    continue
                running[name] = Child(
                    [lake, "build", f"+{name}"],
                    cwd=project,
                    env=run_env,
                    memory_bytes=limits.memory_bytes,
                    timeout=limits.timeout,
                )
            if not running:
                continue
            bar.set_postfix_str(", ".join(sorted(running)), refresh=True)
            wait_for_any(list(running.values()))
            for name in sorted(running):
                child = running[name]
                if not child.poll():
                    continue
                del running[name]
                mod = modules[name]
                assert child.result is not None
                v = classify(
                    child.result,
                    source=mod.source,
                    file=mod.rel,
                    memory_bytes=limits.memory_bytes,
                )
                log = save_log(log_dir, name, child.result)
                record = result_record(mod, keys[name], child.result, v, log)
                if v.status == "passed":
                    if cache is not None:
                        cache.put(keys[name], {**record, "log": None})
                        cache.save()  # after each pass, so an interrupted run keeps its work
                else:
                    failed.add(name)
                decide(name, record)
                sorter.done(name)
    finally:
        for child in running.values():
            child.kill()
        bar.close()

    # Modules built on a cluster may have their .olean files on the workers only: no replay here.
    replay = _replay(
        project,
        toolchain,
        order,
        modules,
        records,
        limits,
        run_env,
        log_dir,
        replay and session is None,
    )
    by_status = {s: 0 for s in STATUSES}
    for record in records.values():
        by_status[record["status"]] += 1
    axioms: dict[str, list[str]] = {}
    guard_hits: dict[str, int] = {}
    for name in order:
        axioms.update(records[name]["axioms"])
        guard_hits.update(records[name]["guard_hits"])
    ok = (
        by_status["passed"] == len(order)
        and (prepare_record is None or prepare_record["status"] == "passed")
        and replay["status"] in ("passed", "not available")
    )
    return {
        "format": RESULT_FORMAT,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ok": ok,
        "project": str(project),
        "generated": generated,
        "toolchain": toolchain.to_json(),
        "model_hash": model,
        "limits": {
            "jobs": limits.jobs,
            "memory_bytes": limits.memory_bytes,
            "memory_gib": round(limits.memory_bytes / GIB, 3),
            "memory_cap": "RLIMIT_AS",
            "timeout_seconds": limits.timeout,
        },
        "allowed_axioms": sorted(ALLOWED_AXIOMS),
        "order": order,
        "prepare": prepare_record,
        "replay": replay,
        "shards": {name: records[name] for name in order},
        "axioms": dict(sorted(axioms.items())),
        "guard_hits": dict(sorted(guard_hits.items())),
        "summary": {
            "modules": len(order),
            "passed": by_status["passed"],
            "failed": len(order) - by_status["passed"],
            "cached": sum(1 for r in records.values() if r["cached"]),
            "by_status": by_status,
        },
    }


def _replay(
    project: Path,
    toolchain: Toolchain,
    order: list[str],
    modules: dict[str, Module],
    records: dict[str, dict],
    limits: Limits,
    env: dict[str, str],
    log_dir: Path | None,
    enabled: bool,
) -> dict:
    """Replay every rendered module with the toolchain's olean checker, one at a time.

    ``#print axioms`` in a module sees what the module says; the replay sees what its
    ``.olean`` holds, so a declaration added without the kernel (environment hacking) fails
    here. Runs only when every module passed."""
    checker = find_replay_checker(toolchain.lean, env)
    if checker is None:
        return {"status": "not available", "tool": None, "modules": {}}
    if not enabled or any(records[n]["status"] != "passed" for n in order):
        return {"status": "not run", "tool": checker.name, "modules": {}}
    done: dict[str, dict] = {}
    for name in order:
        result = run_limited(
            [str(toolchain.lake), "env", str(checker), name],
            cwd=project,
            memory_bytes=limits.memory_bytes,
            timeout=limits.timeout,
            env=env,
        )
        v = classify(result, file=modules[name].rel, memory_bytes=limits.memory_bytes)
        status = v.status if v.status != "bad_output" else "passed"
        if result.exit_code not in (0, None) and status == "passed":
            status = "crashed"
        messages = list(v.messages)
        tail = [ln.strip() for ln in result.output.splitlines() if ln.strip()][-1:]
        if status != "passed" and tail and not any(tail[0] in m.text for m in messages):
            # The checker reports a rejection as an uncaught exception, not a Lean message.
            messages.insert(0, Message("error", tail[0]))
        done[name] = {
            "status": status,
            "seconds": result.seconds,
            "peak_mib": result.peak_mib,
            "messages": trim_messages(messages),
            "log": save_log(log_dir, f"{name}.replay", result),
        }
    ok = all(r["status"] == "passed" for r in done.values())
    return {"status": "passed" if ok else "failed", "tool": checker.name, "modules": done}
