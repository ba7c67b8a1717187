"""The split certify builder (harness.cert.split) honours the run's time and node budgets:
its tasks use fresh searches, which would otherwise have no budget at all."""

from __future__ import annotations

import pickle
import time

import pytest

from harness.cert import split
from harness.cert.split import split_build
from harness.rules import Ruleset
from harness.solver.proof import BudgetExhausted, ProofSearch

RS = Ruleset.from_id("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump")


def _searched(seconds: float | None) -> ProofSearch:
    search = ProofSearch(RS, max_seconds=seconds)
    assert search.prove(max_plies=9, attackers=(0,)).winner == "x"
    return search


def test_a_spent_time_budget_stops_a_subtree_task():
    # The whole strategy as one task: weighing the actions searches beyond the table.
    search = _searched(None)
    table, root, rank = (
        split.snapshot(search),
        search.root(),
        search.proven_budget(search.root(), 0),
    )
    spent = (time.time() - 1, 3600.0)
    with pytest.raises(BudgetExhausted, match="time budget of 3600 s spent"):
        split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, spent)
    # With time left the same task grows the subtree.
    assert split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, None)


def test_time_left_builds_what_no_budget_builds():
    unbounded = split_build(_searched(None), 0)
    bounded = split_build(_searched(3600), 0)
    assert bounded.entries == unbounded.entries and len(bounded.entries) == 1388


def test_a_spent_node_budget_stops_a_subtree_task():
    search = _searched(None)
    table, root = split.snapshot(search), search.root()
    rank = search.proven_budget(root, 0)
    with pytest.raises(BudgetExhausted, match="node budget of 500 spent"):
        split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, None, (0, 500))
    free = pickle.loads(split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, None))
    spent, rows = free
    assert spent > 0 and rows
    # With the nodes it needs and one more, the same task grows the same subtree.
    room = (spent + 1, 500)
    assert (
        pickle.loads(split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, None, room))
        == free
    )
    with pytest.raises(BudgetExhausted):
        split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, None, (spent, 500))


def test_the_node_budget_counts_every_task_in_one_process():
    # The tasks' nodes are the run's nodes: a budget that the search alone keeps to but
    # that the tasks together pass stops the build; one with room builds what none builds.
    free = _searched(None)
    before = free.nodes
    unbounded = split_build(free, 0)
    spent = free.nodes - before
    assert spent > 0
    tight = _searched(None)
    tight.keep_within(spent, 10**6)  # the budget is spent on the node that reaches it
    with pytest.raises(BudgetExhausted, match="node budget of 1000000 spent"):
        split_build(tight, 0)
    roomy = _searched(None)
    roomy.keep_within(spent + 1, 10**6)
    assert split_build(roomy, 0).entries == unbounded.entries
    assert roomy.nodes == free.nodes


def test_a_split_build_says_how_far_it_got():
    # A big certificate's subtrees take long: the build reports them as it goes, with the
    # same certificate as a silent one.
    lines: list[str] = []
    told = split_build(_searched(None), 0, say=lines.append)
    assert told.entries == split_build(_searched(None), 0).entries
    grown = [line for line in lines if line.endswith("subtrees grown")]
    count = int(lines[1].split()[1])
    assert count > 1 and lines[1].startswith("building: ") and "to grow" in lines[1]
    assert grown == [f"building: {i} of {count} subtrees grown" for i in range(1, count + 1)]
    assert lines[-1] == f"building: merging {count} subtrees"


def test_a_subtree_grown_here_reports_its_entries():
    search = _searched(None)
    table, root = split.snapshot(search), search.root()
    rank = search.proven_budget(root, 0)
    seen: list[int] = []
    _, rows = pickle.loads(
        split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, None, None, seen.append)
    )
    assert seen == list(range(1000, len(rows) + 1, 1000)) and seen
