"""``solve --method partitioned``: the options checked, the solve run on the cluster the
options name (or here), and its report."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from pathlib import Path

from harness.atomic import write_atomic
from harness.cluster import Session
from harness.errors import HarnessError
from harness.manifest.manifest import environment, git_state
from harness.rules.ruleset import Ruleset
from harness.solver.batch import engine
from harness.solver.checksum import checksum_text
from harness.solver.compact.driver import Ticker
from harness.solver.partitioned.driver import assemble, solve
from harness.solver.partitioned.files import REPORT, PartitionError, read_report
from harness.solver.partitioned.reader import PartitionedSolution

PARTITIONS = 8  # the default of --partitions


def solve_partitioned(rs: Ruleset, args, spec) -> dict:
    """Run the partitioned solve ``args`` ask for; the report ``solve --json`` prints. A
    time budget spent is :class:`~harness.solver.budget.BudgetExceeded`, as for the other
    strong solvers."""
    if args.workdir is None:
        raise HarnessError("--method partitioned needs --workdir DIR (the partitions' files)")
    for flag, given in (
        ("--max-positions", args.max_positions is not None),
        ("--memory-limit", args.memory_limit is not None),
    ):
        if given:
            raise HarnessError(
                f"{flag} is not an option of --method partitioned (its memory is a "
                "partition's: choose --partitions)"
            )
    if args.out is not None and engine(rs).key_words != 1:
        raise HarnessError(
            f"--out: {rs.id} has two-word class keys, which a solution file does not hold; "
            "the solve's answer stays in --workdir"
        )
    partitions = args.partitions or PARTITIONS
    # In a terminal a bar a step (the driver's); in a log a line a minute at most.
    tick = Ticker(quiet=sys.stderr.isatty())
    try:
        with ExitStack() as stack:
            session = stack.enter_context(Session(spec)) if spec.requested else None
            result = solve(
                rs,
                args.workdir,
                partitions=partitions,
                session=session,
                fresh=args.fresh,
                max_seconds=args.time_limit,
                tick=tick,
                round_classes=args.round_classes,
            )
            sol = assemble(rs, args.workdir) if args.out is not None else None
    except PartitionError as exc:
        raise HarnessError(str(exc)) from None
    report = {
        "ruleset": rs.id,
        "method": "partitioned",
        "value": result.value,
        "plies": result.plies,
        "positions": result.positions,
        "canonical": result.canonical,
        "classes": result.classes,
        "deepest": result.deepest,
        "partitions": partitions,
        "seconds": round(result.seconds, 3),
        "cpu_seconds": round(result.driver_cpu + result.task_cpu, 3),
        "driver_cpu_seconds": round(result.driver_cpu, 3),
        "task_cpu_seconds": round(result.task_cpu, 3),
        "driver_share": round(result.driver_share, 4),
        "tasks": result.tasks,
        "tasks_reused": result.reused,
        "tasks_per_worker": result.per_worker,
        "peak_rss_bytes": result.peak_task_rss,
        "disk_bytes": result.disk_bytes,
        "enumeration_steps": result.enum_steps,
        "plies_steps": result.plies_steps,
        "workdir": str(args.workdir),
        "positions_per_second": round(result.positions / result.seconds)
        if result.seconds
        else None,
    }
    if spec.requested:
        report["cluster"] = spec.describe()
    # Comparable with any other solve of the ruleset: the final step's sum, or for a folder
    # whose final step predates it, read from the columns.
    checksum = result.checksum
    if checksum is None:
        checksum = PartitionedSolution(rs, args.workdir).checksum()
    report["checksum"] = checksum_text(checksum)
    report["resumed_from"] = result.resumed_from
    report["token"] = result.token
    report["solver"] = git_state(Path(__file__).resolve().parents[3])
    report["environment"] = environment()
    # Kept with the solution: what `publish --solved` signs it with. A run that only
    # repeated the final step of a finished solve keeps the report of the run that solved it.
    kept = Path(args.workdir) / REPORT
    if not (result.finished_before and _report_of(kept, result.token)):
        write_atomic(kept, json.dumps(report, indent=1).encode())
    if sol is not None:
        sol.save(args.out)
        report["out"] = str(args.out)
    return report


def _report_of(path: Path, token: str) -> bool:
    """Whether ``path`` holds a report of the run ``token``."""
    try:
        return read_report(path).get("token") == token
    except PartitionError:
        return False
