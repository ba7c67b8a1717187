"""``solve --method compact`` with its levels and plies as Dask tasks: the same solution everywhere.

Every class's value, plies, colourings and orbit are compared with the single-process compact
solve on a LocalCluster of 2 workers, on a hand-started ``dask scheduler`` with two ``dask
worker`` processes (data through a shared folder), and with one worker SIGKILLed mid-solve.
The tests cut levels into small ranges (``SMALL``) so that small rulesets make many tasks.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

from harness.cli import main
from harness.cluster import ClusterSpec, Session, SharedStore
from harness.rules import Ruleset
from harness.solver import compact, solution
from harness.solver.compact import runner as compact_runner
from harness.solver.compact.dask_runner import DaskRunner, TaskFailed
from tests.conftest import set_everywhere

from .conftest import worker_pids
from .test_certify import run_cli

SMALL = {"task_classes": 256, "inline_below": 0, "progress": False}
RULESETS = [
    "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-reincarnation-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-ringout-continue-binempty-king-nozero-nojump",
    "pop1-3x4-c3-klein-continue-binempty-king-nozero-nojump",
]
R44C4 = "pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump"


@pytest.fixture(scope="module")
def inline():
    """The single-process compact solutions, solved once per ruleset, taking levels in the
    pieces a runner of ``task_classes`` takes them in (so even the expansions are equal)."""
    cache: dict[tuple[str, int], solution.CompactSolution] = {}

    def get(rid: str, task_classes: int = SMALL["task_classes"]) -> solution.CompactSolution:
        if (rid, task_classes) not in cache:
            runner = compact_runner.InlineRunner(piece=16 * task_classes)
            cache[rid, task_classes] = compact.solve(
                Ruleset.from_id(rid), progress=False, runner=runner
            )
        return cache[rid, task_classes]

    return get


def assert_same(a: solution.CompactSolution, b: solution.CompactSolution) -> None:
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.result, b.result)
    assert np.array_equal(a.ply_table, b.ply_table)
    assert np.array_equal(a.sides, b.sides)
    assert np.array_equal(a.orbit, b.orbit)
    assert (a.value, a.plies, a.positions, a.expansions) == (
        b.value,
        b.plies,
        b.positions,
        b.expansions,
    )


def solve_on(session, rid: str, **options) -> tuple[solution.CompactSolution, DaskRunner]:
    runner = DaskRunner(session, **{**SMALL, **options})
    try:
        return compact.solve(Ruleset.from_id(rid), progress=False, runner=runner), runner
    finally:
        runner.close()


@pytest.mark.parametrize("rid", RULESETS)
def test_a_local_cluster_gives_the_one_process_solution(rid, inline, local_session) -> None:
    sol, runner = solve_on(local_session, rid)
    assert_same(inline(rid), sol)
    assert runner.tasks > 0 and sum(runner.per_worker.values()) == runner.tasks
    assert runner.steps["enumerate"] > 1 and runner.steps["retrograde"] > 1


def test_swept_plies_as_tasks_give_the_one_process_solution(
    inline, local_session, monkeypatch
) -> None:
    set_everywhere(monkeypatch, "UNPLAY_COST", 10**9)  # every ply swept forwards
    set_everywhere(monkeypatch, "UNPLAY_COST_FILTERED", 10**9)
    rid = RULESETS[0]
    sol, runner = solve_on(local_session, rid)
    assert_same(inline(rid), sol)
    assert runner.steps["sweep"] > 1 and runner.steps["retrograde"] == 0


def test_un_played_plies_as_tasks_are_filtered_by_the_solve(
    inline, local_session, monkeypatch, leaky_key_filters
) -> None:
    # Tasks un-play without the open filter; the solve filters what they return. Every ply
    # is un-played, through a filter that lets half the decided parents through.
    rid = RULESETS[0]
    want = inline(rid)  # before the filters leak
    made = leaky_key_filters()
    set_everywhere(monkeypatch, "UNPLAY_COST", 0)
    set_everywhere(monkeypatch, "UNPLAY_COST_FILTERED", 0)
    sol, runner = solve_on(local_session, rid)
    assert_same(want, sol)
    assert runner.steps["sweep"] == 0 and runner.steps["retrograde"] > 1 and made


def test_the_work_is_spread_over_both_workers(inline, local_session) -> None:
    rid = RULESETS[1]
    sol, runner = solve_on(local_session, rid)
    assert_same(inline(rid), sol)
    assert len(runner.per_worker) == 2, runner.per_worker
    assert min(runner.per_worker.values()) >= runner.tasks // 5, runner.per_worker


def test_a_hand_started_cluster_through_a_shared_folder(inline, hand_cluster, tmp_path) -> None:
    hand_cluster.ensure_workers()
    shared = tmp_path / "shared"
    seen: list[int] = []

    def count_objects(_key: str) -> None:
        seen.append(sum(1 for p in (shared / "objects").rglob("*") if p.is_file()))

    spec = ClusterSpec(scheduler=hand_cluster.address, shared=shared)
    with Session(spec, quiet=True) as session:
        session.client.wait_for_workers(2, timeout=60)
        for rid in (RULESETS[0], RULESETS[3]):
            sol, runner = solve_on(session, rid, on_submit=count_objects)
            assert_same(inline(rid), sol)
            assert set(runner.per_worker) == {"hand1", "hand2"}
    # Inputs went through the folder, and a merged range's objects were removed.
    assert seen and min(seen) >= 1
    assert not [p for p in (shared / "objects").rglob("*") if p.is_file()]


def test_a_worker_killed_mid_solve_changes_nothing(inline, manual_session) -> None:
    pids = worker_pids(manual_session)
    killed: list[int] = []

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            processing = manual_session.client.processing()
            busy = [w for w, keys in processing.items() if any("solve-" in k for k in keys)]
            if busy:
                killed.append(pids[busy[0]])
                os.kill(pids[busy[0]], signal.SIGKILL)
                return
            time.sleep(0.01)

    started: list[threading.Thread] = []

    def hook(_key: str) -> None:
        if not started:
            started.append(threading.Thread(target=watch, daemon=True))
            started[0].start()

    sol, runner = solve_on(manual_session, R44C4, task_classes=1024, on_submit=hook)
    assert_same(inline(R44C4, 1024), sol)
    assert killed and killed[0] not in worker_pids(manual_session).values()


def test_a_failing_task_is_reported_once_as_one_line(hand_cluster, tmp_path, monkeypatch, capsys):
    """A damaged input in the shared folder: the worker refuses it (its hash does not
    match), the task is not retried, and the command says so in one line, exit 2."""
    hand_cluster.ensure_workers()
    put = SharedStore.put

    def damaging_put(self, data: bytes):
        blob = put(self, data)
        blob.path().write_bytes(b"damaged")
        return blob

    monkeypatch.setattr(SharedStore, "put", damaging_put)  # here only, not on the workers
    code = main(
        [
            "solve",
            R44C4,
            "--method",
            "compact",
            "--scheduler",
            hand_cluster.address,
            "--shared",
            str(tmp_path / "shared"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert err[-1].startswith(f"error: {R44C4}: solve enumerate task of level ")
    assert "StoreError" in err[-1] and "does not match its hash" in err[-1]
    assert sum("error:" in line for line in err) == 1 and "Traceback" not in "\n".join(err)


def test_a_memory_cap_on_a_worker_is_a_budget(local_session) -> None:
    runner = DaskRunner(local_session, progress=False)
    failed = runner._failure("retrograde", "ply 3", "R", 0, 16384, 20000, MemoryError("cap"))
    assert isinstance(failed, TaskFailed) and failed.exit_code == 3
    assert str(failed) == (
        "R: solve retrograde task of ply 3 (items 0-16,383 of 20,000) ran out of memory on "
        "its worker: cap"
    )


def test_the_command_line_splits_only_when_asked(tmp_path) -> None:
    plain = run_cli("solve", R44C4, "--method", "compact", "--json")
    assert plain.returncode == 0, plain.stderr
    plain = json.loads(plain.stdout)
    assert "tasks" not in plain and "cluster" not in plain
    split = run_cli(
        "solve", R44C4, "--json", "--workers", "2", "--shared", str(tmp_path / "shared")
    )  # fmt: skip
    assert split.returncode == 0, split.stderr
    split = json.loads(split.stdout)
    assert split["method"] == "compact" and "LocalCluster of 2" in split["cluster"]
    assert split["tasks"] > 0 and sum(split["tasks_per_worker"].values()) == split["tasks"]
    # The expansions differ: a cluster takes a level in bigger pieces than one process,
    # so fewer classes reached again at their own level are still to be taken.
    for field in ("value", "plies", "positions", "canonical", "classes"):
        assert split[field] == plain[field], field
    assert split["expansions"] >= plain["expansions"] >= split["classes"]


@pytest.mark.parametrize("method", ["retrograde", "pns"])
def test_other_methods_refuse_the_cluster_options(method) -> None:
    done = run_cli("solve", RULESETS[0], "--method", method, "--workers", "2")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: --method {method} runs in one process; the cluster options (--workers, "
        "--scheduler, --cluster-config, --shared) need --method compact, partitioned or proof"
    ]
