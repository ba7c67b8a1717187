"""``solve --method partitioned`` on Dask: one task per partition per step, the same solution
as the single-process compact solve on 1 and 2 workers of a LocalCluster and on a
hand-started scheduler, and after a worker is SIGKILLed mid-solve."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.cluster import ClusterSpec, Session
from harness.rules import Ruleset
from harness.solver.partitioned import assemble, solve
from tests.conftest import assert_same_classes

from .conftest import kill_first_busy_worker

RULESETS = [
    "pop1-4x4-c3-klein-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-reincarnation-continue-binempty-king-nozero-nojump",
]


@pytest.mark.parametrize("rid", RULESETS)
@pytest.mark.parametrize("partitions", [3, 8])
def test_two_local_workers(rid, partitions, local_session, compact_solution, tmp_path):
    rs = Ruleset.from_id(rid)
    got = solve(rs, tmp_path, partitions=partitions, session=local_session, progress=False)
    assert got.value == compact_solution(rid).value and got.classes == compact_solution(rid).classes
    assert_same_classes(assemble(rs, tmp_path), compact_solution(rid))
    assert len(got.per_worker) == 2  # both workers ran steps
    assert got.tasks == partitions * len(got.steps)  # one task per partition per step


def test_one_local_worker(compact_solution, tmp_path):
    rid = RULESETS[1]
    rs = Ruleset.from_id(rid)
    with Session(ClusterSpec(workers=1), quiet=True) as session:
        got = solve(rs, tmp_path, partitions=3, session=session)
    assert len(got.per_worker) == 1
    assert_same_classes(assemble(rs, tmp_path), compact_solution(rid))


def test_hand_started_scheduler(manual_session, compact_solution, tmp_path):
    rid = RULESETS[0]
    rs = Ruleset.from_id(rid)
    got = solve(rs, tmp_path, partitions=3, session=manual_session)
    assert set(got.per_worker) == {"hand1", "hand2"}
    assert_same_classes(assemble(rs, tmp_path), compact_solution(rid))


def test_a_killed_worker_task_runs_again(manual_session, compact_solution, tmp_path):
    rid = RULESETS[0]
    rs = Ruleset.from_id(rid)
    killed: list[int] = []
    kill_first_busy_worker(manual_session, killed)
    got = solve(rs, tmp_path, partitions=8, session=manual_session)
    assert killed, "no worker was seen busy"
    assert len(manual_session.workers()) == 1  # the other one finished the solve
    assert got.value == compact_solution(rid).value
    assert_same_classes(assemble(rs, tmp_path), compact_solution(rid))


def test_cli_on_a_hand_started_scheduler(hand_cluster, compact_solution, tmp_path, capsys):
    hand_cluster.ensure_workers()
    rid = RULESETS[1]
    code = main(
        [
            "solve",
            rid,
            "--method",
            "partitioned",
            "--partitions",
            "4",
            "--workdir",
            str(tmp_path),
            "--scheduler",
            hand_cluster.address,
            "--json",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    want = compact_solution(rid)
    assert (report["value"], report["classes"], report["positions"]) == (
        want.value,
        want.classes,
        want.positions,
    )
    assert report["cluster"].startswith("the Dask scheduler at")
    assert 0 < report["driver_share"] < 1
