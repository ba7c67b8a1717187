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

The strong solver is not split (it runs in one process), so it has no row here. On a shared
machine the wall clock measures the neighbours too: the load average is printed with the
tables. Timings are read off, never asserted.
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
from harness.solver.proof import ProofSearch  # noqa: E402

R5 = "pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump"
R6 = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", action="store_true", help="(the nox session's switch)")
    parser.add_argument("--big", action="store_true", help="the 6x6 research ruleset too")
    parser.add_argument("--tasks", type=int, default=500, help="tiny tasks (500)")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}\n")
    print("### Scheduler overhead per task\n")
    print("\n".join(overhead(args.tasks)) + "\n")
    print("### Split certify on 1 and 2 workers\n")
    for ruleset in (R5, R6) if args.big else (R5,):
        print("\n".join(certify_rows(ruleset)) + "\n")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
