"""The split proof search against the single-process one: same value and plies, any split."""

from __future__ import annotations

import pytest

from harness.rules import Ruleset
from harness.solver.proof import BudgetExhausted, ProofSearch
from harness.solver.split_search import NO_WIN, OPEN, PROVEN, prove_task, split_prove

CASES = [
    # (ruleset, task nodes small enough that the root's task is split)
    ("pop1-3x3-c8-klein-continue-binempty-king-nozero-nojump", 30),  # x in 5
    ("pop1-3x3-c8-ringout-continue-binempty-king-nozero-nojump", 30),  # no win within 9
    ("pop1-4x4-c4-ringout-continue-binempty-king-nozero-nojump", 40),  # o in 6
]


@pytest.mark.parametrize(("ruleset", "task_nodes"), CASES)
def test_split_search_finds_the_single_process_value(ruleset, task_nodes) -> None:
    rs = Ruleset.from_id(ruleset)
    plain = ProofSearch(rs).prove(max_plies=9)
    found = split_prove(rs, 9, task_nodes=task_nodes)
    assert (found.winner, found.plies) == (plain.winner, plain.plies)
    assert found.splits > 0, "the budget was meant to split the root"


def test_a_task_says_open_when_its_budget_runs_out() -> None:
    rs = Ruleset.from_id(CASES[0][0])
    root = ProofSearch(rs).root()
    assert prove_task(rs.id, 0, root, 5, 10)[0] == OPEN
    assert prove_task(rs.id, 0, root, 5, 10**6)[:2] == (PROVEN, 5)
    assert prove_task(rs.id, 0, root, 3, 10**6)[:2] == (NO_WIN, None)


def test_a_spent_budget_raises_and_says_how_far() -> None:
    rs = Ruleset.from_id(CASES[1][0])
    with pytest.raises(BudgetExhausted, match=r"node budget of 500 spent \(. within \d+ plies"):
        split_prove(rs, 9, task_nodes=30, max_nodes=500)
