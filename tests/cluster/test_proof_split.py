"""``solve --method proof`` on Dask: the split search gives the single-process value and
plies on a LocalCluster, on a hand-started scheduler, and with a worker killed mid-run."""

from __future__ import annotations

import json

import pytest

from harness.rules import Ruleset
from harness.solver.proof import ProofSearch
from harness.solver.split_search import split_prove
from tests.harness_cli import run_harness

from .conftest import kill_first_busy_worker, worker_env, worker_pids

KLEIN = "pop1-3x3-c8-klein-continue-binempty-king-nozero-nojump"  # x in 5
RINGOUT = "pop1-3x3-c8-ringout-continue-binempty-king-nozero-nojump"  # no win within 9


def answer(found) -> tuple:
    return found.winner, found.plies


@pytest.fixture(scope="module")
def inline() -> dict[str, tuple]:
    """Each ruleset's split search with no cluster (the same tasks, one after another)."""
    return {r: answer(split_prove(Ruleset.from_id(r), 9, task_nodes=30)) for r in (KLEIN, RINGOUT)}


@pytest.mark.parametrize("ruleset", [KLEIN, RINGOUT])
def test_a_local_cluster_finds_the_value_found_here(inline, local_session, ruleset) -> None:
    found = split_prove(Ruleset.from_id(ruleset), 9, local_session, task_nodes=30, progress=False)
    assert answer(found) == inline[ruleset]
    assert found.tasks > 1


def test_a_worker_killed_mid_search_changes_nothing(inline, manual_session) -> None:
    killed: list[int] = []
    kill_first_busy_worker(manual_session, killed)
    found = split_prove(Ruleset.from_id(RINGOUT), 9, manual_session, task_nodes=30, progress=False)
    assert answer(found) == inline[RINGOUT]
    assert killed and killed[0] not in worker_pids(manual_session).values()


def test_the_command_line_gives_the_single_process_value(tmp_path) -> None:
    plain = ProofSearch(Ruleset.from_id(KLEIN)).prove(max_plies=9)
    done = run_harness(
        "solve", KLEIN, "--method", "proof", "--json", "--max-plies", "9",
        "--workers", "2", "--task-nodes", "30", env=worker_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["value"], report["plies"]) == (plain.winner, plain.plies)
    assert report["tasks"] > 1 and "LocalCluster of 2" in report["split"]
    assert "Traceback" not in done.stderr


def test_the_command_line_searches_only_the_winner_asked_for(tmp_path) -> None:
    # x wins KLEIN in 5: a split search of o's wins alone finds none within 9 plies.
    done = run_harness(
        "solve", KLEIN, "--method", "proof", "--max-plies", "9", "--winner", "o",
        "--workers", "2", "--task-nodes", "30", env=worker_env(),
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "no forced win for o within 9 plies" in done.stderr
    assert "Traceback" not in done.stderr
