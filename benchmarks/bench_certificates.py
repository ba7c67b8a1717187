"""Benchmark: draw certificates, built and checked (``nox -s bench -- --certificates``).

For each ruleset (``--ruleset``, repeatable; default 4x4 c8 and 5x5 c4 reincarnation) one
row, measured in one run, printed as Markdown:

- the strong solution's classes (``solve --method compact --out``, kept under
  ``out/bench/solutions/`` and reused; ``--solution FILE`` to give one);
- ``certify --solution``: entries of each set, their share of the classes, build seconds and
  the build's peak memory;
- ``check`` in one process, and with ``--workers 1`` and ``--workers 2``: wall seconds, turns
  a second, and the peak memory of the largest worker process.

Peak memory is sampled (psutil, every 0.2 s) over the command's process and every process
it starts. The load average is printed with the table: on a shared machine the wall clock
measures the neighbours too. Timings are read off, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
DEFAULT = [
    "pop1-4x4-c8-reincarnation-continue-binempty-king-nozero-nojump",
    "pop1-5x5-c4-reincarnation-continue-binempty-king-nozero-nojump",
]


def measured(args: list[str]) -> tuple[dict, float, int, int]:
    """Run ``python -m harness ARGS --json``: (its JSON, wall s, peak RSS of the command's
    own process, peak RSS of any process it started)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *args, "--json"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peaks: dict[int, int] = {}
    stop = threading.Event()

    def sample() -> None:
        top = psutil.Process(proc.pid)
        while not stop.is_set():
            try:
                for p in [top, *top.children(recursive=True)]:
                    peaks[p.pid] = max(peaks.get(p.pid, 0), p.memory_info().rss)
            except psutil.Error:
                pass
            time.sleep(0.2)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    out, err = proc.communicate()
    stop.set()
    watcher.join()
    if proc.returncode != 0:
        sys.exit(f"python -m harness {' '.join(args)}: exit {proc.returncode}: {err.strip()}")
    own = peaks.pop(proc.pid, 0)
    return json.loads(out), time.monotonic() - t0, own, max(peaks.values(), default=0)


def mib(n: int) -> str:
    return f"{n / 2**20:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--certificates", action="store_true", help="(the nox session's switch)")
    ap.add_argument("--ruleset", action="append", help="a draw to certify (repeatable)")
    ap.add_argument("--solution", type=Path, help="its saved solution (one ruleset only)")
    ap.add_argument("--out", type=Path, default=REPO / "out" / "bench")
    args = ap.parse_args()
    rulesets = args.ruleset or DEFAULT
    rows = []
    for rid in rulesets:
        solution = args.solution or args.out / "solutions" / f"{rid}.npz"
        if not solution.is_file():
            solution.parent.mkdir(parents=True, exist_ok=True)
            measured(["solve", rid, "--method", "compact", "--out", str(solution)])
        cert = args.out / "certificates" / rid
        made, built_s, built_rss, _ = measured(
            ["certify", rid, "--solution", str(solution), "--out", str(cert), "--force"]
        )
        sets = made["sets"]
        share = (sets["x"] + sets["o"]) / 2 / made["classes"]
        checks = []
        for workers in (None, 1, 2):
            extra = [] if workers is None else ["--workers", str(workers)]
            rep, wall, own, child = measured(["check", str(cert), *extra])
            assert rep["ok"], rep["errors"]
            checks.append((wall, rep["turns"] / wall, own if workers is None else child))
        rows.append((rid, made, share, built_s, built_rss, checks))
    print(f"load average {os.getloadavg()[0]:.1f} at the end\n")
    print(
        "| ruleset | classes | entries x / o | share | build s | build peak MiB "
        "| check s (1 process / 1 worker / 2 workers) | turns a second | peak MiB a process |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rid, made, share, built_s, built_rss, checks in rows:
        walls = " / ".join(f"{c[0]:.1f}" for c in checks)
        rates = " / ".join(f"{c[1]:,.0f}" for c in checks)
        peaks = " / ".join(mib(c[2]) for c in checks)
        print(
            f"| `{rid}` | {made['classes']:,} | {made['sets']['x']:,} / {made['sets']['o']:,} "
            f"| {share:.2%} | {built_s:.1f} | {mib(built_rss)} | {walls} | {rates} | {peaks} |"
        )


if __name__ == "__main__":
    main()
