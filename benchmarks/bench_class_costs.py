"""Benchmark: what a class costs to solve, per ruleset (``nox -s bench -- --class-costs``).

For each ruleset (``--ruleset``, repeatable; default 5x5 c5, 5x5 c8 and 6x6 c8
reincarnation), measured in one run and printed as a Markdown table:

- the classes ``estimate`` gives (harness.solver.estimate, ``--samples`` a slice);
- ``--classes`` reachable classes (3,000), drawn slice by slice in proportion to the
  estimate, each found reachable by the estimate's search;
- their CPU microseconds a class to expand (every action played, judged and keyed) and to
  un-play (every parent proposed and checked), with the actions and parents a class.

A strong solve's CPU a class divided by the expand + un-play figure of the same ruleset gives
the ratio docs/results.md uses to carry a measured solve over to an unsolved ruleset.
Timings are read off, never asserted; CPU time, so that a shared machine's neighbours count
less.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.rules import Ruleset
from harness.solver.compact.runner import unplay_batch
from harness.solver.estimate import Reacher, estimate_classes, plies_back

SUFFIX = "-continue-binempty-king-nozero-nojump"
DEFAULT = [f"pop1-{size}-reincarnation{SUFFIX}" for size in ("5x5-c5", "5x5-c8", "6x6-c8")]
BATCH = 4096


def reachable(rs: Ruleset, reacher: Reacher, est, want: int) -> np.ndarray:
    """About ``want`` reachable class keys, drawn from each slice in proportion to its
    estimated classes."""
    total = est.classes
    keys = []
    for s in est.slices:
        k = int(round(want * s.classes / total)) if total else 0
        got, tries = [], 0
        while k and sum(len(g) for g in got) < k and tries < 20:
            me, them, mb, tb = reacher.sample(s.a, s.b, min(1500, max(64, 3 * k)))
            drawn = reacher.eng.class_keys(me, them, mb, tb)
            got.append(drawn[reacher.reached(drawn, plies_back(rs, mb, tb))])
            tries += 1
        if got:
            keys.append(np.concatenate(got)[:k])
    return np.concatenate(keys)


def costs(rid: str, samples: int, want: int) -> dict:
    rs = Ruleset.from_id(rid)
    est = estimate_classes(rs, samples=samples, seed=0)
    reacher = Reacher(rs, 64, np.random.default_rng(7))
    eng = reacher.eng
    keys = reachable(rs, reacher, est, want)
    me, them, mb, tb = eng.unpack_class(keys)
    actions = parents = 0
    t = time.process_time()
    for lo in range(0, len(keys), BATCH):
        part = slice(lo, lo + BATCH)
        ex = eng.expand(me[part], them[part], mb[part], tb[part])
        eng.child_keys(ex, np.arange(len(ex.parent)))
        actions += len(ex.parent)
    expand = time.process_time() - t
    t = time.process_time()
    for lo in range(0, len(keys), BATCH):
        _, found, _ = unplay_batch(eng, reacher.unplayer, keys[lo : lo + BATCH])
        parents += len(found)
    unplay = time.process_time() - t
    n = len(keys)
    return {
        "ruleset": rid,
        "classes": est.classes,
        "error": est.error,
        "sampled": n,
        "expand_us": 1e6 * expand / n,
        "unplay_us": 1e6 * unplay / n,
        "actions": actions / n,
        "parents": parents / n,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--class-costs", action="store_true", help="(the nox switch)")
    ap.add_argument("--ruleset", action="append", help="a ruleset id (repeatable)")
    ap.add_argument("--samples", type=int, default=400, help="estimate's samples a slice")
    ap.add_argument("--classes", type=int, default=3000, help="reachable classes to time")
    args = ap.parse_args()
    print("| ruleset | estimated classes | sampled | expand µs | un-play µs | actions | parents |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for rid in args.ruleset or DEFAULT:
        c = costs(rid, args.samples, args.classes)
        print(
            f"| {rid} | {c['classes']:,.0f} ± {c['error']:,.0f} | {c['sampled']:,} | "
            f"{c['expand_us']:.1f} | {c['unplay_us']:.1f} | {c['actions']:.1f} | "
            f"{c['parents']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
