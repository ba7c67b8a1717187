"""Benchmark: the Dask execution layer on 1 and 2 workers (``nox -s bench -- --cluster``).

Two tables, printed as Markdown, measured in one run:

1. **Scheduler overhead**: many tiny tasks (a function returning its argument) submitted
   through :class:`harness.cluster.Session` and collected with ``as_completed``; wall time
   per task on a LocalCluster of 1 and 2 workers, against calling the function here.
2. **Split certify**: the proof search (here, once per row) and the strategy's subtrees as
   tasks (:mod:`harness.cert.split`) of the 5x5 c8 research ruleset (6x6 with ``--big``), in
   one process without Dask and on LocalClusters of 1 and 2 workers; wall and CPU seconds of
   the build, speed-up against one worker, and the certificate hash (the same in every row,
   by construction), next to a plain ``certify``'s build (one table, a different
   certificate).

3. **Split strong solve**: the compact solver (:mod:`harness.solver.compact.dask_runner`) of
   the 4x5 c4 torus research ruleset (5x5 c4 with ``--big``) with no cluster and on
   LocalClusters of 1 and 2 workers: wall seconds, speed-up against no cluster, tasks (and per
   worker), the tasks' own compute seconds (Dask's task stream), the coordinator's CPU
   seconds, and the Dask cost per task on 1 worker: (wall on 1 worker - wall with no cluster)
   / tasks. The value, plies and class count are the same in every row (checked).

4. **Split proof search** (:mod:`harness.solver.split_search`, ``solve --method proof`` with
   a cluster option) of the 4x4 c6 ringout research ruleset (o in 10) with 2,000-node
   tasks: the single-process search, the same tasks with no cluster, and LocalClusters of
   1 and 2 workers: wall seconds, speed-up against 1 worker, tasks, splits and nodes. The
   value and plies are the same in every row (checked).

On a shared machine the wall clock measures the neighbours too: the load average is printed
with the tables. Timings are read off, never asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.cert.builder import Strategy  # noqa: E402
from harness.cert.format import write_certificate  # noqa: E402
from harness.cert.split import split_build  # noqa: E402
from harness.cluster import ClusterSpec, Session  # noqa: E402
from harness.rules import Ruleset  # noqa: E402
from harness.rules.position import PLAYERS, Position  # noqa: E402
from harness.solver import compact  # noqa: E402
from harness.solver.compact.dask_runner import DaskRunner  # noqa: E402
from harness.solver.proof import ProofSearch  # noqa: E402
from harness.solver.split_search import split_prove  # noqa: E402

R5 = "pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump"
R6 = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"
S45C4 = "pop1-4x5-c4-torus-continue-binempty-king-nozero-nojump"
S5C4 = "pop1-5x5-c4-torus-continue-binempty-king-nozero-nojump"
P4C6 = "pop1-4x4-c6-ringout-continue-binempty-king-nozero-nojump"


def identity(x: int) -> int:
    return x


def overhead(tasks: int) -> list[str]:
    rows = ["| where | tasks | wall s | ms per task |", "|---|---:|---:|---:|"]
    t = time.perf_counter()
    for i in range(tasks):
        identity(i)
    here = time.perf_counter() - t
    rows.append(f"| this process | {tasks} | {here:.4f} | {1000 * here / tasks:.4f} |")
    from distributed import as_completed

    for workers in (1, 2):
        with Session(ClusterSpec(workers=workers), quiet=True) as session:
            session.client.wait_for_workers(workers)
            session.submit(identity, 0).result()  # warm: imports on the workers
            t = time.perf_counter()
            futures = [session.submit(identity, i, key=f"tiny-{workers}-{i}") for i in range(tasks)]
            total = sum(f.result().value for f in as_completed(futures))
            wall = time.perf_counter() - t
            assert total == tasks * (tasks - 1) // 2
        rows.append(
            f"| LocalCluster, {workers} worker(s) | {tasks} | {wall:.3f} | "
            f"{1000 * wall / tasks:.2f} |"
        )
    return rows


def cpu() -> float:
    own = time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + kids.ru_utime + kids.ru_stime


def certify_rows(ruleset: str) -> list[str]:
    rs = Ruleset.from_id(ruleset)
    rows = [
        f"**{ruleset}**",
        "",
        "| build | prove s | build wall s | speed-up vs 1 worker | entries | certificate hash |",
        "|---|---:|---:|---:|---:|---|",
    ]
    results = {}
    for label, workers in (
        ("plain certify (one table)", "plain"),
        ("split, one process", None),
        ("split, LocalCluster 1 worker", 1),
        ("split, LocalCluster 2 workers", 2),
    ):
        search = ProofSearch(rs)
        t = time.perf_counter()
        result = search.prove(max_plies=15)
        proved = time.perf_counter() - t
        attacker = PLAYERS.index(result.winner)
        t = time.perf_counter()
        if workers == "plain":
            strategy = Strategy.build(search, attacker)
            strategy.refine()
            built = time.perf_counter() - t
        elif workers is None:
            strategy = split_build(search, attacker, None, progress=False)
            built = time.perf_counter() - t
        else:
            with Session(ClusterSpec(workers=workers), quiet=True) as session:
                session.client.wait_for_workers(workers)
                t = time.perf_counter()  # the cluster's start-up is not the build
                strategy = split_build(search, attacker, session, progress=False)
                built = time.perf_counter() - t
        with tempfile.TemporaryDirectory() as tmp:
            index = write_certificate(
                Path(tmp) / "c",
                rs.id,
                result.winner,
                Position.initial(rs).text(rs),
                strategy.layout(20000),
            )
        results[workers] = built
        speed = f"{results[1] / built:.2f}" if workers in (1, 2) and 1 in results else ""
        rows.append(
            f"| {label} | {proved:.1f} | {built:.1f} | {speed} | "
            f"{index['entries']:,} | `{index['hash'][:16]}…` |"
        )
        print(rows[-1], file=sys.stderr)
    return rows


def solve_rows(ruleset: str) -> list[str]:
    from distributed import get_task_stream

    rs = Ruleset.from_id(ruleset)
    rows = [
        f"**{ruleset}** (compact solver)",
        "",
        "| run | wall s | speed-up vs no cluster | tasks (per worker) | task compute s | "
        "coordinator CPU s | Dask cost ms/task | value, plies, classes |",
        "|---|---:|---:|---|---:|---:|---:|---|",
    ]
    walls: dict[int, float] = {}
    answers = set()
    for workers in (0, 1, 2):
        if workers == 0:
            cpu0 = time.process_time()
            t = time.perf_counter()
            sol = compact.solve(rs, progress=False)
            wall = time.perf_counter() - t
            coordinator = time.process_time() - cpu0
            tasks, per, compute = "—", "", None
        else:
            with Session(ClusterSpec(workers=workers), quiet=True) as session:
                session.client.wait_for_workers(workers)
                runner = DaskRunner(session, progress=False)
                with get_task_stream(session.client) as stream:
                    cpu0 = time.process_time()
                    t = time.perf_counter()
                    sol = compact.solve(rs, progress=False, runner=runner)
                    wall = time.perf_counter() - t
                    coordinator = time.process_time() - cpu0
                compute = sum(
                    stop - start
                    for task in stream.data
                    for (action, start, stop) in (
                        (s["action"], s["start"], s["stop"]) for s in task["startstops"]
                    )
                    if action == "compute"
                )
                tasks = runner.tasks
                per = " (" + ", ".join(f"{c}" for _, c in sorted(runner.per_worker.items())) + ")"
        walls[workers] = wall
        answers.add((sol.value, sol.plies, sol.classes))
        speed = f"{walls[0] / wall:.2f}"
        cost = f"{1000 * (wall - walls[0]) / tasks:.0f}" if workers == 1 else ""
        label = "no cluster (one process)" if workers == 0 else f"LocalCluster, {workers} worker(s)"
        rows.append(
            f"| {label} | {wall:.1f} | {speed} | {tasks}{per} | "
            f"{'' if compute is None else f'{compute:.1f}'} | {coordinator:.1f} | {cost} | "
            f"{sol.value}, {sol.plies}, {sol.classes:,} |"
        )
        print(rows[-1], file=sys.stderr)
    assert len(answers) == 1, answers  # the same solution on every row
    return rows


def proof_rows(ruleset: str, task_nodes: int = 2000, plies: int = 11) -> list[str]:
    rs = Ruleset.from_id(ruleset)
    rows = [
        f"**{ruleset}** (proof search, {task_nodes:,}-node tasks)",
        "",
        "| run | wall s | speed-up vs 1 worker | tasks | splits | nodes | value, plies |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    t = time.perf_counter()
    search = ProofSearch(rs)
    plain = search.prove(max_plies=plies)
    wall = time.perf_counter() - t
    rows.append(
        f"| one process, no split | {wall:.1f} | | 1 | 0 | {search.nodes:,} | "
        f"{plain.winner}, {plain.plies} |"
    )
    walls: dict[int, float] = {}
    answers = {(plain.winner, plain.plies)}
    for workers in (0, 1, 2):
        if workers == 0:
            t = time.perf_counter()
            found = split_prove(rs, plies, task_nodes=task_nodes)
            wall = time.perf_counter() - t
        else:
            with Session(ClusterSpec(workers=workers), quiet=True) as session:
                session.client.wait_for_workers(workers)
                t = time.perf_counter()
                found = split_prove(rs, plies, session, task_nodes=task_nodes, progress=False)
                wall = time.perf_counter() - t
        walls[workers] = wall
        answers.add((found.winner, found.plies))
        speed = f"{walls[1] / wall:.2f}" if workers >= 1 else ""
        label = "split, no cluster" if workers == 0 else f"split, LocalCluster {workers} worker(s)"
        rows.append(
            f"| {label} | {wall:.1f} | {speed} | {found.tasks:,} | {found.splits:,} | "
            f"{found.nodes:,} | {found.winner}, {found.plies} |"
        )
        print(rows[-1], file=sys.stderr)
    assert len(answers) == 1, answers  # the same value and plies on every row
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", action="store_true", help="(the nox session's switch)")
    parser.add_argument("--big", action="store_true", help="the 6x6 research ruleset too")
    parser.add_argument("--tasks", type=int, default=500, help="tiny tasks (500)")
    parser.add_argument(
        "--solve-only", action="store_true", help="leave out the split certify table"
    )
    parser.add_argument(
        "--proof-only", action="store_true", help="only the split proof search table"
    )
    args = parser.parse_args()
    if args.proof_only:
        print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}\n")
        print("\n".join(proof_rows(P4C6)) + "\n")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}\n")
    print("### Scheduler overhead per task\n")
    print("\n".join(overhead(args.tasks)) + "\n")
    if not args.solve_only:
        print("### Split certify on 1 and 2 workers\n")
        for ruleset in (R5, R6) if args.big else (R5,):
            print("\n".join(certify_rows(ruleset)) + "\n")
    print("### Split strong solve on 1 and 2 workers\n")
    for ruleset in (S45C4, S5C4) if args.big else (S45C4,):
        print("\n".join(solve_rows(ruleset)) + "\n")
    print("### Split proof search on 1 and 2 workers\n")
    print("\n".join(proof_rows(P4C6)) + "\n")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
