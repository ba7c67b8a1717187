"""``python -m harness solve RULESET --json`` against the oracle's brute-force solver.

The oracle (``tests/oracle/pop_oracle.py``) enumerates the reachable graph with its own reading
of docs/rules.md and solves it by plain retrograde analysis (winner fastest, loser slowest, cycles
drawn), so agreement on value, plies and the number of reachable positions over every edge is
independent evidence for the numpy solver. The reachable count is issue 3's: positions reached
by legal play, the initial one included, none after a game-ending action, the turn as handed
over after a pass.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.oracle import pop_oracle as po

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300  # seconds per solve

# Small rulesets over every edge, both stuck rules, every movement, and non-square boards
# (whose symmetry groups are smaller: a solver reducing by symmetry must still count raw
# positions). Each takes the oracle a few seconds at most.
SMALL = [
    "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-3x3-c3-klein-continue-binempty-king-nozero-nojump",
    "pop1-3x3-c3-blocked-continue-binempty-king-nozero-nojump",
    "pop1-3x3-c3-reincarnation-continue-binempty-king-nozero-nojump",
    "pop1-3x3-c3-ringout-continue-binempty-king-nozero-nojump",
    "pop1-3x3-c4-ringout-continue-binempty-king-nozero-nojump",
    "pop1-3x3-c3-ringout-continue-always-anywhere-nozero-nojump",
    "pop1-3x3-c4-klein-draw-binempty-king-zero-nojump",
    "pop1-3x3-c3-blocked-draw-binempty-bishop-zero-jump",
    "pop1-3x3-c3-torus-draw-nomove-king-nozero-nojump",
    "pop1-4x3-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-3x4-c3-klein-continue-binempty-king-nozero-nojump",
    # Both colourings of a class first reached in the same breadth-first level: these found a
    # lost side bit in the solver's position count.
    "pop1-3x3-c3-klein-continue-binempty-bishop-nozero-jump",
    "pop1-3x4-c3-reincarnation-continue-nomove-rook-nozero-jump",
]
# The research family's smallest member (issue 3's first target) and a larger rook ruleset:
# about a minute or more each in the oracle.
LARGER = [
    "pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-3x4-c3-blocked-continue-always-rook-nozero-jump",
]


@cache
def solve_command_exists() -> bool:
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    return re.search(r"^\s+solve\b", proc.stdout, re.MULTILINE) is not None


@cache
def oracle_solution(rid: str) -> po.Solution:
    return po.solve(po.parse_ruleset(rid))


def harness_solve(rid: str, *extra: str) -> dict:
    if not solve_command_exists():
        pytest.fail("`python -m harness solve` is missing (not in `python -m harness --help`)")
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "solve", rid, "--json", *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, f"solve {rid} exited {proc.returncode}: {proc.stderr[-2000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, f"solve {rid} --json printed nothing"
    # The JSON object is the whole output, or at least its last line.
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return json.loads(lines[-1])


def compare(rid: str) -> None:
    got = harness_solve(rid)
    solution = oracle_solution(rid)
    want = {
        "ruleset": rid,
        "value": solution.value[0],
        "positions": len(solution.graph.keys),
    }
    if solution.value[0] != "draw":
        # Plies are only defined for a decided game; a draw may be reported with any plies.
        want["plies"] = solution.plies[0]
    assert {key: got.get(key) for key in want} == want, (
        f"python -m harness solve {rid} --json\n  oracle {want}\n  harness {got}"
    )
    assert isinstance(got.get("seconds"), int | float), got


@pytest.mark.parametrize("rid", SMALL)
def test_small_rulesets_agree_with_oracle(rid):
    compare(rid)


@pytest.mark.slow
@pytest.mark.parametrize("rid", LARGER)
def test_larger_rulesets_agree_with_oracle(rid):
    compare(rid)


@pytest.mark.parametrize("rid", SMALL)
def test_every_reachable_position_has_the_oracle_value(rid, tmp_path):
    """Not just the initial position: the value and plies ``solve --out`` saved for each
    position the oracle reaches (read back with the solver's own loader, as the site will)."""
    out = tmp_path / "values.npz"
    harness_solve(rid, "--out", str(out))
    from harness.rules import Position, Ruleset
    from harness.solver.solution import Solution

    saved = Solution.load(out)
    rs = Ruleset.from_id(rid)
    solution = oracle_solution(rid)
    disagreements = []
    for key, value, plies in zip(solution.graph.keys, solution.value, solution.plies, strict=True):
        got = saved.value_of(Position.from_text(rs, key))
        if got != (value, plies):
            disagreements.append(f"{key!r}: oracle {(value, plies)}, saved {got}")
    assert not disagreements, (
        f"{rid}: {len(disagreements)} of {len(solution.graph.keys)} positions differ:\n"
        + "\n".join(disagreements[:20])
    )
