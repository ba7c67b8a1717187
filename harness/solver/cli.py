"""``python -m harness solve RULESET``: the value of a ruleset's initial position.

``--method retrograde`` enumerates the whole reachable game graph and solves it by retrograde
analysis (:mod:`harness.solver.retrograde`); ``--method compact`` does the same with the
compact solver (:mod:`harness.solver.compact`: no stored edges, sorted keys and 2-bit
values, optionally out of core in ``--workdir``, its batches on N threads of the process
with ``--threads N``; docs/solver.md has its measured memory and speed); ``--method proof``
runs the proof search instead (:mod:`harness.solver.proof`), which does not enumerate, so
``positions`` is null. ``--method lean`` is the old name of ``compact``, kept for one
release and said so on stderr.
The default, ``auto``, picks by a counting bound on the classes
(:mod:`harness.solver.choice`): retrograde analysis up to one bound, the compact solver up to
a second (one-word keys only), the proof search beyond. The report says which method ran
(``method``).

With a cluster option (``--workers``, ``--scheduler``, ``--cluster-config``, ``--shared``;
docs/cluster.md) the compact solver's levels and plies run as Dask tasks
(:mod:`harness.solver.compact.dask_runner`; ``auto`` then picks ``compact`` where it would
pick ``retrograde``), with the same answer; ``--method partitioned`` gives every class an
owner among ``--partitions`` partitions kept in ``--workdir``, each step one task per
partition (:mod:`harness.solver.partitioned`), again with the same answer; ``--method
proof`` splits its search (:mod:`harness.solver.split_search`); ``retrograde`` and ``pns``
refuse the options.

Exit codes: 0 solved; 2 unusable input (unknown ruleset, bad ``--out``); 3 a budget ran out
(``--max-positions``, ``--time-limit``, ``--memory-limit``, or no memory left; for the proof
search also ``--max-nodes`` and ``--max-plies``; a task that ran out of memory on its
worker), nothing written. A task that fails on the cluster for any other reason, or whose
workers all died, is exit 2 with one line naming its stage, level and range.

Example::

    $ python -m harness solve pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump --json
    {"ruleset": "pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump", "value": "x",
     "plies": 7, "positions": 132569, "seconds": 0.4, ...}
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path

from harness.cli import positive
from harness.cluster import Session, add_cluster_arguments, cluster_spec
from harness.errors import EXIT_BUDGET, HarnessError
from harness.rules.position import PLAYERS
from harness.rules.ruleset import Ruleset
from harness.solver.choice import pick_method
from harness.solver.split_search import TASK_NODES


class BudgetError(HarnessError):
    """A budget ran out: exit code 3, distinct from failures and bad input."""

    exit_code = EXIT_BUDGET


def _memory_default() -> int:
    """90% of the machine's memory, at most 20 GiB: a solve should fail, not swap."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 16 * 2**30
    return min(int(total * 0.9), 20 * 2**30)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "solve",
        help="solve a ruleset: value, plies and reachable positions of the initial position",
        description="The value of a ruleset's initial position: a strong solve (retrograde or "
        "compact) or a proof search (proof or pns); --method auto picks by a counting bound."
        + " Exit codes: 0 solved, 2 unusable input, 3 a budget ran out.",
    )
    p.add_argument(
        "ruleset", help="a ruleset id, e.g. pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--out", type=Path, help="write every reachable position's value to FILE.npz (retrograde)"
    )
    p.add_argument(
        "--method",
        choices=("auto", "retrograde", "compact", "partitioned", "proof", "pns", "lean"),
        default="auto",
        help="retrograde: enumerate and solve the whole graph; compact: the same without "
        "edges (slower, a tenth of the memory), out of core with --workdir; partitioned: "
        "the compact solve with every class owned by one of --partitions partitions, "
        "each step one task per partition (on the cluster options' workers), kept in "
        "--workdir and resumed from there; proof: "
        "depth-first proof search; pns: proof-number search; auto (default): by a counting "
        "bound, retrograde, then compact, then proof; lean: the old name of compact",
    )
    p.add_argument(
        "--workdir",
        type=Path,
        help="compact: keep the per-class columns in memory-mapped files in this folder (out of "
        "core); a killed run resumes from there (from its enumeration, or its last retrograde "
        "save: every 10 minutes); partitioned (needed): the partitions' files, saved after "
        "every step; on a cluster a folder every worker sees at the same path",
    )
    p.add_argument(
        "--partitions",
        type=positive(int),
        default=None,
        metavar="P",
        help="partitioned: how many partitions own the classes (default 8; a partition's "
        "columns, 12 bytes a class, must fit one worker's memory)",
    )
    p.add_argument(
        "--round-classes",
        type=positive(int),
        default=None,
        metavar="N",
        help="partitioned: un-play each ply in rounds of at most N decided classes, so that "
        "a round's messages fit the disk (default: rounds of 2**24 for solves of more than "
        "2**28 classes, none below)",
    )
    p.add_argument(
        "--fresh", action="store_true", help="compact: discard what --workdir holds and start over"
    )
    p.add_argument(
        "--threads",
        type=positive(int),
        default=1,
        metavar="N",
        help="compact: run the batches on N threads of this process (the same answer; "
        "default 1); for many machines use the cluster options",
    )
    p.add_argument(
        "--max-positions", type=positive(int), help="budget: stored classes (retrograde)"
    )
    p.add_argument("--time-limit", type=positive(float), metavar="SECONDS", help="budget: time")
    p.add_argument(
        "--memory-limit",
        type=positive(float),
        metavar="GIB",
        help="budget: resident memory in GiB (default: 90%% of RAM, at most 20)",
    )
    p.add_argument("--max-nodes", type=positive(int), help="budget: search nodes (proof)")
    p.add_argument(
        "--max-plies", type=positive(int), default=99, help="deepest win looked for (proof)"
    )
    p.add_argument(
        "--no-deepening",
        action="store_true",
        help="pns: search the --max-plies bound alone instead of every bound up to it: a "
        "win within it, not the shortest, often found with fewer nodes when its depth is "
        "known",
    )
    p.add_argument(
        "--winner",
        choices=PLAYERS,
        help="proof, pns: look for a win of this player only (default: x, then o), e.g. to "
        "give each player its own process and budget (as certify --winner)",
    )
    p.add_argument(
        "--task-nodes",
        type=positive(int),
        default=TASK_NODES,
        metavar="NODES",
        help=f"proof on a cluster: each task's node budget ({TASK_NODES:,}); a task that "
        "spends it is split into its children (harness.solver.split_search)",
    )
    add_cluster_arguments(p)
    p.set_defaults(func=run)
    register_estimate(subparsers)


def register_estimate(subparsers) -> None:
    from harness.cli import ruleset_id, seed
    from harness.solver.estimate import SAMPLES, WIDTH

    p = subparsers.add_parser(
        "estimate",
        help="estimate the classes a ruleset reaches, by sampling, before solving it",
        description="Samples every slice of positions (checkers of each player on the "
        "board) uniformly and tests each sample for reachability by a backward search to the "
        "initial position (harness.solver.estimate); prints each slice's estimated classes "
        "with its standard error, and the total. The search can miss a reachable position, "
        "never claim an unreachable one: the estimate leans low (2% on 5x5 c4 "
        "reincarnation). Exit codes: 0 done, 2 unusable input.",
    )
    p.add_argument("ruleset", type=ruleset_id, help="a ruleset id")
    p.add_argument(
        "--samples",
        type=positive(int),
        default=SAMPLES,
        metavar="N",
        help=f"samples per slice (default {SAMPLES}; 2 at least)",
    )
    p.add_argument(
        "--width",
        type=positive(int),
        default=WIDTH,
        metavar="W",
        help=f"parents the search keeps per sample and ply back (default {WIDTH})",
    )
    p.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_estimate)


def run_estimate(args) -> int:
    from tqdm import tqdm

    from harness.solver.estimate import estimate_classes, slices

    if args.samples < 2:
        raise HarnessError(f"--samples {args.samples}: 2 at least (a slice's error needs two)")
    rs = Ruleset.from_id(args.ruleset)
    bar = tqdm(
        total=len(slices(rs)),
        unit=" slices",
        file=sys.stderr,
        leave=False,
        disable=not sys.stderr.isatty(),
    )
    with bar:
        est = estimate_classes(
            rs,
            samples=args.samples,
            width=args.width,
            seed=args.seed,
            progress=lambda _slice: bar.update(),
        )
    if args.json:
        print(json.dumps(est.as_dict()))
        return 0
    print(f"{rs.id}: about {est.classes:,.0f} classes (standard error {est.error:,.0f})")
    print(f"{args.samples} samples a slice, {len(est.slices)} slices, {est.seconds:.1f} s")
    print(f"{'a':>2} {'b':>2} {'positions':>22} {'reached':>9} {'classes':>18} {'error':>14}")
    for s in est.slices:
        print(
            f"{s.a:>2} {s.b:>2} {s.positions:>22,} {s.reached:>4}/{s.samples:<4} "
            f"{s.classes:>18,.0f} {s.error:>14,.0f}"
        )
    return 0


def _check_out(out: Path | None) -> None:
    if out is None:
        return
    if out.suffix != ".npz":
        raise HarnessError(f"--out {str(out)!r}: the file name must end in .npz")
    if out.exists() and out.is_dir():
        raise HarnessError(f"--out {str(out)!r} is a directory")
    parent = out.parent if str(out.parent) else Path(".")
    blocker = next((p for p in (parent, *parent.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise HarnessError(f"--out {str(out)!r}: {str(blocker)!r} is a file, not a folder")
    if parent.exists() and not os.access(parent, os.W_OK):
        raise HarnessError(f"--out {str(out)!r}: folder {str(parent)!r} is not writable")


def run(args) -> int:
    report = solve_report(args)
    if args.json:
        print(json.dumps(report))
    else:
        _print_text(report)
    return 0


def solve_report(args) -> dict:
    """Solve as the parsed ``args`` say and return the report ``solve --json`` prints (what
    :func:`harness.api.solve` returns)."""
    rs = Ruleset.from_id(args.ruleset)  # RulesetError (a ValueError) names the field
    _check_out(args.out)
    spec = cluster_spec(args)
    if args.method == "lean":
        print(
            "note: --method lean is the old name of --method compact (kept for one release)",
            file=sys.stderr,
        )
        args.method = "compact"
    picked = args.method == "auto"
    if picked:
        args.method = pick_method(rs, table=args.out is not None or args.workdir is not None)
        if (spec.requested or args.threads > 1) and args.method == "retrograde":
            # The compact solver is the strong solver that runs on a cluster or on threads.
            args.method = "compact"
    if spec.requested and args.method not in ("compact", "partitioned", "proof"):
        raise HarnessError(
            f"--method {args.method} runs in one process; the cluster options "
            "(--workers, --scheduler, --cluster-config, --shared) need --method compact, "
            "partitioned or proof"
        )
    if args.threads > 1 and (args.method != "compact" or spec.requested):
        raise HarnessError(
            f"--threads {args.threads} runs the compact solver's batches in this process: it "
            "needs --method compact and no cluster option (use --workers there)"
        )
    if args.winner is not None and args.method not in ("proof", "pns"):
        raise HarnessError(
            f"--winner {args.winner} chooses whose win a proof search looks for: it needs "
            f"--method proof or pns, not {args.method}" + (" (auto's pick)" if picked else "")
        )
    if args.no_deepening and args.method != "pns":
        raise HarnessError(
            f"--no-deepening searches one bound with the proof-number search: it needs "
            f"--method pns, not {args.method}" + (" (auto's pick)" if picked else "")
        )
    for flag, given in (("--partitions", args.partitions), ("--round-classes", args.round_classes)):
        if given is not None and args.method != "partitioned":
            raise HarnessError(f"{flag} needs --method partitioned, not {args.method}")
    if args.method == "partitioned":
        from harness.solver.budget import BudgetExceeded
        from harness.solver.partitioned.cli import solve_partitioned

        try:
            return solve_partitioned(rs, args, spec)
        except BudgetExceeded as exc:
            raise BudgetError(f"{rs.id}: {exc}") from None
    if args.method in ("proof", "pns"):
        if args.out is not None:
            raise HarnessError("--out needs a strong solve (a proof search has no table)")
        report = _prove(rs, args) if args.method == "proof" else _pns(rs, args)
    else:
        report = _retrograde(rs, args, compact=args.method == "compact")
    return report


def _retrograde(rs: Ruleset, args, compact: bool = False) -> dict:
    from harness.solver.budget import BudgetExceeded
    from harness.solver.retrograde import solve

    memory = _memory_default() if args.memory_limit is None else int(args.memory_limit * 2**30)
    from harness.solver.compact import CompactError
    from harness.solver.compact import solve as compact_solve
    from harness.solver.compact.dask_runner import TaskFailed

    if not compact and args.workdir is not None:
        raise HarnessError("--workdir needs --method compact")
    spec = cluster_spec(args)
    runner = None
    try:
        with ExitStack() as stack:
            if spec.requested:
                # The levels' expansions and the plies' un-plays as Dask tasks
                # (harness.solver.compact.dask_runner); the answer is the one-process one.
                from harness.solver.compact.dask_runner import DaskRunner

                session = stack.enter_context(Session(spec))
                runner = DaskRunner(session)
                stack.callback(runner.close)
            stack.enter_context(_memory_cap(memory))
            if compact:
                sol = compact_solve(
                    rs,
                    workdir=args.workdir,
                    fresh=args.fresh,
                    max_positions=args.max_positions,
                    max_seconds=args.time_limit,
                    max_memory=memory,
                    progress=None if runner is None else False,
                    runner=runner,
                    threads=args.threads,
                )
            else:
                sol = solve(
                    rs,
                    max_positions=args.max_positions,
                    max_seconds=args.time_limit,
                    max_memory=memory,
                    progress=None,
                )
    except TaskFailed as exc:
        raise (BudgetError if exc.exit_code == EXIT_BUDGET else HarnessError)(str(exc)) from None
    except CompactError as exc:
        raise HarnessError(str(exc)) from None
    except BudgetExceeded as exc:
        raise BudgetError(
            f"{rs.id}: budget exhausted after {exc.classes} classes and {exc.seconds:.1f} s: {exc}"
        ) from None
    except MemoryError:
        raise BudgetError(
            f"{rs.id}: out of memory while solving, past the cap of "
            f"{(memory + memory // 4 + 2**30) / 2**30:.1f} GiB (budget --memory-limit)"
        ) from None
    if args.out is not None:
        sol.save(args.out)
    summary = sol.summary()
    summary.update(
        method="compact" if compact else "retrograde",
        positions_per_second=round(sol.positions / sol.seconds) if sol.seconds else None,
        positions_per_cpu_second=(
            round(sol.positions / sol.timings["cpu"]) if sol.timings.get("cpu") else None
        ),
        peak_rss_bytes=sol.peak_rss,
    )
    if compact:
        summary.update(
            threads=args.threads,
            expansions=getattr(sol, "expansions", None),
            disk_bytes=getattr(sol, "disk_bytes", 0),
            bytes_per_class=round(sol.peak_rss / sol.classes, 1) if sol.classes else None,
        )
    if runner is not None:
        summary.update(
            cluster=spec.describe(),
            tasks=runner.tasks,
            tasks_per_worker=dict(sorted(runner.per_worker.items())),
        )
    if args.out is not None:
        summary["out"] = str(args.out)
    return summary


@contextmanager
def _memory_cap(budget: int):
    """A hard cap on the process's data (RLIMIT_DATA) a quarter above the memory budget.

    The solver checks its budget between batches and before each pass; the cap turns an
    allocation that would still overshoot into a MemoryError (exit 3) instead of the machine
    running out of memory. The old limit is restored afterwards.
    """
    try:
        import resource

        old = resource.getrlimit(resource.RLIMIT_DATA)
    except (ImportError, AttributeError, OSError, ValueError):
        yield
        return
    cap = budget + budget // 4 + 2**30
    if old[1] != resource.RLIM_INFINITY:
        cap = min(cap, old[1])
    if old[0] != resource.RLIM_INFINITY and old[0] < cap:
        cap = old[0]
    resource.setrlimit(resource.RLIMIT_DATA, (cap, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, old)


def _prove(rs: Ruleset, args) -> dict:
    from harness.solver.proof import BudgetExhausted, ProofSearch, stderr_progress

    spec = cluster_spec(args)
    if spec.requested:
        return _prove_split(rs, args, spec)
    search = ProofSearch(
        rs, max_nodes=args.max_nodes, max_seconds=args.time_limit, progress=stderr_progress()
    )
    try:
        result = search.prove(max_plies=args.max_plies, attackers=_attackers(args))
    except BudgetExhausted as exc:
        # Say how far the search got: the deepest bound fully searched for each player.
        reached = ", ".join(
            f"no {player} win within {depth} plies"
            for player, depth in zip(("x", "o"), search.done_depth, strict=True)
            if depth > 0
        )
        raise BudgetError(
            f"{rs.id}: proof search budget exhausted after {search.nodes:,} nodes "
            f"({reached or 'no depth completed'}): {exc}"
        ) from None
    if result.winner is None:
        raise BudgetError(_no_win(rs, args))
    return {
        "ruleset": rs.id,
        "value": result.winner,
        "plies": result.plies,
        "positions": None,
        "seconds": round(result.seconds, 3),
        "method": "proof",
        "nodes": result.nodes,
    }


def _prove_split(rs: Ruleset, args, spec) -> dict:
    """``--method proof`` on a cluster: the search split into tasks (split_search)."""
    from harness.solver.proof import BudgetExhausted, stderr_progress
    from harness.solver.split_search import split_prove

    try:
        with Session(spec) as session:
            found = split_prove(
                rs,
                args.max_plies,
                session,
                attackers=_attackers(args),
                task_nodes=args.task_nodes,
                max_seconds=args.time_limit,
                max_nodes=args.max_nodes,
                say=stderr_progress(),
            )
    except BudgetExhausted as exc:
        raise BudgetError(f"{rs.id}: split proof search budget exhausted: {exc}") from None
    except RuntimeError as exc:  # a task that raised, or was lost too often
        raise HarnessError(f"{rs.id}: {exc}") from None
    if found.winner is None:
        raise BudgetError(_no_win(rs, args))
    return {
        "ruleset": rs.id,
        "value": found.winner,
        "plies": found.plies,
        "positions": None,
        "seconds": round(found.seconds, 3),
        "method": "proof",
        "nodes": found.nodes,
        "tasks": found.tasks,
        "splits": found.splits,
        "split": "proof tasks on " + spec.describe(),
    }


def _attackers(args) -> tuple[int, ...]:
    """Whose wins a proof search looks for: ``--winner``'s, else both (x first)."""
    return (0, 1) if args.winner is None else (PLAYERS.index(args.winner),)


def _no_win(rs: Ruleset, args) -> str:
    who = "forced win" if args.winner is None else f"forced win for {args.winner}"
    return (
        f"{rs.id}: no {who} within {args.max_plies} plies (budget --max-plies); "
        "the value is not known"
    )


def _pns(rs: Ruleset, args) -> dict:
    from harness.solver.pns import prove_either
    from harness.solver.proof import BudgetExhausted, stderr_progress

    memory = None if args.memory_limit is None else int(args.memory_limit * 2**30)
    say = stderr_progress()
    try:
        result, search = prove_either(
            rs,
            args.max_plies,
            attackers=_attackers(args),
            max_nodes=args.max_nodes,
            max_seconds=args.time_limit,
            max_memory=memory,
            progress=say,
            deepen=not args.no_deepening,
        )
    except BudgetExhausted as exc:
        raise BudgetError(f"{rs.id}: proof-number search budget exhausted: {exc}") from None
    if result.winner is None:
        raise BudgetError(_no_win(rs, args))
    return {
        "ruleset": rs.id,
        "value": result.winner,
        "plies": result.plies,
        "positions": None,
        "seconds": round(result.seconds, 3),
        "method": "pns",
        "nodes": result.nodes,
        "generated": result.generated,
    }


def _print_text(r: dict) -> None:
    value = "draw" if r["value"] == "draw" else f"{r['value']} wins in {r['plies']} plies"
    print(f"{r['ruleset']}: {value} (method {r['method']})")
    if r.get("positions") is not None:
        stored = r["method"] in ("compact", "partitioned")
        edges = "no edges stored" if stored else f"{r['edges']} edges"
        print(
            f"positions {r['positions']} ({r['canonical']} up to symmetry, "
            f"{r['classes']} classes stored, {edges})"
        )
        print(
            f"{r['seconds']:.2f} s ({r['cpu_seconds']:.2f} s CPU), "
            f"{r['positions_per_second']} positions/s, "
            f"peak memory {r['peak_rss_bytes'] / 2**20:.0f} MiB"
        )
        if "out" in r:
            print(f"values written to {r['out']}")
    else:
        print(f"{r['seconds']:.2f} s, {r.get('nodes')} nodes searched")
    sys.stdout.flush()
