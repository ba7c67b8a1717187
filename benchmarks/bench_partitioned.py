"""Benchmark: the partitioned strong solve (``nox -s bench -- --partitioned``).

Three tables, printed as Markdown, measured in one run on one ruleset (``--ruleset``; the
default is 5x5 c4 reincarnation, 6.3 million classes):

1. **The single-process compact solve** against the partitioned solve in this process, on 1
   and on 2 LocalCluster workers (``--partitions``, default 8): wall and CPU seconds, the
   driver's share of all CPU seconds, positions per CPU second, speed-up against 1 worker.
2. **Partition counts** P = 1, 2, 4, 8, 16 on 2 workers (``--counts``): wall seconds, the
   driver's share, tasks, the largest task's peak memory, bytes sent between partitions and
   column bytes written; every row's solution is compared class by class with the compact
   solve (the last column).
3. **The cost model's inputs**, per step kind (enumeration step, retrograde step, the
   answer step of a sweep, the final step): steps, CPU
   seconds of the tasks, bytes sent, and the wall seconds a step costs beyond its longest
   task (the latency of a step: scheduling, reading, writing). docs/cluster.md turns them
   into a prediction for 64 and 1,024 workers.

The load average is printed with the tables: on a shared machine the wall clock measures
the neighbours too. Timings are read off, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.cluster import ClusterSpec, Session  # noqa: E402
from harness.rules import Ruleset  # noqa: E402
from harness.solver import compact  # noqa: E402
from harness.solver.partitioned import assemble, solve  # noqa: E402

R5C4 = "pop1-5x5-c4-reincarnation-continue-binempty-king-nozero-nojump"


def same(a, b) -> bool:
    return (
        np.array_equal(a.keys, b.keys)
        and np.array_equal(a.result, b.result)
        and np.array_equal(a.ply_table.astype(np.int64), b.ply_table.astype(np.int64))
        and np.array_equal(a.sides, b.sides)
    )


def run(rs, partitions: int, workers: int | None):
    """A partitioned solve in a fresh folder: (result, assembled solution)."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as folder:
        if workers is None:
            got = solve(rs, folder, partitions=partitions, progress=False)
        else:
            with Session(ClusterSpec(workers=workers), quiet=True) as session:
                session.client.wait_for_workers(workers)
                got = solve(rs, folder, partitions=partitions, session=session, progress=False)
        return got, assemble(rs, folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitioned", action="store_true", help="(how nox selects this)")
    parser.add_argument("--ruleset", default=R5C4)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument(
        "--counts", default="1,2,4,8,16", help="partition counts of table 2 (empty: no table 2)"
    )
    parser.add_argument(
        "--no-here",
        action="store_true",
        help="leave out the partitioned solve in this process (5x5 c5: saves 15 minutes)",
    )
    args = parser.parse_args()
    rs = Ruleset.from_id(args.ruleset)
    print(f"# partitioned solve of {rs.id}; load average {os.getloadavg()}\n")

    t, c = time.perf_counter(), time.process_time()
    ref = compact.solve(rs, progress=False)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    print(f"{ref.classes:,} classes, {ref.positions:,} positions, value {ref.value}\n")
    rows = [
        "| solve | wall s | CPU s | driver share | positions per CPU s | speed-up vs 1 worker |",
        "|---|---:|---:|---:|---:|---:|",
        f"| compact, one process | {wall:.1f} | {cpu:.1f} | | {ref.positions / cpu:,.0f} | |",
    ]
    results = {}
    modes = [("1 worker", 1), ("2 workers", 2)]
    if not args.no_here:
        modes.insert(0, ("here", None))
    for label, workers in modes:
        got, sol = run(rs, args.partitions, workers)
        assert same(sol, ref), f"{label}: the solution differs from the compact solve's"
        results[label] = got
    one = results["1 worker"].seconds
    for label, got in results.items():
        total = got.driver_cpu + got.task_cpu
        rows.append(
            f"| partitioned P={args.partitions}, {label} | {got.seconds:.1f} | {total:.1f} | "
            f"{100 * got.driver_share:.1f}% | {got.positions / total:,.0f} | "
            f"{one / got.seconds:.2f} |"
        )
    print("\n".join(rows) + "\n")

    rows = [
        "| P | wall s | driver share | tasks | largest task peak MiB | sent MiB "
        "| columns written MiB | same solution |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    model = None
    for p in (int(x) for x in args.counts.split(",") if x.strip()):
        got, sol = run(rs, p, 2)
        sent = sum(s["out_bytes"] for s in got.steps)
        written = sum(s["column_bytes"] for s in got.steps)
        rows.append(
            f"| {p} | {got.seconds:.1f} | {100 * got.driver_share:.1f}% | {got.tasks} | "
            f"{got.peak_task_rss / 2**20:.0f} | {sent / 2**20:,.0f} | {written / 2**20:,.0f} | "
            f"{'yes' if same(sol, ref) else 'NO'} |"
        )
        if p == args.partitions:
            model = got
    if args.counts.strip():
        print("\n".join(rows) + "\n")

    if model is not None:
        rows = [
            f"| step (P={args.partitions}, 2 workers) | steps | task CPU s | sent MiB "
            "| latency s a step |",
            "|---|---:|---:|---:|---:|",
        ]
        for kind in ("enum", "ply", "ans", "final"):
            steps = [s for s in model.steps if s["phase"] == kind]
            cpu = sum(sum(s["task_cpu"]) for s in steps)
            sent = sum(s["out_bytes"] for s in steps) / 2**20
            # A step on 2 workers takes at least its tasks' seconds shared by 2 and its
            # longest task; what it takes beyond that is its latency.
            extra = [
                s["seconds"] - max(max(s["task_seconds"]), sum(s["task_seconds"]) / 2)
                for s in steps
            ]
            rows.append(
                f"| {kind} | {len(steps)} | {cpu:.1f} | {sent:,.1f} | "
                f"{sum(extra) / max(1, len(extra)):.3f} |"
            )
        print("\n".join(rows))


if __name__ == "__main__":
    main()
