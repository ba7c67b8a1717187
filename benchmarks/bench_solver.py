"""Benchmark: the numpy batch engine and solver against the reference engine on the same work.

Three tables, printed as Markdown:

1. **Successor generation**: positions from random games of each ruleset, expanded by the
   reference engine (``legal_actions`` + ``play_unchecked`` per action) and by the batch
   engine (:meth:`BatchEngine.successors`, in the reference order, absolute positions);
   positions/s and successors/s of each and the ratio.
2. **Full solves**: ``python -m harness solve RULESET --json`` in a fresh process (so peak
   memory is the solve's own; "process CPU" adds the interpreter's start-up and imports),
   and the same solve done with the reference engine (breadth first over raw positions, then
   retrograde analysis, in this process); positions, value, plies, seconds, positions/s,
   peak memory, ratio. The batch engine's successors are timed on batches of the solver's
   size (the sample repeated).

3. **Research certificates**: ``certify`` then ``check`` of the 4x4 and 5x5 c8 research
   rulesets (6x6 with ``--big``): winner, plies, entries, shards, bytes, wall seconds.
4. **Compact solver** (``--compact``, also with ``--big``): the same strong solves by today's
   retrograde solver, the compact solver (:mod:`harness.solver.compact`, in memory and, with
   ``--compact-workdir``, out of core) and, where ``g++`` exists, the C++ baseline of
   ``../shared/bench/cpp`` (built in a temporary folder outside the project), one after the
   other in this run: classes, value, CPU and wall seconds, classes per CPU second, peak
   resident memory of the solving process (``/usr/bin/time``'s maximum RSS where it exists,
   else the process's own high-water mark) and bytes per class, disk. The targets of issue
   11 are read off it: at most 32 bytes per class on 5x5 c4 torus, classes/s no lower.
5. **Proof search** (``--compact`` too): the proof-number search (:mod:`harness.solver.pns`)
   against today's depth-first proof search on the same proofs: nodes, seconds, nodes per
   CPU second, ratio.

Rates are given per CPU second (``process_time``, children's ``ru_utime + ru_stime``) as well
as per wall second: on a shared machine the wall clock measures the neighbours, and ratios are
computed on CPU time within one run. Speed targets are read off this table, never asserted.

Usage::

    python benchmarks/bench_solver.py            # 4x4 c3/c4/c5; reference solve on c3 only
    python benchmarks/bench_solver.py --big      # also 5x5 c4 solve, 6x6 certificate (minutes)
    python benchmarks/bench_solver.py --reference-all   # reference solves of c4/c5 too (slow)
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.rules import Position, Ruleset, legal_actions, play_unchecked  # noqa: E402
from harness.solver.batch import engine  # noqa: E402
from harness.solver.retrograde import BATCH  # noqa: E402
from harness.solver.states import States  # noqa: E402

FAMILY = [f"pop1-4x4-c{c}-torus-continue-binempty-king-nozero-nojump" for c in (3, 4, 5)]
BIG = "pop1-5x5-c4-torus-continue-binempty-king-nozero-nojump"


def sample_positions(rs: Ruleset, count: int, seed: int = 1) -> list[Position]:
    """Positions met in random games (line-free, as a solver meets them)."""
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < count:
        pos = Position.initial(rs)
        for _ in range(60):
            out.append(pos)
            acts = legal_actions(rs, pos)
            if not acts:
                break
            o = play_unchecked(rs, pos, rng.choice(acts))
            if o.result is not None:
                break
            pos = o.next
    return out[:count]


def _clock():
    return time.perf_counter(), time.process_time()


def bench_successors(rid: str, count: int) -> dict:
    rs = Ruleset.from_id(rid)
    positions = sample_positions(rs, count)
    w0, c0 = _clock()
    ref_succ = 0
    for pos in positions:
        for action in legal_actions(rs, pos):
            play_unchecked(rs, pos, action)
            ref_succ += 1
    w1, c1 = _clock()
    eng = engine(rs)
    # The same positions, repeated into a batch of the size the solver uses.
    copies = -(-BATCH // len(positions))
    tiled = positions * copies
    states = States.from_positions(tiled)
    eng.successors(states)  # warm the tables
    reps = 0
    w2, c2 = _clock()
    while True:
        succ = eng.successors(states)
        reps += 1
        if time.process_time() - c2 > 0.5:
            break
    w3, c3 = _clock()
    assert len(succ) == ref_succ * copies, (len(succ), ref_succ)
    ref_cpu, batch_cpu = c1 - c0, (c3 - c2) / reps / copies
    return {
        "ruleset": rid,
        "positions": len(positions),
        "successors": ref_succ,
        "reference_pos_per_cpu_s": len(positions) / ref_cpu,
        "batch_pos_per_cpu_s": len(positions) / batch_cpu,
        "batch_succ_per_cpu_s": ref_succ / batch_cpu,
        "reference_wall_s": w1 - w0,
        "batch_wall_s": (w3 - w2) / reps,
        "ratio": ref_cpu / batch_cpu,
    }


def batch_solve(rid: str, timeout: float) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "solve", rid, "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )
    wall = time.perf_counter() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"solve {rid} failed ({proc.returncode}): {proc.stderr.strip()}")
    out = json.loads(proc.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out["process_wall_s"] = wall
    out["process_cpu_s"] = cpu  # includes interpreter start-up and imports
    out["cpu_s"] = out["cpu_seconds"]  # the solve's own
    return out


def reference_solve(rs: Ruleset) -> dict:
    """The same solve with the reference engine: raw positions, breadth first, retrograde."""
    w0, c0 = _clock()
    start = Position.initial(rs)
    index = {start: 0}
    order = [start]
    children: list[list[int]] = []
    win_now: list[bool] = []
    avoid_loss: list[bool] = []  # a drawing action
    i = 0
    while i < len(order):
        pos = order[i]
        i += 1
        kids, win, draw = [], False, False
        for action in legal_actions(rs, pos):
            o = play_unchecked(rs, pos, action)
            if o.result is None:
                j = index.get(o.next)
                if j is None:
                    j = index[o.next] = len(order)
                    order.append(o.next)
                kids.append(j)
            elif o.result == "draw":
                draw = True
            elif o.result == "xo"[pos.turn]:
                win = True
        children.append(kids)
        win_now.append(win)
        avoid_loss.append(draw)
    n = len(order)
    turn = [p.turn for p in order]
    parents: list[list[int]] = [[] for _ in range(n)]
    for p, kids in enumerate(children):
        for c in kids:
            parents[c].append(p)
    winner = [-1] * n  # 0 x, 1 o
    plies = [0] * n
    left = [len(k) for k in children]
    queue: deque[int] = deque()
    for p in range(n):
        if win_now[p]:
            winner[p], plies[p] = turn[p], 1
            queue.append(p)
        elif left[p] == 0 and not avoid_loss[p]:
            winner[p], plies[p] = 1 - turn[p], 1
            queue.append(p)
    while queue:  # FIFO: positions leave in order of plies
        c = queue.popleft()
        for p in parents[c]:
            if winner[p] >= 0:
                continue
            if winner[c] == turn[p]:
                winner[p], plies[p] = turn[p], plies[c] + 1
                queue.append(p)
            else:
                left[p] -= 1
                if left[p] == 0 and not avoid_loss[p]:
                    winner[p], plies[p] = 1 - turn[p], plies[c] + 1
                    queue.append(p)
    w1, c1 = _clock()
    value = "draw" if winner[0] < 0 else "xo"[winner[0]]
    return {
        "ruleset": rs.id,
        "value": value,
        "plies": None if value == "draw" else plies[0],
        "positions": n,
        "seconds": w1 - w0,
        "cpu_s": c1 - c0,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


CERTIFIED = [
    "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump",
    "pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump",
]
CERTIFIED_BIG = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"


def certify_and_check(rid: str, timeout: float) -> dict:
    """``certify`` then ``check`` in fresh processes; wall seconds of each."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cert"
        w0 = time.perf_counter()
        made = subprocess.run(
            [sys.executable, "-m", "harness", "certify", rid, "--out", str(out), "--json"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=timeout,
        )
        w1 = time.perf_counter()
        if made.returncode != 0:
            raise SystemExit(f"certify {rid} failed ({made.returncode}): {made.stderr.strip()}")
        checked = subprocess.run(
            [sys.executable, "-m", "harness", "check", str(out)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=timeout,
        )
        w2 = time.perf_counter()
        if checked.returncode != 0:
            raise SystemExit(f"check {rid} rejected the certificate: {checked.stdout.strip()}")
    report = json.loads(made.stdout)
    report.update(certify_wall_s=w1 - w0, check_wall_s=w2 - w1)
    return report


COMPACT_SET = ["pop1-5x5-c3-torus-continue-binempty-king-nozero-nojump"]
COMPACT_BIG = "pop1-5x5-c4-torus-continue-binempty-king-nozero-nojump"
TIME = Path("/usr/bin/time")


def _timed(cmd: list[str], timeout: float) -> tuple[subprocess.CompletedProcess, dict]:
    """Run ``cmd``; its CPU and wall seconds and maximum RSS (``/usr/bin/time`` if present,
    else from ``getrusage`` of the children, which is only right for the largest child)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = [str(TIME), "-o", tf.name, "-f", "%e %U %S %M", *cmd] if TIME.exists() else cmd
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        proc = subprocess.run(full, capture_output=True, text=True, cwd=ROOT, timeout=timeout)
        wall = time.perf_counter() - w0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak = after.ru_maxrss * 1024
        if TIME.exists():
            fields = tf.read().strip().splitlines()[-1].split()
            wall, cpu = float(fields[0]), float(fields[1]) + float(fields[2])
            peak = int(fields[3]) * 1024
    return proc, {"wall_s": wall, "process_cpu_s": cpu, "peak_bytes": peak}


def solve_with(
    rid: str, method: str, workdir: Path | None = None, timeout: float = 7200, threads: int = 1
) -> dict:
    cmd = [sys.executable, "-m", "harness", "solve", rid, "--method", method, "--json"]
    if workdir is not None:
        cmd += ["--workdir", str(workdir), "--fresh"]
    if threads > 1:
        cmd += ["--threads", str(threads)]
    proc, t = _timed(cmd, timeout)
    if proc.returncode != 0:
        raise SystemExit(f"solve {rid} --method {method} failed: {proc.stderr.strip()}")
    out = json.loads(proc.stdout)
    out.update(t)
    return out


def cpp_solve(rid: str, timeout: float = 7200) -> dict | None:
    """The C++ baseline on the research family (torus only), built outside the project."""
    rs = Ruleset.from_id(rid)
    if not rs.is_research_family or rs.edge != "torus":
        return None
    src = ROOT.parent / "shared" / "bench" / "cpp" / "pop.cpp"
    if not src.exists():
        src = Path("/work/shared/bench/cpp/pop.cpp")
    gxx = shutil.which("g++")
    if gxx is None or not src.exists():
        return None
    binary = Path(tempfile.gettempdir()) / "pop-cpp-bench"
    if not binary.exists():
        subprocess.run(
            [gxx, "-O2", "-march=native", "-std=c++17", "-pthread", "-o", str(binary), str(src)],
            check=True,
        )
    proc, t = _timed([str(binary), "solve", str(rs.rows), str(rs.cols), str(rs.checkers)], timeout)
    if proc.returncode != 0:
        return None
    first = proc.stdout.split("positions ", 1)[1].split()[0]
    initial = proc.stdout.split("initial: ", 1)[1].splitlines()[0]
    value = "draw" if initial.startswith("draw") else ("x" if "win" in initial else "o")
    out = {"positions": int(first), "value": value}
    out.update(t)
    return out


def bench_compact(rids: list[str], workdir: Path | None, threads: int = 1) -> list[dict]:
    print("\n## Compact solver, today's retrograde solver and the C++ baseline (one run)\n")
    _, idle = _timed([sys.executable, "-m", "harness", "solve", "--help"], 60)
    base = idle["peak_bytes"]
    print(
        f"Start-up: `python -m harness` alone peaks at {base / 2**20:.0f} MiB; the last "
        "column is the solve's own memory per class (peak minus that).\n"
    )
    print(
        "| ruleset | solver | classes | value | plies | CPU s | wall s | classes/CPU s "
        "| classes/wall s | peak MiB | bytes/class | disk MiB | bytes/class above start-up |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for rid in rids:
        runs = [
            ("retrograde", solve_with(rid, "retrograde")),
            ("compact", solve_with(rid, "compact")),
        ]
        if threads > 1:
            # The same solve on threads (--threads): its gain is in wall seconds.
            runs.append(
                (f"compact, {threads} threads", solve_with(rid, "compact", threads=threads))
            )
        if workdir is not None and rid == rids[0]:
            # Out of core once, on the smallest (the in-memory runs show the scaling).
            runs.append(("compact, out of core", solve_with(rid, "compact", workdir / "compact")))
        ref = runs[0][1]
        for name, r in runs[1:]:
            if (r["value"], r["plies"], r["positions"]) != (
                ref["value"],
                ref["plies"],
                ref["positions"],
            ):
                raise SystemExit(f"{rid}: {name} {r} and retrograde {ref} disagree")
        classes = ref["classes"]
        cpp = cpp_solve(rid)
        for name, r in runs:
            cpu = r["process_cpu_s"]
            print(
                f"| {rid} | {name} | {r['classes']:,} | {r['value']} | {r['plies']} | "
                f"{cpu:.1f} | {r['wall_s']:.1f} | {fmt_rate(r['classes'] / cpu)} | "
                f"{fmt_rate(r['classes'] / r['wall_s'])} | "
                f"{r['peak_bytes'] / 2**20:.0f} | {r['peak_bytes'] / r['classes']:.0f} | "
                f"{(r.get('disk_bytes') or 0) / 2**20:.0f} | "
                f"{(r['peak_bytes'] - base) / r['classes']:.0f} |",
                flush=True,
            )
        if cpp is not None:
            print(
                f"| {rid} | C++ baseline (no symmetry; {cpp['positions']:,} positions) | - | "
                f"{cpp['value']} | - | {cpp['process_cpu_s']:.1f} | {cpp['wall_s']:.1f} | "
                f"{fmt_rate(classes / cpp['process_cpu_s'])} | "
                f"{fmt_rate(classes / cpp['wall_s'])} | "
                f"{cpp['peak_bytes'] / 2**20:.0f} | {cpp['peak_bytes'] / classes:.0f} | 0 | - |",
                flush=True,
            )
        rows.append({"ruleset": rid, "runs": dict(runs), "cpp": cpp})
    print(
        "\nclasses/CPU s of the C++ row: our classes over its CPU seconds (it stores every "
        "position; bytes/class likewise per our class)."
    )
    return rows


def bench_scaling(rids: list[str], against: bool = False, threads: int = 1) -> list[dict]:
    """The compact solver on bigger rulesets (``--compact-scale``): how it scales; with
    ``against`` (``--scale-retrograde``) today's retrograde solver on them too, in turn, and
    with ``threads`` (``--compact-threads``) the compact solver on that many threads too."""
    print("\n## Compact solver scaling (in memory; the rows above are its small end)\n")
    print(
        "| ruleset | solver | classes | value | plies | CPU s | wall s | classes/CPU s "
        "| ratio | wall ratio | peak MiB | bytes/class |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for rid in rids:
        runs = [("retrograde", solve_with(rid, "retrograde"))] if against else []
        runs.append(("compact", solve_with(rid, "compact", timeout=6 * 3600)))
        if threads > 1:
            runs.append(
                (
                    f"compact, {threads} threads",
                    solve_with(rid, "compact", timeout=6 * 3600, threads=threads),
                )
            )
        first = runs[0][1]["classes"] / runs[0][1]["process_cpu_s"]
        first_wall = runs[0][1]["wall_s"]
        for name, r in runs:
            cpu = r["process_cpu_s"]
            print(
                f"| {rid} | {name} | {r['classes']:,} | {r['value']} | {r['plies']} | "
                f"{cpu:.1f} | {r['wall_s']:.1f} | {fmt_rate(r['classes'] / cpu)} | "
                f"{r['classes'] / cpu / first:.2f}x | {first_wall / r['wall_s']:.2f}x | "
                f"{r['peak_bytes'] / 2**20:.0f} | "
                f"{r['peak_bytes'] / r['classes']:.1f} |",
                flush=True,
            )
        rows.append({"ruleset": rid, **dict(runs)})
    return rows


PROOFS = [
    ("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump", 0, 9),
    ("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump", 0, 9),
    ("pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump", 0, 9),
]


def bench_proofs(cells: list[tuple[str, int, int]]) -> list[dict]:
    from harness.solver.pns import PNSearch
    from harness.solver.proof import ProofSearch

    print("\n## Proof search: proof-number search against today's depth-first search\n")
    # ratio: nodes per CPU second against the depth-first search's; speed: its CPU seconds
    # over this search's for the same proof (above 1 is faster).
    print("| ruleset | search | winner | plies | nodes | CPU s | nodes/CPU s | ratio | speed |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    out = []
    for rid, attacker, plies in cells:
        rs = Ruleset.from_id(rid)
        c0 = time.process_time()
        dfs = ProofSearch(rs).prove(max_plies=plies, attackers=(attacker,))
        c1 = time.process_time()
        pns = PNSearch(rs, attacker, max_plies=plies).prove()
        c2 = time.process_time()
        rate_d, rate_p = dfs.nodes / (c1 - c0), pns.nodes / (c2 - c1)
        print(
            f"| {rid} | depth-first | {dfs.winner} | {dfs.plies} | {dfs.nodes:,} | "
            f"{c1 - c0:.2f} | {fmt_rate(rate_d)} | 1x | 1x |"
        )
        print(
            f"| {rid} | proof-number | {pns.winner} | {pns.plies} | {pns.nodes:,} "
            f"({pns.generated:,} made) | {c2 - c1:.2f} | {fmt_rate(rate_p)} | "
            f"{rate_p / rate_d:.2f}x | {(c1 - c0) / (c2 - c1):.2f}x |",
            flush=True,
        )
        out.append({"ruleset": rid, "dfs": vars(dfs), "pns": vars(pns), "cpu": [c1 - c0, c2 - c1]})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--big", action="store_true", help="also solve 5x5 c4 and certify 6x6 c8 (minutes, GBs)"
    )
    ap.add_argument("--reference-all", action="store_true", help="reference solves of c4/c5")
    ap.add_argument(
        "--compact",
        action="store_true",
        help="only tables 4 and 5: compact solver (5x5 c3 and c4) and proof search (minutes)",
    )
    ap.add_argument(
        "--compact-workdir",
        type=Path,
        help="also run the compact solver out of core in this folder",
    )
    ap.add_argument(
        "--compact-scale",
        nargs="+",
        default=[],
        metavar="RULESET",
        help="with --compact: also the compact solver alone on these (e.g. 5x5 c5 torus, minutes)",
    )
    ap.add_argument(
        "--scale-retrograde",
        action="store_true",
        help="with --compact-scale: today's retrograde solver on them too (5x5 c5 torus: 4 GB)",
    )
    ap.add_argument(
        "--proofs",
        action="store_true",
        help="only table 5: the proof searches (with --big also 6x6 c8 torus, minutes)",
    )
    ap.add_argument(
        "--compact-threads",
        type=int,
        default=1,
        metavar="N",
        help="with --compact: also the compact solver on N threads (--threads N)",
    )
    ap.add_argument("--sample", type=int, default=1500, help="positions for table 1")
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    args = ap.parse_args(argv)

    if args.proofs:
        proofs = bench_proofs(PROOFS[:2] + (PROOFS[2:] if args.big else []))
        if args.json:
            args.json.write_text(json.dumps({"proofs": proofs}, indent=1))
        return 0

    if args.compact:
        compact_rows = bench_compact(
            COMPACT_SET + [COMPACT_BIG], args.compact_workdir, args.compact_threads
        )
        proofs = bench_proofs(PROOFS[:2] + (PROOFS[2:] if args.big else []))
        scaling = bench_scaling(args.compact_scale, args.scale_retrograde, args.compact_threads)
        if args.json:
            figures = {"compact": compact_rows, "proofs": proofs, "scaling": scaling}
            args.json.write_text(json.dumps(figures, indent=1))
        return 0
    rulesets = FAMILY + [BIG]
    print("## Successor generation (same positions, both engines)\n")
    print(
        "| ruleset | positions | successors | reference pos/s | batch pos/s "
        "| batch succ/s | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    gen = []
    for rid in rulesets:
        r = bench_successors(rid, args.sample)
        gen.append(r)
        print(
            f"| {rid} | {r['positions']} | {r['successors']} | "
            f"{fmt_rate(r['reference_pos_per_cpu_s'])} | {fmt_rate(r['batch_pos_per_cpu_s'])} | "
            f"{fmt_rate(r['batch_succ_per_cpu_s'])} | {r['ratio']:.0f}x |",
            flush=True,
        )

    print("\n## Full solves (positions/s per CPU second; wall seconds in brackets)\n")
    print(
        "| ruleset | engine | positions | value | plies | CPU s (wall) | process CPU s "
        "| positions/s | peak MiB | ratio |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    solves = []
    for rid in FAMILY + ([BIG] if args.big else []):
        b = batch_solve(rid, timeout=3600)
        rate_b = b["positions"] / b["cpu_s"]
        row = {"batch": b}
        ref_rate = None
        if rid == FAMILY[0] or (args.reference_all and rid in FAMILY):
            ref = reference_solve(Ruleset.from_id(rid))
            row["reference"] = ref
            ref_rate = ref["positions"] / ref["cpu_s"]
            if (ref["value"], ref["plies"], ref["positions"]) != (
                b["value"],
                b["plies"],
                b["positions"],
            ):
                raise SystemExit(f"{rid}: batch {b} and reference {ref} disagree")
        print(
            f"| {rid} | batch | {b['positions']} | {b['value']} | {b['plies']} | "
            f"{b['cpu_s']:.2f} ({b['seconds']:.2f}) | {b['process_cpu_s']:.2f} | "
            f"{fmt_rate(rate_b)} | "
            f"{b['peak_rss_bytes'] / 2**20:.0f} | "
            f"{'-' if ref_rate is None else f'{rate_b / ref_rate:.0f}x'} |",
            flush=True,
        )
        if "reference" in row:
            ref = row["reference"]
            print(
                f"| {rid} | reference | {ref['positions']} | {ref['value']} | {ref['plies']} | "
                f"{ref['cpu_s']:.2f} ({ref['seconds']:.2f}) | - | {fmt_rate(ref_rate)} | "
                f"{ref['peak_rss_bytes'] / 2**20:.0f} | 1x |",
                flush=True,
            )
        solves.append(row)
    print("\n## Research certificates (certify, then the independent check)\n")
    print("| ruleset | winner | plies | entries | shards | bytes | certify s | check s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    certs = []
    for rid in CERTIFIED + ([CERTIFIED_BIG] if args.big else []):
        c = certify_and_check(rid, timeout=3600)
        certs.append(c)
        print(
            f"| {rid} | {c['winner']} | {c['plies']} | {c['entries']} | {c['shards']} | "
            f"{c['bytes']} | {c['certify_wall_s']:.1f} | {c['check_wall_s']:.1f} |",
            flush=True,
        )
    compact_rows = bench_compact(
        COMPACT_SET + ([COMPACT_BIG] if args.big else []), args.compact_workdir
    )
    proofs = bench_proofs(PROOFS[:2] + (PROOFS[2:] if args.big else []))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "successors": gen,
                    "solves": solves,
                    "certificates": certs,
                    "compact": compact_rows,
                    "proofs": proofs,
                },
                indent=1,
                default=str,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
