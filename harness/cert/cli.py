"""``python -m harness certify`` and ``python -m harness check``.

``certify RULESET --out DIR`` proves a forced win with the proof search
(:mod:`harness.solver.proof`), builds the strategy closure and writes the certificate
(:mod:`harness.cert.format`). ``check DIR`` re-checks a certificate with the reference
engine (:mod:`harness.cert.checker`).

Exit codes: 0 success (certificate written / accepted), 1 no win found / certificate
rejected, 2 unusable input, 3 the search budget ran out (the partial proof state is kept in
the ``--state`` file and a later run with the same ``--state`` resumes from it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness.cert.builder import MAX_PLIES
from harness.cert.checker import check_certificate, terminal_progress
from harness.cert.format import CertificateError, write_certificate
from harness.cert.nonwin_builder import build_nonwin
from harness.cert.nonwin_checker import check_nonwin
from harness.cert.nonwin_format import FORMAT as NONWIN_FORMAT
from harness.cert.nonwin_format import index_format, write_nonwin
from harness.cert.nonwin_parallel import check_nonwin_parallel
from harness.cert.split import SPLIT_ABOVE, build_strategy
from harness.cli import positive
from harness.cluster import Session, add_cluster_arguments, cluster_spec
from harness.errors import EXIT_BUDGET, EXIT_FAILED, EXIT_OK, EXIT_USAGE, HarnessError
from harness.rules.position import PLAYERS, Position
from harness.rules.ruleset import Ruleset
from harness.solver.proof import BudgetExhausted, ProofSearch, ProofStateError, stderr_progress


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "certify",
        help="prove a forced win and write its certificate",
        description=(
            "Prove a forced win from the initial position with the proof search and write "
            "the certificate directory (docs/certificates.md). Exit 0 written, 1 no win "
            "within --max-plies, 2 bad input, 3 budget spent (state kept in --state)."
        ),
    )
    p.add_argument(
        "ruleset", help="ruleset id, e.g. pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    )
    p.add_argument("--out", required=True, type=Path, help="certificate directory to write")
    p.add_argument("--force", action="store_true", help="replace a non-empty --out directory")
    p.add_argument(
        "--state",
        type=Path,
        help="proof state file (npz): loaded if it exists, saved at the end or when the "
        "budget runs out (default: OUT.proof.npz when a budget is given)",
    )
    p.add_argument(
        "--time-limit",
        type=positive(float),
        metavar="SECONDS",
        help="budget: time of the search and the certificate's build (as in solve)",
    )
    p.add_argument(
        "--max-nodes",
        type=positive(int),
        metavar="N",
        help="budget: nodes of the search (as in solve)",
    )
    p.add_argument(
        "--max-plies",
        type=int,
        default=MAX_PLIES,
        help=f"deepest win looked for ({MAX_PLIES})",
    )
    p.add_argument(
        "--winner",
        choices=("auto", "x", "o"),
        default="auto",
        help="whose win to prove (auto: both, shallowest first)",
    )
    p.add_argument(
        "--shard-entries", type=int, default=20000, help="most entries per shard (20000)"
    )
    p.add_argument(
        "--optimize-rank",
        type=int,
        default=5,
        help="up to this rank every action is weighed for a small certificate, above it only "
        "those already proven (5; 7 on the 6x6 research ruleset: 2%% smaller, 40%% slower)",
    )
    p.add_argument(
        "--no-optimize",
        action="store_true",
        help="take the search's actions as they are (faster, larger)",
    )
    p.add_argument(
        "--solution",
        type=Path,
        help="a strong solution of the ruleset: a file (solve --out FILE.npz) or a finished "
        "partitioned solve's work folder (solve --method partitioned --workdir DIR), read "
        "in place; a draw is then certified by two non-win sets at once, a win by the proof "
        "search as usual",
    )
    p.add_argument(
        "--weak",
        action="store_true",
        help="certify a draw with no strong solution and no proof search: both non-win sets "
        "grown from the initial position, a reply found lost withdrawn (larger sets than "
        "from a solution; docs/certificates.md)",
    )
    p.add_argument(
        "--first-action",
        action="store_true",
        help="non-win sets: take the defender's first non-losing action instead of choosing "
        "for a small set",
    )
    p.add_argument(
        "--no-consolidate",
        action="store_true",
        help="non-win sets: keep the set the greedy rounds (or --weak) built as it is, without "
        "moving replies onto the set's most reached positions (larger; how the sets published "
        "before were built, which verify builds them again with)",
    )
    p.add_argument(
        "--method",
        choices=("proof", "pns"),
        default="proof",
        help="proof (default): the iteratively deepened depth-first proof search; pns: the "
        "proof-number search (harness.solver.pns; --state then holds its tables); as in solve",
    )
    # The spellings certify had before it shared solve's: accepted for one release, with a
    # note that names the new one.
    for old, kind in (("--seconds", positive(float)), ("--nodes", positive(int))):
        p.add_argument(old, type=kind, dest=f"old_{old[2:]}", help=argparse.SUPPRESS)
    p.add_argument("--search", choices=("dfs", "pns"), dest="old_search", help=argparse.SUPPRESS)
    p.add_argument(
        "--split-above",
        type=int,
        default=SPLIT_ABOVE,
        metavar="NODES",
        help=f"a search of more nodes than this ({SPLIT_ABOVE:,}) builds its certificate as "
        "independent subtrees: tasks on the cluster if one is given, else one after another "
        "here; the certificate depends on this option, never on the cluster",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_cluster_arguments(p)
    p.set_defaults(func=run_certify)

    c = subparsers.add_parser(
        "check",
        help="check a certificate with the reference engine",
        description=(
            "Re-check every entry of a certificate with the reference engine. Exit 0 only "
            "for a complete, accepted certificate; 1 rejected (each problem printed with "
            "its shard, line, entry and reason); 2 no such directory. A non-win "
            "certificate's shards can be checked as Dask tasks (--workers, --scheduler with "
            "--shared)."
        ),
    )
    c.add_argument("directory", type=Path)
    c.add_argument("--ruleset", help="require the certificate to be for this ruleset")
    c.add_argument("--max-errors", type=positive(int), default=20, help="stop after this many (20)")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    add_cluster_arguments(c)
    c.set_defaults(func=run_check)


def take_old_spellings(args: argparse.Namespace) -> None:
    """Move ``--seconds``, ``--nodes`` and ``--search`` to ``--time-limit``, ``--max-nodes``
    and ``--method``, saying so in one line each (refused when both spellings are given)."""
    for old, new, value in (
        ("--seconds", "--time-limit", args.old_seconds),
        ("--nodes", "--max-nodes", args.old_nodes),
        ("--search", "--method", {"dfs": "proof"}.get(args.old_search, args.old_search)),
    ):
        if value is None:
            continue
        dest = new[2:].replace("-", "_")
        default = "proof" if dest == "method" else None
        if getattr(args, dest) != default:
            raise HarnessError(f"{old} and {new} are one option: give {new} alone")
        print(
            f"note: certify {old} is now {new} (the old spelling goes in the next release)",
            file=sys.stderr,
        )
        setattr(args, dest, value)


def run_certify(args: argparse.Namespace) -> int:
    take_old_spellings(args)
    rs = Ruleset.from_id(args.ruleset)
    out: Path = args.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not args.force:
        raise HarnessError(f"--out {out}: exists and is not an empty directory (use --force)")
    if args.shard_entries < 1:
        raise HarnessError(f"--shard-entries {args.shard_entries}: must be at least 1")
    if args.max_plies < 1:
        raise HarnessError(f"--max-plies {args.max_plies}: must be at least 1")
    if args.split_above < 0:
        raise HarnessError(f"--split-above {args.split_above}: must be at least 0")
    state = args.state
    if state is None and (args.time_limit is not None or args.max_nodes is not None):
        state = out.with_name(out.name + ".proof.npz")
    say = stderr_progress()
    if args.weak:
        if args.solution is not None:
            raise HarnessError("--weak builds without a solution: drop --solution")
        return _certify_weak(args, rs)
    if args.solution is not None:
        sol = _load_solution(args.solution, rs)
        if sol.value == "draw":
            return _certify_draw(args, rs, sol, say)
        if args.winner == "auto":
            args.winner = sol.value
    search = ProofSearch(rs, max_nodes=args.max_nodes, max_seconds=args.time_limit, progress=say)
    if state is not None and state.exists():
        try:
            search.load(state)
        except ProofStateError as exc:
            raise HarnessError(str(exc)) from None
    attackers = {"auto": (0, 1), "x": (0,), "o": (1,)}[args.winner]
    t0 = time.monotonic()
    if args.method == "pns":
        found = _prove_pns(rs, args, attackers, state, say)
        if isinstance(found, int):
            return found
        search, result = found
    else:
        try:
            result = search.prove(max_plies=args.max_plies, attackers=attackers)
        except BudgetExhausted as exc:
            return _budget_spent(search, state, f"{rs.id}: {exc}")
        if state is not None:
            search.save(state)
    searched = time.monotonic() - t0
    if result.winner is None and args.solution is None and args.winner == "auto":
        from harness.solver.choice import pick_method

        method = pick_method(rs)
        if method != "proof":
            from harness.solver.compact import solve as compact_solve
            from harness.solver.retrograde import solve

            if say is not None:
                say(f"no win within {args.max_plies} plies; solving {rs.id} strongly ({method})")
            sol = (solve if method == "retrograde" else compact_solve)(rs, progress=None)
            if sol.value == "draw":
                return _certify_draw(args, rs, sol, say)
    if result.winner is None:
        print(
            f"error: {rs.id}: no forced win for {'/'.join(PLAYERS[a] for a in attackers)} "
            f"within {args.max_plies} plies",
            file=sys.stderr,
        )
        return EXIT_FAILED
    attacker = PLAYERS.index(result.winner)
    t1 = time.monotonic()
    spec = cluster_spec(args)
    split = search.nodes > args.split_above  # decided before building adds nodes
    try:
        # Building proves successors on demand with the same search, so the budget can run
        # out here too: that is a spent budget (state kept), never "no win".
        options = dict(
            split_above=args.split_above,
            optimize=not args.no_optimize,
            full_rank=args.optimize_rank,
            say=say,
        )
        if spec.requested:
            with Session(spec) as session:
                strategy = build_strategy(search, attacker, session, **options)
        else:
            strategy = build_strategy(search, attacker, None, **options)
    except BudgetExhausted as exc:
        return _budget_spent(
            search, state, f"{rs.id}: {exc} while building the certificate of {result.winner}'s win"
        )
    shards = strategy.layout(max_entries=args.shard_entries)
    built = time.monotonic() - t1
    try:
        index = write_certificate(
            out, rs.id, result.winner, Position.initial(rs).text(rs), shards, force=args.force
        )
    except CertificateError as exc:
        raise HarnessError(str(exc)) from None
    size = sum((out / s["file"]).stat().st_size for s in index["shards"])
    summary = {
        "ruleset": rs.id,
        "winner": result.winner,
        "plies": result.plies,
        "entries": index["entries"],
        "shards": len(index["shards"]),
        "bytes": size,
        "hash": index["hash"],
        "search_seconds": round(searched, 3),
        "build_seconds": round(built, 3),
        "nodes": search.nodes,
        "method": args.method,
        "out": str(out),
    }
    if split:
        where = spec.describe() if spec.requested else "this process"
        summary["split"] = f"subtrees on {where}"
    elif spec.requested:
        summary["split"] = "none: the search is below --split-above, built in one walk here"
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{rs.id}: {result.winner} wins within {result.plies} plies ({args.method} search); "
            f"certificate {out}: "
            f"{index['entries']:,} entries in {len(index['shards'])} shards, {size:,} bytes, "
            f"hash {index['hash']}; search {searched:.1f} s, build {built:.1f} s"
        )
    return EXIT_OK


def _prove_pns(rs: Ruleset, args: argparse.Namespace, attackers, state: Path | None, say):
    """The proof-number search for each attacker in turn: (a ProofSearch holding the proof
    for the certificate builder, the result), or an exit code when a budget ran out (each
    attacker's table kept beside ``state``, loaded again by a later run)."""
    from harness.solver.pns import PNSearch

    t0 = time.monotonic()
    nodes = 0
    result = None
    for a in attackers:
        left = (
            None
            if args.time_limit is None
            else max(0.001, args.time_limit - (time.monotonic() - t0))
        )
        pns = PNSearch(
            rs,
            a,
            max_plies=args.max_plies,
            max_nodes=None if args.max_nodes is None else max(1, args.max_nodes - nodes),
            max_seconds=left,
            progress=say,
        )
        path = None if state is None else state.with_name(f"{state.stem}.pns-{PLAYERS[a]}.npz")
        if path is not None and path.exists():
            try:
                pns.load(path)
            except ProofStateError as exc:
                raise HarnessError(str(exc)) from None
        try:
            result = pns.prove()
        except BudgetExhausted as exc:
            if path is not None:
                pns.save(path)
            kept = f"; table kept in {path}, run again with --state {state} to resume"
            print(
                f"error: {rs.id}: {exc} after {pns.nodes:,} nodes{kept if path else ''}",
                file=sys.stderr,
            )
            return EXIT_BUDGET
        if path is not None:
            pns.save(path)
        nodes += result.nodes
        if result.winner is not None:
            search = pns.as_proof_search()
            search.nodes = nodes
            return search, result
    search = ProofSearch(rs)
    search.nodes = nodes
    return search, result


def _budget_spent(search: ProofSearch, state: Path | None, what: str) -> int:
    """Save the proof state (when there is a ``--state``) and report a spent budget: exit 3."""
    if state is not None:
        search.save(state)
    kept = f"; state kept in {state}, run again with --state {state} to resume" if state else ""
    print(f"error: {what} after {search.nodes:,} nodes{kept}", file=sys.stderr)
    return EXIT_BUDGET


def _load_solution(path: Path, rs: Ruleset):
    from harness.solver.solution import Solution

    if path.is_dir():
        from harness.solver.partitioned.files import PartitionError
        from harness.solver.partitioned.reader import PartitionedSolution

        try:
            return PartitionedSolution(rs, path)
        except PartitionError as exc:
            raise HarnessError(f"--solution: {exc}") from None
    try:
        sol = Solution.load(path)
    except (OSError, ValueError, KeyError) as exc:
        raise HarnessError(f"--solution {path}: cannot read a solution ({exc})") from None
    if sol.ruleset.id != rs.id:
        raise HarnessError(f"--solution {path}: solves {sol.ruleset.id}, not {rs.id}")
    return sol


def _certify_draw(args: argparse.Namespace, rs: Ruleset, sol, say) -> int:
    """A draw: the two non-win sets (x cannot win, o cannot win), one format-2 directory."""
    t0 = time.monotonic()
    greedy = not args.first_action
    consolidated = greedy and not args.no_consolidate
    builds = [
        build_nonwin(sol, player, greedy=greedy, consolidated=consolidated) for player in (0, 1)
    ]
    extra = {
        "consolidated": consolidated,
        "classes": sol.classes,
        "rounds": {"xo"[b.player]: b.rounds for b in builds},
        "search_seconds": round(sol.seconds, 3),
    }
    return _write_draw(args, rs, builds, time.monotonic() - t0, extra)


def _certify_weak(args: argparse.Namespace, rs: Ruleset) -> int:
    """A draw without a strong solution: both non-win sets grown from the initial position
    (:mod:`harness.cert.weak_builder`); a set it cannot close is exit 1."""
    from harness.cert.nonwin_builder import NonWinError, consolidate
    from harness.cert.weak_builder import build_weak

    t0 = time.monotonic()
    try:
        builds = [build_weak(rs, player) for player in (0, 1)]
    except NonWinError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if not args.no_consolidate:
        builds = [consolidate(rs, build) for build in builds]
    extra = {"builder": "weak", "consolidated": not args.no_consolidate}
    return _write_draw(args, rs, builds, time.monotonic() - t0, extra)


def _write_draw(args: argparse.Namespace, rs: Ruleset, builds, built: float, extra) -> int:
    sets = [b.as_set(rs, max_entries=args.shard_entries) for b in builds]
    try:
        index = write_nonwin(
            args.out,
            rs.id,
            Position.initial(rs).text(rs),
            sets,
            force=args.force,
            consolidated=extra.get("consolidated"),
        )
    except CertificateError as exc:
        raise HarnessError(str(exc)) from None
    files = [s["file"] for nws in index["sets"] for s in nws["shards"]]
    size = sum((args.out / f).stat().st_size for f in files)
    summary = {
        "ruleset": rs.id,
        "kind": "nonwin",
        "value": index["value"],
        "winner": None,
        "plies": None,
        "entries": index["entries"],
        "sets": {nws["player"]: nws["entries"] for nws in index["sets"]},
        **extra,
        "shards": len(files),
        "bytes": size,
        "hash": index["hash"],
        "build_seconds": round(built, 3),
        "out": str(args.out),
    }
    if args.json:
        print(json.dumps(summary))
    else:
        sizes = ", ".join(f"{p} cannot win: {n:,}" for p, n in summary["sets"].items())
        print(
            f"{rs.id}: a draw; certificate {args.out}: two non-win sets ({sizes} entries) in "
            f"{len(files)} shards, {size:,} bytes, hash {index['hash']}; build {built:.1f} s"
        )
    return EXIT_OK


def run_check(args: argparse.Namespace) -> int:
    directory: Path = args.directory
    if not directory.is_dir():
        raise HarnessError(f"{directory}: no such certificate directory")
    if args.ruleset is not None:
        Ruleset.from_id(args.ruleset)  # a malformed id is bad input, not a rejection
    spec = cluster_spec(args)
    if index_format(directory) == NONWIN_FORMAT:
        return _run_check_nonwin(args, directory, spec)
    if spec.requested:
        raise HarnessError(
            f"{directory}: a win certificate (format 1) is checked in this process; the "
            "cluster options apply to non-win certificates (format 2)"
        )
    report = check_certificate(
        directory,
        ruleset=args.ruleset,
        max_errors=args.max_errors,
        progress=terminal_progress(),
    )
    if args.json:
        print(
            json.dumps(
                {
                    "directory": report.directory,
                    "ok": report.ok,
                    "ruleset": report.ruleset,
                    "winner": report.winner,
                    "entries": report.entries,
                    "shards": report.shards,
                    "hash": report.hash,
                    "turns": report.turns,
                    "seconds": round(report.seconds, 3),
                    "errors": report.errors,
                }
            )
        )
    elif report.ok:
        print(
            f"accepted: {report.directory}: {report.winner} wins {report.ruleset}; "
            f"{report.entries:,} entries in {report.shards} shards, {report.turns:,} turns "
            f"replayed in {report.seconds:.1f} s; hash {report.hash}"
        )
    else:
        for error in report.errors:
            print(f"rejected: {error}", file=sys.stderr)
        if report.truncated:
            print(f"rejected: (stopped after {len(report.errors)} problems)", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILED


def _run_check_nonwin(args: argparse.Namespace, directory: Path, spec) -> int:
    if not spec.requested:
        report = check_nonwin(
            directory,
            ruleset=args.ruleset,
            max_errors=max(1, args.max_errors),
            progress=terminal_progress(),
        )
    else:
        if spec.workers is None and spec.shared is None:
            raise HarnessError(
                "--scheduler/--cluster-config: give --shared DIR, a folder every worker "
                "sees: the check's key files go there"
            )
        with Session(spec, quiet=args.json) as session:
            report = check_nonwin_parallel(
                directory,
                session,
                ruleset=args.ruleset,
                max_errors=max(1, args.max_errors),
                folder=spec.shared,
            )
    if args.json:
        print(
            json.dumps(
                {
                    "directory": report.directory,
                    "ok": report.ok,
                    "kind": "nonwin",
                    "ruleset": report.ruleset,
                    "value": report.value,
                    "winner": None,
                    "players": report.players,
                    "entries": report.entries,
                    "shards": report.shards,
                    "hash": report.hash,
                    "turns": report.turns,
                    "seconds": round(report.seconds, 3),
                    "errors": report.errors,
                }
            )
        )
    elif report.ok:
        cannot = " and ".join(f"{p} cannot force a win" for p in report.players)
        print(
            f"accepted: {report.directory}: {cannot} in {report.ruleset} ({report.value}); "
            f"{report.entries:,} entries in {report.shards} shards, {report.turns:,} turns "
            f"replayed in {report.seconds:.1f} s; hash {report.hash}"
        )
    else:
        for error in report.errors:
            print(f"rejected: {error}", file=sys.stderr)
        if report.truncated:
            print(f"rejected: (stopped after {len(report.errors)} problems)", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILED


__all__ = ["register", "EXIT_BUDGET", "EXIT_USAGE"]
